#!/usr/bin/env python3
"""Write a segmented event journal from its written specification alone.

An independent second implementation of the "Segments" section of
docs/journal.md, meant to produce reference journals for testing another
implementation's reader and verifier. Standard library only.

Library use::

    from segmented_journal_writer import write_segmented_journal
    write_segmented_journal(Path("T01.sqlite"), "T01", "baccarat", bodies, cut_before=[120, 300])

Command line::

    python segmented_journal_writer.py T01.sqlite --table T01 --game baccarat \
        --bodies events.jsonl --cut-before 120 300 [--compress 1 2]

``bodies`` are event JSON texts (events.md) that already carry their seq
1, 2, 3, ...; they are stored byte for byte as the ``body`` column.

Choices made where the specification is silent (see the report of this work):

* ``meta`` is a key/value table ``meta(key TEXT PRIMARY KEY, value TEXT)``;
  every value is stored as text (``format`` ``"2"``, ``segment`` ``"3"``,
  ``first_seq`` ``"9120"``).
* column types: ``seq INTEGER PRIMARY KEY``, the others ``TEXT``; ``round`` is
  NULL outside a round. ``carried`` has the same columns and key.
* ``link(boot_id TEXT, shoe_seq INTEGER, event_seq INTEGER)``, left empty.
* triggers ``events_no_update``, ``events_no_delete`` (and the same for
  ``carried``, plus ``carried_no_insert`` created after it is filled: "fixed").
* the link is relative (``T01.sqlite.segments/000002-41.sqlite``).
* the "current shoe" when no ``shoe`` new was journaled yet is the whole
  history; of a shoe with more than 10,000 events the last 10,000 are kept.
* "dealer events" are events whose type is ``dealer`` or starts with
  ``dealer.``; only the last one is carried (as for ``table.state``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import sqlite3
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

APPLICATION_ID = 0x54434A31  # "TCJ1"
SEGMENT_FORMAT = "2"
GENESIS_HASH = "0" * 64
SHOE_CARRY_LIMIT = 10_000
SETTLEMENT_CARRY_LIMIT = 100
SETTLEMENT_TYPES = frozenset({"round.result", "round.void"})

SCHEMA: tuple[str, ...] = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE events (seq INTEGER PRIMARY KEY, ts TEXT NOT NULL, type TEXT NOT NULL,"
    " round TEXT, body TEXT NOT NULL, hash TEXT NOT NULL)",
    "CREATE TABLE link (boot_id TEXT NOT NULL, shoe_seq INTEGER NOT NULL, event_seq INTEGER NOT NULL)",
    "CREATE TABLE carried (seq INTEGER PRIMARY KEY, ts TEXT NOT NULL, type TEXT NOT NULL,"
    " round TEXT, body TEXT NOT NULL, hash TEXT NOT NULL)",
    "CREATE TRIGGER events_no_update BEFORE UPDATE ON events"
    " BEGIN SELECT RAISE(ABORT, 'journal events are append-only'); END",
    "CREATE TRIGGER events_no_delete BEFORE DELETE ON events"
    " BEGIN SELECT RAISE(ABORT, 'journal events are append-only'); END",
    "CREATE TRIGGER carried_no_update BEFORE UPDATE ON carried"
    " BEGIN SELECT RAISE(ABORT, 'carried events are fixed'); END",
    "CREATE TRIGGER carried_no_delete BEFORE DELETE ON carried"
    " BEGIN SELECT RAISE(ABORT, 'carried events are fixed'); END",
)
CARRIED_SEAL = (
    "CREATE TRIGGER carried_no_insert BEFORE INSERT ON carried"
    " BEGIN SELECT RAISE(ABORT, 'carried events are fixed'); END"
)


@dataclass(frozen=True)
class Row:
    """One journal row: the columns of ``events`` (and ``carried``)."""

    seq: int
    ts: str
    type: str
    round: str | None
    body: str
    hash: str

    def as_tuple(self) -> tuple[int, str, str, str | None, str, str]:
        """The row in column order, for ``INSERT``."""
        return (self.seq, self.ts, self.type, self.round, self.body, self.hash)


def chain_hash(previous_hash: str, body: str) -> str:
    """``sha256(previous hash in hex + body)``, over UTF-8, in lowercase hex."""
    return hashlib.sha256((previous_hash + body).encode("utf-8")).hexdigest()


def build_rows(bodies: Sequence[str]) -> list[Row]:
    """Parse the bodies, check their seqs run 1, 2, 3, ... and chain them."""
    rows: list[Row] = []
    previous = GENESIS_HASH
    for expected_seq, body in enumerate(bodies, start=1):
        event = json.loads(body)
        if not isinstance(event, dict):
            raise ValueError(f"body {expected_seq} is not a JSON object")
        if event.get("seq") != expected_seq:
            raise ValueError(f"body {expected_seq} carries seq {event.get('seq')!r}, expected {expected_seq}")
        previous = chain_hash(previous, body)
        rows.append(Row(expected_seq, event["ts"], event["type"], event.get("round"), body, previous))
    return rows


def open_rounds_at(rows: Sequence[Row], cut_seq: int) -> str | None:
    """The round left open just before ``cut_seq`` (started, not settled), or None."""
    open_round: str | None = None
    for row in rows[: cut_seq - 1]:
        if row.type == "round.start":
            open_round = row.round
        elif row.type in SETTLEMENT_TYPES and row.round == open_round:
            open_round = None
    return open_round


def segment_bounds(count: int, cut_before: Iterable[int]) -> list[tuple[int, int]]:
    """``(first_seq, last_seq)`` of every segment; the last may be empty (last < first)."""
    cuts = sorted(set(cut_before))
    for cut in cuts:
        if not 2 <= cut <= count + 1:
            raise ValueError(f"cannot cut before seq {cut}: seqs run 1..{count}")
    firsts = [1, *cuts]
    lasts = [first - 1 for first in cuts] + [count]
    return list(zip(firsts, lasts, strict=False))


def is_dealer_event(row: Row) -> bool:
    """A ``dealer`` event (a type events.md does not define; see the module notes)."""
    return row.type == "dealer" or row.type.startswith("dealer.")


def last_index(history: Sequence[Row], wanted) -> int | None:
    """Index of the last row of ``history`` for which ``wanted(row)`` holds."""
    for index in range(len(history) - 1, -1, -1):
        if wanted(history[index]):
            return index
    return None


def select_carried(history: Sequence[Row]) -> list[Row]:
    """The rows a segment starting after ``history`` carries, in seq order.

    The current shoe's events (since the last ``shoe`` new, at most 10,000),
    every event from the last ``round.start`` on, the last ``table.state`` and
    dealer events, the last 100 ``round.result``/``round.void``; never a
    heartbeat.
    """
    chosen: dict[int, Row] = {}

    def keep(rows: Iterable[Row]) -> None:
        for row in rows:
            if row.type != "heartbeat":
                chosen[row.seq] = row

    shoe_start = last_index(history, lambda r: r.type == "shoe" and _shoe_event(r) == "new")
    shoe_rows = [r for r in history[shoe_start or 0:] if r.type != "heartbeat"]
    keep(shoe_rows[-SHOE_CARRY_LIMIT:])

    round_start = last_index(history, lambda r: r.type == "round.start")
    if round_start is not None:
        keep(history[round_start:])

    for wanted in (lambda r: r.type == "table.state", is_dealer_event):
        index = last_index(history, wanted)
        if index is not None:
            keep([history[index]])

    settlements = [r for r in history if r.type in SETTLEMENT_TYPES]
    keep(settlements[-SETTLEMENT_CARRY_LIMIT:])
    return [chosen[seq] for seq in sorted(chosen)]


def _shoe_event(row: Row) -> object:
    """The ``event`` field of a ``shoe`` row's body."""
    return json.loads(row.body).get("event")


def segment_file_name(number: int, first_seq: int) -> str:
    """``NNNNNN-FIRST.sqlite``."""
    return f"{number:06d}-{first_seq}.sqlite"


def segment_meta(table: str, game: str, variant: str, number: int, first_seq: int, prev_hash: str) -> dict[str, str]:
    """The ``meta`` rows of a segment (all values as text)."""
    return {
        "format": SEGMENT_FORMAT,
        "table": table,
        "game": game,
        "variant": variant,
        "segment": str(number),
        "first_seq": str(first_seq),
        "prev_hash": prev_hash,
    }


def create_segment_file(final: Path, meta: dict[str, str], events: Sequence[Row], carried: Sequence[Row]) -> None:
    """Create one segment whole: in ``<name>.creating``, then hard-linked to its name."""
    creating = final.with_name(final.name + ".creating")
    for leftover in (creating, Path(f"{creating}-wal"), Path(f"{creating}-shm"), Path(f"{creating}-journal")):
        leftover.unlink(missing_ok=True)
    connection = sqlite3.connect(creating, isolation_level=None)
    try:
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute("BEGIN")
        for statement in SCHEMA:
            connection.execute(statement)
        connection.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta.items())
        connection.executemany("INSERT INTO carried VALUES (?, ?, ?, ?, ?, ?)", [r.as_tuple() for r in carried])
        connection.execute(CARRIED_SEAL)
        connection.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", [r.as_tuple() for r in events])
        connection.execute("COMMIT")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
    os.link(creating, final)
    creating.unlink()
    fsync_folder(final.parent)


def fsync_folder(folder: Path) -> None:
    """fsync a folder so that names created in it survive a power loss."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def point_link(journal: Path, target: Path) -> None:
    """Make ``journal`` a symbolic link to ``target``: ``<journal>.next`` renamed over it."""
    spare = journal.with_name(journal.name + ".next")
    spare.unlink(missing_ok=True)
    os.symlink(os.path.relpath(target, journal.parent), spare)
    os.replace(spare, journal)
    fsync_folder(journal.parent)


def compress_segment(plain: Path) -> Path:
    """xz-compress a closed segment, check the copy, then remove the plain file."""
    packed = plain.with_name(plain.name + ".xz")
    data = plain.read_bytes()
    packed.write_bytes(lzma.compress(data, format=lzma.FORMAT_XZ))
    if hashlib.sha256(lzma.decompress(packed.read_bytes())).digest() != hashlib.sha256(data).digest():
        raise OSError(f"{packed}: compressed copy differs")
    plain.unlink()
    return packed


def write_segmented_journal(
    path: Path,
    table: str,
    game: str,
    bodies: list[str],
    cut_before: list[int],
    *,
    variant: str | None = None,
    compress: Iterable[int] = (),
    allow_cut_in_round: bool = False,
) -> None:
    """Write a segmented journal at ``path`` (a link to the live segment).

    A new segment starts before each seq of ``cut_before``; ``compress`` names
    closed segments (by number) to store as ``.sqlite.xz``. A cut inside an
    open round is refused unless ``allow_cut_in_round`` (the spec never does
    it; useful only to build bad journals).
    """
    path = Path(path)
    if path.exists() or path.is_symlink():
        raise FileExistsError(f"{path} exists")
    rows = build_rows(bodies)
    bounds = segment_bounds(len(rows), cut_before)
    for first, _ in bounds[1:]:
        open_round = open_rounds_at(rows, first)
        if open_round is not None and not allow_cut_in_round:
            raise ValueError(f"cut before seq {first} is inside round {open_round!r}")
    folder = path.with_name(path.name + ".segments")
    folder.mkdir()
    files: list[Path] = []
    for number, (first, last) in enumerate(bounds, start=1):
        prev_hash = rows[first - 2].hash if first > 1 else GENESIS_HASH
        meta = segment_meta(table, game, variant or game, number, first, prev_hash)
        carried = select_carried(rows[: first - 1]) if number > 1 else []
        target = folder / segment_file_name(number, first)
        create_segment_file(target, meta, rows[first - 1 : last], carried)
        files.append(target)
    point_link(path, files[-1])
    for number in sorted(set(compress)):
        if not 1 <= number < len(files):
            raise ValueError(f"segment {number} is not a closed segment")
        compress_segment(files[number - 1])


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Write a segmented journal (docs/journal.md) from event JSON lines.")
    parser.add_argument("journal", type=Path, help="the journal's path (becomes a link to the live segment)")
    parser.add_argument("--table", required=True)
    parser.add_argument("--game", required=True)
    parser.add_argument("--variant", default=None, help="meta variant (default: the game)")
    parser.add_argument("--bodies", type=Path, required=True,
                        help="file of event JSON texts, one a line, seq 1, 2, 3, ...")
    parser.add_argument("--cut-before", type=int, nargs="*", default=[], help="start a new segment before these seqs")
    parser.add_argument("--compress", type=int, nargs="*", default=[], help="closed segment numbers to xz-compress")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    arguments = parse_arguments(argv)
    bodies = [line for line in arguments.bodies.read_text(encoding="utf-8").splitlines() if line.strip()]
    write_segmented_journal(
        arguments.journal, arguments.table, arguments.game, bodies, arguments.cut_before,
        variant=arguments.variant, compress=arguments.compress,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
