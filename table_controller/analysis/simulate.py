"""Measure each bet's RTP by playing rounds through the live table's own path.

Every round is a freshly shuffled deck or full shoe, dealt card by card with
``game.deal`` (the dealing plan the table enforces) and settled with
``deal.result()`` (the judgement the table publishes). The measured RTP of a
bet comes with a 99% confidence interval (normal approximation), so an exact
figure outside it points at a disagreement between the analysis and the rules.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from table_controller.analysis.sheet import Progress, no_progress
from table_controller.rules.cards import new_shoe
from table_controller.rules.game import Game

#: Two-sided 99% normal quantile.
Z_99 = 2.5758293035489004


@dataclass(frozen=True)
class MeasuredRtp:
    """A bet's RTP measured over ``rounds`` rounds, with its 99% confidence interval."""

    name: str
    rounds: int
    rtp: float
    low: float
    high: float

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def to_dict(self) -> dict[str, Any]:
        return {"rtp_measured": self.rtp, "ci99": [self.low, self.high]}


def round_cards(game: Game) -> int:
    """An upper bound of the cards one round can use: three per position."""
    return 3 * len(game.positions)


def simulate(
    game: Game, rounds: int, seed: int, progress: Progress = no_progress
) -> dict[str, MeasuredRtp]:
    """Play ``rounds`` rounds from freshly shuffled shoes seeded by ``seed``.

    ``rng.sample(shoe, k)`` is exactly the top ``k`` cards of a uniformly
    shuffled shoe, so drawing only the cards a round can use is a full shuffle.
    Raises ValueError for fewer than 2 rounds (no interval can be formed).
    """
    if rounds < 2:
        raise ValueError(f"--simulate needs at least 2 rounds, not {rounds}")
    rng = random.Random(seed)
    shoe = new_shoe(game.decks)
    take = min(len(shoe), round_cards(game))
    sums = dict.fromkeys(game.bet_names, Decimal(0))
    squares = dict.fromkeys(game.bet_names, Decimal(0))
    step = max(1, rounds // 100)
    for n in range(rounds):
        if n % step == 0:
            progress("simulation", n, rounds)
        deal, _ = game.deal(rng.sample(shoe, take))
        for bet, net in deal.result().payouts.items():
            sums[bet] += net
            squares[bet] += net * net
    progress("simulation", rounds, rounds)
    out: dict[str, MeasuredRtp] = {}
    for bet in game.bet_names:
        mean = sums[bet] / rounds
        variance = max((squares[bet] - rounds * mean * mean) / (rounds - 1), Decimal(0))
        half = Z_99 * math.sqrt(float(variance) / rounds)
        rtp = float(mean) + 1
        out[bet] = MeasuredRtp(bet, rounds, rtp, rtp - half, rtp + half)
    return out
