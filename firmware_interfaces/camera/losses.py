"""Why a card the recogniser should have named was lost (for the benchmark and the tests).

A nameable card that ends a frame unread or unfound (``scoring.match``: ``no_read`` or
``missed``) is put to two questions, the ground truth in hand:

* does the deck model read it clearly on its *true* outline (its own code, within the
  model's distance and margin limits)? If not, the card's picture itself is lost (glare
  washed its print, blur or a hand): cause ``print``;
* if it does, does one of the finder's outlines near it lie on the card (every corner within
  :data:`OUTLINE_OFF_SHARE` of the card's long side)? The outlines asked are those the reader
  is given: every outline of the search of the whole frame and, where the recogniser has a
  second pass, of the finer search around the card. If none does (or the finder found nothing
  there), the outline lost it: cause ``outline``; if one does, the reader's own tests turned
  a readable card away: cause ``reader``.

``print`` also holds a card the deck model reads clearly as *another* code on its true outline
(``truth_read`` says which): the model's own confusion, not the finder's. It knows nothing of
games. Asking changes the recogniser's finders' state (they search the frame again).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calibration.templates import warp_card
from firmware_interfaces.camera.recognizer import Recognizer
from firmware_interfaces.camera.scenes import TruthCard

#: The finder's outline lies on the card when every corner lies within this share of the
#: card's long side of the true corner (5 %: about 4.4 mm on a bridge card, the reach of the
#: reader's own refinement of an outline).
OUTLINE_OFF_SHARE = 0.05
#: The finder's outline nearest a card counts as its outline when their centres lie within
#: this share of the card's long side.
NEAR_SHARE = 0.5
CAUSES = ("print", "outline", "reader")


@dataclass(frozen=True)
class LossCause:
    """Why one nameable card was lost in one frame (see the module's docstring)."""

    cause: str  # one of CAUSES
    truth_read: str  # the deck model's code on the card's true outline
    truth_read_clear: bool  # ... the card's own code, within the model's limits
    #: the best of the finder's outlines near the card: its farthest corner from the true one,
    #: as a share of the card's long side; None when the finder found nothing near the card
    outline_off: float | None

    def to_dict(self) -> dict[str, object]:
        return {"cause": self.cause, "truth_read": self.truth_read, "truth_read_clear": self.truth_read_clear,
                "outline_off": None if self.outline_off is None else round(self.outline_off, 3)}


def corner_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The largest distance between matching corners of two outlines (4 x 2), matched in the
    cyclic order that gives the least (an outline may start at any corner)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(min(np.hypot(*(np.roll(a, k, axis=0) - b).T).max() for k in range(4)))


def loss_cause(frame: np.ndarray, card: TruthCard, recognizer: Recognizer) -> LossCause:
    """Why ``card`` (a nameable card of ``frame``) was lost by ``recognizer``, which must be
    calibrated for ``frame``'s table (its finder searches the frame once more)."""
    if card.code is None:
        raise ValueError("only a card a reader may name can be lost")
    truth = np.asarray(card.corners, np.float64)
    model = recognizer.calibration.templates.model
    m = model.read(warp_card(frame, truth.astype(np.float32)))
    clear = m.accepted and m.code == card.code
    long_side = max(float(np.hypot(*(truth - np.roll(truth, 1, axis=0)).T).max()), 1.0)
    centre = truth.mean(axis=0)
    outlines = [o for found in recognizer.finder.find(frame) for o in found.outlines]
    surroundings = recognizer.finder.surroundings
    if recognizer.fine_finder is not None and surroundings is not None:
        near = recognizer.fine_finder.find_near(frame, [card.centre_mm], surroundings)
        outlines += [o for found in near for o in found.outlines]
    off: float | None = None
    for outline in outlines:
        if np.hypot(*(outline.mean(axis=0) - centre)) <= NEAR_SHARE * long_side:
            share = corner_distance(outline, truth) / long_side
            off = share if off is None else min(off, share)
    if not clear:
        cause = "print"
    elif off is None or off > OUTLINE_OFF_SHARE:
        cause = "outline"
    else:
        cause = "reader"
    return LossCause(cause, m.code, clear, off)
