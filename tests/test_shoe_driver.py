"""The driver against the simulated shoe through real pseudo-terminals, TCP and loop://."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import serial

from firmware_interfaces.shoe import (
    CardDrawn,
    FaultPlan,
    FaultyTransport,
    Hello,
    LinkDown,
    LinkState,
    LinkUp,
    PtyPort,
    ShoeDriver,
    ShoeEmpty,
    ShoeStatus,
    SimulatedShoe,
    SLP1Codec,
    TcpPort,
    open_pty_pair,
    open_url,
)
from firmware_interfaces.shoe.testing import FAST_TIMING, EventRecorder
from firmware_interfaces.shoe.timing import DEFAULT_TIMING


@pytest.fixture
def cleanup() -> Iterator[list]:
    things: list = []
    yield things
    for thing in reversed(things):
        thing.close()


def start_pair(cleanup: list, shoe_transport, url: str, *, timing=FAST_TIMING, shoe_faults=None,
               driver_faults=None, driver_kw=None, **shoe_kw):
    shoe = SimulatedShoe(shoe_transport, timing=timing, faults=shoe_faults, **shoe_kw)
    shoe.start()
    cleanup.append(shoe)
    recorder = EventRecorder()
    opener = open_url(url)
    if driver_faults is not None:
        plain = opener

        def opener():  # noqa: F811 - the faulty variant of the same opener
            return FaultyTransport(plain(), driver_faults)

    driver = ShoeDriver(opener, listener=recorder, timing=timing, **(driver_kw or {}))
    driver.start()
    cleanup.append(driver)
    return shoe, driver, recorder


def unlock(driver: ShoeDriver, shoe: SimulatedShoe) -> None:
    driver.unlock()
    assert shoe.wait_gate(False, 10.0), "the shoe's gate did not unlock"


def test_cards_arrive_in_order_through_a_pty(cleanup: list) -> None:
    master, path = open_pty_pair()
    shoe, driver, rec = start_pair(cleanup, master, path, seed=3, decks=1)
    assert rec.wait_for_type(Hello, 5.0)
    unlock(driver, shoe)
    drawn = [shoe.draw() for _ in range(52)]
    assert shoe.draw() is None  # empty
    assert rec.wait_for(lambda ev: len([e for e in ev if isinstance(e, CardDrawn)]) == 52, 10.0)
    cards = rec.of_type(CardDrawn)
    assert [c.code for c in cards] == drawn == shoe.drawn
    assert [c.count for c in cards] == list(range(1, 53))
    assert rec.wait_for_type(ShoeEmpty, 5.0)
    empty = ShoeEmpty(52, LinkState(shoe.boot_id, cards[-1].link.seq + 1))
    assert rec.of_type(ShoeEmpty) == [empty]


@pytest.mark.slow
def test_thousands_of_cards_exactly_once_with_faults_in_both_directions(cleanup: list) -> None:
    """drop, corrupt, duplicate and garbage on both sides: the card sequence is intact."""
    n = 2000
    master, path = open_pty_pair()
    faults = "drop=0.05,corrupt=0.05,dup=0.05,garbage=0.01"
    controller_faults = FaultPlan.parse(faults, seed=2)
    shoe, driver, rec = start_pair(
        cleanup, master, path, seed=11, decks=40,
        shoe_faults=FaultPlan.parse(faults, seed=1), driver_faults=controller_faults,
    )
    unlock(driver, shoe)
    drawn = [shoe.draw() for _ in range(n)]
    assert rec.wait_for(lambda ev: sum(isinstance(e, CardDrawn) for e in ev) >= n, 60.0)
    cards = rec.of_type(CardDrawn)
    assert [c.code for c in cards] == drawn
    assert [c.count for c in cards] == list(range(1, n + 1))
    stats = driver.stats
    assert stats.bad_crc > 0 and stats.duplicates > 0 and stats.garbage_bytes > 0
    assert shoe.faults.counters.dropped > 0 and controller_faults.counters.dropped > 0


def test_locked_gate_yields_no_card_end_to_end(cleanup: list) -> None:
    master, path = open_pty_pair()
    shoe, driver, rec = start_pair(cleanup, master, path, cards=["AS", "KH", "QD"])
    unlock(driver, shoe)
    assert shoe.draw() == "AS"
    driver.lock()
    assert shoe.wait_gate(True, 5.0)
    assert [shoe.draw(), shoe.draw()] == [None, None]
    driver.status()
    assert rec.wait_for_type(ShoeStatus, 5.0)
    status = rec.of_type(ShoeStatus)[0]
    assert (status.gate_locked, status.lid_open, status.count) == (True, False, 1)
    assert rec.cards == ["AS"]


def test_unplug_as_silence_reports_link_down_and_recovers_every_card(cleanup: list) -> None:
    master, path = open_pty_pair()
    shoe, driver, rec = start_pair(cleanup, master, path, seed=5, decks=2)
    unlock(driver, shoe)
    first = [shoe.draw() for _ in range(20)]
    shoe.unplug(0.3)  # 4 link-down times at the fast timing
    during = [shoe.draw() for _ in range(20)]
    assert rec.wait_for_type(LinkDown, 5.0)
    assert rec.wait_for(lambda ev: sum(isinstance(e, CardDrawn) for e in ev) >= 40, 10.0)
    assert rec.cards == first + during
    kinds = [type(e) for e in rec.events if isinstance(e, (LinkUp, LinkDown))]
    assert kinds[-2:] == [LinkDown, LinkUp]
    assert rec.of_type(LinkDown)[0].reason.startswith("no frame from the shoe for")


def test_pulled_cable_read_error_reopens_the_same_path_with_backoff(
    cleanup: list, tmp_path
) -> None:
    """The pty really closes (reads fail, the path vanishes), then returns under the same path."""
    port = PtyPort(tmp_path / "shoe")
    shoe, driver, rec = start_pair(cleanup, port, str(tmp_path / "shoe"), seed=6, decks=2)
    unlock(driver, shoe)
    first = [shoe.draw() for _ in range(10)]
    assert rec.wait_for(lambda ev: len([e for e in ev if isinstance(e, CardDrawn)]) == 10, 5.0)
    shoe.unplug(0.5)
    assert not (tmp_path / "shoe").exists()
    during = [shoe.draw() for _ in range(10)]  # drawn while the cable is out
    assert rec.wait_for_type(LinkDown, 5.0)
    assert rec.wait_for(lambda ev: sum(isinstance(e, CardDrawn) for e in ev) >= 20, 10.0)
    assert rec.cards == first + during
    reason = rec.of_type(LinkDown)[0].reason
    assert reason.startswith("shoe port failed")
    assert driver.stats.reconnects == 1


def test_link_down_within_2_5_s_of_the_shoe_going_silent_at_real_timings(cleanup: list) -> None:
    master, path = open_pty_pair()
    shoe, driver, rec = start_pair(cleanup, master, path, timing=DEFAULT_TIMING, cards=["AS"])
    assert rec.wait_for_type(Hello, 5.0)
    shoe.unplug(30)
    silent_at = time.monotonic()
    assert rec.wait_for_type(LinkDown, 3.0)
    elapsed = time.monotonic() - silent_at
    assert 2.5 >= elapsed >= 1.0
    assert not driver.is_up


def test_controller_restart_with_persisted_state_loses_and_repeats_nothing(cleanup: list) -> None:
    """kill -9 between journal commit and ACK, and between delivery and commit."""
    master, path = open_pty_pair()
    shoe = SimulatedShoe(master, timing=FAST_TIMING, seed=9, decks=2)
    shoe.start()
    cleanup.append(shoe)
    journal: list[tuple[str, LinkState]] = []
    crashed = []
    last_state: list[LinkState] = []

    def consumer(event) -> None:
        if crashed or event.link is None:
            return
        if isinstance(event, CardDrawn):
            if len(journal) == 15:      # the 16th card: delivered, never committed
                crashed.append(True)
                return
            journal.append((event.code, event.link))
        last_state[:] = [event.link]
        if len(journal) < 15:            # the 15th card: committed, never ACKed
            driver1.ack(event)

    rec1 = EventRecorder(consumer)
    driver1 = ShoeDriver(open_url(path), listener=rec1, auto_ack=False, timing=FAST_TIMING)
    driver1.start()
    unlock(driver1, shoe)
    first = [shoe.draw() for _ in range(20)]
    assert rec1.wait_for(lambda ev: bool(crashed), 5.0)
    driver1.close()
    later = [shoe.draw() for _ in range(5)]  # drawn while no controller runs

    def consumer2(event) -> None:
        if isinstance(event, CardDrawn):
            journal.append((event.code, event.link))
        if event.link is not None:
            driver2.ack(event)

    rec2 = EventRecorder(consumer2)
    driver2 = ShoeDriver(open_url(path), listener=rec2, auto_ack=False, timing=FAST_TIMING,
                         resume=last_state[0])
    driver2.start()
    cleanup.append(driver2)
    assert rec2.wait_for(lambda ev: len(journal) >= 25, 10.0)
    assert [code for code, _ in journal] == first + later
    assert driver2.stats.duplicates >= 1  # the committed-but-unACKed 15th card
    assert rec2.of_type(Hello) == []       # same session: no re-anchoring needed


def test_power_cycle_is_reported_as_a_new_session(cleanup: list) -> None:
    master, path = open_pty_pair()
    shoe, driver, rec = start_pair(cleanup, master, path, cards=["AS", "2S"])
    assert rec.wait_for_type(Hello, 5.0)
    first_boot = shoe.boot_id
    shoe.power_cycle()
    assert rec.wait_for_type(Hello, 5.0, count=2)
    hello = rec.of_type(Hello)[1]
    assert (hello.boot_id, hello.nonce, hello.new_session) == (shoe.boot_id, "-", True)
    assert hello.boot_id != first_boot and rec.of_type(Hello)[0].new_session is False


def test_driver_reset_mid_stream_is_lossless(cleanup: list) -> None:
    master, path = open_pty_pair()
    shoe, driver, rec = start_pair(cleanup, master, path, seed=4, decks=1)
    # mid-stream: the session anchored first (under load the gate could unlock before the
    # first HELLO reached us, and a RESET asked for then is the start-up handshake's own: one
    # HELLO, not two)
    assert rec.wait_for_type(Hello, 5.0)
    unlock(driver, shoe)
    drawn = [shoe.draw() for _ in range(10)]
    driver.reset()
    drawn += [shoe.draw() for _ in range(10)]
    assert rec.wait_for_type(Hello, 5.0, count=2)
    assert rec.wait_for(lambda ev: sum(isinstance(e, CardDrawn) for e in ev) >= 20, 5.0)
    assert rec.cards == drawn
    assert rec.of_type(Hello)[1].resynced is True and rec.of_type(Hello)[1].new_session is False


def test_tcp_adapter_socket_url_survives_a_dropped_connection(cleanup: list) -> None:
    port = TcpPort()
    shoe, driver, rec = start_pair(cleanup, port, port.description, seed=8, decks=1)
    unlock(driver, shoe)
    drawn = [shoe.draw() for _ in range(10)]
    assert rec.wait_for(lambda ev: sum(isinstance(e, CardDrawn) for e in ev) >= 10, 5.0)
    shoe.unplug(0.3)
    drawn += [shoe.draw() for _ in range(10)]
    assert rec.wait_for(lambda ev: sum(isinstance(e, CardDrawn) for e in ev) >= 20, 10.0)
    assert rec.cards == drawn
    # the outage is reported once: as the port failing, or (under load, 0.1 s of silence may
    # pass before the dropped socket is read) as the shoe gone silent; either way the driver
    # saw the socket fail and opened it again
    reasons = [e.reason for e in rec.of_type(LinkDown)]
    assert reasons and reasons[0].startswith(("shoe port failed", "no frame from the shoe"))
    assert driver.stats.reconnects >= 1


def test_loop_url_delivers_frames_written_into_the_loop(cleanup: list) -> None:
    """loop:// echoes the driver's own ACKs back: they are stale ACKs, ignored."""
    loop = serial.serial_for_url("loop://", timeout=0.01)
    rec = EventRecorder()
    driver = ShoeDriver(lambda: loop, listener=rec, timing=DEFAULT_TIMING,
                        resume=LinkState("5F3A9C01", 16))
    driver.start()
    cleanup.append(driver)
    codec = SLP1Codec()
    loop.write(codec.encode(17, "CARD", ("TS", "RO", "143"))
               + codec.encode(18, "CARD", ("AH", "O", "144")))
    assert rec.wait_for(lambda ev: sum(isinstance(e, CardDrawn) for e in ev) == 2, 5.0)
    assert rec.of_type(CardDrawn) == [
        CardDrawn("TS", "RO", 143, LinkState("5F3A9C01", 17)),
        CardDrawn("AH", "O", 144, LinkState("5F3A9C01", 18)),
    ]
    assert [type(e) for e in rec.events] == [LinkUp, CardDrawn, CardDrawn]


def test_driver_reports_link_down_while_the_port_cannot_open(cleanup: list, tmp_path) -> None:
    rec = EventRecorder()
    driver = ShoeDriver(open_url(str(tmp_path / "missing")), listener=rec, timing=FAST_TIMING)
    driver.start()
    cleanup.append(driver)
    assert rec.wait_for_type(LinkDown, 2.0)
    assert "cannot open the shoe port" in rec.of_type(LinkDown)[0].reason
    assert not driver.is_up and driver.link_state is None


def test_periodic_unplug_fault_through_a_real_pty_keeps_every_card(cleanup: list, tmp_path) -> None:
    port = PtyPort(tmp_path / "shoe")
    plan = FaultPlan(unplug_every=0.4, unplug_for=0.2)
    shoe, driver, rec = start_pair(cleanup, port, str(tmp_path / "shoe"), shoe_faults=plan,
                                   seed=2, decks=1)
    unlock(driver, shoe)
    drawn = [shoe.draw() for _ in range(10)]
    for downs in (1, 2):
        assert rec.wait_for_type(LinkDown, 5.0, count=downs)
        drawn += [shoe.draw() for _ in range(10)]
    assert rec.wait_for(lambda ev: sum(isinstance(e, CardDrawn) for e in ev) >= 30, 10.0)
    assert rec.cards == drawn
    assert plan.counters.unplugs >= 2 and driver.stats.reconnects >= 2


def test_wait_up_raises_shoe_link_down_naming_the_reason(cleanup: list, tmp_path) -> None:
    from firmware_interfaces.shoe import ShoeLinkDown

    driver = ShoeDriver(open_url(str(tmp_path / "missing")), timing=FAST_TIMING)
    driver.start()
    cleanup.append(driver)
    with pytest.raises(ShoeLinkDown, match="not up after 0.3 s: cannot open the shoe port"):
        driver.wait_up(0.3)
    assert isinstance(driver.get_event(1.0), LinkDown)  # no listener: events queue up


def test_device_link_refuses_to_replace_a_regular_file(tmp_path) -> None:
    from firmware_interfaces.shoe import ShoeError

    (tmp_path / "notes.txt").write_text("keep me")
    with pytest.raises(ShoeError, match="notes.txt: exists and is not a symlink"):
        PtyPort(tmp_path / "notes.txt")
    assert (tmp_path / "notes.txt").read_text() == "keep me"


def test_a_second_driver_on_the_same_pty_is_refused_not_interleaved(cleanup: list) -> None:
    master, path = open_pty_pair()
    shoe, driver, rec = start_pair(cleanup, master, path, cards=["AS"])
    assert rec.wait_for_type(Hello, 5.0)
    intruder_events = EventRecorder()
    intruder = ShoeDriver(open_url(path), listener=intruder_events, timing=FAST_TIMING)
    intruder.start()
    cleanup.append(intruder)
    assert intruder_events.wait_for_type(LinkDown, 5.0)
    assert "Could not exclusively lock port" in intruder_events.of_type(LinkDown)[0].reason
