"""The journal of one table: an append-only, hash-chained SQLite event log.

:class:`Journal` is the controller's writer: it assigns ``seq``, chains hashes
and commits events (and the shoe link's resume point) in one transaction
before anything is published. :class:`JournalReader` is for tools: it opens
the same file read-only beside a live writer and needs no table or game.
"""

from __future__ import annotations

import logging
import lzma
import os
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from itertools import chain
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple, Self

from table_controller.event_types import Event, EventBase, decode_event, encode_event, numbered
from table_controller.journal.errors import (
    JournalBroken,
    JournalEmpty,
    JournalError,
    JournalMismatch,
    RoundAlreadySettled,
    RoundAlreadyStarted,
)
from table_controller.journal.lock import WriterLock
from table_controller.journal.schema import (
    GENESIS,
    chain_hash,
    configure_writer,
    connect_reader,
    connect_writer,
    create_journal_file,
    create_schema,
    discard_unfinished_creation,
    is_empty_database,
    read_meta,
    unguarded_changes,
)
from table_controller.journal.segments import (
    SEGMENT_NAME,
    RotationPolicy,
    Segment,
    carried_records,
    decompress_file,
    list_segments,
    live_segment,
    segment_file_name,
    segments_dir,
)

SETTLEMENT_TYPES = ("round.result", "round.void")
log = logging.getLogger(__name__)
_BATCH = 512


class JournalRecord(NamedTuple):
    """One stored row: the event's text exactly as journaled, and its chain hash."""

    seq: int
    ts: str
    type: str
    round: str | None
    body: str
    hash: str

    def event(self) -> Event:
        """The typed event of the stored text (raises EventError for a row that is not one)."""
        return decode_event(self.body)


class _Reader:
    """What every journal reader gives from its rows alone: typed events, and ``with``."""

    def records(
        self,
        since_seq: int = 0,
        *,
        until_seq: int | None = None,
        round_id: str | None = None,
        types: Collection[str] | None = None,
        since_ts: str | None = None,
        until_ts: str | None = None,
    ) -> Iterator[JournalRecord]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def events(
        self,
        since_seq: int = 0,
        *,
        round_id: str | None = None,
        types: Collection[str] | None = None,
    ) -> Iterator[Event]:
        """Events with ``seq > since_seq`` in seq order, optionally of one round or some types."""
        for record in self.records(since_seq, round_id=round_id, types=types):
            yield record.event()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class SegmentReader(_Reader):
    """Read access to one journal file (a whole journal, or one segment of it).

    Opens the file read-only, so it works while a controller is writing it (a WAL
    reader never blocks the writer). Table and game come from the file's meta; a
    segment's meta also says where its chain starts (:attr:`first_seq`,
    :attr:`prev_hash`). Raises :class:`~table_controller.journal.errors.JournalError`
    (``NotAJournal`` for a file that is not a journal).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = connect_reader(self.path)
        try:
            self._meta = read_meta(self._conn, self.path)
        except BaseException:
            self._conn.close()
            self._conn = None
            raise

    # -- meta ---------------------------------------------------------------
    @property
    def table(self) -> str:
        return str(self._meta["table"])

    @property
    def game(self) -> str:
        return str(self._meta["game"])

    @property
    def variant(self) -> str | None:
        """The variant given when the journal was created (each round.start names its own)."""
        return self._meta.get("variant")

    @property
    def meta(self) -> dict[str, str | None]:
        return dict(self._meta)

    @property
    def segment_number(self) -> int:
        """This file's segment number (1 for a journal that was never rotated)."""
        return int(self._meta.get("segment") or 1)

    @property
    def first_seq(self) -> int:
        """The seq this file's events start at (1 unless it is a later segment)."""
        return int(self._meta.get("first_seq") or 1)

    @property
    def prev_hash(self) -> str:
        """The hash the first event here is chained to (the previous segment's last hash)."""
        return str(self._meta.get("prev_hash") or GENESIS)

    # -- reading ------------------------------------------------------------
    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            if self._conn is None:
                raise JournalError(f"journal {self.path}: used after close()")
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as e:
                raise JournalError(f"journal {self.path}: cannot read: {e}") from e

    @property
    def last_seq(self) -> int:
        """Seq of the last committed event; 0 when the journal is empty (a new segment:
        the seq before its first)."""
        row = self._query("SELECT max(seq) FROM events")[0]
        return int(row[0]) if row[0] is not None else self.first_seq - 1

    @property
    def last_hash(self) -> str:
        """Chain hash of the last event (when empty: the genesis hash, or the previous
        segment's last hash): anchor it elsewhere."""
        rows = self._query("SELECT hash FROM events ORDER BY seq DESC LIMIT 1")
        return str(rows[0][0]) if rows else self.prev_hash

    def hash_at(self, seq: int) -> str | None:
        """The stored chain hash of ``seq``, or None when there is no such event."""
        rows = self._query("SELECT hash FROM events WHERE seq = ?", (seq,))
        return str(rows[0][0]) if rows else None

    @property
    def link_state(self) -> tuple[str, int] | None:
        """(shoe boot id, last delivered shoe seq) stored with the last linked append, or None."""
        rows = self._query("SELECT boot_id, shoe_seq FROM link WHERE id = 1")
        return (str(rows[0][0]), int(rows[0][1])) if rows else None

    def event_count(self) -> int:
        """How many events are stored (equals last_seq in an intact journal)."""
        return int(self._query("SELECT count(*) FROM events")[0][0])

    def quick_check(self) -> list[str]:
        """SQLite's ``PRAGMA quick_check`` of the file: empty when it finds nothing wrong."""
        lines = [str(r[0]) for r in self._query("PRAGMA quick_check")]
        return [] if lines == ["ok"] else lines

    def unguarded_changes(self) -> list[str]:
        """The changes this file no longer refuses, its triggers tried (empty when intact)."""
        with self._lock:
            if self._conn is None:
                raise JournalError(f"journal {self.path}: used after close()")
            try:
                return unguarded_changes(self._conn, self._meta.get("format"), self._has_carried())
            except sqlite3.Error as e:
                raise JournalError(f"journal {self.path}: cannot read its schema: {e}") from e

    def _has_carried(self) -> bool:
        return bool(self._query("SELECT 1 FROM sqlite_master WHERE type='table' AND name='carried'"))

    def carried(self) -> list[JournalRecord]:
        """The earlier events this segment carries for a restart (empty in a first segment)."""
        if not self._has_carried():
            return []
        rows = self._query("SELECT seq, ts, type, round, body, hash FROM carried ORDER BY seq")
        return [JournalRecord(*row) for row in rows]

    def records(
        self,
        since_seq: int = 0,
        *,
        until_seq: int | None = None,
        round_id: str | None = None,
        types: Collection[str] | None = None,
        since_ts: str | None = None,
        until_ts: str | None = None,
    ) -> Iterator[JournalRecord]:
        """Stored rows with ``seq > since_seq`` in seq order, filtered.

        ``until_seq`` is inclusive; ``since_ts`` inclusive and ``until_ts`` exclusive,
        compared with the stored RFC 3339 text. Rows are fetched in batches, so a
        large journal is streamed, not loaded.
        """
        where = ["seq > ?"]
        params: list[Any] = []
        if until_seq is not None:
            where.append("seq <= ?")
            params.append(until_seq)
        if round_id is not None:
            where.append("round = ?")
            params.append(round_id)
        if types is not None:
            kinds = list(types)
            if not kinds:
                return
            where.append(f"type IN ({', '.join('?' * len(kinds))})")
            params.extend(kinds)
        if since_ts is not None:
            where.append("ts >= ?")
            params.append(since_ts)
        if until_ts is not None:
            where.append("ts < ?")
            params.append(until_ts)
        sql = (
            "SELECT seq, ts, type, round, body, hash FROM events WHERE "
            + " AND ".join(where) + " ORDER BY seq LIMIT ?"
        )
        after = since_seq
        while True:
            rows = self._query(sql, [after, *params, _BATCH])
            for row in rows:
                yield JournalRecord(*row)
            if len(rows) < _BATCH:
                return
            after = rows[-1][0]

    def last_event(self) -> Event | None:
        rows = self._query("SELECT body FROM events ORDER BY seq DESC LIMIT 1")
        return decode_event(rows[0][0]) if rows else None

    def settlement(self, round_id: str) -> Event | None:
        """The ``round.result`` or ``round.void`` of a round, or None while it is unsettled."""
        rows = self._query(
            "SELECT body FROM events WHERE round = ? AND type IN (?, ?) ORDER BY seq LIMIT 1",
            (round_id, *SETTLEMENT_TYPES),
        )
        return decode_event(rows[0][0]) if rows else None

    def round_in_progress(self) -> list[Event] | None:
        """Events of the last started round if it has neither result nor void, else None.

        What a restarted controller resumes (or voids, per its policy).
        """
        rows = self._query(
            "SELECT round FROM events WHERE type = 'round.start' ORDER BY seq DESC LIMIT 1"
        )
        if not rows or rows[0][0] is None or self.settlement(rows[0][0]) is not None:
            return None
        return list(self.events(round_id=rows[0][0]))

    def recent_settlements(self, limit: int = 100) -> list[Event]:
        """The last ``limit`` round.result/round.void events, oldest first (snapshot history)."""
        rows = self._query(
            "SELECT body FROM events WHERE type IN (?, ?) ORDER BY seq DESC LIMIT ?",
            (*SETTLEMENT_TYPES, limit),
        )
        return [decode_event(r[0]) for r in reversed(rows)]

    # -- life cycle ---------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @property
    def closed(self) -> bool:
        return self._conn is None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {str(self.path)!r} table={self._meta.get('table')!r}>"


class JournalReader(_Reader):
    """Read access to a table's journal, across all its segments: meta, events, link state.

    For a journal that was never rotated this is its one file. For a segmented one
    (:mod:`~table_controller.journal.segments`) the events of every segment still
    present are read in seq order as one journal; a compressed segment is unpacked
    into a scratch folder the first time it is read. The live segment is followed
    through rotations: a reader kept open (the replay endpoint) sees the new segment.
    Opens everything read-only, beside a live writer. Raises
    :class:`~table_controller.journal.errors.JournalError` (``NotAJournal`` for a file
    that is not a journal).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._live = SegmentReader(self.path)
        self._live_target = _link_target(self.path)
        self._others: dict[Path, SegmentReader] = {}
        self._scratch: Path | None = None

    # -- segments -----------------------------------------------------------
    def _current(self) -> SegmentReader:
        """The live segment's reader, reopened when the writer rotated since."""
        with self._lock:
            target = _link_target(self.path)
            if target != self._live_target:
                fresh = SegmentReader(self.path)
                self._live.close()
                self._live, self._live_target = fresh, target
            return self._live

    def segments(self) -> list[Segment]:
        """The segment files present, oldest first (one for a journal never rotated)."""
        return list_segments(self.path)

    def segment_reader(self, segment: Segment) -> SegmentReader:
        """A reader of one segment (kept open until :meth:`close`)."""
        live = self._current()
        if segment.path == self.path or segment.path.resolve() == live.path.resolve():
            return live
        with self._lock:
            reader = self._others.get(segment.path)
            if reader is None:
                source = segment.path
                if segment.compressed:
                    if self._scratch is None:
                        self._scratch = Path(tempfile.mkdtemp(prefix="tc-journal-"))
                    source = self._scratch / segment.name
                    try:
                        decompress_file(segment.path, source)
                    except (OSError, EOFError, lzma.LZMAError) as e:
                        raise JournalError(f"journal {self.path}: cannot unpack {segment.path}: {e}") from e
                reader = SegmentReader(source)
                self._others[segment.path] = reader
            return reader

    def _spans(self) -> list[tuple[Segment, int | None]]:
        """Each segment with the last seq it can hold (None: the live one, open-ended)."""
        found = self.segments()
        return [
            (segment, found[k + 1].first_seq - 1 if k + 1 < len(found) else None)
            for k, segment in enumerate(found)
        ]

    # -- meta ---------------------------------------------------------------
    @property
    def table(self) -> str:
        return self._current().table

    @property
    def game(self) -> str:
        return self._current().game

    @property
    def variant(self) -> str | None:
        """The variant given when the journal was created (each round.start names its own)."""
        return self._current().variant

    @property
    def meta(self) -> dict[str, str | None]:
        """The live segment's meta (table, game, variant; segment keys when segmented)."""
        return self._current().meta

    # -- reading ------------------------------------------------------------
    @property
    def last_seq(self) -> int:
        """Seq of the last committed event; 0 when the journal is empty."""
        return self._current().last_seq

    @property
    def last_hash(self) -> str:
        """Chain hash of the last event (the genesis hash when empty): anchor it elsewhere."""
        return self._current().last_hash

    @property
    def first_seq(self) -> int:
        """The first seq still held (above 1 once old segments were pruned)."""
        found = self.segments()
        return found[0].first_seq if found else 1

    def hash_at(self, seq: int) -> str | None:
        """The stored chain hash of ``seq``, or None when there is no such event (here). The
        seq just before the first segment left (older ones pruned) answers with that
        segment's ``prev_hash``."""
        spans = self._spans()
        if spans and seq == spans[0][0].first_seq - 1 and seq > 0:
            return self.segment_reader(spans[0][0]).prev_hash
        for segment, last in spans:
            if segment.first_seq <= seq and (last is None or seq <= last):
                return self.segment_reader(segment).hash_at(seq)
        return None

    def meta_at(self, seq: int) -> dict[str, str | None] | None:
        """The meta rows of the file holding ``seq`` (what a checkpoint of it signed), or None."""
        for segment, last in self._spans():
            if segment.first_seq <= seq and (last is None or seq <= last):
                return self.segment_reader(segment).meta
        return None

    @property
    def link_state(self) -> tuple[str, int] | None:
        """(shoe boot id, last delivered shoe seq) stored with the last linked append, or None."""
        return self._current().link_state

    def event_count(self) -> int:
        """How many events are stored in the segments present."""
        return sum(self.segment_reader(s).event_count() for s in self.segments())

    def quick_check(self) -> list[str]:
        """SQLite's ``PRAGMA quick_check`` of every segment: empty when it finds nothing wrong."""
        found = self.segments()
        lines = []
        for segment in found:
            prefix = f"segment {segment.name}: " if len(found) > 1 else ""
            lines += [prefix + line for line in self.segment_reader(segment).quick_check()]
        return lines

    def unguarded_changes(self) -> list[str]:
        """The changes a segment no longer refuses (empty when every trigger is intact)."""
        found = self.segments()
        unguarded = []
        for segment in found:
            where = f" (segment {segment.name})" if len(found) > 1 else ""
            unguarded += [what + where for what in self.segment_reader(segment).unguarded_changes()]
        return unguarded

    def records(
        self,
        since_seq: int = 0,
        *,
        until_seq: int | None = None,
        round_id: str | None = None,
        types: Collection[str] | None = None,
        since_ts: str | None = None,
        until_ts: str | None = None,
    ) -> Iterator[JournalRecord]:
        """Stored rows with ``seq > since_seq`` in seq order, across segments, filtered.

        ``until_seq`` is inclusive; ``since_ts`` inclusive and ``until_ts`` exclusive,
        compared with the stored RFC 3339 text. Streamed in batches.
        """
        for segment, last in self._spans():
            if last is not None and last <= since_seq:
                continue
            if until_seq is not None and segment.first_seq > until_seq:
                return
            yield from self.segment_reader(segment).records(
                since_seq, until_seq=until_seq, round_id=round_id, types=types,
                since_ts=since_ts, until_ts=until_ts,
            )

    def last_event(self) -> Event | None:
        for segment in reversed(self.segments()):
            event = self.segment_reader(segment).last_event()
            if event is not None:
                return event
        return None

    def settlement(self, round_id: str) -> Event | None:
        """The ``round.result`` or ``round.void`` of a round, or None while it is unsettled."""
        for segment in reversed(self.segments()):
            found = self.segment_reader(segment).settlement(round_id)
            if found is not None:
                return found
        return None

    def round_in_progress(self) -> list[Event] | None:
        """Events of the last started round if it is unsettled, else None (a round never
        spans segments: the writer rotates between rounds)."""
        return self._current().round_in_progress()

    def recent_settlements(self, limit: int = 100) -> list[Event]:
        """The last ``limit`` round.result/round.void events, oldest first (snapshot history)."""
        found: list[Event] = []
        for segment in reversed(self.segments()):
            found = self.segment_reader(segment).recent_settlements(limit - len(found)) + found
            if len(found) >= limit:
                break
        return found

    # -- life cycle ---------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._live.close()
            for reader in self._others.values():
                reader.close()
            self._others.clear()
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None

    @property
    def closed(self) -> bool:
        return self._live.closed

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {str(self.path)!r} table={self._live.meta.get('table')!r}>"


def _link_target(path: Path) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


class Journal(SegmentReader):
    """Append-only, hash-chained SQLite event journal of one table.

    Creates the file or opens it; refuses a journal of another table or game
    (:class:`JournalMismatch`), a file that is not a journal (``NotAJournal``) and
    a journal another live process is writing (``JournalLocked``: an ``flock`` on
    ``<path>.lock``, which the kernel releases when that process dies, even by
    kill -9). Safe to call from several threads.
    """

    def __init__(
        self, path: str | Path, *, table: str, game: str, variant: str | None = None,
        new: bool = False, rotation: RotationPolicy | None = None,
    ) -> None:
        """``new``: an existing but empty file (0 bytes, or no tables) may become a new
        journal. Without it such a file is refused (``JournalEmpty``): a journal truncated
        by accident must not silently restart at seq 1. A missing file is always created,
        whole or not at all (:func:`~table_controller.journal.schema.create_journal_file`),
        so a writer killed while creating it leaves nothing the next start refuses.

        ``rotation``: when to start a new segment (:mod:`~table_controller.journal.segments`);
        a new journal with rotation on is created as segment 1 behind the journal's link,
        and a one-file journal becomes segment 1 at its first rotation."""
        self.path = Path(path)
        self._lock = threading.RLock()
        self._writer_lock: WriterLock | None = WriterLock.acquire(self.path)
        self._conn = None
        self.rotation = rotation or RotationPolicy()
        self._base_meta: dict[str, str | None] = {"table": table, "game": game, "variant": variant}
        self._rotation_pending = False
        self._rotation_retry_at = 0.0
        meta = self._base_meta
        try:
            discard_unfinished_creation(self.path)
            self._tidy_unfinished_rotation()
            if self.path.is_symlink() and not self.path.exists():
                raise JournalError(
                    f"journal {self.path}: the link points at {os.readlink(self.path)}, which does not "
                    "exist: restore that segment (or the link to the last segment) before the table starts"
                )
            if not self.path.exists():
                if self.rotation.enabled:
                    self._create_first_segment()
                else:
                    create_journal_file(self.path, meta)
            conn = connect_writer(self.path)
            self._conn = conn
            if is_empty_database(conn, self.path):
                if not new:
                    raise JournalEmpty(
                        f"journal {self.path}: the file exists but holds no journal "
                        f"({self.path.stat().st_size} bytes): a damaged or truncated journal? "
                        "Restore it from a backup, or start a new one explicitly (--new-journal)"
                    )
                configure_writer(conn, self.path)
                create_schema(conn, meta)  # asked for (--new-journal): in place
            stored = read_meta(conn, self.path)
            for key, wanted in (("table", table), ("game", game)):
                if stored[key] != wanted:
                    raise JournalMismatch(
                        f"journal {self.path}: meta key {key!r} is {stored[key]!r}, not {wanted!r}: "
                        f"this is the journal of {stored['table']!r} ({stored['game']}), refusing to "
                        f"write events of {table!r} ({game}) into it"
                    )
            configure_writer(conn, self.path)
            self._meta = stored
            self._base_meta = {"table": table, "game": game, "variant": stored.get("variant")}
            self._track_live_segment()
        except BaseException:
            self.close()
            raise

    # -- segments -------------------------------------------------------------
    def _create_first_segment(self) -> None:
        folder = segments_dir(self.path)
        folder.mkdir(exist_ok=True)
        first = folder / segment_file_name(1, 1)
        if first.exists():
            raise JournalError(
                f"journal {self.path}: the link is missing but {first} exists: restore the link "
                f"(ln -s {folder.name}/<last segment> {self.path}) rather than start a new journal"
            )
        discard_unfinished_creation(first)
        create_journal_file(first, {**self._base_meta, "segment": "1", "first_seq": "1", "prev_hash": GENESIS})
        self._point_link_at(first)

    def _point_link_at(self, segment_file: Path) -> None:
        """Make the journal's link name ``segment_file``: atomically, then fsync the folder."""
        tmp = self.path.with_name(self.path.name + ".next")
        tmp.unlink(missing_ok=True)
        os.symlink(os.path.relpath(segment_file, self.path.parent), tmp)
        os.replace(tmp, self.path)
        fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _tidy_unfinished_rotation(self) -> None:
        """Remove what a rotation killed before its link moved left: the spare link, and a
        next segment that never received an event. A later segment holding events is refused."""
        self.path.with_name(self.path.name + ".next").unlink(missing_ok=True)
        live = live_segment(self.path)
        folder = segments_dir(self.path)
        if live is None or not folder.is_dir():
            return
        for entry in folder.iterdir():
            found = SEGMENT_NAME.match(entry.name)
            if found is None or int(found["number"]) <= live.number:
                continue
            with SegmentReader(entry) as orphan:
                held = orphan.event_count()
            if held:
                raise JournalBroken(
                    f"journal {self.path}: segment {entry.name} comes after the live segment "
                    f"{live.path.name} and holds {held} events: the link was set back by hand?"
                )
            for leftover in (entry, *(entry.with_name(entry.name + s) for s in ("-wal", "-shm"))):
                leftover.unlink(missing_ok=True)

    def _track_live_segment(self) -> None:
        """What the rotation triggers need to know about the live segment (read once at open).

        The size trigger counts the segment's own events, not what it carries: a segment
        whose carried events alone reach the size would otherwise rotate at every round."""
        page_size = int(self._query("PRAGMA page_size")[0][0])
        self._carried_bytes = int(self._meta.get("base_pages") or 0) * page_size
        self._segment_has_cards = bool(self._query("SELECT 1 FROM events WHERE type = 'card' LIMIT 1"))
        first = self._query("SELECT ts FROM events ORDER BY seq LIMIT 1")
        self._segment_day: str | None = str(first[0][0])[:10] if first else None
        self._open_round: str | None = None
        for record in (*self.carried(), *self.records(types=("round.start", *SETTLEMENT_TYPES))):
            self._note_round(record.type, record.round)

    def _note_round(self, kind: str, round_id: str | None) -> None:
        if kind == "round.start":
            self._open_round = round_id
        elif kind in SETTLEMENT_TYPES and round_id == self._open_round:
            self._open_round = None

    def _rotation_due(self, drafts: Sequence[Event]) -> bool:
        every = self.rotation.every
        if every == "shoe" and self._segment_has_cards and _announces_new_shoe(drafts):
            return True
        if every == "day" and self._segment_day is not None and str(drafts[0].ts)[:10] != self._segment_day:
            return True
        return self._live_bytes() - self._carried_bytes >= self.rotation.max_bytes

    def _live_bytes(self) -> int:
        """The live segment's size as SQLite sees it (pages in the file and in the WAL: a WAL
        holds old copies of pages too, so its bytes would overstate the segment)."""
        assert self._conn is not None
        pages = self._conn.execute("PRAGMA page_count").fetchone()[0]
        size = self._conn.execute("PRAGMA page_size").fetchone()[0]
        return int(pages) * int(size)

    def rotate(self) -> bool:
        """Close the live segment and start the next one now (between rounds only).

        Returns False, having changed nothing, when a round is open or the one-file
        journal cannot become segment 1 yet (another connection holds its WAL)."""
        with self._lock:
            if self._open_round is not None:
                return False
            return self._rotate()

    def _rotate(self, *, new_shoe_follows: bool = False) -> bool:
        conn = self._conn
        assert conn is not None
        live = live_segment(self.path)
        number, first, last_seq, last_hash = self.segment_number, self.first_seq, self.last_seq, self.last_hash
        folder = segments_dir(self.path)
        folder.mkdir(exist_ok=True)
        next_file = folder / segment_file_name(number + 1, last_seq + 1)
        carried = carried_records(chain(self.carried(), self.records()), new_shoe_follows=new_shoe_follows)
        link = conn.execute("SELECT boot_id, shoe_seq, event_seq FROM link WHERE id = 1").fetchone()
        meta = {**self._base_meta, "segment": str(number + 1), "first_seq": str(last_seq + 1),
                "prev_hash": last_hash}
        discard_unfinished_creation(next_file)
        next_file.unlink(missing_ok=True)
        create_journal_file(next_file, meta, carried=[tuple(r) for r in carried],
                            link=tuple(link) if link else None)
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if live is None and busy[0] != 0:
            next_file.unlink(missing_ok=True)
            log.warning("journal %s: not rotated yet: another connection holds its WAL", self.path)
            return False
        conn.close()
        self._conn = None
        try:
            if live is None:  # the one-file journal becomes segment 1, where it is
                first_file = folder / segment_file_name(number, first)
                if not (first_file.exists() and os.path.samefile(first_file, self.path)):
                    os.link(self.path, first_file)  # (a killed first rotation may have made it already)
            self._point_link_at(next_file)
        except OSError:
            self._conn = connect_writer(self.path)  # still the old segment
            configure_writer(self._conn, self.path)
            next_file.unlink(missing_ok=True)
            raise
        conn = connect_writer(self.path)
        self._conn = conn
        configure_writer(conn, self.path)
        self._meta = read_meta(conn, self.path)
        self._track_live_segment()
        log.info("journal %s: segment %d closed at seq %d; segment %d started (%d events carried)",
                 self.path, number, last_seq, number + 1, len(carried))
        return True

    def restore_events(self, types: Collection[str] | None = None) -> list[Event]:
        """What a restarting table replays: the carried events, then the live segment's,
        of ``types`` (never reads a closed segment)."""
        wanted = set(types) if types is not None else None
        carried = [r.event() for r in self.carried() if wanted is None or r.type in wanted]
        return carried + list(self.events(types=types))

    @property
    def verified_marker(self) -> Path:
        """Where the last start-up check records how far the chain was verified."""
        return self.path.with_name(self.path.name + ".verified")

    def check_at_start(self) -> int:
        """Check the chain before the table extends it; returns how many events were checked.

        Only what was not checked at an earlier start is read (from the seq and hash in
        :attr:`verified_marker`), so a large journal opens fast; a marker whose seq no
        longer carries its hash (an edited or deleted tail) is refused. ``journal verify``
        checks everything, results included.
        """
        since: tuple[int, str] | None = None
        try:
            seq_text, hash_text = self.verified_marker.read_text().split()
            since = (int(seq_text), hash_text)
        except (OSError, ValueError):
            since = None
        start = since[0] if since else 0
        self.check_chain(since)
        last = self.last_seq
        tmp = self.verified_marker.with_name(self.verified_marker.name + ".tmp")
        try:
            tmp.write_text(f"{last} {self.last_hash}\n")
            tmp.replace(self.verified_marker)
        except OSError:
            pass  # read-only folder: the next start checks the whole chain again
        return last - start

    def check_chain(self, since: tuple[int, str] | None = None) -> None:
        """Raise JournalBroken naming the first bad seq unless seqs run 1, 2, 3 ... with
        every hash equal to sha256(previous hash + text) and the append-only triggers in
        place. ``since``: (seq, hash) verified before: check that row and onwards only."""
        unguarded = self.unguarded_changes()
        where = f"journal {self.path}"
        how = f"inspect it with: table-controller journal verify --journal {self.path}"
        if unguarded:
            raise JournalBroken(f"{where}: an append-only trigger was removed: the file no longer refuses "
                                f"{unguarded[0]}; {how}")
        expected, prev = self.first_seq, self.prev_hash
        if since is not None and since[0] == self.first_seq - 1 and since[1] != self.prev_hash:
            raise JournalBroken(
                f"{where}: the segment does not continue the chain verified before (seq {since[0]}); {how}")
        if since is not None and since[0] >= self.first_seq:
            rows = self._query("SELECT hash FROM events WHERE seq = ?", (since[0],))
            if not rows or rows[0][0] != since[1]:
                raise JournalBroken(
                    f"{where}: seq {since[0]} no longer has the hash verified before; {how}")
            expected, prev = since[0] + 1, since[1]
        after = expected - 1
        while True:
            rows = self._query(
                "SELECT seq, body, hash FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                (after, 4096),
            )
            for seq, body, stored in rows:
                if seq != expected:
                    raise JournalBroken(f"{where}: seq {expected} is missing (next is {seq}); {how}")
                if chain_hash(prev, body) != stored:
                    raise JournalBroken(
                        f"{where}: hash chain broken at seq {seq} (this event was changed, or "
                        f"events before it removed or reordered); {how}")
                expected, prev = seq + 1, stored
            if len(rows) < 4096:
                return
            after = rows[-1][0]

    @classmethod
    def open_readonly(cls, path: str | Path) -> JournalReader:
        """Open a journal for reading only (works beside a live writer)."""
        return JournalReader(path)

    def append(
        self, drafts: Sequence[Event], *, link: tuple[str, int] | None = None
    ) -> list[Event]:
        """Commit events (and the shoe link state) in one transaction; return them numbered.

        Each draft is a stamped but unnumbered event (``seq`` 0, see
        :func:`~table_controller.event_types.stamped`); the journal assigns consecutive
        seqs, checks each against its type, chains and stores them. On any failure nothing
        is written and :class:`JournalError` is raised (``RoundAlreadySettled`` for a second
        result/void of a round, ``RoundAlreadyStarted`` for a reused round id).
        """
        if not isinstance(drafts, Sequence) or isinstance(drafts, str | bytes):
            raise JournalError(f"journal {self.path}: append() takes a list of events, not {type(drafts).__name__}")
        with self._lock:
            if self._conn is not None and drafts and self.rotation.enabled:
                self._rotate_if_due(drafts)
            conn = self._conn
            if conn is None:
                raise JournalError(f"journal {self.path}: append() after close()")
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as e:
                raise JournalError(f"journal {self.path}: cannot start a transaction: {e}") from e
            try:
                events = self._insert(conn, drafts, link)
                conn.execute("COMMIT")
            except BaseException as e:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                if isinstance(e, JournalError) or not isinstance(e, Exception):
                    raise
                raise JournalError(
                    f"journal {self.path}: append failed, nothing written: {e}"
                ) from e
            for event in events:
                self._note_round(event.type, event.round)
                if event.type == "card":
                    self._segment_has_cards = True
            if events and self._segment_day is None:
                self._segment_day = events[0].ts[:10]
            return events

    def _rotate_if_due(self, drafts: Sequence[Event]) -> None:
        """Start a new segment before this batch when a trigger fired and no round is open.
        A rotation that fails is logged and retried a minute later: the table deals on."""
        if not self._rotation_pending and isinstance(drafts[0], EventBase):
            self._rotation_pending = self._rotation_due(drafts)
        if not self._rotation_pending or self._open_round is not None:
            return
        if time.monotonic() < self._rotation_retry_at:
            return
        try:
            if self._rotate(new_shoe_follows=_announces_new_shoe(drafts)):
                self._rotation_pending = False
                return
        except (OSError, sqlite3.Error, JournalError) as e:
            if self._conn is None:
                raise JournalError(f"journal {self.path}: rotation failed and left no writer: {e}") from e
            log.error("journal %s: rotation failed, the live segment goes on: %s", self.path, e)
        self._rotation_retry_at = time.monotonic() + 60.0

    def _insert(
        self, conn: sqlite3.Connection, drafts: Sequence[Event],
        link: tuple[str, int] | None,
    ) -> list[Event]:
        row = conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        seq, prev = (int(row[0]), str(row[1])) if row else (self.first_seq - 1, self.prev_hash)
        out: list[Event] = []
        for number, draft in enumerate(drafts):
            seq += 1
            event, body = self._complete(draft, seq, number)
            self._check_round_once(conn, event)
            digest = chain_hash(prev, body)
            conn.execute(
                "INSERT INTO events(seq, ts, type, round, body, hash) VALUES (?, ?, ?, ?, ?, ?)",
                (seq, event.ts, event.type, event.round, body, digest),
            )
            prev = digest
            out.append(event)
        if link is not None:
            self._store_link(conn, link, seq)
        return out

    def _complete(self, draft: object, seq: int, number: int) -> tuple[Event, str]:
        """The numbered event of a draft and its stored text, checked against its type.

        A typed event is built without checks, so the text is decoded again: what is
        stored is exactly what a reader will accept.
        """
        where = f"journal {self.path}: draft #{number}"
        if not isinstance(draft, EventBase):
            raise JournalError(f"{where} is a {type(draft).__name__}, not an event")
        if draft.seq != 0:
            raise JournalError(f"{where} already has seq {draft.seq!r}: the journal assigns seq")
        for key, value in (("table", draft.table), ("game", draft.game)):
            if value != self._meta[key]:
                raise JournalMismatch(
                    f"{where}: {key} {value!r} does not match the journal's {key} "
                    f"{self._meta[key]!r}; nothing written"
                )
        try:
            body = encode_event(numbered(draft, seq)).decode("utf-8")
            event = decode_event(body)
        except (TypeError, ValueError, OverflowError) as e:  # EventError is a ValueError
            raise JournalError(f"{where}: {e}; nothing written") from e
        return event, body

    def _check_round_once(self, conn: sqlite3.Connection, event: Event) -> None:
        """Refuse a reused round id or a second settlement (earlier rows of this batch count)."""
        kind, round_id = event.type, event.round
        if round_id is None or kind not in ("round.start", *SETTLEMENT_TYPES):
            return
        if kind == "round.start":
            row = conn.execute(
                "SELECT seq FROM events WHERE round = ? AND type = 'round.start' LIMIT 1",
                (round_id,),
            ).fetchone()
            if row:
                raise RoundAlreadyStarted(
                    f"journal {self.path}: round {round_id!r} was already started (seq {row[0]}); "
                    "round ids are unique per table; nothing written"
                )
            return
        row = conn.execute(
            "SELECT seq, type FROM events WHERE round = ? AND type IN (?, ?) LIMIT 1",
            (round_id, *SETTLEMENT_TYPES),
        ).fetchone()
        if row:
            raise RoundAlreadySettled(
                f"journal {self.path}: round {round_id!r} is already settled ({row[1]} at seq "
                f"{row[0]}); refusing a second {kind}; nothing written"
            )

    def _store_link(self, conn: sqlite3.Connection, link: Any, event_seq: int) -> None:
        if (
            not isinstance(link, tuple) or len(link) != 2 or not isinstance(link[0], str)
            or not isinstance(link[1], int) or isinstance(link[1], bool)
        ):
            raise JournalError(
                f"journal {self.path}: link must be (boot_id: str, shoe_seq: int), not {link!r}; "
                "nothing written"
            )
        conn.execute(
            "INSERT INTO link(id, boot_id, shoe_seq, event_seq) VALUES (1, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET boot_id = excluded.boot_id, "
            "shoe_seq = excluded.shoe_seq, event_seq = excluded.event_seq",
            (link[0], link[1], event_seq),
        )

    def close(self) -> None:
        """Close the connection and release the writer lock (idempotent)."""
        with self._lock:
            super().close()
            if self._writer_lock is not None:
                self._writer_lock.release()
                self._writer_lock = None

    def __enter__(self) -> Journal:
        return self


def _announces_new_shoe(drafts: Sequence[Event]) -> bool:
    return any(d.type == "shoe" and getattr(d, "event", None) == "new" for d in drafts)
