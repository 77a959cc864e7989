"""The studio archive: every table's events exactly once, chain-checked, alerts for tables that
break their chain, cannot be reached or fall behind; the command line over it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq
from archive_helpers import LiveTable

import table_controller.archive.follower as follower_module
from table_controller.archive import Archive, ArchiveError, ArchiveFollower, SQLiteArchive, TableSource, open_archive


@pytest.fixture
def table(tmp_path: Path) -> Iterator[LiveTable]:
    t = LiveTable(tmp_path / "T01.sqlite")
    t.deal(5)
    yield t
    t.close()


def _rows(archive: Archive, table: str) -> list[tuple[int, str, str]]:
    return [(e.record.seq, e.record.hash, e.record.body) for e in archive.events(table)]


def test_every_event_is_archived_once_exactly_as_journaled(archive_location: str, table: LiveTable) -> None:
    with open_archive(archive_location) as archive:
        follower = ArchiveFollower(archive, [TableSource("T01", table.endpoint)])
        first = follower.catch_up_all()[0]
        stored = [(r.seq, r.hash, r.body) for r in table.journal.records()]
        assert first.added == len(stored) and first.archived_seq == stored[-1][0] and first.problem is None
        assert _rows(archive, "T01") == stored
        assert follower.catch_up_all()[0].added == 0  # again: nothing twice
        table.deal(3)
        more = follower.catch_up_all()[0]
        stored = [(r.seq, r.hash, r.body) for r in table.journal.records()]
        assert more.added == len(stored) - first.added
        assert _rows(archive, "T01") == stored
        assert archive.alerts() == []


def test_a_table_whose_chain_does_not_continue_the_archive_is_alerted_once_and_nothing_kept(
        tmp_path: Path, archive_location: str, table: LiveTable) -> None:
    with open_archive(archive_location) as archive:
        ArchiveFollower(archive, [TableSource("T01", table.endpoint)]).catch_up_all()
        kept = _rows(archive, "T01")
        # the same table id, a journal started anew (other events, seq from 1 again)
        other = LiveTable(tmp_path / "other.sqlite", seed=99)
        try:
            other.deal(8)
            follower = ArchiveFollower(archive, [TableSource("T01", other.endpoint)])
            turns = [follower.catch_up_all()[0] for _ in range(3)]
        finally:
            other.close()
        assert all(t.added == 0 and t.problem and "does not continue" in t.problem for t in turns)
        assert _rows(archive, "T01") == kept
        alerts = archive.alerts("T01")
        assert [a.kind for a in alerts] == ["chain-break"]
        # a journal started anew that is still shorter than the archive: its end lies before ours
        short = LiveTable(tmp_path / "short.sqlite", seed=5)
        try:
            short.deal(1)
            turn = ArchiveFollower(archive, [TableSource("T01", short.endpoint)]).catch_up_all()[0]
        finally:
            short.close()
        assert turn.added == 0 and turn.problem and "beyond the journal's last seq" in turn.problem
        assert [a.kind for a in archive.alerts("T01")] == ["chain-break", "chain-break"]


def test_an_unreachable_table_is_alerted_once_and_caught_up_when_it_answers(tmp_path: Path, archive_location: str,
                                                                            table: LiveTable) -> None:
    with zmq.Context() as ctx, ctx.socket(zmq.ROUTER) as silent:
        port = silent.bind_to_random_port("tcp://127.0.0.1")  # listens, never answers
        with open_archive(archive_location) as archive:
            follower = ArchiveFollower(archive, [TableSource("T01", f"tcp://127.0.0.1:{port}")], timeout=0.3)
            assert [t.problem is not None for t in (follower.catch_up_all()[0], follower.catch_up_all()[0])] == [
                True, True]
            follower.sources = [TableSource("T01", table.endpoint)]
            back = follower.catch_up_all()[0]
            assert back.problem is None and back.added == table.journal.last_seq
            assert [a.kind for a in archive.alerts()] == ["unreachable"]


def test_a_table_far_ahead_is_alerted_as_behind(tmp_path: Path, archive_location: str, table: LiveTable,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follower_module, "SLICE", 10)
    monkeypatch.setattr(follower_module, "SLICES_PER_TURN", 2)
    with open_archive(archive_location) as archive:
        follower = ArchiveFollower(archive, [TableSource("T01", table.endpoint)], behind_events=20)
        turn = follower.catch_up_all()[0]
        assert turn.added == 20 and turn.table_seq == table.journal.last_seq
        assert [a.kind for a in archive.alerts()] == ["behind"]
        while follower.catch_up_all()[0].added:
            pass
        assert archive.last("T01")[0] == table.journal.last_seq


def test_the_archive_is_append_only_and_knows_its_schema(tmp_path: Path, table: LiveTable) -> None:
    path = tmp_path / "archive.sqlite"
    with SQLiteArchive(path) as archive:
        ArchiveFollower(archive, [TableSource("T01", table.endpoint)]).catch_up_all()
        assert archive.schema_version == 3
    conn = sqlite3.connect(path)
    for sql in ("UPDATE events SET body = 'x' WHERE seq = 1", "DELETE FROM events WHERE seq = 1"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute(sql)
    conn.execute("UPDATE schema_version SET version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(ArchiveError, match="schema 99"):
        SQLiteArchive(path)


def test_the_command_line_archives_and_reports(tmp_path: Path, table: LiveTable) -> None:
    db = tmp_path / "archive.sqlite"
    cli = [sys.executable, "-m", "table_controller"]
    done = subprocess.run([*cli, "archive", "follow", "--db", str(db), "--table", f"T01={table.endpoint}",
                           "--once", "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    turn = json.loads(done.stdout)
    assert turn["table"] == "T01" and turn["added"] == table.journal.last_seq
    status = subprocess.run([*cli, "archive", "status", "--db", str(db), "--json"], capture_output=True,
                            text=True, timeout=60)
    assert json.loads(status.stdout)["tables"]["T01"]["seq"] == table.journal.last_seq
    bad = subprocess.run([*cli, "archive", "follow", "--db", str(db), "--table", "T01", "--once"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "TABLE=ENDPOINT" in bad.stderr


class HostileTable:
    """A replay endpoint that answers each request with the next of ``replies`` (bytes)."""

    def __init__(self, replies: list[bytes]) -> None:
        import threading

        self.replies = list(replies)
        self.context: zmq.Context[Any] = zmq.Context()
        self.router = self.context.socket(zmq.ROUTER)
        self.router.setsockopt(zmq.LINGER, 0)
        self.endpoint = f"tcp://127.0.0.1:{self.router.bind_to_random_port('tcp://127.0.0.1')}"
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            if not self.router.poll(50):
                continue
            frames = self.router.recv_multipart()
            reply = self.replies.pop(0) if self.replies else b"{}"
            self.router.send_multipart([*frames[:-1], reply])

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.router.close(linger=0)
        self.context.term()


def _chained(bodies: list[str], after: int = 0, prev: str = "0" * 64, last: int | None = None) -> bytes:
    import hashlib

    events = []
    for k, body in enumerate(bodies, start=after + 1):
        h = hashlib.sha256((prev + body).encode()).hexdigest()
        events.append({"seq": k, "hash": h, "body": body})
        prev = h
    end = after + len(bodies)
    return json.dumps({"table": "T01", "after_seq": after, "prev_hash": "0" * 64, "last_seq": last or end,
                       "more": False, "events": events}).encode()


def test_a_hostile_table_gets_alerts_and_nothing_of_it_is_kept(archive_location: str, table: LiveTable) -> None:
    real = [r.body for r in table.journal.records()][:3]
    replies = [
        b"\xff\xfe not json",
        b'{"table": "T01"}',
        b"[" * 5000,
        _chained(["not an event", "{}"]),  # hashes that chain over bodies that are no events
        _chained(['{"v": 1, "seq": 1}']),
        _chained([real[1], real[0]]),  # real events, their seqs swapped
        json.dumps({"table": "T09", "after_seq": 0, "prev_hash": "0" * 64, "last_seq": 0, "more": False,
                    "events": []}).encode(),
    ]
    hostile = HostileTable(replies)
    try:
        with open_archive(archive_location) as archive:
            follower = ArchiveFollower(archive, [TableSource("T01", hostile.endpoint)], timeout=2.0)
            turns = [follower.catch_up_all()[0] for _ in replies]
            assert all(t.problem for t in turns[:-1]), turns
            assert list(archive.events("T01")) == []
            assert {a.kind for a in archive.alerts()} <= {"refused", "chain-break"}
            # the same follower, the real table: caught up as if nothing happened
            follower.sources = [TableSource("T01", table.endpoint)]
            assert follower.catch_up_all()[0].added == table.journal.last_seq
    finally:
        hostile.close()


def test_a_journal_file_is_archived_like_a_live_table(tmp_path: Path, archive_location: str, table: LiveTable) -> None:
    with open_archive(archive_location) as archive:
        follower = ArchiveFollower(archive, [TableSource("T01", table.endpoint)])
        follower.catch_up_all()
        table.deal(2)  # journaled after the table's last turn, say just before it stopped
        from_file = ArchiveFollower(archive, [TableSource("T01", f"file:{table.journal.path}")]).catch_up_all()[0]
        assert from_file.problem is None and from_file.added > 0
        assert _rows(archive, "T01") == [(r.seq, r.hash, r.body) for r in table.journal.records()]
        gone = ArchiveFollower(archive, [TableSource("T01", f"file:{tmp_path / 'gone.sqlite'}")]).catch_up_all()[0]
        assert gone.problem and "no such file" in gone.problem


def test_an_archive_of_an_older_schema_is_migrated_in_place_and_keeps_its_events(
        tmp_path: Path, table: LiveTable, monkeypatch: pytest.MonkeyPatch) -> None:
    import table_controller.archive.sqlite as sqlite_module

    path = tmp_path / "archive.sqlite"
    latest = sqlite_module.MIGRATIONS
    monkeypatch.setattr(sqlite_module, "MIGRATIONS", latest[:2])  # a file made before version 3
    with SQLiteArchive(path) as archive:
        ArchiveFollower(archive, [TableSource("T01", table.endpoint)]).catch_up_all()
        assert archive.schema_version == 2
        before = _rows(archive, "T01")
    monkeypatch.setattr(sqlite_module, "MIGRATIONS", latest)
    with SQLiteArchive(path) as archive:
        assert archive.schema_version == latest[-1][0] and _rows(archive, "T01") == before
        starts = archive.round_starts("T01", "0000", "9999", 0, 100)  # uses version 3's index
        assert [r for r, _, _ in starts] == [f"R{n}" for n in range(1, 6)]


def test_a_checkpoint_that_signs_another_hash_than_the_archive_holds_is_alerted(
        archive_location: str, table: LiveTable) -> None:
    from table_controller.sim.journal_rounds import draft

    records = list(table.journal.records())
    good, bad = records[10], records[20]
    table.journal.append([draft("checkpoint", None, clock=table.clock, covers=good.seq, hash=good.hash, sig="c2ln")])
    table.journal.append([draft("checkpoint", None, clock=table.clock, covers=bad.seq, hash="f" * 64, sig="c2ln")])
    with open_archive(archive_location) as archive:
        follower = ArchiveFollower(archive, [TableSource("T01", table.endpoint)])
        turn = follower.catch_up_all()[0]
        assert turn.problem is None and turn.archived_seq == table.journal.last_seq  # kept: the chain is whole
        assert follower.checkpoints_checked == 2
        alerts = archive.alerts("T01")
        assert [a.kind for a in alerts] == ["checkpoint-mismatch"] and f"seq {bad.seq}" in alerts[0].text
