"""Table calibration: the table plane (homography to millimetres), layouts, card templates."""

from calibration.layout import Layout, Slot, load_layout, slot_name, split_slot
from calibration.store import Calibration, load_calibration
from calibration.table import (
    CalibrationError,
    TablePlane,
    calibrate_from_markers,
    calibrate_from_points,
)
from calibration.templates import CardTemplates

__all__ = [
    "Calibration",
    "CalibrationError",
    "CardTemplates",
    "Layout",
    "Slot",
    "TablePlane",
    "calibrate_from_markers",
    "calibrate_from_points",
    "load_calibration",
    "load_layout",
    "slot_name",
    "split_slot",
]
