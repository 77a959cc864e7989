"""Find every card lying on the table in one camera frame (no reading).

The search runs on the table itself, not on the picture: the frame is warped
to a top-down view of the table (:data:`FIND_PX_PER_MM`), where every card
has the size the layout gives whatever the camera's tilt, and where the
widths the table knows (a printed line, a chip's stripe, a card) are fixed
numbers of pixels. Three passes, each measurable on its own (a card none of
them finds is *missed*, counted apart from cards found but not read):

1. *Masks*: card paper against the felt's own local whiteness at four
   contrasts, paper joined with "not felt" (a court card's dark picture) at
   two, and paper cut along every sharp step in whiteness (frees a card from
   a pool of glare touching it). Each is opened so that printed lines, text
   and chip stripes thinner than :data:`LINE_MM` let go of the cards they
   touch, then filled. An outer contour is a card if it is a rectangle of
   the card's size (short side -20/+15 %, long side ±15 %, aspect 1.2-1.8)
   whose convex hull fills it.
2. *Split*: a blob too big for one card (a card joined to glare, a shadow or
   its neighbour) is cut again at levels just under its own paper.
3. *Slots*: in a slot where paper lies but no card was found, a card-sized
   rectangle is fitted to the whiteness steps themselves (position, angle
   and width searched around the slot), accepted when at least three of its
   sides step up from the felt.

Every outline found must show a border at least :data:`PAPER_CONTRAST`
whiter than the felt just outside it: pools of light cut into a card's
shape have no such step.

When calibration kept the empty table (``empty_table=``, from
:func:`learn_empty_table`), the frame is also compared with it, in the
frame's own light: print whose colour moved is covered by a card and stays
in the masks (a card's edge past its slot line is not clipped), and the
border step of passes 1 and 3 is measured as brightness over what lay there
before, so a white line flush with a card is felt, not paper.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from itertools import product

import cv2
import numpy as np

from calibration.layout import Layout, Slot
from calibration.table import TablePlane
from calibration.templates import order_portrait
from firmware_interfaces.camera.channels import brightest_channel, darkest_channel
from firmware_interfaces.camera.refine import REFINE_PX_PER_MM

log = logging.getLogger(__name__)

#: Border around each corner marker (its printed quiet zone and some) left out of the search, mm.
MARKER_MARGIN_MM = 12.0
#: Whiteness step (0..255) a card's border must show over the felt around it.
PAPER_CONTRAST = 25.0
#: Resolution of the top-down view cards are looked for in: 2 mm a pixel (a card is about 31 x 44
#: px). Every setting below is in mm of the table, or in pixels of a grid whose cells are given
#: in mm, so it means the same at any working resolution (``CardFinder(px_per_mm=...)``).
FIND_PX_PER_MM = 0.5
#: Resolution of the maps of the empty table that calibration keeps (``printed.png``,
#: ``empty_table.png``); the finder shrinks them to its own.
CALIBRATION_PX_PER_MM = 1.0
#: A view of half the calibration's resolution is warped from the frame shrunk to half where
#: that half frame has, in every direction and everywhere on the table, from the first to the
#: second of these many pixels for each of the view's: fewer, the view would be blurred where
#: the frame is seen slantwise; more, the half frame would be sampled sparsely, its noise kept
#: (a 720p camera over a 900 mm table: 0.99-1.37; a 1080p one: 1.6-2.0).
HALF_FRAME_RANGE = (0.9, 1.5)
#: Printed lines, letters and chip stripes up to about this wide (mm) are opened away.
LINE_MM = 5.0
#: Whiteness steps over the felt (0..255) and colour distances from it that cut cards out.
PAPER_STEPS = (25, 45, 70, 100)
FELT_DISTANCES = (45, 80)
#: A step in whiteness this sharp (0..255 across EDGE_MM of the table, at least 2 px) is an edge
#: that cuts the paper masks.
EDGE_STEP = 30
EDGE_MM = 3.0
#: How far inside the card an edge-cut outline lies, px of a top-down view whose edges are
#: measured across 3 px (scaled with the edges' own width in px).
EDGE_CUT_PX = 1.5
#: Below a blob's own paper level, the levels it is cut again at to free a card from it.
SPLIT_DROPS = (20, 35, 50, 70)
#: What stands out of the empty felt by this much (whiteness or colour, 0..255), in pieces of
#: at least this many top-down pixels, is print (see CardFinder.printed_structure).
PRINT_STEP = 35
PRINT_MIN_PX = 30
BODY_MM = 15.0
#: A printed pixel whose colour moved this far (0..255, both views smoothed by COVER_BLUR_MM)
#: from the empty table's, after the frame's exposure is matched, is covered by a card; any value
#: of the empty table within the square of COVER_REACH_MM around it may be the one expected.
COVER_STEP = 30.0
COVER_BLUR_MM = 1.0
COVER_REACH_MM = 5.0
#: The camera's shift since calibration (mm of the table) is applied when phase correlation
#: finds one this clear, at least this large and at most this large. A weak response now and
#: then moves the table the wrong way, but 0.1 instead of 0.05 lost 5 of 2,240 correct reads.
SHIFT_RESPONSE = 0.05
SHIFT_MIN_MM = 0.5
SHIFT_MAX_MM = 12.0
#: Closings in mm: one that gives back print found between card pixels, and one that joins
#: paper with "not felt" (a court card's picture).
BRIDGE_MM = 9.0
JOIN_MM = 5.0
#: Cells (mm) of the coarse grid the felt's level is estimated on, of the grid the shift is
#: measured on, and the spacing of the samples of bare felt and of paper level.
_COARSE_MM = 8
_PHASE_MM = 2
_SAMPLE_MM = 4.0
#: How far the fourth side of a rectangle fitted in a slot may step *down* (0..255): glare on a
#: card or its picture reaching the edge can leave one side without a step, and the fit
#: then lies a few mm inside the card there, which the reader's alignment puts right (a
#: fitted card is reported only if it is read).
FOURTH_SIDE_DROP = 25.0
#: A pixel of a view coarser than the calibration's is print when more than this share of the
#: calibration's print mask covers it.
PRINT_SHARE = 0.5
#: A finer search near a card (CardFinder.find_near) looks at a square window this wide (mm)
#: around its centre: the card at any angle, and room around it.
WINDOW_MM = 170.0
#: Paper looked for off the slots (CardFinder._loose_paper): at most this many cards a frame,
#: where this share of a card-sized window is paper, this far (mm) from every slot and card found.
LOOSE_CARDS = 2
LOOSE_SHARE = 0.45
LOOSE_CLEAR_MM = 6.0
#: ... and whose whiteness changes this fast on average (Sobel, 0..255 a px of the finder's
#: view): measured on the tuned-on svg-cards scenes, the windows of the two cards it is for
#: 117 and 128, pools of glare on the felt at most 65. At most LOOSE_TRIES windows are judged.
LOOSE_EDGES = 75.0
LOOSE_TRIES = 4
#: Outlines whose centres are this close (mm) are the same card.
SAME_CARD_MM = 15.0
_RING_MARGIN = 10
_RING_SIZE = (40, 56)


def _rings() -> tuple[np.ndarray, np.ndarray]:
    m, (w, h) = _RING_MARGIN, _RING_SIZE
    yy, xx = np.mgrid[0 : h + 2 * m, 0 : w + 2 * m]
    # signed distance to the card outline, positive inside
    d = np.minimum.reduce([xx - m, (m + w) - xx, yy - m, (m + h) - yy])
    return (d >= 1) & (d <= 4), (d <= -3) & (d >= -8)


_INNER_RING, _OUTER_RING = _rings()
#: Outlines kept per card for second tries at a doubtful read.
MAX_OUTLINES = 3

#: A card outline's shape on the table (:meth:`CardFinder.card_shaped`), besides its size: long
#: side over short (poker cards 1.40, bridge cards 1.56; KDE's standard deck is drawn at 1.36),
#: how unequal opposite sides may be and how far from square a corner (perspective left over
#: by the plane's calibration).
CARD_ASPECT = (1.2, 1.8)
SIDES_EQUAL = 0.08
RIGHT_ANGLE_DEG = 6.0
#: An outline this much (mm) longer or wider than a card may hold the card in one corner.
OVERSIZE_MM = 4.0


@dataclass(frozen=True)
class _EmptyTable:
    """What calibration saw on the empty table, lined up with one frame: the print mask and
    its complement, and the empty table's brightest and darkest value around each pixel
    (``hi``, ``lo``; None when only the print mask was kept)."""

    printed: np.ndarray
    not_printed: np.ndarray
    hi: np.ndarray | None = None
    lo: np.ndarray | None = None

    @functools.cached_property
    def printed_at(self) -> np.ndarray:
        """The flat indexes of the printed pixels (a few per cent of the table), in order
        (``np.flatnonzero``, by OpenCV's ``findNonZero``: a tenth of the cost)."""
        xy = cv2.findNonZero(self.printed)
        if xy is None:
            return np.zeros(0, np.intp)
        xy = np.asarray(xy).reshape(-1, 2)
        at: np.ndarray = xy[:, 1].astype(np.intp) * self.printed.shape[1] + xy[:, 0]
        return at


def _not_bare_print(ref: _EmptyTable | None, covered: np.ndarray | None) -> np.ndarray | None:
    """Where a card may lie as far as the table's print says: everything but the print, and
    the printed pixels a card covers (``covered``); None when the print is not known."""
    if ref is None:
        return None
    return ref.not_printed if covered is None else cv2.bitwise_or(ref.not_printed, covered)


@dataclass(frozen=True)
class Surroundings:
    """What a search of the whole table measured in one frame that a finer search of a part of
    it (:meth:`CardFinder.find_near`) takes as it is: the camera's shift since calibration
    (mm), the felt's whiteness and colour on the coarse grid, and the exposure's gain over the
    empty table per channel and on the coarse grid (None without the empty table)."""

    shift_mm: tuple[float, float]
    felt_white: np.ndarray
    felt: np.ndarray
    scale: tuple[float, float, float, float] | None
    gain: np.ndarray | None


@dataclass(frozen=True)
class FoundCard:
    """One card-shaped object: its image outlines (TL, TR, BR, BL; best first, one per mask
    that cut it out) and whether it was only *fitted* into a slot (pass 3), in which case
    the recogniser reports it only if it reads it: a rectangle fitted to the steps of a
    printed outline must not become a phantom no-read."""

    outlines: list[np.ndarray]
    fitted: bool = False


class CardFinder:
    """Finds card-shaped objects on the table of one calibrated camera (no reading).

    Works on the table itself, not on the picture: the frame is first warped
    to a top-down view of the table at :data:`FIND_PX_PER_MM`, where every
    card is the same size whatever the camera's tilt, and where the sizes the
    table knows (a card, a printed line, a chip) are fixed numbers of pixels.
    """

    def __init__(self, plane: TablePlane, layout: Layout, size_tolerance: float = 0.15,
                 printed: np.ndarray | None = None, empty_table: np.ndarray | None = None,
                 px_per_mm: float = FIND_PX_PER_MM):
        self.layout = layout
        self.size_tolerance = size_tolerance
        self._to_table = plane.image_to_table
        self._to_image = plane.table_to_image
        w, h = plane.image_size
        self._mask_size = (w, h)
        s = self._px_per_mm = px_per_mm
        self._scale = np.diag([s, s, 1.0])
        self._top_down = self._scale @ self._to_table
        self._from_top_down = self._to_image @ np.diag([1 / s, 1 / s, 1.0])
        self._size = (round(layout.width_mm * s), round(layout.height_mm * s))
        c = CALIBRATION_PX_PER_MM
        self._calibration_size = (round(layout.width_mm * c), round(layout.height_mm * c))
        self._coarse = (max(1, round(layout.width_mm) // _COARSE_MM), max(1, round(layout.height_mm) // _COARSE_MM))
        self._stride = max(1, round(_SAMPLE_MM * s))
        # whether the view is warped from the frame shrunk to half (see _view)
        least, most = _frame_px_per_mm(plane.table_to_image, (layout.width_mm, layout.height_mm))
        low, high = HALF_FRAME_RANGE
        self._from_half_frame = (2 * s == CALIBRATION_PX_PER_MM
                                 and low <= least / (2 * s) and most / (2 * s) <= high)
        # a half frame's pixel (i, j) averages the frame's 2i..2i+1, 2j..2j+1: its centre is (2i + 0.5,
        # 2j + 0.5); and a view pixel shrunk from the fine view averages c/s fine pixels: its centre
        # lies (1 - s/c)/2 of a view pixel on from this finder's own grid (_top_down), and so it does here
        on = 0.5 * (1.0 - s / CALIBRATION_PX_PER_MM)
        self._half_frame_top_down = (np.array([[1.0, 0.0, -on], [0.0, 1.0, -on], [0.0, 0.0, 1.0]])
                                     @ self._top_down @ np.array([[2.0, 0.0, 0.5], [0.0, 2.0, 0.5], [0.0, 0.0, 1.0]]))
        # where the camera sees the table at all, less a strip along the frame's edge
        seen = cv2.warpPerspective(np.full((h, w), 255, np.uint8), self._top_down, self._size,
                                   flags=cv2.INTER_NEAREST, borderValue=0)
        self._seen = cv2.erode(seen, np.ones((3, 3), np.uint8))
        search = self._seen.copy()
        # the corner markers and their white quiet zones are not cards: leave them out
        self._marker_zones = _marker_zones(layout)
        for zone in self._marker_zones:
            (x0, y0), (x1, y1) = zone[0] * s, zone[2] * s
            cv2.rectangle(search, (int(x0), int(y0)), (int(x1), int(y1)), 0, -1)
        self._search = search
        self._printed: np.ndarray | None = None
        self._not_printed: np.ndarray | None = None
        self._fine_printed: np.ndarray | None = None  # the print at the calibration's resolution
        self._fine_hi: np.ndarray | None = None  # and the empty table's brightest around each pixel
        if printed is not None and printed.shape[:2] == self._calibration_size[::-1]:
            self._fine_printed = printed
            # a working pixel is print if at least half of it is: the mask was grown by a pixel
            # at calibration, and "any of it" would widen a slot's double line into a band that
            # cuts the edge of a card lying over it
            printed = self._from_calibration(printed)
            printed = cv2.threshold(printed, PRINT_SHARE * 255, 255, cv2.THRESH_BINARY)[1]
        if printed is not None and printed.shape[:2] == self._size[::-1]:
            self._printed = printed
            self._not_printed = cv2.bitwise_not(printed)
        self._bare: np.ndarray | None = None
        # the bare felt's sample pixels as a mask of the whole view, and how many they are
        self._bare_mask = np.zeros(0, np.uint8)
        self._bare_count = 0
        self._reference: _EmptyTable | None = None
        # the empty table's whiteness, top-down at the calibration's resolution (the felt's grain)
        self._empty_white: np.ndarray | None = None
        # and its colour, smoothed by COVER_BLUR_MM (what an empty slot still looks like)
        self._empty_colour: np.ndarray | None = None
        self._shift = np.eye(3)  # the camera's shift since calibration, in the last frame found in (px)
        #: what the last search of the whole table measured, for a finer search near a card
        self.surroundings: Surroundings | None = None
        if self._printed is not None and self._not_printed is not None:
            self._reference = _EmptyTable(self._printed, self._not_printed)
        if empty_table is not None:
            empty_table = as_bgr(empty_table)
            if self._reference is None or empty_table.shape[:2] != self._calibration_size[::-1]:
                log.warning(
                    "the empty table (%s) is not used: it must come with the print mask, both %dx%d "
                    "(run `calibrate table` again)",
                    "x".join(map(str, empty_table.shape[1::-1])),
                    self._calibration_size[0],
                    self._calibration_size[1],
                )
            else:
                self._learn_empty_table(empty_table, self._reference)
        bridge = max(3, round(BRIDGE_MM * s) | 1)
        self._bridge_kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (bridge, bridge))
        body = max(3, round(BODY_MM * s) | 1)
        self._body_kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (body, body))
        card_w, card_h = layout.card_mm
        self._card_px = (card_w * s, card_h * s)
        # where a loose card's centre may lie: a card-sized window round it wholly in the search
        self._loose_window = (max(3, round(card_w * s)), max(3, round(card_h * s)))
        self._loose_centres = cv2.erode(search, np.ones(self._loose_window[::-1], np.uint8))
        self._min_px_area = 0.3 * card_w * card_h * s * s
        k = max(3, round(LINE_MM * s) | 1)
        self._open_kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
        self._close_kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3))
        edge = max(2, round(EDGE_MM * s))
        self._edge_kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (edge, edge))
        self._edge_cut_px = EDGE_CUT_PX * (edge - 1) / 2
        join = max(3, round(JOIN_MM * s) | 1)
        self._join_kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (join, join))

    def _from_calibration(self, image: np.ndarray) -> np.ndarray:
        """A top-down map kept at :data:`CALIBRATION_PX_PER_MM`, at this finder's resolution."""
        if image.shape[:2] == self._size[::-1]:
            return image
        return np.asarray(cv2.resize(image, self._size, interpolation=cv2.INTER_AREA))

    def _learn_empty_table(self, empty_table: np.ndarray, ref: _EmptyTable) -> None:
        """What every frame is compared with (see :meth:`_against_empty`, :meth:`_lined_up`)."""
        empty_table = np.ascontiguousarray(empty_table, np.uint8)
        self._empty_white = darkest_channel(empty_table)
        c = CALIBRATION_PX_PER_MM
        fine_reach = max(3, round(COVER_REACH_MM * c) | 1)
        fine_empty = cv2.GaussianBlur(empty_table, (0, 0), COVER_BLUR_MM * c)
        self._fine_hi = cv2.dilate(fine_empty, np.ones((fine_reach, fine_reach), np.uint8))
        self._empty_colour = fine_empty
        empty = cv2.GaussianBlur(self._from_calibration(empty_table), (0, 0), COVER_BLUR_MM * self._px_per_mm)
        r = max(3, round(COVER_REACH_MM * self._px_per_mm) | 1)
        reach = np.ones((r, r), np.uint8)
        self._reference = _EmptyTable(ref.printed, ref.not_printed, cv2.dilate(empty, reach), cv2.erode(empty, reach))
        self._empty_small = np.maximum(
            cv2.resize(fine_empty, self._coarse, interpolation=cv2.INTER_AREA).astype(np.float32), 4.0
        )
        k = self._stride
        bare = cv2.bitwise_and(ref.not_printed, self._search)[::k, ::k] > 0
        if np.count_nonzero(bare) >= 50:
            self._bare = bare
            # the same pixels as a mask of the whole view: the frame's felt is measured by
            # histograms there
            self._bare_mask = np.zeros(self._size[::-1], np.uint8)
            self._bare_mask[::k, ::k][bare] = 255
            self._bare_count = int(np.count_nonzero(bare))
            self._empty_felt = np.maximum(np.median(empty[::k, ::k][bare], axis=0), 4.0)
        width, height = round(self.layout.width_mm), round(self.layout.height_mm)
        self._half = (max(8, width // _PHASE_MM), max(8, height // _PHASE_MM))
        self._empty_half = cv2.resize(darkest_channel(fine_empty), self._half, interpolation=cv2.INTER_AREA).astype(
            np.float32
        )
        self._window = cv2.createHanningWindow(self._half, cv2.CV_32F)

    def to_table(self, point: np.ndarray) -> tuple[float, float]:
        p = cv2.perspectiveTransform(np.asarray(point, np.float64).reshape(1, 1, 2), self._to_table).reshape(2)
        return (float(p[0]), float(p[1]))

    def slot_outline(self, slot: Slot, turned: float = 0.0) -> np.ndarray:
        """The image outline (portrait order) of a card of the layout's size lying in the middle
        of ``slot``, square to it or ``turned`` degrees: where a dealt card is, give or take
        its placing."""
        cw, ch = self.layout.card_mm
        base = 90.0 if slot.w > slot.h else 0.0
        box = cv2.boxPoints((slot.centre, (cw, ch), base + turned)).astype(np.float64)
        img = cv2.perspectiveTransform(box.reshape(-1, 1, 2), self._to_image).reshape(-1, 2)
        return order_portrait(img)

    def cards_within(self, corners: np.ndarray, slack_mm: float = OVERSIZE_MM) -> list[np.ndarray]:
        """Image outlines of a card of the layout's size in each corner of an outline that is
        more than ``slack_mm`` longer or wider than a card (a card joined to the printed line
        beside it, or to a glare spot, on one or two sides: the card lies in one of its
        corners), square to it; none for an outline of a card's size or smaller."""
        mm = cv2.perspectiveTransform(np.asarray(corners, np.float64).reshape(-1, 1, 2), self._to_table).reshape(-1, 2)
        rect = cv2.minAreaRect(mm.astype(np.float32))
        box = cv2.boxPoints(rect).astype(np.float64)
        u, v = box[1] - box[0], box[2] - box[1]
        lu, lv = float(np.hypot(*u)), float(np.hypot(*v))
        if min(lu, lv) <= 1e-6:
            return []
        u, v = u / lu, v / lv
        cw, ch = self.layout.card_mm
        a, b = (ch, cw) if lu >= lv else (cw, ch)  # the card's sides along u and v
        if lu <= a + slack_mm and lv <= b + slack_mm:
            return []
        centre = box.mean(axis=0)
        out = []
        for p in box:
            su = 1.0 if np.dot(centre - p, u) >= 0 else -1.0
            sv = 1.0 if np.dot(centre - p, v) >= 0 else -1.0
            at = p + su * min(a, lu) / 2 * u + sv * min(b, lv) / 2 * v
            card = np.array([at + (x * a / 2) * u + (y * b / 2) * v
                             for x, y in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
            img = cv2.perspectiveTransform(card.reshape(-1, 1, 2), self._to_image).reshape(-1, 2)
            out.append(order_portrait(img))
        return out

    def empty_in_patch(self, to_patch: np.ndarray, size: tuple[int, int]) -> np.ndarray | None:
        """The empty table's whiteness (float32) in this frame's light (times the exposure's
        gain over the bare felt, clipped as the camera clips) as a patch of the frame
        (``to_patch``: frame to patch homography, ``size``: w, h), moved by the camera's shift,
        both as found by the last :meth:`find`; None when calibration kept no empty table.
        For :func:`~firmware_interfaces.camera.refine.refine_outline` (``empty=``): the patch is
        at :data:`~firmware_interfaces.camera.refine.REFINE_PX_PER_MM`."""
        if self._empty_white is None:
            return None
        c = CALIBRATION_PX_PER_MM
        # warped at about the empty table's own resolution, then grown to the patch's: a ninth
        # of the pixels warped, and the same picture (it holds nothing finer)
        w, h = size
        k = max(1, int(REFINE_PX_PER_MM / c))
        small = (max(1, -(-w // k)), max(1, -(-h // k)))
        # (cv2.resize takes patch pixel x from small pixel (x + 0.5) / k - 0.5)
        half = (k - 1) / (2 * k)
        to_small = np.array([[1 / k, 0, -half], [0, 1 / k, -half], [0, 0, 1.0]]) @ to_patch @ self._empty_to_frame()
        white = cv2.warpPerspective(self._empty_white, to_small, small, flags=cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_REPLICATE)
        scale = self.surroundings.scale if self.surroundings is not None else None
        if scale is not None:
            # whiteness is the least channel: white print's is its least gain's (clipped as the camera clips)
            white = cv2.convertScaleAbs(white, alpha=min(scale[:3]))
        if k > 1:
            white = cv2.resize(white, (small[0] * k, small[1] * k), interpolation=cv2.INTER_LINEAR)[:h, :w]
        return np.asarray(white, np.float32)

    def card_shaped(self, corners: np.ndarray) -> bool:
        """Whether an image outline (4 corners in order) is a card's shape on the table: a
        rectangle in mm (opposite sides within :data:`SIDES_EQUAL`, corners within
        :data:`RIGHT_ANGLE_DEG` of square) of the layout's card size within the size tolerance
        the finder's own outlines keep, long side over short within :data:`CARD_ASPECT`."""
        mm = cv2.perspectiveTransform(np.asarray(corners, np.float64).reshape(-1, 1, 2), self._to_table).reshape(-1, 2)
        sides = mm[[1, 2, 3, 0]] - mm
        lengths = np.hypot(sides[:, 0], sides[:, 1])
        if lengths.min() <= 1e-6:
            return False
        for a, b in ((0, 2), (1, 3)):
            if abs(lengths[a] - lengths[b]) > SIDES_EQUAL * max(lengths[a], lengths[b]):
                return False
        cosines = np.einsum("ij,ij->i", sides, sides[[1, 2, 3, 0]]) / (lengths * lengths[[1, 2, 3, 0]])
        if np.abs(cosines).max() > np.sin(np.deg2rad(RIGHT_ANGLE_DEG)):
            return False
        short, long_ = sorted(((lengths[0] + lengths[2]) / 2, (lengths[1] + lengths[3]) / 2))
        return self._card_sized(short, long_, self.layout.card_mm)

    def _card_sized(self, short: float, long_: float, card: tuple[float, float]) -> bool:
        """Whether a rectangle's sides are a card's (``card``: its short and long side, in the
        same unit): short side -20/+15 %, long side ±15 % (the size tolerance) and
        :data:`CARD_ASPECT`."""
        cw, ch = card
        tol = self.size_tolerance
        return bool((1 - 1.3 * tol) * cw <= short <= (1 + tol) * cw and (1 - tol) * ch <= long_ <= (1 + tol) * ch
                    and CARD_ASPECT[0] <= long_ / max(short, 1e-6) <= CARD_ASPECT[1])

    def _empty_to_frame(self) -> np.ndarray:
        """The homography from the empty table kept by calibration (top-down at
        :data:`CALIBRATION_PX_PER_MM`) to this frame, moved by the camera's shift found by the
        last :meth:`find` (in px of this finder's view, scaled to the calibration's)."""
        c = CALIBRATION_PX_PER_MM
        shift = self._shift.copy()
        shift[:2, 2] *= c / self._px_per_mm
        return np.asarray(self._to_image @ np.diag([1 / c, 1 / c, 1.0]) @ shift)

    def _empty_in_outline(self, empty: np.ndarray, corners: np.ndarray, scale: float,
                          size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """The homography from the frame to a patch of ``size`` covering the image outline
        ``corners`` scaled by ``scale`` about its centre, and ``empty`` (a top-down map of the
        empty table kept by calibration) warped onto that patch, as lined up by the last search."""
        w, h = size
        patch = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        c = np.asarray(corners, np.float64)
        centre = c.mean(axis=0)
        scaled = centre + (c - centre) * scale
        to_patch = cv2.getPerspectiveTransform(scaled.astype(np.float32), patch)
        before = cv2.warpPerspective(empty, to_patch @ self._empty_to_frame(), size,
                                     flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        return to_patch, before

    def felt_showing(self, frame: np.ndarray, corners: np.ndarray) -> float:
        """How much of the empty felt's own texture still shows inside ``corners`` (image
        outline) in ``frame``: the correlation (-1..1) of the fine grain of the frame and of
        the empty table there, as lined up by the last :meth:`find`. Light and glare scale
        the felt but keep its grain; a card, face up or down, hides it (about 0). 0 when
        calibration did not keep the empty table."""
        if self._empty_white is None:
            return 0.0
        # clear of the card's edge and blur
        to_patch, before = self._empty_in_outline(self._empty_white, corners, 1.0 - 2 * GRAIN_INSET, _GRAIN_PATCH)
        now = _warp_whiteness(as_bgr(frame), to_patch, _GRAIN_PATCH)
        a, b = _grain(now), _grain(before)
        norm = float(np.linalg.norm(a) * np.linalg.norm(b))
        return float(a @ b) / norm if norm > 1e-6 else 0.0

    def felt_unchanged(self, frame: np.ndarray, corners: np.ndarray) -> float:
        """The share (0..1) of the inside of ``corners`` (image outline) in ``frame`` whose
        colour is still the empty table's there, in this frame's light, as lined up by the last
        :meth:`find` or :meth:`find_near`: within :data:`COVER_STEP` in every channel of the empty
        table times the light's gain around the outline (per channel, the median ratio of the
        frame to the empty table over a ring :data:`UNCHANGED_RING` times the outline's size:
        felt and print alike scale by it; a card beside covers about 30 % of it, two close
        neighbours over half, and the paper's gain then keeps an empty slot a no-read). An
        empty slot's felt, blurred past showing its grain (:meth:`felt_showing`), is about 1; a
        card, face up or down, about 0. 0 when calibration did not keep the empty table."""
        if self._empty_colour is None:
            return 0.0
        to_patch, before = self._empty_in_outline(self._empty_colour, corners, UNCHANGED_RING[1], _UNCHANGED_PATCH)
        now = cv2.GaussianBlur(_warp_colour(as_bgr(frame), to_patch, _UNCHANGED_PATCH), (0, 0), _UNCHANGED_BLUR)
        now_f, before_f = now.astype(np.float32), before.astype(np.float32)
        ring, inside = _unchanged_masks()
        gain = np.median(now_f[ring] / np.maximum(before_f[ring], 4.0), axis=0)
        off_by = np.abs(now_f[inside] - np.clip(before_f[inside] * gain, 0, 255)).max(axis=1)
        return float(np.count_nonzero(off_by <= COVER_STEP)) / float(off_by.size)

    # -- finding -------------------------------------------------------------------------
    def find_cards(self, frame: np.ndarray) -> list[np.ndarray]:
        """Image corners (4, 2) of every card-shaped object on the table, portrait-ordered."""
        return [group[0] for group in self.find_card_outlines(frame)]

    def printed_structure(self, empty: np.ndarray) -> np.ndarray:
        """What is printed on the felt (slot outlines, words, logos, markers), from a frame of
        the empty table: a top-down mask for :class:`CardFinder` (``printed=``), stored by
        ``calibrate table`` as ``printed.png``. Print is what stands out of the felt's own
        texture (by :data:`PRINT_STEP` or three times the texture's spread) in whiteness
        or colour, in pieces of at least :data:`PRINT_MIN_PX` pixels, less what is as thick as
        a card's body (:data:`BODY_MM`: a card left on the table is not print); grown by a
        pixel for the camera's own jitter."""
        table = self.top_down(empty)
        tw, th = self._size
        small = cv2.resize(table, (max(1, tw // 4), max(1, th // 4)), interpolation=cv2.INTER_AREA)
        felt = cv2.resize(cv2.medianBlur(small, 9), (tw, th), interpolation=cv2.INTER_LINEAR)
        diff = cv2.absdiff(table, felt).astype(np.int16)
        white = darkest_channel(table).astype(np.int16)
        felt_white = darkest_channel(felt).astype(np.int16)
        step = np.maximum(white - felt_white, diff.max(axis=2))
        seen = self._seen > 0
        spread = float(np.median(np.abs(step[seen]))) * 1.4826 if seen.any() else 0.0
        printed = ((step > max(PRINT_STEP, 3 * spread)) & seen).astype(np.uint8) * 255
        n, labels, stats, _ = cv2.connectedComponentsWithStats(printed, connectivity=8)
        keep = np.zeros(n, np.uint8)
        keep[1:] = (stats[1:, cv2.CC_STAT_AREA] >= PRINT_MIN_PX) * 255
        printed = keep[labels]
        bodies = self._card_bodies(table, white)
        printed = cv2.bitwise_and(printed, cv2.bitwise_not(cv2.dilate(bodies, self._bridge_kernel)))
        return cv2.dilate(printed, np.ones((3, 3), np.uint8))

    def _card_bodies(self, table: np.ndarray, white: np.ndarray) -> np.ndarray:
        """Where a card lies on the top-down ``table`` (a card left on the table at
        calibration): paper as wide as a card's body (against the felt's darkest, opened by
        :data:`BODY_MM`), or colour far from the felt, filled where mostly solid."""
        tw, th = self._size
        small_white = cv2.resize(
            white.astype(np.uint8), self._coarse, interpolation=cv2.INTER_AREA
        )
        darkest = cv2.blur(cv2.erode(small_white, np.ones((11, 11), np.uint8)), (5, 5))
        paper = cv2.subtract(white.astype(np.uint8), cv2.resize(darkest, (tw, th), interpolation=cv2.INTER_LINEAR))
        solid = cv2.threshold(paper, PAPER_STEPS[2], 255, cv2.THRESH_BINARY)[1]
        wide_felt = cv2.resize(
            cv2.medianBlur(cv2.resize(table, self._coarse, interpolation=cv2.INTER_AREA), 15),
            (tw, th),
        )
        colour = cv2.absdiff(table, wide_felt).max(axis=2)
        solid = cv2.bitwise_or(solid, cv2.threshold(colour, FELT_DISTANCES[1], 255, cv2.THRESH_BINARY)[1])
        # fill a court card's picture inside its border, but not the felt inside a printed
        # slot outline: a filled piece counts only if it was mostly solid to begin with
        filled = _fill_holes(solid)
        n, labels, stats, _ = cv2.connectedComponentsWithStats(filled, connectivity=8)
        solid_area = np.bincount(labels.ravel(), weights=(solid > 0).ravel(), minlength=n)
        keep = np.zeros(n, np.uint8)
        keep[1:] = (solid_area[1:] >= 0.5 * stats[1:, cv2.CC_STAT_AREA]) * 255
        bodies = cv2.morphologyEx(keep[labels], cv2.MORPH_OPEN, self._body_kernel)
        return bodies

    def top_down(self, frame: np.ndarray) -> np.ndarray:
        """The table seen from straight above, at this finder's pixels per mm (see :meth:`_view`)."""
        return self._view(frame)[0]

    def _view(self, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The table seen from straight above at this finder's pixels per mm, and its
        whiteness (the darkest channel). When this finder's view is coarser than
        :data:`CALIBRATION_PX_PER_MM`, both are warped at that and shrunk by averaging (a warp
        straight to the coarse view would pick one frame pixel in four and keep its noise),
        the whiteness taken before the shrinking, as the empty table's own is. Or, where this
        view has half the calibration's resolution and the frame shrunk to half by averaging
        has about a pixel for each of the view's everywhere on the table
        (:data:`HALF_FRAME_RANGE`: a 720p camera over a 900 mm table), the view is warped from
        that half frame, on the same grid (a third of the cost: the shrinking is a fast
        whole-pixel average, the warp a quarter of the fine one's pixels); the whiteness is then
        the darkest channel of the averaged colour, a level or two higher than the average of
        the darkest channels where the channels differ (session 63)."""
        if self._from_half_frame:
            # (an odd last row or column left out: the halving must be an exact 2 x 2 average)
            even = frame[: frame.shape[0] & ~1, : frame.shape[1] & ~1]
            half = cv2.resize(even, (even.shape[1] // 2, even.shape[0] // 2), interpolation=cv2.INTER_AREA)
            table = cv2.warpPerspective(half, self._half_frame_top_down, self._size, flags=cv2.INTER_LINEAR,
                                        borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
            return table, darkest_channel(table)
        c = CALIBRATION_PX_PER_MM
        fine = self._px_per_mm < c
        table = cv2.warpPerspective(
            frame,
            np.diag([c, c, 1.0]) @ self._to_table if fine else self._top_down,
            self._calibration_size if fine else self._size,
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(0, 0, 0),
        )
        white = darkest_channel(table)
        if fine:
            return self._from_calibration(table), self._from_calibration(white)
        return table, white

    def find_card_outlines(self, frame: np.ndarray) -> list[list[np.ndarray]]:
        """Like :meth:`find_cards`, but every outline found for each card (one per mask
        that cut it out), best first: the reader may try the others on a doubtful read."""
        return [card.outlines for card in self.find(frame)]

    def find(self, frame: np.ndarray) -> list[FoundCard]:
        """Every card-shaped object on the table in ``frame`` (see :class:`FoundCard`)."""
        if frame.shape[1] != self._mask_size[0] or frame.shape[0] != self._mask_size[1]:
            raise ValueError(
                f"frame is {frame.shape[1]}x{frame.shape[0]} but the calibration is for "
                f"{self._mask_size[0]}x{self._mask_size[1]}"
            )
        table, white = self._view(as_bgr(frame))
        reference = self._lined_up(white)
        against = self._against_empty(table, reference)
        covered, change, scale, gain = against if against is not None else (None, None, None, None)
        # a card's border steps up from what lay there before it: against the empty table when
        # it is known (a white line beside a card is then no paper), else against the felt
        border = white if change is None else change
        felt_white, felt = self._felt_grids(table, white)
        tw, th = self._size
        not_bare_print = _not_bare_print(reference, covered)
        masks = self._mask_contours(
            table, white, reference, not_bare_print, self._search,
            cv2.resize(felt_white, (tw, th), interpolation=cv2.INTER_LINEAR),
            cv2.resize(felt, (tw, th), interpolation=cv2.INTER_LINEAR),
        )
        found = self._cards_in(masks, white, border, None if reference is None else reference.printed)
        s = self._px_per_mm
        self.surroundings = Surroundings((self._shift[0, 2] / s, self._shift[1, 2] / s), felt_white, felt, scale, gain)
        level = self._paper_level(border)
        # bare print is no paper: an empty slot's white lines (double ones fill 30-60 % of a
        # card's area) must not cost a fit each; print a card covers still counts. Only where
        # the empty table is known: without it no print is known to be covered, and a court
        # card over its lines kept barely the paper it needs (1.1 times, against 1.5 or more)
        paper_may_lie = not_bare_print if covered is not None else None
        fitted_centres: list[tuple[float, float]] = []
        for slot in self.layout.slots:
            if any(_near_slot(slot, centre) for _, centre in found):
                continue
            fitted = self._fit_in_slot(border, slot, level, frame, gain, paper_may_lie)
            if fitted is not None:
                fit, box, centre = fitted
                found.append(([(fit, box)], centre))
                fitted_centres.append(centre)
        for centre in self._loose_paper(border, level, [box for group, _ in found for _, box in group[:1]]):
            fitted = self._fit_rect(frame, gain, centre, 0.0)
            # a card the frame's edge cuts is no card to read (its fit runs out of sight)
            if fitted is not None and self._in_sight(fitted[1] * s):
                fit, box_mm, centre = fitted
                found.append(([(fit, box_mm * s)], centre))
                fitted_centres.append(centre)
        out = []
        for group, centre in found:
            group.sort(key=lambda fb: -fb[0])
            out.append(
                FoundCard([self._image_corners(box) for _, box in group[:MAX_OUTLINES]], centre in fitted_centres)
            )
        return out

    def find_near(self, frame: np.ndarray, centres_mm: list[tuple[float, float]],
                  surroundings: Surroundings) -> list[FoundCard]:
        """The cards the masks cut out (no slot fitting) within about a card's reach of each of
        ``centres_mm``, searched at this finder's resolution in a window of the table around
        each: a second, finer search where another finder's search of the whole table (whose
        ``surroundings`` it takes: the camera's shift, the felt, the exposure) left a card
        unread. A shape that reaches a window's edge goes on outside it and is not judged."""
        s = self._px_per_mm
        tw, th = self._size
        half = round(WINDOW_MM * s / 2)
        # the camera's shift, as the search of the whole table found it (felt_showing lines up by it)
        self._shift = np.eye(3)
        self._shift[:2, 2] = (surroundings.shift_mm[0] * s, surroundings.shift_mm[1] * s)
        out: list[FoundCard] = []
        seen: list[tuple[float, float]] = []
        for cx, cy in centres_mm:
            x0, y0 = max(0, round(cx * s) - half), max(0, round(cy * s) - half)
            x1, y1 = min(tw, round(cx * s) + half), min(th, round(cy * s) + half)
            if x1 - x0 < 8 or y1 - y0 < 8:
                continue
            for card, centre in self._window_cards(frame, (x0, y0, x1, y1), surroundings):
                if not any(np.hypot(centre[0] - a[0], centre[1] - a[1]) < SAME_CARD_MM for a in seen):
                    seen.append(centre)
                    out.append(card)
        return out

    def cards_over_print(self, frame: np.ndarray, centre_mm: tuple[float, float],
                         surroundings: Surroundings | None) -> list[np.ndarray]:
        """Image outlines of the cards the masks cut out within :data:`SAME_CARD_MM` of
        ``centre_mm`` with the table's print kept in, searched as :meth:`find_near` searches (in a
        window around it, in the light and camera shift of ``surroundings``: those a search of
        ``frame`` as a whole found). Where a card lies over its slot's white lines and its paper
        looks like them, the print it covers is not seen as covered, the masks lose the card where
        it lies over the lines, and its outline follows the slot's inside, not the card's (a
        held-out 2D turned 12 degrees across its slot's lines, session 60). A card's outlines best
        border first, card after card; none for a frame of another size."""
        if surroundings is None or frame.shape[1] != self._mask_size[0] or frame.shape[0] != self._mask_size[1]:
            return []
        s = self._px_per_mm
        tw, th = self._size
        half = round(WINDOW_MM * s / 2)
        cx, cy = centre_mm
        x0, y0 = max(0, round(cx * s) - half), max(0, round(cy * s) - half)
        x1, y1 = min(tw, round(cx * s) + half), min(th, round(cy * s) + half)
        if x1 - x0 < 8 or y1 - y0 < 8:
            return []
        out = []
        for card, centre in self._window_cards(frame, (x0, y0, x1, y1), surroundings, print_kept=True):
            if np.hypot(centre[0] - cx, centre[1] - cy) < SAME_CARD_MM:
                out += card.outlines
        return out

    def _window_cards(
        self, frame: np.ndarray, box: tuple[int, int, int, int], surroundings: Surroundings, print_kept: bool = False,
    ) -> list[tuple[FoundCard, tuple[float, float]]]:
        """:meth:`find_near` in one window (``box``: x0, y0, x1, y1 in px of this finder's view);
        ``print_kept``: the masks keep the table's print in (:meth:`cards_over_print`)."""
        x0, y0, x1, y1 = box
        size = (x1 - x0, y1 - y0)
        s = self._px_per_mm
        to_window = np.array([[1.0, 0.0, -x0], [0.0, 1.0, -y0], [0.0, 0.0, 1.0]])
        table = cv2.warpPerspective(as_bgr(frame), to_window @ self._top_down, size, flags=cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        white = darkest_channel(table)
        ref = self._reference
        printed: np.ndarray | None = None
        covered: np.ndarray | None = None
        border = white
        window_ref: _EmptyTable | None = None
        if ref is not None:
            dx, dy = surroundings.shift_mm[0] * s, surroundings.shift_mm[1] * s
            moved = np.array([[1.0, 0.0, dx - x0], [0.0, 1.0, dy - y0]])

            def crop(a: np.ndarray, flags: int) -> np.ndarray:
                return cv2.warpAffine(a, moved, size, flags=flags, borderMode=cv2.BORDER_REPLICATE)

            printed = crop(ref.printed, cv2.INTER_NEAREST)
            window_ref = _EmptyTable(printed, cv2.bitwise_not(printed))
            if ref.hi is not None and ref.lo is not None and surroundings.scale is not None \
                    and surroundings.gain is not None:
                now = cv2.GaussianBlur(table, (0, 0), COVER_BLUR_MM * s)
                hi, lo = crop(ref.hi, cv2.INTER_LINEAR), crop(ref.lo, cv2.INTER_LINEAR)
                # times the exposure's gain through a lookup table, as _against_empty does it
                lut = cv2.multiply(_ALL_LEVELS, surroundings.scale)
                far = brightest_channel(cv2.max(cv2.subtract(now, cv2.LUT(hi, lut)),
                                                cv2.subtract(cv2.LUT(lo, lut), now)))
                covered = cv2.bitwise_and(cv2.threshold(far, COVER_STEP, 255, cv2.THRESH_BINARY)[1], printed)
                local_gain = self._grid_in(surroundings.gain, x0, y0, size)
                border = brightest_channel(cv2.subtract(now, cv2.multiply(hi, local_gain, dtype=cv2.CV_8U)))
        masks = self._mask_contours(
            table, white, None if print_kept else window_ref,
            None if print_kept else _not_bare_print(window_ref, covered), self._search[y0:y1, x0:x1],
            self._grid_in(surroundings.felt_white, x0, y0, size), self._grid_in(surroundings.felt, x0, y0, size),
        )
        inside = [
            ([c for c in contours if _clear_of_edge(c, size)], cut) for contours, cut in masks
        ]
        found = self._cards_in(inside, white, border, printed, (x0, y0))
        out = []
        for group, centre in found:
            group.sort(key=lambda fb: -fb[0])
            out.append((FoundCard([self._image_corners(b) for _, b in group[:MAX_OUTLINES]]), centre))
        return out

    def _grid_in(self, grid: np.ndarray, x0: int, y0: int, size: tuple[int, int]) -> np.ndarray:
        """A coarse grid over the whole table (see :meth:`_felt_grids`) at the pixels of a window of
        this finder's view, as ``cv2.resize`` (INTER_LINEAR) to the whole view would give them."""
        ax, ay = grid.shape[1] / self._size[0], grid.shape[0] / self._size[1]
        to_grid = np.array([[ax, 0.0, ax * (x0 + 0.5) - 0.5], [0.0, ay, ay * (y0 + 0.5) - 0.5]])
        return np.asarray(cv2.warpAffine(grid, to_grid, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                         borderMode=cv2.BORDER_REPLICATE))

    def _cards_in(
        self,
        masks: list[tuple[list[np.ndarray], bool]],
        white: np.ndarray,
        border: np.ndarray,
        printed: np.ndarray | None,
        origin: tuple[int, int] = (0, 0),
    ) -> list[tuple[list[tuple[float, np.ndarray]], tuple[float, float]]]:
        """The card-shaped contours of ``masks`` (see :meth:`_mask_contours`; blobs too big for a
        card cut again by :meth:`_split`) whose border stands out of ``border``, grouped by card:
        (outlines with their border contrast, centre in mm). ``white``, ``border`` and ``printed``
        may be a window of the view whose top-left pixel is ``origin``; the outlines are in px of
        the whole view."""
        found: list[tuple[list[tuple[float, np.ndarray]], tuple[float, float]]] = []
        oversized: list[np.ndarray] = []
        shift = np.asarray(origin, np.float64)
        # the masks cut many a card out alike: each contour and box is judged once
        rects: dict[tuple[bytes, float], tuple[float, np.ndarray, tuple[float, float]] | None] = {}
        contrasts: dict[bytes, float] = {}

        def add(c: np.ndarray, grow: float = 0.0) -> bool:
            key = (c.tobytes(), grow)
            if key not in rects:
                rects[key] = self._card_rect(c + origin if origin != (0, 0) else c, grow)
            quad = rects[key]
            if quad is None:
                return False
            _, box, centre = quad
            same = [g for g, fc in found if np.hypot(centre[0] - fc[0], centre[1] - fc[1]) < SAME_CARD_MM]
            if same and len(same[0]) >= 2 * MAX_OUTLINES:
                return True  # outlines enough to choose from
            # a pool of light cut into a card's shape has no border: judge every outline, and
            # rank a card's outlines by how sharp their border is
            box_key = box.tobytes()
            if box_key not in contrasts:
                contrasts[box_key] = self._edge_contrast(border, box - shift, printed)
            fit = contrasts[box_key]
            if fit < PAPER_CONTRAST:
                return False
            if not same:
                found.append(([(fit, box)], centre))
            else:
                same[0].append((fit, box))
            return True

        for contours, cut in masks:
            for c in contours:
                area = cv2.contourArea(c)
                if area < self._min_px_area or add(c, 2 * self._edge_cut_px if cut else 0.0):
                    continue
                if not cut and area > 0.8 * self._card_px[0] * self._card_px[1]:
                    oversized.append(c)
        for c in oversized:
            for part in self._split(white, c):
                add(part)
        return found

    def _image_corners(self, box_px: np.ndarray) -> np.ndarray:
        img = cv2.perspectiveTransform(box_px.reshape(-1, 1, 2), self._from_top_down).reshape(-1, 2)
        return order_portrait(img)

    def _lined_up(self, white: np.ndarray) -> _EmptyTable | None:
        """The empty table moved onto this frame: the camera may have shifted a little since
        calibration (a mount's vibration, a bump; the print would then seem to move under the
        cards). The shift is measured by phase correlation of the whiteness, the print and
        the empty table's lines carrying it, and applied when it is clear and plausible."""
        self._shift = np.eye(3)
        ref = self._reference
        if ref is None or ref.hi is None or ref.lo is None:
            return ref
        # at half resolution: a quarter of the cost, and still to a fraction of a pixel
        half = cv2.resize(white, self._half, interpolation=cv2.INTER_AREA).astype(np.float32)
        (hx, hy), response = cv2.phaseCorrelate(self._empty_half, half, self._window)
        px = _PHASE_MM * self._px_per_mm  # working px per cell of the phase correlation's grid
        dx, dy = px * hx, px * hy
        if not (response >= SHIFT_RESPONSE and SHIFT_MIN_MM <= np.hypot(dx, dy) / self._px_per_mm <= SHIFT_MAX_MM):
            return ref
        m = np.array([[1.0, 0.0, dx], [0.0, 1.0, dy]], np.float64)
        self._shift = np.vstack([m, [0.0, 0.0, 1.0]])

        def moved(a: np.ndarray, flags: int) -> np.ndarray:
            return cv2.warpAffine(a, m, self._size, flags=flags, borderMode=cv2.BORDER_REPLICATE)

        printed = moved(ref.printed, cv2.INTER_NEAREST)
        return _EmptyTable(
            printed, cv2.bitwise_not(printed), moved(ref.hi, cv2.INTER_LINEAR), moved(ref.lo, cv2.INTER_LINEAR)
        )

    def _against_empty(
        self, table: np.ndarray, ref: _EmptyTable | None
    ) -> tuple[np.ndarray, np.ndarray, tuple[float, float, float, float], np.ndarray] | None:
        """The frame compared with the empty table, in the frame's own light: (covered print,
        brightness over the empty table, the exposure's gain per channel (as an OpenCV
        scalar), the gain on the coarse grid), or None when the empty table is not known.

        * *Covered print*: printed pixels whose colour moved from the empty table's (the
          frame's exposure matched per channel over the bare felt): a card lies on them.
        * *Brightness over the empty table* (0..255), per pixel: the empty table scaled by a
          gain per channel and place (the lowest ratio to the empty table over about a card's
          reach: a card only brightens what it lies on).

        Both allow for a line's edges blurring and shifting by a pixel or two between frames:
        a pixel has moved only if it lies outside every expected value within
        :data:`COVER_REACH_MM`. Saturating uint8 arithmetic clips where the camera does."""
        if ref is None or ref.hi is None or ref.lo is None or self._bare is None:
            return None
        now = cv2.GaussianBlur(table, (0, 0), COVER_BLUR_MM * self._px_per_mm)
        felt_now = _masked_medians(now, self._bare_mask, self._bare_count)  # of now[::k, ::k][self._bare]
        gain = felt_now / self._empty_felt
        scale = (float(gain[0]), float(gain[1]), float(gain[2]), 0.0)  # a per-channel scalar
        # only printed pixels can be covered print: the comparison is made on those alone (the
        # same uint8 arithmetic per pixel), the empty table times the gain through a lookup table
        # of every uint8 value times it (made by the same cv2.multiply, so bit for bit the same)
        covered = np.zeros(ref.printed.shape, np.uint8)
        at = ref.printed_at
        if at.size:  # (OpenCV gives nothing back for an empty array)
            lut = cv2.multiply(_ALL_LEVELS, scale)
            now_p = now.reshape(-1, 1, 3)[at]
            hi = cv2.LUT(ref.hi.reshape(-1, 1, 3)[at], lut)
            lo = cv2.LUT(ref.lo.reshape(-1, 1, 3)[at], lut)
            moved = brightest_channel(cv2.max(cv2.subtract(now_p, hi), cv2.subtract(lo, now_p))).reshape(-1)
            covered.reshape(-1)[at] = np.where(moved > COVER_STEP, ref.printed.reshape(-1)[at], 0)
        tw, th = self._size
        sw, sh = self._coarse
        ratio = cv2.resize(now, (sw, sh), interpolation=cv2.INTER_AREA).astype(np.float32) / self._empty_small
        low = cv2.blur(cv2.erode(ratio, np.ones((11, 11), np.uint8)), (5, 5))
        local_hi = cv2.multiply(ref.hi, cv2.resize(low, (tw, th), interpolation=cv2.INTER_LINEAR), dtype=cv2.CV_8U)
        return covered, brightest_channel(cv2.subtract(now, local_hi)), scale, low

    def _mask_contours(
        self, table: np.ndarray, white: np.ndarray, ref: _EmptyTable | None, not_bare_print: np.ndarray | None,
        search: np.ndarray, felt_white: np.ndarray, felt: np.ndarray,
    ) -> list[tuple[list[np.ndarray], bool]]:
        """The outer contours of the masks of :meth:`_raw_masks`, cleaned: printed structure
        taken out (except where a card covers it: ``not_bare_print``, :func:`_not_bare_print`),
        closed, opened so that lines let go of cards (the outer contours of a mask are those of
        the mask filled). ``search`` is where cards are looked for, ``felt_white`` and ``felt``
        the felt's level and colour there."""
        out = []
        raw = self._raw_masks(table, white, felt_white, felt)
        if not_bare_print is not None:
            search = cv2.bitwise_and(search, not_bare_print)
        for m, closing, cut in raw:
            m = cv2.bitwise_and(m, search)
            if ref is not None:
                # what is printed on the felt is not a card: it was taken out above, except
                # where its colour shows a card lying on it; now give back those printed
                # pixels that a closing finds between card pixels (a card over a line the
                # colour of its paper), so a line beside a card lets go of it and one under it
                # does not cut it in two
                bridged = cv2.morphologyEx(m, cv2.MORPH_CLOSE, self._bridge_kernel)
                m = cv2.bitwise_or(m, cv2.bitwise_and(bridged, ref.printed))
            if closing is not None:
                m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, closing)
            m = cv2.morphologyEx(m, cv2.MORPH_OPEN, self._open_kernel)
            contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            out.append((list(contours), cut))
        return out

    def _felt_grids(self, table: np.ndarray, white: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The felt's whiteness and colour (BGR) on the coarse grid over the whole table (cells
        of 8 mm): what card paper is told apart from in :meth:`_raw_masks`."""
        sw, sh = self._coarse
        small_white = cv2.resize(white, (sw, sh), interpolation=cv2.INTER_AREA)
        # the felt's own whiteness: the darkest over about a card's reach, smoothed
        felt_white = cv2.blur(cv2.erode(small_white, np.ones((11, 11), np.uint8)), (5, 5))
        # the felt's colour: averaged over what is not paper (cards would pull a median their way)
        small = np.asarray(cv2.resize(table, (sw, sh), interpolation=cv2.INTER_AREA), np.float32)
        not_paper = (cv2.subtract(small_white, felt_white) < PAPER_STEPS[0]).astype(np.float32)
        weight = cv2.erode(not_paper, np.ones((3, 3), np.uint8)) * (cv2.resize(self._seen, (sw, sh)) > 0)
        sums = cv2.blur(small * weight[:, :, None], (15, 15))
        counts = cv2.blur(weight, (15, 15))[:, :, None]
        wide = cv2.blur(small, (41, 41))
        felt = np.where(counts > 0.05, sums / np.maximum(counts, 1e-6), wide)
        felt = np.nan_to_num(felt, nan=0.0, posinf=255.0, neginf=0.0)  # a broken camera's frame
        return felt_white, np.clip(felt, 0, 255).astype(np.uint8)

    def _raw_masks(
        self, table: np.ndarray, white: np.ndarray, felt_white: np.ndarray, felt: np.ndarray
    ) -> list[tuple[np.ndarray, np.ndarray | None, bool]]:
        """Card-candidate masks of the top-down table (or a window of it), each with the closing
        it needs and whether it is edge-cut: card paper against the felt around it
        (``felt_white``, ``felt``: the felt's whiteness and colour at each pixel) at several
        contrasts (first), joined with "not felt" (a court card's picture is dark, its white
        border thin), and paper cut along every sharp step in whiteness, which frees a card
        from a pool of glare or light that touches it (such a mask's outlines lie
        :data:`EDGE_CUT_PX` inside the card)."""
        step = cv2.subtract(white, felt_white)
        diff = cv2.absdiff(table, felt)
        far = brightest_channel(diff)
        paper = {level: cv2.threshold(step, level, 255, cv2.THRESH_BINARY)[1] for level in PAPER_STEPS}
        not_felt = {level: cv2.threshold(far, level, 255, cv2.THRESH_BINARY)[1] for level in FELT_DISTANCES}
        # sharp steps in whiteness: a card's border has one, a pool of glare or shadow has not
        edges = cv2.threshold(
            cv2.morphologyEx(white, cv2.MORPH_GRADIENT, self._edge_kernel), EDGE_STEP, 255, cv2.THRESH_BINARY
        )[1]
        masks: list[tuple[np.ndarray, np.ndarray | None, bool]] = [
            (m, self._close_kernel, False) for m in paper.values()
        ]
        masks.append((cv2.bitwise_or(paper[PAPER_STEPS[1]], not_felt[FELT_DISTANCES[0]]), self._join_kernel, False))
        masks.append((cv2.bitwise_or(paper[PAPER_STEPS[2]], not_felt[FELT_DISTANCES[1]]), self._join_kernel, False))
        for level in PAPER_STEPS[:2]:
            masks.append((cv2.bitwise_and(paper[level], cv2.bitwise_not(edges)), None, True))
        return masks

    def _split(self, white: np.ndarray, contour: np.ndarray) -> list[np.ndarray]:
        """Card-shaped parts of a blob too big or too ragged to be one card (a card joined to
        a pool of glare, a shadow or its neighbour): thresholded again at levels just under
        its own brightest paper, where the smooth falloff of the light lets go of the card."""
        x, y, w, h = cv2.boundingRect(contour)
        region = white[y : y + h, x : x + w]
        inside = np.zeros((h, w), np.uint8)
        cv2.drawContours(inside, [contour - (x, y)], -1, 255, -1, offset=(0, 0))
        values = region[inside > 0]
        if values.size == 0:
            return []
        paper = _percentile_90(values)
        parts = []
        for drop in SPLIT_DROPS:
            m = cv2.threshold(region, max(0.0, paper - drop), 255, cv2.THRESH_BINARY)[1]
            m = cv2.bitwise_and(m, inside)
            m = cv2.morphologyEx(m, cv2.MORPH_OPEN, self._open_kernel)
            contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            parts += [c + (x, y) for c in contours if cv2.contourArea(c) >= self._min_px_area]
        return parts

    def _fit_in_slot(
        self, white: np.ndarray, slot: Slot, paper_level: float, frame: np.ndarray, gain: np.ndarray | None,
        paper_may_lie: np.ndarray | None = None,
    ) -> tuple[float, np.ndarray, tuple[float, float]] | None:
        """A card-sized rectangle fitted to the whiteness steps in and around ``slot``, when
        paper lies there that no mask cut out as a card (a court card whose border breaks,
        a card touched by glare or a shadow). Searched coarse then fine over position (±12 mm),
        angle (±16°), width (-15 %..+3 %) and height (-11 %..+11 %); accepted when three of its sides step up from the
        felt by :data:`PAPER_CONTRAST`, the fourth does not step down, and its border stands
        out (:meth:`_edge_contrast`). Returns (border contrast, box in px of this finder's
        view, centre in mm).

        Whether paper lies there is asked of ``white`` (this finder's view), where
        ``paper_may_lie`` is set (when given: all but the bare print, so that an empty slot's
        own lines are no paper; print a card covers is set); the steps are
        sampled a millimetre or two from the edge, finer than a coarse view resolves, so the
        fit itself is made on a window of the table around the slot at
        :data:`CALIBRATION_PX_PER_MM` (:meth:`_fine_window`, from ``frame`` and ``gain``)."""
        s = self._px_per_mm
        cw, ch = self.layout.card_mm
        sx, sy = slot.centre
        rows = slice(max(0, int(slot.y * s)), int((slot.y + slot.h) * s))
        cols = slice(max(0, int(slot.x * s)), int((slot.x + slot.w) * s))
        paper = white[rows, cols] > paper_level
        if paper_may_lie is not None:
            paper &= paper_may_lie[rows, cols] > 0
        if paper.size == 0 or np.count_nonzero(paper) < 0.3 * cw * ch * s * s:
            return None
        fitted = self._fit_rect(frame, gain, (sx, sy), 90.0 if slot.w > slot.h else 0.0)
        if fitted is None:
            return None
        contrast, box_mm, centre = fitted
        return contrast, box_mm * s, centre

    def _loose_paper(self, white: np.ndarray, paper_level: float, boxes: list[np.ndarray]) -> list[tuple[float, float]]:
        """Centres (mm) of card-sized stretches of paper away from every slot and every card
        found (``boxes``, px of this finder's view): where a card dealt off the slots may lie
        that no mask cut out, because glare or a neighbour joined it to a bigger blob and no
        threshold let go of it. The card is fitted there as in a slot (:meth:`_fit_rect`) and,
        like a slot's, reported only if read. At most :data:`LOOSE_CARDS`, the most light first."""
        s = self._px_per_mm
        paper = cv2.bitwise_and(cv2.threshold(white, paper_level, 255, cv2.THRESH_BINARY)[1], self._search)
        grow = LOOSE_CLEAR_MM * s
        for slot in self.layout.slots:
            cv2.rectangle(paper, (int((slot.x - LOOSE_CLEAR_MM) * s), int((slot.y - LOOSE_CLEAR_MM) * s)),
                          (int((slot.x + slot.w + LOOSE_CLEAR_MM) * s), int((slot.y + slot.h + LOOSE_CLEAR_MM) * s)),
                          0, -1)
        for box in boxes:
            (cx, cy), (bw, bh), angle = cv2.minAreaRect(np.asarray(box, np.float32))
            hull = cv2.boxPoints(((cx, cy), (bw + 2 * grow, bh + 2 * grow), angle))
            cv2.fillConvexPoly(paper, np.round(hull).astype(np.int32), 0)
        if cv2.countNonZero(paper) < LOOSE_SHARE * self._card_px[0] * self._card_px[1]:
            return []
        cw, ch = self._loose_window
        share = cv2.boxFilter(paper, cv2.CV_32F, (cw, ch), normalize=True)
        # where a card-sized window holds the most light, not the most paper: a card is
        # whiter than the pool of glare it may lie in, which would pull a window of paper off it
        light = cv2.boxFilter(cv2.bitwise_and(white, paper), cv2.CV_32F, (cw, ch), normalize=True)
        # a card lies whole on the table: no window reaching a marker or out of sight
        light[self._loose_centres == 0] = 0.0
        centres: list[tuple[float, float]] = []
        for _ in range(LOOSE_TRIES):
            _, most, _, (x, y) = cv2.minMaxLoc(light)
            if most <= 0.0:
                break
            cv2.rectangle(light, (x - cw, y - ch), (x + cw, y + ch), 0.0, -1)
            window = white[max(0, y - ch // 2) : y + ch // 2 + 1, max(0, x - cw // 2) : x + cw // 2 + 1]
            # a pool of glare is smooth; a card has its border and its ink
            if share[y, x] >= LOOSE_SHARE * 255 and _edge_strength(window) >= LOOSE_EDGES:
                centres.append((x / s, y / s))
                if len(centres) == LOOSE_CARDS:
                    break
        return centres

    def _in_sight(self, box_px: np.ndarray) -> bool:
        """Whether every corner of a box (px of this finder's view) lies where the camera sees
        the table, clear of the frame's edge."""
        h, w = self._seen.shape
        for x, y in np.round(box_px).astype(int):
            if not (0 <= x < w and 0 <= y < h) or self._seen[y, x] == 0:
                return False
        return True

    def on_marker(self, corners: np.ndarray) -> bool:
        """Whether the image outline ``corners`` reaches a corner marker or the quiet zone
        round it (the zone the search leaves out): a marker's white zone is as white as a
        burnt-out highlight and its black modules as sharp as ink."""
        mm = cv2.perspectiveTransform(np.asarray(corners, np.float64).reshape(-1, 1, 2), self._to_table)
        hull = cv2.convexHull(mm.reshape(-1, 2).astype(np.float32))
        return any(cv2.intersectConvexConvex(hull, zone)[0] > 0.0 for zone in self._marker_zones)

    def fit_cards(self, frame: np.ndarray, corners: np.ndarray, slot: Slot | None) -> list[np.ndarray]:
        """Image outlines (portrait order) of a card of the layout's size fitted as
        :meth:`_fit_in_slot` fits one (±12 mm, ±16°), once around the card found with image
        outline ``corners`` and once around the middle of ``slot`` (the slot it lies in, if
        any), in ``frame``, the last frame this finder searched as a whole (:meth:`find`: its
        exposure and the camera's shift are taken from there); those where no card's border is
        found are left out. A card whose found outline took in the printed line it lies against
        (a box square to the slot, though the card is turned) or that lies far off its outline
        (two outlines joined) lies where the steps out of the empty table's brightness say. Both
        are fitted again, after them, with the sides' outside samples on the empty table's print
        taken as no felt (:func:`_print_unseen`), so that a card turned across its slot's lines
        is also fitted where it lies, not only as the slot's inside (those fits alone, or in the
        finder's own slot fit, :meth:`_fit_in_slot`, lost our sets 2-7 reads each)."""
        gain = None if self.surroundings is None else self.surroundings.gain
        mm = cv2.perspectiveTransform(np.asarray(corners, np.float64).reshape(-1, 1, 2), self._to_table).reshape(-1, 2)
        width = mm[1] - mm[0]
        around = [((float(mm[:, 0].mean()), float(mm[:, 1].mean())), float(np.degrees(np.arctan2(width[1], width[0]))))]
        if slot is not None:
            around.append((slot.centre, 90.0 if slot.w > slot.h else 0.0))
        out: list[np.ndarray] = []
        boxes: list[np.ndarray] = []
        # the others only where the print is known (else they are the plain fits over again)
        ways = (False, True) if self._fine_printed is not None else (False,)
        per_start = [self._fit_rects(frame, gain, centre, base, ways) for centre, base in around]
        # the plain fits first, as they were before the others were added (session 57)
        for way, fits in product(range(len(ways)), per_start):
            fitted = fits[way]
            # both searches often settle on the same card: it is read once
            box = None if fitted is None else np.sort(fitted[1], axis=0)  # corners in any order
            if fitted is not None and box is not None and not any(np.abs(box - b).max() < 1.0 for b in boxes):
                boxes.append(box)
                img = cv2.perspectiveTransform(fitted[1].reshape(-1, 1, 2), self._to_image).reshape(-1, 2)
                out.append(order_portrait(img))
        return out

    def _fit_rect(
        self, frame: np.ndarray, gain: np.ndarray | None, centre_mm: tuple[float, float], base: float
    ) -> tuple[float, np.ndarray, tuple[float, float]] | None:
        """(border contrast, box in mm, centre in mm) of the card-sized rectangle fitted around
        ``centre_mm`` and ``base`` degrees (see :meth:`_fit_in_slot`), or None."""
        return self._fit_rects(frame, gain, centre_mm, base, (False,))[0]

    def _fit_rects(
        self, frame: np.ndarray, gain: np.ndarray | None, centre_mm: tuple[float, float], base: float,
        ways: tuple[bool, ...],
    ) -> list[tuple[float, np.ndarray, tuple[float, float]] | None]:
        """:meth:`_fit_rect`'s fit once per entry of ``ways``, all in one window of the table:
        with every sample as it is (False), or with the sides' outside samples on the empty
        table's print taken as no evidence of felt (True, :func:`_print_unseen`; for
        :meth:`fit_cards` alone)."""
        cw, ch = self.layout.card_mm
        sx, sy = centre_mm
        # every hypothesis with its outside samples: the card's half diagonal, the search's
        # offsets (12 mm each way) and the farthest outside sample (5 mm), and the blur's reach
        reach = 0.5 * float(np.hypot(cw, ch)) + 12.0 * np.sqrt(2.0) + max(_OUTSIDE_MM) + 6.0
        c = CALIBRATION_PX_PER_MM
        x0, y0 = int(np.floor((sx - reach) * c)), int(np.floor((sy - reach) * c))
        size = int(np.ceil(2 * reach * c)) + 1
        fine, printed = self._fine_window(frame, gain, x0, y0, (size, size))
        at = (sx - x0 / c, sy - y0 / c)  # the centre in mm from the window's corner
        fits: list[tuple[float, np.ndarray, tuple[float, float]] | None] = []
        for print_unseen in ways:
            outside = _print_unseen(fine, printed) if print_unseen else None
            best, best_sides = best_rect(fine, at, base, (cw, ch), c, outside)
            ordered = np.sort(best_sides)
            if ordered[1] < PAPER_CONTRAST or ordered[0] < -FOURTH_SIDE_DROP:
                fits.append(None)
                continue
            dx, dy, a, k, kh = (float(v) for v in best)
            box_at = cv2.boxPoints(((at[0] + dx, at[1] + dy), (cw * k, ch * kh), base + a)).astype(np.float64)
            contrast = self._edge_contrast(fine, box_at * c, printed)
            if contrast < PAPER_CONTRAST:
                fits.append(None)
                continue
            centre = (sx + dx, sy + dy)
            box_mm = cv2.boxPoints((centre, (cw * k, ch * kh), base + a)).astype(np.float64)
            fits.append((contrast, box_mm, (float(centre[0]), float(centre[1]))))
        return fits

    def _fine_window(
        self, frame: np.ndarray, gain: np.ndarray | None, x0: int, y0: int, size: tuple[int, int]
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """A window of the table at :data:`CALIBRATION_PX_PER_MM` (top-left pixel ``x0``,
        ``y0``, ``size`` px): what the finder's view holds there (brightness over the empty
        table when it is known and its ``gain`` was found, as :meth:`_against_empty` makes it;
        else whiteness), and the print of the empty table there (None when not known), both
        moved by the camera's shift found in this frame."""
        c, s = CALIBRATION_PX_PER_MM, self._px_per_mm
        to_window = np.array([[1.0, 0.0, -x0], [0.0, 1.0, -y0], [0.0, 0.0, 1.0]]) @ np.diag([c, c, 1.0])
        table = cv2.warpPerspective(frame, to_window @ self._to_table, size, flags=cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        if self._fine_printed is None:
            return darkest_channel(table), None
        # the empty table moved onto this frame, as _lined_up moves it (its shift is in px of this finder's view)
        dx, dy = self._shift[0, 2] * c / s, self._shift[1, 2] * c / s
        moved = np.array([[1.0, 0.0, dx - x0], [0.0, 1.0, dy - y0]])
        printed = cv2.warpAffine(self._fine_printed, moved, size, flags=cv2.INTER_NEAREST,
                                 borderMode=cv2.BORDER_REPLICATE)
        if gain is None or self._fine_hi is None:
            return darkest_channel(table), printed
        now = cv2.GaussianBlur(table, (0, 0), COVER_BLUR_MM * c)
        hi = cv2.warpAffine(self._fine_hi, moved, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        # the gain grid at the window's pixels, as cv2.resize (INTER_LINEAR) to the whole table gives it
        gw, gh = gain.shape[1], gain.shape[0]
        ax, ay = gw / self._calibration_size[0], gh / self._calibration_size[1]
        to_grid = np.array([[ax, 0.0, ax * (x0 + 0.5) - 0.5], [0.0, ay, ay * (y0 + 0.5) - 0.5]])
        local_gain = cv2.warpAffine(gain, to_grid, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                    borderMode=cv2.BORDER_REPLICATE)
        local_hi = cv2.multiply(hi, local_gain, dtype=cv2.CV_8U)
        return brightest_channel(cv2.subtract(now, local_hi)), printed

    def _paper_level(self, white: np.ndarray) -> float:
        """A whiteness that felt does not reach but card paper does, for this frame."""
        k = self._stride
        seen = white[::k, ::k][self._search[::k, ::k] > 0]
        felt = _median_u8(seen) if seen.size else 0.0
        return felt + PAPER_STEPS[0]

    def _card_rect(
        self, contour: np.ndarray, grow: float = 0.0
    ) -> tuple[float, np.ndarray, tuple[float, float]] | None:
        """(how well it fits, box in top-down px, centre in mm) of a card-shaped contour, else
        None; ``grow`` px are added to the box's width and height (an outline cut inside)."""
        pts = contour.reshape(-1, 2).astype(np.float32)
        (cx, cy), (rw0, rh0), angle = cv2.minAreaRect(pts)
        rw, rh = rw0 + grow, rh0 + grow
        short, long_ = sorted((rw, rh))
        if not self._card_sized(short, long_, self._card_px):
            return None
        # a court card's border can break where its picture reaches the edge: judge the
        # outline by its convex hull, and ask the contour itself only for substance
        area = cv2.contourArea(pts)
        hull = cv2.contourArea(cv2.convexHull(pts))
        if hull < 0.9 * rw0 * rh0 or area < 0.5 * rw0 * rh0:
            return None
        box = cv2.boxPoints(((cx, cy), (rw, rh), angle)).astype(np.float64)
        s = self._px_per_mm
        return (area + hull) / (2 * rw0 * rh0), box, (float(cx / s), float(cy / s))

    def _edge_contrast(self, white: np.ndarray, box_px: np.ndarray, printed: np.ndarray | None = None) -> float:
        """How much whiter the card's own border strip is than the felt just outside it
        (``white``: whiteness, or brightness over the empty table when that is known).
        Glare and light pools are smooth, so a blob of them cut into a card shape has
        (almost) none; a card lying on felt has a sharp step. Outside, bare print is left
        out when it is known: a slot's line is not the felt around a card (a white line
        flush with a card would hide its step, a line round a pool of glare would make one)."""
        m, w, h = _RING_MARGIN, _RING_SIZE[0], _RING_SIZE[1]
        dst = np.array([[m, m], [m + w, m], [m + w, m + h], [m, m + h]], dtype=np.float32)
        warp = cv2.getPerspectiveTransform(order_portrait(box_px), dst)
        size = (w + 2 * m, h + 2 * m)
        patch = cv2.warpPerspective(white, warp, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        outside = patch[_OUTER_RING]
        if printed is not None:
            bare = (
                cv2.warpPerspective(printed, warp, size, flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_REPLICATE)[
                    _OUTER_RING
                ]
                == 0
            )
            if np.count_nonzero(bare) >= 0.3 * bare.size:
                outside = outside[bare]
        return _median_u8(patch[_INNER_RING]) - _median_u8(outside)


#: The felt's grain is compared on the card's inside (less this share of it each side), at
#: about 1 px per mm, with what varies slower than GRAIN_SIGMA px taken away.
GRAIN_INSET = 0.12
_GRAIN_PATCH = (40, 60)
GRAIN_SIGMA = 3.0
#: :meth:`CardFinder.felt_unchanged`: the ring the light's gain is measured on, as the outline
#: scaled about its centre (from, to), the patch (px) it is warped to, and how much (px of the
#: patch) the frame is smoothed by (its noise; the empty table is smoothed by COVER_BLUR_MM).
#: The inside judged is the outline less GRAIN_INSET on every side.
UNCHANGED_RING = (1.15, 1.6)
_UNCHANGED_PATCH = (48, 72)
_UNCHANGED_BLUR = 1.0


@functools.cache
def _unchanged_masks() -> tuple[np.ndarray, np.ndarray]:
    """The ring and the inside (boolean masks of the :data:`_UNCHANGED_PATCH`) that
    :meth:`CardFinder.felt_unchanged` measures the gain on and judges."""
    w, h = _UNCHANGED_PATCH
    ys, xs = np.mgrid[0:h, 0:w]
    # how far each pixel lies from the centre, in outline sizes (1 = on the outline)
    reach = np.maximum(np.abs(xs + 0.5 - w / 2) / (w / 2), np.abs(ys + 0.5 - h / 2) / (h / 2)) * UNCHANGED_RING[1]
    return reach >= UNCHANGED_RING[0], reach <= 1.0 - 2 * GRAIN_INSET


def _grain(img: np.ndarray) -> np.ndarray:
    a = img.astype(np.float32)
    a = (a - cv2.GaussianBlur(a, (0, 0), GRAIN_SIGMA)).ravel()
    return a - float(a.mean())


def learn_empty_table(plane: TablePlane, layout: Layout, empty: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From a frame of the empty table: (the mask of what is printed on it, the empty table
    itself top-down), as ``calibrate table`` keeps them (``printed.png``, ``empty_table.png``)
    and :class:`CardFinder` takes them (``printed=``, ``empty_table=``)."""
    finder = CardFinder(plane, layout, px_per_mm=CALIBRATION_PX_PER_MM)
    table = finder.top_down(empty)
    # a card left on the table is not the table: paint felt over it from around it
    white = darkest_channel(table)
    bodies = cv2.dilate(finder._card_bodies(table, white), np.ones((9, 9), np.uint8))
    if bodies.any():
        table = cv2.inpaint(table, bodies, 5, cv2.INPAINT_TELEA)
    return finder.printed_structure(empty), table


def _frame_px_per_mm(table_to_image: np.ndarray, table_mm: tuple[float, float]) -> tuple[float, float]:
    """The fewest and the most frame pixels per mm of the table in any direction (the singular
    values of the homography's Jacobian), over a 5 x 5 grid of points on it; (0, inf) when the
    table reaches the camera's horizon (no such plane is calibrated: nothing is assumed)."""
    least, most = np.inf, 0.0
    for x in np.linspace(0.0, table_mm[0], 5):
        for y in np.linspace(0.0, table_mm[1], 5):
            p = table_to_image @ np.array([x, y, 1.0])
            w = float(p[2])
            if abs(w) < 1e-9:
                return 0.0, np.inf
            # the Jacobian of the projection at (x, y)
            jacobian = (table_to_image[:2, :2] * w - np.outer(p[:2], table_to_image[2, :2])) / (w * w)
            spread = np.linalg.svd(jacobian, compute_uv=False)
            least, most = min(least, float(spread[-1])), max(most, float(spread[0]))
    return least, most


def _clear_of_edge(contour: np.ndarray, size: tuple[int, int]) -> bool:
    """Whether a contour of a window (w, h px) stays off the window's edge."""
    x, y, w, h = cv2.boundingRect(contour)
    return x > 0 and y > 0 and x + w < size[0] and y + h < size[1]


def _pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Every (a, b) combination, ``a`` slower, as rows."""
    g = np.meshgrid(np.asarray(a, np.float64), np.asarray(b, np.float64), indexing="ij")
    return np.ascontiguousarray(np.stack([g[0].ravel(), g[1].ravel()], axis=1))


def _triples(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Every (a, b, c) combination, ``a`` slowest, as rows."""
    g = np.meshgrid(np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64), indexing="ij")
    return np.ascontiguousarray(np.stack([g[0].ravel(), g[1].ravel(), g[2].ravel()], axis=1))


#: The slot fit's hypotheses (see CardFinder._fit_in_slot), each a shift (dx, dy mm) with a
#: shape (angle in degrees, width factor, height factor): every shift with every shape, coarse,
#: then fine around the best. The coarse shifts are whole millimetres (whole pixels at
#: CALIBRATION_PX_PER_MM: see _rect_steps). The height is searched too (±8 %, session 42): a
#: card seen a little smaller than the layout's (a camera or table plane a little off its
#: calibration; the independent harness scales cards 0.92-1.10) was fitted 88 mm tall over a
#: card 82 mm tall, one side inside the card stepping down, and refused.
_COARSE_SHIFTS = _pairs(np.arange(-12, 12.1, 3), np.arange(-12, 12.1, 3))
_COARSE_SHAPES = _triples(np.arange(-16, 16.1, 4), np.array([0.88, 0.94, 1.0]), np.array([0.92, 1.0, 1.08]))
_FINE_SHIFTS = _pairs(np.arange(-1.5, 1.6, 0.75), np.arange(-1.5, 1.6, 0.75))
_FINE_SHAPES = _triples(np.arange(-2, 2.1, 1), np.array([-0.03, 0.0, 0.03]), np.array([-0.03, 0.0, 0.03]))


def best_rect(
    white: np.ndarray, centre: tuple[float, float], base_deg: float, card_mm: tuple[float, float], px_per_mm: float,
    outside: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The slot fit's best hypothesis around ``centre`` (mm of ``white``, a window of whiteness or
    brightness over the empty table): (dx, dy, angle, width factor, height factor) and its four
    side steps (:func:`_rect_steps`, ``outside`` the picture its outside samples are taken
    from, ``white`` when None), searched coarse, then fine around the best."""
    best = np.zeros(5)
    best_sides = np.zeros(4, np.float32)
    for coarse in (True, False):
        shifts, shapes = (_COARSE_SHIFTS, _COARSE_SHAPES) if coarse else \
            (best[:2] + _FINE_SHIFTS, best[2:] + _FINE_SHAPES)
        score, sides = _rect_steps(white, shifts, shapes, centre, base_deg, card_mm, px_per_mm, outside)
        i = int(np.argmax(score))
        best = np.concatenate([shifts[i // len(shapes)], shapes[i % len(shapes)]])
        best_sides = sides[i]
    return best, best_sides


def _print_unseen(white: np.ndarray, printed: np.ndarray | None) -> np.ndarray | None:
    """``white`` with the empty table's print (``printed``, nonzero: as stored, already grown a
    pixel, :meth:`CardFinder.printed_structure`) set to full white: the picture a fitted rectangle's
    outside samples are taken from. Brightness over the empty table is nothing on a printed
    line whether the line is bare or a card lies on it, so there a sample cannot tell felt
    from card: a card turned 11.6° across its slot's white lines (held-out tigullio, seed 23)
    was fitted as the slot's inside, whose sides stepped down onto the lines under the card,
    and not read. Full white is not neutral: where both outside samples of a point fall on
    print, the step there counts against the side (the print grown a pixel more fitted the
    card in the test's scene 16° turned and 3 mm off). None when ``printed`` is not known."""
    if printed is None:
        return None
    out = white.copy()
    out[printed > 0] = 255
    return out


def _marker_zones(layout: Layout) -> list[np.ndarray]:
    """Each corner marker with its quiet zone (:data:`MARKER_MARGIN_MM` round it) as a square
    in table mm (float32 corners, clockwise from top-left)."""
    grow = layout.markers.size_mm / 2 + MARKER_MARGIN_MM
    return [np.array([[cx - grow, cy - grow], [cx + grow, cy - grow], [cx + grow, cy + grow], [cx - grow, cy + grow]],
                     np.float32) for cx, cy in layout.markers.centres_mm]


def _edge_strength(patch: np.ndarray) -> float:
    """The mean gradient magnitude (Sobel) of a uint8 patch."""
    if patch.shape[0] < 3 or patch.shape[1] < 3:
        return 0.0
    gx, gy = cv2.Sobel(patch, cv2.CV_32F, 1, 0), cv2.Sobel(patch, cv2.CV_32F, 0, 1)
    return float(cv2.mean(cv2.magnitude(gx, gy))[0])


def _near_slot(slot: Slot, centre: tuple[float, float]) -> bool:
    return slot.x - 10 <= centre[0] <= slot.x + slot.w + 10 and slot.y - 10 <= centre[1] <= slot.y + slot.h + 10


#: Points per side of a fitted rectangle, and how far inside and outside its outline (mm)
#: the whiteness is compared.
_SIDE_POINTS = 12
_INSIDE_MM = 1.5
_OUTSIDE_MM = (2.5, 5.0)


def _rect_steps(
    white: np.ndarray,
    shifts: np.ndarray,
    shapes: np.ndarray,
    slot_centre: tuple[float, float],
    base_deg: float,
    card_mm: tuple[float, float],
    px_per_mm: float,
    outside: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """For each hypothesis, every shift (dx, dy mm) with every shape (angle°, width factor,
    height factor), shift slower: the whiteness step across each of the rectangle's four sides
    (median of inside minus the darker of two outside samples, so a printed line just outside
    does not hide the felt; the outside samples from ``outside`` when given, a picture of
    ``white``'s shape: :func:`_print_unseen`), and a score: the sum of the best three sides,
    and half the fourth.
    (The best three alone let one side go free for glare or a picture reaching the edge; with
    the height searched, they preferred a box 11 % too tall, its fourth side on nothing, to
    the card's own box with four steps.)

    Each side is sampled at :data:`_SIDE_POINTS` points along it, inside and at both outside
    distances, at the pixel nearest to the point (halves rounded up). The points are placed
    once per shape; when every shift is a whole number of pixels (the coarse search at
    CALIBRATION_PX_PER_MM), each shift then moves the shape's pixels by whole pixels, with
    no arithmetic per hypothesis but an index sum (a tenth of the cost of placing every
    hypothesis's points)."""
    cw, ch = card_mm
    n = _SIDE_POINTS
    t = (np.arange(n) + 0.5) / n * 0.8 + 0.1  # skip the rounded corners
    u = t - 0.5
    hw = 0.5 * cw * shapes[:, 1]
    hh = 0.5 * ch * shapes[:, 2]
    a = np.deg2rad(base_deg + shapes[:, 0])
    ca, sa = np.cos(a)[:, None, None], np.sin(a)[:, None, None]
    # points along the sides (top, right, bottom, left) in card-local mm before rotation:
    # (shape, side, point)
    along_w = u[None, :] * 2 * hw[:, None]
    along_h = u[None, :] * 2 * hh[:, None]
    across_w, across_h = np.repeat(hw[:, None], n, axis=1), np.repeat(hh[:, None], n, axis=1)
    lx = np.stack([along_w, across_w, along_w, -1 * across_w], axis=1)
    ly = np.stack([-1 * across_h, along_h, across_h, along_h], axis=1)
    nx = np.array([0, 1, 0, -1])[None, :, None]  # outward normals
    ny = np.array([-1, 0, 1, 0])[None, :, None]
    h, w = white.shape
    inside_flat, outside_flat = white.ravel(), (white if outside is None else outside).ravel()
    moves = shifts * px_per_mm
    whole = bool(np.array_equal(moves, np.rint(moves)))
    mx, my = moves[:, 0, None, None, None], moves[:, 1, None, None, None]
    samples: list[np.ndarray] = []
    for k, (px, py) in enumerate(((lx - nx * _INSIDE_MM, ly - ny * _INSIDE_MM),
                                  *((lx + nx * d, ly + ny * d) for d in _OUTSIDE_MM))):
        flat = inside_flat if k == 0 else outside_flat
        gx = (slot_centre[0] + (ca * px - sa * py)) * px_per_mm  # (shape, side, point) px
        gy = (slot_centre[1] + (sa * px + ca * py)) * px_per_mm
        if whole:
            x, y = np.floor(gx + 0.5), np.floor(gy + 0.5)
            if x.min() + mx.min() >= 0 and x.max() + mx.max() <= w - 1 \
                    and y.min() + my.min() >= 0 and y.max() + my.max() <= h - 1:
                # every pixel in the picture: a shift moves the flat index by a whole number
                at = (y * w + x).astype(np.int32)[None] + (my * w + mx).astype(np.int32)
                samples.append(flat.take(at.reshape(-1, 4, n)))
                continue
            xs, ys = x[None] + mx, y[None] + my  # (shift, shape, side, point)
        else:
            xs, ys = np.floor(gx[None] + mx + 0.5), np.floor(gy[None] + my + 0.5)
        xi = np.clip(xs, 0, w - 1).astype(np.int32)
        yi = np.clip(ys, 0, h - 1).astype(np.int32)
        samples.append(flat.take((yi * w + xi).reshape(-1, 4, n)))  # whiteness as it is (uint8)
    # the median step per side: the steps are whole numbers, so the median is the middle one
    # of the sorted int16 steps (n even: the mean of the two middle ones), exactly as in float32
    diff = samples[0].astype(np.int16) - np.minimum(samples[1], samples[2]).astype(np.int16)
    below, above = _middle_pair(diff)
    middle = above.astype(np.float32)
    steps = (below + middle) / np.float32(2) if n % 2 == 0 else middle
    # the best three sides and half the fourth: all four less half the weakest (the steps are
    # halves of whole numbers under 512, so float32 adds and halves them exactly, in any order)
    side = [steps[:, k] for k in range(4)]
    weakest = np.minimum(np.minimum(side[0], side[1]), np.minimum(side[2], side[3]))
    return side[0] + side[1] + side[2] + side[3] - weakest / 2, steps


#: A sorting network for 12 values (39 compare-exchanges) less the six that place none of the
#: middle two: what :func:`_middle_pair` runs on the slot fit's 12 points per side, as
#: whole-array minima and maxima (a third of the cost of ``np.sort`` along a short last axis,
#: for the 6,561 coarse hypotheses' four sides).
_MIDDLE_OF_12 = ((0, 8), (1, 7), (2, 6), (3, 11), (4, 10), (5, 9), (0, 1), (2, 5), (3, 4), (6, 9), (7, 8),
                 (10, 11), (0, 2), (1, 6), (5, 10), (9, 11), (1, 2), (4, 6), (5, 7), (9, 10), (1, 4), (3, 5),
                 (6, 8), (7, 10), (2, 5), (6, 9), (4, 5), (6, 7), (4, 6), (5, 7), (3, 4), (5, 6), (7, 8))


def _middle_pair(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``n // 2 - 1``-th and ``n // 2``-th smallest along the last axis (n long), as
    ``np.sort`` orders them: for an even n the two middle values of each row, for an odd n
    the second is the median."""
    n = values.shape[-1]
    if n != 12:
        ordered = np.sort(values, axis=-1)
        return ordered[..., n // 2 - 1], ordered[..., n // 2]
    rows = [values[..., k] for k in range(n)]
    for a, b in _MIDDLE_OF_12:
        rows[a], rows[b] = np.minimum(rows[a], rows[b]), np.maximum(rows[a], rows[b])
    return rows[n // 2 - 1], rows[n // 2]


def as_bgr(image: np.ndarray) -> np.ndarray:
    """A BGR picture of ``image``: grey is spread to three channels, an alpha channel dropped."""
    if image.ndim == 2:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR))
    if image.ndim == 3 and image.shape[2] == 1:
        return np.asarray(cv2.cvtColor(image[:, :, 0], cv2.COLOR_GRAY2BGR))
    if image.ndim == 3 and image.shape[2] == 4:
        return np.ascontiguousarray(image[:, :, :3])
    return image


#: Every uint8 value in each of three channels (1, 256, 3): the input of a per-channel lookup table.
_ALL_LEVELS = np.ascontiguousarray(np.repeat(np.arange(256, dtype=np.uint8).reshape(1, 256, 1), 3, axis=2))




def _sampled_box(frame: np.ndarray, to_patch: np.ndarray, size: tuple[int, int]) -> tuple[int, int, int, int]:
    """The box (x0, y0, x1, y1) of ``frame`` a patch of ``size`` warped by ``to_patch`` samples,
    with a margin for the interpolation; the whole frame where that is not known."""
    w, h = size
    back = np.linalg.inv(to_patch)
    around = cv2.perspectiveTransform(np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64).reshape(-1, 1, 2),
                                      back).reshape(-1, 2)
    fh, fw = frame.shape[:2]
    if not np.all(np.isfinite(around)):
        return 0, 0, fw, fh
    lo, hi = np.floor(around.min(axis=0)) - 2, np.ceil(around.max(axis=0)) + 3
    x0, x1 = (int(np.clip(v, 0, fw)) for v in (lo[0], hi[0]))
    y0, y1 = (int(np.clip(v, 0, fh)) for v in (lo[1], hi[1]))
    if x1 - x0 < 2 or y1 - y0 < 2:
        return 0, 0, fw, fh
    return x0, y0, x1, y1


def _warp_whiteness(frame: np.ndarray, to_patch: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The whiteness (darkest channel) of ``frame`` warped by ``to_patch`` into a patch of
    ``size``, taken only of the part of the frame the patch samples (a card's patch samples a
    few thousand pixels; the whole frame's whiteness costs a millisecond at 1280 x 720)."""
    x0, y0, x1, y1 = _sampled_box(frame, to_patch, size)
    crop = frame[y0:y1, x0:x1]
    shifted = to_patch @ np.array([[1, 0, x0], [0, 1, y0], [0, 0, 1]], np.float64)
    return np.asarray(cv2.warpPerspective(darkest_channel(crop), shifted, size, flags=cv2.INTER_LINEAR,
                                          borderMode=cv2.BORDER_REPLICATE))


def _warp_colour(frame: np.ndarray, to_patch: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``frame`` (BGR) warped by ``to_patch`` into a patch of ``size``, from the part of the
    frame the patch samples only (see :func:`_warp_whiteness`)."""
    x0, y0, x1, y1 = _sampled_box(frame, to_patch, size)
    shifted = to_patch @ np.array([[1, 0, x0], [0, 1, y0], [0, 0, 1]], np.float64)
    return np.asarray(cv2.warpPerspective(frame[y0:y1, x0:x1], shifted, size, flags=cv2.INTER_LINEAR,
                                          borderMode=cv2.BORDER_REPLICATE))


#: Up to this many values, :func:`_median_u8` partitions them (measured: 3 us for 700 values
#: against 7.6 for counting them; even at 6,000).
_PARTITION_UP_TO = 5000


def _median_u8(values: np.ndarray) -> float:
    """``float(np.median(values))`` of a non-empty array (the same value: the middle one, or
    the mean of the two middle ones). When it is uint8: a few thousand values partitioned at
    the two middle places only, more counted (a histogram), each faster than ``np.median``."""
    if values.dtype != np.uint8:
        return float(np.median(values))
    n = values.size
    if n <= _PARTITION_UP_TO:
        # a few thousand values: partitioning at the two middle places costs less than counting
        middle = np.partition(values.ravel(), [(n - 1) // 2, n // 2])
        return (float(middle[(n - 1) // 2]) + float(middle[n // 2])) / 2.0
    cum = np.cumsum(np.bincount(values.ravel(), minlength=256))
    lo = int(np.searchsorted(cum, (n - 1) // 2 + 1))
    hi = int(np.searchsorted(cum, n // 2 + 1))
    return (lo + hi) / 2.0


def _masked_medians(image: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    """Per channel of the uint8 ``image``, the median (as :func:`_median_u8`) of the ``n`` pixels
    ``mask`` marks, from histograms (``cv2.calcHist``: half the cost of gathering them)."""
    out = []
    for channel in range(image.shape[2]):
        cum = np.cumsum(cv2.calcHist([image], [channel], mask, [256], [0, 256]).ravel())
        lo = int(np.searchsorted(cum, (n - 1) // 2 + 1))
        hi = int(np.searchsorted(cum, n // 2 + 1))
        out.append((lo + hi) / 2.0)
    return np.array(out, np.float64)


def _percentile_90(values: np.ndarray) -> float:
    """``np.percentile(values, 90)`` of uint8 ``values`` (linear, the same lerp as numpy's),
    from their histogram: a blob's pixels are many, and sorting them costs more than counting."""
    n = values.size
    idx = 0.9 * (n - 1)
    lo = int(np.floor(idx))
    cum = np.cumsum(np.bincount(values.ravel(), minlength=256))
    a = float(np.searchsorted(cum, lo + 1))
    b = float(np.searchsorted(cum, min(lo + 1, n - 1) + 1))
    t, d = idx - lo, b - a
    return b - d * (1 - t) if t >= 0.5 else a + d * t


def _fill_holes(mask: np.ndarray) -> np.ndarray:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros_like(mask)
    cv2.drawContours(filled, contours, -1, 255, -1)
    return filled
