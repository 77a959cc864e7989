"""Why a card was lost (``firmware_interfaces.camera.losses``): its print, the finder's
outline or the reader's tests, told apart with the ground truth in hand."""

from __future__ import annotations

import functools
from dataclasses import replace

import cv2
import numpy as np
import pytest
from cardart import deck_or_skip, templates_for

from calibration.layout import load_layout
from calibration.store import Calibration
from calibration.table import calibrate_from_markers
from firmware_interfaces.camera.finder import FoundCard
from firmware_interfaces.camera.losses import OUTLINE_OFF_SHARE, corner_distance, loss_cause
from firmware_interfaces.camera.recognizer import Recognizer
from firmware_interfaces.camera.scenes import Degradation, GeneratedFrame, TruthCard, generate_test_set

DECK = "svg-cards"


@functools.cache
def _table() -> tuple[GeneratedFrame, Recognizer]:
    tf = generate_test_set(deck_or_skip(DECK), [load_layout("baccarat")], 1, seed=5, off_layout_every=0,
                           empty_every=0, degradation=Degradation.mild())[0]
    rec = Recognizer(Calibration(calibrate_from_markers(tf.empty, tf.layout), templates_for(DECK)), tf.layout)
    return tf, rec


def _long_side(card: TruthCard) -> float:
    c = np.asarray(card.corners, np.float64)
    return float(np.hypot(*(c - np.roll(c, 1, axis=0)).T).max())


def test_corner_distance_matches_corners_in_any_cyclic_order() -> None:
    square = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], np.float64)
    assert corner_distance(np.roll(square, 2, axis=0), square) == 0.0
    assert corner_distance(square + (3, 4), square) == pytest.approx(5.0)


def test_a_card_found_on_its_outline_and_readable_is_lost_by_the_reader() -> None:
    tf, rec = _table()
    card = tf.scene.cards[0]
    lost = loss_cause(tf.scene.image, card, rec)
    assert (lost.cause, lost.truth_read, lost.truth_read_clear) == ("reader", card.code, True)
    assert lost.outline_off is not None and lost.outline_off <= OUTLINE_OFF_SHARE


def test_a_readable_card_the_finder_missed_or_outlined_off_is_lost_by_the_outline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    tf, rec = _table()
    card = tf.scene.cards[0]
    assert rec.fine_finder is not None
    monkeypatch.setattr(rec.finder, "find", lambda frame: [])
    monkeypatch.setattr(rec.fine_finder, "find_near", lambda frame, centres, surroundings: [])
    lost = loss_cause(tf.scene.image, card, rec)
    assert (lost.cause, lost.outline_off, lost.truth_read_clear) == ("outline", None, True)
    # an outline a tenth of the card's long side beside it: found, but off
    shifted = np.asarray(card.corners, np.float64) + (0.1 * _long_side(card), 0.0)
    monkeypatch.setattr(rec.finder, "find", lambda frame: [FoundCard([shifted])])
    lost = loss_cause(tf.scene.image, card, rec)
    assert lost.cause == "outline"
    assert lost.outline_off == pytest.approx(0.1)


def test_a_card_whose_print_is_gone_is_lost_by_its_print() -> None:
    tf, rec = _table()
    card = tf.scene.cards[0]
    frame = tf.scene.image.copy()
    # glare that burns the whole card white: no print left to read on any outline
    cv2.fillConvexPoly(frame, np.asarray(card.corners, np.int32), (255, 255, 255))
    lost = loss_cause(frame, card, rec)
    assert lost.cause == "print" and not lost.truth_read_clear


def test_only_a_nameable_card_can_be_lost() -> None:
    tf, rec = _table()
    hidden = TruthCard(None, tf.scene.cards[0].corners, None, (0.0, 0.0), {})
    with pytest.raises(ValueError):
        loss_cause(tf.scene.image, hidden, rec)


def _card_on_and_beside() -> tuple[GeneratedFrame, Recognizer, TruthCard, np.ndarray, np.ndarray]:
    """The table, its recogniser (with a second pass), its first card, the card's true outline
    and that outline a tenth of its long side to the right."""
    tf, rec = _table()
    card = tf.scene.cards[0]
    assert rec.fine_finder is not None
    on = np.asarray(card.corners, np.float64)
    return tf, rec, card, on, on + (0.1 * _long_side(card), 0.0)


def test_the_best_of_the_outlines_near_the_card_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    tf, rec, card, on, shifted = _card_on_and_beside()
    monkeypatch.setattr(rec.fine_finder, "find_near", lambda frame, centres, surroundings: [])
    monkeypatch.setattr(rec.finder, "find", lambda frame: [FoundCard([on]), FoundCard([shifted])])
    lost = loss_cause(tf.scene.image, card, rec)
    assert lost.cause == "reader" and lost.outline_off == pytest.approx(0.0, abs=1e-9)
    # any of a card's outlines counts, not only its first
    monkeypatch.setattr(rec.finder, "find", lambda frame: [FoundCard([shifted, on])])
    assert loss_cause(tf.scene.image, card, rec).cause == "reader"


def test_the_finer_search_around_the_card_counts_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # the reader of a doubtful card is given the second pass's finer outlines
    tf, rec, card, on, shifted = _card_on_and_beside()
    asked: list[list[tuple[float, float]]] = []
    rec.finder.find(tf.scene.image)  # the finer search takes the light this search found
    monkeypatch.setattr(rec.finder, "find", lambda frame: [FoundCard([shifted])])
    monkeypatch.setattr(rec.fine_finder, "find_near",
                        lambda frame, centres, surroundings: asked.append(centres) or [FoundCard([on])])
    lost = loss_cause(tf.scene.image, card, rec)
    assert lost.cause == "reader" and asked == [[card.centre_mm]]


def test_a_card_read_clearly_as_another_code_on_its_own_outline_is_lost_by_its_print(
        monkeypatch: pytest.MonkeyPatch) -> None:
    tf, rec = _table()
    card = tf.scene.cards[0]
    model = rec.calibration.templates.model
    other = next(code for code in ("2C", "3C") if code != card.code)
    read = model.read
    monkeypatch.setattr(model, "read", lambda picture: replace(read(picture), code=other, accepted=True))
    lost = loss_cause(tf.scene.image, card, rec)
    assert (lost.cause, lost.truth_read, lost.truth_read_clear) == ("print", other, False)
