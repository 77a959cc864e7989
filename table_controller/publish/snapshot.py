"""What the snapshot endpoint answers: the table's state, its round in progress, its last results.

Pure bookkeeping, no sockets: :class:`SnapshotState` folds published events into
the snapshot of ``events.md`` (the Clone pattern's state). The publisher applies
every event it publishes, and at start-up :meth:`SnapshotState.prime` rebuilds it
from the journal so that a restarted controller serves the same snapshot.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Iterable
from typing import Any

#: Event types that end a round (and enter the history).
ROUND_ENDS = ("round.result", "round.void")


class SnapshotState:
    """The snapshot of one table, kept current event by event.

    ``state`` is the payload of the latest ``table.state`` event; ``round`` the
    events of the round in progress from its ``round.start`` on (cleared when it
    ends); ``history`` the last ``history`` ``round.result``/``round.void``
    events; ``shoe`` (an addition to events.md) the ``shoe`` events of the
    current shoe from its latest ``new`` on, so a display can draw the shoe's
    scoreboards.
    """

    def __init__(self, history: int = 100) -> None:
        if history < 1:
            raise ValueError(f"snapshot history must keep at least 1 result, not {history}")
        self.seq = 0
        self.state: dict[str, Any] | None = None
        self.round: list[dict[str, Any]] = []
        self.history: deque[dict[str, Any]] = deque(maxlen=history)
        self.shoe: list[dict[str, Any]] = []

    def prime(self, events: Iterable[dict[str, Any]]) -> None:
        """Apply journaled events in order (at start-up, before publishing anything)."""
        for event in events:
            self.apply(event)

    def apply(self, event: dict[str, Any]) -> None:
        """Fold one event (already validated, seq increasing) into the snapshot."""
        kind = event["type"]
        self.seq = max(self.seq, int(event["seq"]))
        if kind == "table.state":
            self.state = {"state": event["state"], "reason": event.get("reason")}
        if kind == "round.start":
            self.round = [event]
        elif kind in ROUND_ENDS:
            self.round = []
            self.history.append(event)
        elif kind == "shoe":
            if event.get("event") == "new":
                self.shoe = [event]
            else:
                self.shoe.append(event)
        elif kind != "heartbeat" and self.round and event.get("round") == self.round[0].get("round"):
            self.round.append(event)

    def shallow_reply(self) -> dict[str, Any]:
        """The snapshot reply with the event dicts shared, not copied (cheap, for serialising at once)."""
        return {"seq": self.seq, "state": dict(self.state) if self.state else None,
                "round": list(self.round), "history": list(self.history), "shoe": list(self.shoe)}

    def reply(self) -> dict[str, Any]:
        """The snapshot reply: ``{"seq", "state", "round", "history", "shoe"}`` (a deep copy)."""
        return {
            "seq": self.seq,
            "state": copy.deepcopy(self.state),
            "round": copy.deepcopy(self.round),
            "history": copy.deepcopy(list(self.history)),
            "shoe": copy.deepcopy(self.shoe),
        }
