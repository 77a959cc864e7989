"""Table calibration: the table plane (homography to millimetres), layouts, card templates."""

from calibration.errors import (
    CalibrationError,
    CalibrationFileError,
    CaptureError,
    LayoutError,
    TablePlaneError,
)
from calibration.layout import Layout, Slot, load_layout, slot_name, split_slot
from calibration.store import Calibration, load_calibration
from calibration.table import TablePlane, calibrate_from_markers, calibrate_from_points
from calibration.templates import CardTemplates

__all__ = [
    "Calibration",
    "CalibrationError",
    "CalibrationFileError",
    "CaptureError",
    "CardTemplates",
    "Layout",
    "LayoutError",
    "Slot",
    "TablePlane",
    "TablePlaneError",
    "calibrate_from_markers",
    "calibrate_from_points",
    "load_calibration",
    "load_layout",
    "slot_name",
    "split_slot",
]
