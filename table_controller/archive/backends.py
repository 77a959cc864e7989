"""Archive backends by name: where a studio keeps its archive, chosen by the location given.

``open_archive("studio.sqlite")`` (or ``sqlite:studio.sqlite``) opens the embedded
SQLite archive, ``open_archive("postgresql://archive@db.studio/archive")`` a
PostgreSQL one. :data:`ARCHIVE_BACKENDS` maps each scheme to its opener; a new
backend is one entry there.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from table_controller.archive.base import Archive, ArchiveError


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
