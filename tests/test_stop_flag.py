"""The stop flag signal handlers set: no lock, so a signal landing while the main thread waits on
the flag cannot deadlock it (a ``threading.Event`` can: its ``set`` takes the lock ``wait`` holds)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from table_controller.cli.stop_signals import StopFlag

ROOT = Path(__file__).resolve().parents[1]

#: A signal every 50 µs while the main thread waits on the flag and clears it, for 1.5 s.
STORM = textwrap.dedent("""
    import signal, sys, time, threading
    from table_controller.cli.stop_signals import StopFlag
    flag = {flag}
    count = [0]
    def handler(*_):
        count[0] += 1
        flag.set()
    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.00005, 0.00005)
    end = time.monotonic() + 1.5
    woken = 0
    while time.monotonic() < end:
        woken += flag.wait(0.0002)
        flag.clear()
    signal.setitimer(signal.ITIMER_REAL, 0, 0)
    print(count[0], woken)
""")


def test_the_flag_behaves_as_an_event() -> None:
    flag = StopFlag()
    assert not flag.is_set() and flag.wait(0.01) is False
    flag.set()
    flag.set()  # twice: still one flag, and wait returns at once
    assert flag.is_set() and flag.wait() is True and flag.wait(0) is True
    flag.clear()
    assert not flag.is_set() and flag.wait(0.01) is False
    started = time.monotonic()
    threading.Timer(0.1, flag.set).start()  # another thread wakes a waiter without a timeout
    assert flag.wait() is True
    assert time.monotonic() - started < 5
    woken: list[bool] = []
    flag.clear()
    waiters = [threading.Thread(target=lambda: woken.append(flag.wait(10))) for _ in range(3)]
    for w in waiters:
        w.start()
    flag.set()  # every waiter wakes, not only the first
    for w in waiters:
        w.join(10)
    assert woken == [True, True, True]


def test_a_storm_of_signals_while_the_main_thread_waits_never_deadlocks_it() -> None:
    # With threading.Event in place of StopFlag this hangs, or dies of a RecursionError in the
    # handler, within the 1.5 s (Python 3.11.7: 3 runs of 3).
    done = subprocess.run([sys.executable, "-c", STORM.format(flag="StopFlag()")], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    signals, woken = map(int, done.stdout.split())
    assert signals > 1000 and woken > 100  # the handler ran, and its sets woke the waits


def test_waits_keep_their_timeouts_and_a_stale_byte_is_no_wake_up() -> None:
    import os
    import signal

    flag = StopFlag()
    assert flag.wait(-1) is False  # as Event: a negative timeout does not wait
    os.write(flag._write_fd, b"\0")  # a byte a clear racing a set could leave
    started = time.monotonic()
    assert flag.wait(0.3) is False
    assert time.monotonic() - started >= 0.25  # waited its time, did not return at once
    # signals whose handler does not set the flag do not cut the wait short
    previous = signal.signal(signal.SIGALRM, lambda *_: None)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)
        started = time.monotonic()
        assert flag.wait(0.4) is False
        assert time.monotonic() - started >= 0.35
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, previous)
    assert repr(flag) == "<StopFlag unset>"
    flag.set()
    assert repr(flag) == "<StopFlag set>"
