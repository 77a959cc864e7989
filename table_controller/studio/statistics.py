"""Studio statistics from archived rounds: pace, phases, voids, and outcomes against the PAR sheet. Pure.

For a set of rounds (one table's, in a time window), per hour of start (UTC) and
in all: rounds, results and voids, mean seconds of betting (start to betting
closed), of dealing (betting closed to the end) and in all, voids by cause (a
void's reason up to its first colon), and for every bet the observed share of
each outcome (by its net win per unit) beside its exact probability from the
variant's PAR sheet (:func:`table_controller.analysis.exact.par_sheet`), with a
99 % interval around the exact figure for that many rounds: an observed share
outside it is **flagged** (a rules or dealing fault, or a 1-in-100 chance; one
flag in many bets is expected now and then).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from table_controller.event_types import parse_ts
from table_controller.studio.rounds import RoundRecord

#: Two-sided 99 % normal quantile.
Z_99 = 2.5758293035489004


@dataclass(frozen=True)
class OutcomeCheck:
    """One outcome of one bet: how often it came, against how often it should."""

    bet: str
    net: str
    label: str
    observed: int
    rounds: int
    expected: float  # exact probability
    low: float  # 99 % interval of the observed share, for this many rounds
    high: float

    @property
    def share(self) -> float:
        return self.observed / self.rounds if self.rounds else 0.0

    @property
    def flagged(self) -> bool:
        return self.rounds > 0 and not self.low <= self.share <= self.high

    def to_dict(self) -> dict[str, Any]:
        return {"bet": self.bet, "net": self.net, "label": self.label, "observed": self.observed,
                "rounds": self.rounds, "share": round(self.share, 6), "expected": round(self.expected, 6),
                "ci99": [round(self.low, 6), round(self.high, 6)], "flagged": self.flagged}


@dataclass
class PeriodStats:
    """What happened in one period (an hour, or the whole window)."""

    period: str
    rounds: int = 0
    results: int = 0
    voids: int = 0
    betting_seconds: list[float] = field(default_factory=list)
    dealing_seconds: list[float] = field(default_factory=list)
    round_seconds: list[float] = field(default_factory=list)
    voids_by_cause: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        def mean(xs: list[float]) -> float | None:
            return round(sum(xs) / len(xs), 3) if xs else None

        return {"period": self.period, "rounds": self.rounds, "results": self.results, "voids": self.voids,
                "mean_betting_s": mean(self.betting_seconds), "mean_dealing_s": mean(self.dealing_seconds),
                "mean_round_s": mean(self.round_seconds), "voids_by_cause": dict(self.voids_by_cause)}


def _seconds(a: str | None, b: str | None) -> float | None:
    if a is None or b is None:
        return None
    return parse_ts(b) - parse_ts(a)


def void_cause(reason: str | None) -> str:
    """A void's cause: its reason up to the first colon (``misdeal: card dropped`` -> ``misdeal``)."""
    return (reason or "unknown").split(":", 1)[0].strip() or "unknown"


def period_stats(rounds: Iterable[RoundRecord]) -> tuple[PeriodStats, list[PeriodStats]]:
    """(the whole set, each hour of start in order)."""
    whole = PeriodStats("all")
    hours: dict[str, PeriodStats] = {}
    for r in rounds:
        hour = (r.started_at or "")[:13] + ":00Z" if r.started_at else "unknown"
        for p in (whole, hours.setdefault(hour, PeriodStats(hour))):
            p.rounds += 1
            if r.status == "resolved":
                p.results += 1
            elif r.status == "cancelled":
                p.voids += 1
                p.voids_by_cause[void_cause(r.void_reason)] += 1
            for target, span in ((p.betting_seconds, _seconds(r.started_at, r.betting_closed_at)),
                                 (p.dealing_seconds, _seconds(r.betting_closed_at, r.ended_at)),
                                 (p.round_seconds, _seconds(r.started_at, r.ended_at))):
                if span is not None and r.status != "open":
                    target.append(span)
    return whole, [hours[h] for h in sorted(hours)]


def outcome_checks(rounds: Iterable[RoundRecord], par: Mapping[str, Any]) -> list[OutcomeCheck]:
    """Every bet's outcomes observed in the resolved rounds against ``par`` (a PAR sheet's
    ``to_dict()["bets"]``: bet -> {"outcomes": [{"net", "label", "probability_float"}]})."""
    counts: dict[str, Counter[Decimal]] = defaultdict(Counter)
    n: Counter[str] = Counter()
    for r in rounds:
        if r.status != "resolved" or not r.payouts:
            continue
        for bet, net in r.payouts.items():
            counts[bet][Decimal(net)] += 1
            n[bet] += 1
    out = []
    for bet, figures in par.items():
        total = n[bet]
        for o in figures["outcomes"]:
            p = float(o["probability_float"])
            half = Z_99 * math.sqrt(p * (1 - p) / total) if total else 0.0
            out.append(OutcomeCheck(bet, str(o["net"]), str(o["label"]), counts[bet][Decimal(str(o["net"]))], total,
                                    p, max(0.0, p - half), min(1.0, p + half)))
    return out


def table_report(table: str, variant: str | None, rounds: list[RoundRecord],
                 par: Mapping[str, Any] | None) -> dict[str, Any]:
    """One table's report as JSON-ready data: in all, per hour, per dealer, and the outcomes."""
    whole, hours = period_stats(rounds)
    by_dealer: dict[str, list[RoundRecord]] = defaultdict(list)
    for r in rounds:
        by_dealer[r.dealer or "unknown"].append(r)
    dealers = []
    for dealer in sorted(by_dealer):
        stats, _ = period_stats(by_dealer[dealer])
        stats.period = dealer
        dealers.append(stats.to_dict())
    checks = outcome_checks(rounds, par) if par is not None else []
    return {"table": table, "variant": variant, "all": whole.to_dict(), "hours": [h.to_dict() for h in hours],
            "dealers": dealers, "outcomes": [c.to_dict() for c in checks],
            "flagged": [c.to_dict() for c in checks if c.flagged]}
