"""The 20-line display of docs/events.md runs as printed against a scripted table."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

import zmq
from fake_table import PLAYER_ROUND, FakeTable

from table_controller.publish import EventPublisher

ROOT = Path(__file__).resolve().parents[1]


def example_code() -> str:
    text = (ROOT / "docs" / "events.md").read_text()
    section = text[text.index("### A display in 20 lines"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_example_has_at_most_20_lines():
    assert len(example_code().strip().splitlines()) <= 20


def test_the_example_prints_snapshot_cards_and_result(tmp_path):
    script = tmp_path / "display.py"
    script.write_text(example_code())
    context = zmq.Context()
    with EventPublisher("T01", "tcp://127.0.0.1:0", "tcp://127.0.0.1:0", context=context) as pub:
        table = FakeTable(pub)
        table.new_shoe()
        proc = subprocess.Popen(
            [sys.executable, str(script), pub.bound_publish, pub.bound_snapshot, "T01"],
            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
        try:
            first = None
            for _ in range(500):  # the controller's heartbeats, until the example has its snapshot
                table.heartbeat()
                try:
                    first = lines.get(timeout=0.02)
                    break
                except queue.Empty:
                    continue
            assert first is not None and first.startswith("snapshot at seq ")
            assert first.endswith("table None, 0 events of the round in progress, 0 results\n")
            table.play_round(PLAYER_ROUND)
            printed = [lines.get(timeout=10) for _ in range(10)]
            assert printed == [
                "table betting\n", "table dealing\n",
                "player card 1: 4H\n", "banker card 1: KS\n", "player card 2: 3D\n",
                "banker card 2: 5C\n", "banker card 3: 9H\n",
                "table result\n",
                "round T01-000001: {'winner': 'player', 'natural': False, 'player_pair': False, "
                "'banker_pair': False}\n",
                "table idle\n",
            ]
        finally:
            proc.kill()
            proc.wait(5)
    context.term()
