"""Failures found at benchmark seeds no session had run (session 70), kept as tests that are
expected to fail until they are fixed (``strict``: once one passes, the mark must go). Both
lie in scenes of the benchmark's own generator, and both reproduce on the tuned-on svg-cards as
on the held-out designs, so fixing them needs no held-out deck (docs/camera.md, session 70):

* a frame smeared 9 px by motion and blurred (sigma 1.59) at 720p, its hearts under glare, where
  a 3H and a 2H are read 3D and 2D (benchmark ``--seed 67 --special``: special scenes at seed
  68, frame 57). The deck model, its twin discriminant and both corner indexes lean to the
  diamond; the frame's smear is not measured, so no read is checked with it undone;
* an empty slot with a chip at its edge and a glare spot over it, reported as a card not read
  (seed 67, frame 46, 1080p): the empty felt's tests (its grain, its colour) fail under the
  glare's gradient."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cardart import deck_or_skip, templates_for

from calibration.layout import load_layout
from calibration.store import Calibration
from calibration.table import calibrate_from_markers
from firmware_interfaces.camera.finder import learn_empty_table
from firmware_interfaces.camera.recognizer import Recognizer
from firmware_interfaces.camera.scenes import DomainRandomisation, GeneratedFrame, generate_test_set
from firmware_interfaces.camera.scoring import match

DECK = "svg-cards"
#: The benchmark's layouts, in its order (a frame's number picks its layout).
GAMES = ("baccarat", "three-pictures", "three-face", "teen-patti-2020")


def benchmark_frame(seed: int, number: int, special: bool) -> GeneratedFrame:
    """Frame ``number`` of the benchmark's randomised set at ``seed`` (as ``scene_set`` makes it)."""
    r = DomainRandomisation.with_special_cards() if special else DomainRandomisation()
    return generate_test_set(deck_or_skip(DECK), [load_layout(g) for g in GAMES], 1, seed=seed,
                             randomise=replace(r, burnt_glare_chance=0.0), first=number)[0]


def outcomes_of(tf: GeneratedFrame) -> tuple[list[tuple[str | None, str, str | None]], list[str | None]]:
    """Each true card's (code, outcome, code read), and the positions of the phantoms, of the
    frame read as the benchmark reads it (calibrated from its own empty frame)."""
    plane = calibrate_from_markers(tf.empty, tf.layout)
    printed, empty_table = learn_empty_table(plane, tf.layout, tf.empty)
    rec = Recognizer(Calibration(plane, templates_for(DECK), printed=printed, empty_table=empty_table), tf.layout)
    readings = rec.recognize(tf.scene.image)
    outcomes, phantoms = match(tf.scene.cards, readings)
    return ([(t.code, outcome, None if r is None else r.code) for t, outcome, r in outcomes],
            [readings[k].position for k in phantoms])


@pytest.mark.xfail(strict=True, reason="hearts smeared 9 px at 720p read as diamonds (docs/camera.md, session 70)")
def test_smeared_hearts_under_glare_are_not_read_as_diamonds() -> None:
    tf = benchmark_frame(68, 57, special=True)
    assert tf.scene.meta["conditions"]["motion_blur_px"] == 9  # the scene this test was written for
    cards, _ = outcomes_of(tf)
    assert [c for c in cards if c[1] == "wrong"] == []


@pytest.mark.xfail(strict=True,
                   reason="an empty slot under glare with a chip reported as a card (docs/camera.md, session 70)")
def test_an_empty_slot_with_a_chip_under_glare_is_no_card() -> None:
    tf = benchmark_frame(67, 46, special=False)
    assert len(tf.scene.meta["conditions"]["chip_list"]) == 3  # the scene this test was written for
    cards, phantoms = outcomes_of(tf)
    assert phantoms == []
    assert all(outcome == "correct" for _, outcome, _ in cards)
