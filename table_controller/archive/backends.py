"""Archive backends by name: where a studio keeps its archive, chosen by the location given.

``open_archive("studio.sqlite")`` (or ``sqlite:studio.sqlite``) opens the embedded
SQLite archive, ``open_archive("postgresql://archive@db.studio/archive")`` a
PostgreSQL one. :data:`ARCHIVE_BACKENDS` maps each scheme to its opener; a new
backend is one entry there. :class:`ArchiveOpener` is how a service opens one: it waits
for a server that does not answer yet instead of ending the service.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from pathlib import Path

from table_controller.archive.base import Archive, ArchiveError, ArchiveUnavailable, redact

log = logging.getLogger(__name__)


def _sqlite(location: str) -> Archive:
    from table_controller.archive.sqlite import SQLiteArchive
    return SQLiteArchive(Path(location.removeprefix("sqlite:")))


def _postgres(location: str) -> Archive:
    from table_controller.archive.postgres import PostgresArchive
    return PostgresArchive(location)


#: scheme -> opener. A location without a known scheme is a SQLite file's path.
ARCHIVE_BACKENDS: dict[str, Callable[[str], Archive]] = {
    "sqlite": _sqlite,
    "postgresql": _postgres,
    "postgres": _postgres,
}


def backend_name(location: str) -> str:
    """Which backend a location names: its scheme when it has a known one, else ``sqlite``."""
    scheme = location.split(":", 1)[0].lower() if ":" in location else ""
    return scheme if scheme in ARCHIVE_BACKENDS else "sqlite"


def open_archive(location: str | Path) -> Archive:
    """Open (and migrate) the archive at ``location``; :class:`ArchiveError` when it cannot be."""
    text = str(location)
    if not text:
        raise ArchiveError("no archive location given")
    return ARCHIVE_BACKENDS[backend_name(text)](text)


class ArchiveOpener:
    """Opens an archive whose server may not answer yet (restarting, still booting).

    A refusal that says the store cannot be reached (:class:`ArchiveUnavailable`) is
    logged and tried again after a pause that doubles up to :data:`MAX_PAUSE` seconds,
    for up to ``patience`` seconds (``inf``: for ever) or until ``stop`` is set. Any other
    :class:`ArchiveError` (a server that refuses the location for good, a schema from the
    future, a file that is not an archive) is raised at once: waiting does not mend it.
    After a wait, :attr:`outage` says why it had to wait and :attr:`waited` for how long,
    for the caller's alert.
    """

    #: The longest pause between two tries, seconds.
    MAX_PAUSE = 15.0

    def __init__(self, location: str, patience: float = math.inf, *,
                 opener: Callable[[str], Archive] = open_archive, stop: threading.Event | None = None) -> None:
        self.location = location
        self.patience = patience
        self.opener = opener
        self.stop = stop
        self.outage: str | None = None
        self.waited = 0.0

    def open(self) -> Archive | None:
        """The open archive; None when ``stop`` was set while waiting; the last
        :class:`ArchiveUnavailable` once ``patience`` has run out."""
        start = time.monotonic()
        pause = 1.0
        while True:
            try:
                archive = self.opener(self.location)
            except ArchiveUnavailable as e:
                self.waited = time.monotonic() - start
                self.outage = self.outage or str(e)
                left = self.patience - self.waited
                if left <= 0:
                    raise
                pause = min(pause, left)
                log.warning("%s; trying again in %.1f s", e, pause)
                if self.stop is not None:
                    if self.stop.wait(pause):
                        return None
                else:
                    time.sleep(pause)
                pause = min(pause * 2, self.MAX_PAUSE)
                continue
            if self.outage is not None:
                self.waited = time.monotonic() - start
                log.warning("archive %s answers after %.0f s", redact(self.location), self.waited)
            return archive
