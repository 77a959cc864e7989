"""What the soak itself saw: ground truth from the shoes, injected faults, kills, streams.

The checker compares these with the journals; nothing here comes from the
controller's own bookkeeping.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from table_controller.client import ClientItem


@dataclass(frozen=True)
class Draw:
    """A card that left a simulated shoe, as the shoe printed it (``card XX`` / ``unread XX``)."""

    code: str
    unread: bool  # a no-read: the supervisor enters it by hand
    round: str | None  # the round the dealer believed was in play (a hint: the checker uses times)
    at: float  # wall clock (time.time) when the dealer pulled it
    fault: str | None = None  # "misdeal" when pulled on purpose while paused
    count: int | None = None  # the shoe's number for it (cards out since the shoe was loaded)
    #: Line tables: what the reader's simulator says happened to the card's line
    #: ("lost", "twice", "garbage", "unplugged").
    line_faults: tuple[str, ...] = ()

    @property
    def line_lost(self) -> bool:
        """The reader never sent this card's line (a lost line, or the cable was out)."""
        return "lost" in self.line_faults or "unplugged" in self.line_faults


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
    protocol: str = "slp1"  # "lines": a plain line reader (no gate, no count, no retransmission)
    draws: list[Draw] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    #: Line tables: the dealer called a misdeal (card dropped) for a card the table did not
    #: take (kind "missing-card"): a reaction, not an injected fault.
    misdeal_calls: list[Fault] = field(default_factory=list)
    #: The reader's or shoe's own counters at the end (its ``stats`` reply).
    device_stats: dict[str, Any] | None = None
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

    def add_misdeal_call(self, call: Fault) -> None:
        with self.lock:
            self.misdeal_calls.append(call)

    @property
    def line_reader(self) -> bool:
        return self.protocol == "lines"


@dataclass
class StreamRecord:
    """One subscriber's items for one table (typed events and snapshots), in the order it yielded them."""

    items: list[ClientItem] = field(default_factory=list)

    @property
    def last_seq(self) -> int:
        return self.items[-1].seq if self.items else 0
