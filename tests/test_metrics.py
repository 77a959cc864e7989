"""A table's Prometheus metrics after simulated rounds, and /healthz that goes bad when the loop stalls
(or the table has failed) and good again when it turns."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from table_controller.service.metrics import MetricsServer, TableMetrics, loop_health
from table_controller.sim.table import SimOptions, SimulatedTable


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_metrics_count_a_simulated_tables_rounds_cards_and_link(tmp_path: Path) -> None:
    sim = SimulatedTable(SimOptions(variant="baccarat", speed=0, seed=3, journal=tmp_path / "T01.sqlite"))
    dealer = sim.start()
    try:
        metrics = TableMetrics(sim.live)
        attached = sim.live.journal.last_seq  # counted from here on
        server = MetricsServer(metrics, lambda: loop_health(sim.live, 2.0), port=0).start()
        try:
            dealer.load_shoe()
            for _ in range(3):
                dealer.play_round(sim.live.stopped)
            status, text = _get(f"http://127.0.0.1:{server.port}/metrics")
            assert status == 200
            got = _samples(text)
            journal = [e for e in sim.live.journal.events() if e.seq > attached]
            cards = sum(1 for e in journal if e.type == "card")
            assert got[("table_rounds_total", (("end", "result"), ("table", "T01")))] == 3
            assert got[("table_events_total", (("table", "T01"), ("type", "card")))] == cards
            assert got[("table_card_to_journal_seconds_count", (("table", "T01"),))] > 0
            assert got[("table_journal_bytes", (("table", "T01"),))] == sim.live.journal.path.stat().st_size
            assert got[("table_shoe_link_total", (("counter", "frames"), ("table", "T01")))] > cards
            assert _get(f"http://127.0.0.1:{server.port}/healthz") == (200, "ok\n")
        finally:
            server.close()
    finally:
        sim.close()


class _Live:
    """Just what the health check reads of a table."""

    def __init__(self) -> None:
        self.failed = threading.Event()
        self.failure = ""
        self.controller = type("C", (), {"last_turn": time.monotonic()})()


def test_healthz_goes_bad_when_the_loop_stalls_or_the_table_fails_and_good_when_it_turns() -> None:
    live = _Live()
    server = MetricsServer(None, lambda: loop_health(live, 0.5), port=0).start()  # type: ignore[arg-type]
    try:
        url = f"http://127.0.0.1:{server.port}/healthz"
        assert _get(url) == (200, "ok\n")
        live.controller.last_turn = time.monotonic() - 3  # the loop is stuck
        status, text = _get(url)
        assert status == 503 and "has not turned for 3" in text
        live.controller.last_turn = time.monotonic()
        assert _get(url)[0] == 200
        live.failure, _ = "JournalError: disk full", live.failed.set()
        status, text = _get(url)
        assert status == 503 and "disk full" in text
        assert _get(f"http://127.0.0.1:{server.port}/nothing")[0] == 404
    finally:
        server.close()
