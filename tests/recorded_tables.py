"""Tables of any game played by the rules core through a real EventPublisher (no controller):
the displays' browser tests feed them to the floor page and the overlay and compare the DOM
with the pure functions (roads, boards) over the same results."""

from __future__ import annotations

import random
import time
from typing import Any

from table_controller.event_types import Event, RoundResult, ShoeChanged, numbered
from table_controller.publish import EventPublisher
from table_controller.rules import load_game
from table_controller.rules.cards import shuffled_shoe
from table_controller.sim.journal_rounds import TickingClock, draft, round_drafts


class RecordedTable:
    """Plays whole rounds of ``variant`` (shoe order from ``seed``) into ``publisher``."""

    def __init__(self, publisher: EventPublisher, variant: str, *, table: str = "T01", seed: int = 1) -> None:
        self.publisher = publisher
        self.variant = variant
        self.game = load_game(variant)
        self.table = table
        self.rng = random.Random(seed)
        self.clock = TickingClock(start=time.time(), step=0.01)
        self.seq = publisher.last_seq
        self.rounds = 0
        self.results: list[RoundResult] = []
        self.shoe: list[int] = []
        self.published: list[Event] = []

    def publish(self, event: Event) -> Event:
        self.seq += 1
        event = numbered(event, self.seq)
        self.publisher.publish(event)
        self.published.append(event)
        return event

    def new_shoe(self) -> None:
        self.shoe = shuffled_shoe(self.game.decks, self.rng)
        self.results = []
        self.publish(draft("shoe", None, clock=self.clock, table=self.table, game=self.game.variant.game,
                           event="new", count=0, decks=self.game.decks))

    def play(self, rounds: int) -> None:
        for _ in range(rounds):
            if not self.shoe or self.game.shuffle_every_round or len(self.shoe) < 10:
                self.shoe = shuffled_shoe(self.game.decks, self.rng)
            self.rounds += 1
            drafts, used = round_drafts(self.game, self.shoe, f"R{self.rounds}", clock=self.clock, table=self.table)
            self.shoe = self.shoe[used:]
            for d in drafts:
                event = self.publish(d)
                if isinstance(event, RoundResult):
                    self.results.append(event)

    def open_round(self, betting_seconds: int = 30) -> None:
        """A round whose betting is open (and stays open)."""
        self.rounds += 1
        g = self.game.variant.game
        self.publish(draft("round.start", f"R{self.rounds}", clock=self.clock, table=self.table, game=g,
                           variant=self.variant, betting_seconds=betting_seconds))
        self.publish(draft("table.state", f"R{self.rounds}", clock=self.clock, table=self.table, game=g,
                           state="betting", reason=None))

    def heartbeat(self, state: str = "idle") -> None:
        self.publish(draft("heartbeat", None, clock=self.clock, table=self.table, game=self.game.variant.game,
                           state=state))

    def pause(self, kind: str, detail: str) -> None:
        g = self.game.variant.game
        self.publish(draft("alert", None, clock=self.clock, table=self.table, game=g, kind=kind,
                           severity="critical", detail=detail))
        self.publish(draft("table.state", None, clock=self.clock, table=self.table, game=g, state="paused",
                           reason=detail, cause=kind))

    @property
    def shoe_events(self) -> list[ShoeChanged]:
        return [e for e in self.published if isinstance(e, ShoeChanged)]

    def result_dicts(self) -> list[tuple[str | None, dict[str, Any]]]:
        import msgspec

        return [(r.round, msgspec.to_builtins(r)) for r in self.results]
