"""Small changes to a frame made after the table was calibrated, to read the same scene again.

A real camera's frames are never the frames the table was calibrated on: the mount shakes
a pixel or two, the stream is re-encoded, the sensor's noise is fresh. Each such change
moves the finder's outlines by about a pixel, and the hardest cards' reads move with them:
a set read with no wrong card may show one when read again a pixel off (docs/camera.md,
session 52). ``benchmarks/recognition.py --perturb`` reads its scored frames again under
these, with the calibration made on the unchanged table.

Each perturbation is chosen by name from :data:`PERTURBATIONS` and takes the frame and a
seed (for those that draw noise), returning a new frame of the same size.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

#: A perturbation: (frame, seed) -> a new frame of the same size and type.
Perturbation = Callable[[np.ndarray, int], np.ndarray]


def shifted(dx: float, dy: float) -> Perturbation:
    """The picture moved ``dx``, ``dy`` px (a mount's vibration); the edge repeated."""

    def perturb(frame: np.ndarray, seed: int) -> np.ndarray:
        h, w = frame.shape[:2]
        move = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
        return np.asarray(cv2.warpAffine(frame, move, (w, h), borderMode=cv2.BORDER_REPLICATE))

    return perturb


def turned(degrees: float, scale: float = 1.0) -> Perturbation:
    """The picture turned ``degrees`` anticlockwise about its middle and scaled (a camera
    knocked on its mount, or its zoom breathing)."""

    def perturb(frame: np.ndarray, seed: int) -> np.ndarray:
        h, w = frame.shape[:2]
        move = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, scale)
        return np.asarray(cv2.warpAffine(frame, move, (w, h), borderMode=cv2.BORDER_REPLICATE))

    return perturb


def reencoded(quality: int) -> Perturbation:
    """The frame encoded again as JPEG at ``quality`` (a stream passed on by another box)."""

    def perturb(frame: np.ndarray, seed: int) -> np.ndarray:
        ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if not ok:
            raise ValueError("JPEG encoding failed")
        return np.asarray(cv2.imdecode(data, cv2.IMREAD_UNCHANGED))

    return perturb


def noisy(sigma: float) -> Perturbation:
    """Fresh Gaussian sensor noise of ``sigma`` grey levels, drawn from ``seed``."""

    def perturb(frame: np.ndarray, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        noise = rng.normal(0.0, sigma, frame.shape)
        return np.clip(np.rint(frame.astype(np.float32) + noise), 0, 255).astype(np.uint8)  # rounded, not cut

    return perturb


#: The perturbations by name (the benchmark's ``--perturb`` takes these).
PERTURBATIONS: dict[str, Perturbation] = {
    "shift-1": shifted(1.0, 1.0),
    "shift-2": shifted(2.0, -2.0),
    "shift-2b": shifted(-2.0, 1.5),
    "turn-0.3": turned(0.3),
    "zoom-0.6": turned(0.0, 1.006),
    "jpeg-90": reencoded(90),
    "noise-2": noisy(2.0),
}


def perturbation(name: str) -> Perturbation:
    """The perturbation called ``name``; ValueError naming the known ones otherwise."""
    try:
        return PERTURBATIONS[name]
    except KeyError:
        raise ValueError(f"no perturbation {name!r}: known are {', '.join(PERTURBATIONS)}") from None
