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

import numpy as np

from calibration.layout import Layout
from calibration.store import Calibration
from calibration.templates import one_blas_thread, warp_card
from firmware_interfaces.camera.finder import CardFinder, refine_outline

#: Default share of the deck model's own margin limit a read must reach (1 = the limit set
#: at calibration; raise it for more caution).
DEFAULT_THRESHOLD = 1.0
#: A read this many times past the margin limit needs no second look from other outlines.
SURE_MARGIN = 2.0
DEFAULT_MIN_SCORE = 0.65
DEFAULT_MIN_Z = 1.5


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
        self.finder = CardFinder(calibration.table, layout, size_tolerance, calibration.printed)

    def recognize(self, frame: np.ndarray) -> list[CardReading]:
        """Every card on the table in ``frame`` (BGR), read or marked as a no-read."""
        with one_blas_thread():
            return self._recognize(frame)

    def _read(self, frame: np.ndarray, outlines: list[np.ndarray]) -> tuple[str | None, float, np.ndarray]:
        """Read a card: the deck model decides, the templates' own read must agree, and a read
        that is not sure is checked against the card's other outlines (from other masks): any
        of them leaning to another code makes the card a no-read, because a read must not hang
        on where the card's edge was cut. Returns (code or None, confidence, corners as read)."""
        templates = self.calibration.templates
        model = templates.model
        reads = []
        outlines = [refine_outline(frame, outlines[0], self.layout.card_mm)] + outlines
        for corners in outlines:
            card = warp_card(frame, corners)
            m = model.read(card)
            as_read = np.roll(corners, 2, axis=0) if m.flipped else corners
            ok = m.accepted and m.margin >= self.threshold * model.min_margin
            if ok and m.margin >= SURE_MARGIN * self.threshold * model.min_margin:
                return m.code, _confidence(m.margin, model.min_margin), as_read
            # not sure: the templates' own read (a different method) must agree
            ok = ok and templates.read(card).code == m.code
            reads.append((m, ok, as_read))
        accepted = [(m, c) for m, ok, c in reads if ok]
        if not accepted or len({m.code for m, _, _ in reads if m.distance <= model.max_distance}) > 1:
            m, _, c = min(reads, key=lambda r: r[0].distance)
            return None, 0.0, c
        m, c = max(accepted, key=lambda mc: mc[0].margin)
        return m.code, _confidence(m.margin, model.min_margin), c

    def _recognize(self, frame: np.ndarray) -> list[CardReading]:
        readings = []
        for found in self.finder.find(frame):
            code, confidence, corners = self._read(frame, found.outlines)
            if found.fitted and code is None:
                continue
            centre = self.finder.to_table(corners.mean(axis=0))
            slot = self.layout.slot_at(*centre)
            readings.append(CardReading(
                code=code,
                confidence=float(confidence),
                corners=[(float(x), float(y)) for x, y in corners],
                position=slot.name if slot else None,
                centre_mm=centre,
            ))
        return readings


def _confidence(margin: float, min_margin: float) -> float:
    """0.5 at the deck model's margin limit, toward 1 as the read gets clearer."""
    return float(1.0 - 0.5 * min_margin / max(margin, min_margin))
