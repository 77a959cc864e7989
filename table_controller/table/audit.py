"""Deck audit: no card more often than the shoe holds it, and what is missing at the end."""

from __future__ import annotations

from collections import Counter
from typing import Any

from table_controller.rules.cards import CODES, DECK_SIZE, Card


class DeckAudit:
    """Counts every card that left the shoe since it was loaded."""

    def __init__(self, decks: int) -> None:
        self.decks = decks
        self.counts: Counter[Card] = Counter()
        self.seen = 0

    def reset(self, decks: int | None = None) -> None:
        """A new shoe was loaded."""
        if decks is not None:
            self.decks = decks
        self.counts.clear()
        self.seen = 0

    def can_add(self, card: Card) -> bool:
        """False when one more of this card would exceed the number of decks."""
        return self.counts[card] < self.decks

    def add(self, card: Card) -> None:
        self.counts[card] += 1
        self.seen += 1

    def report(self) -> dict[str, Any]:
        """Missing and extra cards (code -> how many) against ``decks`` full decks."""
        missing: dict[str, int] = {}
        extra: dict[str, int] = {}
        for card in range(DECK_SIZE):
            n = self.counts[card]
            if n < self.decks:
                missing[CODES[card]] = self.decks - n
            elif n > self.decks:
                extra[CODES[card]] = n - self.decks
        return {
            "decks": self.decks,
            "seen": self.seen,
            "missing": missing,
            "extra": extra,
            "complete": not missing and not extra,
        }
