"""systemd's readiness and watchdog without systemd: a fake notify socket. The table says READY=1
once it deals, pings WATCHDOG=1 while its loop turns, stops pinging when the loop stalls, and says
STOPPING=1 when it closes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from shoe_process_fixture import simulated_shoe
from test_run_sigterm import _config

from table_controller.service.notify import SystemdNotifier, Watchdog
from table_controller.soak.shoe_process import ShoeProcess

ROOT = Path(__file__).resolve().parents[1]


class FakeSystemd:
    """The notify socket systemd would pass (a datagram socket bound to a path)."""

    def __init__(self, folder: Path) -> None:
        self.path = str(folder / "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self.received: list[tuple[float, str]] = []

    def collect(self, seconds: float) -> list[str]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self.received.append((time.monotonic(), self.sock.recv(4096).decode()))
            except TimeoutError:
                pass
        return [text for _, text in self.received]

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def systemd(tmp_path: Path) -> Iterator[FakeSystemd]:
    fake = FakeSystemd(tmp_path)
    yield fake
    fake.close()


def test_notifications_reach_the_socket_and_nothing_is_sent_without_one(systemd: FakeSystemd) -> None:
    notifier = SystemdNotifier.from_environment({"NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "2000000"})
    assert notifier.enabled and notifier.watchdog_seconds == 2.0
    assert notifier.ready("dealing") and notifier.stopping()
    assert systemd.collect(0.3) == ["READY=1\nSTATUS=dealing", "STOPPING=1"]
    quiet = SystemdNotifier.from_environment({})
    assert not quiet.enabled and not quiet.ready()
    # a watchdog meant for another process (WATCHDOG_PID) is not ours
    other = SystemdNotifier.from_environment({"NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "2000000",
                                              "WATCHDOG_PID": "1"})
    assert other.watchdog_seconds is None


def test_the_watchdog_pings_at_half_its_interval_only_while_the_table_is_well(systemd: FakeSystemd) -> None:
    now = [100.0]
    well = [True]
    dog = Watchdog(SystemdNotifier(systemd.path, 2_000_000), lambda: well[0], clock=lambda: now[0])
    for _ in range(8):  # 4 s of ticks every 0.5 s: a ping each second
        dog.tick()
        now[0] += 0.5
    assert dog.pings == 4
    well[0] = False  # the loop stalls: no more pings, however often it is asked
    for _ in range(8):
        dog.tick()
        now[0] += 0.5
    assert dog.pings == 4 and dog.withheld > 0
    assert systemd.collect(0.3).count("WATCHDOG=1") == 4


@pytest.fixture
def shoe(tmp_path: Path) -> Iterator[ShoeProcess]:
    yield from simulated_shoe(tmp_path)


@pytest.mark.slow
def test_a_running_table_is_ready_feeds_the_watchdog_and_says_it_stops(tmp_path: Path, systemd: FakeSystemd,
                                                                      shoe: ShoeProcess) -> None:
    config, _ = _config(tmp_path, shoe, tmp_path / "T01.sqlite")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "1000000"}
    proc = subprocess.Popen([sys.executable, "-m", "table_controller", "-v", "run", "--config", str(config)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        texts = systemd.collect(6.0)
        assert texts and texts[0].startswith("READY=1"), texts
        pings = [t for t, text in systemd.received if text == "WATCHDOG=1"]
        assert len(pings) >= 5  # every half second once ready
        proc.send_signal(signal.SIGSTOP)  # a hung process: nothing more
        before = len(systemd.received)
        systemd.collect(1.5)
        assert len(systemd.received) == before
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
        proc.wait(20)
        assert systemd.collect(0.5)[-1] == "STOPPING=1"
        assert proc.returncode == 0
        # not on a terminal: the log is one JSON object a line, naming the table
        assert proc.stderr is not None
        lines = [json.loads(line) for line in proc.stderr.read().decode().splitlines() if line.strip()]
        assert lines and all("msg" in line for line in lines)
        assert any(line.get("table") == "T01" for line in lines)  # once the table is known
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_stalled_loop_is_not_well(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from table_controller.cli.run_cmd import table_is_well

    failed = SimpleNamespace(is_set=lambda: False)
    turning = SimpleNamespace(controller=SimpleNamespace(last_turn=time.monotonic()), failed=failed, failure="")
    stalled = SimpleNamespace(controller=SimpleNamespace(last_turn=time.monotonic() - 5), failed=failed, failure="")
    broken = SimpleNamespace(controller=SimpleNamespace(last_turn=time.monotonic()),
                             failed=SimpleNamespace(is_set=lambda: True), failure="JournalError")
    assert table_is_well(turning, 1.0) and not table_is_well(stalled, 1.0) and not table_is_well(broken, 1.0)
