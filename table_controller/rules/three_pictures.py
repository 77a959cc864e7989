"""Three Pictures (games.md §2): boxes against the banker, 31 classes, single deck."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import cached_property

from table_controller.errors import DealError
from table_controller.rules.cards import CODES, Card
from table_controller.rules.game import LOSS, PUSH, Game, Hand, RoundResult
from table_controller.rules.hands import three_pictures_class
from table_controller.rules.variant import BetSpec, OptionSpec


def hand_of(cards: Sequence[Card]) -> Hand:
    """A three-card hand with its Three Pictures class and points."""
    cls, _, points = three_pictures_class(cards)
    return Hand(tuple(CODES[c] for c in cards), cls, points)


class ThreePictures(Game):
    """Three Pictures: ``box1``..``boxN`` each against the ``banker``."""

    game_id = "three-pictures"
    OPTIONS = {
        "boxes": OptionSpec(default=3, minimum=1, maximum=7),
        "tie_basis": OptionSpec(default="points", choices=("points", "class")),
    }
    BETS = {
        "main": BetSpec(per_position=True, required=True, points_exceptions=True),
        "tie": BetSpec(per_position=True),
        "three_pictures": BetSpec(per_position=True),
    }

    def _positions(self) -> tuple[str, ...]:
        return tuple(f"box{k}" for k in range(1, self.variant.options["boxes"] + 1)) + ("banker",)

    def _bet_names(self) -> tuple[str, ...]:
        boxes = self.positions[:-1]
        return tuple(f"{box}.{bet}" for box in boxes for bet in self.variant.bets)

    @cached_property
    def deal_order(self) -> tuple[str, ...]:
        """Every card's position in order: box1..boxN then banker, three times round."""
        return self.positions * 3

    def next_position(self, hands: Mapping[str, Sequence[Card]], dealt: int) -> str | None:
        order = self.deal_order
        return order[dealt] if dealt < len(order) else None

    def whole_deal_order(self, cards: Sequence[Card]) -> Sequence[str]:
        return self.deal_order

    def classify(self, cards: Sequence[Card]) -> str:
        if len(cards) != 3:
            raise DealError(f"a Three Pictures hand has 3 cards, not {len(cards)}")
        return three_pictures_class(cards)[0]

    def judge(self, hands: Mapping[str, Sequence[Card]]) -> RoundResult:
        bets = self.variant.bets
        tie_on_points = self.variant.options["tie_basis"] == "points"
        b_cls, b_strength, b_points = three_pictures_class(hands["banker"])
        result_hands = {"banker": Hand(tuple(CODES[c] for c in hands["banker"]), b_cls, b_points)}
        outcome: dict[str, str] = {}
        payouts: dict[str, Decimal] = {}
        for box in self.positions[:-1]:
            cards = hands[box]
            cls, strength, points = three_pictures_class(cards)
            result_hands[box] = Hand(tuple(CODES[c] for c in cards), cls, points)
            if strength > b_strength:
                outcome[box] = "win"
            elif strength < b_strength:
                outcome[box] = "lose"
            else:
                outcome[box] = "tie"
            for name, terms in bets.items():
                if name == "main":
                    value = (
                        terms.on_win(points) if outcome[box] == "win"
                        else PUSH if outcome[box] == "tie" else LOSS
                    )
                elif name == "tie":
                    tied = points == b_points if tie_on_points else strength == b_strength
                    value = terms.on_win() if tied else LOSS
                else:  # three_pictures
                    value = terms.on_win() if cls == "3P" else LOSS
                payouts[f"{box}.{name}"] = value
        ordered = {p: result_hands[p] for p in self.positions}
        return RoundResult(hands=ordered, outcome=outcome, payouts=payouts)
