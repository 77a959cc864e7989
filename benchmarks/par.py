"""Benchmark: exact PAR sheet of every shipped variant, cold, on one core.

Prints one JSON object: seconds per variant (counting + judging, caches
cleared first), the judging part alone (the same sheet again with the
counting cached), and the total. Target: all variants under 60 s together,
baccarat 8-deck under 5 s.

Run: python benchmarks/par.py
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from table_controller.analysis.exact import par_sheet
from table_controller.analysis.memo import clear_caches
from table_controller.rules import load_game
from table_controller.rules.registry import variant_files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    variants: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    for name in variant_files():
        game = load_game(name)
        clear_caches()
        t0 = time.perf_counter()
        par_sheet(game)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        par_sheet(game)
        judging = time.perf_counter() - t0
        variants[name] = {
            "seconds": round(cold, 3),
            "counting_seconds": round(cold - judging, 3),
            "judging_seconds": round(judging, 3),
        }
    total = sum(v["seconds"] for v in variants.values())
    print(
        json.dumps(
            {
                "benchmark": "par",
                "variants": variants,
                "total_seconds": round(total, 3),
                "wall_seconds": round(time.perf_counter() - started, 3),
                "target_total_seconds": 60,
                "target_baccarat_seconds": 5,
                "meets_targets": total < 60 and variants["baccarat"]["seconds"] < 5,
            }
        )
    )


if __name__ == "__main__":
    main()
