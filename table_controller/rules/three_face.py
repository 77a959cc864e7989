"""3 Face / 3 Picture (games.md §3): First Card sets the deal, three players vs the banker."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

from table_controller.errors import DealError
from table_controller.rules.cards import CODES, Card
from table_controller.rules.game import LOSS, PUSH, Game, Hand, RoundResult
from table_controller.rules.hands import POKER3_CATEGORIES, poker3_category, three_pictures_class
from table_controller.rules.variant import BetSpec, BetTerms, OptionSpec, Variant

SEATS = ("banker", "player1", "player2", "player3")
PLAYERS = SEATS[1:]
PAIR_PLUS_KEYS = tuple(c for c in POKER3_CATEGORIES if c != "high-card")


def first_seat(first_card: Card) -> str:
    """Where dealing starts: A,5,9,K banker; 2,6,T player1; 3,7,J player2; 4,8,Q player3."""
    return SEATS[(first_card >> 2) % 4]


#: DEAL_ORDERS[start]: the whole round's positions when dealing starts at SEATS[start].
DEAL_ORDERS: tuple[tuple[str, ...], ...] = tuple(
    ("first",) + tuple(SEATS[(start + i) % 4] for i in range(12)) for start in range(4)
)


class ThreeFace(Game):
    """3 Face: the First Card, then ``player1``..``player3`` each against the ``banker``."""

    game_id = "three-face"
    OPTIONS = {"tie_basis": OptionSpec(default="class", choices=("points", "class"))}
    BETS = {
        "win": BetSpec(per_position=True, required=True, points_exceptions=True),
        "lose": BetSpec(per_position=True, required=True, points_exceptions=True),
        "tie": BetSpec(per_position=True),
        "pair_plus": BetSpec(per_position=True, pays_keys=PAIR_PLUS_KEYS),
        "three_pictures": BetSpec(per_position=True),
    }

    def __init__(self, variant: Variant) -> None:
        super().__init__(variant)
        self._tie_on_class = variant.options["tie_basis"] == "class"
        #: player -> ((bet kind, bet name, terms), ...): settled in this order every round.
        self._player_bets: dict[str, tuple[tuple[str, str, BetTerms], ...]] = {
            player: tuple((kind, f"{player}.{kind}", terms) for kind, terms in variant.bets.items())
            for player in PLAYERS
        }

    def _positions(self) -> tuple[str, ...]:
        return ("first",) + SEATS

    def _bet_names(self) -> tuple[str, ...]:
        names = [f"{p}.{bet}" for p in PLAYERS for bet in self.variant.bets]
        if "pair_plus" in self.variant.bets:
            names.append("banker.pair_plus")
        return tuple(names)

    def next_position(self, hands: Mapping[str, Sequence[Card]], dealt: int) -> str | None:
        if dealt == 0:
            return "first"
        if dealt >= 13:
            return None
        return DEAL_ORDERS[(hands["first"][0] >> 2) % 4][dealt]

    def whole_deal_order(self, cards: Sequence[Card]) -> Sequence[str]:
        return DEAL_ORDERS[(cards[0] >> 2) % 4]

    def classify(self, cards: Sequence[Card]) -> str:
        if len(cards) != 3:
            raise DealError(f"a 3 Face hand has 3 cards, not {len(cards)}")
        return three_pictures_class(cards)[0]

    def _pair_plus(self, cards: Sequence[Card]) -> Decimal:
        return self.variant.bets["pair_plus"].pays.get(poker3_category(cards), LOSS)

    def judge(self, hands: Mapping[str, Sequence[Card]]) -> RoundResult:
        tie_on_class = self._tie_on_class
        b_cls, b_strength, b_points = three_pictures_class(hands["banker"])
        result_hands = {
            "first": Hand(tuple(CODES[c] for c in hands["first"]), None, None),
            "banker": Hand(tuple(CODES[c] for c in hands["banker"]), b_cls, b_points),
        }
        outcome: dict[str, str] = {}
        payouts: dict[str, Decimal] = {}
        for player in PLAYERS:
            cards = hands[player]
            cls, strength, points = three_pictures_class(cards)
            result_hands[player] = Hand(tuple(CODES[c] for c in cards), cls, points)
            won, lost = strength > b_strength, strength < b_strength
            outcome[player] = "win" if won else "lose" if lost else "tie"
            for name, key, terms in self._player_bets[player]:
                if name == "win":
                    value = terms.on_win(points) if won else LOSS if lost else PUSH
                elif name == "lose":
                    value = terms.on_win(b_points) if lost else LOSS if won else PUSH
                elif name == "tie":
                    tied = strength == b_strength if tie_on_class else points == b_points
                    value = terms.on_win() if tied else LOSS
                elif name == "pair_plus":
                    value = self._pair_plus(cards)
                else:  # three_pictures
                    value = terms.on_win() if cls == "3P" else LOSS
                payouts[key] = value
        if "pair_plus" in self.variant.bets:
            payouts["banker.pair_plus"] = self._pair_plus(hands["banker"])
        ordered = {p: result_hands[p] for p in self.positions}
        return RoundResult(hands=ordered, outcome=outcome, payouts=payouts)
