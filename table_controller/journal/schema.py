"""The journal's SQLite file: schema, identity checks, connections and the hash chain.

One file per table, or one per segment of it (:mod:`table_controller.journal.segments`).
``events`` holds each event exactly as
:func:`table_controller.events.to_json` wrote it (``body``), with its ``hash``:
``sha256(previous hash in hex + body)``, the first event chained to 64 zeros.
Triggers abort any UPDATE or DELETE of ``events``. ``meta`` says whose journal
it is (table, game, variant) and, in a segment, where it continues the chain from
(``segment``, ``first_seq``, ``prev_hash``); ``link`` holds the shoe link's resume
point; ``carried`` holds the earlier events a restart needs (copied at rotation).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from table_controller.journal.errors import JournalError, NotAJournal

#: ``PRAGMA application_id`` of a journal file: "TCJ1".
APPLICATION_ID = 0x54434A31
#: Version of the file layout below, stored in ``meta`` as ``format``. Format 2 added the
#: segment keys and the ``carried`` table; format 1 files (one file, no segments) are read
#: as segment 1 starting at seq 1.
FORMAT = "2"
READABLE_FORMATS = ("1", "2")
#: The previous hash of the first event.
GENESIS = "0" * 64
#: Milliseconds a connection waits for another one's lock before failing.
BUSY_TIMEOUT_MS = 5000

#: The columns of a journaled row, in ``events`` and, copied at rotation, in ``carried``.
ROW_COLUMNS = """
    seq   INTEGER PRIMARY KEY,
    ts    TEXT NOT NULL,
    type  TEXT NOT NULL,
    round TEXT,
    body  TEXT NOT NULL,
    hash  TEXT NOT NULL
"""

SCHEMA = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT
);
CREATE TABLE events ({ROW_COLUMNS});
CREATE INDEX events_by_round ON events(round) WHERE round IS NOT NULL;
CREATE TABLE link (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    boot_id   TEXT NOT NULL,
    shoe_seq  INTEGER NOT NULL,
    event_seq INTEGER NOT NULL
);
CREATE TABLE carried ({ROW_COLUMNS});
CREATE TRIGGER carried_is_fixed_update BEFORE UPDATE ON carried
BEGIN SELECT RAISE(ABORT, 'carried events are fixed at rotation: UPDATE refused'); END;
CREATE TRIGGER carried_is_fixed_delete BEFORE DELETE ON carried
BEGIN SELECT RAISE(ABORT, 'carried events are fixed at rotation: DELETE refused'); END;
CREATE TRIGGER events_are_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'journal events are append-only: UPDATE refused'); END;
CREATE TRIGGER events_are_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'journal events are append-only: DELETE refused'); END;
CREATE TRIGGER events_are_append_only_insert BEFORE INSERT ON events
WHEN NEW.seq <= (SELECT max(seq) FROM events)
BEGIN SELECT RAISE(ABORT, 'journal events are append-only: a seq at or below the last refused'); END;
""".replace("{ROW_COLUMNS}", ROW_COLUMNS)

#: Made once the carried rows are in: nothing is added to them afterwards.
CARRIED_SEALED = """
CREATE TRIGGER carried_is_fixed_insert BEFORE INSERT ON carried
BEGIN SELECT RAISE(ABORT, 'carried events are fixed at rotation: INSERT refused'); END;
"""

#: A row of ``carried`` (and of ``events``): seq, ts, type, round, body, hash.
CarriedRow = Sequence[Any]

REQUIRED_META = ("format", "table", "game")


def unguarded_changes(conn: sqlite3.Connection, file_format: str | None, has_carried: bool) -> list[str]:
    """The changes a journal file no longer refuses (empty when its triggers are intact).

    Tried, not looked up by name: the file's own tables and triggers are recreated in an
    empty database in memory, sample rows put in, and each change attempted there. So a
    file written by another implementation with triggers of other names is judged by what
    they do. Format 1 must refuse UPDATE and DELETE of events; format 2 also an INSERT
    at or below the last seq; a file with ``carried`` any change of it.
    """
    rows = conn.execute(
        "SELECT type, sql FROM sqlite_master WHERE sql IS NOT NULL AND type IN ('table', 'trigger') "
        "AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    sample = "INSERT INTO {}(seq, ts, type, round, body, hash) VALUES ({}, 't', 'x', NULL, 'b', 'h')"
    checks = [("UPDATE of events", "UPDATE events SET body = 'c' WHERE seq = 1"),
              ("DELETE from events", "DELETE FROM events WHERE seq = 1")]
    if file_format != "1":
        checks.append(("an INSERT at or below the last seq of events (INSERT OR REPLACE)",
                       sample.replace("INSERT", "INSERT OR REPLACE", 1).format("events", 1)))
    if has_carried:
        checks += [("UPDATE of carried", "UPDATE carried SET body = 'c' WHERE seq = 1"),
                   ("DELETE from carried", "DELETE FROM carried WHERE seq = 1"),
                   ("INSERT into carried", sample.format("carried", 3))]
    mem = sqlite3.connect(":memory:", isolation_level=None)
    try:
        for kind, sql in rows:
            if kind == "table":
                mem.execute(sql)
        for table in ("events", "carried") if has_carried else ("events",):
            for seq in (1, 2):
                mem.execute(sample.format(table, seq))
        for kind, sql in rows:
            if kind == "trigger":
                mem.execute(sql)
        unguarded = []
        for what, sql in checks:
            mem.execute("SAVEPOINT attempt")
            try:
                mem.execute(sql)
                unguarded.append(what)
            except sqlite3.DatabaseError:
                pass
            finally:
                mem.execute("ROLLBACK TO attempt")
                mem.execute("RELEASE attempt")
        return unguarded
    except sqlite3.DatabaseError as e:
        return [f"anything: its tables cannot be recreated to try its triggers ({e})"]
    finally:
        mem.close()


def chain_hash(prev_hash: str, body: str) -> str:
    """The hash of an event: SHA-256 of the previous hash (hex) followed by the stored text."""
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


def connect_writer(path: Path) -> sqlite3.Connection:
    """A read-write connection (creates the file); call :func:`configure_writer` once it is known
    to be a journal or empty, so that a foreign database is never switched to WAL."""
    if not path.parent.is_dir():
        raise JournalError(f"journal {path}: folder {path.parent} does not exist")
    try:
        return sqlite3.connect(
            str(path), isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
        )
    except sqlite3.Error as e:
        raise JournalError(f"journal {path}: cannot open: {e}") from e


def configure_writer(conn: sqlite3.Connection, path: Path) -> None:
    """WAL mode and ``synchronous=FULL``: a committed event survives kill -9 and power loss."""
    try:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        conn.execute("PRAGMA synchronous=FULL")
    except sqlite3.Error as e:
        raise JournalError(f"journal {path}: cannot switch to WAL mode: {e}") from e
    if str(mode).lower() != "wal":
        raise JournalError(f"journal {path}: SQLite refused WAL mode (journal_mode is {mode!r})")


def connect_reader(path: Path) -> sqlite3.Connection:
    """A read-only connection; works beside a live writer (WAL readers never block it)."""
    if not path.is_file():
        raise JournalError(f"journal {path}: no such file")
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(
            uri, uri=True, isolation_level=None, check_same_thread=False,
            timeout=BUSY_TIMEOUT_MS / 1000,
        )
    except sqlite3.Error as e:
        raise JournalError(f"journal {path}: cannot open read-only: {e}") from e
    return conn


def is_empty_database(conn: sqlite3.Connection, path: Path) -> bool:
    """True for a brand-new file: no tables and no application id."""
    try:
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    except sqlite3.DatabaseError as e:
        raise NotAJournal(f"journal {path}: not a table-controller journal ({e})") from e
    return bool(tables == 0 and app_id == 0)


def create_schema(
    conn: sqlite3.Connection, meta: dict[str, str | None], *,
    carried: Sequence[CarriedRow] = (), link: tuple[str, int, int] | None = None,
) -> None:
    """Lay out a new journal and store its meta, in one transaction.

    A new segment also gets the events a restart needs from before it (``carried``:
    seq, ts, type, round, body, hash) and the shoe link's resume point (``link``:
    boot id, shoe seq, event seq)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for statement in SCHEMA.split(";\n"):
            if statement.strip():
                conn.execute(statement)
        conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?)",
            [("format", FORMAT), *meta.items()],
        )
        conn.executemany(
            "INSERT INTO carried(seq, ts, type, round, body, hash) VALUES (?, ?, ?, ?, ?, ?)",
            [tuple(row) for row in carried],
        )
        if link is not None:
            conn.execute(
                "INSERT INTO link(id, boot_id, shoe_seq, event_seq) VALUES (1, ?, ?, ?)", link)
        conn.execute(CARRIED_SEALED)
        if carried:  # what the segment holds before its first event (its size trigger counts from here)
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute("INSERT INTO meta(key, value) VALUES ('base_pages', ?)", (str(pages),))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # a stop signal can land just after COMMIT: nothing is left to undo
            conn.execute("ROLLBACK")
        raise


def creating_path(path: Path) -> Path:
    """Where a new journal is laid out before it appears under its own name."""
    return path.with_name(path.name + ".creating")


def discard_unfinished_creation(path: Path) -> None:
    """Remove what a creation of ``path`` killed before it finished left behind.

    Call only while holding the journal's writer lock: then no creation is running.
    ``<journal>.creating`` is never the journal itself (at most a second name of it,
    when the kill came between giving the journal its name and removing this one).
    """
    tmp = creating_path(path)
    for leftover in (tmp, *(tmp.with_name(tmp.name + s) for s in ("-journal", "-wal", "-shm"))):
        try:
            leftover.unlink()
        except FileNotFoundError:
            pass
        except OSError as e:
            raise JournalError(f"journal {path}: cannot remove {leftover}: {e.strerror}") from e


def create_journal_file(
    path: Path, meta: dict[str, str | None], *,
    carried: Sequence[CarriedRow] = (), link: tuple[str, int, int] | None = None,
) -> None:
    """Create a new journal at ``path`` so that a kill at any instant leaves either no file
    at ``path`` or a whole journal: never an empty one that the next start must refuse as
    a truncated journal (:class:`JournalEmpty`).

    The schema and meta are committed (``synchronous=FULL``) in ``<journal>.creating``,
    which is then given the journal's name with a hard link (an existing file is never
    replaced) and the folder fsynced. Call while holding the writer lock, after
    :func:`discard_unfinished_creation`. When a file appeared at ``path`` meanwhile it is
    left as it is (the caller opens it like any existing file).
    """
    if not path.parent.is_dir():
        raise JournalError(f"journal {path}: folder {path.parent} does not exist")
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        # SQLite would replay it into the new file: the rest of a removed journal, not ours.
        raise JournalError(
            f"journal {path}: {wal} exists but the journal itself does not (was the journal "
            "removed without its -wal file?); move it away before a new journal is created"
        )
    tmp = creating_path(path)
    try:
        conn = sqlite3.connect(str(tmp), isolation_level=None)
    except sqlite3.Error as e:
        raise JournalError(f"journal {path}: cannot create {tmp}: {e}") from e
    try:
        conn.execute("PRAGMA synchronous=FULL")
        create_schema(conn, meta, carried=carried, link=link)
    except sqlite3.Error as e:
        raise JournalError(f"journal {path}: cannot create {tmp}: {e}") from e
    finally:
        conn.close()
    try:
        _fsync(tmp, os.O_RDONLY)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(tmp, path)
        _fsync(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        tmp.unlink(missing_ok=True)
    except OSError as e:
        raise JournalError(f"journal {path}: cannot create it from {tmp}: {e.strerror}") from e


def _fsync(path: Path, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_meta(conn: sqlite3.Connection, path: Path) -> dict[str, str | None]:
    """Check that ``conn`` is a journal and return its meta; :class:`NotAJournal` otherwise."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        if app_id != APPLICATION_ID:
            names = [
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            what = f"an SQLite database with tables {names}" if names else "an empty database"
            raise NotAJournal(
                f"journal {path}: not a table-controller journal ({what}, application_id "
                f"{app_id:#x} instead of {APPLICATION_ID:#x})"
            )
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as e:
        raise NotAJournal(f"journal {path}: not a table-controller journal ({e})") from e
    for key in REQUIRED_META:
        if not meta.get(key):
            raise NotAJournal(f"journal {path}: damaged journal: meta key {key!r} is missing")
    if meta["format"] not in READABLE_FORMATS:
        raise NotAJournal(
            f"journal {path}: journal format {meta['format']!r} is not supported (this version "
            f"reads formats {', '.join(READABLE_FORMATS)})"
        )
    return meta
