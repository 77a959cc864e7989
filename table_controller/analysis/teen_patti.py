"""Exact figures of Teen Patti 20-20 (games.md §4).

- ``a``, ``b``, ``tie``: every ordered pair of disjoint hands, C(52,3) *
  C(49,3). Hand ``a`` runs over the 22,100 hands up to a relabelling of suits
  (suits never rank, so relabelled hands settle alike); for each, hand ``b``
  runs over the 455 rank multisets, counted suited and unsuited from the
  suits ``a`` left. Pairs are grouped by (class of a, class of b, which hand
  is stronger) and one real round per group is judged.
- ``a.pair_plus``, ``b.pair_plus``: the 22,100 hands of one deck.
- ``six_card_bonus``: all C(52,6) = 20,358,520 six-card sets, grouped by rank
  multiset (18,395 of them) and, where five or six distinct ranks allow a
  flush, by which ranks share the flush suit. Non-flush sets of a multiset all
  make the same poker hand, so each group is judged once.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations, permutations, product
from math import comb
from typing import Any

from table_controller.analysis.memo import enumeration
from table_controller.analysis.sheet import Enumerated, Progress, Tally, no_progress
from table_controller.analysis.three_cards import (
    HANDS_OF_THREE,
    availability_without,
    fill_round,
    hand_counts,
    pick_hand,
    rank_multisets,
    single_hand_classes,
)
from table_controller.rules.cards import Card
from table_controller.rules.game import Game
from table_controller.rules.hands import TEEN_PATTI_TABLE

DUEL_PAIRS = HANDS_OF_THREE * 18_424
SIX_CARD_SETS = comb(52, 6)
DuelKey = tuple[str, str, int]


@enumeration
def suit_classes_of_hands(*, progress: Progress = no_progress) -> dict[tuple[Card, ...], int]:
    """The 22,100 hands up to suit relabelling: canonical hand -> how many hands it stands for."""
    out: dict[tuple[Card, ...], int] = {}
    relabellings = list(permutations(range(4)))
    for hand in combinations(range(52), 3):
        canonical = min(tuple(sorted((c & ~3) | p[c & 3] for c in hand)) for p in relabellings)
        out[canonical] = out.get(canonical, 0) + 1
    return out


def _strength(ranks: tuple[int, ...], suited: bool) -> tuple[str, int]:
    return TEEN_PATTI_TABLE[(ranks[0] * 169 + ranks[1] * 13 + ranks[2]) * 2 + suited]


DuelClasses = dict[DuelKey, tuple[int, list[Card], list[Card]]]


@enumeration
def duel_classes(*, progress: Progress = no_progress) -> DuelClasses:
    """Ordered (a, b) pairs grouped by (class of a, class of b, sign of a's strength - b's).

    Returns key -> (number of pairs, a real hand a, a real hand b).
    """
    hands_a = suit_classes_of_hands(progress=progress)
    multisets = rank_multisets()
    strengths = [(_strength(m, False), _strength(m, True)) for m in multisets]
    groups: dict[DuelKey, list[Any]] = {}
    for done, (a, a_ways) in enumerate(hands_a.items()):
        if done % 100 == 0:
            progress("teen patti a against b", done, len(hands_a))
        a_ranks = tuple(c >> 2 for c in a)
        a_cls, a_strength = _strength(a_ranks, len({c & 3 for c in a}) == 1)
        available = availability_without(a)
        for ranks, by_suited in zip(multisets, strengths, strict=False):
            for suited, count in enumerate(hand_counts(ranks, available)):
                if not count:
                    continue
                b_cls, b_strength = by_suited[suited]
                order = (a_strength > b_strength) - (a_strength < b_strength)
                key = (a_cls, b_cls, order)
                entry = groups.get(key)
                if entry is None:
                    groups[key] = [a_ways * count, a, ranks, bool(suited)]
                else:
                    entry[0] += a_ways * count
    progress("teen patti a against b", len(hands_a), len(hands_a))
    return {
        key: (ways, list(a), pick_hand(ranks, availability_without(a), suited))
        for key, (ways, a, ranks, suited) in groups.items()
    }


@enumeration
def six_card_classes(*, progress: Progress = no_progress) -> list[tuple[int, list[Card]]]:
    """All C(52,6) six-card sets as (number of sets, one real set) per poker-equivalent group."""
    out: list[tuple[int, list[Card]]] = []
    vectors = list(_rank_vectors(6))
    for done, counts in enumerate(vectors):
        if done % 2000 == 0:
            progress("six-card bonus", done, len(vectors))
        ranks = [r for r in range(13) for _ in range(counts[r])]
        distinct = sorted(set(ranks))
        total = 1
        for k in counts:
            total *= comb(4, k)
        flushes: list[tuple[int, list[Card]]] = []
        if len(distinct) == 6:
            # all six in one suit (4 ways); five in one suit, the sixth elsewhere (4*3 ways each)
            flushes.append((4, [r * 4 for r in distinct]))
            for odd in distinct:
                flushes.append((12, [r * 4 + (r == odd) for r in distinct]))
        elif len(distinct) == 5:
            # the five ranks in one suit, the pair's other card in another (4*3 ways)
            paired = next(r for r in distinct if counts[r] == 2)
            flushes.append((12, [r * 4 for r in distinct] + [paired * 4 + 1]))
        plain = total - sum(w for w, _ in flushes)
        # dealing suits round-robin puts at most two cards in a suit: never a flush
        out.append((plain, [r * 4 + i % 4 for i, r in enumerate(ranks)]))
        out.extend(flushes)
    progress("six-card bonus", len(vectors), len(vectors))
    return out


def _rank_vectors(cards: int) -> Iterator[tuple[int, ...]]:
    """Every way to hold ``cards`` cards as counts per rank (0..4 of each of 13 ranks)."""
    for counts in product(range(5), repeat=7):
        head = sum(counts)
        if head > cards:
            continue
        for tail in _tails(cards - head, 6):
            yield counts + tail


def _tails(left: int, slots: int) -> Iterator[tuple[int, ...]]:
    if slots == 0:
        if left == 0:
            yield ()
        return
    for k in range(min(4, left) + 1):
        for rest in _tails(left - k, slots - 1):
            yield (k,) + rest


def analyse_teen_patti(game: Game, tally: Tally, progress: Progress = no_progress) -> Enumerated:
    """Fill ``tally`` for Teen Patti 20-20; returns the deal count per bet."""
    sizes = dict.fromkeys(game.positions, 3)
    expected: dict[str, int] = {}
    duel_bets = [b for b in ("a", "b", "tie") if b in tally.totals]
    for ways, a, b in duel_classes(progress=progress).values():
        tally.add({"a": a, "b": b}, ways, duel_bets)
    expected.update(dict.fromkeys(duel_bets, DUEL_PAIRS))
    for position in ("a", "b"):
        bet = f"{position}.pair_plus"
        if bet not in tally.totals:
            continue
        for ways, cards in single_hand_classes():
            tally.add(fill_round(game.positions, {position: cards}, sizes), ways, [bet])
        expected[bet] = HANDS_OF_THREE
    if "six_card_bonus" in tally.totals:
        for ways, six in six_card_classes(progress=progress):
            if ways:
                tally.add({"a": six[:3], "b": six[3:]}, ways, ["six_card_bonus"])
        expected["six_card_bonus"] = SIX_CARD_SETS
    return Enumerated(
        expected,
        f"one 52-card deck: every ordered pair of disjoint hands a, b ({DUEL_PAIRS:,}); "
        f"pair plus over all {HANDS_OF_THREE:,} hands; six-card bonus over all "
        f"{SIX_CARD_SETS:,} six-card sets",
    )
