"""Deck check: run a whole deck (or shoe) through the reader before it goes live.

The dealer draws every card through the shoe's reader; the controller counts
them and says plainly whether the deck is complete. An incomplete deck must
never stay in play unnoticed (games.md, deck audit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from firmware_interfaces.shoe import events as shoe
from table_controller.errors import CardError
from table_controller.rules.cards import parse_card
from table_controller.table.audit import DeckAudit


@dataclass
class DeckCheckReport:
    """What a deck check found."""

    decks: int
    cards: int = 0
    no_reads: int = 0
    foreign: list[str] = field(default_factory=list)
    missing: dict[str, int] = field(default_factory=dict)
    extra: dict[str, int] = field(default_factory=dict)
    ended_by: str = ""

    @property
    def complete(self) -> bool:
        return not (self.missing or self.extra or self.foreign or self.no_reads)

    def as_dict(self) -> dict[str, Any]:
        return {
            "complete": self.complete, "decks": self.decks, "cards": self.cards,
            "no_reads": self.no_reads, "foreign": self.foreign, "missing": self.missing,
            "extra": self.extra, "ended_by": self.ended_by,
        }

    def summary(self) -> str:
        if self.complete:
            return f"COMPLETE: {self.cards} cards, {self.decks} full deck(s), nothing missing or extra"
        parts = [f"INCOMPLETE: {self.cards} cards read"]
        if self.missing:
            parts.append("missing " + " ".join(f"{c}x{n}" if n > 1 else c for c, n in self.missing.items()))
        if self.extra:
            parts.append("extra " + " ".join(f"{c}x{n}" if n > 1 else c for c, n in self.extra.items()))
        if self.foreign:
            parts.append("foreign " + " ".join(self.foreign))
        if self.no_reads:
            parts.append(f"{self.no_reads} unreadable card(s): check them by hand and run the check again")
        return "; ".join(parts)


def check_deck(
    next_event: Callable[[float], Any], decks: int, *, idle_timeout: float = 30.0,
    on_card: Callable[[int], None] | None = None,
) -> DeckCheckReport:
    """Count shoe events until the shoe is empty or nothing happens for ``idle_timeout`` seconds.

    ``next_event(timeout)`` returns the shoe driver's next event or None.
    """
    audit = DeckAudit(decks)
    report = DeckCheckReport(decks)
    while True:
        event = next_event(idle_timeout)
        if event is None:
            report.ended_by = f"no card for {idle_timeout:g} s"
            break
        if isinstance(event, shoe.CardDrawn):
            report.cards += 1
            try:
                audit.add(parse_card(event.code))
            except CardError:
                report.foreign.append(event.code)
            if on_card:
                on_card(report.cards)
        elif isinstance(event, shoe.NoRead):
            report.cards += 1
            report.no_reads += 1
        elif isinstance(event, shoe.ShoeEmpty):
            report.ended_by = "the shoe is empty"
            break
    full = audit.report()
    report.missing, report.extra = full["missing"], full["extra"]
    return report
