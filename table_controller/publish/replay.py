"""Replay: a bounded slice of a table's journal, served beside its snapshot.

A consumer that missed events (a display that was off, an archive that fell
behind) asks the table's snapshot endpoint for them by seq instead of giving up
its history for a fresh snapshot (the Clone pattern's catch-up):

    {"op": "replay", "after_seq": 120, "limit": 500}

and gets the journaled events with ``seq > after_seq``, at most ``limit``
(:data:`MAX_LIMIT` whatever is asked), in seq order, each with its chain hash and
its body exactly as journaled, so the consumer can check the slice against the
hash chain (``hash = sha256(previous hash + body)``, see docs/journal.md):

    {"table": "T01", "after_seq": 120, "prev_hash": "<hash of seq 120>",
     "last_seq": 5031, "more": true,
     "events": [{"seq": 121, "hash": "...", "body": "{...the event's JSON...}"}, ...]}

``prev_hash`` is 64 zeros for ``after_seq`` 0; ``last_seq`` is the journal's last
seq when the slice was read; ``more`` says whether events after the slice exist.
A request that cannot be answered gets ``{"error": "...", "code": "..."}``:
``bad-request`` (malformed), ``beyond-end`` (``after_seq`` past the journal's
last seq: the journal was replaced or cut), ``unavailable`` (the journal cannot
be read), ``no-replay`` (the table serves no replay).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from table_controller.journal.errors import JournalError
from table_controller.journal.store import JournalReader

#: Events in one reply at most (about 300-600 bytes each).
MAX_LIMIT = 1000
DEFAULT_LIMIT = 500
GENESIS_HASH = "0" * 64


class ReplayRequestError(ValueError):
    """A replay request that cannot be answered; its text is the reply's ``error``, ``code``
    the reply's ``code`` (``bad-request``, ``beyond-end``)."""

    def __init__(self, text: str, code: str = "bad-request") -> None:
        super().__init__(text)
        self.code = code


def error_reply(text: str, code: str) -> str:
    """The JSON text of a refusal: ``{"error": text, "code": code}``."""
    return json.dumps({"error": text, "code": code})


def parse_replay_request(request: dict[str, object]) -> tuple[int, int]:
    """``(after_seq, limit)`` of a ``{"op": "replay", ...}`` request, or ReplayRequestError."""
    after = request.get("after_seq", 0)
    limit = request.get("limit", DEFAULT_LIMIT)
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise ReplayRequestError('"after_seq" must be a whole number >= 0')
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ReplayRequestError(f'"limit" must be a whole number from 1 to {MAX_LIMIT}')
    return after, min(limit, MAX_LIMIT)


class JournalReplay:
    """Answers replay requests from one journal file, read-only (beside the live writer).

    The reader is opened on first use, so a table starts the same whether or not anyone
    replays; a journal that cannot be read gives an error reply, never an exception."""

    def __init__(self, path: str | Path, table: str) -> None:
        self.path = Path(path)
        self.table = table
        self._reader: JournalReader | None = None
        self._lock = threading.Lock()
        self.served = 0

    def reply(self, after_seq: int, limit: int) -> str:
        """The JSON text of the reply to a parsed request (see module doc)."""
        with self._lock:
            try:
                if self._reader is None:
                    self._reader = JournalReader(self.path)
                reader = self._reader
                last = reader.last_seq
                if after_seq > last:
                    raise ReplayRequestError(f'"after_seq" {after_seq} is beyond the journal\'s last seq {last}',
                                             "beyond-end")
                first = reader.first_seq
                if after_seq < first - 1:
                    raise ReplayRequestError(
                        f"seqs up to {first - 1} were pruned from this table's journal once the studio "
                        f"archive held them; ask the archive, or ask after seq {first - 1}", "pruned")
                prev = GENESIS_HASH if after_seq == 0 else reader.hash_at(after_seq)
                if prev is None:
                    raise ReplayRequestError(f"seq {after_seq} is not in the journal", "beyond-end")
                rows = []
                end = after_seq
                for record in reader.records(after_seq, until_seq=min(last, after_seq + limit)):
                    rows.append(json.dumps({"seq": record.seq, "hash": record.hash, "body": record.body}))
                    end = record.seq
            except JournalError as e:
                return error_reply(f"replay unavailable: {e}", "unavailable")
            except ReplayRequestError as e:
                return error_reply(str(e), e.code)
        self.served += 1
        head = json.dumps({"table": self.table, "after_seq": after_seq, "prev_hash": prev, "last_seq": last,
                           "more": end < last})
        return head[:-1] + ', "events": [' + ", ".join(rows) + "]}"

    def close(self) -> None:
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
