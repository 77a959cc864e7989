"""Closed journal segments: list them, compress them, and prune those the archive holds.

``table-controller journal segments`` lists, ``journal prune`` compresses and prunes
(``docs/journal.md``). Both only touch *closed* segments: the live one (the journal
link's target) is the writer's. Pruning removes the oldest segments only, one after
the other, and only while the archive holds each one's last event with the same hash
(so, the chain being what it is, all of it): the segments left always continue the
chain from the last pruned one, which ``pruned.jsonl`` records.
"""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from table_controller.journal.errors import JournalError
from table_controller.journal.segments import (
    PrunedSegment,
    Segment,
    compress_file,
    decompress_file,
    list_segments,
    live_segment,
    record_pruned,
)
from table_controller.journal.store import JournalReader

#: ``confirm(table, seq, hash)``: True when the archive holds that event with that hash.
Confirm = Callable[[str, int, str], bool]
Progress = Callable[[str], None]


@dataclass(frozen=True)
class SegmentStatus:
    """One segment as ``journal segments`` reports it."""

    number: int
    file: str
    first_seq: int
    last_seq: int
    last_hash: str
    events: int
    bytes: int
    compressed: bool
    live: bool


def segment_statuses(journal: Path) -> list[SegmentStatus]:
    """Every segment present, oldest first, with its seqs, size and state."""
    live = live_segment(journal)
    out = []
    with JournalReader(journal) as reader:
        for segment in reader.segments():
            own = reader.segment_reader(segment)
            out.append(SegmentStatus(
                number=segment.number, file=segment.path.name, first_seq=own.first_seq,
                last_seq=own.last_seq, last_hash=own.last_hash, events=own.event_count(),
                bytes=_size(segment.path), compressed=segment.compressed,
                live=live is None or segment.number == live.number,
            ))
    return out


def closed_segments(journal: Path) -> list[Segment]:
    """The segments the writer no longer touches (none for a one-file journal)."""
    live = live_segment(journal)
    if live is None:
        return []
    return [s for s in list_segments(journal) if s.number < live.number]


def compress_closed(journal: Path, *, progress: Progress | None = None) -> list[str]:
    """xz-compress every closed segment not yet compressed; returns the files written.

    Each is folded into one file first (its WAL checkpointed, journal mode DELETE), the
    compressed copy is read back and compared by SHA-256 before the plain file goes.
    """
    done = []
    for segment in closed_segments(journal):
        if segment.compressed:
            continue
        if progress is not None:
            progress(f"compressing {segment.path.name}")
        _fold_wal(segment.path)
        packed = segment.path.with_name(segment.path.name + ".xz")
        compress_file(segment.path, packed)
        with tempfile.TemporaryDirectory(prefix="tc-journal-") as scratch:
            back = Path(scratch) / segment.path.name
            decompress_file(packed, back)
            if _sha256(back) != _sha256(segment.path):
                packed.unlink()
                raise JournalError(f"journal {journal}: {packed.name} does not unpack to {segment.path.name}")
        for leftover in (segment.path, *(segment.path.with_name(segment.path.name + s) for s in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
        done.append(packed.name)
    return done


def prune_archived(
    journal: Path, confirm: Confirm, *, confirmed_by: str, keep: int = 0,
    progress: Progress | None = None,
) -> list[PrunedSegment]:
    """Remove the oldest closed segments the archive holds, keeping the last ``keep`` closed ones.

    Stops at the first segment the archive does not hold yet (the ones after it stay
    too). Each removal is first written to ``pruned.jsonl`` (fsynced).
    """
    candidates = closed_segments(journal)
    candidates = candidates[: max(0, len(candidates) - keep)]
    pruned = []
    for segment in candidates:
        with JournalReader(journal) as reader:
            own = reader.segment_reader(segment)
            table, first, last, last_hash = own.table, own.first_seq, own.last_seq, own.last_hash
        if last >= first and not confirm(table, last, last_hash):
            if progress is not None:
                progress(f"{segment.path.name}: the archive does not hold seq {last} yet; stopping")
            break
        item = PrunedSegment(
            number=segment.number, first_seq=first, last_seq=last, last_hash=last_hash,
            confirmed_by=confirmed_by, pruned_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        record_pruned(journal, item)
        for leftover in (segment.path, *(segment.path.with_name(segment.path.name + s) for s in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
        if progress is not None:
            progress(f"pruned {segment.path.name} (seqs {first}..{last})")
        pruned.append(item)
    return pruned


def archive_confirmation(location: str) -> tuple[Confirm, Callable[[], None]]:
    """A ``confirm`` asking the archive at ``location`` (SQLite path or postgresql:// URL),
    and the function that closes it."""
    from table_controller.archive.backends import open_archive

    archive = open_archive(location)

    def confirm(table: str, seq: int, hash_: str) -> bool:
        for row in archive.events(table, after_seq=seq - 1, limit=1):
            return row.record.seq == seq and row.record.hash == hash_
        return False

    return confirm, archive.close


def _fold_wal(path: Path) -> None:
    """Fold a closed segment's WAL into it and leave it a single file."""
    try:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("PRAGMA journal_mode=DELETE")
        finally:
            conn.close()
    except sqlite3.Error as e:
        raise JournalError(f"journal segment {path}: cannot fold its WAL: {e}") from e


def _size(path: Path) -> int:
    total = 0
    for part in (path, path.with_name(path.name + "-wal")):
        try:
            total += part.stat().st_size
        except OSError:
            pass
    return total


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
