"""The small changes the recognition benchmark reads its frames again under (``--perturb``):
each keeps the frame's size and type and changes it as its name says."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from firmware_interfaces.camera.perturbations import PERTURBATIONS, noisy, perturbation, reencoded, shifted, turned


def _dot(at: tuple[int, int]) -> np.ndarray:
    frame = np.full((90, 160, 3), 40, np.uint8)
    frame[at[1], at[0]] = 255
    return frame


def _where(frame: np.ndarray) -> tuple[float, float]:
    weight = frame[:, :, 0].astype(np.float64) - 40
    ys, xs = np.indices(weight.shape)
    return float((xs * weight).sum() / weight.sum()), float((ys * weight).sum() / weight.sum())


def test_every_perturbation_keeps_the_frames_size_and_type_and_changes_it() -> None:
    rng = np.random.default_rng(1)
    frame = rng.integers(0, 256, (72, 128, 3), dtype=np.uint8)
    for name, perturb in PERTURBATIONS.items():
        out = perturb(frame, 3)
        assert out.shape == frame.shape and out.dtype == frame.dtype, name
        assert not np.array_equal(out, frame), name


def test_a_shift_moves_the_picture_by_its_pixels() -> None:
    x, y = _where(shifted(2.0, -2.0)(_dot((50, 40)), 0))
    assert (x, y) == pytest.approx((52.0, 38.0), abs=1e-6)
    x, y = _where(shifted(-2.0, 1.5)(_dot((50, 40)), 0))
    assert (x, y) == pytest.approx((48.0, 41.5), abs=0.05)


def test_a_turn_moves_a_point_about_the_middle_anticlockwise() -> None:
    x, y = _where(turned(0.3)(_dot((150, 45)), 0))  # 70 px right of the middle (80, 45)
    assert x == pytest.approx(80 + 70 * np.cos(np.radians(0.3)), abs=0.05)
    assert y == pytest.approx(45 - 70 * np.sin(np.radians(0.3)), abs=0.05)  # up: image y runs down


def test_noise_is_drawn_from_the_seed_at_its_sigma_and_rounded() -> None:
    frame = np.full((80, 80, 3), 128, np.uint8)
    noise = PERTURBATIONS["noise-2"]
    assert np.array_equal(noise(frame, 5), noise(frame, 5))
    assert not np.array_equal(noise(frame, 5), noise(frame, 6))
    assert np.array_equal(noise(frame, 5), noisy(2.0)(frame, 5))  # the name is what it says
    for sigma in (1.0, 2.0, 4.0):
        seen = noisy(sigma)(frame, 7).astype(np.float64) - 128
        # rounding adds 1/12 of a grey level's variance; cutting instead would take half a level off
        assert abs(float(seen.std()) - np.sqrt(sigma**2 + 1 / 12)) < 0.05 * sigma, sigma
        assert abs(float(seen.mean())) < 0.1, sigma


def test_each_name_is_the_change_it_says() -> None:
    x, y = _where(PERTURBATIONS["shift-1"](_dot((50, 40)), 0))
    assert (x, y) == pytest.approx((51.0, 41.0), abs=1e-6)
    x, y = _where(PERTURBATIONS["shift-2"](_dot((50, 40)), 0))
    assert (x, y) == pytest.approx((52.0, 38.0), abs=1e-6)
    x, y = _where(PERTURBATIONS["zoom-0.6"](_dot((150, 45)), 0))  # 70 px right of the middle
    assert (x, y) == pytest.approx((80 + 70 * 1.006, 45.0), abs=0.05)
    # JPEG at 90 loses less of a textured frame than at 50
    rng = np.random.default_rng(2)
    frame = cv2.GaussianBlur(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8), (0, 0), 1.5)
    at_90 = np.abs(PERTURBATIONS["jpeg-90"](frame, 0).astype(np.int16) - frame).mean()
    at_50 = np.abs(reencoded(50)(frame, 0).astype(np.int16) - frame).mean()
    assert 0 < at_90 < 0.7 * at_50


def test_an_unknown_name_is_refused_naming_the_known_ones() -> None:
    assert perturbation("jpeg-90") is PERTURBATIONS["jpeg-90"]
    with pytest.raises(ValueError, match="shift-1"):
        perturbation("shake")
