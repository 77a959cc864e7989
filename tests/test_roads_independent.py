"""The roads against an independent implementation: benchmarks/independent/roads_reference.py
was written from docs/displays.md alone by someone who did not read display/roads.py. Every
random shoe must give both the same big road, the same three derived roads (colours and
drawn grids), the same ask roads and the same bead plate."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.display.roads import DERIVED_ROADS, ShoeResult, big_road_columns, derived_entries, scoreboard

REFERENCE = Path(__file__).resolve().parents[1] / "benchmarks" / "independent" / "roads_reference.py"


def _reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("roads_reference", REFERENCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["roads_reference"] = module
    spec.loader.exec_module(module)
    return module


ref = _reference()


def ours(text: str) -> dict[str, object]:
    results = [ShoeResult(w) for w in text]  # type: ignore[arg-type]
    board = scoreboard(results)
    columns, _ = big_road_columns(results)
    return {
        "big_road": ([(c.col, c.row, c.value.winner, c.value.ties) for c in board.big_road], board.leading_ties),
        "derived": {k: [e.colour for e in derived_entries(columns, k)] for k in (1, 2, 3)},
        "grids": {k: [(c.col, c.row, c.value) for c in board.derived[name]] for name, k in DERIVED_ROADS.items()},
        "ask": {side: {DERIVED_ROADS[name]: colour for name, colour in answers.items()}
                for side, answers in board.ask.items()},
        "beads": [(b.col, b.row, b.winner) for b in board.bead_plate],
    }


def theirs(text: str) -> dict[str, object]:
    return {
        "big_road": ref.big_road(text),
        "derived": {k: ref.derived_road(text, k) for k in (1, 2, 3)},
        "grids": {k: ref.derived_grid(text, k) for k in (1, 2, 3)},
        "ask": ref.ask(text),
        "beads": ref.bead_plate(text),
    }


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="BPT", max_size=90) | st.text(alphabet="BBBBBBBBPT", max_size=90))
def test_every_road_agrees_with_the_independent_implementation(text: str) -> None:
    assert ours(text) == theirs(text)


def test_long_streaks_and_staircases_of_tails_agree() -> None:
    for text in ("B" * 7 + "P" * 6 + "B" * 5 + "P" * 4 + "BBB" + "PPP" + "B", "B" + "P" * 9,
                 "P" * 30, "BP" * 40, ("B" * 8 + "P" * 8) * 3, "T" * 5 + "B" * 12 + "T" + "P" * 12):
        assert ours(text) == theirs(text), text
