"""Overhead camera: sources (OpenCV, image folder, simulated), card recognition, stabilisation."""

from calibration.layout import Layout, load_layout, slot_name, split_slot
from calibration.store import Calibration, load_calibration
from firmware_interfaces.camera.recognizer import CardReading, Recognizer
from firmware_interfaces.camera.sources import (
    CAMERA_SOURCES,
    CameraSource,
    ImageFolderSource,
    VideoCaptureSource,
    open_source,
)
from firmware_interfaces.camera.stabilizer import Stabilizer, StableCard


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    # the simulated camera pulls in the scene renderer: import it only when asked for
    if name == "SimulatedCamera":
        from firmware_interfaces.camera.simulated import SimulatedCamera

        return SimulatedCamera
    raise AttributeError(name)


__all__ = [
    "Calibration",
    "CAMERA_SOURCES",
    "CameraSource",
    "CardReading",
    "ImageFolderSource",
    "Layout",
    "Recognizer",
    "SimulatedCamera",
    "StableCard",
    "Stabilizer",
    "VideoCaptureSource",
    "load_calibration",
    "load_layout",
    "open_source",
    "slot_name",
    "split_slot",
]
