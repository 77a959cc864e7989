"""The studio's archive: every table's journaled events, exactly once, chain-checked.

:mod:`~table_controller.archive.store` keeps them (SQLite, append-only, versioned
schema); :mod:`~table_controller.archive.follower` pulls each table's events from
its replay endpoint and checks them against the hash chain before they are kept.
"""

from table_controller.archive.follower import ArchiveFollower, CatchUp, TableSource
from table_controller.archive.store import ArchiveAlert, ArchiveError, SQLiteArchive

__all__ = ["ArchiveAlert", "ArchiveError", "ArchiveFollower", "CatchUp", "SQLiteArchive", "TableSource"]
