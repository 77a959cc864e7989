"""Rounds as a live table journals them, made with the real rules core and no table around.

``round_drafts(game, shoe, "R1", clock=clock)`` gives the drafts (events without seq)
of one full round as the controller journals them: round.start, table.state betting,
betting.closed, table.state dealing, one card event per card at the position
``game.deal`` gives, round.result from ``deal.result().to_dict()``, table.state
result. :func:`chained_rounds` numbers and chains them as a journal would, without a
journal (the archive benchmark's studio of 100 tables). Tests use these too
(``tests/journal_helpers.py``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any, cast

import msgspec

from table_controller.event_types import EVENT_CLASSES, Event, Heartbeat, encode_event, numbered, parse_ts
from table_controller.events import format_ts
from table_controller.journal.schema import GENESIS, chain_hash
from table_controller.rules import Game, load_game
from table_controller.rules.cards import CODES, shuffled_shoe

TABLE = "T01"
BOOT_ID = "shoe-boot-1"
#: 2026-11-29T18:40:00.000Z
START_EPOCH = 1795977600.0


class TickingClock:
    """A made-up clock: every reading is ``step`` seconds after the previous one."""

    def __init__(self, start: float = START_EPOCH, step: float = 0.25) -> None:
        self.now = start
        self.step = step

    def ts(self) -> str:
        text = format_ts(self.now)
        self.now += self.step
        return text


def draft(
    type: str, round: str | None, *, clock: TickingClock, table: str = TABLE,
    game: str = "baccarat", **payload: Any,
) -> Event:
    """One stamped, unnumbered event (what the controller gives the journal).

    Nested payloads (a result's hands) become their types; a draft that breaks its type
    on purpose is built as given, so that the journal's own check can be tested.
    """
    cls = EVENT_CLASSES[type]
    fields: dict[str, Any] = {"table": table, "ts": clock.ts(), "game": game, "round": round, **payload}
    try:
        return cast(Event, msgspec.convert(fields, cls))
    except msgspec.ValidationError:
        return cast(Event, cls(**fields))


def round_drafts(
    game: Game, shoe: list[int], round_id: str, *, clock: TickingClock, table: str = TABLE,
    betting_seconds: int = 15, source: str = "shoe",
) -> tuple[list[Event], int]:
    """Drafts of one complete round dealt from the front of ``shoe``; and the cards used."""
    deal, used = game.deal(shoe)
    g = game.variant.game

    def d(type: str, **payload: Any) -> Event:
        return draft(type, round_id, clock=clock, table=table, game=g, **payload)

    drafts = [
        d("round.start", variant=game.variant.id, betting_seconds=betting_seconds),
        d("table.state", state="betting", reason=None),
        d("betting.closed"),
        d("table.state", state="dealing", reason=None),
    ]
    for position, index, card in deal.placed:
        drafts.append(d("card", position=position, index=index, code=CODES[card], source=source))
    drafts.append(d("round.result", **deal.result().to_dict()))
    drafts.append(d("table.state", state="result", reason=None))
    return drafts, used



def chained_rounds(table: str, rounds: int, *, variant: str = "baccarat", seed: int = 7,
                   clock: TickingClock | None = None, heartbeats: bool = False) -> Iterator[tuple[int, str, str]]:
    """(seq, body, hash) of ``rounds`` complete rounds of one table, numbered from 1 and
    chained from the genesis hash, exactly as its journal would hold them. With
    ``heartbeats`` a heartbeat fills every whole second between two events, as a live
    table sends them (the clock's ``step`` is then the seconds between round events)."""
    game = load_game(variant)
    clock = clock or TickingClock()
    rng = random.Random(seed)
    shoe = shuffled_shoe(game.decks, rng)
    seq, prev = 0, GENESIS
    last_ts: float | None = None
    state = "idle"
    for n in range(1, rounds + 1):
        if game.shuffle_every_round or len(shoe) < 10:
            shoe = shuffled_shoe(game.decks, rng)
        drafts, used = round_drafts(game, shoe, f"R{n}", clock=clock, table=table)
        shoe = shoe[used:]
        for d in drafts:
            filler: list[Event] = []
            if heartbeats and last_ts is not None:
                at = parse_ts(d.ts)
                beat = last_ts + 1.0
                while beat < at:
                    filler.append(Heartbeat(table=table, ts=format_ts(beat), game=d.game, round=None,
                                            state=state))  # type: ignore[arg-type]
                    beat += 1.0
            last_ts = parse_ts(d.ts)
            state = getattr(d, "state", state) if d.type == "table.state" else state
            for event in (*filler, d):
                seq += 1
                body = encode_event(numbered(event, seq)).decode("utf-8")
                prev = chain_hash(prev, body)
                yield seq, body, prev
