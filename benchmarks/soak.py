"""Soak benchmark: card-to-display latency and rounds per second of a studio under faults.

Runs ``table-controller soak`` in-process (each table a controller process and a
shoe process, a studio proxy, subscribers, every fault kind, kills) and prints
one JSON object: the soak's verdict, rounds per second over all tables, and the
card-to-display latency (dealer pulls the card -> a subscriber behind the proxy
has it). Defaults are modest (4 tables x 30 rounds); the issue's long run is
``--tables 20 --rounds 200 --kill-every 20``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from table_controller.soak import SoakOptions, parse_faults, run_soak  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--kill-every", type=float, default=8.0)
    parser.add_argument("--faults", default="all")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--camera-tables", type=int, default=1)
    args = parser.parse_args()
    report = run_soak(
        SoakOptions(
            tables=args.tables,
            rounds=args.rounds,
            seed=args.seed,
            faults=parse_faults(args.faults),
            kill_every=args.kill_every,
            camera_tables=args.camera_tables,
        )
    )
    counts = report.counts
    print(
        json.dumps(
            {
                "benchmark": "soak",
                "tables": args.tables,
                "rounds_per_table": args.rounds,
                "ok": report.ok,
                "failed_checks": [k for k, v in report.checks.items() if not v],
                "seconds": round(report.seconds, 1),
                "rounds_per_second": round(counts["rounds"] / report.seconds, 2)
                if report.seconds
                else None,
                "card_to_display_ms": report.latency_ms,
                "latency_samples": counts["latency_samples"],
                "restarts": counts["restarts"],
                "voided": counts["voided"],
                "paused": counts["paused"],
            }
        )
    )


if __name__ == "__main__":
    main()
