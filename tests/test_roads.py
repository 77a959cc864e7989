"""The five baccarat roads, the ask roads and the shoe statistics (table_controller/display/roads.py).

Golden shoes worked out by hand from the rules in the module's docstring (and
docs/displays.md), step by step in the comments; properties over random shoes: every
derived entry reads exactly one big-road entry from the road's start on, the drawn grids
never overlap and keep every streak connected, the ask roads are what the next result
would add and their two answers are opposite colours.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.display.roads import (
    DERIVED_ROADS,
    ROWS,
    ShoeResult,
    ask_roads,
    big_road_columns,
    colour_columns,
    derived_entries,
    draw,
    scoreboard,
    shoe_statistics,
)


def shoe(text: str) -> list[ShoeResult]:
    return [ShoeResult(w) for w in text]  # type: ignore[arg-type]


def colours(text: str, road: str) -> list[str]:
    columns, _ = big_road_columns(shoe(text))
    return [e.colour for e in derived_entries(columns, DERIVED_ROADS[road])]


def cells(text: str) -> list[tuple[int, int, str]]:
    return [(c.col, c.row, c.value.winner) for c in scoreboard(shoe(text)).big_road]


# B B P P P B P B B B B: columns c0 BB (2), c1 PPP (3), c2 B (1), c3 P (1), c4 BBBB (4)
SHOE_1 = "BBPPPBPBBBB"


def test_big_road_of_a_plain_shoe() -> None:
    assert cells(SHOE_1) == [(0, 0, "B"), (0, 1, "B"), (1, 0, "P"), (1, 1, "P"), (1, 2, "P"), (2, 0, "B"),
                             (3, 0, "P"), (4, 0, "B"), (4, 1, "B"), (4, 2, "B"), (4, 3, "B")]


def test_big_eye_boy_of_a_plain_shoe() -> None:
    # starts at (1,1): column 0 has 2 entries, r=1 -> not exactly 1 -> red
    # (1,2): column 0 has exactly 2 -> blue
    # (2,0): columns 1 (3) and 0 (2) differ -> blue;  (3,0): columns 2 (1) and 1 (3) -> blue
    # (4,0): columns 3 (1) and 2 (1) equal -> red;  (4,1): column 3 has exactly 1 -> blue
    # (4,2), (4,3): column 3 ended two or more rows above -> red (straight drop)
    assert colours(SHOE_1, "big_eye_boy") == ["red", "blue", "blue", "blue", "red", "blue", "red", "red"]


def test_small_road_of_a_plain_shoe() -> None:
    # column 2 holds one entry: starts at (3,0): columns 2 (1) and 0 (2) differ -> blue
    # (4,0): columns 3 (1) and 1 (3) -> blue;  (4,1): column 2 has exactly 1 -> blue
    # (4,2), (4,3): straight drop -> red
    assert colours(SHOE_1, "small_road") == ["blue", "blue", "blue", "red", "red"]


def test_cockroach_pig_of_a_plain_shoe() -> None:
    # column 3 holds one entry: starts at (4,0): columns 3 (1) and 0 (2) differ -> blue
    # (4,1), (4,2): column 1 has 3 entries, reaching rows 1 and 2 -> red;  (4,3): exactly 3 -> blue
    assert colours(SHOE_1, "cockroach_pig") == ["blue", "red", "red", "blue"]


def test_a_derived_road_is_drawn_in_colour_columns() -> None:
    board = scoreboard(shoe(SHOE_1))
    assert [(c.col, c.row, c.value) for c in board.derived["big_eye_boy"]] == [
        (0, 0, "red"), (1, 0, "blue"), (1, 1, "blue"), (1, 2, "blue"), (2, 0, "red"), (3, 0, "blue"),
        (4, 0, "red"), (4, 1, "red")]


def test_ask_roads_of_a_plain_shoe() -> None:
    # a banker next continues column 4 at row 4: columns 3, 2, 1 (1, 1, 3 entries) do not end at row 4 -> red
    # a player next starts column 5: column 4 (4) against columns 3 (1), 2 (1), 1 (3) -> blue
    assert ask_roads(shoe(SHOE_1)) == {
        "B": {"big_eye_boy": "red", "small_road": "red", "cockroach_pig": "red"},
        "P": {"big_eye_boy": "blue", "small_road": "blue", "cockroach_pig": "blue"}}


def test_ask_roads_before_a_road_starts_are_none() -> None:
    assert ask_roads(shoe("BB")) == {"B": {"big_eye_boy": None, "small_road": None, "cockroach_pig": None},
                                     "P": {"big_eye_boy": None, "small_road": None, "cockroach_pig": None}}
    # B P: a banker next starts column 2 -> big eye boy's first entry; a player next continues column 1 at row 1
    assert ask_roads(shoe("BP"))["B"]["big_eye_boy"] == "red"  # columns 1 (1) and 0 (1) equal
    assert ask_roads(shoe("BP"))["P"]["big_eye_boy"] == "blue"  # column 0 has exactly 1 entry


def test_a_dragon_tail_turns_right_and_the_next_streak_starts_beside_its_head() -> None:
    # eight players: rows 0-5 of grid column 0, then right along the bottom row
    assert cells("PPPPPPPPBPB") == [(0, r, "P") for r in range(6)] + [(1, 5, "P"), (2, 5, "P"),
                                                                      (1, 0, "B"), (2, 0, "P"), (3, 0, "B")]


def test_a_streak_that_meets_a_tail_turns_right_above_it_and_stays_in_that_row() -> None:
    # seven players (tail at (1,5)), seven bankers in grid column 1 meet the tail at row 5: they turn at row 4
    got = cells("PPPPPPP" + "BBBBBBB" + "P")
    assert got[7:14] == [(1, 0, "B"), (1, 1, "B"), (1, 2, "B"), (1, 3, "B"), (1, 4, "B"), (2, 4, "B"), (3, 4, "B")]
    assert got[14] == (2, 0, "P")


def test_derived_roads_read_a_dragon_tail_as_one_long_streak() -> None:
    # columns: P x 8 (one streak, drawn over three grid columns), B, P, B
    # big eye boy: column 1 holds one entry -> starts at (2,0): columns 1 (1) and 0 (8) differ -> blue;
    # (3,0): columns 2 (1) and 1 (1) equal -> red. Reading grid columns would see columns of 6, 2, 2 ...
    assert colours("PPPPPPPPBPB", "big_eye_boy") == ["blue", "red"]
    # a streak of 8 after a streak of 8: big eye boy at (1,1)..(1,7): column 0 has 8 entries -> red each;
    # the next player starts column 2: columns 1 (8) and 0 (8) equal -> red
    assert colours("P" * 8 + "B" * 8 + "P", "big_eye_boy") == ["red"] * 7 + ["red"]


def test_ties_take_no_cell_and_are_counted_on_the_win_before_them() -> None:
    columns, leading = big_road_columns(shoe("TTBTTPPT"))
    assert leading == 2
    assert [(e.winner, e.column, e.row, e.ties) for col in columns for e in col] == [
        ("B", 0, 0, 2), ("P", 1, 0, 0), ("P", 1, 1, 1)]
    assert colours("TTBTTPPT", "big_eye_boy") == colours("BPP", "big_eye_boy") == ["blue"]


def test_pairs_and_naturals_are_marked_on_their_cells_and_counted() -> None:
    results = [ShoeResult("B", banker_pair=True), ShoeResult("T", player_pair=True),
               ShoeResult("P", natural=True), ShoeResult("P", player_pair=True, banker_pair=True, natural=True)]
    board = scoreboard(results)
    assert [(c.value.banker_pair, c.value.player_pair, c.value.natural) for c in board.big_road] == [
        (True, False, False), (False, False, True), (True, True, True)]
    assert [(b.col, b.row, b.winner, b.player_pair) for b in board.bead_plate] == [
        (0, 0, "B", False), (0, 1, "T", True), (0, 2, "P", False), (0, 3, "P", True)]
    assert shoe_statistics(results) == {"rounds": 4, "banker": 1, "player": 2, "tie": 1, "player_pair": 2,
                                        "banker_pair": 2, "natural": 2}


results_strategy = st.lists(st.sampled_from("BPT"), max_size=90).map(lambda w: shoe("".join(w)))


@settings(max_examples=300, deadline=None)
@given(results_strategy)
def test_every_derived_entry_reads_exactly_one_big_road_entry_from_its_start_on(results: list[ShoeResult]) -> None:
    columns, _ = big_road_columns(results)
    for k in (1, 2, 3):
        start = (k, 1) if len(columns) > k and len(columns[k]) > 1 else (k + 1, 0)
        expected = [(e.column, e.row) for col in columns for e in col if (e.column, e.row) >= start]
        assert [(d.column, d.row) for d in derived_entries(columns, k)] == expected


@settings(max_examples=300, deadline=None)
@given(results_strategy)
def test_drawn_grids_never_overlap_and_keep_every_streak_connected(results: list[ShoeResult]) -> None:
    board = scoreboard(results)
    columns, _ = big_road_columns(results)
    grids = [[(c.col, c.row) for c in board.big_road]] + [[(c.col, c.row) for c in d] for d in board.derived.values()]
    for grid in grids:
        assert len(set(grid)) == len(grid) and all(0 <= r < ROWS for _, r in grid)
    streaks = [len(c) for c in columns]
    at = 0
    for n in streaks:
        placed = board.big_road[at:at + n]
        assert placed[0].row == 0
        for a, b in zip(placed, placed[1:], strict=False):  # down one, or right one (a tail)
            assert (b.col, b.row) in ((a.col, a.row + 1), (a.col + 1, a.row))
        at += n


@settings(max_examples=300, deadline=None)
@given(results_strategy)
def test_ask_roads_are_what_the_next_result_adds_and_the_two_answers_are_opposite(
        results: list[ShoeResult]) -> None:
    ask = ask_roads(results)
    columns, _ = big_road_columns(results)
    for side in ("B", "P"):
        after, _ = big_road_columns([*results, ShoeResult(side)])  # type: ignore[arg-type]
        for name, k in DERIVED_ROADS.items():
            before, then = derived_entries(columns, k), derived_entries(after, k)
            assert ask[side][name] == (then[-1].colour if len(then) > len(before) else None)  # type: ignore[index]
    for name in DERIVED_ROADS:
        b, p = ask["B"][name], ask["P"][name]
        assert (b is None) == (p is None) and (b is None or b != p)


def test_colour_columns_start_a_column_at_each_change() -> None:
    assert colour_columns(["red", "red", "blue", "red"]) == [["red", "red"], ["blue"], ["red"]]
    assert draw([["x"] * 7]) == draw([["x"] * 7], rows=ROWS)
