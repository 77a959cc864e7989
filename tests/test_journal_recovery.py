"""kill -9 at a random moment: nothing committed is lost, seq and the shoe link continue."""

from __future__ import annotations

import os
import random
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from journal_helpers import BOOT_ID

from table_controller.journal import Journal, JournalLocked, verify_journal

ROOT = Path(__file__).resolve().parent.parent
WRITER = Path(__file__).resolve().parent / "journal_writer.py"


def start_writer(path: Path, seed: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(path), str(seed)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env,
    )


def read_commits(proc: subprocess.Popen[bytes], count: int, timeout: float = 20.0) -> list[str]:
    """Wait (with a deadline) until the writer has reported at least ``count`` commits."""
    assert proc.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    pending, lines = b"", []
    while len(lines) < count:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not selector.select(remaining):
            raise AssertionError(f"writer reported only {len(lines)} commits in {timeout} s")
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            proc.wait(timeout=5)
            raise AssertionError(f"writer exited early: {proc.stderr.read().decode()}")  # type: ignore[union-attr]
        *complete, pending = (pending + chunk).split(b"\n")
        lines += [line.decode() for line in complete]
    selector.close()
    return lines


def test_kill_9_at_a_random_moment_loses_nothing_committed(tmp_path: Path) -> None:
    seed = random.randrange(1_000_000)
    rng = random.Random(seed)
    path = tmp_path / "t01.sqlite"
    previous_last = 0
    for iteration in range(4):
        writer = start_writer(path, iteration)
        try:
            commits = read_commits(writer, rng.randint(1, 80))
            held = f"open for writing by another process \\(pid {writer.pid},"
            with pytest.raises(JournalLocked, match=held):
                Journal(path, table="T01", game="baccarat")
        finally:
            os.kill(writer.pid, signal.SIGKILL)
            writer.wait(timeout=10)
            writer.stdout.close()  # type: ignore[union-attr]
            writer.stderr.close()  # type: ignore[union-attr]
        first_seq, committed_seq = int(commits[0].split()[0]), int(commits[-1].split()[0])
        assert first_seq > previous_last, f"seed {seed}: seq restarted at {first_seq}"

        with Journal(path, table="T01", game="baccarat") as journal:  # the dead writer's lock is gone
            assert journal.last_seq >= committed_seq, f"seed {seed}: committed events lost"
            seqs = [e.seq for e in journal.events()]
            assert seqs == list(range(1, journal.last_seq + 1))
            cards = sum(1 for _ in journal.events(types={"card"}))
            assert journal.link_state == (BOOT_ID, cards), f"seed {seed}: link state off"
            previous_last = journal.last_seq
        report = verify_journal(path)
        assert report.problems == [], f"seed {seed}, iteration {iteration}"
    assert previous_last > 4


CREATOR = Path(__file__).resolve().parent / "journal_creator.py"


def test_kill_9_while_the_journal_is_created_leaves_a_journal_that_restarts(tmp_path: Path) -> None:
    """A controller killed during its very first start, at every SQL statement of creating its
    journal, restarts: the next start finds either no journal (and creates it) or a whole one,
    never a half-made file that it must refuse as a truncated journal."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    counted = subprocess.run([sys.executable, str(CREATOR), str(tmp_path / "count.sqlite"), "0"],
                             capture_output=True, text=True, timeout=60, env=env, check=True)
    statements = int(counted.stdout)
    assert statements > 3
    for kill_at in range(1, statements + 1):
        path = tmp_path / f"kill-at-{kill_at}" / "T01.sqlite"
        path.parent.mkdir()
        died = subprocess.run([sys.executable, str(CREATOR), str(path), str(kill_at)],
                              capture_output=True, text=True, timeout=60, env=env)
        assert died.returncode == -signal.SIGKILL, (kill_at, died.stderr)
        if path.exists():  # a journal under its own name is a whole one
            report = verify_journal(path)
            assert report.ok and report.events == 0, (kill_at, report.problems)
        with Journal(path, table="T01", game="baccarat", variant="baccarat") as journal:
            assert journal.last_seq == 0, kill_at
            assert journal.check_at_start() == 0
            journal.append([], link=("boot", 1))
        assert verify_journal(path).ok, kill_at
