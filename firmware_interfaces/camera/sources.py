"""Camera sources behind one interface: ``read()`` a BGR frame or ``None``.

``None`` means no frame now (camera unplugged, stream stalled, end of a
file): the controller raises ``camera-down`` rather than guessing.
Backends are picked by name (``opencv``, ``files``, ``sim``) from
:data:`CAMERA_SOURCES` through :func:`open_source`, importing lazily.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

import cv2
import numpy as np

from firmware_interfaces.errors import DeviceConfigError
from firmware_interfaces.registry import BackendRegistry

log = logging.getLogger(__name__)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")


@runtime_checkable
class CameraSource(Protocol):
    """Anything that yields camera frames."""

    def read(self) -> np.ndarray | None: ...

    def close(self) -> None: ...


class VideoCaptureSource:
    """``cv2.VideoCapture`` on a device index (``0``), an RTSP/HTTP URL or a video file
    (or a numbered image sequence such as ``frame_%04d.png``)."""

    def __init__(self, target: int | str):
        if isinstance(target, str) and target.isdigit():
            target = int(target)
        self.target = target
        self._cap = cv2.VideoCapture(target)
        if not self._cap.isOpened():
            raise DeviceConfigError(f"camera {target!r} cannot be opened")

    def read(self) -> np.ndarray | None:
        ok, frame = self._cap.read()
        if not ok:
            log.warning("camera %r gave no frame", self.target)
            return None
        return frame

    def close(self) -> None:
        self._cap.release()


class ImageFolderSource:
    """The images of a folder in name order, one per ``read()``; ``None`` after the last
    (or forever round and round with ``loop=True``)."""

    def __init__(self, folder: str | Path, loop: bool = False):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise DeviceConfigError(f"image folder {self.folder} does not exist")
        self.files = sorted(p for p in self.folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self.files:
            raise DeviceConfigError(f"image folder {self.folder} holds no images ({', '.join(IMAGE_SUFFIXES)})")
        self.loop = loop
        self._next = 0

    def read(self) -> np.ndarray | None:
        if self._next >= len(self.files):
            if not self.loop:
                return None
            self._next = 0
        path = self.files[self._next]
        self._next += 1
        frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if frame is None:
            log.warning("cannot read image %s", path)
        return frame

    def close(self) -> None:
        self._next = len(self.files)
        self.loop = False


def open_simulated_source(layout: str, deck: str = "svg-cards", **options: object) -> CameraSource:
    """A :class:`~firmware_interfaces.camera.simulated.SimulatedCamera` over layout ``layout``
    with deck design ``deck`` (``options``: its keyword arguments, e.g. ``seed``)."""
    from calibration.layout import load_layout
    from firmware_interfaces.camera.deck_art import load_deck
    from firmware_interfaces.camera.simulated import SimulatedCamera

    return SimulatedCamera(load_layout(layout), load_deck(deck), **options)  # type: ignore[arg-type]


#: Camera source name -> "module:factory" of ``factory(target, **options)`` (imported lazily).
CAMERA_SOURCES: BackendRegistry[Callable[..., CameraSource]] = BackendRegistry("camera source", {
    "opencv": "firmware_interfaces.camera.sources:VideoCaptureSource",
    "files": "firmware_interfaces.camera.sources:ImageFolderSource",
    "sim": "firmware_interfaces.camera.sources:open_simulated_source",
})


def open_source(kind: str, target: str, **options: object) -> CameraSource:
    """Open camera source ``kind`` of :data:`CAMERA_SOURCES` on ``target``: ``opencv`` (device
    index, URL or video file), ``files`` (a folder; ``loop``), ``sim`` (a layout name; ``deck``
    and the :class:`SimulatedCamera`'s options). Raises UnknownBackend listing the known kinds."""
    return CAMERA_SOURCES.load(kind)(target, **options)
