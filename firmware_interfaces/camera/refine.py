"""Move a card's found outline onto the card's own border.

The finder's outlines come from masks a pixel or two off the true edge (a printed
line beside the card, blur, an edge cut), and a slot fit is coarser still; the
reader is much surer on the true edge. :func:`refine_outline` warps the card and
a margin round it into a patch, finds the sharpest fall in whiteness along each
side, fits a line through those falls and crosses the four lines. Where the
empty table is known (:meth:`~firmware_interfaces.camera.finder.CardFinder.empty_in_patch`),
a fall the table already had there is the print's (a slot's white line), not the
card's. It knows nothing of games or of reading: it takes a frame, an outline
and the card's size in millimetres.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import cv2
import numpy as np

from firmware_interfaces.camera.channels import darkest_channel

#: Outline refinement: patch resolution (px per card mm), how far (mm) each side may move,
#: and the share of each side's length it is measured along (clear of the rounded corners).
REFINE_PX_PER_MM = 3.0
REFINE_REACH_MM = 4.0
REFINE_SPAN = 0.7
#: A side's sharpest fall in whiteness that the empty table already had there, at least this
#: share of it, is the print's edge (a slot line's), not the card's.
REFINE_EMPTY_SHARE = 0.5
#: ... when what lies inside that fall now is no whiter than the print was there (in this
#: frame's light), by this factor: the print itself, or a card as white as the print, which
#: hides the card's own edge. A card over a gold line is twice as white as the line: its edge
#: along the line is its own.
REFINE_AS_WHITE = 1.25
#: The share of a side's length along which it must show a clear edge when some of its
#: positions were left out as print (0.4 otherwise): a card turned a few degrees over a white
#: slot line shows its edge only where it lies over the felt.
REFINE_SHARE_BESIDE_PRINT = 0.25
#: At most this many sides without a clear edge of their own are placed from the others.
REFINE_SIDES_PLACED = 2

#: The empty table's whiteness (float32) as a patch of the frame: given the frame-to-patch
#: homography and the patch's size (w, h); None where it is not known.
EmptyInPatch = Callable[[np.ndarray, tuple[int, int]], "np.ndarray | None"]


class RefinedOutline(NamedTuple):
    """What :func:`refine_outline` made of an outline: the corners (TL, TR, BR, BL; the
    outline given when it could not be refined), how many sides were placed from the
    others, not on an edge of their own (0 when the outline was not moved), how many sides
    showed no clear edge at all, not even the print's (motion blur, glare: the sides a
    refinement that does not know the print gives up on), and how many showed one along
    less than 0.4 of their length once the print's edges were left out (placed, or fitted
    on that little): with the print's edges counted, they had one.

    The refinement of an outline it did not move still says why: a side unseen, or sides
    beside the print."""

    corners: np.ndarray
    sides_placed: int
    sides_unseen: int = 0
    sides_beside_print: int = 0


def refine_outline(frame: np.ndarray, corners: np.ndarray, card_mm: tuple[float, float],
                   empty: EmptyInPatch | None = None) -> RefinedOutline:
    """The card's image outline (TL, TR, BR, BL) moved onto its own border.

    The finder's outline comes from masks a pixel or two off the true edge (a printed line
    beside the card, blur, an edge cut); the reader is much surer on the true one. The card
    and a margin around it are warped into a patch at :data:`REFINE_PX_PER_MM`; along each
    side, at every position clear of the corners, the sharpest fall in whiteness from
    inside to outside within :data:`REFINE_REACH_MM` of the current edge is taken, a line
    is fitted through those (a robust fit: the middle half of them), and the four lines'
    crossings are the new corners. A side with no clear edge (up to
    :data:`REFINE_SIDES_PLACED` of them) is placed from the others: through the middle of the
    outline's own side, along the opposite side's edge (a card turned a few degrees over a
    white slot line shows no edge where it lies over the line, but its other sides give its
    turn). Returns ``corners`` unchanged when more sides have no clear edge.

    ``empty`` (:meth:`~firmware_interfaces.camera.finder.CardFinder.empty_in_patch`) gives
    the empty table's whiteness: at each position, a fall the empty table already had there
    (at least :data:`REFINE_EMPTY_SHARE` of it, within a millimetre) is left out, and the
    sharpest of the others taken, for that edge is print (a white card over a white slot line
    has no edge of its own there, and its sharpest fall is the line's outer edge, square to the
    slot, not to the card); a side that lost positions so needs its clear edge along
    :data:`REFINE_SHARE_BESIDE_PRINT` of its length."""
    p = REFINE_PX_PER_MM
    cw, ch = card_mm
    m = REFINE_REACH_MM + 2.0
    w, h = round((cw + 2 * m) * p), round((ch + 2 * m) * p)
    dst = np.array([[m, m], [m + cw, m], [m + cw, m + ch], [m, m + ch]], np.float32) * p
    warp = cv2.getPerspectiveTransform(np.asarray(corners, np.float32), dst)
    # whiteness of just the frame around the card, then one channel warped
    back = np.linalg.inv(warp)
    around = cv2.perspectiveTransform(
        np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64).reshape(-1, 1, 2), back
    ).reshape(-1, 2)
    x0, y0 = np.floor(around.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(around.max(axis=0)).astype(int) + 2
    fh, fw = frame.shape[:2]
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, fw), min(y1, fh)
    if x1 - x0 < 4 or y1 - y0 < 4:
        return RefinedOutline(np.asarray(corners, np.float64), 0)
    crop = frame[y0:y1, x0:x1]
    crop_white = darkest_channel(crop)
    shifted = warp @ np.array([[1, 0, x0], [0, 1, y0], [0, 0, 1]], np.float64)
    reach = round(REFINE_REACH_MM * p)
    d = 2  # step measured between points d px inside and d px outside
    edge = round(m * p)
    bands = _side_bands(crop_white, shifted, (w, h), edge, reach + d)
    before = None if empty is None else empty(warp, (w, h))
    lines: list[np.ndarray | None] = []
    unseen_sides = beside_print = 0
    ys = np.arange(edge - reach, edge + reach + 1)
    for side in range(4):
        xa, xb = _span(w if side in (0, 2) else h, edge)
        xs = np.arange(xa, xb)
        # each row of the band: edge - reach - d + its index; columns xa..xb
        band = bands[side]
        inside_now, outside_now = band[2 * d :], band[: band.shape[0] - 2 * d]
        step = inside_now - outside_now
        need = 0.4
        unseen = int(np.count_nonzero(step.max(axis=0) >= 20.0) < need * len(xs))
        if before is not None:
            # a fall the empty table already had there is print's, not the card's (on the same
            # band of the empty table, a millimetre either side, as its own contiguous array)
            dp = round(p)
            around = np.ascontiguousarray(_view_side(before, side)[edge - reach - dp : edge + reach + dp + 1, xa:xb])
            was = _fall_before(around, dp, REFINE_EMPTY_SHARE * 20.0)
            if was is not None:
                fall, inside = was
                printed = (fall >= REFINE_EMPTY_SHARE * step) & (inside_now <= REFINE_AS_WHITE * inside)
                if (printed & (step >= 20.0)).any():
                    step = np.where(printed, 0.0, step)
                    need = REFINE_SHARE_BESIDE_PRINT
        best = np.argmax(step, axis=0)
        strength = step.max(axis=0)
        good = strength >= 20.0
        if good.sum() < 0.4 * len(xs):
            # no edge of its own along 0.4 of it: none at all, or only once the print's were left out
            unseen_sides += unseen
            beside_print += 1 - unseen
        if good.sum() < need * len(xs):
            lines.append(None)
            continue
        xg, yg = xs[good].astype(np.float64), (ys[best[good]]).astype(np.float64)
        # robust line y = a x + b: fit, keep the middle half by residual, fit again
        a, b = _fit_line(xg, yg)
        res = np.abs(yg - (a * xg + b))
        keep = res <= np.partition(res, len(res) // 2)[len(res) // 2] + 0.5
        a, b = _fit_line(xg[keep], yg[keep])
        # the line in this view's coordinates -> two points -> back to patch coordinates
        pts = np.array([[xg.min(), a * xg.min() + b], [xg.max(), a * xg.max() + b]])
        lines.append(_unview(pts, side, w, h))
    missing = [k for k in range(4) if lines[k] is None]
    if len(missing) > REFINE_SIDES_PLACED:
        return RefinedOutline(np.asarray(corners, np.float64), 0, unseen_sides, beside_print)
    sides: list[np.ndarray] = []
    for k, line in enumerate(lines):
        if line is None:
            # through the middle of the outline's own side, along the opposite side's edge
            # (square to a neighbour's when the opposite side has none either: with two sides
            # placed, that neighbour has one)
            middle = (dst[k] + dst[(k + 1) % 4]) / 2
            opposite, neighbour = lines[(k + 2) % 4], lines[(k + 1) % 4]
            if opposite is not None:
                along = opposite[1] - opposite[0]
            elif neighbour is not None:
                across = neighbour[1] - neighbour[0]
                along = np.array([across[1], -across[0]])
            else:
                return RefinedOutline(np.asarray(corners, np.float64), 0, unseen_sides, beside_print)
            line = np.array([middle - along, middle + along])
        sides.append(line)
    crossings = [_cross(sides[k - 1], sides[k]) for k in range(4)]  # TL = left x top, ...
    if any(c is None for c in crossings):
        return RefinedOutline(np.asarray(corners, np.float64), 0, unseen_sides, beside_print)
    out_patch = np.array(crossings, np.float64)
    if np.abs(out_patch - dst).max() > (REFINE_REACH_MM + 1.0) * p:
        return RefinedOutline(np.asarray(corners, np.float64), 0, unseen_sides, beside_print)
    return RefinedOutline(cv2.perspectiveTransform(out_patch.reshape(-1, 1, 2), back).reshape(-1, 2), len(missing),
                          unseen_sides, beside_print)


def _view_side(patch: np.ndarray, side: int) -> np.ndarray:
    """A card's patch viewed so that ``side`` (0 top, 1 right, 2 bottom, 3 left) is the top
    edge, inside downwards (see :func:`_unview`)."""
    if side == 0:
        return patch
    if side == 1:
        return np.rot90(patch, 1)  # right side becomes top
    if side == 2:
        return patch[::-1, ::-1]
    return np.rot90(patch, -1)  # left side becomes top


def _fall_before(band: np.ndarray, d: int, least: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The empty table's fall in whiteness from inside to outside (``band``: its whiteness on
    one side's band, seen as :func:`_view_side` sees it, with ``d`` rows more above and below
    the rows judged) at each row judged, measured ``d`` px either side (it is kept at 1 px
    per mm: its edges are soft), and its whiteness on the inside; the most of each within
    ``d`` rows (the camera's shift is found to about a millimetre). None where it falls by
    less than ``least`` everywhere (no print)."""
    inside, outside = band[2 * d :], band[: band.shape[0] - 2 * d]
    fall = inside - outside
    if float(fall.max()) < least:
        return None
    near = np.ones((2 * d + 1, 1), np.uint8)
    return np.asarray(cv2.dilate(fall, near)), np.asarray(cv2.dilate(inside, near))


#: How far (px) the blur of :func:`_side_bands` reaches: OpenCV's kernel for sigma 1 on uint8
#: is 7 taps wide.
_STRIP_BLUR_REACH = 3


def _span(length: int, edge: int) -> tuple[int, int]:
    """Where along a side ``length`` px long (the patch's width or height, the side's line
    ``edge`` px in from each end) the refinement looks: [start, end) px, its middle
    :data:`REFINE_SPAN`, clear of the rounded corners."""
    inner = length - 2 * edge
    return edge + int(inner * (1 - REFINE_SPAN) / 2), edge + int(inner * (1 + REFINE_SPAN) / 2)


def _side_bands(crop_white: np.ndarray, warp: np.ndarray, size: tuple[int, int], edge: int,
                depth: int) -> list[np.ndarray]:
    """Where :func:`refine_outline` looks on each side of a card's patch (``size``: w, h;
    ``warp``: crop to patch), the patch's whiteness blurred (sigma 1 px), as float32: per side
    (top, right, bottom, left), the rows within ``depth`` px of the side's line ``edge`` px in
    from the patch's border, along the side's middle :data:`REFINE_SPAN`, seen as
    :func:`_view_side` sees them (the side on top, inside downwards). Each side's strip is
    warped and blurred with the blur's reach around it, so its values are the whole patch's,
    at a third of the pixels, and each band is its own contiguous array (the turned views of a
    whole patch cost every step on it twice as much)."""
    w, h = size
    r = _STRIP_BLUR_REACH
    bands: list[np.ndarray] = [np.empty((0, 0), np.float32)] * 4
    # top and bottom strips, then left and right (their near line first, then the far one);
    # said, not told from the lengths: a square patch has both the same
    for length, across, sides, lying in ((w, h, (0, 2), False), (h, w, (3, 1), True)):
        a0, a1 = _span(length, edge)
        # two of the sides are seen turned, their span counted from the other end: cover both
        b0, b1 = min(a0, length - a1), max(a1, length - a0)
        c0, c1 = max(b0 - r, 0), min(b1 + r, length)
        for near, side in zip((edge, across - 1 - edge), sides, strict=True):
            lo, hi = near - depth, near + depth + 1  # across the side: [lo, hi)
            g0, g1 = max(lo - r, 0), min(hi + r, across)
            # the strip's pixel [i, j] lies at g0 + i across the side and c0 + j along it: a
            # left or right strip is warped lying down (OpenCV blurs a narrow, tall picture
            # three times slower than the same turned; the same values)
            if lying:
                onto = np.array([[0, 1, -c0], [1, 0, -g0], [0, 0, 1]], np.float64)
            else:
                onto = np.array([[1, 0, -c0], [0, 1, -g0], [0, 0, 1]], np.float64)
            strip = cv2.warpPerspective(crop_white, onto @ warp, (c1 - c0, g1 - g0), flags=cv2.INTER_LINEAR,
                                        borderMode=cv2.BORDER_REPLICATE)
            rows = cv2.GaussianBlur(strip, (0, 0), 1.0)[lo - g0 : hi - g0]
            if side in (1, 2):  # seen from the far border: across counted from it
                rows = rows[::-1]
            if side in (2, 3):  # ... and along from the other end
                band = rows[:, length - a1 - c0 : length - a0 - c0][:, ::-1]
            else:
                band = rows[:, a0 - c0 : a1 - c0]
            bands[side] = band.astype(np.float32)
    return bands


def _fit_line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares y = a x + b (np.polyfit is ten times slower for this)."""
    mx, my = float(x.mean()), float(y.mean())
    dx = x - mx
    sxx = float(dx @ dx)
    a = float(dx @ (y - my)) / sxx if sxx > 1e-9 else 0.0
    return a, my - a * mx


def _unview(pts: np.ndarray, side: int, w: int, h: int) -> np.ndarray:
    """Points of a side's view (see refine_outline) back in patch coordinates."""
    x, y = pts[:, 0], pts[:, 1]
    if side == 0:
        return np.stack([x, y], axis=1)
    if side == 1:  # np.rot90(k=1): view[i, j] = patch[j, w-1-i]
        return np.stack([w - 1 - y, x], axis=1)
    if side == 2:
        return np.stack([w - 1 - x, h - 1 - y], axis=1)
    # np.rot90(k=-1): view[i, j] = patch[h-1-j, i]
    return np.stack([y, h - 1 - x], axis=1)


def _cross(l1: np.ndarray, l2: np.ndarray) -> tuple[float, float] | None:
    (x1, y1), (x2, y2) = l1
    (x3, y3), (x4, y4) = l2
    den = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4)
    if abs(den) < 1e-9:
        return None
    t = ((x1 - x3) * (y3 - y4) - (y1 - y3) * (x3 - x4)) / den
    return (float(x1 + t * (x2 - x1)), float(y1 + t * (y2 - y1)))
