"""A still table is not read again: the recogniser reuses the last full read while nothing on
the table moved, and reads in full whatever moved, a frame of another size, or every 30th."""

from __future__ import annotations

import functools

import cv2
import numpy as np
import pytest
from cardart import deck_or_skip, templates_for

from calibration.layout import load_layout
from calibration.store import Calibration
from calibration.table import calibrate_from_markers
from firmware_interfaces.camera.change import REFRESH_EVERY
from firmware_interfaces.camera.finder import learn_empty_table
from firmware_interfaces.camera.recognizer import Recognizer
from firmware_interfaces.camera.scenes import DomainRandomisation, GeneratedFrame, generate_test_set

DECK = "kde-standard"


@functools.cache
def _scene() -> GeneratedFrame:
    r = DomainRandomisation(frame_sizes=((1280, 720),), glare_on_card_chance=0.0, motion_blur_chance=0.0)
    return generate_test_set(deck_or_skip(DECK), [load_layout("baccarat")], 1, seed=8, randomise=r,
                             off_layout_every=0, empty_every=0)[0]


def _recognizer(tf: GeneratedFrame, reuse: bool = True) -> Recognizer:
    plane = calibrate_from_markers(tf.empty, tf.layout)
    printed, empty = learn_empty_table(plane, tf.layout, tf.empty)
    return Recognizer(Calibration(plane, templates_for(DECK), printed=printed, empty_table=empty), tf.layout,
                      reuse_unchanged=reuse)


def _noisy(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The same scene as the camera's next frame: fresh sensor noise and JPEG."""
    n = np.clip(img.astype(np.float32) + rng.normal(0, 5, img.shape), 0, 255).astype(np.uint8)
    return cv2.imdecode(cv2.imencode(".jpg", n, [cv2.IMWRITE_JPEG_QUALITY, 60])[1], cv2.IMREAD_COLOR)


def _key(readings: list) -> list:  # type: ignore[type-arg]
    return sorted((r.code or "-", r.position or "-") for r in readings)


def test_a_still_table_is_read_once_and_its_cards_reported_every_frame() -> None:
    tf = _scene()
    rec = _recognizer(tf)
    rng = np.random.default_rng(1)
    first = rec.recognize(tf.scene.image)
    assert len(first) == 6
    for _ in range(10):
        assert _key(rec.recognize(_noisy(tf.scene.image, rng))) == _key(first)
    assert (rec.frames_read, rec.frames_reused) == (1, 10)


def test_a_card_taken_away_or_slid_by_a_millimetre_is_read_in_full() -> None:
    tf = _scene()
    rec = _recognizer(tf)
    rec.recognize(tf.scene.image)
    # slide the first card's picture 2 px (about 1.4 mm at this scale) to the right
    c = np.array(tf.scene.cards[0].corners)
    x0, y0 = np.floor(c.min(axis=0)).astype(int)
    x1, y1 = np.ceil(c.max(axis=0)).astype(int)
    slid = tf.scene.image.copy()
    slid[y0:y1, x0 + 2 : x1 + 2] = tf.scene.image[y0:y1, x0:x1]
    rec.recognize(slid)
    assert rec.frames_read == 2
    # every card taken away: the empty table, from the same camera
    assert rec.recognize(tf.empty) == []
    assert rec.frames_read == 3


def test_a_still_table_is_still_read_in_full_every_so_often() -> None:
    tf = _scene()
    rec = _recognizer(tf)
    for _ in range(2 * REFRESH_EVERY):
        rec.recognize(tf.scene.image)
    assert rec.frames_read == 2 and rec.frames_reused == 2 * REFRESH_EVERY - 2


def test_a_frame_of_another_size_is_refused_not_reused() -> None:
    tf = _scene()
    rec = _recognizer(tf)
    rec.recognize(tf.scene.image)
    with pytest.raises(ValueError, match="calibration is for"):
        rec.recognize(cv2.resize(tf.scene.image, (640, 360)))


def test_without_reuse_every_frame_is_read() -> None:
    tf = _scene()
    rec = _recognizer(tf, reuse=False)
    for _ in range(3):
        rec.recognize(tf.scene.image)
    assert (rec.frames_read, rec.frames_reused) == (3, 0)
