"""A stop signal can land anywhere in start-up (table_controller.cli.stop_signals raises
Terminated in the main thread until the table runs): between a thread's creation and its
start, or just after a journal's COMMIT returned. Closing then must neither fail nor hide the
stop. Found by tests/test_run_sigterm.py under load: `run` exited 1 ("cannot join thread
before it is started") and 3 ("cannot rollback - no transaction is active") instead of 0."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import serial
import zmq

from firmware_interfaces.shoe.driver import ShoeDriver
from table_controller.camera_watch import CameraWatcher
from table_controller.client import TableClient
from table_controller.display.web import Feeder, ViewHub
from table_controller.journal.schema import create_schema
from table_controller.journal.verify import verify_journal
from table_controller.publish.publisher import EventPublisher


class _Stop(BaseException):
    """Stands for Terminated: raised where a signal handler would raise it."""


class _Source:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_a_camera_watcher_closed_before_its_start_closes_its_source() -> None:
    source = _Source()
    watcher = CameraWatcher(source, recognizer=None, stabilizer=None, post=lambda _: None)
    watcher.close()  # it raised "cannot join thread before it is started" before reaching the source
    assert source.closed


def _stopped_at_thread_start(monkeypatch: pytest.MonkeyPatch, start: Callable[[], object]) -> None:
    """Call ``start`` with a stop landing the moment it starts a thread (after the thread's
    creation, before it runs)."""

    def refuse_start(self: threading.Thread) -> None:
        raise _Stop

    monkeypatch.setattr(threading.Thread, "start", refuse_start)
    with pytest.raises(_Stop):
        start()
    monkeypatch.undo()


def test_a_shoe_driver_stopped_between_its_threads_creation_and_start_closes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    driver = ShoeDriver(lambda: serial.serial_for_url("loop://", timeout=0.01))
    _stopped_at_thread_start(monkeypatch, driver.start)
    driver.close()  # it raised "cannot join thread before it is started"


def test_a_publisher_stopped_between_its_threads_creation_and_start_closes_its_socket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    publisher = EventPublisher("T01", "tcp://127.0.0.1:0", "tcp://127.0.0.1:0", context=context)
    _stopped_at_thread_start(monkeypatch, publisher.start)
    pub = publisher._pub
    assert pub is not None and not pub.closed
    publisher.close()  # it raised before closing its sockets
    assert pub.closed
    context.term()


class _StoppedAfterCommit(sqlite3.Connection):
    """A connection whose COMMIT goes through and is then interrupted, as a stop signal
    handled on the next bytecode after the call interrupts it."""

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        cursor = super().execute(sql, *args)
        if sql == "COMMIT":
            raise _Stop
        return cursor


def test_a_stop_just_after_the_new_journals_commit_is_the_stop_and_the_journal_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    conn = sqlite3.connect(str(path), isolation_level=None, factory=_StoppedAfterCommit)
    with pytest.raises(_Stop):
        create_schema(conn, {"table": "T01", "game": "baccarat"})
    assert not conn.in_transaction
    conn.close()
    assert verify_journal(path).ok


def test_a_display_feeder_stopped_between_its_threads_creation_and_start_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_client() -> TableClient:
        raise AssertionError("the feeder's thread never ran")

    feeder = Feeder(no_client, ViewHub(), "T01")
    _stopped_at_thread_start(monkeypatch, feeder.start)
    feeder.stop()  # it raised "cannot join thread before it is started"


def test_a_stop_while_an_import_builds_a_class_exits_0_though_python_wraps_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a SIGTERM 0.25 s after the start landed in a dataclass field's __set_name__ during an
    # import: Python 3.11 wraps what __set_name__ raises in a RuntimeError, and `run` exited 1
    # ("Error calling __set_name__ on 'Field' instance 'items' in 'StreamRecord'")
    import table_controller.cli as cli
    from table_controller.cli.stop_signals import STOP, Terminated

    class _Raises:
        def __set_name__(self, owner: type, name: str) -> None:
            raise Terminated(15)

    def importing(argv: list[str]) -> int:
        type("Built", (), {"items": _Raises()})  # what an import does when it defines a class
        return 3

    monkeypatch.setattr(cli, "_main", importing)
    try:
        assert cli.main(["run", "--config", "none.toml"]) == 0
    finally:
        STOP.requested.clear()

    def failing(argv: list[str]) -> int:
        raise RuntimeError("not a stop")

    monkeypatch.setattr(cli, "_main", failing)
    with pytest.raises(RuntimeError, match="not a stop"):
        cli.main(["run", "--config", "none.toml"])
