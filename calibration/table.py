"""The table plane: a homography from camera pixels to table millimetres.

Found from the four ArUco markers printed at the layout's corners
(:func:`calibrate_from_markers`, using every marker corner: 16 point pairs) or
from four points a technician clicks on the table outline, in the order
top-left, top-right, bottom-right, bottom-left of the layout
(:func:`calibrate_from_points`). Stored as ``table.json`` in a calibration
folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from calibration.errors import CalibrationError as CalibrationError  # where it was first defined
from calibration.errors import CalibrationFileError, LayoutError, TablePlaneError
from calibration.layout import Layout


@dataclass(frozen=True)
class TablePlane:
    """Homography ``image_to_table`` (3x3, pixels -> mm) for frames of ``image_size`` (w, h)."""

    image_to_table: np.ndarray
    image_size: tuple[int, int]
    layout_name: str = ""
    rms_error_mm: float = 0.0

    @property
    def table_to_image(self) -> np.ndarray:
        return np.linalg.inv(self.image_to_table)

    def to_table(self, points: np.ndarray | list) -> np.ndarray:  # type: ignore[type-arg]
        """Image points (N, 2) -> table mm (N, 2)."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.image_to_table).reshape(-1, 2)

    def to_image(self, points: np.ndarray | list) -> np.ndarray:  # type: ignore[type-arg]
        """Table mm (N, 2) -> image points (N, 2)."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.table_to_image).reshape(-1, 2)

    def to_dict(self) -> dict:  # type: ignore[type-arg]
        return {
            "image_to_table": self.image_to_table.tolist(),
            "image_size": list(self.image_size),
            "layout": self.layout_name,
            "rms_error_mm": round(self.rms_error_mm, 3),
        }

    def save(self, cal_dir: Path) -> Path:
        cal_dir.mkdir(parents=True, exist_ok=True)
        path = cal_dir / "table.json"
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: Path) -> TablePlane:
        """Read ``table.json``; raises :class:`CalibrationFileError` naming the file."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            h = np.array(data["image_to_table"], dtype=np.float64)
            size = data["image_size"]
            if h.shape != (3, 3) or len(size) != 2:
                raise ValueError("image_to_table must be 3x3 and image_size [w, h]")
            return cls(h, (int(size[0]), int(size[1])), str(data.get("layout", "")), float(data.get("rms_error_mm", 0)))
        except OSError as e:
            raise CalibrationFileError(f"cannot read table calibration {path}: {e.strerror}") from e
        except (ValueError, KeyError, TypeError) as e:
            raise CalibrationFileError(f"table calibration {path} is malformed: {e}") from e


def aruco_dictionary(name: str) -> cv2.aruco.Dictionary:
    const = getattr(cv2.aruco, name, None)
    if not isinstance(const, int):
        raise LayoutError(f"unknown ArUco dictionary {name!r} (e.g. DICT_4X4_50)")
    return cv2.aruco.getPredefinedDictionary(const)


def detect_markers(frame: np.ndarray, layout: Layout) -> dict[int, np.ndarray]:
    """The layout's markers found in ``frame``: id -> (4, 2) image corners (TL, TR, BR, BL)."""
    detector = cv2.aruco.ArucoDetector(aruco_dictionary(layout.markers.dictionary), cv2.aruco.DetectorParameters())
    gray = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    corners, ids, _ = detector.detectMarkers(gray)
    found: dict[int, np.ndarray] = {}
    if ids is None:
        return found
    for c, i in zip(corners, ids.ravel(), strict=False):
        if int(i) in layout.markers.ids:
            found[int(i)] = c.reshape(4, 2).astype(np.float64)
    return found


def calibrate_from_markers(frame: np.ndarray, layout: Layout) -> TablePlane:
    """Find the four corner markers and fit the table plane to their 16 corners.

    Raises :class:`TablePlaneError` naming the missing marker ids.
    """
    if not layout.markers.ids:
        raise TablePlaneError(f"layout {layout.name} has no markers: calibrate from four points (--points)")
    found = detect_markers(frame, layout)
    missing = [i for i in layout.markers.ids if i not in found]
    if missing:
        raise TablePlaneError(
            f"ArUco marker(s) {missing} of layout {layout.name} not found in the picture "
            f"(found {sorted(found)}); check the markers are in view and lit, or give --points"
        )
    img_pts: list[tuple[float, float]] = []
    mm_pts: list[tuple[float, float]] = []
    for k, marker_id in enumerate(layout.markers.ids):
        img_pts.extend(found[marker_id])
        mm_pts.extend(layout.markers.corners_mm(k))
    return _fit(np.array(img_pts), np.array(mm_pts), frame, layout)


def calibrate_from_points(points: list[tuple[float, float]], image_size: tuple[int, int], layout: Layout) -> TablePlane:
    """Table plane from the layout's four outline corners clicked in the image
    (top-left, top-right, bottom-right, bottom-left)."""
    if len(points) != 4:
        raise TablePlaneError(f"need exactly four points (TL, TR, BR, BL), got {len(points)}")
    img = np.array(points, dtype=np.float64)
    mm = np.array(layout.outline_mm, dtype=np.float64)
    if abs(cv2.contourArea(img.astype(np.float32))) < 100:
        raise TablePlaneError(f"the four points {points} do not enclose an area")
    return _fit(img, mm, None, layout, image_size)


def _fit(
    img: np.ndarray, mm: np.ndarray, frame: np.ndarray | None, layout: Layout,
    image_size: tuple[int, int] | None = None,
) -> TablePlane:
    h, _ = cv2.findHomography(img, mm, 0)
    if h is None:
        raise TablePlaneError("the points do not define a table plane (degenerate)")
    proj = cv2.perspectiveTransform(img.reshape(-1, 1, 2), h).reshape(-1, 2)
    rms = float(np.sqrt(np.mean(np.sum((proj - mm) ** 2, axis=1))))
    if frame is not None:
        image_size = (frame.shape[1], frame.shape[0])
    assert image_size is not None
    return TablePlane(h, image_size, layout.name, rms)
