"""Baccarat scoreboards of a shoe: the bead plate and the big road.

Pure functions of the shoe's winners in order (``"B"`` banker, ``"P"`` player,
``"T"`` tie), six rows high as on every baccarat table's display board.
"""

from __future__ import annotations

from dataclasses import dataclass

ROWS = 6


@dataclass(frozen=True)
class Bead:
    """One bead plate cell: a round's winner and pairs, at (column, row)."""

    col: int
    row: int
    winner: str
    player_pair: bool = False
    banker_pair: bool = False


@dataclass
class RoadCell:
    """One big road cell: a banker or player win; ties are counted on the cell before them."""

    col: int
    row: int
    winner: str
    ties: int = 0


def bead_plate(results: list[tuple[str, bool, bool]]) -> list[Bead]:
    """Beads filled top to bottom, then left to right: one per round, ties included."""
    return [Bead(i // ROWS, i % ROWS, winner, pp, bp) for i, (winner, pp, bp) in enumerate(results)]


def big_road(winners: list[str]) -> tuple[list[RoadCell], int]:
    """The big road cells and the ties seen before the first banker/player win.

    A new column starts whenever the winner changes; a streak runs down its
    column and, when it meets the bottom or an occupied cell, turns right (the
    "dragon tail"). A tie does not take a cell: it is counted on the latest one.
    """
    cells: list[RoadCell] = []
    taken: set[tuple[int, int]] = set()
    leading_ties = 0
    streak_col = -1
    for winner in winners:
        if winner == "T":
            if cells:
                cells[-1].ties += 1
            else:
                leading_ties += 1
            continue
        last = cells[-1] if cells else None
        if last is not None and last.winner == winner:
            below = (last.col, last.row + 1)
            if last.row + 1 < ROWS and below not in taken:
                col, row = below
            else:
                col, row = last.col + 1, last.row
        else:
            streak_col += 1
            col, row = streak_col, 0
            while (col, row) in taken:
                col += 1
            streak_col = col
        cells.append(RoadCell(col, row, winner))
        taken.add((col, row))
    return cells, leading_ties
