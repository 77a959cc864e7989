"""Whether the table in a frame still looks as it did in the last frame read in full.

A camera delivers 25-60 frames a second, and for nearly all of them nothing on
the table has moved: the cards lie still between the dealer's moves. Reading
such a frame again finds what the last read found, at the full cost of finding
and reading (about 100 ms on one core). :class:`ChangeDetector` compares a
small grey copy of the table's part of each frame (a pixel for 8 × 8 of the
frame, which averages the sensor's noise and JPEG's blocks away) with that of
the last frame read in full; the recogniser reuses that read while no pixel of
it moved by more than :data:`CHANGE_LEVEL`. A card laid, taken, slid by a
millimetre or turned over moves many such pixels far more; so does a hand
over the table. The comparison is always with the last frame read, never with
the previous frame, so a slow drift (the camera's auto-exposure) adds up and
is read. And every :data:`REFRESH_EVERY` frames one is read in full anyway.
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.table import TablePlane

#: Frame pixels per side of one pixel of the grey copy.
THUMB_SCALE = 8
#: Largest change (0..255) of one grey-copy pixel that is still "nothing moved". Measured on
#: the hard scenes' frames with fresh sensor noise (sigma 6) and JPEG (quality 55) per frame:
#: at most 4 (30 frames); a card slid by 1 mm: 14 or more (median 25).
CHANGE_LEVEL = 8.0
#: A frame is read in full at least this often however still the table is.
REFRESH_EVERY = 30


class ChangeDetector:
    """Compares each frame's table with that of the last frame read in full (see module doc)."""

    def __init__(self, plane: TablePlane, table_mm: tuple[float, float], level: float = CHANGE_LEVEL,
                 refresh_every: int = REFRESH_EVERY):
        self.level = level
        self.refresh_every = refresh_every
        w, h = plane.image_size
        self._size = (max(1, w // THUMB_SCALE), max(1, h // THUMB_SCALE))
        tw, th = table_mm
        corners = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], np.float64).reshape(-1, 1, 2)
        image = cv2.perspectiveTransform(corners, plane.table_to_image).reshape(-1, 2) / THUMB_SCALE
        mask = np.zeros((self._size[1], self._size[0]), np.uint8)
        cv2.fillConvexPoly(mask, np.round(image).astype(np.int32), 255)
        self._table = cv2.dilate(mask, np.ones((3, 3), np.uint8)) > 0
        self._reference: np.ndarray | None = None
        self._since = 0
        # the grey copy :meth:`unchanged` made last, and of which frame: remembering that very
        # frame (it moved, so it is read in full) does not make it again
        self._checked: tuple[np.ndarray, np.ndarray | None] | None = None

    def _thumb(self, frame: np.ndarray) -> np.ndarray | None:
        if frame.ndim != 3 or (frame.shape[1] // THUMB_SCALE, frame.shape[0] // THUMB_SCALE) != self._size:
            return None
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        return cv2.resize(gray, self._size, interpolation=cv2.INTER_AREA)

    def unchanged(self, frame: np.ndarray) -> bool:
        """True when nothing on the table moved since the last :meth:`remember` (and that was
        fewer than ``refresh_every`` frames ago)."""
        if self._reference is None or self._since + 1 >= self.refresh_every:
            return False
        thumb = self._thumb(frame)
        self._checked = (frame, thumb)
        if thumb is None:
            return False
        moved = cv2.absdiff(thumb, self._reference)[self._table]
        if moved.size and float(moved.max()) > self.level:
            return False
        self._since += 1
        self._checked = None
        return True

    def remember(self, frame: np.ndarray) -> None:
        """``frame`` was read in full: later frames are compared with it (the grey copy that
        :meth:`unchanged` made of this very array, if it was the last one checked, is kept)."""
        checked, self._checked = self._checked, None
        self._reference = checked[1] if checked is not None and checked[0] is frame else self._thumb(frame)
        self._since = 0

    def forget(self) -> None:
        """Compare with nothing: the next frame is read in full."""
        self._reference = None
        self._checked = None
