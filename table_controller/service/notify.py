"""systemd's notification protocol (``sd_notify``), and the watchdog fed by the table's loop.

Under ``Type=notify`` systemd passes ``NOTIFY_SOCKET`` (a datagram socket: a path, or
``@name`` for an abstract one) and, with ``WatchdogSec=``, ``WATCHDOG_USEC``. The
table says ``READY=1`` once it deals, ``STOPPING=1`` when it closes, and ``WATCHDOG=1``
at half the watchdog interval *only while its loop turns and its journal accepts
appends*: a hung loop stops the pings, and systemd restarts the table (a crashed one is
restarted by ``Restart=``). No library: the protocol is one datagram.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping


class SystemdNotifier:
    """Sends notifications to ``NOTIFY_SOCKET``; does nothing when there is none (not under systemd)."""

    def __init__(self, address: str | None, watchdog_usec: int | None = None) -> None:
        self.address = address
        self.watchdog_seconds = watchdog_usec / 1_000_000 if watchdog_usec else None
        self._socket: socket.socket | None = None
        if address:
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> SystemdNotifier:
        env = os.environ if env is None else env
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        watchdog = int(usec) if usec.isdigit() and (not pid or pid == str(os.getpid())) else None
        return cls(env.get("NOTIFY_SOCKET") or None, watchdog)

    @property
    def enabled(self) -> bool:
        return self._socket is not None

    def notify(self, text: str) -> bool:
        """Send one notification; False when there is no socket or it could not be sent."""
        if self._socket is None or self.address is None:
            return False
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        try:
            self._socket.sendto(text.encode(), target)
            return True
        except OSError:
            return False

    def ready(self, status: str = "") -> bool:
        return self.notify("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class Watchdog:
    """Pings systemd's watchdog at half its interval while ``healthy()`` says the table is well.

    ``healthy`` is asked at each :meth:`tick`; it is the table's own check (its loop turned
    within the interval, its journal accepts appends). Call :meth:`tick` often (the run
    command's wait loop does, every half second).
    """

    def __init__(self, notifier: SystemdNotifier, healthy: Callable[[], bool],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.notifier = notifier
        self.healthy = healthy
        self.clock = clock
        self.pings = 0
        self.withheld = 0
        self._last = float("-inf")

    @property
    def interval(self) -> float | None:
        return self.notifier.watchdog_seconds / 2 if self.notifier.watchdog_seconds else None

    def tick(self) -> None:
        interval = self.interval
        if interval is None or self.clock() - self._last < interval:
            return
        if not self.healthy():
            self.withheld += 1
            return
        if self.notifier.notify("WATCHDOG=1"):
            self.pings += 1
            self._last = self.clock()
