"""A table for archive and studio tests: a journal being written and its snapshot endpoint
answering replay, with no controller around it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import zmq
from journal_helpers import TickingClock, write_rounds

from table_controller.journal import Journal
from table_controller.publish import EventPublisher
from table_controller.publish.replay import JournalReplay

LOOPBACK = "tcp://127.0.0.1:0"


class LiveTable:
    """A journal being written and its snapshot endpoint answering replay (no controller)."""

    def __init__(self, path: Path, table: str = "T01", seed: int = 7) -> None:
        self.journal = Journal(path, table=table, game="baccarat", variant="baccarat")
        self.clock = TickingClock()
        self.rounds = 0
        self.seed = seed
        self.context: zmq.Context[Any] = zmq.Context()
        self.publisher = EventPublisher(table, LOOPBACK, LOOPBACK, context=self.context,
                                        replay=JournalReplay(path, table)).start()
        assert self.publisher.bound_snapshot is not None
        self.endpoint: str = self.publisher.bound_snapshot

    def deal(self, rounds: int) -> None:
        write_rounds(self.journal, rounds=rounds, seed=self.seed + self.rounds, clock=self.clock,
                     first_round=self.rounds + 1)
        self.rounds += rounds

    def close(self) -> None:
        self.publisher.close()
        self.context.destroy(linger=0)
        self.journal.close()
