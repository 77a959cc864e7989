"""Exact per-bet figures of Three Pictures and 3 Face (games.md §2, §3).

What is enumerated: every ordered pair of disjoint three-card hands (one
player box, the banker) from one deck: C(52,3) * C(49,3) = 407,170,400 pairs.
Every bet except pair plus depends on the two hands' classes only, and a
class depends on ranks only, so pairs are counted by rank multisets: 455 box
multisets times 455 banker multisets, each weighted by how many real hands
have those ranks once the box's cards are out. Pair plus depends on one hand
alone (suits included): the 22,100 hands of one deck.

Other boxes and 3 Face's First Card do not change any per-bet figure: with a
uniformly shuffled deck, any two positions hold a uniformly random pair of
disjoint hands, whichever other cards are dealt or discarded around them.
"""

from __future__ import annotations

from typing import Any

from table_controller.analysis.memo import enumeration
from table_controller.analysis.sheet import Enumerated, Progress, Tally, no_progress
from table_controller.analysis.three_cards import (
    ALL_SUITS,
    HANDS_OF_THREE,
    availability_without,
    fill_round,
    multiplicities,
    pick_hand,
    rank_multisets,
    single_hand_classes,
)
from table_controller.rules.cards import Card
from table_controller.rules.game import Game
from table_controller.rules.hands import THREE_PICTURES_TABLE

#: Bet kinds settled on one hand alone (suits matter); the rest are box-against-banker.
SINGLE_HAND_BETS = frozenset({"pair_plus"})
DUEL_PAIRS = HANDS_OF_THREE * 18_424  # C(52,3) * C(49,3)


def _class_of(ranks: tuple[int, int, int]) -> str:
    return THREE_PICTURES_TABLE[ranks[0] * 169 + ranks[1] * 13 + ranks[2]][0]


DuelClasses = dict[tuple[str, str], tuple[int, list[Card], list[Card]]]


@enumeration
def duel_classes(*, progress: Progress = no_progress) -> DuelClasses:
    """Ordered (box, banker) hand pairs grouped by (box class, banker class).

    Returns key -> (number of pairs, a real box hand, a real banker hand).
    """
    multisets = rank_multisets()
    classes = [_class_of(m) for m in multisets]
    counts = [tuple(multiplicities(m).items()) for m in multisets]
    comb4 = [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 2, 1, 0, 0], [1, 3, 3, 1, 0], [1, 4, 6, 4, 1]]
    groups: dict[tuple[str, str], list[Any]] = {}
    left = [4] * 13
    for done, (box, box_cls, box_counts) in enumerate(zip(multisets, classes, counts, strict=False)):
        if done % 50 == 0:
            progress("box against banker", done, len(multisets))
        box_ways = 1
        for rank, k in box_counts:
            box_ways *= comb4[4][k]
            left[rank] -= k
        for banker, banker_cls, banker_counts in zip(multisets, classes, counts, strict=False):
            ways = box_ways
            for rank, k in banker_counts:
                ways *= comb4[left[rank]][k]
            if not ways:
                continue
            key = (box_cls, banker_cls)
            entry = groups.get(key)
            if entry is None:
                groups[key] = [ways, box, banker]
            else:
                entry[0] += ways
        for rank, k in box_counts:
            left[rank] += k
    progress("box against banker", len(multisets), len(multisets))
    out: DuelClasses = {}
    for key, (ways, box, banker) in groups.items():
        box_cards = pick_hand(box, [ALL_SUITS] * 13, False)
        out[key] = (ways, box_cards, pick_hand(banker, availability_without(box_cards), False))
    return out


def analyse_three_pictures(
    game: Game, tally: Tally, progress: Progress = no_progress
) -> Enumerated:
    """Fill ``tally`` for Three Pictures or 3 Face; returns the deal count per bet."""
    sizes = {p: 1 if p == "first" else 3 for p in game.positions}
    boxes = [p for p in game.positions if p not in ("first", "banker")]
    duel = duel_classes(progress=progress)
    expected: dict[str, int] = {}
    for box in boxes:
        bets = [f"{box}.{kind}" for kind in game.variant.bets if kind not in SINGLE_HAND_BETS]
        for ways, box_cards, banker_cards in duel.values():
            hands = fill_round(game.positions, {box: box_cards, "banker": banker_cards}, sizes)
            tally.add(hands, ways, bets)
        expected.update(dict.fromkeys(bets, DUEL_PAIRS))
    for position in boxes + ["banker"]:
        bets = [f"{position}.{kind}" for kind in SINGLE_HAND_BETS]
        bets = [b for b in bets if b in tally.totals]
        if not bets:
            continue
        for ways, cards in single_hand_classes():
            tally.add(fill_round(game.positions, {position: cards}, sizes), ways, bets)
        expected.update(dict.fromkeys(bets, HANDS_OF_THREE))
    return Enumerated(
        expected,
        f"one 52-card deck: every ordered pair of disjoint hands (position, banker), "
        f"{DUEL_PAIRS:,} pairs; single-hand bets over all {HANDS_OF_THREE:,} hands",
    )
