"""The controller loop with the real journal and the dealer panel on gpiozero's mock pins."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory
from shoe_doubles import LineReader, RecordingShoe

from table_controller.config import DEFAULT_PINS
from table_controller.controller import TableController
from table_controller.journal import Journal, verify_journal
from table_controller.panel import DealerPanel
from table_controller.rules import load_game
from table_controller.table import inputs as i


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        self.now += 0.01
        return self.now


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    f = MockFactory()
    yield f
    f.reset()


def make(tmp_path: Path, factory: MockFactory, variant: str = "baccarat", **kw) -> TableController:
    game = load_game(variant)
    journal = Journal(tmp_path / "T01.sqlite", table="T01", game=game.game_id, variant=variant)
    c = TableController(game, journal, table="T01", has_shoe=False, clock=Clock(), betting_seconds=10, **kw)
    c.panel = DealerPanel(DEFAULT_PINS, factory, c.on_button)
    c.restore()
    return c


def press(factory: MockFactory, name: str) -> None:
    pin = factory.pin(DEFAULT_PINS[name])
    pin.drive_low()
    pin.drive_high()


def drain(c: TableController) -> None:
    c.apply_queued()


def until(condition: Callable[[], bool], timeout: float) -> bool:
    """Wait for ``condition`` (checked every 10 ms) at most ``timeout`` seconds; its last answer."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        threading.Event().wait(0.01)
    return True


def lamps(factory: MockFactory) -> tuple[bool, bool, bool]:
    return tuple(factory.pin(DEFAULT_PINS[n]).state for n in ("lamp_betting", "lamp_dealing", "lamp_alarm"))


def test_panel_buttons_drive_a_round_and_lamps_follow(tmp_path: Path, factory: MockFactory) -> None:
    c = make(tmp_path, factory)
    press(factory, "start_round")
    drain(c)
    assert c.machine.state == "betting" and lamps(factory) == (True, False, False)
    press(factory, "close_betting")
    drain(c)
    assert c.machine.state == "dealing" and lamps(factory) == (False, True, False)
    for code in ("9H", "9D", "KH", "KD"):
        c.post(i.CardPresented(code))
    drain(c)
    assert c.machine.state == "result" and lamps(factory) == (False, False, False)
    types = [e.type for e in c.journal.events()]
    assert types == ["round.start", "table.state", "betting.closed", "table.state",
                     "card", "card", "card", "card", "round.result", "table.state"]
    assert [e.seq for e in c.journal.events()] == list(range(1, 11))
    assert verify_journal(tmp_path / "T01.sqlite").ok


def test_alarm_lamp_and_buzzer_on_a_pause(tmp_path: Path, factory: MockFactory) -> None:
    c = make(tmp_path, factory)
    press(factory, "start_round")
    press(factory, "close_betting")
    c.post(i.NoRead())
    drain(c)
    assert lamps(factory) == (False, False, True)
    buzzer = factory.pin(DEFAULT_PINS["buzzer"])
    beeped = [False, True, False, True, False]  # off at the start, then two beeps in gpiozero's thread
    assert until(lambda: len(buzzer.states) >= len(beeped), timeout=2)
    assert [s.state for s in buzzer.states] == beeped


def test_supervisor_key_turns_void_request_into_a_void(tmp_path: Path, factory: MockFactory) -> None:
    c = make(tmp_path, factory)
    press(factory, "start_round")
    press(factory, "close_betting")
    drain(c)
    press(factory, "void_request")
    drain(c)
    assert c.machine.state == "paused"
    factory.pin(DEFAULT_PINS["supervisor_key"]).drive_low()  # key switch on
    press(factory, "void_request")
    drain(c)
    void = [e for e in c.journal.events() if e.type == "round.void"]
    assert len(void) == 1 and void[0].by == "panel key switch" and void[0].refund is True
    assert c.machine.state == "idle"


def test_a_rejected_button_press_is_logged_and_buzzed_not_fatal(tmp_path: Path, factory: MockFactory) -> None:
    c = make(tmp_path, factory)
    press(factory, "close_betting")  # nothing to close
    drain(c)
    assert c.stats.rejected == 1 and c.journal.last_seq == 0


def test_restart_continues_seq_and_resumes_the_round(tmp_path: Path, factory: MockFactory) -> None:
    c = make(tmp_path, factory, "teen-patti-2020")
    press(factory, "start_round")
    press(factory, "close_betting")
    for code in ("AS", "KD", "QH"):
        c.post(i.CardPresented(code))
    drain(c)
    last = c.journal.last_seq
    c.panel.close()
    c.journal.close()
    factory.reset()
    c2 = make(tmp_path, factory, "teen-patti-2020")
    assert c2.machine.state == "dealing" and c2.machine.next_position == "b"
    for code in ("2C", "3D", "4S"):
        c2.post(i.CardPresented(code))
    drain(c2)
    events = list(c2.journal.events())
    assert events[last].seq == last + 1
    assert [e.type for e in events].count("round.result") == 1
    assert verify_journal(tmp_path / "T01.sqlite").ok


def test_restart_with_void_policy_voids_the_round_once(tmp_path: Path, factory: MockFactory) -> None:
    c = make(tmp_path, factory, "teen-patti-2020")
    press(factory, "start_round")
    drain(c)
    c.panel.close()
    c.journal.close()
    factory.reset()
    c2 = make(tmp_path, factory, "teen-patti-2020", interrupted_round="void")
    voids = [e for e in c2.journal.events() if e.type == "round.void"]
    assert len(voids) == 1 and voids[0].reason == "controller restarted during the round"
    assert c2.machine.state == "idle"


def test_loop_sends_heartbeats_when_idle(tmp_path: Path, factory: MockFactory) -> None:
    game = load_game("baccarat")
    journal = Journal(tmp_path / "T01.sqlite", table="T01", game="baccarat", variant="baccarat")
    c = TableController(game, journal, table="T01", has_shoe=False, heartbeat_seconds=0.05)
    stop = threading.Event()
    beats = threading.Semaphore(0)
    c.listeners.append(lambda e: beats.release() if e.type == "heartbeat" else None)
    loop = threading.Thread(target=c.run, args=(stop,))
    loop.start()
    try:
        assert all(beats.acquire(timeout=2) for _ in range(3))
    finally:
        stop.set()
        loop.join()
    heartbeats = [e for e in journal.events() if e.type == "heartbeat"]
    assert len(heartbeats) >= 3 and heartbeats[0].state == "idle"


def test_a_card_waiting_for_the_camera_after_the_last_card_voids_the_round(
    tmp_path: Path, factory: MockFactory
) -> None:
    from table_controller.fusion import CameraSaw

    game = load_game("teen-patti-2020")
    journal = Journal(tmp_path / "T01.sqlite", table="T01", game=game.game_id, variant=game.variant.id)
    c = TableController(game, journal, table="T01", has_shoe=False, clock=Clock(), card_sources=("shoe", "camera"))
    c.restore()
    c.step(i.StartRound())
    c.step(i.CloseBetting())
    for k, (code, slot) in enumerate(zip(("AS", "KD", "QH", "2C", "3D"), ("a", "b", "a", "b", "a"), strict=True)):
        c.step(i.CardPresented(code, "shoe"))
        c.step(CameraSaw(slot, k // 2, code))
    c.step(i.CardPresented("4S", "shoe"))  # the round's last card, not yet seen by the camera
    c.step(i.CardPresented("9H", "shoe"))  # one card too many, drawn before the round was settled
    events = c.step(CameraSaw("b", 2, "4S"))
    assert [e.type for e in events][:3] == ["alert", "round.void", "table.state"]
    assert events[0].kind == "wrong-order"
    assert events[1].reason == "misdeal: card 9H left the shoe after the round's last card 4S"
    leftover = [e for e in events if e.type == "alert"][1:]
    assert [a.detail for a in leftover] == ["card 9H drawn outside a round"]
    assert not [e for e in journal.events() if e.type == "round.result"]


def test_a_round_starts_only_after_the_shoe_confirms_the_lock_so_a_late_card_stays_out_of_it(
    tmp_path: Path,
) -> None:
    """A card drawn before the lock that ended a round (its frame late, e.g. re-sent after a
    restart) must not be dealt into the next round: the start waits for the shoe's answer."""
    from firmware_interfaces.shoe import events as shoe

    game = load_game("baccarat")
    journal = Journal(tmp_path / "T01.sqlite", table="T01", game=game.game_id, variant="baccarat")
    clock = Clock()
    c = TableController(game, journal, table="T01", clock=clock, shoe=RecordingShoe())
    c.restore()
    seq = iter(range(1, 100))

    def frame(event_type: type, *args: object) -> None:
        c.on_shoe_event(event_type(*args, shoe.LinkState("5F3A9C01", next(seq))))
        drain(c)

    c.on_shoe_event(shoe.LinkUp())
    drain(c)
    assert c.shoe.commands[-2:] == ["LOCK", "STATUS"]
    c.post(i.StartRound(by="dealer"))
    drain(c)
    assert c.machine.state == "idle"  # held: the shoe has not answered yet
    frame(shoe.CardDrawn, "8C", "RO", 22)  # drawn before the lock took effect
    assert c.machine.state == "idle"
    frame(shoe.ShoeStatus, True, False, 22)
    assert c.machine.state == "betting"
    alerts = [e for e in journal.events() if e.type == "alert"]
    assert [a.detail for a in alerts] == ["card 8C drawn outside a round"]
    assert not [e for e in journal.events() if e.type == "card"]


def test_a_start_the_shoe_never_confirms_is_rejected_not_kept_forever(tmp_path: Path) -> None:
    from firmware_interfaces.shoe import events as shoe

    game = load_game("baccarat")
    journal = Journal(tmp_path / "T01.sqlite", table="T01", game=game.game_id, variant="baccarat")
    clock = Clock()
    c = TableController(game, journal, table="T01", clock=clock, shoe=RecordingShoe())
    c.restore()
    c.on_shoe_event(shoe.LinkUp())
    drain(c)
    c.post(i.StartRound(by="dealer"))
    drain(c)
    assert c.handshake.holding_starts and c.stats.rejected == 0
    clock.now += 2.5
    drain(c)
    assert not c.handshake.holding_starts and c.stats.rejected == 1 and c.machine.state == "idle"


def _dealing_shoe_camera_table(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A baccarat table with a recording shoe and a camera, dealing its first round; and
    ``frame(EventType, *args)``, which delivers a shoe frame (next seq) and returns its seq."""
    from firmware_interfaces.shoe import events as shoe

    game = load_game("baccarat")
    journal = Journal(tmp_path / "T01.sqlite", table="T01", game=game.game_id, variant="baccarat")
    c = TableController(
        game, journal, table="T01", clock=Clock(), shoe=RecordingShoe(), card_sources=("shoe", "camera")
    )
    c.restore()
    seq = iter(range(1, 100))

    def frame(event_type: type, *args: object) -> int:
        n = next(seq)
        c.on_shoe_event(event_type(*args, shoe.LinkState("5F3A9C01", n)))
        drain(c)
        return n

    c.on_shoe_event(shoe.LinkUp())
    drain(c)
    frame(shoe.ShoeStatus, True, False, 0)
    c.post(i.StartRound(by="dealer"))
    c.post(i.CloseBetting(by="dealer"))
    drain(c)
    assert c.machine.state == "dealing" and c.shoe.commands[-1] == "UNLOCK"
    return c, journal, frame


def test_every_frame_held_while_a_card_waits_for_the_camera_is_acknowledged_after(
    tmp_path: Path,
) -> None:
    """Regression (20 x 200 soak, camera table): only the latest held frame was
    acknowledged; the driver counts a frame as recorded only when it is named, so the
    earlier one held every later ACK back until the shoe's window filled and the link
    stalled (no card, no gate answer: the table could not start a round)."""
    from firmware_interfaces.shoe import events as shoe
    from table_controller.fusion import CameraSaw

    c, journal, frame = _dealing_shoe_camera_table(tmp_path)
    frame(shoe.Gate, False)
    card = frame(shoe.CardDrawn, "9H", "RO", 1)  # waits for the camera: held
    gate = frame(shoe.Gate, False)  # held too (ACKs are in order)
    assert card not in c.shoe.acked and gate not in c.shoe.acked
    c.post(CameraSaw("player", 0, "9H"))
    drain(c)
    c.step(i.Tick())
    assert c.shoe.acked[-2:] == [card, gate]
    assert journal.link_state == ("5F3A9C01", gate)


def test_the_gate_locks_once_the_shoe_gave_the_rounds_last_card_even_before_the_camera(
    tmp_path: Path,
) -> None:
    """Regression (camera soak): the gate stayed open while the round's last card waited
    for the camera, and the dealer could pull a card too many."""
    from firmware_interfaces.shoe import events as shoe
    from table_controller.fusion import CameraSaw

    c, _, frame = _dealing_shoe_camera_table(tmp_path)
    for k, (code, slot) in enumerate(
        zip(("9H", "2C", "KH"), (("player", 0), ("banker", 0), ("player", 1)), strict=True)
    ):
        frame(shoe.CardDrawn, code, "RO", k + 1)
        c.post(CameraSaw(*slot, code))
        drain(c)
    assert c.shoe.commands[-1] == "UNLOCK"
    frame(shoe.CardDrawn, "KD", "RO", 4)  # player 9: the round needs no more cards
    assert c.machine.state == "dealing" and c.shoe.commands[-2:] == ["LOCK", "STATUS"]
    c.post(CameraSaw("banker", 1, "KD"))
    drain(c)
    assert c.machine.state == "result"


# -- floods and the unforeseen (issue 13, finding 8 and the rule) ---------------------


def test_a_flood_of_shoe_events_waits_in_the_driver_not_in_memory(tmp_path: Path, factory: MockFactory) -> None:
    from firmware_interfaces import shoe
    from table_controller.controller import SHOE_BACKLOG

    c = make(tmp_path, factory)
    link = shoe.LinkState("5F3A9C01", 0)
    sent = []

    def reader() -> None:  # the driver's reader thread, delivering faster than the loop applies
        for n in range(1, SHOE_BACKLOG + 51):
            c.on_shoe_event(shoe.CardDrawn("AS", "RO", n, link))
            sent.append(n)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    thread.join(1.5)
    assert thread.is_alive() and len(sent) == SHOE_BACKLOG  # held back: nothing queued beyond
    drain(c)
    thread.join(5)
    drain(c)
    assert len(sent) == SHOE_BACKLOG + 50  # every event got through once the loop caught up
    assert c.stats.inputs >= SHOE_BACKLOG + 50


def test_an_alert_flood_is_journaled_once_per_kind_up_to_the_limit_then_summarised(
    tmp_path: Path,
    factory: MockFactory,
) -> None:
    from table_controller.controller import ALERT_WINDOW, ALERTS_PER_WINDOW

    c = make(tmp_path, factory)
    for _ in range(200):  # cards outside a round: one wrong-order alert each
        c.post(i.CardPresented("AS"))
    drain(c)
    alerts = [e for e in c.journal.events(types=["alert"])]
    assert len(alerts) == ALERTS_PER_WINDOW
    c.clock.now += ALERT_WINDOW
    c.step(i.Tick())
    summary = list(c.journal.events(types=["alert"]))[-1]
    assert summary.detail == (
        f"{200 - ALERTS_PER_WINDOW} more wrong-order alerts in "
        f"{ALERT_WINDOW:g} s were not journaled one by one (more than "
        f"{ALERTS_PER_WINDOW})"
    )


def test_an_input_no_rule_foresaw_is_refused_and_the_table_rebuilt_from_its_journal(
    tmp_path: Path,
    factory: MockFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    c = make(tmp_path, factory)
    c.post(i.StartRound())
    drain(c)
    real = c.machine.handle

    def broken(event, now):  # type: ignore[no-untyped-def]
        if isinstance(event, i.CloseBetting):
            real(event, now)  # applied to the machine, then a bug: none of it reaches the journal
            raise RuntimeError("a bug")
        return real(event, now)

    monkeypatch.setattr(c.machine, "handle", broken)
    c.post(i.CloseBetting())
    drain(c)
    assert c.machine.state == "betting"  # rebuilt from the journal: the half-applied step is gone
    alert = list(c.journal.events(types=["alert"]))[-1]
    assert alert.severity == "critical" and "RuntimeError: a bug" in alert.detail
    c.post(i.CloseBetting())
    drain(c)
    assert c.machine.state == "dealing"  # the table runs on
    assert verify_journal(c.journal.path).ok


def test_a_restart_while_dealing_from_a_line_reader_pauses_for_a_supervisor(
    tmp_path: Path,
    factory: MockFactory,
) -> None:
    c = make(tmp_path, factory)
    c.step(i.StartRound())
    c.step(i.CloseBetting())
    c.step(i.CardPresented("4H"))
    c.journal.close()
    factory.reset()
    game = load_game("baccarat")
    journal = Journal(tmp_path / "T01.sqlite", table="T01", game=game.game_id, variant="baccarat")
    again = TableController(game, journal, table="T01", has_shoe=False, clock=Clock())
    again.shoe = LineReader()
    again.restore()
    assert again.machine.state == "paused" and again.machine.pause is not None
    assert again.machine.pause.cause == "device-fault"
    assert "a card the reader sent meanwhile is lost" in (again.machine.reason or "")
