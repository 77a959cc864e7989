"""The shoe's side of SLP/1 (pure DeviceLink) and the simulated shoe's behaviour."""

from __future__ import annotations

import queue

import pytest

from firmware_interfaces.shoe import DeviceLink, Frame, SimulatedShoe, SLP1Codec
from firmware_interfaces.shoe.errors import ShoeError
from firmware_interfaces.shoe.timing import LinkTiming

CODEC = SLP1Codec()


def out(link: DeviceLink) -> list[Frame]:
    return SLP1Codec().feed(b"".join(link.take_output()))


def powered(now: float = 0.0) -> DeviceLink:
    link = DeviceLink(SLP1Codec(), now=now)
    link.power_on(now)
    return link


def ack(link: DeviceLink, seq: int, now: float, boot: str | None = None) -> None:
    link.receive([Frame(seq, "ACK", (boot or link.boot_id,))], now)


def test_power_on_sends_hello_at_seq_0_with_nonce_dash() -> None:
    link = powered()
    [hello] = out(link)
    assert hello == Frame(0, "HELLO", ("OPENTABLE", "SimShoe-8", "SIM0001", "1.0.0", "SLP1",
                                       link.boot_id, "-"))
    assert len(link.boot_id) == 8 and int(link.boot_id, 16) >= 0


def test_at_most_8_frames_are_unacknowledged() -> None:
    link = powered()
    for i in range(10):
        link.send("CARD", ("AS", "RO", str(i + 1)), 0.0)
    assert [f.seq for f in out(link)] == list(range(8))
    ack(link, 2, 0.1)
    assert [f.seq for f in out(link)] == [8, 9, 10]
    assert link.unacknowledged == 8


def test_window_is_retransmitted_in_order_every_250_ms() -> None:
    link = powered()
    link.send("CARD", ("AS", "RO", "1"), 0.0)
    link.send("CARD", ("2S", "RO", "2"), 0.0)
    out(link)
    link.receive([Frame(9, "STATUS")], 0.0)  # controller is alive
    out(link)
    link.tick(0.24)
    assert out(link) == []
    link.tick(0.25)
    assert [f.seq for f in out(link)] == [0, 1, 2]
    ack(link, 1, 0.3)
    link.tick(0.5)
    assert [f.seq for f in out(link)] == [2]


def test_retransmission_slows_to_once_a_second_when_the_controller_is_silent() -> None:
    link = powered()
    link.receive([Frame(9, "STATUS")], 0.0)
    out(link)
    link.tick(2.0)   # nothing heard for 2 s: down
    assert [f.seq for f in out(link)] == [0]
    link.tick(2.5)
    assert out(link) == []
    link.tick(3.0)
    assert [f.seq for f in out(link)] == [0]


def test_ack_for_another_session_and_stale_acks_are_ignored() -> None:
    link = powered()
    link.send("CARD", ("AS", "RO", "1"), 0.0)
    out(link)
    ack(link, 1, 0.1, boot="00000000")
    assert link.unacknowledged == 2
    ack(link, 0, 0.1)
    assert link.unacknowledged == 1
    ack(link, 0, 0.2)  # stale: seq 0 already acknowledged
    assert link.unacknowledged == 1
    assert link.stats.other_session_acks == 1 and link.stats.stale_acks == 1


def test_commands_are_acked_and_duplicates_not_applied_twice() -> None:
    link = powered()
    out(link)
    assert link.receive([Frame(41, "LOCK")], 0.0) == [Frame(41, "LOCK")]
    assert link.receive([Frame(41, "LOCK")], 0.1) == []
    assert out(link) == [Frame(41, "ACK"), Frame(41, "ACK")]


def test_reset_starts_a_new_session_and_resends_what_was_never_acked() -> None:
    link = powered()
    link.send("CARD", ("AS", "RO", "1"), 0.0)
    link.send("CARD", ("2S", "RO", "2"), 0.0)
    ack(link, 1, 0.0)
    link.tick(1.5)  # idle is not reached: CARD 2 unacked; no HB
    old_boot = link.boot_id
    out(link)
    link.receive([Frame(7, "RESET", ("0C1D2E3F",))], 2.0)
    frames = out(link)
    assert link.boot_id != old_boot
    assert frames == [
        Frame(7, "ACK"),
        Frame(0, "HELLO", ("OPENTABLE", "SimShoe-8", "SIM0001", "1.0.0", "SLP1", link.boot_id,
                           "0C1D2E3F")),
        Frame(1, "CARD", ("2S", "RO", "2")),
    ]
    # The same RESET again (its ACK was lost) does not start yet another session.
    boot = link.boot_id
    link.receive([Frame(7, "RESET", ("0C1D2E3F",))], 2.1)
    assert out(link) == [Frame(7, "ACK")] and link.boot_id == boot


def test_heartbeat_once_a_second_when_idle() -> None:
    link = powered()
    ack(link, 0, 0.0)
    out(link)
    link.tick(0.9)
    assert out(link) == []
    link.tick(1.0)
    assert out(link) == [Frame(1, "HB", ("1000",))]
    link.tick(2.5)
    assert [f.type for f in out(link)] == ["HB"]  # HB 1 unacked: retransmitted, no new HB


# -- the simulated shoe over a recording fake port ----------------------------

class FakePort:
    """A transport fake: the test writes controller bytes in, reads shoe bytes out."""

    description = "fake"

    def __init__(self) -> None:
        self.incoming: queue.Queue[bytes] = queue.Queue()
        self.written: queue.Queue[bytes] = queue.Queue()
        self._codec = SLP1Codec()

    def read(self, timeout: float) -> bytes:
        try:
            return self.incoming.get(timeout=timeout)
        except queue.Empty:
            return b""

    def write(self, data: bytes) -> None:
        self.written.put(data)

    def unplug(self) -> None: ...

    def replug(self) -> None: ...

    def close(self) -> None: ...

    def frames(self) -> list[Frame]:
        data = b""
        while not self.written.empty():
            data += self.written.get_nowait()
        return self._codec.feed(data)

    def next_frame(self, type_: str, timeout: float = 2.0) -> Frame:
        while True:
            data = self.written.get(timeout=timeout)
            for f in self._codec.feed(data):
                if f.type == type_:
                    return f


@pytest.fixture
def port() -> FakePort:
    return FakePort()


def sim(port: FakePort, **kw: object) -> SimulatedShoe:
    # Timers out of the way (no retransmission, no HB), but a short tick so close() is quick.
    timing = LinkTiming(retransmit=100, link_down=100, slow_retransmit=100, heartbeat=100,
                        tick=0.01)
    shoe = SimulatedShoe(port, timing=timing, **kw)
    shoe.start()
    return shoe


def test_locked_gate_never_yields_a_card(port: FakePort) -> None:
    shoe = sim(port, cards=["AS", "KH"])
    try:
        assert shoe.gate_locked
        assert [shoe.draw() for _ in range(5)] == [None] * 5
        assert shoe.draw_noread() is False
        assert shoe.drawn == [] and shoe.count == 0
        assert [f.type for f in port.frames()] == ["HELLO", "NEWSHOE"]
    finally:
        shoe.close()


def test_unlock_opens_the_gate_and_lock_closes_it(port: FakePort) -> None:
    shoe = sim(port, cards=["AS", "KH", "2C"])
    try:
        port.incoming.put(CODEC.encode(10, "UNLOCK"))
        assert shoe.wait_gate(False, 2.0)
        assert port.next_frame("GATE").args == ("UNLOCKED",)
        assert shoe.draw() == "AS"
        assert port.next_frame("CARD").args == ("AS", "RO", "1")
        port.incoming.put(CODEC.encode(11, "LOCK"))
        assert shoe.wait_gate(True, 2.0)
        assert shoe.draw() is None
        assert shoe.drawn == ["AS"]
    finally:
        shoe.close()


def test_status_is_answered_with_state(port: FakePort) -> None:
    shoe = sim(port, cards=["AS"])
    try:
        port.incoming.put(CODEC.encode(3, "STATUS"))
        assert port.next_frame("STATE").args == ("LOCKED", "CLOSED", "0")
    finally:
        shoe.close()


def test_cut_card_empty_and_new_shoe(port: FakePort) -> None:
    shoe = sim(port, cards=["AS", "2S", "3S"], cut_at=2)
    try:
        port.incoming.put(CODEC.encode(1, "UNLOCK"))
        assert shoe.wait_gate(False, 2.0)
        assert [shoe.draw() for _ in range(4)] == ["AS", "2S", "3S", None]
        types = [(f.type, f.args) for f in port.frames() if f.type in ("CARD", "CUT", "EMPTY")]
        assert types == [
            ("CARD", ("AS", "RO", "1")), ("CARD", ("2S", "RO", "2")), ("CUT", ("2",)),
            ("CARD", ("3S", "RO", "3")), ("EMPTY", ("3",)),
        ]
    finally:
        shoe.close()


def test_load_sends_newshoe_and_restarts_the_count(port: FakePort) -> None:
    shoe = sim(port, cards=["AS"])
    try:
        shoe.load(["4D", "5D"], decks=1)
        port.incoming.put(CODEC.encode(1, "UNLOCK"))
        assert shoe.wait_gate(False, 2.0)
        assert shoe.draw() == "4D"
        types = [(f.type, f.args) for f in port.frames() if f.type in ("CARD", "NEWSHOE")]
        assert types == [("NEWSHOE", ("8",)), ("NEWSHOE", ("1",)), ("CARD", ("4D", "RO", "1"))]
        assert shoe.count == 1 and shoe.remaining == 1
    finally:
        shoe.close()


def test_noread_lid_and_fault_frames(port: FakePort) -> None:
    shoe = sim(port, cards=["AS", "2S"])
    try:
        port.incoming.put(CODEC.encode(1, "UNLOCK"))
        assert shoe.wait_gate(False, 2.0)
        assert shoe.draw_noread() is True
        shoe.set_lid(True)
        shoe.fault("JAM", "card stuck in the gate")
        types = [(f.type, f.args) for f in port.frames() if f.type in ("NOREAD", "LID", "FAULT")]
        assert types == [("NOREAD", ("1",)), ("LID", ("OPEN",)),
                         ("FAULT", ("JAM", "card stuck in the gate"))]
        assert shoe.unread == ["AS"] and shoe.lid_open
    finally:
        shoe.close()


def test_power_cycle_locks_the_gate_and_says_hello_with_a_new_boot_id(port: FakePort) -> None:
    shoe = sim(port, cards=["AS"])
    try:
        port.incoming.put(CODEC.encode(1, "UNLOCK"))
        assert shoe.wait_gate(False, 2.0)
        boot = shoe.boot_id
        shoe.power_cycle()
        assert shoe.gate_locked and shoe.boot_id != boot
        hello = [f for f in port.frames() if f.type == "HELLO"][-1]
        assert hello.seq == 0 and hello.args[5:] == (shoe.boot_id, "-")
    finally:
        shoe.close()


def test_scripted_cards_are_checked() -> None:
    with pytest.raises(ShoeError, match="card code '1S'"):
        SimulatedShoe(FakePort(), cards=["AS", "1S"])


def test_seeded_shoe_is_reproducible() -> None:
    a = SimulatedShoe(FakePort(), seed=42, decks=1)
    b = SimulatedShoe(FakePort(), seed=42, decks=1)
    assert a.cards_left == b.cards_left != tuple(sorted(a.cards_left)) and len(a.cards_left) == 52
