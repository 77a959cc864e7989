"""The embedded archive backend: SQLite, append-only, keyed by (table, seq), with a versioned schema.

Each stored event keeps its body exactly as the table journaled it and its
chain hash, so anyone can check an archived round against the table's own
journal (``hash = sha256(previous hash + body)``). Rows are never updated or
deleted (triggers refuse it). The schema carries its version
(``schema_version``); :data:`MIGRATIONS` bring an older file up to date when
it is opened, each in one transaction.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from table_controller.archive.base import (
    GENESIS_HASH,
    ArchiveAlert,
    ArchivedEvent,
    ArchiveError,
    check_continues,
    slice_rows,
)
from table_controller.journal.store import JournalRecord
from table_controller.replay_client import ReplaySlice

#: Schema migrations, in order: (version, statements). A file at version N gets N+1.. applied.
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, (
        """CREATE TABLE events (
               tbl TEXT NOT NULL, seq INTEGER NOT NULL, ts TEXT NOT NULL, type TEXT NOT NULL,
               round TEXT, body TEXT NOT NULL, hash TEXT NOT NULL, archived_at TEXT NOT NULL,
               PRIMARY KEY (tbl, seq)) WITHOUT ROWID""",
        "CREATE INDEX events_round ON events (tbl, round)",
        "CREATE INDEX events_ts ON events (tbl, ts)",
        """CREATE TABLE alerts (
               id INTEGER PRIMARY KEY, at TEXT NOT NULL, tbl TEXT NOT NULL, kind TEXT NOT NULL,
               text TEXT NOT NULL)""",
        """CREATE TRIGGER events_no_update BEFORE UPDATE ON events
               BEGIN SELECT RAISE(ABORT, 'the archive is append-only'); END""",
        """CREATE TRIGGER events_no_delete BEFORE DELETE ON events
               BEGIN SELECT RAISE(ABORT, 'the archive is append-only'); END""",
    )),
    (2, (
        # the studio API's keys: only a hash of each is kept; ``tables`` is a JSON list, ["*"] for all
        """CREATE TABLE api_keys (
               id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, name TEXT NOT NULL, tables TEXT NOT NULL,
               created_at TEXT NOT NULL, revoked_at TEXT)""",
        "CREATE INDEX events_type ON events (tbl, type, seq)",
    )),
    (3, (
        # a time window's round starts, found by time (events_type walked every start of the table)
        "CREATE INDEX events_type_ts ON events (tbl, type, ts)",
    )),
)


class SQLiteArchive:
    """The embedded archive: one SQLite file for the whole studio (WAL, synchronous FULL).

    :meth:`append` takes a verified :class:`ReplaySlice` and keeps each event once; the
    slice must continue the table's chain where the archive ends (its ``prev_hash`` is the
    hash of the table's last archived event), else :class:`ArchiveError` and nothing is kept.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()  # the one writing connection
        self._local = threading.local()  # one read-only connection per reading thread
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._migrate()
        except sqlite3.Error as e:
            raise ArchiveError(f"archive {self.path}: cannot open: {e}") from e

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """Rows of a read, on this thread's own read-only connection: readers never wait for
        each other or for the writer (WAL), so one long request does not hold up the rest."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None,
                                       check_same_thread=False, timeout=10)
            except sqlite3.Error as e:
                raise ArchiveError(f"archive {self.path}: cannot open for reading: {e}") from e
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.Error as e:
            raise ArchiveError(f"archive {self.path}: cannot read: {e}") from e

    # -- schema --------------------------------------------------------------------------
    def _migrate(self) -> None:
        c = self._conn
        c.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = c.execute("SELECT version FROM schema_version").fetchone()
        version = int(row[0]) if row else 0
        latest = MIGRATIONS[-1][0]
        if version > latest:
            raise ArchiveError(f"archive {self.path} has schema {version}; this version knows up to {latest}")
        for number, statements in MIGRATIONS:
            if number <= version:
                continue
            c.execute("BEGIN IMMEDIATE")
            try:
                for sql in statements:
                    c.execute(sql)
                c.execute("DELETE FROM schema_version")
                c.execute("INSERT INTO schema_version VALUES (?)", (number,))
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:  # an interruption can land just after COMMIT
                    c.execute("ROLLBACK")
                raise

    @property
    def schema_version(self) -> int:
        return int(self._conn.execute("SELECT version FROM schema_version").fetchone()[0])

    # -- writing -------------------------------------------------------------------------
    def last(self, table: str) -> tuple[int, str]:
        """(seq, hash) of the table's last archived event; (0, 64 zeros) before any."""
        rows = self._read("SELECT seq, hash FROM events WHERE tbl = ? ORDER BY seq DESC LIMIT 1", (table,))
        return (int(rows[0][0]), str(rows[0][1])) if rows else (0, GENESIS_HASH)

    def append(self, slice_: ReplaySlice, archived_at: str) -> int:
        """Keep the slice's events (already :meth:`ReplaySlice.verify`-ed); returns how many
        were new. The slice must start where the table's archive ends, with its hash."""
        if not slice_.events:
            return 0
        rows = slice_rows(slice_, archived_at)
        with self._lock:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                row = c.execute("SELECT seq, hash FROM events WHERE tbl = ? ORDER BY seq DESC LIMIT 1",
                                (slice_.table,)).fetchone()
                check_continues(slice_, *((int(row[0]), str(row[1])) if row else (0, GENESIS_HASH)))
                c.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:  # an interruption can land just after COMMIT
                    c.execute("ROLLBACK")
                raise
        return len(rows)

    def alert(self, alert: ArchiveAlert) -> None:
        with self._lock:
            self._conn.execute("INSERT INTO alerts (at, tbl, kind, text) VALUES (?, ?, ?, ?)",
                               (alert.at, alert.table, alert.kind, alert.text))

    # -- reading -------------------------------------------------------------------------
    def tables(self) -> dict[str, tuple[int, str]]:
        """Every archived table with its last (seq, hash)."""
        rows = self._read(
            "SELECT e.tbl, e.seq, e.hash FROM events e JOIN (SELECT tbl, MAX(seq) AS seq FROM events "
            "GROUP BY tbl) m ON e.tbl = m.tbl AND e.seq = m.seq ORDER BY e.tbl")
        return {str(t): (int(s), str(h)) for t, s, h in rows}

    def events(self, table: str, after_seq: int = 0, limit: int | None = None) -> Iterator[ArchivedEvent]:
        """The table's archived events after ``after_seq``, in seq order."""
        rows = self._read(
            "SELECT tbl, seq, ts, type, round, body, hash FROM events WHERE tbl = ? AND seq > ? ORDER BY seq "
            "LIMIT ?", (table, after_seq, -1 if limit is None else limit))
        for r in rows:
            yield ArchivedEvent(r[0], JournalRecord(*r[1:]))

    def round_rows(self, table: str, round_id: str) -> list[JournalRecord]:
        """Every archived row of one round, in seq order."""
        rows = self._read(
            # without INDEXED BY the planner walks the table's whole primary key (for the ORDER BY)
            "SELECT seq, ts, type, round, body, hash FROM events INDEXED BY events_round "
            "WHERE tbl = ? AND round = ? ORDER BY seq",
            (table, round_id))
        return [JournalRecord(*r) for r in rows]

    def rounds_rows(self, table: str, round_ids: Sequence[str]) -> dict[str, list[JournalRecord]]:
        out: dict[str, list[JournalRecord]] = {r: [] for r in round_ids}
        ids = list(out)
        for k in range(0, len(ids), 500):  # SQLite's bound-parameter limit is far above; keep statements short
            part = ids[k:k + 500]
            marks = ", ".join("?" for _ in part)
            for r in self._read(f"SELECT seq, ts, type, round, body, hash FROM events INDEXED BY events_round "
                                f"WHERE tbl = ? AND round IN ({marks}) ORDER BY seq", (table, *part)):
                out[r[3]].append(JournalRecord(*r))
        return out

    def round_starts(self, table: str, since_ts: str, until_ts: str, after_seq: int = 0,
                     limit: int = 100) -> list[tuple[str, str, int]]:
        """(round id, start ts, start seq) of the table's rounds started in [since, until), after
        the start seq ``after_seq`` (a cursor), in seq order."""
        rows = self._read(
            "SELECT round, ts, seq FROM events INDEXED BY events_type_ts WHERE tbl = ? AND type = 'round.start' "
            "AND seq > ? AND ts >= ? AND ts < ? ORDER BY seq LIMIT ?", (table, after_seq, since_ts, until_ts, limit))
        return [(str(r), str(t), int(q)) for r, t, q in rows]

    def recent_settlements(self, table: str, limit: int = 20) -> list[JournalRecord]:
        """The table's last ``limit`` results and voids, newest first."""
        rows = self._read(
            "SELECT seq, ts, type, round, body, hash FROM events WHERE tbl = ? "
            "AND type IN ('round.result', 'round.void') ORDER BY seq DESC LIMIT ?", (table, limit))
        return [JournalRecord(*r) for r in rows]

    def typed_rows(self, table: str, types: Sequence[str], since_ts: str = "", until_ts: str = "~") -> list[
            JournalRecord]:
        marks = ", ".join("?" for _ in types)
        rows = self._read(
            f"SELECT seq, ts, type, round, body, hash FROM events INDEXED BY events_type WHERE tbl = ? "
            f"AND type IN ({marks}) AND ts >= ? AND ts < ? ORDER BY seq", (table, *types, since_ts, until_ts))
        return [JournalRecord(*r) for r in rows]

    def settlements_after(self, cursor: dict[str, int], tables: list[str],
                          limit: int = 200) -> list[tuple[str, JournalRecord]]:
        """Results and voids of ``tables`` archived after ``cursor`` (table -> seq; a table
        not in it: from its start), table by table in seq order, at most ``limit`` a table."""
        out: list[tuple[str, JournalRecord]] = []
        for table in tables:
            rows = self._read(
                "SELECT seq, ts, type, round, body, hash FROM events WHERE tbl = ? AND seq > ? "
                "AND type IN ('round.result', 'round.void') ORDER BY seq LIMIT ?",
                (table, cursor.get(table, 0), limit))
            out += [(table, JournalRecord(*r)) for r in rows]
        return out

    # -- the studio API's keys -------------------------------------------------------------
    def add_api_key(self, key_hash: str, name: str, tables: list[str], created_at: str) -> int:
        with self._lock:
            cur = self._conn.execute("INSERT INTO api_keys (hash, name, tables, created_at) VALUES (?, ?, ?, ?)",
                                     (key_hash, name, json.dumps(tables), created_at))
        return int(cur.lastrowid or 0)

    def revoke_api_key(self, number: int, revoked_at: str) -> bool:
        with self._lock:
            cur = self._conn.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                                     (revoked_at, number))
        return cur.rowcount == 1

    def api_key_tables(self, key_hash: str) -> list[str] | None:
        """The tables a (hashed) key may read, or None for no such key or a revoked one."""
        rows = self._read("SELECT tables FROM api_keys WHERE hash = ? AND revoked_at IS NULL", (key_hash,))
        return [str(t) for t in json.loads(rows[0][0])] if rows else None

    def alerts(self, table: str | None = None) -> list[ArchiveAlert]:
        rows = self._read("SELECT at, tbl, kind, text FROM alerts WHERE ? IS NULL OR tbl = ? ORDER BY id",
                          (table, table))
        return [ArchiveAlert(*r) for r in rows]

    def close(self) -> None:
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SQLiteArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
