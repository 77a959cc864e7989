"""The studio's archive backend: PostgreSQL through psycopg 3, append-only, versioned schema.

The same contract as the SQLite backend (:class:`~table_controller.archive.base.Archive`):
each event once, keyed by (table, seq), its body kept as the exact text the table
journaled (``text``, not ``jsonb``: jsonb reorders keys and the chain hash is over
the bytes). Slices are written with ``COPY`` in one transaction each.

``table_heads`` holds each table's last (seq, hash). It is written in the same
transaction as the events, and its row is locked (``FOR UPDATE``) while a slice is
checked and written, so two archive processes following the same table cannot
interleave: the second sees the first's head and refuses a slice that no longer
continues it. The heads also answer ``last`` and ``tables`` without scanning events.

Updates, deletes and truncation of ``events`` are refused by triggers. Migrations
run under an advisory lock, each in one transaction, so two services starting at
once do not both migrate.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from table_controller.archive.base import (
    GENESIS_HASH,
    ArchiveAlert,
    ArchivedEvent,
    ArchiveError,
    ArchiveUnavailable,
    check_continues,
    redact,
    slice_rows,
)
from table_controller.journal.store import JournalRecord
from table_controller.replay_client import ReplaySlice

try:  # an optional dependency: the `postgres` extra
    import psycopg
    from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout
except ImportError:  # pragma: no cover - reported when a postgresql:// archive is opened
    psycopg = None  # type: ignore[assignment]
    ConnectionPool = None  # type: ignore[assignment,misc]
    PoolTimeout = None  # type: ignore[assignment,misc]
    PoolClosed = None  # type: ignore[assignment,misc]

#: Advisory-lock key held while the schema is migrated ("TCARCHIV" as a number).
MIGRATION_LOCK = 0x5443415243484956

#: Schema migrations, in order: (version, statements); a database at version N gets N+1.. applied.
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, (
        """CREATE TABLE events (
               tbl text NOT NULL, seq bigint NOT NULL, ts text NOT NULL, type text NOT NULL,
               round text, body text NOT NULL, hash text NOT NULL, archived_at text NOT NULL,
               PRIMARY KEY (tbl, seq))""",
        "CREATE INDEX events_round ON events (tbl, round, seq)",
        "CREATE INDEX events_type ON events (tbl, type, seq)",
        "CREATE INDEX events_ts ON events (tbl, ts)",
        """CREATE TABLE table_heads (
               tbl text PRIMARY KEY, seq bigint NOT NULL, hash text NOT NULL)""",
        """CREATE TABLE alerts (
               id bigserial PRIMARY KEY, at text NOT NULL, tbl text NOT NULL, kind text NOT NULL,
               text text NOT NULL)""",
        # ``tables`` is a JSON list, ["*"] for all; only a hash of each key is kept
        """CREATE TABLE api_keys (
               id bigserial PRIMARY KEY, hash text NOT NULL UNIQUE, name text NOT NULL, tables text NOT NULL,
               created_at text NOT NULL, revoked_at text)""",
        """CREATE FUNCTION archive_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN RAISE EXCEPTION 'the archive is append-only'; END $$""",
        """CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
               FOR EACH ROW EXECUTE FUNCTION archive_refuse_change()""",
        """CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
               FOR EACH STATEMENT EXECUTE FUNCTION archive_refuse_change()""",
    )),
    (2, (
        # a time window's round starts, found by time
        "CREATE INDEX events_type_ts ON events (tbl, type, ts)",
    )),
)

#: What libpq says when the server answered and waiting will not help: the credentials, the
#: role, the database or an option of the location is wrong (these come without an SQLSTATE,
#: so by their words). A server that is down, starting up or full is waited for instead.
REFUSED_FOR_GOOD = ("password authentication failed", "no pg_hba.conf entry", "does not exist", "invalid ")

COLUMNS = "tbl, seq, ts, type, round, body, hash, archived_at"
T = TypeVar("T")


class PostgresArchive:
    """The studio archive on a PostgreSQL server (``postgresql://user@host:port/db``).

    Reads and writes share a small connection pool (``pool_size``), so the studio
    service's request threads do not wait for one another; a connection lost with the
    server is replaced on the next use (the pool checks it), so a restarted server costs
    the calls made while it was down an :class:`ArchiveError` each, nothing more.
    """

    def __init__(self, url: str, *, pool_size: int = 8, timeout: float = 3.0) -> None:
        if psycopg is None or ConnectionPool is None:
            raise ArchiveError("a postgresql:// archive needs psycopg: pip install 'table-controller[postgres]'")
        self.url = url
        self._where = redact(url)
        self._pool_size = pool_size
        self._timeout = timeout
        self._lock = threading.Lock()  # one slice at a time from this process (its order is the chain's)
        self._renewing = threading.Lock()
        self._closed = False
        self._pool = self._open_pool()
        try:
            self._migrate()
        except ArchiveError:
            self._pool.close()
            raise
        except Exception as e:  # psycopg's and the pool's errors: the server cannot be used
            self._pool.close()
            raise self._failure("cannot open", e) from e

    def _open_pool(self) -> ConnectionPool[Any]:
        # one plain connection first: a server that is down refuses it at once, with the reason
        # (the pool would only say "pool initialization incomplete" after its timeout)
        try:
            psycopg.connect(self.url, connect_timeout=max(1, round(self._timeout))).close()
        except psycopg.Error as e:
            raise self._failure("cannot open", e) from e
        # no check on each checkout (a round trip per query): a connection a restarted server
        # broke fails its first query, the pool discards it, and _with_connection tries once more
        pool: ConnectionPool[Any] = ConnectionPool(self.url, min_size=1, max_size=self._pool_size,
                                                   timeout=self._timeout, open=False,
                                                   kwargs={"autocommit": True})
        try:
            pool.open(wait=True, timeout=self._timeout)
        except Exception as e:
            pool.close()
            raise self._failure("cannot open", e) from e
        return pool

    def _renew_pool(self, stale: ConnectionPool[Any]) -> bool:
        """A new pool in place of ``stale`` when the server answers again; False while it does not.

        psycopg_pool retries a lost server with a backoff that doubles up to minutes, so after a
        long outage its pool can stay empty long after the server is back; the archive would then
        report "down" for those minutes. A pool that failed to connect and whose checkout timed
        out is replaced as soon as a new one can connect (once per outage: the new pool has
        failed nothing yet)."""
        if self._pool is not stale:  # another thread renewed it meanwhile
            return True
        if not stale.get_stats().get("connections_errors"):
            return False  # a healthy pool, only busy: every connection in use for `timeout`
        if not self._renewing.acquire(blocking=False):
            return False  # another thread is trying (its probe may take a connect timeout)
        try:
            if self._pool is not stale:  # another thread renewed it meanwhile
                return True
            if self._closed:
                return False
            try:  # (a server still down refuses _open_pool's first connection at once)
                fresh = self._open_pool()
            except ArchiveError:
                return False
            self._pool = fresh
        finally:
            self._renewing.release()
        stale.close(timeout=1.0)  # connections still out are closed when they come back
        return True

    def _failure(self, doing: str, e: Exception) -> ArchiveError:
        """The error to raise for a failed call: :class:`ArchiveUnavailable` when the server
        cannot be reached (no connection in time, a connection lost, a server starting up),
        else :class:`ArchiveError`, which a service does not wait out: among them a server
        that answers but refuses this location for good (:data:`REFUSED_FOR_GOOD`)."""
        down = isinstance(e, PoolTimeout | psycopg.OperationalError | psycopg.InterfaceError) \
            and not any(words in str(e) for words in REFUSED_FOR_GOOD)
        return (ArchiveUnavailable if down else ArchiveError)(f"archive {self._where}: {doing}: {e}")

    def _with_connection(self, doing: str, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """``work`` on a pooled connection; once more on a fresh one when the first was dropped by
        the server (a restart: the pool discards a broken connection when it comes back), or on a
        new pool when the old one could not give a connection in time. ``work`` must be safe to
        repeat: one transaction, or a read."""
        for attempt in (1, 2):
            pool = self._pool
            try:
                with pool.connection() as conn:
                    return work(conn)
            except ArchiveError:
                raise
            except (psycopg.OperationalError, psycopg.InterfaceError) as e:
                if attempt == 2:
                    raise self._failure(doing, e) from e
                if isinstance(e, PoolClosed) and self._pool is not pool:
                    continue  # renewed by another thread while this one waited on the old pool
                if isinstance(e, PoolTimeout) and not self._renew_pool(pool):
                    raise self._failure(doing, e) from e
            except Exception as e:
                raise self._failure(doing, e) from e
        raise AssertionError("unreachable")

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return self._with_connection("cannot read", lambda conn: conn.execute(sql, params).fetchall())

    # -- schema --------------------------------------------------------------------------
    def _migrate(self) -> None:
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)")
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            version = int(row[0]) if row else 0
            latest = MIGRATIONS[-1][0]
            if version > latest:
                raise ArchiveError(f"archive {self._where} has schema {version}; this version knows up to {latest}")
            for number, statements in MIGRATIONS:
                if number <= version:
                    continue
                with conn.transaction():  # a savepoint: each migration whole or not at all
                    for sql in statements:
                        conn.execute(sql)
                    conn.execute("DELETE FROM schema_version")
                    conn.execute("INSERT INTO schema_version VALUES (%s)", (number,))

    @property
    def schema_version(self) -> int:
        return int(self._read("SELECT version FROM schema_version")[0][0])

    # -- writing -------------------------------------------------------------------------
    def last(self, table: str) -> tuple[int, str]:
        rows = self._read("SELECT seq, hash FROM table_heads WHERE tbl = %s", (table,))
        return (int(rows[0][0]), str(rows[0][1])) if rows else (0, GENESIS_HASH)

    def append(self, slice_: ReplaySlice, archived_at: str) -> int:
        if not slice_.events:
            return 0
        rows = slice_rows(slice_, archived_at)
        last_seq, last_hash = rows[-1][1], rows[-1][6]

        def write(conn: psycopg.Connection[Any]) -> None:
            with conn.transaction():
                conn.execute("INSERT INTO table_heads VALUES (%s, 0, %s) ON CONFLICT (tbl) DO NOTHING",
                             (slice_.table, GENESIS_HASH))
                row = conn.execute("SELECT seq, hash FROM table_heads WHERE tbl = %s FOR UPDATE",
                                   (slice_.table,)).fetchone()
                assert row is not None  # inserted just above when it was not there
                check_continues(slice_, int(row[0]), str(row[1]))
                with conn.cursor() as cur, cur.copy(f"COPY events ({COLUMNS}) FROM STDIN") as copy:
                    for r in rows:
                        copy.write_row(r)
                conn.execute("UPDATE table_heads SET seq = %s, hash = %s WHERE tbl = %s",
                             (last_seq, last_hash, slice_.table))

        with self._lock:
            self._with_connection(f"table {slice_.table}: cannot write", write)
        return len(rows)

    def alert(self, alert: ArchiveAlert) -> None:
        self._with_connection("cannot keep an alert", lambda conn: conn.execute(
            "INSERT INTO alerts (at, tbl, kind, text) VALUES (%s, %s, %s, %s)",
            (alert.at, alert.table, alert.kind, alert.text)))

    # -- reading -------------------------------------------------------------------------
    def tables(self) -> dict[str, tuple[int, str]]:
        rows = self._read("SELECT tbl, seq, hash FROM table_heads WHERE seq > 0 ORDER BY tbl")
        return {str(t): (int(s), str(h)) for t, s, h in rows}

    def events(self, table: str, after_seq: int = 0, limit: int | None = None) -> Iterator[ArchivedEvent]:
        rows = self._read(
            "SELECT tbl, seq, ts, type, round, body, hash FROM events WHERE tbl = %s AND seq > %s ORDER BY seq "
            "LIMIT %s", (table, after_seq, limit))
        for r in rows:
            yield ArchivedEvent(r[0], JournalRecord(int(r[1]), *r[2:]))

    def round_rows(self, table: str, round_id: str) -> list[JournalRecord]:
        rows = self._read("SELECT seq, ts, type, round, body, hash FROM events WHERE tbl = %s AND round = %s "
                          "ORDER BY seq", (table, round_id))
        return [JournalRecord(int(r[0]), *r[1:]) for r in rows]

    def rounds_rows(self, table: str, round_ids: Sequence[str]) -> dict[str, list[JournalRecord]]:
        out: dict[str, list[JournalRecord]] = {r: [] for r in round_ids}
        rows = self._read("SELECT seq, ts, type, round, body, hash FROM events WHERE tbl = %s AND round = ANY(%s) "
                          "ORDER BY seq", (table, list(out)))
        for r in rows:
            out[r[3]].append(JournalRecord(int(r[0]), *r[1:]))
        return out

    def round_starts(self, table: str, since_ts: str, until_ts: str, after_seq: int = 0,
                     limit: int = 100) -> list[tuple[str, str, int]]:
        rows = self._read(
            "SELECT round, ts, seq FROM events WHERE tbl = %s AND type = 'round.start' AND seq > %s "
            "AND ts >= %s AND ts < %s ORDER BY seq LIMIT %s", (table, after_seq, since_ts, until_ts, limit))
        return [(str(r), str(t), int(q)) for r, t, q in rows]

    def recent_settlements(self, table: str, limit: int = 20) -> list[JournalRecord]:
        rows = self._read(
            "SELECT seq, ts, type, round, body, hash FROM events WHERE tbl = %s "
            "AND type IN ('round.result', 'round.void') ORDER BY seq DESC LIMIT %s", (table, limit))
        return [JournalRecord(int(r[0]), *r[1:]) for r in rows]

    def typed_rows(self, table: str, types: Sequence[str], since_ts: str = "", until_ts: str = "~") -> list[
            JournalRecord]:
        rows = self._read(
            "SELECT seq, ts, type, round, body, hash FROM events WHERE tbl = %s AND type = ANY(%s) "
            "AND ts >= %s AND ts < %s ORDER BY seq", (table, list(types), since_ts, until_ts))
        return [JournalRecord(int(r[0]), *r[1:]) for r in rows]

    def settlements_after(self, cursor: dict[str, int], tables: list[str],
                          limit: int = 200) -> list[tuple[str, JournalRecord]]:
        out: list[tuple[str, JournalRecord]] = []
        for table in tables:
            rows = self._read(
                "SELECT seq, ts, type, round, body, hash FROM events WHERE tbl = %s AND seq > %s "
                "AND type IN ('round.result', 'round.void') ORDER BY seq LIMIT %s",
                (table, cursor.get(table, 0), limit))
            out += [(table, JournalRecord(int(r[0]), *r[1:])) for r in rows]
        return out

    # -- the studio API's keys -------------------------------------------------------------
    def add_api_key(self, key_hash: str, name: str, tables: list[str], created_at: str) -> int:
        rows = self._read("INSERT INTO api_keys (hash, name, tables, created_at) VALUES (%s, %s, %s, %s) "
                          "RETURNING id", (key_hash, name, json.dumps(tables), created_at))
        return int(rows[0][0])

    def revoke_api_key(self, number: int, revoked_at: str) -> bool:
        rows = self._read("UPDATE api_keys SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL RETURNING id",
                          (revoked_at, number))
        return bool(rows)

    def api_key_tables(self, key_hash: str) -> list[str] | None:
        rows = self._read("SELECT tables FROM api_keys WHERE hash = %s AND revoked_at IS NULL", (key_hash,))
        return [str(t) for t in json.loads(rows[0][0])] if rows else None

    def alerts(self, table: str | None = None) -> list[ArchiveAlert]:
        rows = self._read("SELECT at, tbl, kind, text FROM alerts WHERE %s::text IS NULL OR tbl = %s ORDER BY id",
                          (table, table))
        return [ArchiveAlert(*r) for r in rows]

    def close(self) -> None:
        with self._renewing:
            self._closed = True
            self._pool.close()

    def __enter__(self) -> PostgresArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
