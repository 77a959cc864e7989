"""Every benchmark answers ``--help`` (a help text with a stray ``%`` in it once crashed
argparse's formatter: the recognition benchmark's ``--perturb`` listed ``zoom-0.6%``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parent.parent / "benchmarks").glob("*.py"))


def test_there_are_benchmarks_to_ask() -> None:
    assert len(BENCHMARKS) >= 10


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_a_benchmark_answers_help(script: Path) -> None:
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout and "--help" in done.stdout
