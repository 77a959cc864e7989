"""What the soak itself saw: ground truth from the shoes, injected faults, kills, streams.

The checker compares these with the journals; nothing here comes from the
controller's own bookkeeping.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Draw:
    """A card that left a simulated shoe, as the shoe printed it (``card XX`` / ``unread XX``)."""

    code: str
    unread: bool  # a no-read: the supervisor enters it by hand
    round: str | None  # the round the dealer believed was in play (a hint: the checker uses times)
    at: float  # wall clock (time.time) when the dealer pulled it
    fault: str | None = None  # "misdeal" when pulled on purpose while paused
    count: int | None = None  # the shoe's number for it (cards out since the shoe was loaded)


@dataclass(frozen=True)
class Fault:
    """One injected fault: its kind, table, the round it hit (if any) and when."""

    kind: str
    table: str
    round: str | None
    at: float


@dataclass
class TableRecord:
    """Everything the soak recorded about one table (thread-safe appends)."""

    table: str
    variant: str
    journal: str
    draws: list[Draw] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    restarts: int = 0
    dealer_error: str | None = None
    rounds_started: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add_draw(self, draw: Draw) -> None:
        with self.lock:
            self.draws.append(draw)

    def add_fault(self, fault: Fault) -> None:
        with self.lock:
            self.faults.append(fault)


@dataclass
class StreamRecord:
    """One subscriber's items for one table, in the order it yielded them."""

    items: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last_seq(self) -> int:
        return self.items[-1]["seq"] if self.items else 0
