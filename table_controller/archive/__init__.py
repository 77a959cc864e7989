"""The studio's archive: every table's journaled events, exactly once, chain-checked.

:mod:`~table_controller.archive.base` says what an archive is (append-only, keyed by
(table, seq), versioned schema); :mod:`~table_controller.archive.sqlite` and
:mod:`~table_controller.archive.postgres` keep one, chosen by
:func:`~table_controller.archive.backends.open_archive`;
:mod:`~table_controller.archive.follower` pulls each table's events from its replay
endpoint and checks them against the hash chain before they are kept.
"""

from table_controller.archive.backends import ARCHIVE_BACKENDS, open_archive
from table_controller.archive.base import Archive, ArchiveAlert, ArchiveError, ArchiveUnavailable
from table_controller.archive.follower import ArchiveFollower, CatchUp, TableSource
from table_controller.archive.sqlite import SQLiteArchive

__all__ = ["ARCHIVE_BACKENDS", "Archive", "ArchiveAlert", "ArchiveError", "ArchiveFollower", "ArchiveUnavailable",
           "CatchUp", "SQLiteArchive", "TableSource", "open_archive"]
