"""Layouts: slot naming, the shipped layouts for the four games, clear errors."""

from __future__ import annotations

import pytest

from calibration.errors import LayoutError
from calibration.layout import load_layout, slot_name, split_slot
from table_controller.rules import load_game

SHIPPED = {"baccarat": "baccarat", "three-pictures": "three-pictures", "three-face": "three-face",
           "teen-patti-2020": "teen-patti-2020"}


@pytest.mark.parametrize(
    ("slot", "expected"),
    [("banker2", ("banker", 1)), ("player1", ("player", 0)), ("a3", ("a", 2)), ("box2.3", ("box2", 2)),
     ("player1.1", ("player1", 0)), ("first", ("first", 0))],
)
def test_split_slot_names_position_and_zero_based_index(slot: str, expected: tuple[str, int]) -> None:
    assert split_slot(slot) == expected
    assert slot_name(*expected) == (slot if slot != "first" else "first1")


def test_split_slot_rejects_a_name_that_is_not_a_slot() -> None:
    with pytest.raises(LayoutError, match="bad slot name 'Banker 2'"):
        split_slot("Banker 2")


@pytest.mark.parametrize("layout_name", sorted(SHIPPED))
def test_shipped_layout_covers_every_card_of_its_game(layout_name: str) -> None:
    layout = load_layout(layout_name)
    game = load_game(SHIPPED[layout_name])
    positions = {s.position for s in layout.slots}
    assert set(game.positions) <= positions
    for s in layout.slots:
        assert layout.slot_at(*s.centre) == s
    # slots never overlap: a card centre names one slot only
    for s in layout.slots:
        others = [o for o in layout.slots if o is not s and o.contains(*s.centre)]
        assert others == []


def test_three_face_layout_has_the_first_card_slot() -> None:
    layout = load_layout("three-face")
    assert layout.slot("first").index == 0
    assert [s.name for s in layout.slots if s.position == "player2"] == ["player2.1", "player2.2", "player2.3"]


def test_unknown_layout_names_the_shipped_ones() -> None:
    with pytest.raises(LayoutError, match="unknown layout 'craps': shipped layouts are baccarat, "
                                          "teen-patti-2020, three-face, three-pictures"):
        load_layout("craps")


def test_malformed_layout_error_names_file_and_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.toml"
    path.write_text('table_mm = [900, 500]\n[markers]\nids = [0, 1, 2, 3]\n'
                    'centres_mm = [[35, 35], [865, 35], [865, 465], [35, 465]]\n'
                    '[slots]\nbanker1 = [880, 10, 80, 105]\n')
    with pytest.raises(LayoutError, match=r"bad\.toml: slots\.banker1 \[880, 10, 80, 105\] is not inside"):
        load_layout(path)
