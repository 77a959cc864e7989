"""The archive on a real PostgreSQL server (started by the tests): append-only, its schema,
two followers racing on one table, the server killed under the follower, the command line."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import psycopg_pool.base
import pytest
from archive_helpers import LiveTable

from table_controller.archive import ArchiveError, ArchiveFollower, ArchiveUnavailable, TableSource, open_archive
from table_controller.archive.postgres import PostgresArchive, redact
from table_controller.soak.postgres_server import PostgresServer


@pytest.fixture
def table(tmp_path: Path) -> Iterator[LiveTable]:
    t = LiveTable(tmp_path / "T01.sqlite")
    t.deal(5)
    yield t
    t.close()


def _journal(table: LiveTable) -> list[tuple[int, str, str]]:
    return [(r.seq, r.hash, r.body) for r in table.journal.records()]


def _archived(url: str, table: str = "T01") -> list[tuple[int, str, str]]:
    with psycopg.connect(url) as conn:
        return [(int(s), h, b) for s, h, b in conn.execute(
            "SELECT seq, hash, body FROM events WHERE tbl = %s ORDER BY seq", (table,))]


def test_the_location_names_the_backend(postgres_url: str, tmp_path: Path) -> None:
    with open_archive(postgres_url) as archive:
        assert isinstance(archive, PostgresArchive) and archive.schema_version == 2
    with open_archive(str(tmp_path / "a.sqlite")) as archive:
        assert not isinstance(archive, PostgresArchive)
    assert redact("postgresql://archive:s3cret@db:5432/studio") == "postgresql://archive@db:5432/studio"


def test_a_server_that_cannot_be_reached_is_an_archive_error_without_the_password() -> None:
    with pytest.raises(ArchiveError) as caught:
        PostgresArchive("postgresql://archive:s3cret@127.0.0.1:1/studio", timeout=1.0)
    assert "cannot open" in str(caught.value) and "s3cret" not in str(caught.value)


def test_the_archive_is_append_only_and_knows_its_schema(postgres_url: str, table: LiveTable) -> None:
    with open_archive(postgres_url) as archive:
        ArchiveFollower(archive, [TableSource("T01", table.endpoint)]).catch_up_all()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for sql in ("UPDATE events SET body = 'x' WHERE seq = 1", "DELETE FROM events WHERE seq = 1",
                    "TRUNCATE events"):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(sql)  # type: ignore[arg-type]
        conn.execute("UPDATE schema_version SET version = 99")
    assert _archived(postgres_url) == _journal(table)
    with pytest.raises(ArchiveError, match="schema 99"):
        open_archive(postgres_url)


def test_two_followers_of_one_table_keep_each_event_once(postgres_url: str, table: LiveTable) -> None:
    """Two archive services on the same table (a second one started by mistake, or a hot
    standby): the head row's lock makes one slice wait for the other, which it then no longer
    continues; nothing is doubled, nothing lost."""
    archives = [open_archive(postgres_url), open_archive(postgres_url)]
    try:
        followers = [ArchiveFollower(a, [TableSource("T01", table.endpoint)]) for a in archives]
        for _ in range(4):
            table.deal(3)
            threads = [threading.Thread(target=f.catch_up_all) for f in followers]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
        for f in followers:  # whichever lost a race catches up on its next turn
            f.catch_up_all()
        assert _archived(postgres_url) == _journal(table)
        assert {a.kind for a in archives[0].alerts()} <= {"chain-break"}  # a lost race, reported
    finally:
        for a in archives:
            a.close()


def test_the_server_killed_under_the_follower_loses_and_doubles_nothing(
        table: LiveTable, monkeypatch: pytest.MonkeyPatch) -> None:
    """The archive is back with its server's first answer: psycopg_pool's own reconnection
    waits a backoff that doubles while the server is down (here made 30 s from the first
    failure, as after a long outage), so the archive renews its pool instead of waiting."""
    monkeypatch.setattr(psycopg_pool.base.AttemptWithBackoff, "INITIAL_DELAY", 30.0)
    with PostgresServer() as server:
        url = server.url()
        archive = open_archive(url)
        try:
            follower = ArchiveFollower(archive, [TableSource("T01", table.endpoint)])
            follower.catch_up_all()
            server.kill()
            table.deal(4)
            down = follower.catch_up_all()[0]
            assert down.problem is not None and "archive is down" in down.problem  # said so; lives on
            assert [a.kind for a in follower.unwritten_alerts] == ["archive-down"]
            server.start()
            table.deal(2)
            back = follower.catch_up_all()[0]
            assert back.problem is None and back.archived_seq == table.journal.last_seq
            assert _archived(url) == _journal(table)
            assert [a.kind for a in archive.alerts()] == ["archive-down"]  # written once it could be
            assert follower.unwritten_alerts == []
        finally:
            archive.close()


def test_a_pool_busy_on_a_healthy_server_is_not_renewed(postgres_url: str) -> None:
    """Every connection in use for longer than the timeout is not an outage: the call is
    refused as before, and the pool (its connections within ``pool_size``) stays."""
    archive = PostgresArchive(postgres_url, pool_size=1, timeout=1.0)
    try:
        pool = archive._pool
        slow = threading.Thread(target=archive._read, args=("SELECT pg_sleep(2.5)",))
        slow.start()
        time.sleep(0.3)
        with pytest.raises(ArchiveUnavailable):
            archive._read("SELECT 1")
        slow.join()
        assert archive._pool is pool
        assert archive._read("SELECT 1") == [(1,)]
    finally:
        archive.close()


def test_the_command_line_archives_into_postgresql(postgres_url: str, table: LiveTable) -> None:
    cli = [sys.executable, "-m", "table_controller"]
    done = subprocess.run([*cli, "archive", "follow", "--db", postgres_url, "--table", f"T01={table.endpoint}",
                           "--once", "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    status = subprocess.run([*cli, "archive", "status", "--db", postgres_url, "--json"], capture_output=True,
                            text=True, timeout=60)
    assert json.loads(status.stdout)["tables"]["T01"]["seq"] == table.journal.last_seq
    assert _archived(postgres_url) == _journal(table)
