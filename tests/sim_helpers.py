"""Shared by the simulated-table tests: read a journal, open a round by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from table_controller.event_types import Event
from table_controller.journal import Journal


def journal_events(path: Path) -> list[Event]:
    """Every event of a journal, read-only."""
    reader = Journal.open_readonly(path)
    try:
        return list(reader.events())
    finally:
        reader.close()


def open_round_by_hand(sim: Any, dealer: Any) -> None:
    """Press start and close betting on the mock panel; wait until the gate opens."""
    dealer.press("start_round")
    dealer.watch.wait(lambda e: e.type == "table.state" and e.state == "betting", 10, "betting")
    dealer.press("close_betting")
    assert sim.shoe.wait_gate(False, 10)
