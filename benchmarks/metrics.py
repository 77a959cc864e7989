"""Metrics benchmark: the cost of the Prometheus metrics on card-to-journal latency. One JSON object.

A simulated shoe table (baccarat, in this process) plays 30 rounds to warm up (not counted), then
``--blocks`` blocks of ``--rounds`` rounds, alternately without metrics and with
:class:`~table_controller.service.metrics.TableMetrics` attached and scraped every second (as
Prometheus would, faster), in the order off, on, on, off, off, on, ... so that drift of the
machine (other jobs, the disk's cache) falls on both alike. A card's latency runs from the
shoe giving it to its ``card`` event journaled. Goal (issue 19): with metrics the p99
within 5 % of without.

Two figures answer it. ``p99_ratio``: the median of the blocks' p99 with metrics over
the median without (noisy: a journal commit's fsync dominates the tail). And the direct
cost: the time the table's loop spends in the metrics' own code per card (the listener
and the latency histograms, timed around each call), against the p99 without metrics.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from table_controller.event_types import CardDealt, Event  # noqa: E402
from table_controller.service.metrics import MetricsServer, TableMetrics, loop_health  # noqa: E402
from table_controller.sim.table import SimOptions, SimulatedTable  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def scrape(url: str, stop: threading.Event) -> None:
    """Prometheus, every second."""
    while not stop.wait(1.0):
        with urllib.request.urlopen(url, timeout=5) as reply:
            reply.read()


def run(rounds: int, with_metrics: bool) -> dict[str, float]:
    """One block: card latencies (ms) and, with metrics, the loop's seconds spent in them."""
    drawn: dict[str, list[float]] = {}
    latencies: list[float] = []
    spent = [0.0]
    lock = threading.Lock()

    def on_event(event: Event) -> None:
        if isinstance(event, CardDealt):
            with lock:
                waiting = drawn.get(event.code)
                if waiting:
                    latencies.append((time.perf_counter() - waiting.pop(0)) * 1000)

    sim = SimulatedTable(SimOptions(variant="baccarat", speed=0, seed=7), on_event=on_event)
    dealer = sim.start()
    server, stop = None, threading.Event()
    try:
        if with_metrics:
            metrics = TableMetrics(sim.live)
            timed_metrics(sim.live.controller, metrics, spent)
            server = MetricsServer(metrics, lambda: loop_health(sim.live, 2.0), port=0).start()
            threading.Thread(target=scrape, args=(f"http://127.0.0.1:{server.port}/metrics", stop),
                             daemon=True).start()
        dealer.load_shoe()
        original = sim.shoe.draw

        def timed_draw(*args: object, **kwargs: object) -> str | None:
            t0 = time.perf_counter()
            code: str | None = original(*args, **kwargs)
            if code is not None:
                with lock:
                    drawn.setdefault(code, []).append(t0)
            return code

        sim.shoe.draw = timed_draw
        for _ in range(rounds):
            if sim.live.controller.machine.state == "closed":
                dealer.load_shoe()
            dealer.play_round(sim.live.stopped)
    finally:
        stop.set()
        if server is not None:
            server.close()
        sim.close()
    return {"cards": len(latencies), "p50_ms": round(statistics.median(latencies), 3),
            "p99_ms": round(percentile(latencies, 0.99), 3),
            "metrics_us_per_card": round(spent[0] / max(1, len(latencies)) * 1e6, 2)}


def timed_metrics(controller: Any, metrics: TableMetrics, spent: list[float]) -> None:
    """Swap the metrics' hooks on the controller for timed ones (the loop thread calls them)."""

    def on_event(event: Event) -> None:
        t0 = time.perf_counter()
        metrics.on_event(event)
        spent[0] += time.perf_counter() - t0

    def on_card_latency(journaled: float, published: float) -> None:
        t0 = time.perf_counter()
        metrics.on_card_latency(journaled, published)
        spent[0] += time.perf_counter() - t0

    controller.listeners[controller.listeners.index(metrics.on_event)] = on_event
    controller.on_card_latency = on_card_latency


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=60, help="rounds a block (default 60)")
    parser.add_argument("--blocks", type=int, default=8, help="blocks, half with metrics (default 8)")
    parser.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    args = parser.parse_args()
    run(30, False)  # warm-up (imports, caches, the first journal): not counted
    off: list[dict[str, float]] = []
    on: list[dict[str, float]] = []
    for block in range(args.blocks):
        with_metrics = block % 4 in (1, 2)
        (on if with_metrics else off).append(run(args.rounds, with_metrics))
        print(f"block {block + 1}/{args.blocks} ({'with' if with_metrics else 'without'} metrics) done",
              file=sys.stderr, flush=True)
    p99_off = statistics.median(b["p99_ms"] for b in off)
    p99_on = statistics.median(b["p99_ms"] for b in on)
    direct_us = statistics.median(b["metrics_us_per_card"] for b in on)
    print(json.dumps({
        "benchmark": "metrics", "rounds_per_block": args.rounds,
        "without": {"cards": sum(int(b["cards"]) for b in off), "p99_ms_per_block": [b["p99_ms"] for b in off],
                    "p99_ms_median": p99_off, "p50_ms_median": statistics.median(b["p50_ms"] for b in off)},
        "with": {"cards": sum(int(b["cards"]) for b in on), "p99_ms_per_block": [b["p99_ms"] for b in on],
                 "p99_ms_median": p99_on, "p50_ms_median": statistics.median(b["p50_ms"] for b in on),
                 "metrics_us_per_card": direct_us},
        "p99_ratio": round(p99_on / p99_off, 3),
        "direct_cost_share_of_p99": round(direct_us / (p99_off * 1000), 4),
        "target_met": {"direct_cost_within_5_percent_of_p99": direct_us <= 0.05 * p99_off * 1000,
                       "p99_within_5_percent": p99_on <= 1.05 * p99_off},
    }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
