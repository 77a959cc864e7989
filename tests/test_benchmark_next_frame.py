"""The recognition benchmark's ``next_frame`` timing: a table's next frame is read in full by
the recogniser that just read the table's previous frame, and its reads are compared with the
judged first read's (``benchmarks/recognition.py``, ``_next_frame_timing``)."""

from __future__ import annotations

import functools

import pytest
from benchmark_module import recognition_benchmark
from cardart import deck_or_skip, templates_for

from calibration.layout import load_layout
from firmware_interfaces.camera.scenes import DomainRandomisation, GeneratedFrame, generate_test_set

DECK = "kde-standard"


@functools.cache
def _scene() -> GeneratedFrame:
    r = DomainRandomisation(frame_sizes=((1280, 720),), glare_on_card_chance=0.0, motion_blur_chance=0.0)
    return generate_test_set(deck_or_skip(DECK), [load_layout("baccarat")], 1, seed=8, randomise=r,
                             off_layout_every=0, empty_every=0)[0]


def test_a_tables_next_frame_is_read_in_full_after_its_previous_frame() -> None:
    bench, tf, templates = recognition_benchmark(), _scene(), templates_for(DECK)
    first = bench._read_keys(bench._recognizer(tf, templates).recognize(tf.scene.image))
    assert len(first) == 6 and all(code != "-" for code, _ in first)
    out = bench._next_frame_timing([(tf, first), (tf, [("AS", "nowhere")]), (tf, first)], templates)
    assert out["frames_timed"] == 3
    # the previous frame is the same still table: without being told that something moved, the
    # recogniser would give its reads again instead of reading the frame
    assert out["frames_read_in_full"] == 3
    assert out["frames_read_as_first"] == 2
    assert out["ms_median"] > 0
    assert out["fps"] == pytest.approx(1000 / out["ms_median"], abs=0.1)


def test_no_frames_no_figures() -> None:
    assert recognition_benchmark()._next_frame_timing([], templates_for(DECK)) == {"frames_timed": 0}
