"""The technician's overlay: table outline, slots and every card read, drawn on a frame."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import cv2
import numpy as np

from calibration.layout import Layout
from calibration.table import TablePlane

if TYPE_CHECKING:
    from firmware_interfaces.camera.recognizer import CardReading

GREEN, RED, YELLOW, CYAN = (60, 220, 60), (40, 40, 235), (0, 215, 255), (230, 200, 40)


def draw_overlay(frame: np.ndarray, plane: TablePlane, layout: Layout,
                 readings: Sequence[CardReading]) -> np.ndarray:
    """A copy of ``frame`` with the table outline (cyan), slots (yellow) and cards:
    green with code and confidence when read, red ``NO-READ`` otherwise."""
    out = frame.copy()
    outline = plane.to_image(layout.outline_mm).astype(np.int32)
    cv2.polylines(out, [outline], True, CYAN, 2, cv2.LINE_AA)
    for s in layout.slots:
        rect = plane.to_image([(s.x, s.y), (s.x + s.w, s.y), (s.x + s.w, s.y + s.h), (s.x, s.y + s.h)])
        cv2.polylines(out, [rect.astype(np.int32)], True, YELLOW, 1, cv2.LINE_AA)
        x, y = rect[3]
        cv2.putText(out, s.name, (int(x), int(y) + 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, YELLOW, 1, cv2.LINE_AA)
    for r in readings:
        quad = np.array(r.corners, dtype=np.int32)
        colour = GREEN if r.code else RED
        cv2.polylines(out, [quad], True, colour, 2, cv2.LINE_AA)
        cv2.circle(out, tuple(int(v) for v in r.corners[0]), 4, colour, -1)
        label = f"{r.code} {r.confidence:.2f}" if r.code else f"NO-READ {r.confidence:.2f}"
        if r.position is None:
            label += " OFF-SLOT"
        x, y = quad.min(axis=0)
        cv2.putText(out, label, (int(x), max(12, int(y) - 6)), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(out, label, (int(x), max(12, int(y) - 6)), cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1, cv2.LINE_AA)
    return out
