"""Baccarat scoreboards: the five roads, the ask roads and the shoe's statistics. Pure.

Everything here is a function of the shoe's results in order (:class:`ShoeResult`:
the winner ``B`` banker, ``P`` player or ``T`` tie, the pairs and whether it was a
natural), as every casino's baccarat scoreboard shows them. Grids are six rows high.

**Bead plate** (珠盘路): one bead per round, ties included, filled top to bottom,
then left to right.

**Big road** (大路): banker and player wins only. A new *column* starts whenever
the winner changes; a streak runs down its column. A tie takes no cell: it is
counted on the cell before it (ties before the first win are counted apart,
``leading_ties``). The pairs and the natural of a win are marked on its cell.

Drawing a road on a six-row grid: a streak starts in the top row of the next grid
column after the one where the previous streak started (further right when that
cell is taken by an earlier tail); it runs down, and when it meets the bottom or a
taken cell it turns right and goes on along that row (the **dragon tail**), never
turning down again. The derived roads are drawn the same way from their colours.

**The derived roads** (大眼仔 big eye boy, k = 1; 小路 small road, k = 2; 曱甴路
cockroach pig, k = 3) read the big road's *logical* columns: a column is one
streak, however it is drawn, and its length is the number of wins in the streak
(ties are not counted). For each big-road entry at column c, row r (both from 0;
r is the entry's place in its streak):

* the road **starts** at the entry (c = k, r = 1), or, when column k holds a single
  entry, at (c = k + 1, r = 0); every entry from there on adds one colour;
* an entry that **starts a column** (r = 0) is red when columns c - 1 and c - 1 - k
  have the same length, else blue (a "neat" pattern against a "choppy" one);
* an entry **within a column** (r >= 1) looks k columns back: it is **blue** when
  that column has exactly r entries (it ended just above this row: "no match"),
  and red when it reaches row r ("match") or ended at least two rows above
  ("straight drop": 直落).

Red and blue are the colours' names everywhere (big eye boy draws them as hollow
circles, small road as solid dots, cockroach pig as slashes).

*Logical columns, not the drawn grid.* Published descriptions and implementations
disagree on what a "column" is once a streak passes six and tails right: some count
the grid column (a tail cell then sits in a column of its own, of length 1), others
the streak. We use the streak, because the derived roads describe how the shoe
alternates between streaks and chops: a streak of 8 is one streak of length 8
whether the board has six rows or eight, and counting grid columns would make the
derived roads depend on the board's height (and read a tail's cells, one per grid
column, as a run of one-win columns that never happened). ``tests/test_roads.py``
has shoes with dragon tails worked out by hand under this reading.

**Ask roads** (问路): what each derived road would add if the next result were a
banker win, or a player win: the colour of its next entry (None before the road
starts). The two answers of one road are always opposite colours: continuing the
current streak is blue exactly when starting a new one would be red.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

ROWS = 6
Side = Literal["B", "P"]
Winner = Literal["B", "P", "T"]
Colour = Literal["red", "blue"]
#: The derived roads and how many columns back each looks.
DERIVED_ROADS: dict[str, int] = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}

T = TypeVar("T")


@dataclass(frozen=True)
class ShoeResult:
    """One round of the shoe as the scoreboard knows it."""

    winner: Winner
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False


@dataclass(frozen=True)
class Bead:
    """One bead plate cell: a round's result at (col, row)."""

    col: int
    row: int
    winner: Winner
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False


@dataclass
class BigRoadEntry:
    """One banker or player win of the big road, in its logical column (streak) and row, and
    the round it is (``index`` into the shoe's results); ties after it are counted on it."""

    winner: Side
    column: int
    row: int
    index: int
    ties: int = 0
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False


@dataclass(frozen=True)
class Cell(Generic[T]):
    """A drawn cell of a road: grid (col, row), and what is drawn there."""

    col: int
    row: int
    value: T


@dataclass(frozen=True)
class DerivedEntry:
    """One entry of a derived road: its colour and the big-road entry (column, row) it reads."""

    colour: Colour
    column: int
    row: int


@dataclass
class Scoreboard:
    """Every road of one shoe, drawn, with the ask roads and the shoe's statistics."""

    bead_plate: list[Bead]
    big_road: list[Cell[BigRoadEntry]]
    leading_ties: int
    derived: dict[str, list[Cell[Colour]]]
    ask: dict[Side, dict[str, Colour | None]]
    stats: dict[str, int] = field(default_factory=dict)


def bead_plate(results: Sequence[ShoeResult]) -> list[Bead]:
    """Beads filled top to bottom, then left to right: one per round, ties included."""
    return [Bead(i // ROWS, i % ROWS, r.winner, r.player_pair, r.banker_pair, r.natural)
            for i, r in enumerate(results)]


def big_road_columns(results: Sequence[ShoeResult]) -> tuple[list[list[BigRoadEntry]], int]:
    """The big road's logical columns (one a streak) and the ties before the first win."""
    columns: list[list[BigRoadEntry]] = []
    leading_ties = 0
    for index, r in enumerate(results):
        if r.winner == "T":
            if columns:
                columns[-1][-1].ties += 1
            else:
                leading_ties += 1
            continue
        if not columns or columns[-1][-1].winner != r.winner:
            columns.append([])
        column = columns[-1]
        column.append(BigRoadEntry(r.winner, len(columns) - 1, len(column), index, 0, r.player_pair,
                                   r.banker_pair, r.natural))
    return columns, leading_ties


def draw(columns: Sequence[Sequence[T]], rows: int = ROWS) -> list[Cell[T]]:
    """Place logical columns on a ``rows``-high grid with dragon tails (see module doc)."""
    cells: list[Cell[T]] = []
    taken: set[tuple[int, int]] = set()
    start = -1
    for streak in columns:
        start += 1
        while (start, 0) in taken:
            start += 1
        col, row, turned = start, 0, False
        for i, value in enumerate(streak):
            if i > 0:
                if not turned and row + 1 < rows and (col, row + 1) not in taken:
                    row += 1
                else:
                    turned = True
                    col += 1
            cells.append(Cell(col, row, value))
            taken.add((col, row))
    return cells


def derived_entries(columns: Sequence[Sequence[object]], k: int) -> list[DerivedEntry]:
    """The derived road that looks ``k`` columns back, from the big road's logical columns."""
    lengths = [len(c) for c in columns]
    out: list[DerivedEntry] = []
    for c, length in enumerate(lengths):
        for r in range(length):
            if c < k or (c == k and r == 0):
                continue  # before the road's start
            if r == 0:
                colour: Colour = "red" if lengths[c - 1] == lengths[c - 1 - k] else "blue"
            else:
                colour = "blue" if lengths[c - k] == r else "red"
            out.append(DerivedEntry(colour, c, r))
    return out


def colour_columns(colours: Sequence[Colour]) -> list[list[Colour]]:
    """A derived road's colours in logical columns: a new column whenever the colour changes."""
    columns: list[list[Colour]] = []
    for colour in colours:
        if not columns or columns[-1][-1] != colour:
            columns.append([])
        columns[-1].append(colour)
    return columns


def ask_roads(results: Sequence[ShoeResult]) -> dict[Side, dict[str, Colour | None]]:
    """For a next banker win and a next player win: each derived road's next colour."""
    columns, _ = big_road_columns(results)
    lengths = [len(c) for c in columns]
    out: dict[Side, dict[str, Colour | None]] = {}
    for side in ("B", "P"):
        if columns and columns[-1][-1].winner == side:
            after = [*lengths[:-1], lengths[-1] + 1]
        else:
            after = [*lengths, 1]
        c, r = len(after) - 1, after[-1] - 1
        answers: dict[str, Colour | None] = {}
        for name, k in DERIVED_ROADS.items():
            if c < k or (c == k and r == 0):
                answers[name] = None
            elif r == 0:
                answers[name] = "red" if after[c - 1] == after[c - 1 - k] else "blue"
            else:
                answers[name] = "blue" if after[c - k] == r else "red"
        out[side] = answers
    return out


def shoe_statistics(results: Sequence[ShoeResult]) -> dict[str, int]:
    """Counts of the shoe so far: rounds, banker, player and tie wins, pairs, naturals."""
    return {
        "rounds": len(results),
        "banker": sum(r.winner == "B" for r in results),
        "player": sum(r.winner == "P" for r in results),
        "tie": sum(r.winner == "T" for r in results),
        "player_pair": sum(r.player_pair for r in results),
        "banker_pair": sum(r.banker_pair for r in results),
        "natural": sum(r.natural for r in results),
    }


def scoreboard(results: Sequence[ShoeResult], rows: int = ROWS) -> Scoreboard:
    """Every road of the shoe so far, drawn on ``rows``-high grids."""
    columns, leading_ties = big_road_columns(results)
    derived = {name: draw(colour_columns([e.colour for e in derived_entries(columns, k)]), rows)
               for name, k in DERIVED_ROADS.items()}
    return Scoreboard(bead_plate(results), draw(columns, rows), leading_ties, derived, ask_roads(results),
                      shoe_statistics(results))
