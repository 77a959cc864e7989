"""Controller benchmark: card-to-journal latency, rounds per second, memory and idle CPU.

Runs the simulated table in-process (simulated shoe on a pseudo-terminal, the
real serial driver, journal with synchronous=FULL, mock panel) and prints one
JSON object. Targets (issue 5): p99 card-to-journal <= 2 ms, >= 20 baccarat
rounds/s at full speed, peak RSS <= 120 MB, idle CPU <= 2 % of a core.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from table_controller.event_types import CardDealt, Event  # noqa: E402
from table_controller.sim.table import SimOptions, SimulatedTable  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=200, help="baccarat rounds at full speed")
    parser.add_argument("--latency-rounds", type=int, default=200,
                        help="rounds whose cards are timed (about 5 cards each; the p99 needs hundreds)")
    parser.add_argument("--idle-seconds", type=float, default=5.0, help="idle CPU measuring window")
    args = parser.parse_args()

    committed: dict[str, float] = {}
    seen = threading.Condition()

    def on_event(event: Event) -> None:
        if isinstance(event, CardDealt):
            with seen:
                committed[f"{event.round}/{event.position}/{event.index}"] = time.perf_counter()
                seen.notify_all()

    sim = SimulatedTable(SimOptions(variant="baccarat", speed=0, seed=7), on_event=on_event)
    dealer = sim.start()
    try:
        dealer.load_shoe()
        # 1. card-to-journal latency: time the shoe's write of each card to its committed event.
        latencies: list[float] = []
        original_draw = sim.shoe.draw

        def timed_draw() -> str | None:
            before = len(committed)
            t0 = time.perf_counter()
            code = original_draw()
            if code is not None:
                with seen:
                    seen.wait_for(lambda: len(committed) > before, timeout=5)
                    latest = max(committed.values())
                latencies.append((latest - t0) * 1000)
            return code

        sim.shoe.draw = timed_draw  # type: ignore[method-assign]
        stop = sim.live.stopped
        for _ in range(args.latency_rounds):
            dealer.play_round(stop)
        sim.shoe.draw = original_draw  # type: ignore[method-assign]

        # 2. rounds per second at full speed.
        t0 = time.perf_counter()
        played = 0
        for _ in range(args.rounds):
            if sim.live.controller.machine.state == "closed":
                dealer.load_shoe()
            dealer.play_round(stop)
            played += 1
        rounds_per_s = played / (time.perf_counter() - t0)

        # 3. idle CPU.
        cpu0, wall0 = time.process_time(), time.perf_counter()
        time.sleep(args.idle_seconds)
        idle_cpu = (time.process_time() - cpu0) / (time.perf_counter() - wall0) * 100
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    finally:
        sim.close()

    print(json.dumps({
        "card_to_journal_ms": {
            "p50": round(statistics.median(latencies), 3), "p99": round(percentile(latencies, 0.99), 3),
            "max": round(max(latencies), 3), "cards": len(latencies), "target_p99": 2.0,
        },
        "baccarat_rounds_per_s": round(rounds_per_s, 1), "target_rounds_per_s": 20,
        "peak_rss_mb": round(rss_mb, 1), "target_rss_mb": 120,
        "idle_cpu_percent_of_a_core": round(idle_cpu, 2), "target_idle_cpu_percent": 2,
        "note": "in-process: RSS and CPU include the simulated shoe and dealer",
    }))


if __name__ == "__main__":
    main()
