"""Journal segments: rotation, the chain across segments, verify, restart after rotation."""

from __future__ import annotations

import os
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.event_types import Event, numbered, stamped
from table_controller.journal import Journal, JournalReader, verify_journal
from table_controller.journal.errors import JournalBroken, JournalError
from table_controller.journal.segments import (
    RotationPolicy,
    carried_records,
    compress_file,
    list_segments,
    segments_dir,
)
from table_controller.journal.store import JournalRecord
from table_controller.publish.snapshot import SnapshotState
from table_controller.rules import load_game
from table_controller.rules.cards import CODES, shuffled_shoe
from table_controller.table import IllegalInput, TableMachine
from table_controller.table import inputs as i
from tests.journal_helpers import TickingClock, draft, round_drafts

SHOE = RotationPolicy("shoe")


def play(journal: Journal, rounds: int, *, clock: TickingClock, first: int = 1, new_shoe: bool = True,
         seed: int = 5) -> list[Event]:
    """A new shoe, then ``rounds`` baccarat rounds, journaled as a table would."""
    game = load_game("baccarat")
    shoe = shuffled_shoe(game.decks, random.Random(seed))
    out: list[Event] = []
    if new_shoe:
        out += journal.append([draft("shoe", None, clock=clock, event="new", count=416)])
    for n in range(first, first + rounds):
        drafts, used = round_drafts(game, shoe, f"T01-{n:06d}", clock=clock)
        shoe = shoe[used:]
        for d in drafts:
            out += journal.append([d])
        out += journal.append([draft("table.state", None, clock=clock, state="idle", reason=None)])
    return out


def all_records(path: Path) -> list[JournalRecord]:
    with JournalReader(path) as reader:
        return list(reader.records())


# ---------------------------------------------------------------------------- rotation
def test_a_new_shoe_starts_a_new_segment_and_the_chain_goes_on(tmp_path: Path) -> None:
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    with Journal(path, table="T01", game="baccarat", rotation=SHOE) as journal:
        first = play(journal, 3, clock=clock)
        second = play(journal, 3, clock=clock, first=4, seed=6)
        assert journal.segment_number == 2 and journal.first_seq == first[-1].seq + 1
    assert path.is_symlink()
    names = [s.path.name for s in list_segments(path)]
    assert names == ["000001-1.sqlite", f"000002-{first[-1].seq + 1}.sqlite"]
    records = all_records(path)
    assert [r.seq for r in records] == list(range(1, len(first) + len(second) + 1))
    assert [r.event() for r in records] == first + second
    report = verify_journal(path)
    assert report.ok, report.problems
    assert (report.segments, report.events, report.results_checked) == (2, len(records), 6)


def test_the_first_shoe_does_not_rotate_an_empty_segment(tmp_path: Path) -> None:
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    with Journal(path, table="T01", game="baccarat", rotation=SHOE) as journal:
        play(journal, 1, clock=clock)
    assert len(list_segments(path)) == 1


def test_rotation_waits_for_the_round_to_end(tmp_path: Path) -> None:
    """A segment full in the middle of a round: the round stays whole in one segment."""
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    with Journal(path, table="T01", game="baccarat", rotation=RotationPolicy("size", max_bytes=1)) as journal:
        play(journal, 4, clock=clock)
    segments = list_segments(path)
    assert len(segments) >= 4
    with JournalReader(path) as reader:
        for segment in segments:
            rows = list(reader.segment_reader(segment).records())
            started = {r.round for r in rows if r.type == "round.start"}
            settled = {r.round for r in rows if r.type == "round.result"}
            assert started == settled, segment.name
    assert verify_journal(path).ok


def test_the_first_round_boundary_of_a_new_utc_day_starts_a_new_segment(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    clock = TickingClock(start=1796083200.0 - 30, step=1.0)  # 30 s before 2026-12-01T00:00Z
    with Journal(path, table="T01", game="baccarat", rotation=RotationPolicy("day")) as journal:
        events = play(journal, 3, clock=clock)
    segments = list_segments(path)
    assert len(segments) == 2
    with JournalReader(path) as reader:
        days = [{r.ts[:10] for r in reader.segment_reader(s).records()} for s in segments]
    # the round under way at midnight ends in the old segment; the next one starts the day's
    assert "2026-11-30" in days[0] and days[1] == {"2026-12-01"}
    assert all_records(path)[-1].seq == events[-1].seq


def test_a_one_file_journal_becomes_segment_one_at_its_first_rotation(tmp_path: Path) -> None:
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    with Journal(path, table="T01", game="baccarat") as journal:
        before = play(journal, 2, clock=clock)
    assert not path.is_symlink()
    with Journal(path, table="T01", game="baccarat", rotation=SHOE) as journal:
        journal.check_at_start()
        after = play(journal, 2, clock=clock, first=3, seed=9)
    assert path.is_symlink()
    assert [s.number for s in list_segments(path)] == [1, 2]
    assert [r.event() for r in all_records(path)] == before + after
    assert verify_journal(path).ok


def test_a_reader_kept_open_follows_the_writer_into_the_next_segment(tmp_path: Path) -> None:
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    with Journal(path, table="T01", game="baccarat", rotation=SHOE) as journal:
        play(journal, 1, clock=clock)
        with JournalReader(path) as reader:
            seen = reader.last_seq
            later = play(journal, 1, clock=clock, first=2)
            assert reader.last_seq == later[-1].seq > seen
            assert [r.seq for r in reader.records(seen)] == [e.seq for e in later]
            assert reader.settlement("T01-000001") is not None  # in the closed segment
            assert [e.round for e in reader.recent_settlements(2)] == ["T01-000001", "T01-000002"]


# ---------------------------------------------------------------------------- restart
def test_a_restart_reads_the_live_segment_only(tmp_path: Path) -> None:
    """The closed segments moved away: the table opens, checks and continues the chain."""
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    with Journal(path, table="T01", game="baccarat", rotation=SHOE) as journal:
        journal.append([draft("dealer", None, clock=clock, dealer="D7", by="supervisor")])
        play(journal, 3, clock=clock)
        play(journal, 2, clock=clock, first=4, seed=8)
        full = journal_events_everywhere(path)
    away = tmp_path / "away"
    away.mkdir()
    for segment in list_segments(path)[:-1]:
        segment.path.rename(away / segment.path.name)
    with Journal(path, table="T01", game="baccarat", rotation=SHOE) as journal:
        journal.check_at_start()
        restored = journal.restore_events()
        more = journal.append([draft("table.state", None, clock=clock, state="closed", reason=None)])
    assert more[0].seq == full[-1].seq + 1
    assert machine_state(restored) == machine_state(full)
    assert snapshot_of(restored) == snapshot_of(full)
    for segment in away.iterdir():
        segment.rename(segments_dir(path) / segment.name)
    assert verify_journal(path).ok


def test_a_rotation_that_fails_leaves_the_table_dealing_on_the_old_segment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    real_replace = os.replace

    def failing(src: Any, dst: Any) -> None:
        if str(dst) == str(path):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    with Journal(path, table="T01", game="baccarat", rotation=SHOE) as journal:
        play(journal, 1, clock=clock)
        monkeypatch.setattr(os, "replace", failing)
        events = play(journal, 1, clock=clock, first=2)
        monkeypatch.setattr(os, "replace", real_replace)
        assert journal.segment_number == 1
    assert "rotation failed" in caplog.text
    assert [s.number for s in list_segments(path)] == [1]
    assert all_records(path)[-1].seq == events[-1].seq
    assert verify_journal(path).ok


def test_what_a_killed_rotation_left_is_tidied_at_the_next_start(tmp_path: Path) -> None:
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    with Journal(path, table="T01", game="baccarat", rotation=SHOE) as journal:
        events = play(journal, 1, clock=clock)
    # the next segment was created and the spare link made, then the kill came
    spare = segments_dir(path) / f"000002-{events[-1].seq + 1}.sqlite"
    with Journal(tmp_path / "other.sqlite", table="T01", game="baccarat"):
        pass
    (tmp_path / "other.sqlite").rename(spare)
    os.symlink(os.path.relpath(spare, tmp_path), tmp_path / "T01.sqlite.next")
    with Journal(path, table="T01", game="baccarat", rotation=SHOE) as journal:
        assert journal.segment_number == 1
        play(journal, 1, clock=clock, first=2)
    assert not (tmp_path / "T01.sqlite.next").exists()
    assert [s.number for s in list_segments(path)] == [1, 2]
    assert verify_journal(path).ok


def test_a_later_segment_holding_events_is_refused(tmp_path: Path) -> None:
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    with Journal(path, table="T01", game="baccarat", rotation=SHOE) as journal:
        play(journal, 1, clock=clock)
        play(journal, 1, clock=clock, first=2)
    first = list_segments(path)[0]
    path.unlink()
    os.symlink(os.path.relpath(first.path, tmp_path), path)  # the link set back by hand
    with pytest.raises(JournalBroken, match="comes after the live segment"):
        Journal(path, table="T01", game="baccarat", rotation=SHOE)


# ---------------------------------------------------------------------------- verify
def rotated(tmp_path: Path, shoes: int = 3) -> Path:
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    with Journal(path, table="T01", game="baccarat", rotation=SHOE) as journal:
        for k in range(shoes):
            play(journal, 2, clock=clock, first=2 * k + 1, seed=k)
    return path


def writable(segment: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(segment, isolation_level=None)
    conn.execute("DROP TRIGGER IF EXISTS events_are_append_only_update")
    conn.execute("DROP TRIGGER IF EXISTS carried_is_fixed_update")
    return conn


def test_verify_names_an_event_changed_in_a_closed_segment(tmp_path: Path) -> None:
    path = rotated(tmp_path)
    closed = list_segments(path)[0].path
    conn = writable(closed)
    conn.execute("UPDATE events SET body = body || ' ' WHERE seq = 9")
    conn.close()
    problems = verify_journal(path).problems
    assert any(p.startswith("seq 9: hash chain broken") for p in problems), problems


def test_verify_finds_a_segment_that_does_not_continue_the_chain(tmp_path: Path) -> None:
    path = rotated(tmp_path)
    second = list_segments(path)[1]
    conn = sqlite3.connect(second.path, isolation_level=None)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'prev_hash'", ("ab" * 32,))
    conn.close()
    problems = verify_journal(path).problems
    assert any(f"segment {second.name}: its meta says the chain before it ends" in p for p in problems), problems


def test_verify_finds_a_missing_middle_segment(tmp_path: Path) -> None:
    path = rotated(tmp_path)
    middle = list_segments(path)[1]
    middle.path.unlink()
    problems = verify_journal(path).problems
    assert any("the segments between are missing" in p for p in problems), problems
    assert any(p.startswith("seq gap before seq ") for p in problems), problems


def test_verify_finds_a_changed_carried_event(tmp_path: Path) -> None:
    path = rotated(tmp_path)
    last = list_segments(path)[-1]
    conn = writable(last.path)
    seq = conn.execute("SELECT seq FROM carried WHERE type = 'round.result' LIMIT 1").fetchone()[0]
    conn.execute("UPDATE carried SET body = replace(body, '\"-1\"', '\"8\"') WHERE seq = ?", (seq,))
    conn.close()
    problems = verify_journal(path).problems
    assert any(f"carried event seq {seq} is not the event" in p for p in problems), problems


def test_verify_refuses_unrecorded_missing_first_segments(tmp_path: Path) -> None:
    path = rotated(tmp_path)
    list_segments(path)[0].path.unlink()
    problems = verify_journal(path).problems
    assert any("not recorded as pruned" in p for p in problems), problems


def test_a_compressed_segment_reads_as_before(tmp_path: Path) -> None:
    path = rotated(tmp_path)
    before = all_records(path)
    first = list_segments(path)[0].path
    compress_file(first, first.with_name(first.name + ".xz"))
    first.unlink()
    assert list_segments(path)[0].compressed
    assert all_records(path) == before
    assert verify_journal(path).ok


# ---------------------------------------------------------------------------- what is carried
def machine_walk(seed: int, steps: int = 1500) -> list[Event]:
    """Events of a table machine driven by random inputs it accepts (shoes, cuts, dealers,
    pauses, voids, burns): what a long-running table journals, numbered."""
    rng = random.Random(seed)
    game = load_game("baccarat")
    machine = TableMachine(game, table="T01")
    shoe = [CODES[c] for c in shuffled_shoe(game.decks, rng)]
    now, events = 1796083200.0, []
    kinds = [
        (30, lambda: i.CardPresented(shoe.pop() if shoe else "AS", shoe_count=len(shoe))),
        (6, lambda: i.StartRound()), (6, lambda: i.CloseBetting()), (8, lambda: i.Tick()),
        (1, lambda: i.ShoeNew(decks=8)), (1, lambda: i.ShoeCut(count=len(shoe))),
        (1, lambda: i.DealerSignIn(dealer=rng.choice(["D1", "D2", None]), by="supervisor")),
        (1, lambda: i.VoidRequest()), (1, lambda: i.NoRead()), (1, lambda: i.CardDropped()),
        (1, lambda: i.LidChanged(is_open=rng.random() < 0.5)),
        (2, lambda: i.SupervisorResume(by="S1")), (1, lambda: i.SupervisorVoid(by="S1")),
        (1, lambda: i.DeviceWarning(detail="warm")),
    ]
    weights = [w for w, _ in kinds]
    for _ in range(steps):
        now += rng.choice([0.5, 2.0, 20.0])
        make = rng.choices([k for _, k in kinds], weights)[0]
        try:
            made = machine.handle(make(), now)
        except IllegalInput:
            continue
        for event in made:
            events.append(numbered(stamped(event, table="T01", game="baccarat", ts=now), len(events) + 1))
        if len(shoe) < 20:
            shoe = [CODES[c] for c in shuffled_shoe(game.decks, rng)]
    return events


def machine_state(events: list[Event], machine: TableMachine | None = None) -> dict[str, Any]:
    """What a restored table machine knows after ``events`` (added to ``machine`` if given)."""
    machine = machine or TableMachine(load_game("baccarat"), table="T01")
    machine.restore(e for e in events if e.type != "heartbeat")
    return {
        name: getattr(machine, name) for name in (
            "state", "reason", "round_id", "round_no", "dealer", "pause", "betting_seconds",
            "rounds_left", "shoe_refused", "last_shoe_count", "fresh_shoe", "burning",
            "state_since", "betting_ends", "next_position",
        )
    } | {
        "audit": dict(machine.audit.counts), "audit_decks": machine.audit.decks,
        # what is left of the last burn once it is over is never read (the next burn resets it)
        "burn": (machine.burn_left, machine.burn_total) if machine.burning else None,
    }


def snapshot_of(events: list[Event]) -> Any:
    state = SnapshotState()
    state.prime(events)
    return state.reply()


def as_record(event: Event) -> JournalRecord:
    from table_controller.event_types import encode_event

    return JournalRecord(event.seq, event.ts, event.type, event.round, encode_event(event).decode(), "")


def journal_events_everywhere(path: Path) -> list[Event]:
    with JournalReader(path) as reader:
        return [r.event() for r in reader.records() if r.type != "heartbeat"]


@pytest.mark.parametrize("seed", range(4))
def test_what_a_segment_carries_restores_the_table_as_the_whole_history_does(seed: int) -> None:
    """At moments between rounds: the carried events alone restore the table as the history
    up to then does, and carried events + the rest as the whole history does (state machine
    and snapshot)."""
    events = machine_walk(seed)
    assert sum(e.type == "round.start" for e in events) > 12
    assert any(e.type == "shoe" for e in events)
    whole, whole_snapshot = machine_state(events), snapshot_of(events)
    growing = TableMachine(load_game("baccarat"), table="T01")
    open_round: str | None = None
    checked = shoe_splits = 0
    for k, event in enumerate(events):
        if open_round is None and k % 11 == 0:
            carried = [r.event() for r in carried_records(as_record(e) for e in events[:k])]
            assert len(carried) <= k
            assert machine_state(carried) == machine_state([], growing), (seed, k)
            rebuilt = carried + events[k:]
            assert machine_state(rebuilt) == whole, (seed, k)
            assert snapshot_of(rebuilt) == whole_snapshot, (seed, k)
            checked += 1
        if open_round is None and event.type == "shoe" and getattr(event, "event", None) == "new":
            # a rotation per shoe: the new segment starts with this event, the old shoe is not carried
            lean = [r.event() for r in carried_records((as_record(e) for e in events[:k]), new_shoe_follows=True)]
            assert machine_state(lean + events[k:]) == whole, (seed, k)
            assert snapshot_of(lean + events[k:]) == whole_snapshot, (seed, k)
            shoe_splits += 1
        growing.restore([event])
        if event.type == "round.start":
            open_round = event.round
        elif event.type in ("round.result", "round.void"):
            open_round = None
    assert checked > 20 and shoe_splits > 0


# ---------------------------------------------------------------------------- the real table
def test_a_simulated_table_rotates_restarts_on_its_live_segment_and_verifies(tmp_path: Path) -> None:
    """The real controller with rotation on: a run, a restart with the closed segments moved
    away (the table opens on its live segment alone), then everything back: one chain."""
    from table_controller.sim.table import SimOptions, SimulatedTable

    path = tmp_path / "T01.sqlite"
    rotation = RotationPolicy("size", max_bytes=20 * 1024)
    first = SimulatedTable(SimOptions(rounds=12, speed=0, seed=3, journal=path, journal_rotation=rotation)).run()
    assert first.results + first.voids == 12
    segments = list_segments(path)
    assert len(segments) >= 3
    away = tmp_path / "away"
    away.mkdir()
    for segment in segments[:-1]:
        segment.path.rename(away / segment.path.name)
    second = SimulatedTable(SimOptions(rounds=4, speed=0, seed=4, journal=path, journal_rotation=rotation)).run()
    assert second.results + second.voids == 4
    for moved in away.iterdir():
        moved.rename(segments_dir(path) / moved.name)
    report = verify_journal(path)
    assert report.ok, report.problems
    assert report.rounds == 16 and report.segments > len(segments)
    rounds = [e.round for e in journal_events_everywhere(path) if e.type == "round.start"]
    assert rounds == [f"T01-{n:06d}" for n in range(1, 17)]  # numbering went on across the restart


# ---------------------------------------------------------------------------- compress and prune
def archive_up_to(archive_path: Path, journal: Path, until_seq: int) -> None:
    """Put the journal's events up to ``until_seq`` into a SQLite archive, as the follower would."""
    from table_controller.archive.backends import open_archive
    from table_controller.replay_client import ReplayedEvent, ReplaySlice

    with JournalReader(journal) as reader, open_archive(archive_path) as archive:
        after, prev = archive.last(reader.table)
        rows = list(reader.records(after, until_seq=until_seq))
        archive.append(ReplaySlice(
            table=reader.table, after_seq=after, prev_hash=prev, last_seq=rows[-1].seq, more=False,
            events=[ReplayedEvent(r.seq, r.hash, r.body) for r in rows],
        ), "2026-12-02T00:00:00Z")


def cli(*args: str) -> tuple[int, str]:
    import contextlib
    import io

    from table_controller.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


def test_prune_removes_only_what_the_archive_holds_and_verify_still_passes(tmp_path: Path) -> None:
    import json

    path = rotated(tmp_path, shoes=4)
    segments = list_segments(path)
    before = all_records(path)
    archive = tmp_path / "archive.sqlite"
    second_last = JournalReader(path).segment_reader(segments[1]).last_seq
    archive_up_to(archive, path, second_last - 1)  # the archive misses segment 2's last event
    code, out = cli("journal", "prune", "--journal", str(path), "--archive", str(archive), "--json")
    assert code == 0
    assert [p["number"] for p in json.loads(out)["pruned"]] == [1]
    archive_up_to(archive, path, before[-1].seq)
    code, out = cli("journal", "prune", "--journal", str(path), "--archive", str(archive), "--keep", "1",
                    "--compress", "--json")
    assert code == 0, out
    report = json.loads(out)
    assert [p["number"] for p in report["pruned"]] == [2]
    assert report["compressed"] == [segments[2].path.name + ".xz"]
    assert [s.number for s in list_segments(path)] == [3, 4]
    assert list_segments(path)[0].compressed and segments[3].path.exists()
    assert all_records(path) == [r for r in before if r.seq >= segments[2].first_seq]
    verified = verify_journal(path)
    assert verified.ok, verified.problems
    assert (verified.first_seq, verified.pruned_segments) == (segments[2].first_seq, 2)
    code, out = cli("journal", "segments", "--journal", str(path), "--json")
    listed = json.loads(out)
    assert [s["number"] for s in listed["segments"]] == [3, 4] and listed["segments"][-1]["live"]
    assert [p["number"] for p in listed["pruned"]] == [1, 2]


def test_verify_finds_a_pruned_record_that_does_not_match_the_segment_left(tmp_path: Path) -> None:
    path = rotated(tmp_path)
    archive = tmp_path / "archive.sqlite"
    archive_up_to(archive, path, all_records(path)[-1].seq)
    cli("journal", "prune", "--journal", str(path), "--archive", str(archive), "--keep", "1")
    log = segments_dir(path) / "pruned.jsonl"
    log.write_text(log.read_text().replace('"last_hash":"', '"last_hash":"0'))
    problems = verify_journal(path).problems
    assert any("pruned.jsonl recorded" in p for p in problems), problems


def test_prune_never_touches_the_live_segment_or_a_one_file_journal(tmp_path: Path) -> None:
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    with Journal(path, table="T01", game="baccarat") as journal:
        play(journal, 2, clock=clock)
    archive = tmp_path / "archive.sqlite"
    archive_up_to(archive, path, all_records(path)[-1].seq)
    code, _ = cli("journal", "prune", "--journal", str(path), "--archive", str(archive), "--compress")
    assert code == 0 and path.is_file() and verify_journal(path).ok


def test_the_replay_endpoint_serves_across_segments_and_refuses_pruned_seqs(tmp_path: Path) -> None:
    import json

    from table_controller.publish.replay import JournalReplay

    path = rotated(tmp_path)
    records = all_records(path)
    replay = JournalReplay(path, "T01")
    whole = json.loads(replay.reply(0, 10_000))
    assert [e["seq"] for e in whole["events"]] == [r.seq for r in records]
    archive = tmp_path / "archive.sqlite"
    archive_up_to(archive, path, records[-1].seq)
    cli("journal", "prune", "--journal", str(path), "--archive", str(archive), "--keep", "1")
    first = JournalReader(path).first_seq
    refused = json.loads(replay.reply(0, 10))
    assert refused["code"] == "pruned" and f"seqs up to {first - 1} were pruned" in refused["error"]
    served = json.loads(replay.reply(first - 1, 5))
    assert served["prev_hash"] == records[first - 2].hash
    assert [e["seq"] for e in served["events"]] == list(range(first, first + 5))
    replay.close()


def test_insert_or_replace_cannot_overwrite_an_event(tmp_path: Path) -> None:
    """Found by the independent implementation: the UPDATE and DELETE triggers alone let
    INSERT OR REPLACE overwrite a row (its implicit delete fires no trigger)."""
    path = rotated(tmp_path, shoes=2)
    for segment in list_segments(path):
        conn = sqlite3.connect(segment.path, isolation_level=None)
        row = conn.execute("SELECT seq, ts, type, round, body, hash FROM events ORDER BY seq LIMIT 1").fetchone()
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("INSERT OR REPLACE INTO events VALUES (?, ?, ?, ?, ?, ?)", (*row[:4], row[4] + " ", row[5]))
        if segment.number > 1:
            carried = conn.execute("SELECT * FROM carried LIMIT 1").fetchone()
            with pytest.raises(sqlite3.DatabaseError, match="fixed at rotation"):
                conn.execute("INSERT OR REPLACE INTO carried VALUES (?, ?, ?, ?, ?, ?)", carried)
        conn.execute("DROP TRIGGER events_are_append_only_insert")
        conn.close()
    problems = verify_journal(path).problems
    assert sum("no longer refuses an INSERT at or below the last seq" in p for p in problems) == 2, problems


def test_a_first_rotation_killed_after_its_hard_link_completes_the_next_time(tmp_path: Path) -> None:
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    with Journal(path, table="T01", game="baccarat") as journal:
        play(journal, 1, clock=clock)
    segments_dir(path).mkdir()
    os.link(path, segments_dir(path) / "000001-1.sqlite")  # what the kill left
    with Journal(path, table="T01", game="baccarat", rotation=SHOE) as journal:
        play(journal, 1, clock=clock, first=2)
        assert journal.segment_number == 2
    assert verify_journal(path).ok


@pytest.mark.parametrize("damage", ["garbage segment", "garbage xz"])
def test_a_damaged_segment_is_a_problem_and_the_others_are_still_checked(tmp_path: Path, damage: str) -> None:
    path = rotated(tmp_path)
    segments = list_segments(path)
    if damage == "garbage segment":
        segments[1].path.write_bytes(b"not a journal" * 200)
        bad = segments[1]
    else:
        segments[0].path.unlink()
        (segments[0].path.with_name(segments[0].path.name + ".xz")).write_bytes(b"not xz")
        bad = segments[0]
    report = verify_journal(path)
    assert not report.ok
    assert any(p.startswith(f"segment file {bad.name} cannot be read") for p in report.problems), report.problems
    assert report.results_checked >= 4  # the rounds of the segments that read
    assert report.last_seq == all_records_after(path, segments[-1])
    with JournalReader(path) as reader, pytest.raises(JournalError, match=bad.name):
        list(reader.records())


def all_records_after(path: Path, live: Any) -> int:
    with JournalReader(path) as reader:
        return reader.segment_reader(live).last_seq


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=400), names=st.lists(st.text(min_size=1, max_size=40), max_size=5))
def test_a_hostile_segments_folder_never_crashes_the_readers(text: str, names: list[str]) -> None:
    """pruned.jsonl and the folder's file names are read from disk: anything there is
    skipped or refused, never an exception other than a JournalError."""
    import tempfile

    from table_controller.journal.segments import read_pruned

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "T01.sqlite"
        with Journal(path, table="T01", game="baccarat", rotation=SHOE):
            pass
        folder = segments_dir(path)
        (folder / "pruned.jsonl").write_text(text)
        for name in names:
            clean = name.replace("/", "_").replace("\x00", "_")
            if clean in (".", ".."):
                continue
            try:
                (folder / clean).write_bytes(text.encode("utf-8", "replace"))
            except OSError:
                continue
        assert all(isinstance(p.last_seq, int) for p in read_pruned(path))
        try:
            verify_journal(path)
        except JournalError:
            pass


def test_what_a_segment_carries_does_not_count_towards_its_size(tmp_path: Path) -> None:
    """A long shoe makes each new segment carry more; with a small size the segments would
    otherwise fill with carried events alone and rotate at every round (seen in the soak)."""
    path, clock = tmp_path / "T01.sqlite", TickingClock()
    with Journal(path, table="T01", game="baccarat", rotation=RotationPolicy("size", max_bytes=40 * 1024)) as journal:
        play(journal, 30, clock=clock)
    with JournalReader(path) as reader:
        segments = reader.segments()
        carried = max(len(reader.segment_reader(s).carried()) for s in segments)
    assert carried > 150  # the shoe's events: more than a segment's size by themselves
    assert 2 <= len(segments) <= 10, len(segments)
    assert verify_journal(path).ok
