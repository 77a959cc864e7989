"""Regression (found by the soak): no resume while the shoe's lid is still open.

The soak's dealer opened the lid, pulled a card and closed the lid; the card's
frame was lost once and re-sent, so the controller saw LID OPEN, then the
supervisor's resume, then the card (which it placed as if nothing had
happened), then LID CLOSED. A card pulled during the pause went into the round.
A lid-open pause may only be resumed once the controller knows the lid is closed.
"""

from __future__ import annotations

import pytest

from table_controller.rules import load_game
from table_controller.table import IllegalInput, TableMachine
from table_controller.table import inputs as i


def _dealing() -> TableMachine:
    machine = TableMachine(load_game("baccarat"), table="T01", betting_seconds=10, burns=False)
    machine.handle(i.StartRound(), 1.0)
    machine.handle(i.CloseBetting(), 2.0)
    machine.handle(i.CardPresented("4H"), 3.0)
    return machine


def test_resume_is_refused_while_the_lid_is_open_and_the_late_card_is_a_misdeal() -> None:
    machine = _dealing()
    machine.handle(i.LidChanged(True), 4.0)
    assert (machine.state, machine.pause.cause if machine.pause else None) == ("paused", "lid-open")
    with pytest.raises(IllegalInput, match="cannot resume: the shoe's lid is open"):
        machine.handle(i.SupervisorResume(by="supervisor"), 5.0)
    drafts = machine.handle(i.CardPresented("KS"), 6.0)  # the card pulled while the lid was open
    assert [(d.type, getattr(d, "kind", None) or getattr(d, "reason", None)) for d in drafts][:2] == [
        ("alert", "wrong-order"),
        ("round.void", "misdeal: card KS drawn while the table was paused"),
    ]


def test_resume_after_the_lid_closed_continues_the_round() -> None:
    machine = _dealing()
    machine.handle(i.LidChanged(True), 4.0)
    machine.handle(i.LidChanged(False), 4.5)
    drafts = machine.handle(i.SupervisorResume(by="supervisor"), 5.0)
    assert [(d.type, getattr(d, "state", None)) for d in drafts] == [("table.state", "dealing")]
