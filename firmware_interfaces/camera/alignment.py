"""Align a card's outline to the picture of its face (enhanced correlation, ECC, and its
objective by Gauss-Newton steps).

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

ECC costs: its Jacobian is rebuilt from the warped picture's gradients at every
iteration, about 1 ms an iteration at full size, 5-7 ms a card, and the recogniser
aligns a few cards a frame (measured: 40-60 % of a 720p frame's time). Where the
card shows its print, the same correlation is maximised by inverse-compositional
Gauss-Newton steps (:func:`_correlate`): the face's gradients and Hessian are
computed once a face and kept (:func:`_face_levels`), and the fine pass samples a
quarter of the card's pixels. Where the card is burnt white in part (by glare, or
a bright exposure clipping its paper: :data:`BURNT_SHARE` of it at
:data:`BURNT_GREY`), ECC aligns it, as before: there the Gauss-Newton steps
placed cards differently, and 2 fewer were read on a held-out design's
glare-burnt scenes.

Glare that burns part of a card to white hides its print there, and its light
falling off over the card drowns a match of the whole picture. Where the plain
match fails on such a card, :func:`align_under_glare` matches it again: first on
its print's fine detail (both pictures less their blur, :data:`ALIGN_HIGH_PASS`),
then on the print that still shows (``cv2.findTransformECCWithMask``, the burnt
pixels left out), turned and shifted but not scaled: with half a card left out,
an affine warp squeezes the print into the half that shows (measured: scales of
0.44 to 0.73 on a glare-burnt 2D of a held-out design). An outline placed the
second way only serves to read a corner index: the face it shows may have lost
pips to the glare.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.templates import CARD_SIZE
from firmware_interfaces.camera.face_cache import FaceCache

#: Canonical pixels of felt kept around the card, so the outline may move that far.
ALIGN_MARGIN = 24
#: Canonical pixels of the card's rim left out of the match (rounded corners, the edge itself).
ALIGN_RIM = 4
#: Coarse-to-fine: the first pass at half resolution catches outlines a few mm off. Few
#: iterations: 40 + 30 took 20 ms a card and read no card more than 15 + 5 (9 ms) on the
#: tuned-on decks' hard scenes (1,008 cards).
_CRITERIA_COARSE = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 15, 1e-4)
_CRITERIA_FINE = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 5, 1e-3)
#: Both pictures are smoothed by a Gaussian of this many pixels first (ECC's default).
_SMOOTH = 5
#: The Gauss-Newton passes' most steps (:func:`_correlate`), coarse and fine. A fine step costs
#: about a fifth of an ECC iteration; from an outline 4 px off with no coarse pass to help, 5
#: fine steps left a card 2.3 px off, 10 steps 1.9 px.
_STEPS_COARSE = 15
_STEPS_FINE = 10
#: The fine Gauss-Newton pass samples every this many pixels each way (a quarter of them).
_FINE_STEP = 2
#: A Gauss-Newton step that moves no corner of the card more than this (in the pass's own
#: pixels: half-size ones in the coarse pass) has converged.
_CONVERGED_SHIFT = 0.05
#: Least share of the sampled pixels that must stay inside the patch.
_LEAST_INSIDE = 0.1
#: Face pictures whose Gauss-Newton levels are kept (a deck's 52, and some to spare).
_CACHED_FACES = 64
#: Sigma (canonical px) of the blur taken off both pictures to match a glare-lit card's fine
#: print: 4 and 8 both placed a held-out design's AC and 5C under a glare's fall-off that the
#: plain match could not (correlations 0.13-0.30). Over every card it cost alignments (of 18
#: cards a few mm off, 12 read instead of 16), so it is only the fallback under glare.
ALIGN_HIGH_PASS = 4.0
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
#: Grey level from which a pixel of the frame counts as burnt out by glare (its print lost).
BURNT_GREY = 245
#: Share of the card (within its rim) that must be burnt out before the burnt part is left out
#: of a match that failed over the whole card.
BURNT_SHARE = 0.03
#: Canonical pixels around the burnt part also left out: its edge is white-washed too.
BURNT_GROW = 2
#: The burnt part is left out only while this share of the card still shows: less, and what is
#: left (in a bright frame, the paper clips too and only the ink shows) no longer places it.
MIN_SHOWING = 0.15
#: Least correlation of a match on what still shows: at 0.5, an AS half burnt out was placed
#: 23 px off its print; every placing at 0.6 or more measured lay within 1.5 px.
MIN_MASKED_CORRELATION = 0.6


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
    """The image outline (TL, TR, BR, BL, as read) of the card near ``corners`` in ``frame``
    (BGR or grey: a caller aligning several cards converts it once) that lines
    its print up with ``face`` (the canonical face picture, upright), or None when the match
    fails or the aligned card correlates with the face less than
    :data:`MIN_CORRELATION`. ECC matches a card burnt white in part; Gauss-Newton steps
    match the others (see the module's notes)."""
    to_patch, patch = _patch(frame, corners)
    if _burnt(patch)[1] >= BURNT_SHARE:
        template, mask = _template(face)
        aligned = _match(template, patch.astype(np.float32), mask, None, cv2.MOTION_AFFINE)
    else:
        aligned = _match_face(face, patch.astype(np.float32))
    return None if aligned is None else _outline(aligned, to_patch)


def _burnt(patch: np.ndarray) -> tuple[np.ndarray, float]:
    """The pixels of ``patch`` (uint8) burnt out white (at :data:`BURNT_GREY`), and their
    share of the card within its rim."""
    mask = _rim_mask()
    burnt = cv2.threshold(patch, BURNT_GREY - 1, 255, cv2.THRESH_BINARY)[1]
    return burnt, cv2.countNonZero(cv2.bitwise_and(burnt, mask)) / cv2.countNonZero(mask)


@functools.lru_cache(maxsize=1)
def _rim_mask() -> np.ndarray:
    return _template(np.zeros((CARD_SIZE[1], CARD_SIZE[0]), np.uint8))[1]


def align_under_glare(frame: np.ndarray, corners: np.ndarray, face: np.ndarray) -> tuple[np.ndarray, bool] | None:
    """For a card :func:`align_to_face` could not align and glare has burnt out in part (at
    least :data:`BURNT_SHARE` of the start outline's inside at :data:`BURNT_GREY`; None
    otherwise): its outline, and
    whether it was placed on the print that still shows alone. First the print's fine detail
    is matched (both pictures high-passed, :data:`ALIGN_HIGH_PASS`: glare's light falls off
    smoothly over the card and drowns a match of the whole picture); failing that, the print
    that still shows (:data:`MIN_SHOWING` of the card at least), turned and shifted only
    (see the module's notes), to :data:`MIN_MASKED_CORRELATION`. None when neither aligns."""
    to_patch, patch = _patch(frame, corners)
    template, mask = _template(face)
    burnt, share = _burnt(patch)
    if share < BURNT_SHARE:
        return None
    card = cv2.countNonZero(mask)
    gray = patch.astype(np.float32)
    aligned = _match(_high_pass(template), _high_pass(gray), mask, None, cv2.MOTION_AFFINE)
    if aligned is not None:
        return _outline(aligned, to_patch), False
    if not hasattr(cv2, "findTransformECCWithMask"):
        return None  # OpenCV before 4.13 has no mask for the input picture
    grow = 2 * BURNT_GROW + 1
    # over the whole patch: a start millimetres off may put the burnt part in its margin
    showing = cv2.bitwise_not(cv2.dilate(burnt, np.ones((grow, grow), np.uint8)))
    if cv2.countNonZero(cv2.bitwise_and(showing, mask)) < MIN_SHOWING * card:
        return None
    aligned = _match(template, gray, mask, showing, cv2.MOTION_EUCLIDEAN, MIN_MASKED_CORRELATION)
    return None if aligned is None else (_outline(aligned, to_patch), True)


def _patch(frame: np.ndarray, corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The transform from the image to the padded canonical card of outline ``corners``, and
    the grey picture (uint8) there."""
    w, h, m = CARD_SIZE[0], CARD_SIZE[1], ALIGN_MARGIN
    to_patch = cv2.getPerspectiveTransform(np.asarray(corners, np.float32), _padded_corners())
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    patch = cv2.warpPerspective(gray, to_patch, (w + 2 * m, h + 2 * m), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REPLICATE)
    return to_patch, patch


def _outline(aligned: np.ndarray, to_patch: np.ndarray) -> np.ndarray:
    """The image outline of the card the warp ``aligned`` (2 x 3, padded canonical) places."""
    moved = _padded_corners().astype(np.float64) @ aligned[:, :2].T + aligned[:, 2]
    back = np.linalg.inv(to_patch)
    return cv2.perspectiveTransform(moved.reshape(-1, 1, 2), back).reshape(-1, 2)


def _high_pass(a: np.ndarray) -> np.ndarray:
    """``a`` less its blur at :data:`ALIGN_HIGH_PASS` (what varies slowly: glare, a gradient)."""
    out: np.ndarray = a - cv2.GaussianBlur(a, (0, 0), ALIGN_HIGH_PASS)
    return out


@dataclass(frozen=True)
class _Level:
    """What the Gauss-Newton steps need of a face's template at one resolution, computed once:
    the sampled pixels, their grey levels less their mean, and the steepest-descent images
    (the template's gradients times the affine warp's derivatives, less their means) with
    their Hessian."""

    x: np.ndarray
    y: np.ndarray
    centred: np.ndarray
    norm: float
    descent: np.ndarray
    hessian: np.ndarray
    #: the sampled area's four corners (3 x 4, homogeneous): how far a step moves them
    corners: np.ndarray
    #: what a step needs of the template alone while every sampled pixel lies in the patch:
    #: the template projected on the descent images, the Hessian solved for it, and the
    #: squared norm left over (computed once a face, not once a step)
    onto_template: np.ndarray
    solved: np.ndarray
    left_over: float
    #: the Hessian's inverse: a step's 6 x 6 solve as a product while every pixel lies in the patch
    hessian_inverse: np.ndarray

    @classmethod
    def of(cls, template: np.ndarray, mask: np.ndarray, step: int) -> _Level:
        smooth = cv2.GaussianBlur(template, (_SMOOTH, _SMOOTH), 0)
        gx = cv2.Sobel(smooth, cv2.CV_32F, 1, 0, ksize=1, scale=0.5)
        gy = cv2.Sobel(smooth, cv2.CV_32F, 0, 1, ksize=1, scale=0.5)
        sampled = np.zeros_like(mask)
        sampled[::step, ::step] = mask[::step, ::step]
        ys, xs = np.nonzero(sampled)
        tx, ty = gx[ys, xs], gy[ys, xs]
        x, y = xs.astype(np.float32), ys.astype(np.float32)
        # the parameters: the warp's 2 x 2 part column by column, then its shift (_step_warp)
        descent = np.stack([tx * x, ty * x, tx * y, ty * y, tx, ty], axis=1)
        descent = np.ascontiguousarray(descent - descent.mean(axis=0))  # the correlation ignores means
        values = smooth[ys, xs]
        centred = values - values.mean()
        x0, x1, y0, y1 = float(xs.min()), float(xs.max()), float(ys.min()), float(ys.max())
        corners = np.array([[x0, x1, x1, x0], [y0, y0, y1, y1], [1, 1, 1, 1]], np.float64)
        norm = float(np.sqrt(centred @ centred))
        hessian = (descent.T @ descent).astype(np.float64)
        onto_template = (descent.T @ centred).astype(np.float64)
        solved = np.linalg.solve(hessian, onto_template)
        level = cls(x, y, centred, norm, descent, hessian, corners, onto_template, solved,
                    norm * norm - float(onto_template @ solved), np.linalg.inv(hessian))
        for array in (x, y, centred, descent, hessian, corners, onto_template, solved, level.hessian_inverse):
            array.setflags(write=False)  # kept for every later alignment to this face
        return level


_IDENTITY = np.eye(3)
_IDENTITY.setflags(write=False)


def _affine_inverse(warp: np.ndarray) -> np.ndarray:
    """The inverse of a 3 x 3 affine warp (its last row 0, 0, 1), in closed form (a general
    inverse costs a step of the Gauss-Newton pass a sixth of its time)."""
    (a, b, tx), (c, d, ty) = warp[:2].tolist()
    det = a * d - b * c
    if det == 0.0:
        raise np.linalg.LinAlgError("a singular step")
    ia, ib, ic, id_ = d / det, -b / det, -c / det, a / det
    return np.array([[ia, ib, -(ia * tx + ib * ty)], [ic, id_, -(ic * tx + id_ * ty)], [0.0, 0.0, 1.0]])


def _step_warp(dp: np.ndarray) -> np.ndarray:
    """The 3 x 3 affine warp of parameters ``dp`` (see :class:`_Level`)."""
    return np.array([[1 + dp[0], dp[2], dp[4]], [dp[1], 1 + dp[3], dp[5]], [0, 0, 1]], np.float64)


def _correlate(level: _Level, patch: np.ndarray, warp: np.ndarray, steps: int) -> tuple[float, np.ndarray]:
    """Move ``warp`` (2 x 3, template to patch) for the template's sampled pixels to correlate
    best with ``patch``: ECC's objective, by inverse-compositional Gauss-Newton steps (Baker
    and Matthews), whose template gradients are computed once a face, not once an iteration.
    The correlation at the warp returned, and the warp. Raises ValueError when too little of
    the card stays in the patch, the picture is flat there, or a step would lower the
    correlation (uncorrelated); numpy's LinAlgError when a Hessian is singular."""
    smooth = cv2.GaussianBlur(patch, (_SMOOTH, _SMOOTH), 0)
    height, width = smooth.shape
    m = np.vstack([warp, [0.0, 0.0, 1.0]]).astype(np.float64)
    done = 0
    while True:
        a = m.astype(np.float32)
        mx = (a[0, 0] * level.x + a[0, 1] * level.y + a[0, 2]).reshape(1, -1)
        my = (a[1, 0] * level.x + a[1, 1] * level.y + a[1, 2]).reshape(1, -1)
        seen = cv2.remap(smooth, mx, my, cv2.INTER_LINEAR).ravel()
        # the sampled pixels span the corners of their area, so an affine warp puts them all in
        # the patch when it puts those four there (four values, not every pixel's, compared)
        at = a[:2] @ level.corners.astype(np.float32)
        if at.min() >= 0 and at[0].max() <= width - 1 and at[1].max() <= height - 1:
            # every sampled pixel in the patch: the template's part of the step is the level's own
            centred, norm, descent, hessian = level.centred, level.norm, level.descent, level.hessian
            onto_template: np.ndarray | None = level.onto_template
            solved, left_over = level.solved, level.left_over
            inverse: np.ndarray | None = level.hessian_inverse
            seen = seen - seen.mean()
        else:
            inside = ((mx >= 0) & (my >= 0) & (mx <= width - 1) & (my <= height - 1)).ravel()
            if inside.sum() < _LEAST_INSIDE * len(inside):
                raise ValueError("the card left the patch")
            centred = level.centred[inside] - level.centred[inside].mean()
            norm = float(np.sqrt(centred @ centred))
            descent = level.descent[inside] - level.descent[inside].mean(axis=0)
            hessian = (descent.T @ descent).astype(np.float64)
            seen = seen[inside] - seen[inside].mean()
            onto_template = inverse = None  # made below, if a step is taken
        seen_norm = float(np.sqrt(seen @ seen))
        if norm == 0 or seen_norm == 0:
            raise ValueError("a flat picture")
        correlation = float(centred @ seen) / (norm * seen_norm)
        if done == steps:
            return correlation, m[:2].astype(np.float32)
        if onto_template is None:
            onto_template = (descent.T @ centred).astype(np.float64)
            solved = np.linalg.solve(hessian, onto_template)
            left_over = norm * norm - float(onto_template @ solved)
        # ECC's step (Evangelidis and Psarakis, 2008) with the two pictures' parts swapped: the
        # template moved within what its steepest-descent images reach, and the patch scaled,
        # so that they correlate best
        onto_seen = (descent.T @ seen).astype(np.float64)
        reach = float(seen @ centred) - float(onto_seen @ solved)
        if reach <= 0:
            raise ValueError("uncorrelated: a step would lower the correlation")
        scale = left_over / reach
        rhs = scale * onto_seen - onto_template
        dp = inverse @ rhs if inverse is not None else np.linalg.solve(hessian, rhs)
        step = _step_warp(dp)
        m = m @ _affine_inverse(step)
        done += 1
        if np.abs((step - _IDENTITY)[:2] @ level.corners).max() < _CONVERGED_SHIFT:
            steps = done  # converged: the correlation at this warp, and stop


@functools.lru_cache(maxsize=_CACHED_FACES)
def _face_levels(picture: bytes, dtype: str, shape: tuple[int, ...]) -> tuple[_Level, _Level]:
    """The coarse (half size, every pixel) and fine (every :data:`_FINE_STEP` th pixel) levels
    of a face picture given by its bytes: a deck has 52 faces, each aligned again and again."""
    face = np.frombuffer(picture, np.dtype(dtype)).reshape(shape)
    template, mask = _template(face)
    size = (template.shape[1], template.shape[0])
    half = (size[0] // 2, size[1] // 2)
    coarse = _Level.of(cv2.resize(template, half, interpolation=cv2.INTER_AREA),
                       cv2.resize(mask, half, interpolation=cv2.INTER_NEAREST), 1)
    return coarse, _Level.of(template, mask, _FINE_STEP)


def _levels_by_bytes(face: np.ndarray) -> tuple[_Level, _Level]:
    """:func:`_face_levels` of ``face``, by its bytes. Raises numpy's LinAlgError for a face
    with nothing to align to (flat: its Hessian is singular)."""
    return _face_levels(np.ascontiguousarray(face).tobytes(), face.dtype.str, face.shape)


#: :func:`_face_levels` of a face, looked up by the array first when it is read-only and owns
#: its data: the templates hand out the same read-only array for a code every time, and making
#: :func:`_face_levels`'s key (the face's bytes, hashed) cost 0.2 ms an alignment. A face that
#: can be written to (or a view) is looked up by its bytes alone (it may have changed since).
_levels_of = FaceCache(_levels_by_bytes, _CACHED_FACES)


#: What a failed Gauss-Newton pass raises.
_FAILED = (ValueError, np.linalg.LinAlgError, cv2.error)


def _match_face(face: np.ndarray, patch: np.ndarray) -> np.ndarray | None:
    """:func:`_match` of the face's template (affine, over the card within its rim), by
    :func:`_correlate` on the face's levels (:func:`_face_levels`) instead of ECC: coarse,
    then fine from where the coarse pass ended, or from the outline as it was where it
    failed or diverged."""
    try:
        coarse_level, fine_level = _levels_of(face)
    except _FAILED:
        return None  # a face with nothing to align to
    half = (patch.shape[1] // 2, patch.shape[0] // 2)
    small = cv2.resize(patch, half, interpolation=cv2.INTER_AREA)
    start = np.eye(2, 3, dtype=np.float32)
    warp = start
    try:
        _, coarse = _correlate(coarse_level, small, start, _STEPS_COARSE)
        coarse[:, 2] *= 2.0
        if not _card_like(coarse):
            raise ValueError("diverged")
        warp = coarse
    except _FAILED:
        pass  # the fine pass starts from the outline as it was
    try:
        correlation, fine = _correlate(fine_level, patch, warp, _STEPS_FINE)
    except _FAILED:
        return None
    a = np.asarray(fine, np.float64)
    return a if correlation >= MIN_CORRELATION and _card_like(a) else None


def _match(template: np.ndarray, patch: np.ndarray, mask: np.ndarray, showing: np.ndarray | None,
           motion: int, min_correlation: float = MIN_CORRELATION) -> np.ndarray | None:
    """The warp (2 x 3) that lines ``patch`` up with ``template`` (over ``mask``, and where
    given only over the pixels of the patch that ``showing`` marks), or None."""
    size = (patch.shape[1], patch.shape[0])
    half = (size[0] // 2, size[1] // 2)

    def ecc(t: np.ndarray, p: np.ndarray, t_mask: np.ndarray, p_mask: np.ndarray | None, warp: np.ndarray,
            criteria: tuple[int, int, float]) -> tuple[float, np.ndarray]:
        if p_mask is None:
            return cv2.findTransformECC(t, p, warp, motion, criteria, t_mask, _SMOOTH)
        return cv2.findTransformECCWithMask(t, p, t_mask, p_mask, warp, motion, criteria, _SMOOTH)

    warp = np.eye(2, 3, dtype=np.float32)
    try:
        # coarse: both halved (the shift found scaled back after); it may fail where the fine
        # pass alone does not, so its failure, or a warp that scales or stretches past the
        # bounds (diverged: a high-passed upside-down 6H under a glare's fall-off came back
        # squeezed to 0.56), only means starting the fine pass from the outline as it was
        coarse = warp.copy()
        _, coarse = ecc(cv2.resize(template, half, interpolation=cv2.INTER_AREA),
                        cv2.resize(patch, half, interpolation=cv2.INTER_AREA),
                        cv2.resize(mask, half, interpolation=cv2.INTER_NEAREST),
                        None if showing is None else cv2.resize(showing, half, interpolation=cv2.INTER_NEAREST),
                        coarse, _CRITERIA_COARSE)
        coarse[:, 2] *= 2.0
        # the full size's bounds hold for the coarse warp: halving both pictures changes its
        # shift (scaled back above), not its linear part
        if _card_like(coarse):
            warp = coarse
    except cv2.error:
        pass
    try:
        cc, fine = ecc(template, patch, mask, showing, warp, _CRITERIA_FINE)
    except cv2.error:
        return None
    a = np.asarray(fine, np.float64)
    return a if cc >= min_correlation and _card_like(a) else None


def _card_like(warp: np.ndarray) -> bool:
    """Whether ``warp`` (2 x 3) is finite and scales and stretches the outline within
    :data:`SCALE_RANGE` and :data:`MAX_STRETCH`."""
    a = np.asarray(warp, np.float64)
    if not np.isfinite(a).all():
        return False
    low, high = sorted(np.linalg.svd(a[:, :2], compute_uv=False))
    return bool(SCALE_RANGE[0] <= low and high <= SCALE_RANGE[1] and high <= MAX_STRETCH * low)
