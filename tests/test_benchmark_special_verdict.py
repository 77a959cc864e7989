"""The recognition benchmark's ``special`` verdict (``benchmarks/recognition.py``,
``special_met``): a special card given a code fails it, and so does a wrong read or a phantom
among the other cards of the special scenes (until session 70 only the first did)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "recognition.py"


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("recognition_benchmark", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _measured(given_a_code: int = 0, wrong_reads: int = 0, phantom_cards: int = 0) -> dict[str, Any]:
    """What ``bench_special`` reports, in its shape (the figures that do not count left at a clean run's)."""
    return {"frames": 60, "cards": 162, "given_a_code": given_a_code, "by_kind": {},
            "other_cards_in_these_frames": {"cards": 228, "read_correctly": 223, "correct_no_read": 0,
                                            "read_rate": 0.97807, "no_reads": 5 - wrong_reads, "missed": 0,
                                            "wrong_reads": wrong_reads, "phantom_cards": phantom_cards},
            "examples": []}


def test_a_clean_run_meets_the_special_verdict() -> None:
    assert _benchmark().special_met(_measured()) is True


@pytest.mark.parametrize("faults", [{"given_a_code": 1}, {"wrong_reads": 2}, {"phantom_cards": 1}])
def test_a_coded_special_card_a_wrong_read_or_a_phantom_beside_them_fails_it(faults: dict[str, int]) -> None:
    assert _benchmark().special_met(_measured(**faults)) is False
