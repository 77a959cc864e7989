"""Rounds dealt, judged and settled per second by the rules core, per shipped variant.

In-process, one core: for each variant, pre-generate seeded shuffled card lists
(so shuffling is not timed), then time ``game.deal(cards)`` + ``deal.result()``
for every round. Prints one JSON object; the issue's target is 50,000 rounds/s
for every variant.

Time is this process's CPU time (``time.process_time``), best of ``--repeat``
passes: on a busy machine wall time also counts other processes' turns on the
core, which is noise, not the cost of the rules.

    python benchmarks/rules.py [--rounds 20000] [--seed 2026] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from table_controller.rules import Game, load_game  # noqa: E402
from table_controller.rules.registry import variant_files  # noqa: E402

TARGET_ROUNDS_PER_S = 50_000


def round_cards(game: Game, rounds: int, rng: random.Random) -> list[list[int]]:
    """One shuffled deck (or an 8-card slice of a shuffled multi-deck shoe) per round."""
    out = []
    shoe = list(range(52)) * game.decks
    for _ in range(rounds):
        rng.shuffle(shoe)
        out.append(shoe[:52] if game.decks == 1 else shoe[:8])
    return out


def time_variant(game: Game, rounds: list[list[int]], repeat: int) -> float:
    """Best CPU time of ``repeat`` passes over ``rounds`` (deal + judge + settle)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for cards in rounds:
            deal, _ = game.deal(cards)
            deal.result()
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20_000, help="rounds per variant")
    parser.add_argument("--seed", type=int, default=2026, help="shuffle seed")
    parser.add_argument("--repeat", type=int, default=3, help="passes; the best one counts")
    args = parser.parse_args(argv)

    report: dict[str, object] = {}
    all_meet = True
    for name in sorted(variant_files()):
        game = load_game(name)
        rounds = round_cards(game, args.rounds, random.Random(args.seed))
        seconds = time_variant(game, rounds, args.repeat)
        per_s = args.rounds / seconds
        all_meet = all_meet and per_s >= TARGET_ROUNDS_PER_S
        report[name] = {
            "rounds_per_s": round(per_s),
            "us_per_round": round(seconds / args.rounds * 1e6, 2),
        }
        print(f"{name}: {per_s:,.0f} rounds/s", file=sys.stderr)
    report["rounds"] = args.rounds
    report["target_rounds_per_s"] = TARGET_ROUNDS_PER_S
    report["all_meet_target"] = all_meet
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
