"""Failures found at benchmark seeds no session had run (session 70), kept as tests that are
expected to fail until they are fixed (``strict``: once one passes, its mark must go). Both lie
in scenes of the benchmark's own generator and reproduce on the tuned-on svg-cards, so fixing
them needs no held-out deck (docs/camera.md, session 70):

* a frame smeared 9 px by motion and blurred (sigma 1.59) at 720p, its hearts under glare, where
  a 3H and a 2H are read 3D and 2D, on held-out tigullio as on svg-cards (benchmark ``--seed 67
  --special``: its special scenes are drawn at seed 68, frame 57). The deck model, its twin
  discriminant and both corner indexes lean to the diamond; the frame's smear is not measured,
  so no read is checked with it undone;
* an empty slot with a chip at its edge and a glare spot over it, reported as a card not read,
  on both held-out designs as on svg-cards (seed 67, frame 46, 1080p): the empty felt's tests
  (its grain, its colour) fail under the glare's gradient.

Each frame is made and read by the benchmark's own functions, but for the templates, which come
from the deck's faces directly (``cardart.templates_for``), not through image files as
``calibrate_like_a_studio`` makes them; the reads are the same. A separate test, expected to
pass, checks that the generator still makes the scenes these were found in (an xfail test's own
checks would fail silently)."""

from __future__ import annotations

import functools

import pytest
from benchmark_module import recognition_benchmark
from cardart import deck_or_skip, templates_for

from calibration.layout import load_layout
from firmware_interfaces.camera.recognizer import CardReading
from firmware_interfaces.camera.scenes import GeneratedFrame
from firmware_interfaces.camera.scoring import match

DECK = "svg-cards"
#: (seed, frame number, special scenes) of each scene.
SMEARED_HEARTS = (68, 57, True)
CHIP_UNDER_GLARE = (67, 46, False)


@functools.cache
def _benchmark_frame(seed: int, number: int, special: bool) -> GeneratedFrame:
    """Frame ``number`` of the benchmark's randomised set at ``seed``, made by its own ``scene_set``."""
    bench = recognition_benchmark()
    layouts = [load_layout(g) for g in bench.GAMES]
    frames: list[GeneratedFrame] = bench.scene_set(deck_or_skip(DECK), layouts, 1, seed, hard=True, special=special,
                                                   first=number)
    return frames[0]


def _read(tf: GeneratedFrame) -> list[CardReading]:
    """The frame read by a recogniser calibrated as the benchmark calibrates one (its ``_recognizer``)."""
    readings: list[CardReading] = recognition_benchmark()._recognizer(tf, templates_for(DECK)).recognize(tf.scene.image)
    return readings


def test_the_generator_still_makes_the_scenes_these_failures_were_found_in() -> None:
    """The smeared frame holds the 3H and the 2H at 720p; the chip's slot holds no card at 1080p."""
    hearts = _benchmark_frame(*SMEARED_HEARTS)
    assert hearts.scene.image.shape[:2] == (720, 1280)
    assert hearts.scene.meta["conditions"]["motion_blur_px"] == 9
    assert {("3H", "box1.2"), ("2H", "box1.3")} <= {(c.code, c.slot) for c in hearts.scene.cards}
    chip = _benchmark_frame(*CHIP_UNDER_GLARE)
    assert chip.scene.image.shape[:2] == (1080, 1920)
    assert "player3.3" not in {c.slot for c in chip.scene.cards}
    assert "player3.3" in {s.name for s in chip.layout.slots}


@pytest.mark.xfail(strict=True, reason="hearts smeared 9 px at 720p read as diamonds (docs/camera.md, session 70)")
def test_smeared_hearts_under_glare_are_not_read_as_diamonds() -> None:
    """Neither heart is given another code (left unread, it would be a loss, not a wrong read)."""
    tf = _benchmark_frame(*SMEARED_HEARTS)
    outcomes, _ = match(tf.scene.cards, _read(tf))
    hearts = {t.code: (outcome, None if r is None else r.code) for t, outcome, r in outcomes if t.code in ("3H", "2H")}
    assert hearts.keys() == {"3H", "2H"}
    assert all(outcome != "wrong" for outcome, _ in hearts.values()), hearts


@pytest.mark.xfail(strict=True,
                   reason="an empty slot under glare with a chip reported as a card (docs/camera.md, session 70)")
def test_an_empty_slot_with_a_chip_under_glare_is_no_card() -> None:
    """No card is reported where none lies."""
    tf = _benchmark_frame(*CHIP_UNDER_GLARE)
    readings = _read(tf)
    _, phantoms = match(tf.scene.cards, readings)
    assert [readings[k].position for k in phantoms] == []
