"""Find and read every card on the table in one camera frame.

1. *Find*: inside the table outline (corner markers left out), threshold the
   "whiteness" of the frame (the darkest of the three colour channels: card
   paper is bright in all three, coloured felt is not) at four levels, and
   its distance from the local felt colour at two, so that a card under a
   shadow, next to glare or with a dark court picture is cut out at some
   level. Every outer contour is mapped to table millimetres through the
   calibration and kept only if it is a card there: a rectangle of the
   layout's card size (±15 %), filled (convex hull >= 88 % of the rectangle,
   the contour itself >= 30 %: a court card's thin border may break where
   the picture meets it), whose border steps up in whiteness from the felt
   around it (:data:`PAPER_CONTRAST`: pools of light have no such step).
2. *Read*: warp each card upright from the frame itself (full resolution) and
   read it against the studio's templates
   (:class:`calibration.templates.CardTemplates`).
3. *Decide*: a read counts only if it looks like a face (score >=
   ``min_score``) and beats every close rival clearly (margin >=
   ``threshold``, z >= ``min_z``); a doubtful read is checked against the
   card's other outlines and any disagreement makes it a no-read. Otherwise
   the card is reported with ``code=None``: never a guess.
4. *Place*: the card's centre in mm names its slot, or ``None`` (a card off
   every slot: dropped or exposed).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.layout import Layout
from calibration.store import Calibration
from calibration.table import TablePlane
from calibration.templates import Reading, one_blas_thread, order_portrait, warp_card

#: Border around each corner marker (its printed quiet zone and some) left out of the search, mm.
MARKER_MARGIN_MM = 12.0
#: Whiteness step (0..255) a card's border must show over the felt around it.
PAPER_CONTRAST = 25.0
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
#: Default margin a read must reach (see ``Reading.margin``).
DEFAULT_THRESHOLD = 0.6
#: Default distance past halfway to the nearest rival, in noise widths (see ``Reading.z``).
DEFAULT_MIN_Z = 1.5
#: A read with this margin needs no second look from the card's other outlines.
SURE_MARGIN = 0.8
#: Default mean NCC a card's corners must reach against the winning template.
DEFAULT_MIN_SCORE = 0.65


@dataclass(frozen=True)
class CardReading:
    """One card seen in one frame.

    ``code`` is ``None`` for a no-read; ``corners`` are image pixels in the
    order top-left, top-right, bottom-right, bottom-left of the card as read;
    ``position`` is the layout slot (``"banker2"``) or ``None`` off every slot.
    """

    code: str | None
    confidence: float
    corners: list[tuple[float, float]]
    position: str | None
    centre_mm: tuple[float, float] = (0.0, 0.0)

    def to_dict(self) -> dict:  # type: ignore[type-arg]
        return {
            "code": self.code,
            "confidence": round(self.confidence, 3),
            "corners": [[round(x, 1), round(y, 1)] for x, y in self.corners],
            "position": self.position,
        }


class CardFinder:
    """Finds card-shaped objects on the table of one calibrated camera (no reading)."""

    def __init__(self, plane: TablePlane, layout: Layout, size_tolerance: float = 0.15):
        self.layout = layout
        self.size_tolerance = size_tolerance
        self._to_table = plane.image_to_table
        self._to_image = plane.table_to_image
        w, h = plane.image_size
        self._mask_size = (w, h)
        outline = plane.to_image(layout.outline_mm).astype(np.int32)
        self._table_mask = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(self._table_mask, outline, 255)
        # the corner markers and their white quiet zones are not cards: leave them out
        grow = layout.markers.size_mm / 2 + MARKER_MARGIN_MM
        for cx, cy in layout.markers.centres_mm:
            square = [(cx - grow, cy - grow), (cx + grow, cy - grow), (cx + grow, cy + grow), (cx - grow, cy + grow)]
            cv2.fillConvexPoly(self._table_mask, plane.to_image(square).astype(np.int32), 0)
        x, y, bw, bh = cv2.boundingRect(outline)
        x0, y0 = max(x, 0), max(y, 0)
        self._roi = (x0, y0, min(x + bw, w), min(y + bh, h))
        card_w, card_h = layout.card_mm
        # smallest plausible card outline in pixels, to skip specks cheaply
        px_per_mm2 = abs(np.linalg.det(self._to_image[:2, :2])) / self._to_image[2, 2] ** 2
        self._min_px_area = 0.2 * card_w * card_h * min(1.0, float(px_per_mm2))
        self._close_kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3))
        self._wide_kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (9, 9))

    def to_table(self, point: np.ndarray) -> tuple[float, float]:
        p = cv2.perspectiveTransform(np.asarray(point, np.float64).reshape(1, 1, 2), self._to_table).reshape(2)
        return (float(p[0]), float(p[1]))

    # -- finding -------------------------------------------------------------------------
    def find_cards(self, frame: np.ndarray) -> list[np.ndarray]:
        """Image corners (4, 2) of every card-shaped object on the table, portrait-ordered."""
        return [group[0] for group in self.find_card_outlines(frame)]

    def find_card_outlines(self, frame: np.ndarray) -> list[list[np.ndarray]]:
        """Like :meth:`find_cards`, but every outline found for each card (one per mask
        that cut it out), best first: the reader may try the others on a doubtful read."""
        if frame.shape[1] != self._mask_size[0] or frame.shape[0] != self._mask_size[1]:
            raise ValueError(
                f"frame is {frame.shape[1]}x{frame.shape[0]} but the calibration is for "
                f"{self._mask_size[0]}x{self._mask_size[1]}"
            )
        masks = self._masks(frame)
        x0, y0 = self._roi[:2]
        found: list[tuple[list[np.ndarray], tuple[float, float]]] = []
        full: list[tuple[float, float]] = []  # image centres of cards with MAX_OUTLINES outlines
        # the lowest whiteness level and the far felt distance once more, closed harder: rejoins
        # the broken thin border of a court card whose picture matches the felt (neighbouring
        # cards it may merge fail the size test)
        wide = [(masks[0], self._wide_kernel), (masks[-1], self._wide_kernel)]
        for mask, kernel in [(m, self._close_kernel) for m in masks] + wide:
            mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel)
            contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            for c in contours:
                if cv2.contourArea(c) < self._min_px_area:
                    continue
                bx, by, bw, bh = cv2.boundingRect(c)
                cx, cy = x0 + bx + bw / 2, y0 + by + bh / 2
                if any(abs(cx - fx) < 12 and abs(cy - fy) < 12 for fx, fy in full):
                    continue  # a card that has all the outlines it needs
                quad = self._card_quad(c.reshape(-1, 2).astype(np.float64) + (x0, y0))
                if quad is None:
                    continue
                corners, centre = quad
                same = [g for g, fc in found if np.hypot(centre[0] - fc[0], centre[1] - fc[1]) < 20]
                if same:
                    if len(same[0]) < MAX_OUTLINES:
                        same[0].append(corners)
                        if len(same[0]) == MAX_OUTLINES:
                            full.append(tuple(corners.mean(axis=0)))
                    continue
                found.append(([corners], centre))
        return [g for g, _ in found if self._edge_contrast(frame, g[0]) >= PAPER_CONTRAST]

    def _edge_contrast(self, frame: np.ndarray, corners: np.ndarray) -> float:
        """How much whiter the card's own border strip is than the felt just outside it.
        Glare and light pools are smooth, so a blob of them cut into a card shape has
        (almost) none; a card lying on felt has a sharp step."""
        m, w, h = _RING_MARGIN, _RING_SIZE[0], _RING_SIZE[1]
        dst = np.array([[m, m], [m + w, m], [m + w, m + h], [m, m + h]], dtype=np.float32)
        warp = cv2.getPerspectiveTransform(np.asarray(corners, dtype=np.float32), dst)
        patch = cv2.warpPerspective(frame, warp, (w + 2 * m, h + 2 * m), flags=cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_REPLICATE)
        white = cv2.min(cv2.min(patch[:, :, 0], patch[:, :, 1]), patch[:, :, 2])
        return float(np.median(white[_INNER_RING]) - np.median(white[_OUTER_RING]))

    def _masks(self, frame: np.ndarray) -> list[np.ndarray]:
        """Binary masks (table ROI) at several whiteness levels and two felt-distance levels."""
        x0, y0, x1, y1 = self._roi
        roi = frame[y0:y1, x0:x1]
        white = cv2.min(cv2.min(roi[:, :, 0], roi[:, :, 1]), roi[:, :, 2])
        table = self._table_mask[y0:y1, x0:x1]
        white = cv2.bitwise_and(white, table)
        otsu, _ = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        masks = []
        for d in (-25, 0, 30, 60):
            _, m = cv2.threshold(white, int(np.clip(otsu + d, 40, 245)), 255, cv2.THRESH_BINARY)
            masks.append(m)
        # "not felt": far from the local felt colour (a court card's picture is dark, its border thin)
        small = cv2.resize(roi, (max(1, roi.shape[1] // 8), max(1, roi.shape[0] // 8)), interpolation=cv2.INTER_AREA)
        felt = cv2.resize(cv2.medianBlur(small, 15), (roi.shape[1], roi.shape[0]), interpolation=cv2.INTER_LINEAR)
        diff = cv2.absdiff(roi, felt)
        dist = cv2.bitwise_and(cv2.max(cv2.max(diff[:, :, 0], diff[:, :, 1]), diff[:, :, 2]), table)
        for level in (45, 80):
            _, m = cv2.threshold(dist, level, 255, cv2.THRESH_BINARY)
            masks.append(m)
        return masks

    def _card_quad(self, contour_px: np.ndarray) -> tuple[np.ndarray, tuple[float, float]] | None:
        mm = cv2.perspectiveTransform(contour_px.reshape(-1, 1, 2), self._to_table).reshape(-1, 2)
        mm32 = mm.astype(np.float32)
        (cx, cy), (rw, rh), angle = cv2.minAreaRect(mm32)
        short, long_ = sorted((rw, rh))
        cw, ch = self.layout.card_mm
        tol = self.size_tolerance
        if not ((1 - tol) * cw <= short <= (1 + tol) * cw and (1 - tol) * ch <= long_ <= (1 + tol) * ch):
            return None
        # a court card's white border can break where its picture reaches the edge: judge the
        # outline by its convex hull, and ask the contour itself only for some substance
        if cv2.contourArea(cv2.convexHull(mm32)) < 0.88 * rw * rh or cv2.contourArea(mm32) < 0.3 * rw * rh:
            return None
        box_mm = cv2.boxPoints(((cx, cy), (rw, rh), angle)).astype(np.float64)
        box_px = cv2.perspectiveTransform(box_mm.reshape(-1, 1, 2), self._to_image).reshape(-1, 2)
        return order_portrait(box_px), (float(cx), float(cy))


class Recognizer:
    """Reads the cards of frames from one calibrated camera over one layout."""

    def __init__(self, calibration: Calibration, layout: Layout, threshold: float = DEFAULT_THRESHOLD,
                 min_score: float = DEFAULT_MIN_SCORE, size_tolerance: float = 0.15,
                 min_z: float = DEFAULT_MIN_Z):
        self.calibration = calibration
        self.min_z = min_z
        self.layout = layout
        self.threshold = threshold
        self.min_score = min_score
        self.finder = CardFinder(calibration.table, layout, size_tolerance)

    def recognize(self, frame: np.ndarray) -> list[CardReading]:
        """Every card on the table in ``frame`` (BGR), read or marked as a no-read."""
        with one_blas_thread():
            return self._recognize(frame)

    def _passes(self, r: Reading) -> bool:
        return r.score >= self.min_score and r.margin >= self.threshold and r.z >= self.min_z

    def _read(self, frame: np.ndarray, outlines: list[np.ndarray]) -> tuple[Reading, np.ndarray, bool]:
        """Read a card from its first outline; a doubtful read is checked against the card's
        other outlines (from other masks), and any of them leaning to another code makes the
        card a no-read: a read must not hang on where the card's edge was cut."""
        templates = self.calibration.templates
        corners = outlines[0]
        r = templates.read(warp_card(frame, corners))
        if r.margin >= SURE_MARGIN and self._passes(r) or len(outlines) == 1:
            return r, corners, self._passes(r)
        reads = [(r, corners)] + [(templates.read(warp_card(frame, o)), o) for o in outlines[1:]]
        codes = {x.code for x, _ in reads if x.score >= self.min_score}
        best, best_corners = max(reads, key=lambda rc: (self._passes(rc[0]), rc[0].margin))
        return best, best_corners, self._passes(best) and len(codes) == 1

    def _recognize(self, frame: np.ndarray) -> list[CardReading]:
        readings = []
        for outlines in self.finder.find_card_outlines(frame):
            r, corners, ok = self._read(frame, outlines)
            if r.flipped:
                corners = np.roll(corners, 2, axis=0)
            centre = self.finder.to_table(corners.mean(axis=0))
            slot = self.layout.slot_at(*centre)
            confidence = r.margin if r.score >= self.min_score else 0.0
            readings.append(CardReading(
                code=r.code if ok else None,
                confidence=float(confidence),
                corners=[(float(x), float(y)) for x, y in corners],
                position=slot.name if slot else None,
                centre_mm=centre,
            ))
        return readings
