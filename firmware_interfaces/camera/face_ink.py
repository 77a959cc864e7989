"""Ink on a card that the face it was read as does not explain.

Glare adds light: it can lift a pip to nothing, so a 6H whose middle pips a pool of glare
washed out has a 4H's face, and reads as one, far past the margin limit (its indexes burnt
too). But glare never adds ink. A pip it left faint still stands out of the paper around it
where the 4H has only paper: ink the read face does not explain. A read whose card shows such
ink is not the card's (:func:`unexplained_ink`, asked by ``Recognizer`` of a doubtful read of a
pip card, and of a sure one whose runner-up has a pip or two more).

Ink is measured against the card's *local* paper (a morphological closing wider than a pip),
not one level for the card: glare's fall-off leaves the paper beside it darker than the paper
under it, and one level made that paper read as ink. The read face's ink is widened a little,
and the face is slid a few pixels each way (the best slide kept), so an outline a few pixels
off or a blurred pip's spread leaves nothing unexplained.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from firmware_interfaces.camera.channels import darkest_channel

#: Everything is worked at the canonical card's size divided by this (the card 56 px wide):
#: the slides are whole pixels there, and it costs a tenth of the full size.
SCALE = 2
#: The card's paper at a pixel: the closing of its whiteness by a square this wide (px at
#: :data:`SCALE`): wider than a pip (about 10 px) or an index, so the closing fills them.
PAPER_SQUARE = 15
#: The whiteness is smoothed by this sigma (px at SCALE) before the paper is taken from it.
NOISE_SIGMA = 1.0
#: The read face's ink is widened by this many px each way (a blurred pip spreads).
FACE_SPREAD = 2
#: The face is slid up to this many px each way (an outline a few px off); no more than RIM.
SLIDE = 3
#: Px of the card's edge left out (felt beside an outline a few px off is no ink): the rest,
#: 48 x 72 px, is cut into whole cells, none of it left out on one side only.
RIM = 4
#: Unexplained ink is averaged over cells this many px square (16 canonical px, a seventh of
#: the card's width); the largest cell mean is reported.
CELL = 8

#: :func:`ink_parts`: a face's ink is what is darker than this share of its paper, a rim of
#: PART_RIM px left out, worn down by PART_WEAR px each way to the cores of its pips and
#: glyphs (an outline a px or two off, or a blurred pip, still has its ink there), in parts of
#: at least PART_AREA canonical px. A thin index stroke wears away; what is left depends on
#: the design: a pip whole, or a club pip in two or three lobes (svg-cards, tigullio), and in
#: some designs the index's suit symbol too (kde-standard: 12-26 px).
PART_INK = 0.55
PART_RIM = 3
PART_WEAR = 2
PART_AREA = 12

_SQUARE = np.ones((PAPER_SQUARE, PAPER_SQUARE), np.uint8)
_SPREAD = np.ones((2 * FACE_SPREAD + 1, 2 * FACE_SPREAD + 1), np.uint8)


def whiteness(card: np.ndarray) -> np.ndarray:
    """A BGR picture's darkest channel per pixel: paper is white in all three, ink (red too) is
    dark in one at least."""
    return darkest_channel(card)


def ink(card: np.ndarray) -> np.ndarray:
    """How far each pixel of a canonical BGR card, shrunk :data:`SCALE` times, lies under its
    local paper (0 paper, 1 black): its :func:`whiteness` over the closing of it."""
    white = whiteness(card)
    small = cv2.resize(white, (white.shape[1] // SCALE, white.shape[0] // SCALE),
                       interpolation=cv2.INTER_AREA).astype(np.float32)
    # the closing is a local maximum: of a noisy picture it takes the noise's peaks for the paper,
    # and plain paper then shows ink (a dim, noisy 10H read right left 0.072 so, 0.056 smoothed)
    small = np.asarray(cv2.GaussianBlur(small, (0, 0), NOISE_SIGMA), np.float32)
    paper = cv2.blur(cv2.morphologyEx(small, cv2.MORPH_CLOSE, _SQUARE), (3, 3))
    return np.asarray(np.clip(1.0 - small / np.maximum(paper, 8.0), 0.0, 1.0), np.float32)


def explained(face: np.ndarray) -> np.ndarray:
    """The ink of a canonical face (:func:`ink`) widened by :data:`FACE_SPREAD`: the most ink a
    card read as that face may show at each pixel."""
    return np.asarray(cv2.dilate(ink(face), _SPREAD))


#: The face's slides, nearest first (a read that is right is most often explained at or near
#: no slide at all: :func:`unexplained_ink` stops at the first slide that explains enough).
_SLIDES = sorted(((dy, dx) for dy in range(-SLIDE, SLIDE + 1) for dx in range(-SLIDE, SLIDE + 1)),
                 key=lambda d: (d[0] ** 2 + d[1] ** 2, d))


def unexplained_ink(card: np.ndarray, face_ink: np.ndarray, ways: tuple[bool, ...] = (False, True),
                    enough: float = 0.0) -> float:
    """The most ink, averaged over a :data:`CELL`-px cell, that ``card`` (canonical BGR) shows
    beyond what the read face allows there (``face_ink``: :func:`explained` of the face), at
    the face's best slide within :data:`SLIDE` px and the best of ``ways`` up (True: the card
    lying turned 180° to the face; both by default: a pip card turned reads much as upright,
    and the read's own way up is not always its card's). The search stops at the first way
    and slide (nearest first) that leaves no more than ``enough``, and returns that."""
    seen = ink(card)
    if seen.shape != face_ink.shape:
        raise ValueError(f"card {card.shape[:2]} and face ink {face_ink.shape} are not of one canonical size")
    seen = seen[RIM:-RIM, RIM:-RIM]
    rows, cols = seen.shape[0] // CELL, seen.shape[1] // CELL
    h, w = rows * CELL, cols * CELL
    seen = np.ascontiguousarray(seen[:h, :w])
    least = np.inf
    for way in ways:
        face = np.ascontiguousarray(face_ink[::-1, ::-1]) if way else face_ink
        for dy, dx in _SLIDES:
            left = cv2.max(cv2.subtract(seen, face[RIM - dy : RIM - dy + h, RIM - dx : RIM - dx + w]), 0.0)
            # shrinking by whole cells with INTER_AREA is each cell's mean (a sixth of numpy's cost)
            least = min(least, cv2.minMaxLoc(cv2.resize(left, (cols, rows), interpolation=cv2.INTER_AREA))[1])
            if least <= enough:
                return float(least)
    return float(least)


@dataclass(frozen=True, eq=False)
class InkParts:
    """The cores of a canonical face's ink, each part labelled (:func:`ink_parts`)."""

    labels: np.ndarray  # int32, the canonical size: 0 where no part is, k in the k-th part
    areas: np.ndarray  # px of each part: areas[k] for label k (areas[0] unused)


def ink_parts(face: np.ndarray) -> InkParts:
    """The cores of a clean canonical face's ink (its pips, the thick of its glyphs), each a
    labelled part (:data:`PART_INK`, :data:`PART_WEAR`, :data:`PART_AREA`)."""
    white = whiteness(face).astype(np.float32)
    level = max(float(np.percentile(white, 92)), 8.0)
    inked = (white < PART_INK * level).astype(np.uint8)
    r = PART_RIM
    inked[:r, :] = 0
    inked[-r:, :] = 0
    inked[:, :r] = 0
    inked[:, -r:] = 0
    cores = cv2.erode(inked, np.ones((2 * PART_WEAR + 1, 2 * PART_WEAR + 1), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(cores, connectivity=8, ltype=cv2.CV_32S)
    areas = stats[:, cv2.CC_STAT_AREA].astype(np.float64)
    small = areas < PART_AREA
    small[0] = False
    labels = np.where(small[labels], 0, labels).astype(np.int32)
    areas[small] = 0.0
    areas[0] = 0.0  # the paper around the parts
    return InkParts(labels, areas)


def most_hidden_part(hidden: np.ndarray, parts: InkParts, turned: bool = False) -> float:
    """The largest share of any one of a face's ink parts (``parts``, :func:`ink_parts`) that
    lies where ``hidden`` (a canonical card's bool mask: burnt white, say) is set, the face
    turned 180° when ``turned``; 0 for a face with no parts."""
    if hidden.shape != parts.labels.shape:
        raise ValueError(f"mask {hidden.shape} and face parts {parts.labels.shape} are not of one canonical size")
    hidden = np.asarray(hidden, bool)  # a 0/255 mask would otherwise index rows, not pixels
    mask = hidden[::-1, ::-1] if turned else hidden
    counted = np.bincount(parts.labels[mask], minlength=len(parts.areas)).astype(np.float64)
    kept = parts.areas > 0
    if not kept.any():
        return 0.0
    return float((counted[kept] / parts.areas[kept]).max())
