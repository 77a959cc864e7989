"""The journal of one table: an append-only, hash-chained SQLite event log.

:class:`Journal` is the controller's writer: it assigns ``seq``, chains hashes
and commits events (and the shoe link's resume point) in one transaction
before anything is published. :class:`JournalReader` is for tools: it opens
the same file read-only beside a live writer and needs no table or game.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

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
    APPEND_ONLY_TRIGGERS,
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
)

SETTLEMENT_TYPES = ("round.result", "round.void")
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


class JournalReader:
    """Read access to a journal file: its meta, events and shoe link state.

    Opens the file read-only, so it works while a controller is writing it (a WAL
    reader never blocks the writer). Table and game come from the journal's meta.
    Raises :class:`~table_controller.journal.errors.JournalError` (``NotAJournal``
    for a file that is not a journal).
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
        """Seq of the last committed event; 0 when the journal is empty."""
        row = self._query("SELECT max(seq) FROM events")[0]
        return int(row[0] or 0)

    @property
    def last_hash(self) -> str:
        """Chain hash of the last event (the genesis hash when empty): anchor it elsewhere."""
        rows = self._query("SELECT hash FROM events ORDER BY seq DESC LIMIT 1")
        return str(rows[0][0]) if rows else GENESIS

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

    def missing_triggers(self) -> list[str]:
        """Names of the append-only triggers that are no longer in the file (empty when intact)."""
        present = {r[0] for r in self._query("SELECT name FROM sqlite_master WHERE type='trigger'")}
        return [name for name in APPEND_ONLY_TRIGGERS if name not in present]

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

    def __enter__(self) -> JournalReader:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {str(self.path)!r} table={self._meta.get('table')!r}>"


class Journal(JournalReader):
    """Append-only, hash-chained SQLite event journal of one table.

    Creates the file or opens it; refuses a journal of another table or game
    (:class:`JournalMismatch`), a file that is not a journal (``NotAJournal``) and
    a journal another live process is writing (``JournalLocked``: an ``flock`` on
    ``<path>.lock``, which the kernel releases when that process dies, even by
    kill -9). Safe to call from several threads.
    """

    def __init__(
        self, path: str | Path, *, table: str, game: str, variant: str | None = None,
        new: bool = False,
    ) -> None:
        """``new``: an existing but empty file (0 bytes, or no tables) may become a new
        journal. Without it such a file is refused (``JournalEmpty``): a journal truncated
        by accident must not silently restart at seq 1. A missing file is always created,
        whole or not at all (:func:`~table_controller.journal.schema.create_journal_file`),
        so a writer killed while creating it leaves nothing the next start refuses."""
        self.path = Path(path)
        self._lock = threading.RLock()
        self._writer_lock: WriterLock | None = WriterLock.acquire(self.path)
        self._conn = None
        meta = {"table": table, "game": game, "variant": variant}
        try:
            discard_unfinished_creation(self.path)
            if not self.path.exists():
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
        except BaseException:
            self.close()
            raise

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
        with self._lock:
            assert self._conn is not None
            present = {r[0] for r in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type='trigger'")}
        missing = [name for name in APPEND_ONLY_TRIGGERS if name not in present]
        where = f"journal {self.path}"
        how = f"inspect it with: table-controller journal verify --journal {self.path}"
        if missing:
            raise JournalBroken(f"{where}: append-only trigger {missing[0]!r} was removed; {how}")
        expected, prev = 1, GENESIS
        if since is not None and since[0] > 0:
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
            return events

    def _insert(
        self, conn: sqlite3.Connection, drafts: Sequence[Event],
        link: tuple[str, int] | None,
    ) -> list[Event]:
        row = conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        seq, prev = (int(row[0]), str(row[1])) if row else (0, GENESIS)
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
