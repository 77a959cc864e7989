"""Studio statistics from archived rounds: pace, phases, voids, and outcomes against the PAR sheet. Pure.

For a set of rounds (one table's, in a time window), per hour of start (UTC) and
in all: rounds, results and voids, mean seconds of betting (start to betting
closed), of dealing (betting closed to the end) and in all, voids by cause (a
void's reason up to its first colon), pauses by cause with their seconds (a pause
is counted in the hour it began; its cause is the ``table.state`` event's
``cause``, else its reason up to the first colon; it lasts until the next state
that is not a pause, and one still open at the window's end has no duration);
per shoe (numbered by the table's ``shoe`` ``new`` events): rounds, results,
voids, the cards dealt in its rounds and the shoe's own count at its last event;
and for every bet the observed share of
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

from table_controller.event_types import EventError, ShoeChanged, TableStateChanged, decode_event, parse_ts
from table_controller.journal.store import JournalRecord
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
    pauses_by_cause: Counter[str] = field(default_factory=Counter)
    pause_seconds_by_cause: dict[str, float] = field(default_factory=dict)

    def add_pause(self, pause: Pause) -> None:
        self.pauses_by_cause[pause.cause] += 1
        if pause.seconds is not None:
            self.pause_seconds_by_cause[pause.cause] = self.pause_seconds_by_cause.get(pause.cause, 0.0) + pause.seconds

    def to_dict(self) -> dict[str, Any]:
        def mean(xs: list[float]) -> float | None:
            return round(sum(xs) / len(xs), 3) if xs else None

        return {"period": self.period, "rounds": self.rounds, "results": self.results, "voids": self.voids,
                "mean_betting_s": mean(self.betting_seconds), "mean_dealing_s": mean(self.dealing_seconds),
                "mean_round_s": mean(self.round_seconds), "voids_by_cause": dict(self.voids_by_cause),
                "pauses": sum(self.pauses_by_cause.values()),
                "pauses_by_cause": {c: {"count": n, "seconds": round(self.pause_seconds_by_cause.get(c, 0.0), 3)}
                                    for c, n in sorted(self.pauses_by_cause.items())}}


@dataclass(frozen=True)
class Pause:
    """One pause of a table: its cause, when it began, and how long it lasted (None: still open)."""

    cause: str
    started_at: str
    seconds: float | None


def pauses_from(states: Iterable[JournalRecord]) -> list[Pause]:
    """The pauses in a table's ``table.state`` rows (seq order)."""
    out: list[Pause] = []
    open_: tuple[str, str] | None = None  # (cause, started_at)
    for rec in states:
        try:
            event = decode_event(rec.body)
        except EventError:
            continue
        if not isinstance(event, TableStateChanged):
            continue
        if open_ is not None:  # any new state ends the pause (a pause of another cause starts a new one)
            out.append(Pause(open_[0], open_[1], parse_ts(event.ts) - parse_ts(open_[1])))
            open_ = None
        if event.state == "paused":
            cause = event.cause if isinstance(event.cause, str) else void_cause(event.reason)
            open_ = (cause, event.ts)
    if open_ is not None:
        out.append(Pause(open_[0], open_[1], None))
    return out


def shoe_report(rounds: Iterable[RoundRecord], shoe_rows: Iterable[JournalRecord]) -> list[dict[str, Any]]:
    """Per shoe (by :attr:`RoundRecord.shoe`): rounds, results, voids, cards dealt in its rounds
    (burns included), and the shoe's own card count at its last ``shoe`` event."""
    counts: dict[int, int] = {}
    number = 0
    started: dict[int, str] = {}
    for rec in shoe_rows:
        try:
            event = decode_event(rec.body)
        except EventError:
            continue
        if not isinstance(event, ShoeChanged):
            continue
        if event.event == "new":
            number += 1
            started[number] = event.ts
        elif number:
            counts[number] = event.count
    by_shoe: dict[int, PeriodStats] = {}
    cards: Counter[int] = Counter()
    for r in rounds:
        if r.shoe is None:
            continue
        p = by_shoe.setdefault(r.shoe, PeriodStats(str(r.shoe)))
        p.rounds += 1
        p.results += r.status == "resolved"
        p.voids += r.status == "cancelled"
        cards[r.shoe] += len(r.cards) + len(r.burns)
    return [{"shoe": n, "started_at": started.get(n), "rounds": p.rounds, "results": p.results, "voids": p.voids,
             "cards_in_rounds": cards[n], "shoe_count": counts.get(n)} for n, p in sorted(by_shoe.items())]


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
                 par: Mapping[str, Any] | None, pauses: Iterable[Pause] = (),
                 shoe_rows: Iterable[JournalRecord] = ()) -> dict[str, Any]:
    """One table's report as JSON-ready data: in all, per hour, per dealer, per shoe, and the
    outcomes; ``pauses`` are counted in all and in the hour each began."""
    whole, hours = period_stats(rounds)
    by_hour = {h.period: h for h in hours}
    for pause in pauses:
        hour = pause.started_at[:13] + ":00Z"
        for p in (whole, by_hour.setdefault(hour, PeriodStats(hour))):
            p.add_pause(pause)
    hours = [by_hour[h] for h in sorted(by_hour)]
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
            "dealers": dealers, "shoes": shoe_report(rounds, shoe_rows), "outcomes": [c.to_dict() for c in checks],
            "flagged": [c.to_dict() for c in checks if c.flagged]}
