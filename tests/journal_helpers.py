"""Realistic journal content made with the real rules core; reusable by any test.

``round_drafts(game, shoe, "R1", clock=clock)`` gives the drafts (events without
seq) of one full round as the controller journals them: round.start, table.state
betting, betting.closed, table.state dealing, one card event per card at the
position ``game.deal`` gives, round.result from ``deal.result().to_dict()``,
table.state result. ``write_rounds`` appends several rounds to a journal the way
a live table would (cards one transaction each, with the shoe link state).
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

from table_controller.event_types import Event
from table_controller.events import to_json
from table_controller.journal import GENESIS, Journal, chain_hash
from table_controller.rules import load_game
from table_controller.rules.cards import shuffled_shoe
from table_controller.sim.journal_rounds import (  # noqa: F401 - re-exported for the tests
    BOOT_ID,
    START_EPOCH,
    TABLE,
    TickingClock,
    draft,
    round_drafts,
)


def write_rounds(
    journal: Journal, variant: str = "baccarat", rounds: int = 3, *, seed: int = 7,
    clock: TickingClock | None = None, first_round: int = 1,
) -> list[Event]:
    """Append ``rounds`` complete rounds as a live table would; return the committed events.

    The four opening events go in one transaction, each card in its own with the
    shoe link state (boot id, count of cards delivered), the result and the final
    state in one.
    """
    game = load_game(variant)
    clock = clock or TickingClock()
    rng = random.Random(seed)
    shoe = shuffled_shoe(game.decks, rng)
    link = journal.link_state
    shoe_seq = link[1] if link else 0
    committed: list[Event] = []
    for n in range(first_round, first_round + rounds):
        if game.shuffle_every_round or len(shoe) < 10:
            shoe = shuffled_shoe(game.decks, rng)
        drafts, used = round_drafts(game, shoe, f"R{n}", clock=clock, table=journal.table)
        shoe = shoe[used:]
        committed += journal.append(drafts[:4])
        for card_draft in drafts[4:-2]:
            shoe_seq += 1
            committed += journal.append([card_draft], link=(BOOT_ID, shoe_seq))
        committed += journal.append(drafts[-2:])
    return committed


def tamper(path: Path, sql: str, params: tuple[Any, ...] = ()) -> None:
    """Run SQL on a journal behind its back, after dropping its append-only triggers."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("DROP TRIGGER IF EXISTS events_are_append_only_update")
        conn.execute("DROP TRIGGER IF EXISTS events_are_append_only_delete")
        conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


def smuggle(path: Path, event: dict[str, Any]) -> None:
    """Insert a complete event with a correct chain hash, bypassing the Journal's own checks."""
    conn = sqlite3.connect(path)
    try:
        prev = conn.execute("SELECT hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        body = to_json(event)
        conn.execute(
            "INSERT INTO events(seq, ts, type, round, body, hash) VALUES (?, ?, ?, ?, ?, ?)",
            (event["seq"], event["ts"], event["type"], event["round"], body,
             chain_hash(prev[0] if prev else GENESIS, body)),
        )
        conn.commit()
    finally:
        conn.close()
