"""Teen Patti 20-20 (games.md §4): hands ``a`` and ``b``, pair plus, six-card bonus."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import ClassVar

from table_controller.errors import DealError
from table_controller.rules.cards import CODES, Card
from table_controller.rules.game import LOSS, PUSH, Game, Hand, RoundResult
from table_controller.rules.hands import (
    SIX_CARD_CATEGORIES,
    TEEN_PATTI_CLASSES,
    best_five_category,
    teen_patti_class,
)
from table_controller.rules.variant import BetSpec, OptionSpec

ORDER = ("a", "b", "a", "b", "a", "b")


class TeenPatti2020(Game):
    """Teen Patti 20-20: two hands dealt alternately from a single deck."""

    game_id = "teen-patti-2020"
    OPTIONS: ClassVar[dict[str, OptionSpec]] = {}
    BETS = {
        "a": BetSpec(required=True),
        "b": BetSpec(required=True),
        "tie": BetSpec(),
        "pair_plus": BetSpec(per_position=True, pays_keys=TEEN_PATTI_CLASSES[:-1]),
        "six_card_bonus": BetSpec(pays_keys=SIX_CARD_CATEGORIES[:7]),
    }

    def _positions(self) -> tuple[str, ...]:
        return ("a", "b")

    def _bet_names(self) -> tuple[str, ...]:
        names: list[str] = []
        for bet in self.variant.bets:
            names.extend(("a.pair_plus", "b.pair_plus") if bet == "pair_plus" else (bet,))
        return tuple(names)

    def next_position(self, hands: Mapping[str, Sequence[Card]], dealt: int) -> str | None:
        return ORDER[dealt] if dealt < 6 else None

    def whole_deal_order(self, cards: Sequence[Card]) -> Sequence[str]:
        return ORDER

    def classify(self, cards: Sequence[Card]) -> str:
        if len(cards) != 3:
            raise DealError(f"a Teen Patti hand has 3 cards, not {len(cards)}")
        return teen_patti_class(cards)[0]

    def judge(self, hands: Mapping[str, Sequence[Card]]) -> RoundResult:
        a, b = hands["a"], hands["b"]
        a_cls, a_strength = teen_patti_class(a)
        b_cls, b_strength = teen_patti_class(b)
        winner = "a" if a_strength > b_strength else "b" if b_strength > a_strength else "tie"
        bets = self.variant.bets
        payouts: dict[str, Decimal] = {}
        six_card: str | None = None
        for name, terms in bets.items():
            if name == "a":
                payouts["a"] = terms.on_win() if winner == "a" else PUSH if winner == "tie" else LOSS
            elif name == "b":
                payouts["b"] = terms.on_win() if winner == "b" else PUSH if winner == "tie" else LOSS
            elif name == "tie":
                payouts["tie"] = terms.on_win() if winner == "tie" else LOSS
            elif name == "pair_plus":
                payouts["a.pair_plus"] = terms.pays.get(a_cls, LOSS)
                payouts["b.pair_plus"] = terms.pays.get(b_cls, LOSS)
            else:  # six_card_bonus
                six_card = best_five_category(list(a) + list(b))
                payouts["six_card_bonus"] = terms.pays.get(six_card, LOSS)
        return RoundResult(
            hands={
                "a": Hand(tuple(CODES[c] for c in a), a_cls, None),
                "b": Hand(tuple(CODES[c] for c in b), b_cls, None),
            },
            outcome={"winner": winner, "six_card_bonus": six_card},
            payouts=payouts,
        )
