"""Exact first round of a full baccarat shoe (games.md §1).

What is enumerated: every ordered sequence of the up-to-six cards of the
first round, without replacement, from ``decks`` full decks. The first four
cards (player, banker, player, banker) are enumerated by rank (13 ranks, so
the pair bets see rank identity); the third cards by point value (10 classes:
4*decks cards for each of 1..9, 16*decks for the zero-valued T/J/Q/K), since
after the first two cards of a hand only points matter. Whether a third card
is drawn is asked of the game's own dealing plan (``game.next_position``).

Weights are integers: each leaf counts the ordered 6-card sequences that
begin with it, so all leaves share the denominator ``N*(N-1)*...*(N-5)``.
Leaves are grouped by what settlement reads (final totals, pair flags, hand
sizes); one real round per group is judged by ``game.judge``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from math import perm
from typing import Any

from table_controller.analysis.memo import enumeration
from table_controller.analysis.sheet import Enumerated, Progress, Tally, no_progress
from table_controller.rules.cards import POINTS, Card
from table_controller.rules.game import Game

RANKS = 13
ROUND_CARDS = 6  # the most cards a baccarat round can use

#: (player cards, banker cards) as point values, the pair flags, and the ranks seen first.
Key4 = tuple[int, int, int, int, bool, bool]
SettleKey = tuple[int, int, bool, bool, int, int]
Leaf = Callable[[list[int], list[int], bool, bool, int, tuple[int, int, int, int]], None]


def _rank_points(rank: int) -> int:
    return POINTS[rank * 4]


def first_four_classes(decks: int) -> dict[Key4, tuple[int, tuple[int, int, int, int]]]:
    """Ordered first four cards grouped by point values and pair flags.

    Returns key -> (number of ordered 4-card sequences, one rank tuple of the group).
    """
    counts = [4 * decks] * RANKS
    groups: dict[Key4, list[Any]] = {}
    for r1 in range(RANKS):
        w1 = counts[r1]
        counts[r1] -= 1
        for r2 in range(RANKS):
            w2 = w1 * counts[r2]
            counts[r2] -= 1
            for r3 in range(RANKS):
                w3 = w2 * counts[r3]
                counts[r3] -= 1
                for r4 in range(RANKS):
                    w4 = w3 * counts[r4]
                    if not w4:
                        continue
                    key = (
                        _rank_points(r1),
                        _rank_points(r2),
                        _rank_points(r3),
                        _rank_points(r4),
                        r1 == r3,
                        r2 == r4,
                    )
                    entry = groups.get(key)
                    if entry is None:
                        groups[key] = [w4, (r1, r2, r3, r4)]
                    else:
                        entry[0] += w4
                counts[r3] += 1
            counts[r2] += 1
        counts[r1] += 1
    return {k: (v[0], v[1]) for k, v in groups.items()}


class _Cards:
    """Picks real cards for representative rounds, never more copies than the shoe holds."""

    def __init__(self, decks: int) -> None:
        self.decks = decks
        self.used: Counter[Card] = Counter()

    def of_rank(self, rank: int) -> Card:
        for suit in range(4):
            card = rank * 4 + suit
            if self.used[card] < self.decks:
                self.used[card] += 1
                return card
        raise AssertionError(f"no card of rank {rank} left")  # weight 0 branches are skipped

    def of_points(self, points: int) -> Card:
        ranks = [points - 1] if points else [9, 10, 11, 12]
        for rank in ranks:
            for suit in range(4):
                card = rank * 4 + suit
                if self.used[card] < self.decks:
                    self.used[card] += 1
                    return card
        raise AssertionError(f"no card worth {points} left")


@enumeration
def first_round_classes(
    decks: int, *, game: Game, progress: Progress = no_progress
) -> dict[SettleKey, tuple[int, list[Card], list[Card]]]:
    """The first round of a full shoe grouped by what settlement reads.

    Key: (player total, banker total, player pair, banker pair, player cards,
    banker cards). Value: (number of ordered 6-card sequences, a real player
    hand, a real banker hand). ``game`` supplies the dealing plan (the same for
    every baccarat variant); the weights add up to ``N*(N-1)*...*(N-5)``.
    """
    n = 52 * decks
    point_counts = [16 * decks if v == 0 else 4 * decks for v in range(10)]
    groups = first_four_classes(decks)
    leaves: dict[SettleKey, list[Any]] = {}

    def leaf(
        player: list[int],
        banker: list[int],
        pp: bool,
        bp: bool,
        w: int,
        ranks: tuple[int, int, int, int],
    ) -> None:
        dealt = len(player) + len(banker)
        weight = w * perm(n - dealt, ROUND_CARDS - dealt)
        key = (sum(player) % 10, sum(banker) % 10, pp, bp, len(player), len(banker))
        entry = leaves.get(key)
        if entry is None:
            leaves[key] = [weight, (ranks, tuple(player), tuple(banker))]
        else:
            entry[0] += weight

    for done, ((p1, b1, p2, b2, pp, bp), (w4, ranks)) in enumerate(groups.items()):
        if done % 500 == 0:
            progress("baccarat first round", done, len(groups))
        remaining = point_counts.copy()
        for v in (p1, b1, p2, b2):
            remaining[v] -= 1
        first = [r * 4 for r in ranks]  # the plan reads points only
        hands = {"player": [first[0], first[2]], "banker": [first[1], first[3]]}
        _grow(game, hands, [p1, p2], [b1, b2], remaining, w4, 4, pp, bp, ranks, leaf)
    progress("baccarat first round", len(groups), len(groups))

    out: dict[SettleKey, tuple[int, list[Card], list[Card]]] = {}
    for key, (weight, (ranks, player, banker)) in leaves.items():
        picker = _Cards(decks)
        cards = [picker.of_rank(r) for r in ranks]
        p_cards = [cards[0], cards[2]] + [picker.of_points(v) for v in player[2:]]
        b_cards = [cards[1], cards[3]] + [picker.of_points(v) for v in banker[2:]]
        out[key] = (weight, p_cards, b_cards)
    return out


def analyse_baccarat(game: Game, tally: Tally, progress: Progress = no_progress) -> Enumerated:
    """Fill ``tally`` with the exact first round of a full shoe; returns the deal count per bet."""
    classes = first_round_classes(game.decks, game=game, progress=progress)
    for weight, player, banker in classes.values():
        tally.add({"player": player, "banker": banker}, weight, game.bet_names)
    n = 52 * game.decks
    return Enumerated(
        dict.fromkeys(game.bet_names, perm(n, ROUND_CARDS)),
        f"first round of a full {game.decks}-deck shoe: every ordered sequence of its up to "
        f"6 cards without replacement ({n}*{n - 1}*...*{n - 5} = {perm(n, ROUND_CARDS):,})",
    )


def _grow(
    game: Game,
    hands: dict[str, list[Card]],
    player: list[int],
    banker: list[int],
    remaining: list[int],
    weight: int,
    dealt: int,
    pp: bool,
    bp: bool,
    ranks: tuple[int, int, int, int],
    leaf: Leaf,
) -> None:
    """Deal the third cards the game's plan calls for, branching on point value."""
    position = game.next_position(hands, dealt)
    if position is None:
        leaf(player, banker, pp, bp, weight, ranks)
        return
    points = player if position == "player" else banker
    hand = hands[position]
    for v in range(10):
        count = remaining[v]
        if not count:
            continue
        remaining[v] -= 1
        points.append(v)
        hand.append(_POINT_CARD[v])
        _grow(
            game, hands, player, banker, remaining, weight * count, dealt + 1, pp, bp, ranks, leaf
        )
        hand.pop()
        points.pop()
        remaining[v] += 1


#: A card worth each point value, for asking the dealing plan (it reads only points).
_POINT_CARD: tuple[Card, ...] = tuple((9 if v == 0 else v - 1) * 4 for v in range(10))
