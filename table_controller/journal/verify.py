"""``journal verify``: is the journal intact, gap-free, and does every result follow from its cards?

Reads the file read-only (safe beside a live controller) and streams it:

* SQLite's own ``PRAGMA quick_check`` on the file;
* seq runs 1, 2, 3, ... with no gap;
* every hash equals ``sha256(previous stored hash + stored text)``; each link is
  checked against the previous *stored* hash, so one changed event is reported
  at its own seq and a removed or reordered event where the chain breaks;
* every stored text decodes as a typed event (:func:`~table_controller.event_types.decode_event`)
  whose seq, type, round and ts match its row, of this journal's table and game;
* every round starts once and is settled once, and every ``round.result``
  equals what the rules core computes from the round's journaled cards
  (:mod:`table_controller.journal.round_check`, with the one replayer and re-judger
  :mod:`table_controller.journal.replay`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from table_controller.event_types import Event, EventError, decode_event
from table_controller.journal.errors import JournalError
from table_controller.journal.round_check import RoundAudit
from table_controller.journal.schema import GENESIS, chain_hash
from table_controller.journal.segments import PrunedSegment, Segment, read_pruned
from table_controller.journal.store import JournalReader, JournalRecord, SegmentReader

#: The report keeps this many problems and counts the rest.
MAX_PROBLEMS = 1000
#: ``progress`` is called every this many events (and once at the end).
PROGRESS_EVERY = 1000

Progress = Callable[[int, int], None]


@dataclass
class VerifyReport:
    """The outcome of :func:`verify_journal`: ok, counts, and every problem found, in seq order."""

    ok: bool
    events: int
    rounds: int
    results_checked: int
    problems: list[str]
    last_seq: int = 0
    last_hash: str = GENESIS
    problems_omitted: int = 0
    path: str = ""
    table: str = ""
    game: str = ""
    #: Segment files read (1 for a journal never rotated) and segments pruned before them.
    segments: int = 1
    pruned_segments: int = 0
    first_seq: int = 1

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Problems:
    items: list[str] = field(default_factory=list)
    omitted: int = 0

    def add(self, text: str) -> None:
        if len(self.items) < MAX_PROBLEMS:
            self.items.append(text)
        else:
            self.omitted += 1


def verify_journal(
    path: str | Path, *, variants_dir: Path | None = None, progress: Progress | None = None,
    checkpoints: Path | None = None, verify_key: Path | None = None,
) -> VerifyReport:
    """Check a journal file from end to end; see the module docstring for what is checked.

    With ``checkpoints`` and ``verify_key``: also every signed checkpoint against the
    journal (a deleted tail, an event changed under a checkpoint, changed meta or link).

    ``progress(done, total)`` is called as events are read. Raises
    :class:`~table_controller.journal.errors.JournalError` only when the file cannot
    be opened as a journal at all; everything else is a problem in the report.
    """
    problems = _Problems()
    with JournalReader(path) as reader:
        present = reader.segments()
        readable = _readable(reader, present, problems)
        total = sum(reader.segment_reader(s).event_count() for s in readable)
        for segment in readable:
            where = f"segment file {segment.name}" if len(present) > 1 else "the file"
            own = reader.segment_reader(segment)
            for line in _quick_check(own):
                problems.add(f"SQLite integrity check{' of ' + where if len(present) > 1 else ''}: {line}")
            for what in own.unguarded_changes():
                problems.add(f"{where} no longer refuses {what}: an append-only trigger was removed")
        default_variant = reader.variant or reader.game
        audit = RoundAudit(
            default_variant=default_variant, variants_dir=variants_dir, report=problems.add
        )
        expected_seq, prev_hash = 1, GENESIS
        segments = readable
        pruned = read_pruned(reader.path)
        if segments and segments[0].first_seq > 1:
            expected_seq, prev_hash = _after_pruned(reader, segments[0], pruned, problems)
        first_seq = expected_seq
        for problem in _segment_problems(reader, segments, pruned):
            problems.add(problem)
        count = 0
        for segment in segments:
            try:
                for record in reader.segment_reader(segment).records():
                    if record.seq != expected_seq:
                        missing = record.seq - expected_seq
                        span = (f"seq {expected_seq}" if missing == 1
                                else f"seqs {expected_seq}..{record.seq - 1}")
                        problems.add(f"seq gap before seq {record.seq}: {span} missing "
                                     f"({missing} event{'s' if missing > 1 else ''})")
                    if chain_hash(prev_hash, record.body) != record.hash:
                        problems.add(
                            f"seq {record.seq}: hash chain broken: the stored hash is not "
                            "sha256(previous hash + stored text) (this event or its hash was changed, "
                            "or the events before it were removed or reordered)"
                        )
                    event = _check_text(record, reader, problems)
                    if event is not None:
                        audit.add(record.seq, event)
                    prev_hash, expected_seq = record.hash, record.seq + 1
                    count += 1
                    if progress is not None and count % PROGRESS_EVERY == 0:
                        progress(count, total)
            except JournalError as e:
                problems.add(f"reading stopped after seq {expected_seq - 1}: {e}")
        audit.finish()
        if checkpoints is not None:
            from table_controller.journal.checkpoints import check_checkpoints, load_checkpoints

            if verify_key is None:
                raise JournalError("checking checkpoints needs the table's verify key (--verify-key)")
            def hash_at(seq: int) -> str | None:
                try:
                    return reader.hash_at(seq)
                except JournalError:
                    return None  # in a segment that cannot be read (reported above)

            def meta_at(seq: int) -> dict[str, str | None] | None:
                try:
                    return reader.meta_at(seq)
                except JournalError:
                    return None

            for problem in check_checkpoints(
                load_checkpoints(checkpoints), verify_key, table=reader.table,
                last_seq=expected_seq - 1, hash_at=hash_at, meta_at=meta_at,
                link_at_end=reader.link_state,
            ):
                problems.add(problem)
        if progress is not None:
            progress(count, total)
        return VerifyReport(
            ok=not problems.items,
            events=count,
            rounds=audit.rounds,
            results_checked=audit.results_checked,
            problems=problems.items,
            last_seq=expected_seq - 1,
            last_hash=prev_hash,
            problems_omitted=problems.omitted,
            path=str(reader.path),
            table=reader.table,
            game=reader.game,
            segments=len(segments),
            pruned_segments=len(pruned),
            first_seq=first_seq,
        )


def _readable(reader: JournalReader, present: list[Segment], problems: _Problems) -> list[Segment]:
    """The segments that open as journal files; each one that does not is a problem."""
    readable = []
    for segment in present:
        try:
            reader.segment_reader(segment).event_count()
        except JournalError as e:
            problems.add(f"segment file {segment.name} cannot be read: {e}")
            continue
        readable.append(segment)
    return readable


def _after_pruned(
    reader: JournalReader, first: Segment, pruned: list[PrunedSegment], problems: _Problems,
) -> tuple[int, str]:
    """Where the chain picks up when the oldest segments were pruned: the seq and hash
    ``pruned.jsonl`` recorded for the last pruned segment, which the first segment left
    must continue (or, unrecorded, a problem and that segment's own word for it)."""
    own = reader.segment_reader(first)
    for item in reversed(pruned):
        if item.last_seq == first.first_seq - 1:
            if item.last_hash != own.prev_hash:
                problems.add(
                    f"segment {first.name}: it says the chain before it ends in {own.prev_hash[:16]}..., "
                    f"but pruned.jsonl recorded {item.last_hash[:16]}... for segment {item.number}"
                )
            return first.first_seq, item.last_hash
    problems.add(
        f"seqs 1..{first.first_seq - 1} are missing: no segment holds them and pruned.jsonl "
        "does not record them as archived and pruned"
    )
    return first.first_seq, own.prev_hash


def _segment_problems(
    reader: JournalReader, segments: list[Segment], pruned: list[PrunedSegment],
) -> Iterator[str]:
    """Each segment is what its name says (number, first seq), the numbers run on, and the
    events it carries are those of the earlier segments still present."""
    pruned_numbers = {item.number for item in pruned}
    everything = reader.segments()
    for k, segment in enumerate(segments):
        own = reader.segment_reader(segment)
        if own.segment_number != segment.number or own.first_seq != segment.first_seq:
            yield (f"segment file {segment.name} holds segment {own.segment_number} starting at seq "
                   f"{own.first_seq}: renamed or swapped?")
        if k and segment.number != segments[k - 1].number + 1:
            yield f"segment files {segments[k - 1].name} and {segment.name}: the segments between are missing"
        elif k:
            before = reader.segment_reader(segments[k - 1])
            if (own.first_seq, own.prev_hash) != (before.last_seq + 1, before.last_hash):
                yield (f"segment {segment.name}: its meta says the chain before it ends at seq "
                       f"{own.first_seq - 1} with hash {own.prev_hash[:16]}..., segment {before.segment_number} "
                       f"ends at seq {before.last_seq} with {before.last_hash[:16]}...")
        if k == 0 and segment.number > 1 and not set(range(1, segment.number)) <= pruned_numbers:
            yield f"segments before {segment.name} are missing and not recorded as pruned"
        readable = {s.number for s in segments}
        for row in own.carried():
            holder = next((s for s in reversed(everything) if s.first_seq <= row.seq), None)
            if holder is None or holder.number not in readable or holder.number == segment.number:
                continue  # its segment was pruned (the archive holds it) or cannot be read
            stored = next(reader.segment_reader(holder).records(row.seq - 1, until_seq=row.seq), None)
            if stored is None or (stored.body, stored.hash) != (row.body, row.hash):
                yield (f"segment {segment.name}: carried event seq {row.seq} is not the event "
                       "the earlier segment holds at that seq")


def _quick_check(reader: SegmentReader) -> list[str]:
    try:
        return reader.quick_check()
    except JournalError as e:
        return [str(e)]


def _check_text(record: JournalRecord, reader: JournalReader, problems: _Problems) -> Event | None:
    """The typed event of a row, or None (with a problem) if its text is not a valid event."""
    where = f"seq {record.seq}"
    try:
        event = decode_event(record.body)
    except EventError as e:
        problems.add(f"{where}: stored text is not a valid event: {e}")
        return None
    columns = (("seq", record.seq, event.seq), ("type", record.type, event.type),
               ("round", record.round, event.round), ("ts", record.ts, event.ts))
    for key, value, said in columns:
        if said != value:
            problems.add(f"{where}: the row's {key} is {value!r} but its stored text says {said!r}")
    for key, value, said in (("table", reader.table, event.table), ("game", reader.game, event.game)):
        if said != value:
            problems.add(f"{where}: {key} {said!r} is not the journal's {key} {value!r}")
    return event
