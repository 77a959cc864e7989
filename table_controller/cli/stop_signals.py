"""SIGTERM and SIGINT of ``table-controller run``: a clean stop at any moment, start-up included.

A table that is told to stop exits 0 with its journal whole, whenever the signal comes.
Python's default SIGTERM action ends the process at once (status -15), so the handler
must be in place before anything else the command does: :func:`table_controller.cli.main`
arms it first, before the sub-commands are even imported.

While the table starts (imports, configuration, journal check, devices, restore) a stop
signal raises :class:`Terminated` in the main thread, like Ctrl-C's KeyboardInterrupt:
start-up unwinds, closing what it built (the journal's writes roll back on any exception,
a new journal file is linked into place whole or not at all), and the command exits 0.
Once the table runs, a stop signal only sets :attr:`StopSignals.requested`; the command's
loop sees it and closes the table in order. That flag, and every other a handler sets, is a
:class:`StopFlag`, never a bare ``threading.Event``: an Event's ``set`` in a handler can wait
for ever on the lock the interrupted main thread holds inside ``Event.wait``.

A launcher that may stop a controller it has just started (the soak) starts it with
SIGTERM blocked (``table_controller.soak.controller_process``): that covers the moments
before the interpreter runs our first line, when no program can handle a signal.
:meth:`StopSignals.arm` unblocks the signals once its handler is in place, and one that
came meanwhile is delivered then.
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
import weakref
from collections.abc import Iterable
from types import FrameType
from typing import Any

#: The signals that ask a table to stop.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopFlag(threading.Event):
    """A :class:`threading.Event` a signal handler may set.

    ``Event.set`` takes the event's lock. A handler runs in the main thread between two of its
    bytecodes, so if the main thread was inside ``Event.wait`` holding that same lock (entering or
    leaving the wait), ``set`` waits for a lock its own thread holds, for ever: a table told to
    stop that never stops (seen in CI: 1 run in some hundreds, more under load). Here ``set``
    takes no lock: it raises a flag and writes a byte to a pipe, both safe at any moment, and
    ``wait`` polls the pipe. Every other thread may use it as an Event; ``clear`` racing a
    ``set`` may leave the flag either way (nothing clears a stop flag while the table runs).
    """

    def __init__(self) -> None:
        super().__init__()
        self._raised = False
        self._read_fd, self._write_fd = os.pipe()  # not inherited by child processes (PEP 446)
        os.set_blocking(self._read_fd, False)
        os.set_blocking(self._write_fd, False)
        # not at exit: the handlers that set the flag stay installed to the very end
        weakref.finalize(self, _close_fds, self._read_fd, self._write_fd).atexit = False

    def set(self) -> None:
        self._raised = True
        try:
            os.write(self._write_fd, b"\0")
        except OSError:  # full (whoever waits is woken already) or closed: the flag is raised
            pass

    def is_set(self) -> bool:
        return self._raised

    def clear(self) -> None:
        self._raised = False
        self._drain()

    def _drain(self) -> None:
        try:
            while os.read(self._read_fd, 4096):
                pass
        except OSError:  # empty
            pass

    def wait(self, timeout: float | None = None) -> bool:
        """Whether the flag is raised, waiting up to ``timeout`` seconds (None: until it is;
        0 or less: not at all) for it. A wake-up lost to a racing ``clear`` costs at most
        :data:`_WAKE_EVERY` seconds: the flag is looked at again that often."""
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        poller = select.poll()  # not select.select: it refuses descriptors past 1023
        poller.register(self._read_fd, select.POLLIN)
        while not self._raised:
            left = _WAKE_EVERY if deadline is None else min(deadline - time.monotonic(), _WAKE_EVERY)
            if left <= 0:
                break
            # interrupted by a signal: retried with the time left (PEP 475)
            if poller.poll(left * 1000) and not self._raised:
                self._drain()  # a byte a racing clear left: not a wake-up
        return self._raised

    def __repr__(self) -> str:
        return f"<StopFlag {'set' if self._raised else 'unset'}>"


#: The longest a :meth:`StopFlag.wait` sleeps before it looks at the flag again.
_WAKE_EVERY = 0.5


def _close_fds(*fds: int) -> None:
    for fd in fds:
        os.close(fd)


def stop_on_signals(flag: StopFlag, signals: Iterable[int] = STOP_SIGNALS) -> None:
    """Set ``flag`` on each of ``signals`` (main thread only, as ``signal.signal`` requires)."""
    for sig in signals:
        signal.signal(sig, lambda *_: flag.set())


class Terminated(BaseException):
    """A stop signal arrived while the table was starting: start-up unwinds, the command exits 0.

    A BaseException, like KeyboardInterrupt, so that no ``except Exception`` swallows it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name} during start-up")
        self.signum = signum


class StopSignals:
    """The process's stop signals, in start-up mode (they raise) or running mode (they set a flag)."""

    def __init__(self) -> None:
        #: Set by the first stop signal, in either mode.
        self.requested = StopFlag()
        self._starting = False
        self._armed = False
        self._previous: dict[int, Any] = {}

    @property
    def armed(self) -> bool:
        return self._armed

    def arm(self) -> None:
        """Install the handlers in start-up mode, then unblock the stop signals (a pending one
        is delivered here, raising :class:`Terminated`). Idempotent; main thread only."""
        if self._armed:
            return
        self._starting = True
        for sig in STOP_SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        self._armed = True
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)

    def running(self) -> None:
        """Start-up is over: from now on a stop signal only sets :attr:`requested`."""
        self._starting = False

    def disarm(self) -> None:
        """Give back the handlers found by :meth:`arm` (for callers of ``main()`` from Python)."""
        self._starting = False
        if not self._armed:
            return
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous.clear()
        self._armed = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.requested.set()
        if self._starting:
            self._starting = False  # once: the clean-up that follows is not interrupted again
            raise Terminated(signum)


#: The one set of handlers of this process.
STOP = StopSignals()

