"""``table-controller display`` against a scripted table."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import zmq
from fake_table import BANKER_ROUND, FakeTable

from table_controller.cli import main
from table_controller.event_types import as_dict
from table_controller.publish import EventPublisher

ROOT = Path(__file__).resolve().parents[1]


def test_display_json_prints_snapshot_then_events_and_stops_on_sigterm():
    context = zmq.Context()
    with EventPublisher("T01", "tcp://127.0.0.1:0", "tcp://127.0.0.1:0", context=context) as publisher:
        table = FakeTable(publisher)
        table.play_round(BANKER_ROUND)
        display = subprocess.Popen(
            [sys.executable, "-m", "table_controller", "display", "--connect",
             publisher.bound_publish, "--snapshot", publisher.bound_snapshot, "--json"],
            cwd=ROOT, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        try:
            lines: queue.Queue = queue.Queue()
            threading.Thread(target=lambda: [lines.put(line) for line in display.stdout],
                             daemon=True).start()
            first = None
            for _ in range(500):  # heartbeats at the controller's pace until the snapshot shows
                table.heartbeat()
                try:
                    first = json.loads(lines.get(timeout=0.02))
                    break
                except queue.Empty:
                    continue
            assert first is not None and first["type"] == "snapshot"
            assert [e["round"] for e in first["history"]] == ["T01-000001"]
            event = table.emit("table.state", state="closed", reason="end of shift")
            while (item := json.loads(lines.get(timeout=10)))["seq"] != event.seq:
                assert item["type"] == "heartbeat"
            assert item == as_dict(event)
            display.send_signal(signal.SIGTERM)
            assert display.wait(10) == 0
        finally:
            if display.poll() is None:
                display.kill()
    context.term()


def test_display_without_snapshot_endpoint_it_can_guess_is_a_clear_error(capsys):
    assert main(["display", "--connect", "ipc:///tmp/table.sock", "--json"]) == 2
    assert "cannot guess the snapshot endpoint of 'ipc:///tmp/table.sock'; give --snapshot" in \
        capsys.readouterr().err
