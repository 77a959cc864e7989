"""Cards that lay still since they were read, so that a frame reads only what moved.

While the dealer works, a frame is rarely still as a whole (a hand, an arm, a
card sliding in), so :class:`~firmware_interfaces.camera.change.ChangeDetector`
reads it in full, cards that have not moved included: 2-5 ms a card read at
once, 10-300 ms a card that needs the finer search and its alignments.
:class:`StillCards` keeps the cards the reader chose to keep (the recogniser:
cards read far past the margin limit), each with a small grey copy of where it
lay (the same copy the change detector makes: a pixel for 8 × 8 of the frame,
which averages sensor noise and JPEG blocks away). A card the finder finds
again where a kept card lay, over which no pixel of that copy moved by more
than :data:`~firmware_interfaces.camera.change.CHANGE_LEVEL` since it was read,
is reported as read then; at least every
:data:`~firmware_interfaces.camera.change.REFRESH_EVERY` frames it is read
again (:meth:`StillCards.due` tells the recogniser when a frame still as a whole
must be read all the same).

The comparison is with the frame that card was read in, never with the
previous frame, so a slow drift (the camera's auto-exposure) adds up and is
read. A card slid by a millimetre, turned, covered or touched by a hand moves
the copy far more (the change detector's measurements).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

import cv2
import numpy as np

from firmware_interfaces.camera.change import CHANGE_LEVEL, REFRESH_EVERY, THUMB_SCALE

Kept = TypeVar("Kept")


@dataclass
class _StillCard(Generic[Kept]):
    """One card kept: what the reader made of it, where it lay (mm), which pixels of the grey
    copy it covered, that copy then, and how many frames ago it was read."""

    kept: Kept
    centre_mm: tuple[float, float]
    region: np.ndarray  # bool, the grey copy's shape
    then: np.ndarray  # the grey copy of the frame it was read in
    age: int = 0


class StillCards(Generic[Kept]):
    """The cards of the last frames, each kept until it moves or is due to be read again.

    ``Kept`` is whatever the reader keeps of a card (the recogniser keeps its look); two
    centres nearer than ``same_card_mm`` are one card."""

    def __init__(self, image_size: tuple[int, int], same_card_mm: float, level: float = CHANGE_LEVEL,
                 refresh_every: int = REFRESH_EVERY):
        w, h = image_size
        self._size = (max(1, w // THUMB_SCALE), max(1, h // THUMB_SCALE))
        self.same_card_mm = same_card_mm
        self.level = level
        self.refresh_every = refresh_every
        self._cards: list[_StillCard[Kept]] = []
        self._now: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self._cards)

    def look_at(self, frame: np.ndarray) -> None:
        """Make the grey copy of ``frame``, the frame the next calls are about."""
        self._now = None
        if frame.ndim != 3 or (frame.shape[1] // THUMB_SCALE, frame.shape[0] // THUMB_SCALE) != self._size:
            return  # another size: nothing kept matches it
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        self._now = cv2.resize(gray, self._size, interpolation=cv2.INTER_AREA)

    def still(self, centre_mm: tuple[float, float]) -> Kept | None:
        """What was kept of the card lying at ``centre_mm`` in this frame, if it lay there when
        it was read, has not moved since, and is not due to be read again; else None."""
        if self._now is None:
            return None
        for card in self._cards:
            if np.hypot(card.centre_mm[0] - centre_mm[0], card.centre_mm[1] - centre_mm[1]) >= self.same_card_mm:
                continue
            if card.age + 1 >= self.refresh_every:
                return None
            moved = cv2.absdiff(self._now, card.then)[card.region]
            return card.kept if moved.size == 0 or float(moved.max()) <= self.level else None
        return None

    def remember(self, cards: list[tuple[Kept, tuple[float, float], list[np.ndarray]]]) -> None:
        """This frame's cards to keep, each as (what to keep, its centre in mm, its outlines in
        image px). A card :meth:`still` gave (the very object) keeps its first grey copy and
        grows a frame older; the others start afresh. Cards not given are forgotten."""
        now = self._now
        old = {id(card.kept): card for card in self._cards}
        kept: list[_StillCard[Kept]] = []
        for what, centre, outlines in cards:
            before = old.get(id(what))
            if before is not None:
                before.age += 1
                kept.append(before)
            elif now is not None:
                kept.append(_StillCard(what, centre, self._region(outlines), now))
        self._cards = kept

    def due(self) -> bool:
        """Whether a kept card is due to be read again in the next frame (so that a frame still
        as a whole is read all the same: no card goes longer unread)."""
        return any(card.age + 1 >= self.refresh_every for card in self._cards)

    def grow_older(self) -> None:
        """A frame went by that was not looked at card by card (nothing on the table moved)."""
        for card in self._cards:
            card.age += 1

    def forget(self) -> None:
        """Keep nothing: every card of the next frame is read."""
        self._cards = []

    def _region(self, outlines: list[np.ndarray]) -> np.ndarray:
        """The grey copy's pixels a card covers: the hull of its outlines, and a pixel around."""
        mask = np.zeros((self._size[1], self._size[0]), np.uint8)
        points = np.concatenate([np.asarray(o, np.float64).reshape(-1, 2) for o in outlines]) / THUMB_SCALE
        hull = cv2.convexHull(np.round(points).astype(np.int32))
        cv2.fillConvexPoly(mask, hull, 1)
        return cv2.dilate(mask, np.ones((3, 3), np.uint8)) > 0
