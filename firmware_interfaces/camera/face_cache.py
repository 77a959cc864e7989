"""What is derived from a deck's face pictures, kept for every recogniser of that deck.

A recogniser asks, card after card, for the same few things of a face: its ink widened (what a
card read as it may show), its ink's parts, its grey picture, its alignment levels. They depend
on the face alone, and a deck's templates hand out the same read-only face array for a code
every time, so they are kept by that array, not by the recogniser: a table recalibrated (a new
recogniser over the same templates) does not make them again. The benchmark's frames are each
a table of their own; a fresh recogniser made the 3 or so face inks a frame asks for again,
0.13 ms each (session 63).

A face that can be written to, or a view of another array, is never kept: it may have changed
since (its bytes are the only safe key, and hashing them costs more than most derivations). A
read-only face is trusted to stay as it is: the templates never make one writable again. What
is derived is shared by every recogniser: an array derived is handed out read-only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

T = TypeVar("T")

#: Faces kept per cache: a deck's 52, and room for a second deck (a studio swaps decks).
KEPT_FACES = 128


class FaceCache(Generic[T]):
    """``derive(face)`` for a face picture, kept by the array while it is read-only and owns
    its data; emptied when more than :data:`KEPT_FACES` are kept."""

    def __init__(self, derive: Callable[[np.ndarray], T], kept: int = KEPT_FACES) -> None:
        self._derive = derive
        self._kept = kept
        # by the array's id, with the array itself: kept here, no other array can take its id
        self._known: dict[int, tuple[np.ndarray, T]] = {}

    def __call__(self, face: np.ndarray) -> T:
        if face.flags.writeable or face.base is not None:
            return self._derive(face)
        known = self._known.get(id(face))
        if known is not None:
            return known[1]
        derived = self._derive(face)
        if isinstance(derived, np.ndarray):
            derived.setflags(write=False)
        if len(self._known) >= self._kept:
            self._known.clear()
        self._known[id(face)] = (face, derived)
        return derived

    def __contains__(self, face: object) -> bool:
        """Whether ``face`` (the array itself) is kept."""
        known = self._known.get(id(face))
        return known is not None and known[0] is face

    def __len__(self) -> int:
        return len(self._known)

    def clear(self) -> None:
        self._known.clear()
