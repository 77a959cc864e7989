"""A panel press is posted as it happened; the loop decides what it means, in queue order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory

from table_controller.config import DEFAULT_PINS
from table_controller.controller import TableController
from table_controller.event_types import TableStateChanged
from table_controller.journal import Journal
from table_controller.panel import DealerPanel, PanelPress, panel_input
from table_controller.rules import load_game
from table_controller.table import inputs as i


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    f = MockFactory()
    yield f
    f.reset()


def press(factory: MockFactory, name: str) -> None:
    pin = factory.pin(DEFAULT_PINS[name])
    pin.drive_low()
    pin.drive_high()


@pytest.mark.parametrize(
    ("pressed", "state", "expected"),
    [
        (PanelPress("start_round"), "idle", i.StartRound(by="dealer")),
        (PanelPress("start_round", supervisor_key=True), "idle", i.StartRound(by="dealer")),
        (PanelPress("start_round", supervisor_key=True), "paused", i.SupervisorResume(by="panel key switch")),
        (PanelPress("start_round"), "paused", i.StartRound(by="dealer")),
        (PanelPress("close_betting"), "betting", i.CloseBetting(by="dealer")),
        (PanelPress("card_dropped"), "dealing", i.CardDropped()),
        (PanelPress("void_request"), "paused", i.VoidRequest(by="dealer")),
        (PanelPress("void_request", supervisor_key=True), "dealing",
         i.SupervisorVoid(by="panel key switch", reason="voided at the panel")),
        (PanelPress("lamp_test"), "idle", None),
    ],
)
def test_a_press_means_what_the_button_key_and_table_state_say(
    pressed: PanelPress, state: str, expected: i.TableInput | None
) -> None:
    assert panel_input(pressed, state) == expected


def test_a_press_is_read_against_the_table_state_its_turn_in_the_queue_finds(
    tmp_path: Path, factory: MockFactory
) -> None:
    """The key-switch resume pressed just after a fault was posted, before the loop applied it:
    the loop pauses first, then the press resumes (it was read in gpiozero's thread, against a
    table still dealing, and became a start-round that was refused)."""
    game = load_game("baccarat")
    journal = Journal(tmp_path / "T01.sqlite", table="T01", game=game.game_id, variant="baccarat")
    c = TableController(game, journal, table="T01", has_shoe=False)
    c.panel = DealerPanel(DEFAULT_PINS, factory, c.on_button)
    c.restore()
    c.step(i.StartRound())
    c.step(i.CloseBetting())
    c.post(i.DeviceFault("shoe fault JAM: card stuck"))
    factory.pin(DEFAULT_PINS["supervisor_key"]).drive_low()
    press(factory, "start_round")
    assert c.machine.state == "dealing"  # nothing applied outside the loop
    c.apply_queued()
    states = [(e.state, e.by or None) for e in c.journal.events() if isinstance(e, TableStateChanged)]
    assert states[-2:] == [("paused", None), ("dealing", "panel key switch")]
    assert c.stats.rejected == 0
    c.panel.close()
