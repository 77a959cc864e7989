"""Punto Banco baccarat (games.md §1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from table_controller.errors import DealError
from table_controller.rules.cards import CODES, POINTS, Card
from table_controller.rules.game import LOSS, PUSH, Game, Hand, RoundResult
from table_controller.rules.variant import BetSpec, OptionSpec

#: BANKER_DRAWS[banker_total][player_third_card_points]: does the banker draw?
BANKER_DRAWS: tuple[tuple[bool, ...], ...] = (
    (True,) * 10,  # 0
    (True,) * 10,  # 1
    (True,) * 10,  # 2
    tuple(t != 8 for t in range(10)),  # 3
    tuple(2 <= t <= 7 for t in range(10)),  # 4
    tuple(4 <= t <= 7 for t in range(10)),  # 5
    tuple(6 <= t <= 7 for t in range(10)),  # 6
    (False,) * 10,  # 7
    (False,) * 10,  # 8 (never reached: a natural)
    (False,) * 10,  # 9
)


def total(cards: Sequence[Card]) -> int:
    """A baccarat hand's points: the sum of card points mod 10."""
    return sum(POINTS[c] for c in cards) % 10


def burn_count(first_card: Card) -> int:
    """How many cards are burned after a new shoe's first card is shown (T/J/Q/K burn 10)."""
    return POINTS[first_card] or 10


def next_baccarat_position(player: Sequence[Card], banker: Sequence[Card]) -> str | None:
    """The baccarat tableau: which hand takes the next card, or None when both stand."""
    n_p, n_b = len(player), len(banker)
    if n_p + n_b < 4:
        return "player" if n_p == n_b else "banker"
    p_total, b_total = total(player[:2]), total(banker[:2])
    if p_total >= 8 or b_total >= 8:
        return None
    if n_p == 2 and n_b == 2 and p_total <= 5:
        return "player"
    if n_b == 2:
        if n_p == 2:
            return "banker" if b_total <= 5 else None
        return "banker" if BANKER_DRAWS[b_total][POINTS[player[2]]] else None
    return None


class Baccarat(Game):
    """Punto Banco: player and banker, third-card tableau, commission or no-commission."""

    game_id = "baccarat"
    burns_new_shoe = True
    OPTIONS = {"decks": OptionSpec(default=8, minimum=1, maximum=8)}
    BETS = {
        "player": BetSpec(required=True),
        "banker": BetSpec(required=True, points_exceptions=True),
        "tie": BetSpec(),
        "player_pair": BetSpec(),
        "banker_pair": BetSpec(),
    }

    def _positions(self) -> tuple[str, ...]:
        return ("player", "banker")

    def burn_count(self, first_card: Card) -> int:
        return burn_count(first_card)

    def next_position(self, hands: Mapping[str, Sequence[Card]], dealt: int) -> str | None:
        return next_baccarat_position(hands["player"], hands["banker"])

    def classify(self, cards: Sequence[Card]) -> str:
        if not 2 <= len(cards) <= 3:
            raise DealError(f"a baccarat hand has 2 or 3 cards, not {len(cards)}")
        points = total(cards)
        if len(cards) == 2 and points >= 8:
            return f"natural{points}"
        return str(points)

    def judge(self, hands: Mapping[str, Sequence[Card]]) -> RoundResult:
        player, banker = hands["player"], hands["banker"]
        p, b = total(player), total(banker)
        winner = "player" if p > b else "banker" if b > p else "tie"
        player_pair = (player[0] >> 2) == (player[1] >> 2)
        banker_pair = (banker[0] >> 2) == (banker[1] >> 2)
        bets = self.variant.bets
        payouts: dict[str, Decimal] = {}
        for name, terms in bets.items():
            if name == "player":
                value = terms.on_win() if winner == "player" else PUSH if winner == "tie" else LOSS
            elif name == "banker":
                value = terms.on_win(b) if winner == "banker" else PUSH if winner == "tie" else LOSS
            elif name == "tie":
                value = terms.on_win() if winner == "tie" else LOSS
            elif name == "player_pair":
                value = terms.on_win() if player_pair else LOSS
            else:  # banker_pair
                value = terms.on_win() if banker_pair else LOSS
            payouts[name] = value
        outcome: dict[str, Any] = {
            "winner": winner,
            "natural": len(player) == 2 and len(banker) == 2 and max(p, b) >= 8,
            "player_pair": player_pair,
            "banker_pair": banker_pair,
        }
        return RoundResult(
            hands={
                "player": Hand(tuple(CODES[c] for c in player), self.classify(player), p),
                "banker": Hand(tuple(CODES[c] for c in banker), self.classify(banker), b),
            },
            outcome=outcome,
            payouts=payouts,
        )
