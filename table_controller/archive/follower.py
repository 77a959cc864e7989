"""Keep the archive up with every table by replay, checking each slice against the chain.

For each table the follower asks its replay endpoint
(:mod:`table_controller.publish.replay`) for the events after the archive's last
seq, checks the slice (seqs one by one, every hash chaining from the hash the
archive holds for the seq before), and keeps it; it asks again while the table
has more. Pulling by seq makes every event arrive exactly once and in order
whatever was lost on the way: a gap is simply the next request. Nothing a table
sends ends the follower: a table that cannot be reached, whose chain does not
continue the archive's, or that is far ahead gets one studio alert (kept in the
archive and logged) until it recovers, and the other tables go on.

When the archive's own store cannot be reached (its PostgreSQL server is down) the
turn stops at the first table that finds it so, rather than waiting on it once per
table; the alert (table ``*``, kind ``archive-down``) is logged at once and kept in
memory with any other alert raised meanwhile, and written when the store answers
again. The tables keep their journals, so the next turns catch up whatever was dealt.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from table_controller.archive.base import Archive, ArchiveAlert, ArchiveError, ArchiveUnavailable
from table_controller.event_types import CheckpointSigned, EventError, decode_event
from table_controller.events import format_ts
from table_controller.publish.replay import JournalReplay
from table_controller.publish.security import ClientCurve
from table_controller.replay_client import ReplayError, ReplayRefused, ReplaySlice, decode_reply, fetch_replay

log = logging.getLogger(__name__)

#: Events asked for per request, and requests per table per round of the follower (so one
#: table far behind does not hold the others up).
SLICE = 1000
SLICES_PER_TURN = 20
#: A table this many events ahead of the archive after its turn is "behind".
BEHIND_EVENTS = 5000


@dataclass(frozen=True)
class TableSource:
    """Where one table's events come from: its snapshot endpoint (which answers replay), or
    ``file:PATH``, a journal file read directly (a table that has stopped, a closed journal)."""

    table: str
    endpoint: str
    curve: ClientCurve | None = None

    def fetch(self, after_seq: int, limit: int, timeout: float) -> ReplaySlice:
        if self.endpoint.startswith("file:"):
            replay = JournalReplay(self.endpoint[len("file:"):], self.table)
            try:
                return decode_reply(replay.reply(after_seq, limit), self.endpoint)
            finally:
                replay.close()
        return fetch_replay(self.endpoint, after_seq, limit, timeout=timeout, curve=self.curve)


@dataclass(frozen=True)
class CatchUp:
    """What one turn on one table did."""

    table: str
    added: int
    archived_seq: int  # the archive's last seq of the table after the turn
    table_seq: int | None  # the table's last seq as it last said (None: not reached)
    problem: str | None = None


class ArchiveFollower:
    """Follows ``sources`` into ``archive`` (see module doc)."""

    def __init__(self, archive: Archive, sources: Sequence[TableSource], *, timeout: float = 2.0,
                 behind_events: int = BEHIND_EVENTS, clock: Callable[[], float] = time.time) -> None:
        self.archive = archive
        self.sources = list(sources)
        self.timeout = timeout
        self.behind_events = behind_events
        self.clock = clock
        self._raised: dict[tuple[str, str], str] = {}
        self._unwritten: list[ArchiveAlert] = []  # alerts the store could not take yet, oldest first
        self.checkpoints_checked = 0

    def _alert(self, table: str, kind: str, text: str) -> None:
        if self._raised.get((table, kind)) is not None:
            return  # one alert per outage
        self._raised[(table, kind)] = text
        log.error("archive: table %s: %s", table, text)
        self._unwritten.append(ArchiveAlert(format_ts(self.clock()), table, kind, text))
        self._write_alerts()

    def _write_alerts(self) -> None:
        while self._unwritten:
            try:
                self.archive.alert(self._unwritten[0])
            except ArchiveError as e:
                log.warning("archive: %d alert(s) wait for the store: %s", len(self._unwritten), e)
                return
            self._unwritten.pop(0)

    @property
    def unwritten_alerts(self) -> list[ArchiveAlert]:
        """Alerts raised while the store could not take them (written at the next turn it can)."""
        return list(self._unwritten)

    def _clear(self, table: str, kind: str) -> None:
        if self._raised.pop((table, kind), None) is not None:
            log.warning("archive: table %s: %s is over", table, kind)

    def store_was_down(self, text: str) -> None:
        """Keep the alert of a store outage that is already over (it did not answer when the
        follower started): the same ``archive-down`` alert a turn raises, and its end."""
        self._alert("*", "archive-down", text)
        self._clear("*", "archive-down")

    def catch_up(self, source: TableSource) -> CatchUp:
        """One turn on one table: up to :data:`SLICES_PER_TURN` slices."""
        added, table_seq = 0, None
        seq, _ = self.archive.last(source.table)
        for _ in range(SLICES_PER_TURN):
            try:
                part = source.fetch(seq, SLICE, self.timeout)
            except ReplayRefused as e:
                # a journal that ends before the archive does was replaced or cut: its chain
                # cannot continue the archive's
                kind = "chain-break" if e.code in ("beyond-end", "pruned") else "refused"
                self._alert(source.table, kind, str(e))
                return CatchUp(source.table, added, seq, table_seq, str(e))
            except ReplayError as e:
                self._alert(source.table, "unreachable", f"no replay from {source.endpoint}: {e}")
                return CatchUp(source.table, added, seq, table_seq, str(e))
            self._clear(source.table, "refused")
            self._clear(source.table, "unreachable")
            table_seq = part.last_seq
            try:
                if part.table != source.table:
                    raise ArchiveError(f"{source.endpoint} answers for table {part.table}, not {source.table}")
                part.verify()
                added += self.archive.append(part, format_ts(self.clock()))
                self._check_checkpoints(part)
            except ArchiveUnavailable:
                raise  # the store's trouble, not the table's
            except (ReplayError, ArchiveError) as e:
                self._alert(source.table, "chain-break", str(e))
                return CatchUp(source.table, added, seq, table_seq, str(e))
            self._clear(source.table, "chain-break")
            seq = part.end_seq
            if not part.more:
                break
        if table_seq is not None and table_seq - seq > self.behind_events:
            self._alert(source.table, "behind", f"{table_seq - seq} events behind the table")
        else:
            self._clear(source.table, "behind")
        return CatchUp(source.table, added, seq, table_seq)

    def _check_checkpoints(self, part: ReplaySlice) -> None:
        """Every ``checkpoint`` event of a kept slice must name the hash the archive holds at the
        seq it covers (the table signed that position; a different hash there is a table that
        signed one chain and serves another). Its signature covers fields the event does not
        carry (the journal's link and meta rows): ``journal verify --checkpoints`` checks those."""
        hashes = {e.seq: e.hash for e in part.events}
        for e in part.events:
            if '"type":"checkpoint"' not in e.body:
                continue
            try:
                event = decode_event(e.body)
            except EventError:
                continue
            if not isinstance(event, CheckpointSigned):
                continue
            held = hashes.get(event.covers)
            if held is None:
                rows = list(self.archive.events(part.table, event.covers - 1, 1))
                held = rows[0].record.hash if rows and rows[0].record.seq == event.covers else None
            self.checkpoints_checked += 1
            if held != event.hash:
                self._alert(part.table, "checkpoint-mismatch",
                            f"the checkpoint at seq {e.seq} signs hash {event.hash[:12]} for seq {event.covers}; "
                            f"the archive holds {(held or 'nothing')[:12]} there")

    def catch_up_all(self) -> list[CatchUp]:
        """One turn on every table. A fault on one table (the archive's disk, say) is an alert
        for that table, never the end of the follower."""
        turns: list[CatchUp] = []
        self._write_alerts()
        for k, source in enumerate(self.sources):
            try:
                turns.append(self.catch_up(source))
                self._clear("*", "archive-down")
            except ArchiveUnavailable as e:
                self._alert("*", "archive-down", str(e))
                turns += [CatchUp(s.table, 0, -1, None, f"the archive is down: {e}") for s in self.sources[k:]]
                break
            except Exception as e:  # supervised: one table's fault must not stop the others
                log.exception("archive: table %s: the turn failed", source.table)
                try:
                    self._alert(source.table, "fault", f"{type(e).__name__}: {e}")
                except Exception:
                    log.exception("archive: the alert itself could not be kept")
                turns.append(CatchUp(source.table, 0, -1, None, f"{type(e).__name__}: {e}"))
        if self._unwritten and any(t.problem is None for t in turns):
            self._write_alerts()  # the store answered this turn (it may not have at its start)
        return turns

    def run(self, stop: threading.Event, poll: float = 0.5,
            on_turn: Callable[[CatchUp], None] | None = None) -> None:
        """Turn on every table every ``poll`` seconds until ``stop`` is set; ``on_turn`` is
        given each table's turn that archived something or found a problem."""
        while not stop.is_set():
            turns = self.catch_up_all()
            if on_turn is not None:
                try:
                    for t in turns:
                        if t.added or t.problem is not None:
                            on_turn(t)
                except Exception:  # a report that cannot be given (a closed pipe) is no fault of the archive
                    log.exception("archive: turns can no longer be reported; archiving goes on without")
                    on_turn = None
            if any(t.table_seq is not None and t.table_seq > t.archived_seq for t in turns if t.problem is None):
                continue  # a table still has more: no pause
            stop.wait(poll)
