"""A scripted table for the event-stream tests: real EventPublisher, events from make_event.

It plays what the controller will: journal (here a list) then publish, seq +1 per event.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from table_controller.event_types import Event, EventBase, event_from_dict
from table_controller.events import make_event
from table_controller.publish import EventPublisher
from table_controller.rules import load_game
from table_controller.rules.cards import parse_cards


class FakeTable:
    """Drives an EventPublisher with scripted baccarat rounds; ``journal`` keeps every event."""

    def __init__(self, publisher: EventPublisher, *, table: str = "T01", game: str = "baccarat",
                 clock: Any = time.time) -> None:
        self.publisher = publisher
        self.table = table
        self.game = game
        self.clock = clock
        self.seq = publisher.last_seq
        self.journal: list[Event] = []
        self.round: str | None = None
        self.rounds = 0
        self._lock = threading.Lock()  # heartbeats may come from another thread
        self.state = "idle"

    def emit(self, type: str, **payload: Any) -> Event:
        with self._lock:
            if type == "heartbeat" and payload.get("state") is None:
                payload["state"] = self.state  # read under the lock: never stale
            self.seq += 1
            event = make_event(table=self.table, seq=self.seq, ts=self.clock(), type=type,
                               game=self.game, round=self.round, **payload)
            self.journal.append(event)
            if type == "table.state":
                self.state = payload["state"]
            self.publisher.publish(event)
            return event

    def heartbeat(self, state: str | None = None) -> Event:
        """A heartbeat carrying the table's current state (or ``state``)."""
        return self.emit("heartbeat", state=state)

    def new_shoe(self, count: int = 416) -> Event:
        return self.emit("shoe", event="new", count=count)

    def open_round(self, betting_seconds: int = 15) -> list[Event]:
        self.rounds += 1
        self.round = f"{self.table}-{self.rounds:06d}"
        return [
            self.emit("table.state", state="betting", reason=None),
            self.emit("round.start", variant="baccarat", betting_seconds=betting_seconds),
        ]

    def deal(self, cards: list[str]) -> list[Event]:
        """Close betting and deal ``cards`` (shoe order); returns the card events."""
        game = load_game("baccarat")
        deal, used = game.deal(parse_cards(cards))
        self._result = deal.result().to_dict()
        hands = self._result["hands"]
        order = [("player", 0), ("banker", 0), ("player", 1), ("banker", 1)]
        if len(hands["player"]["cards"]) == 3:
            order.append(("player", 2))
        if len(hands["banker"]["cards"]) == 3:
            order.append(("banker", 2))
        events = [self.emit("betting.closed"), self.emit("table.state", state="dealing", reason=None)]
        for position, index in order:
            events.append(self.emit("card", position=position, index=index,
                                    code=hands[position]["cards"][index], source="shoe"))
        return events

    def finish(self) -> list[Event]:
        result = self._result
        events = [
            self.emit("table.state", state="result", reason=None),
            self.emit("round.result", hands=result["hands"], outcome=result["outcome"],
                      payouts=result["payouts"]),
        ]
        self.round = None
        events.append(self.emit("table.state", state="idle", reason=None))
        return events

    def play_round(self, cards: list[str]) -> list[Event]:
        return [*self.open_round(), *self.deal(cards), *self.finish()]


#: Shoe-order cards of a few rounds and their baccarat winners.
BANKER_ROUND = ["QH", "8S", "3C", "QD"]            # player 3, banker natural 8
PLAYER_ROUND = ["4H", "KS", "3D", "5C", "9H"]      # player 7, banker 4 after drawing
TIE_ROUND = ["9H", "9C", "KD", "KC"]               # natural 9 each


def as_event(event: Event | dict[str, Any]) -> Event:
    """The typed event of what a test scripted: an event already, or an event dict."""
    return event if isinstance(event, EventBase) else event_from_dict(event)  # type: ignore[return-value]
