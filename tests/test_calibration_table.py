"""Table plane: from the ArUco markers of a rendered frame, from four points, stored and loaded."""

from __future__ import annotations

import random

import cv2
import numpy as np
import pytest
from cardart import deck_or_skip

from calibration.errors import CalibrationFileError
from calibration.layout import load_layout
from calibration.table import CalibrationError, TablePlane, calibrate_from_markers, calibrate_from_points
from firmware_interfaces.camera.scenes import Degradation, camera_homography, render_felt, render_scene


def _empty_frame(seed: int = 3):  # type: ignore[no-untyped-def]
    layout = load_layout("baccarat")
    rng = random.Random(seed)
    h = camera_homography(layout, rng)
    scene = render_scene(layout, deck_or_skip("svg-cards"), [], rng, Degradation(glare_chance=0.0),
                         table_to_image=h, felt=render_felt(layout, rng))
    return layout, h, scene.image


def test_markers_give_the_true_table_plane_within_a_millimetre() -> None:
    layout, true_h, frame = _empty_frame()
    plane = calibrate_from_markers(frame, layout)
    slot_centres = np.array([s.centre for s in layout.slots])
    truth_px = cv2.perspectiveTransform(slot_centres.reshape(-1, 1, 2), true_h).reshape(-1, 2)
    err_mm = np.linalg.norm(plane.to_table(truth_px) - slot_centres, axis=1)
    assert err_mm.max() < 1.0
    assert plane.image_size == (1280, 720)
    assert plane.rms_error_mm < 1.0


def test_missing_markers_are_named() -> None:
    layout, _, frame = _empty_frame()
    frame[:, 1280 // 2 :] = 30  # the right half (markers 1 and 2) goes dark
    with pytest.raises(CalibrationError, match=r"marker\(s\) \[1, 2\] of layout baccarat not found"):
        calibrate_from_markers(frame, layout)


def test_four_points_on_the_outline_give_the_plane() -> None:
    layout, true_h, _ = _empty_frame()
    corners_px = cv2.perspectiveTransform(np.array(layout.outline_mm).reshape(-1, 1, 2), true_h).reshape(-1, 2)
    plane = calibrate_from_points([tuple(p) for p in corners_px], (1280, 720), layout)
    np.testing.assert_allclose(plane.to_table(corners_px), layout.outline_mm, atol=1e-6)


def test_three_points_are_refused() -> None:
    with pytest.raises(CalibrationError, match="need exactly four points"):
        calibrate_from_points([(0, 0), (1, 0), (1, 1)], (1280, 720), load_layout("baccarat"))


def test_table_plane_round_trips_through_table_json(tmp_path) -> None:  # type: ignore[no-untyped-def]
    layout, _, frame = _empty_frame()
    plane = calibrate_from_markers(frame, layout)
    plane.save(tmp_path)
    loaded = TablePlane.load(tmp_path / "table.json")
    np.testing.assert_allclose(loaded.image_to_table, plane.image_to_table)
    assert (loaded.image_size, loaded.layout_name) == ((1280, 720), "baccarat")


def test_malformed_table_json_names_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "table.json").write_text('{"image_to_table": [[1, 0], [0, 1]], "image_size": [1280, 720]}')
    with pytest.raises(CalibrationFileError, match=r"table calibration .*table\.json is malformed"):
        TablePlane.load(tmp_path / "table.json")
