"""The table's event journal: append-only, hash-chained, in one SQLite file per table.

An event is committed here before it is published or acted on; after a crash the
controller resumes from it (seq, shoe link position, round in progress). See
``docs/journal.md``.
"""

from table_controller.journal.errors import (
    JournalError,
    JournalLocked,
    JournalMismatch,
    NotAJournal,
    RoundAlreadySettled,
    RoundAlreadyStarted,
)
from table_controller.journal.schema import GENESIS, chain_hash
from table_controller.journal.store import Journal, JournalReader, JournalRecord
from table_controller.journal.verify import VerifyReport, verify_journal

__all__ = [
    "GENESIS", "Journal", "JournalError", "JournalLocked", "JournalMismatch", "JournalReader",
    "JournalRecord", "NotAJournal", "RoundAlreadySettled", "RoundAlreadyStarted", "VerifyReport",
    "chain_hash", "verify_journal",
]
