"""One writer per journal: an ``flock`` on the side file ``<journal>.lock``.

The kernel drops an ``flock`` when its process dies, however it dies, so a
controller killed with kill -9 never leaves a stale lock behind; a second live
writer gets a clear :class:`JournalLocked` naming the holder's pid. The lock
file is never deleted (deleting it would let two writers lock two different
files).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from table_controller.journal.errors import JournalError, JournalLocked


def lock_path(journal: Path) -> Path:
    """The side file whose lock guards ``journal``."""
    return journal.with_name(journal.name + ".lock")


class WriterLock:
    """An exclusive, non-blocking lock held while a :class:`Journal` is open for writing."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, journal: Path) -> WriterLock:
        """Take the lock of ``journal`` or raise :class:`JournalLocked` at once (never waits)."""
        path = lock_path(journal)
        if not path.parent.is_dir():
            raise JournalError(f"journal {journal}: folder {path.parent} does not exist")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise JournalError(
                f"journal {journal}: cannot open lock file {path}: {e.strerror}"
            ) from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise JournalLocked(
                f"journal {journal}: already open for writing by another process (pid {holder}, "
                f"lock file {path}); read it with the journal show/verify/export tools instead"
            ) from None
        except OSError as e:
            os.close(fd)
            raise JournalError(f"journal {journal}: cannot lock {path}: {e.strerror}") from e
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        return cls(path, fd)

    def release(self) -> None:
        """Drop the lock (idempotent); the file stays."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
