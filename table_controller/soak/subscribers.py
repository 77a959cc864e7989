"""Subscribers at the studio proxy: each records every table's stream for the final check.

The floor subscriber also hands each table's events to that table's dealer
and times card-to-display latency; slow subscribers sleep after every item,
as a display on a busy machine would.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections import defaultdict, deque
from collections.abc import Mapping
from typing import Any

import zmq

from table_controller.client import ClientItem, TableClient
from table_controller.event_types import CardDealt
from table_controller.soak.records import StreamRecord

log = logging.getLogger(__name__)


class LatencyTracker:
    """Card-to-display latency: from the dealer pulling the card to the subscriber seeing it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._drawn: dict[tuple[str, str], deque[float]] = defaultdict(deque)
        self._seen: dict[tuple[str, str], deque[float]] = defaultdict(deque)
        self.samples: list[float] = []

    def drawn(self, table: str, code: str, at: float) -> None:
        with self._lock:
            seen = self._seen[(table, code)]
            if seen:
                self.samples.append(seen.popleft() - at)
            else:
                self._drawn[(table, code)].append(at)

    def shown(self, table: str, code: str, at: float) -> None:
        with self._lock:
            drawn = self._drawn[(table, code)]
            if drawn:
                self.samples.append(at - drawn.popleft())
            else:
                self._seen[(table, code)].append(at)

    def percentiles(self) -> dict[str, float | None]:
        """p50 and p99 in milliseconds (None without samples)."""
        with self._lock:
            data = sorted(max(0.0, s) for s in self.samples)
        if not data:
            return {"p50": None, "p99": None, "max": None}

        def pick(q: float) -> float:
            return round(data[min(len(data) - 1, int(q * len(data)))] * 1000, 1)

        return {"p50": pick(0.50), "p99": pick(0.99), "max": round(data[-1] * 1000, 1)}


class Subscriber:
    """A :class:`TableClient` for all tables at the proxy, in its own thread."""

    def __init__(
        self,
        name: str,
        backend: str,
        snapshots: Mapping[str, str],
        context: zmq.Context[Any],
        *,
        slow: bool = False,
        seed: int = 0,
        dealer_queues: Mapping[str, queue.Queue[ClientItem]] | None = None,
        latency: LatencyTracker | None = None,
    ) -> None:
        self.name = name
        self.slow = slow
        self.streams: dict[str, StreamRecord] = {t: StreamRecord() for t in snapshots}
        self.client = TableClient(backend, dict(snapshots), table=None, context=context)
        self.dealer_queues = dealer_queues or {}
        self.latency = latency
        self._rng = random.Random(seed)
        self._stop = threading.Event()
        self._progress = threading.Condition()
        self.error: str | None = None
        self._thread = threading.Thread(target=self._run, name=f"subscriber-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                for item in self.client.events(timeout=0.2):
                    self._take(item)
                    if self._stop.is_set():
                        break
        except Exception as e:  # recorded: the check fails the run with it
            log.exception("subscriber %s stopped", self.name)
            self.error = f"{type(e).__name__}: {e}"

    def _take(self, item: ClientItem) -> None:
        table = item.table
        match item:
            case CardDealt(source="shoe", code=code) if self.latency is not None:
                self.latency.shown(table, code, time.monotonic())
        with self._progress:
            self.streams.setdefault(table, StreamRecord()).items.append(item)
            self._progress.notify_all()
        dealer = self.dealer_queues.get(table)
        if dealer is not None:
            dealer.put(item)
        if self.slow:
            time.sleep(self._rng.uniform(0.0005, 0.005))  # a slow display: the lag is the point

    def wait_caught_up(self, last_seqs: Mapping[str, int], timeout: float) -> bool:
        """Wait until every table's stream reached its journal's last seq."""

        def done() -> bool:
            return all(self.streams[t].last_seq >= s for t, s in last_seqs.items())

        with self._progress:
            return self._progress.wait_for(done, timeout)

    def wait_synced(self, timeout: float) -> bool:
        """Wait until this subscriber has a snapshot of every table."""
        with self._progress:
            return self._progress.wait_for(
                lambda: all(s.items for s in self.streams.values()), timeout
            )

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.client.close()
