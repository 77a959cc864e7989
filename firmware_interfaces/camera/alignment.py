"""Align a card's outline to the picture of its face (enhanced correlation, ECC).

The finder's outline of a card can be millimetres off: a printed slot line flush
with the card joins it, a court card's picture breaks its border, glare eats an
edge. The deck model reads a card well only from an outline within a pixel or
two of the truth. When a read is doubtful, the recogniser takes the face the
deck model thinks most likely and lets OpenCV's ECC (``cv2.findTransformECC``)
move the outline until the card's own print (index, pips, picture) lies where
that face has it: the card's content, not its edges, places it, so nothing
printed on the felt beside it can pull it. ECC's correlation is normalised, so
exposure and colour casts do not matter; both pictures are smoothed alike, so
camera blur matters less. The aligned outline is then read again and must pass
every test any other read passes: aligning to a face never names the card.
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.templates import CARD_SIZE

#: Canonical pixels of felt kept around the card, so the outline may move that far.
ALIGN_MARGIN = 24
#: Canonical pixels of the card's rim left out of the match (rounded corners, the edge itself).
ALIGN_RIM = 4
#: Coarse-to-fine: the first pass at half resolution catches outlines a few mm off. Few
#: iterations: 40 + 30 took 20 ms a card and read no card more than 15 + 5 (9 ms) on the
#: tuned-on decks' hard scenes (1,008 cards).
_CRITERIA_COARSE = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 15, 1e-4)
_CRITERIA_FINE = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 5, 1e-3)
#: Least correlation of the aligned card with the face for the alignment to count.
MIN_CORRELATION = 0.5
#: How far the warp may scale and stretch the outline it started from. The start may be of
#: another size and aspect than the card: a slot fit is the layout's card (63 x 88 mm), and
#: cards 56-64 mm wide lie on it; a bound of 1.10 on the stretch turned away the true
#: alignment of 16 of the 28 cards the tuned-on decks' hard scenes (seed 101, 1,008 cards)
#: left unread. What keeps the card's shape is the caller's check of the aligned outline in
#: millimetres of the table (``CardFinder.card_shaped``): an affine free to stretch once
#: squeezed a 7H's pip columns into a 9H's and a 4C's into a 2C's (a wrong read in the camera
#: soak).
SCALE_RANGE = (0.80, 1.25)
MAX_STRETCH = 1.30


def _padded_corners() -> np.ndarray:
    w, h, m = CARD_SIZE[0], CARD_SIZE[1], ALIGN_MARGIN
    return np.array([[m, m], [m + w, m], [m + w, m + h], [m, m + h]], np.float32)


def _template(face: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w, h, m = CARD_SIZE[0], CARD_SIZE[1], ALIGN_MARGIN
    gray = cv2.cvtColor(face, cv2.COLOR_BGR2GRAY) if face.ndim == 3 else face
    out = np.zeros((h + 2 * m, w + 2 * m), np.float32)
    out[m : m + h, m : m + w] = gray
    mask = np.zeros(out.shape, np.uint8)
    r = ALIGN_RIM
    mask[m + r : m + h - r, m + r : m + w - r] = 255
    return out, mask


def align_to_face(frame: np.ndarray, corners: np.ndarray, face: np.ndarray) -> np.ndarray | None:
    """The image outline (TL, TR, BR, BL, as read) of the card near ``corners`` that lines
    its print up with ``face`` (the canonical face picture, upright), or None when ECC does
    not converge or the aligned card correlates with the face less than
    :data:`MIN_CORRELATION`."""
    w, h, m = CARD_SIZE[0], CARD_SIZE[1], ALIGN_MARGIN
    size = (w + 2 * m, h + 2 * m)
    to_patch = cv2.getPerspectiveTransform(np.asarray(corners, np.float32), _padded_corners())
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    patch = cv2.warpPerspective(gray, to_patch, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    patch = patch.astype(np.float32)
    template, mask = _template(face)
    warp = np.eye(2, 3, dtype=np.float32)
    half = (size[0] // 2, size[1] // 2)
    try:
        # coarse: both halved (the shift found scaled back after); it may fail where the fine
        # pass alone does not, so its failure only means starting the fine pass from nothing
        coarse = warp.copy()
        cv2.findTransformECC(cv2.resize(template, half, interpolation=cv2.INTER_AREA),
                             cv2.resize(patch, half, interpolation=cv2.INTER_AREA), coarse, cv2.MOTION_AFFINE,
                             _CRITERIA_COARSE, cv2.resize(mask, half, interpolation=cv2.INTER_NEAREST), 5)
        coarse[:, 2] *= 2.0
        if np.isfinite(coarse).all():
            warp = coarse
    except cv2.error:
        pass
    try:
        cc, fine = cv2.findTransformECC(template, patch, warp, cv2.MOTION_AFFINE, _CRITERIA_FINE, mask, 5)
    except cv2.error:
        return None
    a = np.asarray(fine, np.float64)
    if not np.isfinite(a).all() or cc < MIN_CORRELATION:
        return None
    low, high = sorted(np.linalg.svd(a[:, :2], compute_uv=False))
    if not (SCALE_RANGE[0] <= low and high <= SCALE_RANGE[1] and high <= MAX_STRETCH * low):
        return None
    moved = _padded_corners().astype(np.float64) @ a[:, :2].T + a[:, 2]
    back = np.linalg.inv(to_patch)
    return cv2.perspectiveTransform(moved.reshape(-1, 1, 2), back).reshape(-1, 2)
