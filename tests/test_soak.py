"""The studio soak end to end: 4 tables x 30 rounds, every fault kind, controllers killed and restarted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from table_controller.soak.checker import CHECKS
from table_controller.soak.options import FAULT_KINDS

ROOT = Path(__file__).resolve().parents[1]
#: Every fault kind, at rates high enough that each happens in 120 rounds (the camera
#: faults on the one camera table, T01).
FAULTS = (
    "all,unplug=0.015,dropped=0.015,misdeal=0.015,void=0.015,lid=0.015,noread=0.02,"
    "blackout=0.03,mismatch=0.03"
)


def _soak(*args: str, timeout: float = 175) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "table_controller", "soak", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_short_soak_with_every_fault_and_kills_keeps_every_promise(tmp_path: Path) -> None:
    done = _soak(
        "--tables",
        "4",
        "--rounds",
        "30",
        "--seed",
        "5",
        "--faults",
        FAULTS,
        "--kill-every",
        "5",
        "--camera-tables",
        "1",
        "--json",
        "--keep",
        str(tmp_path / "soak"),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["ok"] is True
    assert report["checks"] == {name: True for name in CHECKS}
    counts = report["counts"]
    assert counts["rounds"] == 120
    assert counts["results"] + counts["voided"] == 120
    assert counts["voided"] > 0 and counts["paused"] > 0
    assert counts["restarts"] >= 2
    assert sum(counts["kills_by_state"].values()) == counts["restarts"]
    assert {kind for kind, n in counts["faults"].items() if n > 0} == {*FAULT_KINDS, "kill"}
    assert counts["drawn_by_shoes"] >= counts["cards"] - counts["burn_cards"]
    assert (
        report["latency_ms"]["p50"] is not None
        and report["latency_ms"]["p99"] >= report["latency_ms"]["p50"]
    )
    for table in ("T01", "T02", "T03", "T04"):  # journals, configurations and logs were kept
        assert (tmp_path / "soak" / f"{table}.sqlite").is_file()


def test_a_bad_fault_spec_is_a_clear_error() -> None:
    done = _soak("--faults", "fire", timeout=30)
    assert done.returncode == 2
    assert "unknown fault 'fire'" in done.stderr
    assert "Traceback" not in done.stderr


def test_camera_tables_without_the_card_art_are_a_clear_error(tmp_path: Path) -> None:
    done = _soak("--camera-deck", str(tmp_path / "no-such-deck"), timeout=30)
    assert done.returncode == 2
    assert "--camera-tables 1: card art for deck" in done.stderr
    assert "--camera-tables 0" in done.stderr and "Traceback" not in done.stderr


def test_an_unknown_variant_is_a_clear_error() -> None:
    done = _soak("--variants", "poker", timeout=30)
    assert done.returncode == 2
    assert "--variants:" in done.stderr and "poker" in done.stderr
    assert "Traceback" not in done.stderr

