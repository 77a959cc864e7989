"""What every archive backend is: the :class:`Archive` interface and the types it speaks.

An archive keeps every table's journaled events exactly once, keyed by (table,
seq), each with its body exactly as the table journaled it and its chain hash
(``hash = sha256(previous hash + body)``), so anyone can check an archived round
against the table's own journal. It is append-only. Backends (SQLite, PostgreSQL)
are chosen by name in :mod:`table_controller.archive.backends`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from table_controller.errors import TableError
from table_controller.event_types import EventError, decode_event
from table_controller.journal.store import JournalRecord
from table_controller.replay_client import ReplaySlice

GENESIS_HASH = "0" * 64


def redact(url: str) -> str:
    """The URL without its password, for messages and records (``user:pw@host`` -> ``user@host``;
    only the part before the path is looked at, so an ``@`` in the query is kept)."""
    if "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    netloc, tail = rest[:cut], rest[cut:]
    if "@" not in netloc:
        return url
    auth, host = netloc.rsplit("@", 1)
    return f"{scheme}://{auth.split(':', 1)[0]}@{host}{tail}"


class ArchiveError(TableError):
    """The archive cannot be opened or written, or a slice does not continue a table's chain."""


class ArchiveUnavailable(ArchiveError):
    """The archive's store cannot be reached right now (its server is down or does not answer
    in time): nothing about any one table, and every table would get the same."""


@dataclass(frozen=True)
class ArchiveAlert:
    """A studio alert the archive raised: a table whose chain broke, that fell behind or that
    cannot be reached."""

    at: str
    table: str
    kind: str  # chain-break, unreachable, refused, behind, fault
    text: str


class ArchivedEvent(NamedTuple):
    """One archived row: the table's journal record (seq, ts, type, round, body, hash) and
    which table it is of."""

    table: str
    record: JournalRecord


#: One row to store: (table, seq, ts, type, round, body, hash, archived_at).
EventRow = tuple[str, int, str, str, str | None, str, str, str]


def slice_rows(slice_: ReplaySlice, archived_at: str) -> list[EventRow]:
    """The rows of a verified slice, each body checked to be an event of this table at its
    seq (a hash can be computed over anything: the body must be the event it claims)."""
    rows: list[EventRow] = []
    for e in slice_.events:
        try:
            event = decode_event(e.body)
        except EventError as err:
            raise ArchiveError(f"table {slice_.table}: seq {e.seq} is not an event: {err}") from None
        if event.seq != e.seq or event.table != slice_.table:
            raise ArchiveError(f"table {slice_.table}: seq {e.seq} holds seq {event.seq} of table {event.table}")
        rows.append((slice_.table, e.seq, event.ts, event.type, event.round, e.body, e.hash, archived_at))
    return rows


def check_continues(slice_: ReplaySlice, seq: int, hash_: str) -> None:
    """Refuse a slice that does not start where the table's archive ends (seq, hash)."""
    if slice_.after_seq != seq or slice_.prev_hash != hash_:
        raise ArchiveError(
            f"table {slice_.table}: a slice after seq {slice_.after_seq} (hash {slice_.prev_hash[:12]}) "
            f"does not continue the archive at seq {seq} (hash {hash_[:12]})")


class Archive(Protocol):
    """The studio's archive, whatever keeps it. Every method may raise :class:`ArchiveError`
    (the store cannot be reached or refuses); none changes an archived event."""

    @property
    def schema_version(self) -> int: ...

    # -- writing
    def last(self, table: str) -> tuple[int, str]:
        """(seq, hash) of the table's last archived event; (0, 64 zeros) before any."""
        ...

    def append(self, slice_: ReplaySlice, archived_at: str) -> int:
        """Keep a verified slice's events, all or none; returns how many were kept. The slice
        must start where the table's archive ends, with its hash."""
        ...

    def alert(self, alert: ArchiveAlert) -> None: ...

    # -- reading
    def tables(self) -> dict[str, tuple[int, str]]:
        """Every archived table with its last (seq, hash)."""
        ...

    def events(self, table: str, after_seq: int = 0, limit: int | None = None) -> Iterator[ArchivedEvent]:
        """The table's archived events after ``after_seq``, in seq order."""
        ...

    def round_rows(self, table: str, round_id: str) -> list[JournalRecord]:
        """Every archived row of one round, in seq order."""
        ...

    def rounds_rows(self, table: str, round_ids: Sequence[str]) -> dict[str, list[JournalRecord]]:
        """Every archived row of each of the rounds, in seq order, in one read (a page of a
        round list: one query, not one a round)."""
        ...

    def round_starts(self, table: str, since_ts: str, until_ts: str, after_seq: int = 0,
                     limit: int = 100) -> list[tuple[str, str, int]]:
        """(round id, start ts, start seq) of the table's rounds started in [since, until),
        after the start seq ``after_seq`` (a cursor), in seq order."""
        ...

    def recent_settlements(self, table: str, limit: int = 20) -> list[JournalRecord]:
        """The table's last ``limit`` results and voids, newest first."""
        ...

    def typed_rows(self, table: str, types: Sequence[str], since_ts: str = "", until_ts: str = "~") -> list[
            JournalRecord]:
        """The table's rows of the given event types with ts in [since, until), in seq order
        (shoe changes, table states: the few rows statistics need beside the rounds)."""
        ...

    def settlements_after(self, cursor: dict[str, int], tables: list[str],
                          limit: int = 200) -> list[tuple[str, JournalRecord]]:
        """Results and voids of ``tables`` archived after ``cursor`` (table -> seq; a table not
        in it: from its start), table by table in seq order, at most ``limit`` a table."""
        ...

    # -- the studio API's keys
    def add_api_key(self, key_hash: str, name: str, tables: list[str], created_at: str) -> int: ...

    def revoke_api_key(self, number: int, revoked_at: str) -> bool:
        """Revoke key ``number`` (from then on it is refused); False when there is no such live key."""
        ...

    def api_key_tables(self, key_hash: str) -> list[str] | None:
        """The tables a (hashed) key may read, or None for no such key or a revoked one."""
        ...

    def alerts(self, table: str | None = None) -> list[ArchiveAlert]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Archive: ...

    def __exit__(self, *exc: object) -> None: ...
