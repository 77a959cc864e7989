"""The recognition benchmark's ``special`` verdict (``benchmarks/recognition.py``,
``special_met``): a special card given a code fails it, and so does a wrong read or a phantom
among the other cards of the special scenes (until session 70 only the first did)."""

from __future__ import annotations

from typing import Any

import pytest
from benchmark_module import recognition_benchmark

from firmware_interfaces.camera.scoring import Tally


def _measured(given_a_code: int = 0, wrong_reads: int = 0, phantom_cards: int = 0) -> dict[str, Any]:
    """What ``bench_special`` reports, in its shape (the other cards' counts as ``Tally.to_dict``
    names them): 228 other cards, each read or left unread but for ``wrong_reads``."""
    others = Tally(cards=228, correct=223, no_reads=5 - wrong_reads, wrong=wrong_reads, phantom=phantom_cards)
    return {"frames": 60, "cards": 162, "given_a_code": given_a_code, "by_kind": {},
            "other_cards_in_these_frames": others.to_dict(), "examples": []}


def test_special_cards_left_unread_and_no_wrong_read_beside_them_meet_the_verdict() -> None:
    assert recognition_benchmark().special_met(_measured()) is True


@pytest.mark.parametrize("faults", [{"given_a_code": 1}, {"wrong_reads": 2}, {"phantom_cards": 1}])
def test_a_coded_special_card_or_a_wrong_read_or_phantom_in_those_frames_fails_it(faults: dict[str, int]) -> None:
    assert recognition_benchmark().special_met(_measured(**faults)) is False
