"""Camera sources: a folder of images, cv2.VideoCapture on an image sequence, backends by name."""

from __future__ import annotations

import os

import cv2
import numpy as np
import pytest

from firmware_interfaces.camera.sources import CameraSource, ImageFolderSource, VideoCaptureSource, open_source
from firmware_interfaces.errors import DeviceConfigError


def _frames(folder, n: int = 3, pattern: str = "frame_{:04d}.png") -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    frames = []
    for i in range(n):
        img = np.full((48, 64, 3), 40 * (i + 1), np.uint8)
        cv2.imwrite(str(folder / pattern.format(i)), img)
        frames.append(img)
    return frames


def test_image_folder_gives_images_in_name_order_then_none(tmp_path) -> None:  # type: ignore[no-untyped-def]
    _frames(tmp_path)
    src = ImageFolderSource(tmp_path)
    assert isinstance(src, CameraSource)
    assert [int(src.read()[0, 0, 0]) for _ in range(3)] == [40, 80, 120]  # type: ignore[index]
    assert src.read() is None


def test_image_folder_loops_when_asked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    _frames(tmp_path, 2)
    src = open_source("files", str(tmp_path), loop=True)
    assert [int(src.read()[0, 0, 0]) for _ in range(3)] == [40, 80, 40]  # type: ignore[index]
    src.close()
    assert src.read() is None


def test_video_capture_reads_a_numbered_image_sequence(tmp_path) -> None:  # type: ignore[no-untyped-def]
    _frames(tmp_path, 3)
    src = VideoCaptureSource(str(tmp_path / "frame_%04d.png"))
    got = [src.read() for _ in range(4)]
    assert [int(f[0, 0, 0]) for f in got[:3]] == [40, 80, 120]  # type: ignore[index]
    assert got[3] is None
    src.close()


def test_a_camera_that_cannot_open_is_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    target = str(tmp_path / "nothing_%04d.png")
    with pytest.raises(DeviceConfigError, match="camera '.*nothing_%04d.png' cannot be opened"):
        VideoCaptureSource(target)


def test_an_empty_folder_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DeviceConfigError, match="holds no images"):
        ImageFolderSource(tmp_path)


def test_unknown_backend_is_named() -> None:
    with pytest.raises(DeviceConfigError, match="unknown camera source 'usb'; known: files, opencv, sim"):
        open_source("usb", "0")


@pytest.mark.skipif(not os.environ.get("TABLE_CONTROLLER_CAMERA"),
                    reason="set TABLE_CONTROLLER_CAMERA to a device index, URL or video file to test a real camera")
def test_a_real_camera_gives_colour_frames() -> None:
    src = VideoCaptureSource(os.environ["TABLE_CONTROLLER_CAMERA"])
    try:
        frame = src.read()
        assert frame is not None and frame.ndim == 3 and frame.shape[2] == 3
    finally:
        src.close()
