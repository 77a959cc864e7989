"""Counting three-card hands from one 52-card deck, and building real rounds from them.

Suits never matter to a three-card hand except through "all three suited", so
hands are counted by rank multiset (455 of them) and, for three distinct
ranks, suited or not. A class carries its exact number of hands and one real
hand of the class, which the game's own rules then judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from itertools import combinations_with_replacement
from math import comb

from table_controller.rules.cards import Card

ALL_SUITS = 0b1111
HANDS_OF_THREE = comb(52, 3)  # 22,100


@cache
def rank_multisets() -> tuple[tuple[int, int, int], ...]:
    """All 455 multisets of three ranks, as sorted rank triples."""
    return tuple(combinations_with_replacement(range(13), 3))


def multiplicities(ranks: Sequence[int]) -> dict[int, int]:
    """How many times each rank occurs."""
    out: dict[int, int] = {}
    for r in ranks:
        out[r] = out.get(r, 0) + 1
    return out


def suits_of(mask: int) -> list[int]:
    return [s for s in range(4) if mask >> s & 1]


def hand_counts(ranks: Sequence[int], available: Sequence[int]) -> tuple[int, int]:
    """(unsuited, suited) hands with these ranks, using only the suits ``available[rank]``."""
    if ranks[0] != ranks[1] and ranks[1] != ranks[2] and ranks[0] != ranks[2]:
        m0, m1, m2 = (available[r] for r in ranks)
        total = m0.bit_count() * m1.bit_count() * m2.bit_count()
        suited = (m0 & m1 & m2).bit_count()
        return total - suited, suited
    total = 1
    for rank, k in multiplicities(ranks).items():
        total *= comb(available[rank].bit_count(), k)
    return total, 0


def pick_hand(ranks: Sequence[int], available: Sequence[int], suited: bool) -> list[Card]:
    """A real hand with these ranks from the available suits, suited or deliberately not.

    Raises ValueError if no such hand exists (the caller only asks for counted classes).
    """
    options: list[list[int]] = [[]]
    for position, rank in enumerate(ranks):
        options = [
            chosen + [s]
            for chosen in options
            for s in suits_of(available[rank])
            if all(not (ranks[i] == rank and chosen[i] == s) for i in range(position))
        ]
    for suits in options:
        if (len(set(suits)) == 1) == suited:
            return [r * 4 + s for r, s in zip(ranks, suits, strict=False)]
    raise ValueError(f"no {'suited' if suited else 'unsuited'} hand of ranks {ranks}")


def availability_without(cards: Sequence[Card]) -> list[int]:
    """Suits still in the deck, per rank, once ``cards`` are out."""
    available = [ALL_SUITS] * 13
    for c in cards:
        available[c >> 2] &= ~(1 << (c & 3))
    return available


@cache
def single_hand_classes() -> tuple[tuple[int, tuple[Card, ...]], ...]:
    """Every three-card hand of a full deck, grouped by (rank multiset, suited).

    Returns (number of hands, one real hand) per class; the numbers add up to 22,100.
    """
    full = [ALL_SUITS] * 13
    out: list[tuple[int, tuple[Card, ...]]] = []
    for ranks in rank_multisets():
        for suited, count in zip((False, True), hand_counts(ranks, full), strict=False):
            if count:
                out.append((count, tuple(pick_hand(ranks, full, suited))))
    return tuple(out)


def fill_round(
    positions: Sequence[str], placed: Mapping[str, Sequence[Card]], sizes: Mapping[str, int]
) -> dict[str, list[Card]]:
    """A complete round with ``placed`` hands; other positions get unused cards of the deck.

    The filler never changes a bet read from the placed positions: that is the
    point of reading each bet only where its hand was placed.
    """
    used = {c for cards in placed.values() for c in cards}
    spare = (c for c in range(52) if c not in used)
    return {
        p: list(placed[p]) if p in placed else [next(spare) for _ in range(sizes[p])]
        for p in positions
    }
