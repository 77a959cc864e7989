"""A table's metrics for the studio's monitoring (Prometheus) and its health check.

:class:`TableMetrics` follows a running :class:`~table_controller.assembly.LiveTable`:
counters fed by the journaled events (rounds and voids by cause, pauses by cause,
alerts, events by type), card latencies measured by the controller (a card's input
to its journal commit, and to its publication), and values read at each scrape (the
shoe link's counters, the journal's size, the loop's queue, camera frames, evidence
bytes). :class:`MetricsServer` serves ``/metrics`` (text exposition format) and
``/healthz`` on one port, loopback by default: ``/healthz`` answers ``ok`` (200) only
while the loop turned within the watchdog interval and the journal accepts appends,
``not ok: ...`` (503) otherwise.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from table_controller.event_types import Alert, Event, RoundResult, RoundVoided, TableStateChanged

log = logging.getLogger(__name__)

#: Latency buckets, seconds: a card is journaled within milliseconds; a camera table's within a second.
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
SHOE_COUNTERS = ("frames", "retransmissions", "bad_crc", "reconnects", "duplicates", "undelivered")


def loop_health(live: Any, within: float) -> str | None:
    """None when the table is well: its loop turned within ``within`` seconds and it has not failed
    (a journal that cannot commit ends the loop: ``failed`` is then set); else what is wrong."""
    if live.failed.is_set():
        return f"the table stopped: {live.failure}"
    turned = live.controller.last_turn
    if not turned:
        return "the loop has not started"
    age = time.monotonic() - turned
    return None if age <= within else f"the loop has not turned for {age:.1f} s"


def cause_of(text: str | None) -> str:
    """A void's or pause's cause: its text up to the first colon."""
    return (text or "unknown").split(":", 1)[0].strip()[:40] or "unknown"


class TableMetrics:
    """The metrics of one table (see module doc); :meth:`on_event` is a controller listener."""

    def __init__(self, live: Any, registry: CollectorRegistry | None = None) -> None:
        self.live = live
        self.registry = registry or CollectorRegistry()
        table = str(live.config.table_id)
        r = self.registry
        self.events = Counter("table_events", "Events journaled, by type", ["table", "type"], registry=r)
        self.rounds = Counter("table_rounds", "Rounds settled, by result or void", ["table", "end"], registry=r)
        self.voids = Counter("table_voids", "Voided rounds by cause", ["table", "cause"], registry=r)
        self.pauses = Counter("table_pauses", "Pauses by cause", ["table", "cause"], registry=r)
        self.alerts = Counter("table_alerts", "Alerts by kind and severity", ["table", "kind", "severity"], registry=r)
        self.card_to_journal = Histogram("table_card_to_journal_seconds", "A card's input to its journal commit",
                                         ["table"], buckets=LATENCY_BUCKETS, registry=r)
        self.card_to_publish = Histogram("table_card_to_publish_seconds", "A card's input to its publication",
                                         ["table"], buckets=LATENCY_BUCKETS, registry=r)
        self.table = table
        r.register(_Readings(self))
        live.controller.listeners.append(self.on_event)
        live.controller.on_card_latency = self.on_card_latency

    def on_event(self, event: Event) -> None:
        t = self.table
        self.events.labels(t, event.type).inc()
        if isinstance(event, RoundResult):
            self.rounds.labels(t, "result").inc()
        elif isinstance(event, RoundVoided):
            self.rounds.labels(t, "void").inc()
            self.voids.labels(t, cause_of(event.reason)).inc()
        elif isinstance(event, TableStateChanged) and event.state == "paused":
            self.pauses.labels(t, event.cause if isinstance(event.cause, str) else cause_of(event.reason)).inc()
        elif isinstance(event, Alert):
            self.alerts.labels(t, event.kind, event.severity).inc()

    def on_card_latency(self, journaled: float, published: float) -> None:
        self.card_to_journal.labels(self.table).observe(journaled)
        self.card_to_publish.labels(self.table).observe(published)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class _Readings:
    """Values read at each scrape: the shoe link, the journal, the queue, the camera, the evidence."""

    def __init__(self, metrics: TableMetrics) -> None:
        self.metrics = metrics

    def describe(self) -> list[Any]:
        return []

    def collect(self) -> Any:
        m, live = self.metrics, self.metrics.live
        t = m.table
        size = GaugeMetricFamily("table_journal_bytes", "The journal file's size", labels=["table"])
        try:
            size.add_metric([t], float(live.journal.path.stat().st_size))
        except OSError:
            pass
        yield size
        depth = GaugeMetricFamily("table_queue_depth", "Inputs waiting for the table's loop", labels=["table"])
        depth.add_metric([t], float(live.controller.queue_depth))
        yield depth
        shoe = getattr(live, "shoe", None)
        stats = getattr(shoe, "stats", None) if shoe is not None else None
        if stats is not None:
            family = CounterMetricFamily("table_shoe_link", "The shoe link's counters", labels=["table", "counter"])
            for name in SHOE_COUNTERS:
                family.add_metric([t, name], float(getattr(stats, name, 0)))
            yield family
        camera = getattr(live, "camera", None)
        if camera is not None:
            frames = CounterMetricFamily("table_camera_frames", "Camera frames read", labels=["table"])
            frames.add_metric([t], float(camera.frames))
            yield frames
        evidence = getattr(live, "evidence", None)
        if evidence is not None:
            kept = CounterMetricFamily("table_evidence_bytes", "Bytes of pictures kept", labels=["table"])
            kept.add_metric([t], float(evidence.bytes))
            yield kept
            dropped = CounterMetricFamily("table_evidence_dropped", "Pictures dropped", labels=["table"])
            dropped.add_metric([t], float(evidence.dropped))
            yield dropped
        up = GaugeMetricFamily("table_loop_seconds_since_turn", "Seconds since the loop last turned",
                               labels=["table"])
        turned = live.controller.last_turn
        up.add_metric([t], time.monotonic() - turned if turned else -1.0)
        yield up


class MetricsServer:
    """``/metrics`` and ``/healthz`` on ``host:port`` (loopback by default), in a thread."""

    def __init__(self, metrics: TableMetrics, health: Callable[[], str | None], host: str = "127.0.0.1",
                 port: int = 9108) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                try:
                    if self.path == "/metrics":
                        self._send(200, outer.metrics.exposition(), "text/plain; version=0.0.4")
                    elif self.path == "/healthz":
                        problem = outer.health()
                        self._send(200 if problem is None else 503,
                                   b"ok\n" if problem is None else f"not ok: {problem}\n".encode(), "text/plain")
                    else:
                        self._send(404, b"not found\n", "text/plain")
                except Exception:  # a broken scrape must not end the server
                    log.exception("metrics request failed")
                    self._send(500, b"error\n", "text/plain")

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
                return

        self.metrics = metrics
        self.health = health
        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self._thread = threading.Thread(target=self.server.serve_forever, name="metrics", daemon=True)

    def start(self) -> MetricsServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)
