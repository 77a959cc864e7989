"""Property tests: any edit of any stored event is caught at its seq; batching never matters."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from journal_helpers import TickingClock, draft, tamper, write_rounds

from table_controller.journal import Journal, verify_journal

Pristine = tuple[Path, dict[int, str]]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Pristine:
    """A journal of two baccarat rounds and its stored texts by seq."""
    path = tmp_path_factory.mktemp("journal-props") / "pristine.sqlite"
    with Journal(path, table="T01", game="baccarat", variant="baccarat") as journal:
        write_rounds(journal, rounds=2)
    with Journal.open_readonly(path) as reader:
        return path, {r.seq: r.body for r in reader.records()}


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pick=st.integers(min_value=0, max_value=10_000),
    position=st.integers(min_value=0, max_value=10_000),
    replacement=st.characters(codec="utf-8", exclude_characters="\x00"),
)
def test_any_changed_character_of_any_event_breaks_the_chain_there(
    pristine: Pristine, pick: int, position: int, replacement: str
) -> None:
    source, bodies = pristine
    seq = pick % len(bodies) + 1
    body = bodies[seq]
    at = position % len(body)
    changed = body[:at] + replacement + body[at + 1:]
    if changed == body:
        changed = body[:at] + ("x" if body[at] != "x" else "y") + body[at + 1:]
    copy = source.with_name(f"copy-{seq}-{at}.sqlite")
    shutil.copyfile(source, copy)
    try:
        tamper(copy, "UPDATE events SET body = ? WHERE seq = ?", (changed, seq))
        problems = verify_journal(copy).problems
    finally:
        copy.unlink()
    chain = [p for p in problems if "hash chain broken" in p]
    assert chain[0].startswith(f"seq {seq}: hash chain broken")


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=8))
def test_seqs_are_consecutive_however_the_events_are_batched(sizes: list[int]) -> None:
    folder = Path(tempfile.mkdtemp(prefix="journal-batches-"))
    clock = TickingClock()
    try:
        with Journal(folder / "j.sqlite", table="T01", game="baccarat") as journal:
            seqs = []
            for size in sizes:
                drafts = [draft("table.state", None, clock=clock, state="idle", reason=None)
                          for _ in range(size)]
                seqs += [e.seq for e in journal.append(drafts)]
            assert seqs == list(range(1, sum(sizes) + 1))
        report = verify_journal(folder / "j.sqlite")
        assert (report.problems, report.events) == ([], sum(sizes))
    finally:
        shutil.rmtree(folder)
