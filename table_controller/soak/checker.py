"""The independent check: journals, rules, ground truth and subscriber streams.

Nothing here trusts the controller's bookkeeping. Journals are read read-only
with plain SQLite; the hash chain and the seq are recomputed here (and the
project's own ``verify_journal`` must agree); every round is re-dealt and
re-judged with the rules core from its journaled cards; the cards the shoes
printed are matched one by one with the journaled card events; every void and
pause must have an injected cause; every subscriber's stream must equal the
journal.
"""

from __future__ import annotations

import hashlib
import sqlite3
from bisect import bisect_right
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from table_controller.client import Snapshot
from table_controller.event_types import (
    Alert,
    CardDealt,
    Event,
    EventError,
    RoundResult,
    RoundStarted,
    RoundVoided,
    ShoeChanged,
    TableStateChanged,
    decode_event,
    parse_ts,
)
from table_controller.journal.replay import (
    AfterComplete,
    CardAfterSettlement,
    JournaledRound,
    LooseCard,
    Misplaced,
    RoundReplayer,
    RoundSettled,
    RoundStartedAgain,
    SeqCard,
    SettledAgain,
    rejudge,
)
from table_controller.rules.baccarat import burn_count
from table_controller.rules.cards import parse_card
from table_controller.rules.registry import load_game
from table_controller.soak.records import Draw, Fault, StreamRecord, TableRecord

CHECKS = (
    "journals_verify",  # hash chain recomputed, seq 1..n without gap, verify_journal agrees
    "cards_accounted",  # every card a shoe drew is journaled once, or its round voided for it
    # (line tables: by code and order in its round; or a lost line; never journaled twice)
    "positions_follow_rules",  # every card at the position the rules called for
    "results_rejudged",  # every result equals the rules core's judgement of its cards
    "settled_once",  # every round ends in exactly one result or void
    "subscribers_match_journals",  # every subscriber saw each journal, in order, nothing lost or doubled
    "voids_and_pauses_explained",  # no void or pause without an injected cause
    "dealers_finished",  # every table dealt its rounds; no process or thread failed
)
GENESIS = "0" * 64
LINK_WINDOW = 30.0  # seconds after an unplug or a kill in which a link-down pause is explained
#: Line tables: a card drawn from this long before a kill of its controller until this long
#: after it may be lost with the controller (read but not journaled, or written while it was
#: down: a serial port opened again starts empty). A restart takes a few seconds.
KILL_LOSS_BEFORE = 1.0
KILL_LOSS_AFTER = 20.0
#: Line tables: the line faults the reader's simulator names in its replies, and the key of
#: each in its ``stats`` counters.
LINE_FAULT_COUNTERS = {"lost": "lost", "twice": "twice", "garbage": "garbage"}
MAX_PROBLEMS = 20


@dataclass
class CheckResult:
    """Problems per check (empty: the check passed) and the counts of the run."""

    problems: dict[str, list[str]] = field(default_factory=lambda: {c: [] for c in CHECKS})
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, check: str, text: str) -> None:
        items = self.problems[check]
        if len(items) < MAX_PROBLEMS:
            items.append(text)
        self.counts["problems"] += 1

    @property
    def checks(self) -> dict[str, bool]:
        return {c: not p for c, p in self.problems.items()}

    @property
    def ok(self) -> bool:
        return all(self.checks.values())


@dataclass
class JournalRows:
    """One journal, read read-only: its typed events by seq."""

    events: list[Event]
    by_seq: dict[int, Event]

    @property
    def last_seq(self) -> int:
        return self.events[-1].seq if self.events else 0


def _journal_files(path: Path) -> list[Path]:
    """The journal's files in order: the one file, or every segment up to the one the
    journal's link names (docs/journal.md: ``<journal>.segments/NNNNNN-FIRST.sqlite``)."""
    if not path.is_symlink():
        return [path]
    live = path.resolve()
    return sorted(p for p in path.with_name(path.name + ".segments").glob("*.sqlite") if p.name <= live.name)


def read_journal(path: Path, table: str, result: CheckResult) -> JournalRows:
    """Read every row with plain SQLite (read-only; every segment in order), recompute the hash
    chain and the seq, and decode each stored text as a typed event (a row that is not one is a
    problem, and left out)."""
    rows = []
    for part in _journal_files(path):
        conn = sqlite3.connect(f"file:{part}?mode=ro", uri=True)
        try:
            rows += conn.execute("SELECT seq, body, hash FROM events ORDER BY seq").fetchall()
        finally:
            conn.close()
    prev, expected = GENESIS, 1
    events: list[Event] = []
    for seq, body, stored in rows:
        if seq != expected:
            result.add("journals_verify", f"{table}: seq gap: {expected} expected, {seq} found")
        if hashlib.sha256((prev + body).encode("utf-8")).hexdigest() != stored:
            result.add("journals_verify", f"{table}: seq {seq}: hash chain broken")
        prev, expected = stored, seq + 1
        try:
            event = decode_event(body)
        except EventError as e:
            result.add("journals_verify", f"{table}: seq {seq}: the stored text is not a valid event: {e}")
            continue
        if event.seq != seq or event.table != table:
            result.add(
                "journals_verify",
                f"{table}: seq {seq}: the stored event says seq {event.seq} table {event.table}",
            )
        events.append(event)
    from table_controller.journal import verify_journal

    report = verify_journal(path)
    if not report.ok:
        for problem in report.problems[:5]:
            result.add("journals_verify", f"{table}: verify_journal: {problem}")
    return JournalRows(events, {e.seq: e for e in events})


def _ts(event: Event) -> float:
    return parse_ts(event.ts)


def check_rules(record: TableRecord, journal: JournalRows, result: CheckResult) -> None:
    """Re-deal every round from its journaled cards; re-judge it; each settled once.

    The rounds are gathered and re-judged by the journal's one replayer
    (:mod:`table_controller.journal.replay`) with the soak's own variant: the
    rules core, never the controller's bookkeeping.
    """
    game = load_game(record.variant)
    table = record.table
    replayer = RoundReplayer()
    burn_left: int | None = None
    burn_index = 0

    def outside(entry: SeqCard) -> None:
        result.add(
            "positions_follow_rules",
            f"{table}: seq {entry.seq}: card {entry.card.code} outside a round in play ({entry.card.round})",
        )

    def check_deal(rnd: JournaledRound, outcome: RoundResult | None) -> None:
        if rnd.start is None:
            for entry in rnd.cards:
                outside(entry)
            found = None
        else:
            found = rejudge(game, rnd.cards, outcome)
            for problem in found.plan:
                card = problem.card
                match problem:
                    case AfterComplete():
                        result.add(
                            "positions_follow_rules",
                            f"{table}: seq {card.seq}: card {card.card.code} after round {rnd.round_id} was complete",
                        )
                    case Misplaced(planned=(position, index)):
                        result.add(
                            "positions_follow_rules",
                            f"{table}: seq {card.seq}: card {card.card.code} at "
                            f"{card.card.position}[{card.card.index}], rules say {position}[{index}]",
                        )
        if outcome is None:
            return
        if found is None or not found.is_complete:
            result.add("results_rejudged", f"{table}: round {rnd.round_id}: result before its cards were complete")
        elif found.computed is None:
            why = found.refused or "; ".join(found.hand_problems)
            result.add("results_rejudged", f"{table}: round {rnd.round_id}: the rules core cannot judge it: {why}")
        elif found.differences:
            result.add(
                "results_rejudged",
                f"{table}: round {rnd.round_id}: journal says {found.journaled}, rules say {found.computed}",
            )

    for e in journal.events:
        match e:
            case RoundStarted():
                result.counts["rounds"] += 1
            case CardDealt(position="burn"):
                result.counts["cards"] += 1
                result.counts["burn_cards"] += 1
                if e.index == 0:
                    burn_left, burn_index = burn_count(parse_card(e.code)), 0
                elif burn_left is None or burn_left <= 0 or e.index != burn_index + 1:
                    result.add(
                        "positions_follow_rules",
                        f"{table}: seq {e.seq}: burn card {e.code} index {e.index} not called for",
                    )
                else:
                    burn_left -= 1
                    burn_index = e.index
            case CardDealt():
                result.counts["cards"] += 1
            case TableStateChanged(state="paused"):
                result.counts["pauses"] += 1
        for found in replayer.add(e.seq, e):
            match found:
                case RoundStartedAgain(round_id=round_id):
                    result.add("settled_once", f"{table}: round {round_id} started twice")
                case SettledAgain(round_id=round_id, first=first, settlement=again):
                    result.add(
                        "settled_once", f"{table}: round {round_id} settled twice ({first.type}, {again.type})"
                    )
                case CardAfterSettlement(card=entry) | LooseCard(card=entry):
                    outside(entry)
                case RoundSettled(round=rnd, settlement=RoundVoided()):
                    result.counts["voided"] += 1
                    check_deal(rnd, None)
                case RoundSettled(round=rnd, settlement=RoundResult() as outcome):
                    result.counts["results"] += 1
                    check_deal(rnd, outcome)
    for rnd in replayer.unsettled():
        if rnd.start is not None:
            result.add("settled_once", f"{table}: round {rnd.round_id} was never settled")
        check_deal(rnd, None)


class RoundClock:
    """Which round was in play at a wall-clock time, and which shoe, from the journal's times.

    A card can only leave a gated shoe after the controller journaled the
    round's start (and a new shoe's ``shoe new``) and unlocked the gate, so the
    round a draw belongs to is the last one started before it. The soak's own
    labels are not used: the dealer learns the round from the table and can be
    a step behind.
    """

    def __init__(self, journal: JournalRows) -> None:
        self.starts = [(_ts(e), e.round) for e in journal.events if isinstance(e, RoundStarted)]
        self.new_shoes = [_ts(e) for e in journal.events if _is_new_shoe(e)]

    def round_at(self, at: float) -> str | None:
        k = bisect_right([t for t, _ in self.starts], at)
        return self.starts[k - 1][1] if k else None

    def shoe_at(self, at: float) -> int:
        """How many shoes had been loaded (and journaled) by ``at``."""
        return bisect_right(self.new_shoes, at)


def check_cards(record: TableRecord, journal: JournalRows, result: CheckResult) -> None:
    """Match every card the shoe printed with one journaled card event.

    A read card is found by its shoe and its count (the shoe's number for it,
    journaled as ``shoe_count``); a card the supervisor entered by hand (a
    no-read, a shoe/camera disagreement) by its code within the round it was
    drawn in. A dealt card must be journaled in that round; a card not
    journaled at all is accounted for only if that round was voided.
    """
    table = record.table
    clock = RoundClock(journal)
    voided = {e.round for e in journal.events if isinstance(e, RoundVoided)}
    by_count: dict[tuple[int, int], list[CardDealt]] = defaultdict(list)
    by_hand: list[CardDealt] = []
    shoe = 0
    for e in journal.events:
        if _is_new_shoe(e):
            shoe += 1
        elif isinstance(e, CardDealt):
            if isinstance(e.shoe_count, int):
                by_count[(shoe, e.shoe_count)].append(e)
            else:
                by_hand.append(e)
    for (n, count), cards in by_count.items():
        if len(cards) > 1:
            seqs = ", ".join(str(c.seq) for c in cards)
            result.add(
                "cards_accounted", f"{table}: shoe {n} card {count} journaled {len(cards)} times (seq {seqs})"
            )
    used: set[int] = set()
    for draw in record.draws:
        drawn_in = clock.round_at(draw.at)
        card = _journaled(draw, by_count.get((clock.shoe_at(draw.at), draw.count or -1), []), used)
        if card is None:
            card = _entered_by_hand(draw, drawn_in, by_hand, used)
        if card is not None:
            used.add(card.seq)
            if card.position != "burn" and card.round != drawn_in:
                result.add(
                    "cards_accounted",
                    f"{table}: card {draw.code} drawn in round {drawn_in} "
                    f"is journaled in round {card.round} (seq {card.seq})",
                )
            continue
        if drawn_in in voided:  # the void itself must be explained (check_causes)
            result.counts["cards_in_voided_rounds"] += 1
            continue
        result.add(
            "cards_accounted",
            f"{table}: card {draw.code} ({'unread' if draw.unread else 'read'}, "
            f"count {draw.count}, round {drawn_in}) is not in the journal "
            "and its round was not voided",
        )
    for e in journal.events:
        if isinstance(e, CardDealt) and e.seq not in used:
            result.add(
                "cards_accounted",
                f"{table}: journal card {e.code} (seq {e.seq}) was not drawn by the shoe",
            )


def _is_new_shoe(event: Event) -> bool:
    return isinstance(event, ShoeChanged) and event.event == "new"


def _journaled(draw: Draw, candidates: list[CardDealt], used: set[int]) -> CardDealt | None:
    """The card event the shoe's own count names for this draw (read cards only)."""
    if draw.unread:
        return None
    for card in candidates:
        if card.seq not in used and card.code == draw.code:
            return card
    return None


def _entered_by_hand(
    draw: Draw, drawn_in: str | None, cards: list[CardDealt], used: set[int]
) -> CardDealt | None:
    """A card entered by hand (or journaled without a count) with this code in the draw's round.

    Burn cards carry no round: a hand-entered burn card matches by code alone.
    """
    for card in cards:
        if card.seq in used or card.code != draw.code:
            continue
        if card.position == "burn" or card.round == drawn_in:
            return card
    return None


class LineSegments:
    """Line tables: which stretch of the journal a draw belongs to, by the journal's times.

    A line reader gives no count, so cards are matched by code and order within a
    stretch: a round (from its ``round.start``) or a shoe's burn (from its ``shoe
    new`` until the next round starts). The dealer pulls a card only while the
    table says it deals, after it journaled the round's start or the new shoe,
    so a draw belongs to the last stretch begun before it.
    """

    def __init__(self, journal: JournalRows) -> None:
        self.starts: list[float] = []
        self.keys: list[tuple[str, Any]] = []
        #: The journaled cards of each stretch, in seq order.
        self.cards: dict[tuple[str, Any], list[CardDealt]] = defaultdict(list)
        shoe: tuple[str, Any] = ("shoe", 0)
        for e in journal.events:
            match e:
                case ShoeChanged(event="new"):
                    shoe = ("shoe", len([k for k in self.keys if k[0] == "shoe"]) + 1)
                    self._mark(_ts(e), shoe)
                case RoundStarted():
                    self._mark(_ts(e), ("round", e.round))
                case CardDealt():
                    key = ("round", e.round) if e.round and e.position != "burn" else shoe
                    self.cards[key].append(e)

    def _mark(self, at: float, key: tuple[str, Any]) -> None:
        self.starts.append(at)
        self.keys.append(key)

    def at(self, when: float) -> tuple[str, Any]:
        k = bisect_right(self.starts, when)
        return self.keys[k - 1] if k else ("shoe", 0)


def _in_order(draws: list[Draw], cards: list[CardDealt]) -> list[tuple[int, int]]:
    """The most (draw, card) pairs with equal codes, both in their order (a longest common
    subsequence): a card journaled in the order the reader drew it."""
    n, m = len(draws), len(cards)
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for a in range(n - 1, -1, -1):
        for b in range(m - 1, -1, -1):
            if draws[a].code == cards[b].code:
                best[a][b] = best[a + 1][b + 1] + 1
            else:
                best[a][b] = max(best[a + 1][b], best[a][b + 1])
    pairs: list[tuple[int, int]] = []
    a = b = 0
    while a < n and b < m:
        if draws[a].code == cards[b].code and best[a][b] == best[a + 1][b + 1] + 1:
            pairs.append((a, b))
            a, b = a + 1, b + 1
        elif best[a + 1][b] >= best[a][b + 1]:
            a += 1
        else:
            b += 1
    return pairs


def check_line_cards(
    record: TableRecord, journal: JournalRows, kills: list[float], result: CheckResult
) -> None:
    """A line table's cards, by what can be checked without a count or retransmission.

    Every card the reader's simulator drew (``card TS count N``, with the faults
    that hit its line) is journaled exactly once in the stretch it was drawn in
    (its round, or its shoe's burn), matched by code and order; or its line was
    lost (``lost``: never sent; the round need not be voided, the table cannot
    know); or it was lost with a killed controller and its round was voided; or
    its round was voided and the journal names it as a card the table saw but did
    not deal (drawn while paused, outside a round). A line read twice must be
    journaled once; no card is journaled that the reader did not draw, except one
    read from line noise the reader sent just before a card's line (counted as
    ``cards_from_line_noise``: a line reader cannot tell). The reader's own fault
    counters must equal the faults its replies named. Journaled cards carry no
    ``shoe_count`` (the driver's own count is not the device's).
    """
    table = record.table
    segments = LineSegments(journal)
    voided = {e.round: e for e in journal.events if isinstance(e, RoundVoided)}
    late_alerts = [
        e for e in journal.events
        if isinstance(e, Alert) and any(
            words in e.detail
            for words in ("drawn while the table was paused", "drawn outside a round", "was not called for")
        )
    ]
    draws_in: dict[tuple[str, Any], list[Draw]] = defaultdict(list)
    named = {kind: 0 for kind in LINE_FAULT_COUNTERS}
    for draw in record.draws:
        for kind in draw.line_faults:
            if kind in named:
                named[kind] += 1
        if draw.line_lost:
            result.counts["lost_lines"] += 1
            continue  # never sent: it cannot be journaled (if it is, that card is unmatched)
        if "twice" in draw.line_faults:
            result.counts["lines_read_twice"] += 1
        draws_in[segments.at(draw.at)].append(draw)
    result.counts["misdeals_called_for_missing_cards"] += len(record.misdeal_calls)
    if record.device_stats is not None:
        counted = {k: int(record.device_stats.get(key, 0)) for k, key in LINE_FAULT_COUNTERS.items()}
        if counted != named:
            result.add(
                "cards_accounted",
                f"{table}: the reader counted line faults {counted}, its card replies named {named}",
            )
    for e in journal.events:
        if isinstance(e, CardDealt) and isinstance(e.shoe_count, int):
            result.add(
                "cards_accounted",
                f"{table}: seq {e.seq}: card {e.code} journaled with shoe_count "
                f"{e.shoe_count}, but a line reader counts nothing",
            )

    def killed_near(at: float) -> bool:
        return any(t - KILL_LOSS_BEFORE <= at <= t + KILL_LOSS_AFTER for t in kills)

    def seen_late(draw: Draw) -> bool:
        return any(
            _ts(a) >= draw.at and f"card {draw.code} " in f"{a.detail} " for a in late_alerts
        )

    for key in sorted(set(draws_in) | set(segments.cards), key=str):
        draws, cards = draws_in.get(key, []), segments.cards.get(key, [])
        pairs = _in_order(draws, cards)
        matched_draws = {a for a, _ in pairs}
        card_of = {b: a for a, b in pairs}
        noise_cards = 0
        for b, card in enumerate(cards):
            if b in card_of:
                continue
            previous, following = card_of.get(b - 1), card_of.get(b + 1)
            if (
                previous is not None
                and cards[b - 1].code == card.code
                and "twice" in draws[previous].line_faults
            ):
                result.add(
                    "cards_accounted",
                    f"{table}: card {card.code} read twice by the reader (one draw) is journaled "
                    f"twice (seq {cards[b - 1].seq}, {card.seq})",
                )
            elif following is not None and "garbage" in draws[following].line_faults:
                noise_cards += 1  # the noise before the next card's line read as a card
                result.counts["cards_from_line_noise"] += 1
            else:
                result.add(
                    "cards_accounted",
                    f"{table}: journal card {card.code} (seq {card.seq}) was not drawn by the "
                    f"reader in {key[0]} {key[1]}",
                )
        round_id = key[1] if key[0] == "round" else None
        for a, draw in enumerate(draws):
            if a in matched_draws:
                continue
            if round_id in voided and (killed_near(draw.at) or seen_late(draw)):
                result.counts["cards_in_voided_rounds"] += 1
                continue
            if round_id is None and killed_near(draw.at):
                continue  # a burn card lost with the controller: the table burns the next one
            if noise_cards and round_id is not None:
                noise_cards -= 1  # the round was complete before it: a noise card took its place
                continue
            why = (
                "its round was voided, but no kill or journaled sighting explains the loss"
                if round_id in voided
                else "its round was not voided" if round_id is not None else "no kill explains it"
            )
            result.add(
                "cards_accounted",
                f"{table}: card {draw.code} (count {draw.count}, {key[0]} {key[1]}) left the reader "
                f"(line {'fault ' + ','.join(draw.line_faults) if draw.line_faults else 'sent'}) "
                f"and is not in the journal; {why}",
            )


CAMERA_WINDOW = 15.0  # seconds a camera fault explains camera pauses on its table


def check_causes(
    record: TableRecord, journal: JournalRows, kills: list[float], result: CheckResult
) -> None:
    """Every void and every pause must follow from a fault the soak injected."""
    table = record.table
    clock = RoundClock(journal)
    by_round: dict[str | None, set[str]] = defaultdict(set)
    for fault in record.faults:  # the round in play when it was injected, by the journal's times
        by_round[clock.round_at(fault.at)].add(fault.kind)
    line = record.line_reader
    if line:
        # The dealer's misdeal calls for cards that did not show, and the line faults the
        # reader's simulator named (noise before a line can read as an unreadable line).
        for call in record.misdeal_calls:
            by_round[clock.round_at(call.at)].add(call.kind)
        for draw in record.draws:
            for kind in draw.line_faults:
                by_round[clock.round_at(draw.at)].add(f"line-{kind}")
    link_times = sorted([f.at for f in record.faults if f.kind == "unplug"] + kills)
    camera_times = sorted(f.at for f in record.faults if f.kind in ("blackout", "mismatch"))

    def camera_fault_near(at: float) -> bool:
        return any(at - CAMERA_WINDOW <= t <= at + 1.0 for t in camera_times)

    last_alert: dict[str | None, str] = {}

    def link_fault_near(at: float) -> bool:
        return any(at - LINK_WINDOW <= t <= at + 1.0 for t in link_times)

    for e in journal.events:
        round_id = e.round
        if isinstance(e, Alert):
            last_alert[round_id] = e.kind
        elif isinstance(e, TableStateChanged) and e.state == "paused":
            cause = e.cause if isinstance(e.cause, str) else "None"
            injected = by_round.get(round_id, set())
            explained = {
                "no-read": "noread" in injected or (line and "line-garbage" in injected),
                "lid-open": bool({"lid", "misdeal"} & injected),
                "void-request": "void" in injected,
                "shoe-link-down": link_fault_near(_ts(e)),
                # a restarted controller's camera has lost what was laid before the kill
                "camera-down": camera_fault_near(_ts(e)) or link_fault_near(_ts(e)),
                "source-mismatch": camera_fault_near(_ts(e)) or link_fault_near(_ts(e)),
                # a line reader does not re-send: a restart while dealing pauses for a supervisor
                "device-fault": bool(line) and link_fault_near(_ts(e))
                and (e.reason or "").startswith("the controller restarted while dealing"),
            }.get(cause, False)
            if not explained:
                result.add(
                    "voids_and_pauses_explained",
                    f"{table}: seq {e.seq}: round {round_id} paused "
                    f"({cause}: {e.reason}) without an injected cause",
                )
        elif isinstance(e, RoundVoided):
            reason = e.reason
            injected = by_round.get(round_id, set())
            alert = last_alert.get(round_id)
            if reason.startswith("misdeal:") and "left the shoe after the round's last card" in reason:
                # a card drawn while the last one waited for the camera (after a restart or a camera fault)
                explained = camera_fault_near(_ts(e)) or link_fault_near(_ts(e))
            elif reason.startswith("misdeal:"):
                explained = (alert == "dropped-card" and "dropped" in injected) or (
                    alert == "wrong-order" and "misdeal" in injected
                ) or (
                    # a killed controller's simulated camera lost its layout; the rig lays it out
                    # again from its own record, which a blackout or a no-read during the kill
                    # can leave a card behind (a real table's cards stay where they lie)
                    alert == "wrong-position" and any(_ts(e) - LINK_WINDOW <= t <= _ts(e) for t in kills)
                )
                if line and not explained:
                    # the dealer called it for a card that did not show; a card that came
                    # while a line of noise paused the round is a card drawn while paused
                    explained = (alert == "dropped-card" and "missing-card" in injected) or (
                        alert == "wrong-order" and "line-garbage" in injected
                    )
            elif reason == "supervisor voided after void-request":
                explained = "void" in injected
            elif line and reason == "supervisor voided after no-read":
                explained = "line-garbage" in injected  # an unreadable line: no card to enter
            elif reason.startswith("supervisor voided after"):
                explained = (camera_fault_near(_ts(e)) or link_fault_near(_ts(e))) and reason.endswith(
                    ("source-mismatch", "camera-down")
                )
            else:
                explained = False
            if not explained:
                result.add(
                    "voids_and_pauses_explained",
                    f"{table}: seq {e.seq}: round {round_id} voided "
                    f"({reason!r}, alert {alert}) without an injected cause",
                )


def check_stream(
    name: str,
    table: str,
    stream: StreamRecord,
    journal: JournalRows,
    restarts: int,
    result: CheckResult,
) -> None:
    """A subscriber's items for one table: snapshots, then every journaled event once, in order."""
    last: int | None = None
    snapshots = 0
    where = f"{name}/{table}"
    for item in stream.items:
        seq = item.seq
        if isinstance(item, Snapshot):
            snapshots += 1
            if last is not None:
                if seq < last:
                    result.add(
                        "subscribers_match_journals",
                        f"{where}: snapshot at seq {seq} went back from {last}",
                    )
                result.counts["events_bridged_by_snapshot"] += max(0, seq - last)
            for carried in [*item.round, *item.history]:
                if journal.by_seq.get(carried.seq) != carried:
                    result.add(
                        "subscribers_match_journals",
                        f"{where}: snapshot at seq {seq} carries event {carried.seq} unlike the journal",
                    )
            last = seq
            continue
        if last is None:
            result.add(
                "subscribers_match_journals", f"{where}: event {seq} before the first snapshot"
            )
        elif seq != last + 1:
            what = "lost" if seq > last + 1 else "duplicated or reordered"
            result.add(
                "subscribers_match_journals", f"{where}: after seq {last} came {seq} ({what})"
            )
        if journal.by_seq.get(seq) != item:
            result.add(
                "subscribers_match_journals", f"{where}: event {seq} differs from the journal"
            )
        result.counts["events_seen"] += 1
        last = seq
    if (last or 0) != journal.last_seq:
        result.add(
            "subscribers_match_journals",
            f"{where}: stream ended at seq {last}, the journal at {journal.last_seq}",
        )
    # The first snapshot, plus one after each restart (events published before the proxy's
    # subscription reached the new connection); any other re-snapshot means lost messages.
    if snapshots > 1 + restarts:
        result.add(
            "subscribers_match_journals",
            f"{where}: {snapshots} snapshots for {restarts} restarts: messages were lost",
        )
    result.counts["resnapshots"] += max(0, snapshots - 1)


def check_run(
    records: list[TableRecord],
    streams: dict[str, dict[str, StreamRecord]],
    kills: dict[str, list[float]],
    errors: list[str],
) -> CheckResult:
    """Run every check over every table; ``errors`` are failures the run itself met."""
    result = CheckResult()
    for error in errors:
        result.add("dealers_finished", error)
    for record in records:
        journal = read_journal(Path(record.journal), record.table, result)
        result.counts["events"] += len(journal.events)
        check_rules(record, journal, result)
        if record.line_reader:
            check_line_cards(record, journal, kills.get(record.table, []), result)
        else:
            check_cards(record, journal, result)
        check_causes(record, journal, kills.get(record.table, []), result)
        for name, per_table in streams.items():
            check_stream(
                name,
                record.table,
                per_table.get(record.table, StreamRecord()),
                journal,
                len(kills.get(record.table, [])),
                result,
            )
        if record.dealer_error:
            result.add("dealers_finished", f"{record.table}: dealer: {record.dealer_error}")
        result.counts["drawn_by_shoes"] += sum(1 for d in record.draws)
    return result


def faults_by_kind(records: list[TableRecord]) -> Counter[str]:
    """Dealer-side injected faults by kind."""
    counts: Counter[str] = Counter()
    for record in records:
        counts.update(f.kind for f in record.faults)
    return counts


__all__ = [
    "CHECKS", "CheckResult", "Draw", "Fault", "check_line_cards", "check_run", "faults_by_kind",
    "read_journal",
]
