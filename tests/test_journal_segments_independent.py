"""Our segmented journal against an independent implementation of docs/journal.md.

``benchmarks/independent/segmented_journal_verifier.py`` and ``segmented_journal_writer.py``
were written by a helper session from the documentation alone, without reading our code.
Both ways: the independent verifier checks journals our writer made, untouched and
tampered, and must reach the same verdict as ours; our reader and verifier read journals
the independent writer made, and what each segment carries is compared with our rule.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from table_controller.journal import Journal, JournalReader, verify_journal
from table_controller.journal.segments import carried_records, compress_file, list_segments, segments_dir
from tests.journal_helpers import TickingClock
from tests.test_journal_segments import all_records, archive_up_to, cli, play, rotated

INDEPENDENT = Path(__file__).resolve().parent.parent / "benchmarks" / "independent"
sys.path.insert(0, str(INDEPENDENT))

from segmented_journal_writer import write_segmented_journal  # noqa: E402


def independent_verdict(path: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(INDEPENDENT / "segmented_journal_verifier.py"), str(path), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    verdict: dict[str, Any] = json.loads(done.stdout)
    assert verdict["ok"] == (done.returncode == 0)
    return verdict


def edit_closed_event(path: Path) -> int:
    conn = sqlite3.connect(list_segments(path)[0].path, isolation_level=None)
    conn.execute("DROP TRIGGER events_are_append_only_update")
    conn.execute("UPDATE events SET body = body || ' ' WHERE seq = 9")
    conn.close()
    return 9


def wrong_prev_hash(path: Path) -> int:
    second = list_segments(path)[1]
    conn = sqlite3.connect(second.path, isolation_level=None)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'prev_hash'", ("ab" * 32,))
    conn.close()
    return second.first_seq


def missing_middle(path: Path) -> int:
    middle = list_segments(path)[1]
    middle.path.unlink()
    return middle.first_seq


def changed_carried(path: Path) -> None:
    conn = sqlite3.connect(list_segments(path)[-1].path, isolation_level=None)
    conn.execute("DROP TRIGGER carried_is_fixed_update")
    conn.execute("UPDATE carried SET body = body || ' ' WHERE seq = (SELECT max(seq) FROM carried)")
    conn.close()


def unrecorded_first_missing(path: Path) -> None:
    list_segments(path)[0].path.unlink()


def compressed_first(path: Path) -> None:
    first = list_segments(path)[0].path
    compress_file(first, first.with_name(first.name + ".xz"))
    first.unlink()


def pruned(path: Path) -> None:
    archive = path.with_name("archive.sqlite")
    archive_up_to(archive, path, all_records(path)[-1].seq)
    assert cli("journal", "prune", "--journal", str(path), "--archive", str(archive), "--keep", "1")[0] == 0


def pruned_with_a_wrong_hash(path: Path) -> None:
    pruned(path)
    log = segments_dir(path) / "pruned.jsonl"
    log.write_text(log.read_text().replace('"last_hash":"', '"last_hash":"0'))


def insert_or_replace(path: Path) -> None:
    conn = sqlite3.connect(list_segments(path)[0].path, isolation_level=None)
    conn.execute("DROP TRIGGER events_are_append_only_insert")
    conn.close()


CASES = {
    "untouched": None, "compressed": compressed_first, "pruned": pruned,
    "edited event": edit_closed_event, "wrong prev_hash": wrong_prev_hash, "missing middle": missing_middle,
    "changed carried row": changed_carried, "first segments gone, unrecorded": unrecorded_first_missing,
    "pruned.jsonl wrong hash": pruned_with_a_wrong_hash, "insert trigger dropped": insert_or_replace,
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_independent_verifier_agrees_with_ours(tmp_path: Path, case: str) -> None:
    path = rotated(tmp_path, shoes=3)
    change = CASES[case]
    named_seq = change(path) if change is not None else None
    ours, theirs = verify_journal(path), independent_verdict(path)
    if case == "insert trigger dropped":
        # the independent verifier was written before the spec named this trigger (its author
        # found the hole it closes): ours alone finds it
        assert not ours.ok and theirs["ok"]
        assert any("no longer refuses an INSERT at or below the last seq" in p for p in ours.problems)
        return
    assert theirs["ok"] == ours.ok, (case, ours.problems, theirs["problems"])
    assert theirs["ok"] == (case in ("untouched", "compressed", "pruned")), theirs["problems"]
    if ours.ok:
        assert (theirs["last_seq"], theirs["last_hash"]) == (ours.last_seq, ours.last_hash)
    if isinstance(named_seq, int):
        assert theirs["first_bad_seq"] == named_seq
        assert any(f"seq {named_seq}" in p or f"{named_seq}" in p for p in ours.problems), ours.problems


def test_a_journal_the_independent_writer_made_reads_and_verifies_here(tmp_path: Path) -> None:
    """Three shoes of rounds written by the independent writer, cut at round boundaries
    (some right before a new shoe, some mid-shoe), one segment compressed."""
    source, clock = tmp_path / "one-file.sqlite", TickingClock()
    with Journal(source, table="T01", game="baccarat") as journal:
        for k in range(3):
            play(journal, 4, clock=clock, first=4 * k + 1, seed=k)
    records = all_records(source)
    idle = [r.seq + 1 for r in records if r.type == "table.state" and '"idle"' in r.body][:-1]
    cuts = idle[1::3]
    assert len(cuts) >= 3
    path = tmp_path / "T01.sqlite"
    write_segmented_journal(path, "T01", "baccarat", [r.body for r in records], cuts, compress=[1])
    with JournalReader(path) as reader:
        assert [(r.seq, r.body, r.hash) for r in reader.records()] == [(r.seq, r.body, r.hash) for r in records]
        assert len(reader.segments()) == len(cuts) + 1 and reader.segments()[0].compressed
        for segment in reader.segments()[1:]:
            theirs = reader.segment_reader(segment).carried()
            before = [r for r in records if r.seq < segment.first_seq]
            ours = carried_records(before)
            assert [r.seq for r in theirs] == [r.seq for r in ours], segment.name
    report = verify_journal(path)
    # written before the spec asked for the INSERT guard (its author found that hole): the
    # one thing ours finds in it, in every segment
    assert report.problems and all("no longer refuses an INSERT at or below the last seq" in p
                                   for p in report.problems), report.problems
    assert len(report.problems) == report.segments == len(cuts) + 1
    assert (report.last_seq, report.last_hash) == (records[-1].seq, records[-1].hash)
    assert independent_verdict(path)["ok"]
