"""The darkest and the brightest of a BGR picture's channels, per pixel.

Whiteness (the darkest channel: paper is white in all three, ink and felt are not) is taken
of every frame's top-down view, of every card's patch and of every window a fit searches.
Minima over the channels' views (``img[:, :, 0]``...) cost OpenCV a copy of each, as they
are not contiguous. A picture's rows seen as rows of B, G, R, B, G, R... values, eroded
(or dilated) by three values across, hold each pixel's least (or greatest) channel at the
pixel's middle value: the same numbers, at a third of the cost on a 900 x 500 view."""

from __future__ import annotations

import cv2
import numpy as np

#: Three neighbouring values of a row: a pixel's B, G and R around its G.
_ACROSS = np.ones((1, 3), np.uint8)


def _erodes(img: np.ndarray) -> bool:
    """Whether OpenCV erodes ``img`` (three channels of a type it morphs, not empty)."""
    return img.shape[2] == 3 and img.size > 0 and img.dtype in (np.uint8, np.float32)


def darkest_channel(img: np.ndarray) -> np.ndarray:
    """Per pixel, the least of ``img``'s B, G and R (H x W x 3 or more: a fourth, alpha, is
    left out; uint8 or float32 by erosion, other types by numpy; a NaN may come out as
    either neighbour's value)."""
    img = img[:, :, :3]
    if not _erodes(img):
        return np.ascontiguousarray(img.min(axis=2))
    rows = img.reshape(img.shape[0], img.shape[1] * 3)
    return np.ascontiguousarray(cv2.erode(rows, _ACROSS)[:, 1::3])


def brightest_channel(img: np.ndarray) -> np.ndarray:
    """Per pixel, the greatest of ``img``'s B, G and R (as :func:`darkest_channel`)."""
    img = img[:, :, :3]
    if not _erodes(img):
        return np.ascontiguousarray(img.max(axis=2))
    rows = img.reshape(img.shape[0], img.shape[1] * 3)
    return np.ascontiguousarray(cv2.dilate(rows, _ACROSS)[:, 1::3])
