#!/usr/bin/env python3
"""Verify a (segmented) event journal from its written specification alone.

An independent second implementation of the file checks of docs/journal.md
("The file" and "Segments: a journal that does not grow for ever"), to test
another implementation against. Standard library only. It does NOT re-judge
game results.

    python segmented_journal_verifier.py JOURNAL_PATH [--json]

JOURNAL_PATH is the journal's configured path: a symbolic link to the live
segment of a segmented journal, or a plain one-file journal. Exit 0 when all
is well, 1 with problems, 2 when the path is not a journal.

What it checks: the segment files present and their names; each segment's
identity (application_id, meta) against its file name and the previous
segment; seqs 1, 2, 3, ... across segments; the hash chain across segments;
``pruned.jsonl`` when the first segments were pruned; that carried rows equal
the rows they copy (when that segment is present); the append-only triggers
(tried on an in-memory copy of the schema); SQLite's quick_check; that each
row's seq/type/round/ts columns match its JSON body (and table/game the meta).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import re
import sqlite3
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

APPLICATION_ID = 0x54434A31  # "TCJ1"
GENESIS_HASH = "0" * 64
SEGMENT_KEYS = ("segment", "first_seq", "prev_hash")
REQUIRED_META = ("format", "table", "game", "variant")
SEGMENT_NAME = re.compile(r"^(\d{6})-([1-9]\d*)\.sqlite(\.xz)?$")
LOOKS_LIKE_SEGMENT = re.compile(r"\.sqlite(\.xz)?$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
ROW_COLUMNS = ("seq", "ts", "type", "round", "body", "hash")
PRUNED_FIELDS = ("segment", "first_seq", "last_seq", "last_hash")


class NotAJournal(Exception):
    """The path (or a file it names) is not a journal."""


@dataclass(frozen=True)
class Problem:
    """One finding; ``seq`` is set for chain, seq and content problems."""

    text: str
    seq: int | None = None


@dataclass(frozen=True)
class SegmentFile:
    """A segment file found in the segments folder (or the one-file journal)."""

    number: int
    first_seq: int
    name: str
    path: Path
    compressed: bool


@dataclass
class Segment:
    """An opened segment: its identity and, after scanning, its extent."""

    file: SegmentFile
    connection: sqlite3.Connection
    meta: dict[str, str]
    number: int
    first_seq: int
    prev_hash: str
    is_live: bool = False
    count: int = 0
    last_seq: int = 0
    last_hash: str = GENESIS_HASH

    @property
    def label(self) -> str:
        """How problems name this segment."""
        return f"segment {self.file.name}"


@dataclass
class Cursor:
    """Where the seq sequence stands while segments are read in order."""

    next_seq: int
    going_back: bool = False  # inside a run of seqs that go back (reported once)


@dataclass
class Report:
    """The outcome of a verification."""

    problems: list[Problem] = field(default_factory=list)
    events: int = 0
    segments: int = 0
    last_seq: int = 0
    last_hash: str = GENESIS_HASH

    @property
    def ok(self) -> bool:
        """True when there is no problem."""
        return not self.problems

    @property
    def first_bad_seq(self) -> int | None:
        """The lowest seq named by a chain, seq or content problem."""
        seqs = [p.seq for p in self.problems if p.seq is not None]
        return min(seqs) if seqs else None

    def as_dict(self) -> dict[str, Any]:
        """The ``--json`` object."""
        return {
            "ok": self.ok,
            "problems": [p.text for p in self.problems],
            "first_bad_seq": self.first_bad_seq,
            "events": self.events,
            "segments": self.segments,
            "last_seq": self.last_seq,
            "last_hash": self.last_hash,
        }


# --------------------------------------------------------------------------- files


def chain_hash(previous_hash: str, body: str | bytes) -> str:
    """``sha256(previous hash in hex + body)`` over UTF-8, lowercase hex."""
    data = body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass")
    return hashlib.sha256(previous_hash.encode("ascii", "replace") + data).hexdigest()


def open_readonly(path: Path) -> sqlite3.Connection:
    """Open a SQLite file read-only (a live writer may be appending)."""
    connection = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    connection.execute("PRAGMA query_only = 1")
    return connection


def read_meta(connection: sqlite3.Connection) -> dict[str, str]:
    """The meta rows as text: columns ``key``/``value`` if so named, else the first two."""
    cursor = connection.execute("SELECT * FROM meta")
    names = [d[0].lower() for d in cursor.description]
    key_at = names.index("key") if "key" in names else 0
    value_at = names.index("value") if "value" in names else 1
    return {str(row[key_at]): "" if row[value_at] is None else str(row[value_at]) for row in cursor}


def read_identity(path: Path) -> tuple[sqlite3.Connection, dict[str, str]]:
    """Open a journal file and check it is one: application_id and a meta table."""
    if not path.is_file():
        raise NotAJournal(f"{path}: no such file")
    try:
        connection = open_readonly(path)
        application_id = connection.execute("PRAGMA application_id").fetchone()[0]
    except sqlite3.Error as error:
        raise NotAJournal(f"{path}: not a SQLite database ({error})") from error
    if application_id != APPLICATION_ID:
        connection.close()
        raise NotAJournal(f"{path}: application_id is {application_id:#x}, not {APPLICATION_ID:#x}")
    try:
        meta = read_meta(connection)
    except sqlite3.Error as error:
        connection.close()
        raise NotAJournal(f"{path}: no readable meta ({error})") from error
    missing = [key for key in REQUIRED_META if key not in meta]
    if missing:
        connection.close()
        raise NotAJournal(f"{path}: meta lacks {', '.join(missing)}")
    return connection, meta


def unpack_xz(packed: Path, scratch: Path) -> Path:
    """Unpack ``NNNNNN-FIRST.sqlite.xz`` into the scratch folder; the plain copy's path."""
    target = scratch / packed.name[: -len(".xz")]
    with lzma.open(packed, "rb") as source, open(target, "wb") as sink:
        while chunk := source.read(1 << 20):
            sink.write(chunk)
    return target


def list_segment_files(folder: Path) -> tuple[list[SegmentFile], list[Problem]]:
    """The segment files of the folder by number; a plain file wins over its ``.xz``."""
    problems: list[Problem] = []
    by_number: dict[int, list[SegmentFile]] = {}
    for entry in sorted(folder.iterdir()):
        name = entry.name
        match = SEGMENT_NAME.match(name)
        if match is None:
            if LOOKS_LIKE_SEGMENT.search(name):
                problems.append(Problem(f"{name}: not a segment name (NNNNNN-FIRST.sqlite[.xz])"))
            continue
        number, first = int(match.group(1)), int(match.group(2))
        if number == 0:
            problems.append(Problem(f"{name}: segment numbers start at 1"))
            continue
        by_number.setdefault(number, []).append(SegmentFile(number, first, name, entry, bool(match.group(3))))
    chosen: list[SegmentFile] = []
    for number in sorted(by_number):
        candidates = by_number[number]
        plain = [c for c in candidates if not c.compressed]
        packed = [c for c in candidates if c.compressed]
        if len(plain) > 1 or len(packed) > 1 or len({c.first_seq for c in candidates}) > 1:
            names = ", ".join(c.name for c in candidates)
            problems.append(Problem(f"segment {number}: more than one file ({names})"))
        chosen.append(plain[0] if plain else packed[0])
    return chosen, problems


# --------------------------------------------------------------------------- layout


@dataclass
class Layout:
    """What the journal path leads to."""

    folder: Path | None
    live: Path | None
    files: list[SegmentFile]
    problems: list[Problem]


def resolve_layout(path: Path) -> Layout:
    """Follow the journal path: a link into ``<path>.segments`` or a one-file journal."""
    if not path.is_symlink():
        if not path.is_file():
            raise NotAJournal(f"{path}: no such file")
        return Layout(None, path, [SegmentFile(1, 1, path.name, path, False)], [])
    folder = path.with_name(path.name + ".segments")
    target = Path(os.path.realpath(path))
    problems: list[Problem] = []
    if not folder.is_dir():
        if not target.is_file():
            raise NotAJournal(f"{path}: a link to {os.readlink(path)}, which does not exist")
        problems.append(Problem(f"{path.name}: no segments folder {folder.name}"))
        return Layout(None, target, [SegmentFile(1, 1, target.name, target, False)], problems)
    files, listing_problems = list_segment_files(folder)
    problems.extend(listing_problems)
    live = target if target.is_file() else None
    if live is None:
        problems.append(Problem(f"{path.name}: the live segment {os.readlink(path)} does not exist"))
    elif Path(os.path.realpath(live.parent)) != Path(os.path.realpath(folder)):
        problems.append(Problem(f"{path.name}: links to {os.readlink(path)}, outside {folder.name}"))
    elif live.name.endswith(".xz"):
        problems.append(Problem(f"{path.name}: the live segment {live.name} is compressed"))
    elif not any(f.path.name == live.name for f in files):
        problems.append(Problem(f"{path.name}: the live segment {live.name} is not among the segment files"))
    return Layout(folder, live, files, problems)


def open_segments(layout: Layout, scratch: Path) -> tuple[list[Segment], list[Problem]]:
    """Open every segment file; one that is no journal is a problem (and left out)."""
    segments: list[Segment] = []
    problems: list[Problem] = []
    for file in layout.files:
        readable = unpack_xz(file.path, scratch) if file.compressed else file.path
        try:
            connection, meta = read_identity(readable)
        except (NotAJournal, OSError, lzma.LZMAError) as error:
            problems.append(Problem(f"segment {file.name}: not a journal: {error}"))
            continue
        first_seq, prev_hash = effective_start(meta)
        is_live = layout.live is not None and file.path.name == layout.live.name and layout.folder is not None
        segments.append(Segment(file, connection, meta, file.number, first_seq, prev_hash,
                                is_live=is_live or layout.folder is None))
    return segments, problems


def effective_start(meta: dict[str, str]) -> tuple[int, str]:
    """``(first_seq, prev_hash)`` from meta; a one-file journal starts at 1 after the genesis hash."""
    if all(key in meta for key in SEGMENT_KEYS):
        try:
            return int(meta["first_seq"]), meta["prev_hash"]
        except ValueError:
            return 0, meta["prev_hash"]
    return 1, GENESIS_HASH


# --------------------------------------------------------------------------- one segment


def check_meta(segment: Segment) -> list[Problem]:
    """The segment's meta against its file name (and what a segment's meta holds)."""
    meta, file, label = segment.meta, segment.file, segment.label
    problems: list[Problem] = []
    if meta["format"] not in ("1", "2"):
        problems.append(Problem(f"{label}: meta format is {meta['format']!r}, not 1 or 2"))
    present = [key for key in SEGMENT_KEYS if key in meta]
    if present and len(present) != len(SEGMENT_KEYS):
        problems.append(Problem(f"{label}: meta has {', '.join(present)} but not all of {', '.join(SEGMENT_KEYS)}"))
    if len(present) == len(SEGMENT_KEYS):
        problems.extend(check_segment_keys(segment))
    elif file.number != 1 or file.first_seq != 1:
        problems.append(Problem(f"{label}: meta has no segment keys, so it is segment 1 from seq 1, "
                                f"but its name says segment {file.number} from seq {file.first_seq}"))
    return problems


def check_segment_keys(segment: Segment) -> list[Problem]:
    """``segment``, ``first_seq``, ``prev_hash`` against the file name and their own form."""
    meta, file, label = segment.meta, segment.file, segment.label
    problems: list[Problem] = []
    if meta["format"] != "2":
        problems.append(Problem(f"{label}: meta has segment keys but format {meta['format']!r}, not 2"))
    if meta["segment"] != str(file.number):
        problems.append(Problem(f"{label}: meta segment is {meta['segment']!r}, its name says {file.number}"))
    if meta["first_seq"] != str(file.first_seq):
        problems.append(Problem(f"{label}: meta first_seq is {meta['first_seq']!r}, its name says {file.first_seq}",
                                seq=min(file.first_seq, segment.first_seq or file.first_seq)))
    if not HEX64.match(meta["prev_hash"]):
        problems.append(Problem(f"{label}: meta prev_hash {meta['prev_hash']!r} is not 64 lowercase hex digits",
                                seq=segment.first_seq or None))
    if file.number == 1 and (segment.first_seq != 1 or meta["prev_hash"] != GENESIS_HASH):
        problems.append(Problem(f"{label}: segment 1 must start at seq 1 after the genesis hash", seq=1))
    return problems


def check_identity_matches(segment: Segment, reference: Segment) -> list[Problem]:
    """Every segment is of the same table and game as the live one."""
    return [Problem(f"{segment.label}: meta {key} is {segment.meta[key]!r}, "
                    f"the live segment's is {reference.meta[key]!r}")
            for key in ("table", "game") if segment.meta[key] != reference.meta[key]]


def check_quick(segment: Segment) -> list[Problem]:
    """SQLite's ``PRAGMA quick_check``."""
    try:
        results = [row[0] for row in segment.connection.execute("PRAGMA quick_check")]
    except sqlite3.Error as error:
        return [Problem(f"{segment.label}: quick_check failed: {error}")]
    return [] if results == ["ok"] else [Problem(f"{segment.label}: quick_check: {'; '.join(map(str, results[:5]))}")]


def table_exists(connection: sqlite3.Connection, table: str) -> bool:
    """Whether the file has this table."""
    row = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    return row is not None


def unrefused_changes(connection: sqlite3.Connection, table: str) -> list[str]:
    """The changes of ``table`` its triggers let through, tried on an in-memory copy of the schema.

    Each column is updated and all rows deleted; any that succeeds is named.
    """
    schema = connection.execute(
        "SELECT type, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'").fetchall()
    columns = [row[1] for row in connection.execute(f'PRAGMA table_info("{table}")')]
    sample = connection.execute(f'SELECT * FROM "{table}" LIMIT 1').fetchone()
    if sample is None:
        sample = tuple(1 if name == "seq" else "x" for name in columns)
    memory = sqlite3.connect(":memory:", isolation_level=None)
    try:
        for kind, sql in sorted(schema, key=lambda item: item[0] != "table"):
            if kind == "table":
                memory.execute(sql)
                if sql.split("(")[0].split()[-1].strip('"[]`') == table:
                    memory.execute(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(sample))})', sample)
        for kind, sql in schema:
            if kind != "table":
                try:
                    memory.execute(sql)
                except sqlite3.Error:
                    pass
        attempts = {f"UPDATE of {table}.{name}":
                    f'UPDATE "{table}" SET "{name}" = CASE WHEN typeof("{name}") = \'integer\' '
                    f'THEN "{name}" + 1000000 ELSE coalesce("{name}", \'\') || \'x\' END' for name in columns}
        attempts[f"DELETE from {table}"] = f'DELETE FROM "{table}"'
        return [label for label, statement in attempts.items() if succeeds(memory, statement)]
    finally:
        memory.close()


def succeeds(connection: sqlite3.Connection, statement: str) -> bool:
    """Run a statement in a transaction that is rolled back; whether it went through."""
    connection.execute("BEGIN")
    try:
        connection.execute(statement)
        return True
    except sqlite3.Error:
        return False
    finally:
        connection.execute("ROLLBACK")


def check_triggers(segment: Segment) -> list[Problem]:
    """``events`` (and ``carried``, where present) refuse every UPDATE and DELETE."""
    problems: list[Problem] = []
    tables = ["events"] + (["carried"] if table_exists(segment.connection, "carried") else [])
    for table in tables:
        try:
            holes = unrefused_changes(segment.connection, table)
        except sqlite3.Error as error:
            problems.append(Problem(f"{segment.label}: cannot check the triggers of {table}: {error}"))
            continue
        if holes:
            problems.append(Problem(
                f"{segment.label}: append-only triggers missing: {', '.join(holes)} is not refused"))
    return problems


def read_rows(connection: sqlite3.Connection, table: str) -> Iterator[tuple]:
    """Rows ``(seq, ts, type, round, body, hash)`` of ``events`` or ``carried`` in seq order."""
    yield from connection.execute(f'SELECT seq, ts, type, round, body, hash FROM "{table}" ORDER BY seq')


def content_problems(row: tuple, meta: dict[str, str], where: str) -> list[str]:
    """Why a row's columns and JSON body disagree (or the body is of another table/game)."""
    seq, ts, kind, round_id, body, _ = row
    try:
        event = json.loads(body)
    except (TypeError, ValueError) as error:
        return [f"{where}stored text is not JSON ({error})"]
    if not isinstance(event, dict):
        return [f"{where}stored text is not a JSON object"]
    reasons: list[str] = []
    if type(event.get("seq")) is not int or event.get("seq") != seq:
        reasons.append(f"{where}the text's seq is {event.get('seq')!r}, the row's {seq!r}")
    for column, value in (("type", kind), ("round", round_id), ("ts", ts)):
        if column not in event or event[column] != value:
            reasons.append(f"{where}the text's {column} is {event.get(column, '<missing>')!r}, the row's {value!r}")
    for key in ("table", "game"):
        if event.get(key) != meta[key]:
            reasons.append(f"{where}the text's {key} is {event.get(key)!r}, the journal's {meta[key]!r}")
    return reasons


def check_seq_order(seq: Any, cursor: Cursor) -> list[Problem]:
    """seq runs on from the last one seen (across segments)."""
    if type(seq) is not int:
        return [Problem(f"row with seq {seq!r}: seq is not an integer", seq=None)]
    problems: list[Problem] = []
    if seq > cursor.next_seq:
        missing = seq - cursor.next_seq
        span = f"seq {cursor.next_seq}" if missing == 1 else f"seqs {cursor.next_seq}..{seq - 1}"
        problems.append(Problem(f"seq gap before seq {seq}: {span} missing ({missing} event{'s' * (missing > 1)})",
                                seq=cursor.next_seq))
    elif seq < cursor.next_seq:
        if not cursor.going_back:
            problems.append(Problem(f"seq {seq}: out of order or repeated (seq {cursor.next_seq - 1} came before it; "
                                    f"the rows right after it that also go back are not listed)", seq=seq))
        cursor.going_back = True
        return problems
    cursor.going_back = False
    cursor.next_seq = seq + 1
    return problems


def scan_events(segment: Segment, journal_meta: dict[str, str], cursor: Cursor) -> list[Problem]:
    """Chain, seq order and content of every event row; records the segment's extent.

    Bodies are compared with the journal's (the live segment's) table and game.
    """
    problems: list[Problem] = []
    previous = segment.prev_hash
    segment.last_seq, segment.last_hash = segment.first_seq - 1, segment.prev_hash
    first_row = True
    for row in read_rows(segment.connection, "events"):
        seq, body, stored_hash = row[0], row[4], row[5]
        if first_row and seq != segment.first_seq:
            problems.append(Problem(f"{segment.label}: first event is seq {seq}, its meta first_seq says "
                                    f"{segment.first_seq}",
                                    seq=min(seq, segment.first_seq) if type(seq) is int else None))
        first_row = False
        problems.extend(check_seq_order(seq, cursor))
        if body is None or stored_hash != chain_hash(previous, body or ""):
            problems.append(Problem(f"seq {seq}: hash chain broken: the stored hash is not "
                                    f"sha256(previous hash + stored text) ({segment.label})", seq=seq))
        for reason in content_problems(row, journal_meta, ""):
            problems.append(Problem(f"seq {seq}: {reason} ({segment.label})", seq=seq))
        previous = stored_hash if isinstance(stored_hash, str) else ""
        segment.count += 1
        segment.last_seq, segment.last_hash = seq, previous
    return problems


# --------------------------------------------------------------------------- across segments


def check_succession(previous: Segment | None, segment: Segment) -> list[Problem]:
    """Numbers run on, and first_seq/prev_hash continue the previous segment."""
    if previous is None:
        return []
    problems: list[Problem] = []
    if segment.number != previous.number + 1:
        missing = f"segment {previous.number + 1}" if segment.number == previous.number + 2 else \
            f"segments {previous.number + 1}..{segment.number - 1}"
        problems.append(Problem(f"{missing} missing (between {previous.file.name} and {segment.file.name})",
                                seq=previous.last_seq + 1))
        return problems
    if segment.first_seq != previous.last_seq + 1:
        problems.append(Problem(f"{segment.label}: first_seq {segment.first_seq} is not the seq after "
                                f"{previous.label}'s last ({previous.last_seq})",
                                seq=min(segment.first_seq, previous.last_seq + 1)))
    if segment.prev_hash != previous.last_hash:
        problems.append(Problem(f"{segment.label}: prev_hash {segment.prev_hash[:12]}... is not the last hash of "
                                f"{previous.label} ({previous.last_hash[:12]}...)", seq=segment.first_seq))
    return problems


def drop_spares(segments: list[Segment]) -> tuple[list[Segment], list[Problem]]:
    """Segments after the live one: an empty one (an interrupted rotation) is left out; one with events is a problem."""
    live = next((s for s in segments if s.is_live), None)
    if live is None:
        return segments, []
    kept: list[Segment] = []
    problems: list[Problem] = []
    for segment in segments:
        if segment.number > live.number:
            has_events = segment.connection.execute("SELECT 1 FROM events LIMIT 1").fetchone() is not None
            if not has_events:
                continue
            problems.append(Problem(f"{segment.label}: comes after the live segment {live.file.name} "
                                    f"and has events (the link was set back?)"))
        kept.append(segment)
    return kept, problems


# --------------------------------------------------------------------------- pruned.jsonl


def read_pruned(folder: Path | None) -> tuple[list[dict[str, Any]], list[Problem]]:
    """The records of ``pruned.jsonl`` (none when there is no such file)."""
    if folder is None or not (folder / "pruned.jsonl").is_file():
        return [], []
    records: list[dict[str, Any]] = []
    problems: list[Problem] = []
    lines = (folder / "pruned.jsonl").read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as error:
            problems.append(Problem(f"pruned.jsonl line {number}: not JSON ({error})"))
            continue
        if not isinstance(record, dict) or any(key not in record for key in PRUNED_FIELDS) \
                or any(type(record[key]) is not int for key in PRUNED_FIELDS[:3]):
            problems.append(Problem(f"pruned.jsonl line {number}: needs segment, first_seq, last_seq (integers) "
                                    f"and last_hash"))
            continue
        records.append(record)
    return records, problems


def check_pruned_records(records: Sequence[dict[str, Any]]) -> list[Problem]:
    """Pruned segments run 1, 2, 3, ... and their seqs run on."""
    problems: list[Problem] = []
    expected_segment, expected_first = 1, 1
    for record in records:
        if record["segment"] != expected_segment:
            problems.append(Problem(
                f"pruned.jsonl: segment {record['segment']} where segment {expected_segment} was expected"))
        if record["first_seq"] != expected_first or record["last_seq"] < record["first_seq"] - 1:
            problems.append(Problem(f"pruned.jsonl: segment {record['segment']} covers seqs "
                                    f"{record['first_seq']}..{record['last_seq']}, expected from {expected_first}",
                                    seq=expected_first))
        if not isinstance(record["last_hash"], str) or not HEX64.match(record["last_hash"]):
            problems.append(Problem(f"pruned.jsonl: segment {record['segment']}: last_hash is not 64 hex digits"))
        expected_segment, expected_first = record["segment"] + 1, record["last_seq"] + 1
    return problems


def check_against_pruned(records: Sequence[dict[str, Any]], segments: Sequence[Segment]) -> list[Problem]:
    """The first segment left continues the last pruned one; a pruned one still present agrees with its record."""
    by_number = {s.number: s for s in segments}
    problems: list[Problem] = []
    for record in records:
        present = by_number.get(record["segment"])
        if present is not None and (present.last_seq != record["last_seq"] or present.last_hash != record["last_hash"]):
            problems.append(Problem(f"{present.label}: recorded as pruned in pruned.jsonl with last seq "
                                    f"{record['last_seq']} and hash {str(record['last_hash'])[:12]}..., "
                                    f"but holds up to seq {present.last_seq} with hash {present.last_hash[:12]}...",
                                    seq=min(present.last_seq, record["last_seq"]) + 1))
    if not records:
        return problems
    last = records[-1]
    following = by_number.get(last["segment"] + 1)
    if following is None:
        if segments and segments[0].number > last["segment"] + 1:
            problems.append(Problem(f"segments {last['segment'] + 1}..{segments[0].number - 1} missing and not in "
                                    f"pruned.jsonl", seq=last["last_seq"] + 1))
        return problems
    if following.first_seq != last["last_seq"] + 1:
        problems.append(Problem(f"{following.label}: first_seq {following.first_seq} does not follow the last pruned "
                                f"segment {last['segment']} (last seq {last['last_seq']})",
                                seq=min(following.first_seq, last["last_seq"] + 1)))
    if following.prev_hash != last["last_hash"]:
        problems.append(Problem(f"{following.label}: prev_hash {following.prev_hash[:12]}... is not the last_hash "
                                f"{str(last['last_hash'])[:12]}... of pruned segment {last['segment']}",
                                seq=following.first_seq))
    return problems


def expected_first_seq(first_present: Segment, records: Sequence[dict[str, Any]]) -> int:
    """The seq the first segment present should start with, given the pruned records.

    A segment recorded as pruned may still be present (a prune interrupted
    between its record and the removal): it is then read like any other.
    """
    if not records:
        return 1
    for record in records:
        if record["segment"] == first_present.number:
            return record["first_seq"]
    return records[-1]["last_seq"] + 1


def check_start(segments: Sequence[Segment], records: Sequence[dict[str, Any]]) -> list[Problem]:
    """Without pruned records the first segment present must be segment 1."""
    if records or not segments or segments[0].number == 1:
        return []
    return [Problem(f"segments 1..{segments[0].number - 1} missing and pruned.jsonl records none of them", seq=1)]


# --------------------------------------------------------------------------- carried


def holder_of(seq: int, segments: Sequence[Segment]) -> Segment | None:
    """The present segment whose events include ``seq``."""
    for segment in segments:
        if segment.first_seq <= seq <= segment.last_seq:
            return segment
    return None


def differing_columns(carried: tuple, original: tuple) -> list[str]:
    """Names of the columns where a carried row and its original differ."""
    return [name for name, a, b in zip(ROW_COLUMNS, carried, original, strict=False) if a != b]


def check_carried(segment: Segment, segments: Sequence[Segment]) -> list[Problem]:
    """Each carried row precedes the segment and equals the row it copies (when that segment is present)."""
    if not table_exists(segment.connection, "carried"):
        if segment.number > 1 and "segment" in segment.meta:
            return [Problem(f"{segment.label}: has no carried table")]
        return []
    problems: list[Problem] = []
    unanchored: dict[int, tuple] = {}
    for row in read_rows(segment.connection, "carried"):
        seq = row[0]
        if type(seq) is not int or seq >= segment.first_seq:
            problems.append(Problem(
                f"{segment.label}: carried seq {seq} is not before its first_seq {segment.first_seq}"))
            continue
        holder = holder_of(seq, segments)
        if holder is None:
            unanchored[seq] = row
            continue
        original = holder.connection.execute(
            "SELECT seq, ts, type, round, body, hash FROM events WHERE seq = ?", (seq,)).fetchone()
        if original is None:
            problems.append(Problem(f"{segment.label}: carried seq {seq} is not in {holder.label}"))
        elif tuple(original) != tuple(row):
            problems.append(Problem(f"{segment.label}: carried seq {seq} differs from the row in {holder.label} "
                                    f"({', '.join(differing_columns(row, original))})"))
    problems.extend(check_unanchored_carried(segment, unanchored))
    return problems


def check_unanchored_carried(segment: Segment, rows: dict[int, tuple]) -> list[Problem]:
    """Carried rows whose segment is gone: content, and the chain where neighbours are carried too."""
    problems: list[Problem] = []
    for seq, row in sorted(rows.items()):
        for reason in content_problems(row, segment.meta, ""):
            problems.append(Problem(f"{segment.label}: carried seq {seq}: {reason}"))
        before = rows.get(seq - 1)
        if before is not None and row[5] != chain_hash(before[5], row[4] or ""):
            problems.append(Problem(
                f"{segment.label}: carried seq {seq}: hash does not chain from carried seq {seq - 1}"))
        if seq == segment.first_seq - 1 and row[5] != segment.prev_hash:
            problems.append(Problem(f"{segment.label}: carried seq {seq}: hash is not the segment's prev_hash"))
    return problems


# --------------------------------------------------------------------------- whole journal


def check_segment(segment: Segment, live: Segment, cursor: Cursor) -> list[Problem]:
    """All checks of one segment on its own."""
    problems = check_meta(segment) + check_identity_matches(segment, live) + check_quick(segment)
    problems += check_triggers(segment)
    try:
        problems += scan_events(segment, live.meta, cursor)
    except sqlite3.Error as error:
        problems.append(Problem(f"{segment.label}: cannot read its events: {error}"))
    return problems


def verify(path: Path) -> Report:
    """Verify the journal at ``path``; raises NotAJournal when it is none."""
    layout = resolve_layout(path)
    report = Report(problems=list(layout.problems))
    with tempfile.TemporaryDirectory(prefix="journal-verify-") as scratch:
        segments, open_problems = open_segments(layout, Path(scratch))
        try:
            if layout.live is not None and not any(s.is_live for s in segments) and not layout.problems:
                reasons = "; ".join(p.text for p in open_problems if layout.live.name in p.text)
                raise NotAJournal(reasons or f"{path}: the live segment is not a journal")
            report.problems += open_problems
            verify_segments(segments, read_pruned(layout.folder), report)
        finally:
            for segment in segments:
                segment.connection.close()
    return report


def verify_segments(segments: list[Segment], pruned: tuple[list[dict[str, Any]], list[Problem]],
                    report: Report) -> None:
    """The per-segment and cross-segment checks, filling the report."""
    records, pruned_problems = pruned
    report.problems += pruned_problems + check_pruned_records(records)
    segments, spare_problems = drop_spares(segments)
    report.problems += spare_problems
    if not segments:
        report.problems.append(Problem("no segment of the journal could be read"))
        return
    live = next((s for s in segments if s.is_live), segments[-1])
    cursor = Cursor(next_seq=expected_first_seq(segments[0], records))
    previous: Segment | None = None
    for segment in segments:
        report.problems += check_segment(segment, live, cursor)
        report.problems += check_succession(previous, segment)
        previous = segment
    report.problems += check_start(segments, records) + check_against_pruned(records, segments)
    for segment in segments:
        report.problems += check_carried(segment, segments)
    report.events = sum(s.count for s in segments)
    report.segments = len(segments)
    report.last_seq, report.last_hash = segments[-1].last_seq, segments[-1].last_hash


# --------------------------------------------------------------------------- output


def print_text(path: Path, report: Report) -> None:
    """The human-readable report."""
    status = "OK" if report.ok else f"FAILED, {len(report.problems)} problem{'s' * (len(report.problems) != 1)}"
    print(f"journal {path}: {status}")
    for problem in report.problems[:50]:
        print(f"  - {problem.text}")
    if len(report.problems) > 50:
        print(f"  ... and {len(report.problems) - 50} more")
    print(f"  {report.events} events in {report.segments} segment(s), last seq {report.last_seq}")
    print(f"  last hash {report.last_hash}")


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Verify a segmented event journal (docs/journal.md).")
    parser.add_argument("journal", type=Path, help="the journal's configured path (link or one-file journal)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: exit 0 ok, 1 problems, 2 not a journal."""
    arguments = parse_arguments(argv)
    try:
        report = verify(arguments.journal)
    except NotAJournal as error:
        if arguments.json:
            print(json.dumps({"ok": False, "problems": [f"not a journal: {error}"], "first_bad_seq": None,
                              "events": 0, "segments": 0, "last_seq": 0, "last_hash": GENESIS_HASH}))
        else:
            print(f"not a journal: {error}", file=sys.stderr)
        return 2
    if arguments.json:
        print(json.dumps(report.as_dict()))
    else:
        print_text(arguments.journal, report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
