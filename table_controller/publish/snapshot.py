"""What the snapshot endpoint answers: the table's state, its round in progress, its last results.

Pure bookkeeping, no sockets: :class:`SnapshotState` folds published events into
the snapshot of ``events.md`` (the Clone pattern's state). The publisher applies
every event it publishes, and at start-up :meth:`SnapshotState.prime` rebuilds it
from the journal so that a restarted controller serves the same snapshot.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from table_controller.event_types import (
    Event,
    Heartbeat,
    RoundResult,
    RoundStarted,
    RoundVoided,
    ShoeChanged,
    SnapshotReply,
    TableStateChanged,
    TableStatus,
)


class SnapshotState:
    """The snapshot of one table, kept current event by event.

    ``state`` is the payload of the latest ``table.state`` event; ``round`` the
    events of the round in progress from its ``round.start`` on (cleared when it
    ends); ``history`` the last ``history`` ``round.result``/``round.void``
    events; ``shoe`` (an addition to events.md) the ``shoe`` events of the
    current shoe from its latest ``new`` on, so a display can draw the shoe's
    scoreboards. Events are frozen, so replies share them.
    """

    def __init__(self, history: int = 100) -> None:
        if history < 1:
            raise ValueError(f"snapshot history must keep at least 1 result, not {history}")
        self.seq = 0
        self.state: TableStatus | None = None
        self.round: list[Event] = []
        self.history: deque[RoundResult | RoundVoided] = deque(maxlen=history)
        self.shoe: list[ShoeChanged] = []

    def prime(self, events: Iterable[Event]) -> None:
        """Apply journaled events in order (at start-up, before publishing anything)."""
        for event in events:
            self.apply(event)

    def apply(self, event: Event) -> None:
        """Fold one event (already validated, seq increasing) into the snapshot."""
        self.seq = max(self.seq, event.seq)
        if isinstance(event, TableStateChanged):
            self.state = TableStatus(state=event.state, reason=event.reason)
        match event:
            case RoundStarted():
                self.round = [event]
            case RoundResult() | RoundVoided():
                self.round = []
                self.history.append(event)
            case ShoeChanged(event="new"):
                self.shoe = [event]
            case ShoeChanged():
                self.shoe.append(event)
            case Heartbeat():
                pass
            case _ if self.round and event.round == self.round[0].round:
                self.round.append(event)

    def reply(self) -> SnapshotReply:
        """The snapshot reply: ``{"seq", "state", "round", "history", "shoe"}`` (events shared, frozen)."""
        return SnapshotReply(
            seq=self.seq, state=self.state, round=list(self.round), history=list(self.history),
            shoe=list(self.shoe),
        )
