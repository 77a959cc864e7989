"""A controller stand-in for the kill -9 tests: resume from the journal, then deal rounds forever.

Usage: ``python tests/journal_writer.py JOURNAL SEED``. On start it voids a round
left in progress (the "void" recovery policy) and continues the shoe link from
the journaled shoe seq. It prints ``<last seq> <shoe seq>`` after every commit,
so whoever kills it knows what had been committed.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from journal_helpers import BOOT_ID, START_EPOCH, TickingClock, draft, round_drafts  # noqa: E402

from table_controller.journal import Journal  # noqa: E402
from table_controller.rules import load_game  # noqa: E402
from table_controller.rules.cards import shuffled_shoe  # noqa: E402


def main(path: str, seed: int) -> None:
    journal = Journal(path, table="T01", game="baccarat", variant="baccarat")
    clock = TickingClock(start=START_EPOCH + 3600 * seed)
    link = journal.link_state
    shoe_seq = link[1] if link else 0

    def commit(drafts: list[dict], link: tuple[str, int] | None = None) -> None:
        events = journal.append(drafts, link=link)
        sys.stdout.write(f"{events[-1].seq} {shoe_seq}\n")
        sys.stdout.flush()

    unsettled = journal.round_in_progress()
    if unsettled:
        round_id = unsettled[0].round
        commit([
            draft("round.void", round_id, clock=clock, reason="controller restarted", refund=True),
            draft("table.state", None, clock=clock, state="idle", reason="recovered"),
        ])
    number = sum(1 for _ in journal.events(types={"round.start"})) + 1
    game = load_game("baccarat")
    rng = random.Random(seed)
    shoe = shuffled_shoe(game.decks, rng)
    while True:
        if len(shoe) < 10:
            shoe = shuffled_shoe(game.decks, rng)
        drafts, used = round_drafts(game, shoe, f"R{number}", clock=clock)
        shoe = shoe[used:]
        commit(drafts[:4])
        for card in drafts[4:-2]:
            shoe_seq += 1
            commit([card], link=(BOOT_ID, shoe_seq))
        commit(drafts[-2:])
        number += 1


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
