"""The stabiliser: a card is reported once, after K identical consecutive readings."""

from __future__ import annotations

import pytest

from firmware_interfaces.camera.recognizer import CardReading
from firmware_interfaces.camera.stabilizer import Stabilizer

CORNERS = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]


def card(position: str | None, code: str | None, centre: tuple[float, float] = (100.0, 100.0)) -> CardReading:
    return CardReading(code, 0.9 if code else 0.2, CORNERS, position, centre)


def test_a_card_is_reported_on_the_kth_identical_frame_and_only_then() -> None:
    st = Stabilizer(frames=3)
    assert st.update([card("banker2", "TS")]) == []
    assert st.update([card("banker2", "TS")]) == []
    (stable,) = st.update([card("banker2", "TS")])
    assert (stable.position, stable.game_position, stable.index, stable.code, stable.frames) == (
        "banker2", "banker", 1, "TS", 3)
    assert st.update([card("banker2", "TS")]) == []


def test_a_changed_reading_starts_the_count_again() -> None:
    st = Stabilizer(frames=2)
    st.update([card("player1", "6S")])
    assert st.update([card("player1", None)]) == []
    assert [s.code for s in st.update([card("player1", None)])] == [None]  # a stable no-read is reported
    assert st.update([card("player1", "6S")]) == []
    assert [s.code for s in st.update([card("player1", "6S")])] == ["6S"]


def test_a_missed_frame_breaks_the_run() -> None:
    st = Stabilizer(frames=2)
    st.update([card("a1", "AH")])
    st.update([])
    assert st.update([card("a1", "AH")]) == []
    assert [s.code for s in st.update([card("a1", "AH")])] == ["AH"]


def test_a_card_taken_away_is_listed_as_removed_and_reported_again_when_laid() -> None:
    st = Stabilizer(frames=1)
    st.update([card("box2.3", "KD")])
    st.update([])
    assert [(s.position, s.game_position, s.index) for s in st.removed] == [("box2.3", "box2", 2)]
    assert [s.code for s in st.update([card("box2.3", "KD")])] == ["KD"]
    assert st.removed == []


def test_off_slot_cards_are_tracked_by_where_they_lie() -> None:
    st = Stabilizer(frames=2)
    st.update([card(None, "8C", (400.0, 300.0)), card(None, "2D", (100.0, 100.0))])
    new = st.update([card(None, "8C", (405.0, 296.0)), card(None, "2D", (102.0, 101.0))])
    assert sorted((s.position, s.code) for s in new) == [(None, "2D"), (None, "8C")]
    assert [s.game_position for s in new] == [None, None]


def test_stable_lists_what_is_on_the_table_and_reset_forgets_it() -> None:
    st = Stabilizer(frames=1)
    st.update([card("player1", "3C"), card("banker1", "4H")])
    assert sorted(s.code for s in st.stable) == ["3C", "4H"]
    st.reset()
    assert st.stable == []


def test_frames_must_be_positive() -> None:
    with pytest.raises(ValueError, match="frames must be >= 1, not 0"):
        Stabilizer(frames=0)
