"""A journal cut into segments: where they live, when to start a new one, what it carries.

With rotation on, the journal path a table is configured with (``T01.sqlite``) is a
symbolic link to the live segment in the folder beside it::

    T01.sqlite -> T01.sqlite.segments/000003-9120.sqlite     (live: written now)
    T01.sqlite.segments/000001-1.sqlite.xz                    (closed, compressed)
    T01.sqlite.segments/000002-4417.sqlite                    (closed)
    T01.sqlite.segments/pruned.jsonl                          (segments removed after archiving)

A segment's name is its number and its first seq, so every segment's range of seqs is
known from the names alone. Each segment is a whole journal file: its meta names the
segment, its first seq and the hash of the event before it (``prev_hash``), so the
chain goes on across segments; ``carried`` holds the earlier events a restart needs
(:func:`carried_records`), so a restart reads the live segment alone. SQLite follows
the link, so a segment's ``-wal`` lives beside the segment, never beside the link.

Everything here is file naming and pure selection; the writer (:class:`~table_controller.
journal.store.Journal`) rotates, the readers read across segments, ``journal prune``
compresses and prunes (:mod:`table_controller.journal.prune`).
"""

from __future__ import annotations

import json
import lzma
import os
import re
import shutil
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from table_controller.journal.store import JournalRecord

#: When a new segment is started: at each new shoe, at the first event of a new UTC day,
#: or when the live segment reaches its size; ``never`` keeps one file for ever.
RotateEvery = Literal["never", "shoe", "day", "size"]
ROTATE_EVERY: tuple[RotateEvery, ...] = ("never", "shoe", "day", "size")

#: How many of the last results and voids a new segment carries (the snapshot's history).
CARRIED_SETTLEMENTS = 100
#: At most this many events of the current shoe are carried (an eight-deck baccarat
#: shoe journals about 1,600 besides heartbeats).
CARRIED_SHOE_EVENTS = 10_000
#: The types whose last event a restart needs, whenever it was journaled.
CARRIED_LAST_OF = ("table.state", "dealer")

SEGMENT_NAME = re.compile(r"^(?P<number>\d{6})-(?P<first>\d+)\.sqlite(?P<xz>\.xz)?$")
PRUNED_LOG = "pruned.jsonl"


@dataclass(frozen=True)
class RotationPolicy:
    """When the writer starts a new segment (never inside a round).

    ``every``: the trigger (see :data:`RotateEvery`); ``max_bytes``: a live segment this
    large is closed whatever the trigger (except ``never``), at the next round boundary.
    """

    every: RotateEvery = "never"
    max_bytes: int = 256 * 1024 * 1024

    @property
    def enabled(self) -> bool:
        return self.every != "never"


@dataclass(frozen=True)
class Segment:
    """One segment file: its number, its first seq, where it is, and whether it is compressed."""

    number: int
    first_seq: int
    path: Path

    @property
    def compressed(self) -> bool:
        return self.path.name.endswith(".xz")

    @property
    def name(self) -> str:
        return segment_file_name(self.number, self.first_seq)


@dataclass(frozen=True)
class PrunedSegment:
    """A line of ``pruned.jsonl``: a segment removed once the archive held all of it."""

    number: int
    first_seq: int
    last_seq: int
    last_hash: str
    confirmed_by: str
    pruned_at: str


def segments_dir(journal: Path) -> Path:
    """The folder of a journal's segments: ``<journal>.segments``."""
    return journal.with_name(journal.name + ".segments")


def segment_file_name(number: int, first_seq: int) -> str:
    return f"{number:06d}-{first_seq}.sqlite"


def is_segmented(journal: Path) -> bool:
    """True when the journal path is a link to a live segment (rotation was on)."""
    return journal.is_symlink()


def live_segment(journal: Path) -> Segment | None:
    """The segment the journal's link points at, or None for a one-file journal."""
    if not journal.is_symlink():
        return None
    target = journal.parent / os.readlink(journal)
    found = SEGMENT_NAME.match(target.name)
    if found is None:
        return None
    return Segment(int(found["number"]), int(found["first"]), target)


def list_segments(journal: Path) -> list[Segment]:
    """Every segment file present, in order (a compressed one where no plain copy is left).

    A one-file journal (rotation never on) is one segment: the file itself.
    """
    folder = segments_dir(journal)
    found: dict[int, Segment] = {}
    if folder.is_dir():
        for entry in sorted(folder.iterdir()):
            match = SEGMENT_NAME.match(entry.name)
            if match is None:
                continue
            number = int(match["number"])
            segment = Segment(number, int(match["first"]), entry)
            if number not in found or found[number].compressed:
                found[number] = segment
    live = live_segment(journal)
    if live is not None:
        found = {n: s for n, s in found.items() if n <= live.number}
        found[live.number] = live
    elif journal.is_file():
        found = {n: s for n, s in found.items() if n < 1}
        found[1] = Segment(1, 1, journal)
    return [found[n] for n in sorted(found)]


def read_pruned(journal: Path) -> list[PrunedSegment]:
    """The segments pruned so far (oldest first); a damaged line is skipped."""
    log = segments_dir(journal) / PRUNED_LOG
    try:
        lines = log.read_text().splitlines()
    except OSError:
        return []
    pruned = []
    for line in lines:
        try:
            item = json.loads(line)
            pruned.append(PrunedSegment(
                number=int(item["segment"]), first_seq=int(item["first_seq"]),
                last_seq=int(item["last_seq"]), last_hash=str(item["last_hash"]),
                confirmed_by=str(item.get("confirmed_by", "")), pruned_at=str(item.get("pruned_at", "")),
            ))
        except (ValueError, KeyError, TypeError):
            continue
    return pruned


def record_pruned(journal: Path, pruned: PrunedSegment) -> None:
    """Append one line to ``pruned.jsonl``, fsynced, before the segment's file is removed."""
    line = json.dumps({
        "segment": pruned.number, "first_seq": pruned.first_seq, "last_seq": pruned.last_seq,
        "last_hash": pruned.last_hash, "confirmed_by": pruned.confirmed_by, "pruned_at": pruned.pruned_at,
    }, separators=(",", ":"))
    with open(segments_dir(journal) / PRUNED_LOG, "a", encoding="utf-8") as out:
        out.write(line + "\n")
        out.flush()
        os.fsync(out.fileno())


def compress_file(source: Path, target: Path) -> None:
    """``source`` xz-compressed into ``target`` (written beside it, then renamed, fsynced)."""
    tmp = target.with_name(target.name + ".tmp")
    with open(source, "rb") as raw, lzma.open(tmp, "wb", preset=6) as packed:
        shutil.copyfileobj(raw, packed, 1 << 20)
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)


def decompress_file(source: Path, target: Path) -> None:
    """An ``.xz`` segment back into a plain SQLite file at ``target``."""
    with lzma.open(source, "rb") as packed, open(target, "wb") as raw:
        shutil.copyfileobj(packed, raw, 1 << 20)


def carried_records(
    records: Iterable[JournalRecord], *, settlements: int = CARRIED_SETTLEMENTS,
    shoe_events: int = CARRIED_SHOE_EVENTS, new_shoe_follows: bool = False,
) -> list[JournalRecord]:
    """Of the events before a new segment (in seq order), those a restart needs, in seq order.

    A restarted table rebuilds its state machine and its snapshot from them and the
    new segment's own events: the current shoe's events (cards for the deck check, cut
    and empty), every event from the last ``round.start`` on (round numbering, and the
    states after that round: idle, closed, a burn, a pause with its cause), the last
    ``table.state`` and ``dealer``, and the last ``settlements`` results and voids (the
    snapshot's history). Heartbeats never. Each of the first two parts is capped at its
    last ``shoe_events`` events (then starting at a round's start).

    ``new_shoe_follows``: the new segment's first batch announces a new shoe (a rotation
    per shoe), which resets everything the current shoe's events set: they are not carried.
    """
    since_shoe: deque[JournalRecord] = deque(maxlen=shoe_events)
    since_round: deque[JournalRecord] = deque(maxlen=shoe_events)
    recent: deque[JournalRecord] = deque(maxlen=settlements)
    last_of: dict[str, JournalRecord] = {}
    for record in records:
        if record.type == "heartbeat":
            continue
        if record.type == "shoe" and _shoe_event(record.body) == "new":
            since_shoe.clear()
        since_shoe.append(record)
        if record.type == "round.start":
            since_round.clear()
        since_round.append(record)
        if record.type in ("round.result", "round.void"):
            recent.append(record)
        if record.type in CARRIED_LAST_OF:
            last_of[record.type] = record
    shoe = () if new_shoe_follows else _from_a_round_boundary(list(since_shoe))
    last_round = _from_a_round_boundary(list(since_round))
    keep = {r.seq: r for r in (*shoe, *last_round, *recent, *last_of.values())}
    return [keep[seq] for seq in sorted(keep)]


def _from_a_round_boundary(records: Sequence[JournalRecord]) -> Sequence[JournalRecord]:
    """Drop leading events of a round whose ``round.start`` fell off a capped shoe."""
    for k, record in enumerate(records):
        if record.round is None or record.type == "round.start":
            return records[k:]
    return ()


def _shoe_event(body: str) -> str | None:
    try:
        value = json.loads(body).get("event")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
