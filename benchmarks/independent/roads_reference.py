"""Independent reference implementation of the baccarat scoreboard roads.

Written from docs/displays.md (section "Baccarat roads") alone, as an
independent reference for differential testing; no other implementation was
read or imitated. Standard library only.

Ambiguities met in the text, and the choice made for each:
1. Input alphabet: only 'B', 'P', 'T' (upper case) are accepted; anything else
   raises ValueError. The empty shoe gives empty roads.
2. Grid width: the text gives none, so grids are unbounded to the right (no
   scrolling or truncation); grid columns count from 0 at the left.
3. "Further right if that top cell is already taken": step right one grid
   column at a time until the top cell is free.
4. A dragon tail that meets a taken cell while running right is not covered by
   the text; by construction it cannot happen (start columns strictly increase
   and tails are contiguous), so the code asserts it never does.
5. Start of a derived road: "at (k, 1); when column k holds a single entry, at
   (k + 1, 0)" is read as "the first entry with c > k, or c == k and r >= 1";
   entry (k, 1) exists exactly when len(k) >= 2, and then precedes (k + 1, 0),
   so the streaming and the whole-shoe readings agree.
6. Ties after the last win are counted on the last win's cell; ties never
   change any derived road or ask road (the ask ignores trailing ties).
7. Ask roads: the colour is the one the derived road of results + 'B' (or 'P')
   adds for that new entry; None when the hypothetical entry lies before the
   road's start.
8. Bead plate: ties are beads with winner 'T'; no dragon tails (pure formula).
"""
from __future__ import annotations

ROWS = 6
Cell = tuple[int, int]


def _check(results: str) -> None:
    bad = set(results) - {"B", "P", "T"}
    if bad:
        raise ValueError(f"unexpected result characters: {sorted(bad)!r}")


def _columns(results: str) -> tuple[list[list[list]], int]:
    """Logical big-road columns: each a list of [winner, ties]; plus leading ties."""
    _check(results)
    cols: list[list[list]] = []
    leading = 0
    last: list | None = None
    for ch in results:
        if ch == "T":
            if last is None:
                leading += 1
            else:
                last[1] += 1
            continue
        if cols and cols[-1][0][0] == ch:
            cols[-1].append([ch, 0])
        else:
            cols.append([[ch, 0]])
        last = cols[-1][-1]
    return cols, leading


def _draw(lengths: list[int]) -> list[Cell]:
    """Place logical columns of the given lengths on the 6-row grid, in order."""
    taken: set[Cell] = set()
    out: list[Cell] = []
    prev_start = -1
    for n in lengths:
        x = prev_start + 1
        while (x, 0) in taken:
            x += 1
        prev_start = x
        col, row, turned = x, 0, False
        for i in range(n):
            if i > 0:
                if not turned and row + 1 < ROWS and (col, row + 1) not in taken:
                    row += 1
                else:
                    turned = True
                    col += 1
            assert (col, row) not in taken, "dragon tail ran into a taken cell"
            taken.add((col, row))
            out.append((col, row))
    return out


def big_road(results: str) -> tuple[list[tuple[int, int, str, int]], int]:
    cols, leading = _columns(results)
    entries = [e for col in cols for e in col]
    cells = _draw([len(col) for col in cols])
    return [(x, y, e[0], e[1]) for (x, y), e in zip(cells, entries, strict=True)], leading


def derived_road(results: str, k: int) -> list[str]:
    if k not in (1, 2, 3):
        raise ValueError("k must be 1, 2 or 3")
    cols, _ = _columns(results)
    ln = [len(col) for col in cols]
    colours: list[str] = []
    for c, n in enumerate(ln):
        for r in range(n):
            if c < k or (c == k and r == 0):
                continue  # before the road's start
            if r == 0:
                colours.append("red" if ln[c - 1] == ln[c - 1 - k] else "blue")
            else:
                colours.append("blue" if ln[c - k] == r else "red")
    return colours


def _streaks(items: list[str]) -> list[int]:
    lengths: list[int] = []
    for i, it in enumerate(items):
        if i > 0 and items[i - 1] == it:
            lengths[-1] += 1
        else:
            lengths.append(1)
    return lengths


def derived_grid(results: str, k: int) -> list[tuple[int, int, str]]:
    colours = derived_road(results, k)
    cells = _draw(_streaks(colours))
    return [(x, y, c) for (x, y), c in zip(cells, colours, strict=True)]


def ask(results: str) -> dict[str, dict[int, str | None]]:
    out: dict[str, dict[int, str | None]] = {}
    for nxt in ("B", "P"):
        out[nxt] = {}
        for k in (1, 2, 3):
            before = derived_road(results, k)
            after = derived_road(results + nxt, k)
            out[nxt][k] = after[-1] if len(after) > len(before) else None
    return out


def bead_plate(results: str) -> list[tuple[int, int, str]]:
    _check(results)
    return [(i // ROWS, i % ROWS, ch) for i, ch in enumerate(results)]


if __name__ == "__main__":
    R, U = "red", "blue"
    # Shoe 1: leading tie, tie on a cell, derived roads of all three kinds.
    s1 = "TBBTPBPPPB"  # columns B2 P1 B1 P3 B1
    assert big_road(s1) == ([(0, 0, "B", 0), (0, 1, "B", 1), (1, 0, "P", 0),
                             (2, 0, "B", 0), (3, 0, "P", 0), (3, 1, "P", 0),
                             (3, 2, "P", 0), (4, 0, "B", 0)], 1)
    assert derived_road(s1, 1) == [U, R, U, R, U]  # starts at (2,0): len(1) == 1
    assert derived_road(s1, 2) == [U, U, R, U]      # starts at (3,0): len(2) == 1
    assert derived_road(s1, 3) == [R, U, U]         # starts at (3,1)
    assert derived_grid(s1, 2) == [(0, 0, U), (0, 1, U), (1, 0, R), (2, 0, U)]
    assert derived_grid(s1, 3) == [(0, 0, R), (1, 0, U), (1, 1, U)]
    assert ask(s1) == {"B": {1: R, 2: U, 3: U}, "P": {1: U, 2: R, 3: R}}
    assert bead_plate(s1) == [(0, 0, "T"), (0, 1, "B"), (0, 2, "B"), (0, 3, "T"),
                              (0, 4, "P"), (0, 5, "B"), (1, 0, "P"), (1, 1, "P"),
                              (1, 2, "P"), (1, 3, "B")]
    # Shoe 2: staircase of dragon tails; a start pushed right by a row-0 tail.
    s2 = "B" * 7 + "P" * 6 + "B" * 5 + "P" * 4 + "B" * 3 + "P" * 3 + "B"
    cells2 = [(x, y) for x, y, _, _ in big_road(s2)[0]]
    assert cells2 == [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 5),
                      (1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4),
                      (2, 0), (2, 1), (2, 2), (2, 3), (3, 3),
                      (3, 0), (3, 1), (3, 2), (4, 2),
                      (4, 0), (4, 1), (5, 1),
                      (5, 0), (6, 0), (7, 0),
                      (8, 0)]
    assert derived_road(s2, 1) == [R] * 5 + [U] + [R] * 4 + [U] + [R] * 3 + [U] + \
        [R] * 2 + [U] + [R] * 3
    assert derived_grid(s2, 1) == (
        [(0, y, R) for y in range(5)] + [(1, 0, U)] + [(2, y, R) for y in range(4)]
        + [(3, 0, U)] + [(4, y, R) for y in range(3)] + [(5, 0, U)]
        + [(6, y, R) for y in range(2)] + [(7, 0, U)] + [(8, y, R) for y in range(3)])
    # Shoe 3: blue then straight drops, a derived dragon tail, unstarted roads.
    s3 = "B" + "P" * 9
    assert [(x, y) for x, y, _, _ in big_road(s3)[0]] == \
        [(0, 0)] + [(1, y) for y in range(6)] + [(2, 5), (3, 5), (4, 5)]
    assert derived_road(s3, 1) == [U] + [R] * 7
    assert derived_grid(s3, 1) == [(0, 0, U)] + [(1, y, R) for y in range(6)] + [(2, 5, R)]
    assert derived_road(s3, 2) == [] and derived_road(s3, 3) == []
    assert ask(s3) == {"B": {1: U, 2: None, 3: None}, "P": {1: R, 2: None, 3: None}}
    assert big_road("TT") == ([], 2) and ask("") == {"B": {1: None, 2: None, 3: None},
                                                    "P": {1: None, 2: None, 3: None}}
    print("roads_reference self-check passed")
