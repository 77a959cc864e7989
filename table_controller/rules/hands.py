"""Hand evaluation tables for the three-card games and the six-card bonus.

Every three-card evaluation here is a table look-up keyed by the three ranks
(``r1 * 169 + r2 * 13 + r3``, 2,197 entries, any order) plus, where suits
matter, whether the hand is suited. The tables are built once at import from
the definitions in games.md, so judging a round never re-derives a class.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

from table_controller.rules.cards import Card

# ---------------------------------------------------------------- Three Pictures
# Classes high to low: 3P, then for points 9..0: 2P<n>, P<n>, <n>.

THREE_PICTURES_CLASSES: tuple[str, ...] = ("3P",) + tuple(
    name for n in range(9, -1, -1) for name in (f"2P{n}", f"P{n}", f"{n}")
)
#: Higher is better; equal strength is a tie.
THREE_PICTURES_STRENGTH: dict[str, int] = {
    name: len(THREE_PICTURES_CLASSES) - i for i, name in enumerate(THREE_PICTURES_CLASSES)
}


def _rank_points(r: int) -> int:
    return 0 if r >= 9 else r + 1


def _three_pictures_entry(ranks: tuple[int, int, int]) -> tuple[str, int, int]:
    pictures = sum(1 for r in ranks if r >= 10)
    points = sum(_rank_points(r) for r in ranks) % 10
    if pictures == 3:
        name = "3P"
    elif pictures == 2:
        name = f"2P{points}"
    elif pictures == 1:
        name = f"P{points}"
    else:
        name = str(points)
    return name, THREE_PICTURES_STRENGTH[name], points


#: rank key -> (class name, strength, points)
THREE_PICTURES_TABLE: list[tuple[str, int, int]] = [
    _three_pictures_entry((rs[0], rs[1], rs[2])) for rs in product(range(13), repeat=3)
]

# ------------------------------------------------------- Three-card poker (pair plus)
POKER3_CATEGORIES: tuple[str, ...] = (
    "straight-flush", "three-of-a-kind", "straight", "flush", "pair", "high-card",
)


def _is_three_card_straight(ranks: tuple[int, int, int]) -> bool:
    """Consecutive ranks; the ace plays low (A-2-3) or high (Q-K-A), never K-A-2."""
    s = sorted(ranks)
    if len(set(s)) != 3:
        return False
    if s[2] - s[0] == 2:
        return True
    return s == [0, 11, 12]  # A, Q, K


def _poker3_entry(ranks: tuple[int, int, int]) -> tuple[str, str]:
    """(category when not suited, category when suited)."""
    distinct = len(set(ranks))
    if distinct == 1:
        return "three-of-a-kind", "three-of-a-kind"
    if distinct == 2:
        return "pair", "pair"
    if _is_three_card_straight(ranks):
        return "straight", "straight-flush"
    return "high-card", "flush"


#: rank key -> (category unsuited, category suited)
POKER3_TABLE: list[tuple[str, str]] = [_poker3_entry((rs[0], rs[1], rs[2])) for rs in product(range(13), repeat=3)]

# ------------------------------------------------------------------ Teen Patti
TEEN_PATTI_CLASSES: tuple[str, ...] = (
    "trail-aces", "trail", "straight-flush", "straight", "flush", "pair", "high-card",
)


def _tp_value(r: int) -> int:
    """Card order A K Q ... 2 as values 14 down to 2."""
    return 14 if r == 0 else r + 1


def _tp_straight_rank(values: list[int]) -> int | None:
    """Order of a straight: A-K-Q 13, A-2-3 12, K-Q-J 11, ... 4-3-2 2; None if not one."""
    v = sorted(values, reverse=True)
    if len(set(v)) != 3:
        return None
    if v == [14, 13, 12]:
        return 13
    if v == [14, 3, 2]:
        return 12
    if v[0] - v[2] == 2:
        return v[0] - 2
    return None


def _teen_patti_entry(ranks: tuple[int, int, int], suited: bool) -> tuple[str, int]:
    values = sorted((_tp_value(r) for r in ranks), reverse=True)
    straight = _tp_straight_rank(values)
    if values[0] == values[2]:
        name = "trail-aces" if values[0] == 14 else "trail"
        tiebreak = values[0]
    elif straight is not None:
        name = "straight-flush" if suited else "straight"
        tiebreak = straight
    elif suited:
        name, tiebreak = "flush", values[0] * 225 + values[1] * 15 + values[2]
    elif values[0] == values[1] or values[1] == values[2]:
        pair = values[1]
        kicker = values[2] if values[0] == values[1] else values[0]
        name, tiebreak = "pair", pair * 15 + kicker
    else:
        name, tiebreak = "high-card", values[0] * 225 + values[1] * 15 + values[2]
    class_rank = len(TEEN_PATTI_CLASSES) - TEEN_PATTI_CLASSES.index(name)
    return name, class_rank * 15**3 + tiebreak


#: (rank key * 2 + suited) -> (class name, strength)
TEEN_PATTI_TABLE: list[tuple[str, int]] = [
    _teen_patti_entry((rs[0], rs[1], rs[2]), suited) for rs in product(range(13), repeat=3) for suited in (False, True)
]


def rank_key(cards: Sequence[Card]) -> int:
    """Look-up key of three cards (order does not matter to the tables)."""
    return (cards[0] >> 2) * 169 + (cards[1] >> 2) * 13 + (cards[2] >> 2)


def is_suited(cards: Sequence[Card]) -> bool:
    return (cards[0] & 3) == (cards[1] & 3) == (cards[2] & 3)


def three_pictures_class(cards: Sequence[Card]) -> tuple[str, int, int]:
    """(class, strength, points) of a Three Pictures / 3 Face hand."""
    return THREE_PICTURES_TABLE[rank_key(cards)]


def poker3_category(cards: Sequence[Card]) -> str:
    """Three-card poker category used by 3 Face's pair plus."""
    return POKER3_TABLE[rank_key(cards)][is_suited(cards)]


def teen_patti_class(cards: Sequence[Card]) -> tuple[str, int]:
    """(class, strength) of a Teen Patti hand."""
    return TEEN_PATTI_TABLE[rank_key(cards) * 2 + is_suited(cards)]


# ------------------------------------------------------------ Six-card bonus
SIX_CARD_CATEGORIES: tuple[str, ...] = (
    "royal-flush", "straight-flush", "four-of-a-kind", "full-house",
    "flush", "straight", "three-of-a-kind", "two-pair", "pair", "high-card",
)

_ROYAL = 0b1_1110_0000_0001  # A (bit 0), T J Q K (bits 9..12)


def _straight_masks() -> list[int]:
    masks = [0b11111 << low for low in range(9)]  # A-2-3-4-5 .. 9-T-J-Q-K
    masks.append(_ROYAL)  # T-J-Q-K-A
    return masks


_STRAIGHTS = _straight_masks()


def _has_straight(rank_mask: int) -> bool:
    return any(rank_mask & m == m for m in _STRAIGHTS)


def best_five_category(cards: Sequence[Card]) -> str:
    """Category of the best 5-card poker hand among 5 to 7 cards (A-2-3-4-5 is a straight)."""
    rank_counts = [0] * 13
    suit_masks = [0, 0, 0, 0]
    rank_mask = 0
    for c in cards:
        r = c >> 2
        rank_counts[r] += 1
        suit_masks[c & 3] |= 1 << r
        rank_mask |= 1 << r
    flush_mask = 0
    for s in range(4):
        if bin(suit_masks[s]).count("1") >= 5:
            flush_mask = suit_masks[s]
    if flush_mask:
        if flush_mask & _ROYAL == _ROYAL:
            return "royal-flush"
        if _has_straight(flush_mask):
            return "straight-flush"
    counts = sorted(rank_counts, reverse=True)
    if counts[0] >= 4:
        return "four-of-a-kind"
    if counts[0] == 3 and counts[1] >= 2:
        return "full-house"
    if flush_mask:
        return "flush"
    if _has_straight(rank_mask):
        return "straight"
    if counts[0] == 3:
        return "three-of-a-kind"
    if counts[0] == 2 and counts[1] == 2:
        return "two-pair"
    if counts[0] == 2:
        return "pair"
    return "high-card"
