"""What every game offers the controller: a dealing plan, a judgement, a settlement.

A :class:`Game` is built from a validated :class:`~table_controller.rules.variant.Variant`.
It is pure: it never reads a clock, a file or a socket, so the live table, the
``rules judge`` command and the exact analysis all run the same code.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from table_controller.errors import NotEnoughCards, RoundComplete
from table_controller.rules.cards import CODES, Card
from table_controller.rules.variant import BetSpec, BetTerms, OptionSpec, Variant

LOSS = Decimal(-1)
PUSH = Decimal(0)


def money_text(amount: Decimal) -> str:
    """A decimal as events.md writes it: ``"0.5"``, ``"-1"``, ``"0"``, ``"1000"``."""
    return format(amount, "f")


@dataclass(frozen=True)
class Hand:
    """One position's cards at the end of a round, with its class and points."""

    cards: tuple[str, ...]
    cls: str | None
    points: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"cards": list(self.cards), "class": self.cls, "points": self.points}


@dataclass(frozen=True)
class RoundResult:
    """The judged round: hands, game-specific outcome and every bet's net win per unit."""

    hands: dict[str, Hand]
    outcome: dict[str, Any]
    payouts: dict[str, Decimal]

    def to_dict(self) -> dict[str, Any]:
        """The ``hands``/``outcome``/``payouts`` fields of ``round.result`` (events.md)."""
        return {
            "hands": {p: h.to_dict() for p, h in self.hands.items()},
            "outcome": self.outcome,
            "payouts": {bet: money_text(v) for bet, v in self.payouts.items()},
        }


class Game(ABC):
    """A game variant's rules: positions, dealing plan, classes, outcome and settlement."""

    game_id: ClassVar[str]
    OPTIONS: ClassVar[dict[str, OptionSpec]]
    BETS: ClassVar[dict[str, BetSpec]]
    #: True for a game that burns after a new shoe (baccarat): the shoe's first card is
    #: shown and :meth:`burn_count` more cards follow it to position ``burn`` before a round.
    burns_new_shoe: ClassVar[bool] = False

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.positions: tuple[str, ...] = self._positions()
        self.bet_names: tuple[str, ...] = self._bet_names()

    @property
    def decks(self) -> int:
        """How many decks the shoe holds (1 for the single-deck games)."""
        return int(self.variant.options.get("decks", 1))

    @property
    def shuffle_every_round(self) -> bool:
        """True for the games that use a freshly shuffled single deck every round."""
        return self.decks == 1

    def burn_count(self, first_card: Card) -> int:
        """How many cards are burned after a new shoe's shown ``first_card`` (0: none but that one).

        Asked only of a game that :attr:`burns_new_shoe` (or a table told to burn).
        """
        return 0

    def terms(self, bet: str) -> BetTerms:
        """The paytable terms of a bet kind (``main`` for ``box1.main``)."""
        return self.variant.bets[bet]

    @abstractmethod
    def _positions(self) -> tuple[str, ...]:
        """Every position that can receive a card, in display order."""

    def _bet_names(self) -> tuple[str, ...]:
        return tuple(self.variant.bets)

    @abstractmethod
    def next_position(self, hands: Mapping[str, Sequence[Card]], dealt: int) -> str | None:
        """Where the next card must go, given the cards placed so far; None when complete."""

    @abstractmethod
    def judge(self, hands: Mapping[str, Sequence[Card]]) -> RoundResult:
        """Classes, outcome and settlement of a complete round."""

    @abstractmethod
    def classify(self, cards: Sequence[Card]) -> str:
        """The class name of one hand."""

    def whole_deal_order(self, cards: Sequence[Card]) -> Sequence[str] | None:
        """Every card's position for a round starting with ``cards``, when that is known up front.

        Games whose order never depends on the cards (Three Pictures, Teen Patti) or only
        on the first card (3 Face) return it, so :meth:`deal` can place a whole round at
        once; it must agree with :meth:`next_position`. None (the default, and baccarat's
        tableau) means the round is dealt card by card.
        """
        return None

    def new_deal(self) -> Deal:
        """An empty round, ready for its first card."""
        return Deal(self)

    def deal(self, cards: Sequence[Card]) -> tuple[Deal, int]:
        """Place ``cards`` in shoe order until the round is complete.

        Returns the deal and how many cards it used; raises
        :class:`~table_controller.errors.NotEnoughCards` if they run out first.
        """
        order = self.whole_deal_order(cards) if cards else None
        if order is not None and len(cards) >= len(order):
            return Deal.whole(self, order, cards), len(order)
        deal = Deal(self)
        place = deal.place
        for card in cards:
            if deal.next_position is None:
                break
            place(card)
        if deal.next_position is not None:
            raise NotEnoughCards(
                f"{self.variant.id}: the round needs more cards than the {len(cards)} given "
                f"(next card goes to {deal.next_position!r})"
            )
        return deal, deal.dealt


class Deal:
    """The cards of one round so far, each placed where the game's dealing plan says."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.hands: dict[str, list[Card]] = {p: [] for p in game.positions}
        self.placed: list[tuple[str, int, Card]] = []
        self._next: str | None = game.next_position(self.hands, 0)

    @classmethod
    def whole(cls, game: Game, order: Sequence[str], cards: Sequence[Card]) -> Deal:
        """A complete round: ``cards[i]`` placed at ``order[i]`` (the game's whole deal order)."""
        deal = cls(game)
        hands, placed = deal.hands, deal.placed
        for position, card in zip(order, cards, strict=False):
            hand = hands[position]
            placed.append((position, len(hand), card))
            hand.append(card)
        deal._next = None
        return deal

    @property
    def dealt(self) -> int:
        return len(self.placed)

    @property
    def next_position(self) -> str | None:
        """The position the next card must go to, or None when the round is complete."""
        return self._next

    @property
    def is_complete(self) -> bool:
        return self._next is None

    def can_place(self) -> bool:
        return self._next is not None

    def is_completed_by(self, card: Card) -> bool:
        """True when ``card``, placed next, would be the round's last card (False when the
        round is complete already). The deal itself is not changed."""
        position = self._next
        if position is None:
            return False
        hands = {p: list(cards) for p, cards in self.hands.items()}
        hands[position].append(card)
        return self.game.next_position(hands, len(self.placed) + 1) is None

    def place(self, card: Card) -> tuple[str, int]:
        """Give ``card`` to the next position; returns (position, index within it)."""
        position = self._next
        if position is None:
            raise RoundComplete(
                f"{self.game.variant.id}: card {CODES[card]} arrived after the round was complete"
            )
        hand = self.hands[position]
        index = len(hand)
        hand.append(card)
        placed = self.placed
        placed.append((position, index, card))
        self._next = self.game.next_position(self.hands, len(placed))
        return position, index

    def result(self) -> RoundResult:
        """Judge the complete round."""
        if self._next is not None:
            raise NotEnoughCards(
                f"{self.game.variant.id}: round is not complete (next card goes to {self._next!r})"
            )
        return self.game.judge(self.hands)
