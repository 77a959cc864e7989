"""Archive services started while their store is down wait for it instead of dying (found by
the archive soak: PostgreSQL killed while the archive or the API restarted ended them)."""

from __future__ import annotations

import json
import math
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from archive_helpers import LiveTable

from table_controller.archive.backends import ArchiveOpener
from table_controller.archive.base import ArchiveError, ArchiveUnavailable, redact
from table_controller.cli.stop_signals import StopFlag
from table_controller.soak.postgres_server import PostgresServer, PostgresUnavailable


class FlakyStore:
    """An opener that refuses ``refusals`` times as a store that is down, then opens."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.tries = 0
        self.opened = object()

    def __call__(self, location: str) -> Any:
        self.tries += 1
        if self.tries <= self.refusals:
            raise ArchiveUnavailable(f"archive {location}: cannot open: connection refused")
        return self.opened


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    pauses: list[float] = []
    monkeypatch.setattr("time.sleep", pauses.append)
    return pauses


def test_the_opener_waits_with_a_growing_pause_then_opens(no_sleep: list[float]) -> None:
    store = FlakyStore(refusals=6)
    opener = ArchiveOpener("postgresql://db/archive", math.inf, opener=store)
    assert opener.open() is store.opened
    assert store.tries == 7
    assert no_sleep == [1.0, 2.0, 4.0, 8.0, 15.0, 15.0]
    assert opener.outage is not None and "connection refused" in opener.outage


def test_a_store_that_answers_at_once_is_no_outage(no_sleep: list[float]) -> None:
    store = FlakyStore(refusals=0)
    opener = ArchiveOpener("postgresql://db/archive", math.inf, opener=store)
    assert opener.open() is store.opened
    assert opener.outage is None and no_sleep == []


def test_past_its_patience_the_opener_gives_up_with_the_reason(no_sleep: list[float]) -> None:
    with pytest.raises(ArchiveUnavailable, match="connection refused"):
        ArchiveOpener("postgresql://db/archive", 0, opener=FlakyStore(refusals=99)).open()
    assert no_sleep == []


def test_an_archive_that_waiting_cannot_mend_is_refused_at_once(no_sleep: list[float]) -> None:
    def future(location: str) -> Any:
        raise ArchiveError(f"archive {location} has schema 9; this version knows up to 2")

    with pytest.raises(ArchiveError, match="schema 9"):
        ArchiveOpener("studio.sqlite", math.inf, opener=future).open()
    assert no_sleep == []


def test_a_stop_while_waiting_ends_the_wait_without_an_archive() -> None:
    stop = StopFlag()
    store = FlakyStore(refusals=99)
    threading.Timer(0.3, stop.set).start()
    began = time.monotonic()
    assert ArchiveOpener("postgresql://db/archive", math.inf, opener=store, stop=stop).open() is None
    assert time.monotonic() - began < 0.9  # the stop cut the first 1 s pause short
    assert store.tries == 1  # and no second try was made


@pytest.fixture
def table(tmp_path: Path) -> Iterator[LiveTable]:
    t = LiveTable(tmp_path / "T01.sqlite")
    t.deal(3)
    yield t
    t.close()


def _reader(stream: Any, lines: list[str]) -> threading.Thread:
    thread = threading.Thread(target=lambda: lines.extend(iter(stream.readline, "")), daemon=True)
    thread.start()
    return thread


def _wait_for_a_retry(process: subprocess.Popen[str], err: list[str]) -> None:
    """Until the service's log says it will try its store again (it must stay alive meanwhile)."""
    deadline = time.monotonic() + 30
    while not any("trying again" in line for line in err):
        assert process.poll() is None, "".join(err)
        assert time.monotonic() < deadline, "".join(err)
        time.sleep(0.1)


def _archived_seqs(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        try:
            return [int(s) for (s,) in conn.execute("SELECT seq FROM events WHERE tbl = 'T01' ORDER BY seq")]
        except psycopg.errors.UndefinedTable:  # not migrated yet
            return []


def test_the_follower_started_with_its_server_down_archives_once_it_is_up(table: LiveTable) -> None:
    try:
        server = PostgresServer()  # made, not started: its port refuses connections
    except PostgresUnavailable as e:
        pytest.skip(f"no PostgreSQL server: {e}")
    url = server.url()
    follow = subprocess.Popen([sys.executable, "-m", "table_controller", "archive", "follow", "--db", url,
                               "--table", f"T01={table.endpoint}", "--poll", "0.2", "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out: list[str] = []
    err: list[str] = []
    readers = [_reader(follow.stdout, out), _reader(follow.stderr, err)]
    try:
        _wait_for_a_retry(follow, err)
        time.sleep(1.5)  # a second refusal at least, still alive
        assert follow.poll() is None, "".join(err)
        with server:
            table.deal(2)
            deadline = time.monotonic() + 60
            while (archived := _archived_seqs(url)) != list(range(1, table.journal.last_seq + 1)):
                assert follow.poll() is None, "".join(err)
                assert time.monotonic() < deadline, f"archived {archived}; " + "".join(err)
                time.sleep(0.2)
            with psycopg.connect(url) as conn:
                alerts = [(k, t) for k, t in conn.execute("SELECT kind, text FROM alerts")]
            follow.send_signal(signal.SIGTERM)
            assert follow.wait(30) == 0, "".join(err)
    finally:
        if follow.poll() is None:
            follow.kill()
            follow.wait()
        for r in readers:
            r.join(5)
        server.close()
    turns = [json.loads(line) for line in out]  # --json reports the turns that archived something
    assert sum(t["added"] for t in turns) == table.journal.last_seq
    assert turns[-1]["archived_seq"] == table.journal.last_seq and turns[-1]["problem"] is None
    assert [k for k, _ in alerts] == ["archive-down"]
    assert "did not answer at start" in alerts[0][1] and "connection" in alerts[0][1]


def _closed_port_url() -> str:
    with socket.socket() as s:  # a port nothing listens on (bound, then let go)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"postgresql://studio@127.0.0.1:{port}/archive"


@pytest.mark.parametrize("command", [["studio", "serve", "--port", "0"],
                                     ["archive", "follow", "--table", "T01=tcp://127.0.0.1:9"]])
def test_a_stop_while_a_service_waits_for_its_store_exits_0(command: list[str]) -> None:
    service = subprocess.Popen([sys.executable, "-m", "table_controller", *command[:2], "--db", _closed_port_url(),
                                *command[2:]], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err: list[str] = []
    reader = _reader(service.stderr, err)
    try:
        _wait_for_a_retry(service, err)
        service.send_signal(signal.SIGTERM)
        assert service.wait(10) == 0, "".join(err)
    finally:
        if service.poll() is None:
            service.kill()
            service.wait()
        reader.join(5)


def test_a_store_that_refuses_the_location_for_good_is_not_waited_for(postgres_server: PostgresServer) -> None:
    """A server that answers but has no such database (or role, or password) is a wrong
    location: waiting will not mend it, so the service says so and exits at once."""
    url = postgres_server.url("no_such_archive")
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "table_controller", "archive", "follow", "--db", url,
                           "--table", "T01=tcp://127.0.0.1:9"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "does not exist" in done.stderr and "trying again" not in done.stderr
    assert time.monotonic() - began < 30


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://tc:s3cret@db:5432/studio", "postgresql://tc@db:5432/studio"),
    ("postgresql://tc:p@ss@db/studio?application_name=a@b", "postgresql://tc@db/studio?application_name=a@b"),
    ("postgresql://db/studio?x=a@b", "postgresql://db/studio?x=a@b"),
    ("studio.sqlite", "studio.sqlite"),
])
def test_a_location_is_shown_without_its_password(url: str, shown: str) -> None:
    assert redact(url) == shown
