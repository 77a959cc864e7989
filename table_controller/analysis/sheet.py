"""The PAR sheet: each bet's exact outcome distribution, RTP and house edge.

Analysers produce *weighted representative rounds*: a complete round of real
cards (a ``hands`` mapping the rules core can judge) and the exact number of
deals it stands for. :class:`Tally` judges each one with the game's own
``judge`` and adds the weight to every bet at the net win the rules settled,
so every figure on the sheet comes from the same settlement code the live
table runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from table_controller.rules.cards import Card
from table_controller.rules.game import Game, money_text
from table_controller.rules.variant import BetTerms

#: ``progress(task, done, total)``: called as long enumerations advance.
Progress = Callable[[str, int, int], None]

#: GLI-19 §4.7.1: the minimum RTP of a game.
DEFAULT_MIN_RTP = Fraction(3, 4)


def no_progress(task: str, done: int, total: int) -> None:
    """A :data:`Progress` that reports nothing."""


class AnalysisInconsistent(AssertionError):
    """An enumeration's weights do not add up to the number of possible deals (a bug)."""


@dataclass(frozen=True)
class Outcome:
    """One way a bet can end: the net win per unit staked and its exact probability."""

    net: Decimal
    label: str
    probability: Fraction

    def to_dict(self) -> dict[str, Any]:
        return {
            "net": money_text(self.net),
            "label": self.label,
            "probability": fraction_text(self.probability),
            "probability_float": float(self.probability),
        }


@dataclass(frozen=True)
class BetFigures:
    """A bet's exact figures: outcomes (best first), RTP (stake included) and house edge."""

    name: str
    outcomes: tuple[Outcome, ...]
    rtp: Fraction
    below_floor: bool

    @property
    def house_edge(self) -> Fraction:
        return 1 - self.rtp

    def to_dict(self) -> dict[str, Any]:
        return {
            "rtp": fraction_text(self.rtp),
            "rtp_float": float(self.rtp),
            "house_edge": fraction_text(self.house_edge),
            "house_edge_float": float(self.house_edge),
            "below_floor": self.below_floor,
            "outcomes": [o.to_dict() for o in self.outcomes],
        }


@dataclass(frozen=True)
class Enumerated:
    """What an analyser covered: the number of deals behind each bet, and how, in words."""

    deals: dict[str, int]
    method: str


@dataclass(frozen=True)
class ParSheet:
    """Every bet of one variant, in the order of ``game.bet_names``."""

    variant: str
    title: str
    method: str
    min_rtp: Fraction
    bets: dict[str, BetFigures]
    seconds: float

    def max_rtp_bets(self) -> list[str]:
        """The bet (or bets, when equal) with the highest RTP."""
        best = max(b.rtp for b in self.bets.values())
        return [name for name, b in self.bets.items() if b.rtp == best]

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "title": self.title,
            "method": self.method,
            "min_rtp": fraction_text(self.min_rtp),
            "bets": {name: b.to_dict() for name, b in self.bets.items()},
            "max_rtp_bets": self.max_rtp_bets(),
            "seconds": round(self.seconds, 3),
        }


def fraction_text(value: Fraction) -> str:
    """``"p/q"`` always (``"1/1"``, ``"0/1"``), so a reader never has to guess the form."""
    return f"{value.numerator}/{value.denominator}"


def outcome_label(terms: BetTerms, net: Decimal) -> str:
    """Name the paytable line(s) a net win comes from: ``loss``, ``push``, ``flush``, ..."""
    if net == -1:
        return "loss"
    if terms.pays:
        lines = [name for name, pays in terms.pays.items() if pays == net]
        return " / ".join(lines) if lines else ("push" if net == 0 else "win")
    names = [f"win on {p} points" for p, pays in sorted(terms.win_on_points.items()) if pays == net]
    if terms.win == net:
        names.insert(0, "win")
    if names:
        return " / ".join(names)
    return "push" if net == 0 else "win"


class Tally:
    """Exact weight of every net result of every bet, filled by judging representative rounds.

    An analyser passes each representative round with the bets it stands for:
    a round that represents (box, banker) pairs is read only for that box's
    head-to-head bets, never for the filler cards dealt elsewhere.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self.weights: dict[str, dict[Decimal, int]] = {
            name: defaultdict(int) for name in game.bet_names
        }
        self.totals: dict[str, int] = {name: 0 for name in game.bet_names}

    def add(self, hands: Mapping[str, Sequence[Card]], weight: int, bets: Iterable[str]) -> None:
        """Judge one representative round and credit ``weight`` to the listed bets."""
        payouts = self.game.judge(hands).payouts
        for name in bets:
            self.weights[name][payouts[name]] += weight
            self.totals[name] += weight

    def figures(
        self, min_rtp: Fraction, expected_total: Mapping[str, int]
    ) -> dict[str, BetFigures]:
        """Turn weights into probabilities; every bet must account for all deals exactly."""
        out: dict[str, BetFigures] = {}
        for name in self.game.bet_names:
            total = self.totals[name]
            if total != expected_total[name]:
                raise AnalysisInconsistent(
                    f"{self.game.variant.id}: bet {name} covers {total} deals, "
                    f"expected {expected_total[name]}"
                )
            terms = self.game.terms(name.rsplit(".", 1)[-1])
            outcomes = tuple(
                Outcome(net, outcome_label(terms, net), Fraction(w, total))
                for net, w in sorted(self.weights[name].items(), reverse=True)
                if w
            )
            rtp = sum((o.probability * (1 + Fraction(o.net)) for o in outcomes), Fraction(0))
            out[name] = BetFigures(name, outcomes, rtp, rtp < min_rtp)
        return out
