"""The `rules judge` examples in docs/variants.md are what the code prints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from table_controller.cli.rules_cmd import judge_line
from table_controller.rules import load_game

DOC = Path(__file__).resolve().parent.parent / "docs" / "variants.md"
EXAMPLE = re.compile(
    r"^\$ echo '(?P<line>[^']*)' \| table-controller rules judge --game (?P<game>\S+)\n"
    r"(?P<answer>\{.*\})$",
    re.MULTILINE,
)
EXAMPLES = [m.groupdict() for m in EXAMPLE.finditer(DOC.read_text())]


def test_the_page_has_one_example_per_game() -> None:
    assert {load_game(e["game"]).variant.game for e in EXAMPLES} == {
        "baccarat", "three-pictures", "three-face", "teen-patti-2020",
    }


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["game"] for e in EXAMPLES])
def test_example_output_is_exact(example: dict[str, str]) -> None:
    got = judge_line(load_game(example["game"]), example["line"])
    assert json.dumps(got, separators=(",", ":")) == example["answer"]
