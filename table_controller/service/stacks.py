"""Every thread's Python stack on standard error, for a table that hangs.

``kill -USR1 <pid>`` (under systemd: ``systemctl kill -s USR1 table-controller-T01``)
writes the stack of every thread of a running table to standard error, which journald
keeps, and the table goes on. A fatal signal does it too before the process dies; that
includes SIGABRT, systemd's default ``WatchdogSignal``, so a table the watchdog kills
for a loop that stopped turning leaves where each thread stood. The soak's launcher asks
for the stacks of a controller that does not stop in time before it kills it
(``table_controller.soak.controller_process``). Python's own ``faulthandler`` does the
writing: it works from its signal handler without taking a lock another thread may hold.
"""

from __future__ import annotations

import faulthandler
import signal
import sys

#: The signal that asks a table for its threads' stacks.
STACKS_SIGNAL = signal.SIGUSR1


def dump_stacks_on_signal() -> bool:
    """Write every thread's stack to standard error on :data:`STACKS_SIGNAL` and on a fatal
    signal; False (nothing installed) when standard error is no file (a caller capturing it).
    For a process of its own: the handlers outlive the call. Main thread only; idempotent."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return False
    faulthandler.enable(file=sys.stderr, all_threads=True)
    faulthandler.register(STACKS_SIGNAL, file=sys.stderr, all_threads=True, chain=False)
    return True
