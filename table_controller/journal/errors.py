"""Errors of the event journal; all are :class:`JournalError`, itself a ``TableError``."""

from __future__ import annotations

from table_controller.errors import TableError


class JournalError(TableError, RuntimeError):
    """The journal cannot be opened, read or written; the message names the file."""


class NotAJournal(JournalError, ValueError):
    """The file is not a table-controller journal (another SQLite file, garbage, damaged)."""


class JournalMismatch(JournalError, ValueError):
    """The journal belongs to another table or game than the one opening it."""


class JournalLocked(JournalError, BlockingIOError):
    """Another live process holds the journal open for writing."""


class RoundAlreadySettled(JournalError, ValueError):
    """A second ``round.result``/``round.void`` for a round: a result is settled exactly once."""


class RoundAlreadyStarted(JournalError, ValueError):
    """A second ``round.start`` with a round id already used at this table."""


class JournalBroken(JournalError, ValueError):
    """A journal whose chain, seqs or triggers do not hold: it is never extended."""


class JournalEmpty(JournalError, ValueError):
    """An existing journal file with nothing in it: a damaged journal is not silently new."""
