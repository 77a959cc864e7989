"""Journal benchmark: commit latency with synchronous=FULL, throughput, verify speed.

Appends card events one per transaction (each with the shoe link state, as the
controller does for a card) and then three per transaction, into a fresh
journal in a temporary folder (``--dir`` to choose the disk), and prints one
JSON object: latency p50/p99/max in microseconds per append() call, events/s,
and how fast ``verify_journal`` re-checks the result (hash chain + rules core).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from table_controller.event_types import CardDealt  # noqa: E402
from table_controller.events import format_ts  # noqa: E402
from table_controller.journal import Journal, verify_journal  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def card_draft(n: int) -> CardDealt:
    """A stamped, unnumbered card event, as the controller hands the journal one."""
    return CardDealt(
        table="B01", ts=format_ts(time.time()), game="baccarat", round=None, position="burn",
        index=n % 8, code="TS", source="shoe",
    )


def measure(journal: Journal, appends: int, per_append: int, shoe_seq: int) -> dict[str, Any]:
    latencies: list[float] = []
    started = time.perf_counter()
    for k in range(appends):
        drafts = [card_draft(k * per_append + j) for j in range(per_append)]
        shoe_seq += per_append
        t0 = time.perf_counter()
        journal.append(drafts, link=("bench-boot", shoe_seq))
        latencies.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - started
    return {
        "appends": appends,
        "events_per_append": per_append,
        "p50_us": round(percentile(latencies, 0.50) * 1e6, 1),
        "p99_us": round(percentile(latencies, 0.99) * 1e6, 1),
        "max_us": round(max(latencies) * 1e6, 1),
        "events_per_s": round(appends * per_append / elapsed),
    }


def raw_sqlite_baseline(folder: Path, appends: int) -> dict[str, Any]:
    """The same commit with bare sqlite3 (one 280-byte row): the floor set by the disk's fsync."""
    import sqlite3

    conn = sqlite3.connect(folder / "raw.sqlite", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, body TEXT)")
    latencies: list[float] = []
    for _ in range(appends):
        t0 = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t(body) VALUES (?)", ("x" * 280,))
        conn.execute("COMMIT")
        latencies.append(time.perf_counter() - t0)
    conn.close()
    return {
        "p50_us": round(percentile(latencies, 0.50) * 1e6, 1),
        "p99_us": round(percentile(latencies, 0.99) * 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--appends", type=int, default=2000, help="append() calls per series")
    parser.add_argument("--dir", type=Path, help="folder for the journal (default: a temp folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        path = Path(folder) / "bench.sqlite"
        with Journal(path, table="B01", game="baccarat", variant="baccarat") as journal:
            measure(journal, 50, 1, 0)  # warm-up
            single = measure(journal, args.appends, 1, 50)
            triple = measure(journal, args.appends, 3, 50 + args.appends)
            events = journal.last_seq
        t0 = time.perf_counter()
        report = verify_journal(path)
        verify_s = time.perf_counter() - t0
        size = path.stat().st_size
        baseline = raw_sqlite_baseline(Path(folder), args.appends // 2)
    print(json.dumps({
        "benchmark": "journal",
        "synchronous": "FULL",
        "journal_mode": "WAL",
        "one_event_per_transaction": single,
        "three_events_per_transaction": triple,
        "verify": {"ok": report.ok, "events": events, "events_per_s": round(events / verify_s)},
        "bytes_per_event": round(size / events),
        "raw_sqlite_commit_baseline": baseline,
    }))


if __name__ == "__main__":
    main()
