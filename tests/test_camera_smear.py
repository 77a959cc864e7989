"""Motion smear measured on the cards read and undone around the cards left unread
(firmware_interfaces/camera/smear.py, ``Recognizer._unsmeared_looks``)."""

from __future__ import annotations

import random
import types
from dataclasses import replace
from typing import Any

import cv2
import numpy as np
import pytest
from cardart import DECKS, calibration_for, deck_or_skip, templates_for

from calibration.deck_model import suit_twin
from calibration.layout import Layout, load_layout
from calibration.store import Calibration
from calibration.templates import warp_card
from firmware_interfaces.camera import recognizer as recognizer_module
from firmware_interfaces.camera import smear as smear_module
from firmware_interfaces.camera.recognizer import AGREEING_CONFIDENCE, Recognizer
from firmware_interfaces.camera.scene_effects import motion_kernel
from firmware_interfaces.camera.scenes import Degradation, PlacedCard, generate_test_set, render_scene
from firmware_interfaces.camera.smear import (
    GUESS_LENGTHS,
    MARGIN_PX,
    CardSpectra,
    Smear,
    card_smear,
    frame_smear,
    smear_guesses,
    unsmeared,
)

#: Three cards (image corners TL, TR, BR, BL) on a 640 x 360 frame, about 70 px wide as at 720p.
CARDS = {
    "7C": [(100, 120), (170, 118), (172, 218), (102, 220)],
    "QH": [(260, 110), (330, 114), (326, 214), (256, 210)],
    "4D": [(420, 130), (490, 130), (490, 230), (420, 230)],
}


def _continuous_line(length: float, angle: float) -> np.ndarray:
    """A straight smear as a moving camera makes it: a line drawn anti-aliased 8 times finer
    and shrunk by area (not the recogniser's own kernel)."""
    fine = 8
    size = (int(np.ceil(length)) + 3) | 1
    canvas = np.zeros((size * fine, size * fine), np.uint8)
    c, half = size * fine / 2, length * fine / 2
    dx, dy = np.cos(np.radians(angle)) * half, np.sin(np.radians(angle)) * half
    cv2.line(canvas, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 255, fine, cv2.LINE_AA)
    k = cv2.resize(canvas.astype(np.float32), (size, size), interpolation=cv2.INTER_AREA)
    return k / k.sum()


def _frame(faces: dict[str, np.ndarray], smear: tuple[int, float] | None, seed: int = 0,
           continuous: bool = False) -> np.ndarray:
    """The three cards on grey-green felt, optically blurred (sigma 0.8), smeared by a line
    ``smear`` (length px, degrees; the scene generator's kernel, or a ``continuous`` one) if
    given, noisy, JPEG 85."""
    frame = np.full((360, 640, 3), (70, 110, 60), np.float32)
    for code, corners in CARDS.items():
        face = faces[code]
        h, w = face.shape[:2]
        to = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]), np.float32(corners))
        warped = cv2.warpPerspective(face, to, (640, 360), flags=cv2.INTER_AREA)
        mask = cv2.warpPerspective(np.ones((h, w), np.float32), to, (640, 360))
        frame = frame * (1 - mask[..., None]) + warped.astype(np.float32) * 0.85 * mask[..., None]
    frame = cv2.GaussianBlur(frame, (0, 0), 0.8)
    if smear is not None:
        kernel = _continuous_line(*smear) if continuous else motion_kernel(*smear)
        frame = cv2.filter2D(frame, -1, kernel, borderType=cv2.BORDER_REFLECT)
    frame += np.random.default_rng(seed).normal(0, 2.0, frame.shape)
    out = np.clip(frame, 0, 255).astype(np.uint8)
    return cv2.imdecode(cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 85])[1], cv2.IMREAD_COLOR)


def _measured(deck_name: str, frame: np.ndarray) -> Smear | None:
    faces = templates_for(deck_name).faces
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    cards = [card_smear(gray, cv2.cvtColor(faces[c], cv2.COLOR_BGR2GRAY), np.array(q)) for c, q in CARDS.items()]
    return frame_smear([c for c in cards if c is not None])


@pytest.mark.parametrize("deck_name", DECKS)
@pytest.mark.parametrize(("length", "angle"), [(7, 20.0), (10, 100.0), (12, 150.0)])
def test_the_smear_of_a_frame_is_measured_on_the_cards_whose_faces_are_known(
        deck_name: str, length: int, angle: float) -> None:
    deck_or_skip(deck_name)
    found = _measured(deck_name, _frame(templates_for(deck_name).faces, (length, angle)))
    assert found is not None
    assert abs(found.length_px / length - 1) <= 0.15, found
    assert abs((found.angle_deg - angle + 90) % 180 - 90) <= 8.0, found


@pytest.mark.parametrize("deck_name", DECKS)
def test_a_frame_without_motion_blur_shows_no_smear(deck_name: str) -> None:
    deck_or_skip(deck_name)
    assert _measured(deck_name, _frame(templates_for(deck_name).faces, None)) is None


def test_cards_that_disagree_on_the_direction_give_no_smear() -> None:
    from firmware_interfaces.camera.smear import DIRECTION_SPREAD_DEG, CardSpectra

    flat = np.ones((4, 3))
    freq_y, freq_x = np.fft.fftfreq(4)[:, None], np.fft.rfftfreq(4)[None, :]

    def card(length: float, angle: float) -> CardSpectra:
        return CardSpectra(Smear(length, angle), flat, flat, freq_y, freq_x)

    assert frame_smear([card(9, 10.0), card(9, 10.0 + 2.5 * DIRECTION_SPREAD_DEG)]) is None
    assert frame_smear([card(2.0, 10.0), card(2.5, 12.0)]) is None  # too short: optical blur
    # a card slid by a hand beside a still one: not the frame's smear
    assert frame_smear([card(11.0, 20.0), card(0.8, 25.0)]) is None
    assert frame_smear([card(11.0, 20.0), card(9.0, 25.0)]) is not None
    assert frame_smear([]) is None


@pytest.mark.parametrize("deck_name", DECKS)
@pytest.mark.parametrize(("length", "angle"), [(9, 150.0), (11, 60.0), (12, 20.0)])
def test_undoing_the_smear_brings_each_card_nearer_its_face_and_leaves_the_rest_of_the_frame(
        deck_name: str, length: int, angle: float) -> None:
    deck_or_skip(deck_name)
    templates = templates_for(deck_name)
    smeared = _frame(templates.faces, (length, angle), continuous=True)
    nearer = []
    for code, corners in CARDS.items():
        q = np.array(corners, np.float32)
        (x0, y0), (x1, y1) = np.floor(q.min(axis=0)).astype(int), np.ceil(q.max(axis=0)).astype(int)
        undone = unsmeared(smeared, Smear(float(length), angle), [(int(x0), int(y0), int(x1), int(y1))])
        before = templates.model.read(warp_card(smeared, q))
        after = templates.model.read(warp_card(undone, q))
        assert after.code == code
        # measured: the distance falls to 0.33-0.95 of what it was, the margin rises 1.1-16 times
        assert after.distance < 0.97 * before.distance and after.margin > before.margin, (code, before, after)
        nearer.append(after.distance / before.distance)
        # nothing beyond the card and its margin is touched
        outside = np.ones(smeared.shape[:2], bool)
        outside[max(0, y0 - MARGIN_PX) : y1 + MARGIN_PX, max(0, x0 - MARGIN_PX) : x1 + MARGIN_PX] = False
        assert np.array_equal(undone[outside], smeared[outside])
    assert float(np.median(nearer)) <= 0.9, nearer  # measured 0.43-0.84


def _smeared_scene(deck_name: str, seed: int, length: int = 13,
                   angle: float = 40.0) -> tuple[Calibration, Layout, np.ndarray, list[str]]:
    """A generated baccarat scene (mild degradation) smeared as by a camera moving ``length`` px
    at ``angle`` degrees during the exposure (13 px at 40 unless told): its calibration, layout,
    frame and the codes on it, sorted."""
    layout = load_layout("baccarat")
    tf = generate_test_set(deck_or_skip(deck_name), [layout], 1, seed=seed, off_layout_every=0, empty_every=0,
                           degradation=Degradation.mild())[0]
    calibration = calibration_for(deck_name, tf.empty, layout)
    image = cv2.filter2D(tf.scene.image.astype(np.float32), -1, motion_kernel(length, angle),
                         borderType=cv2.BORDER_REFLECT)
    image = np.clip(image + np.random.default_rng(seed).normal(0, 2.0, image.shape), 0, 255).astype(np.uint8)
    return calibration, layout, image, sorted(c.code for c in tf.scene.cards if c.code)


@pytest.mark.parametrize(("deck_name", "seed"), [("svg-cards", 5), ("kde-standard", 0), ("kde-standard", 6)])
def test_a_card_left_unread_in_a_smeared_frame_is_read_once_the_smear_is_undone(deck_name: str, seed: int) -> None:
    # a camera moving 13 px at 40 degrees during the exposure: the cards read show the smear,
    # undone around the cards they left unread (two or three here), which are then read, rightly
    calibration, layout, image, truth = _smeared_scene(deck_name, seed)
    left_smeared = Recognizer(calibration, layout)
    left_smeared._unsmeared_looks = lambda frame, looks: looks  # type: ignore[method-assign]
    before = [r.code for r in left_smeared.recognize(image)]
    assert None in before and set(before) - {None} <= set(truth)
    after = sorted(r.code or "-" for r in Recognizer(calibration, layout).recognize(image))
    assert after == truth


@pytest.mark.parametrize("undone", [True, False])
@pytest.mark.parametrize(("deck_name", "seed"), [("svg-cards", 5), ("kde-standard", 0)])
def test_a_card_read_from_its_agreeing_indexes_in_a_smeared_frame_is_read_again_unsmeared_or_left_unread(
        deck_name: str, seed: int, undone: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # a smear makes clubs and spades alike in both corners at once: a card read only from its
    # agreeing indexes (here made to read its suit twin, as a harness 7S smeared 10 px read 7C)
    # is looked at again with the smear undone, and its agreeing read never stands there; where
    # the look again reads it only so once more (the undoing made no difference: ``undone``
    # False), it is left unread
    calibration, layout, image, truth = _smeared_scene(deck_name, seed)
    if not undone:
        monkeypatch.setattr(recognizer_module, "unsmeared", lambda frame, smear, boxes: frame)

    def fooled(rec: Recognizer) -> Recognizer:
        rec._agreeing_read = lambda reads, clear: (  # type: ignore[method-assign]
            suit_twin(reads[0][0].code), AGREEING_CONFIDENCE, reads[0][1])
        return rec

    left_smeared = fooled(Recognizer(calibration, layout))
    left_smeared._unsmeared_looks = lambda frame, looks: looks  # type: ignore[method-assign]
    before = [r.code for r in left_smeared.recognize(image)]
    assert set(before) - set(truth), before  # the twin reads come through where nothing looks again
    after = [r.code for r in fooled(Recognizer(calibration, layout)).recognize(image)]
    assert set(after) - {None} <= set(truth), after
    if not undone:
        assert None in after, after


# (svg-cards seed 5, used before session 62, has its six cards read in the first pass now)
@pytest.mark.parametrize(("deck_name", "seed"), [("svg-cards", 0), ("kde-standard", 0)])
def test_a_smear_measured_short_is_undone_at_the_other_lengths_tried_too(
        deck_name: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # the frame's smear measured 15 % short (as on an independent harness frame with one card
    # read): undone at that length alone, cards stay unread that the longer try reads, rightly
    calibration, layout, image, truth = _smeared_scene(deck_name, seed)

    def measured_short(cards: list[CardSpectra]) -> Smear | None:
        smear = frame_smear(cards)
        return None if smear is None else Smear(0.85 * smear.length_px, smear.angle_deg)

    monkeypatch.setattr(recognizer_module, "frame_smear", measured_short)
    monkeypatch.setattr(recognizer_module, "LENGTH_TRIES", (1.0,))
    one_length = [r.code for r in Recognizer(calibration, layout).recognize(image)]
    monkeypatch.setattr(recognizer_module, "LENGTH_TRIES", smear_module.LENGTH_TRIES)
    tried = [r.code for r in Recognizer(calibration, layout).recognize(image)]
    assert set(one_length) - {None} <= set(truth) and set(tried) - {None} <= set(truth)
    assert one_length.count(None) > tried.count(None), (one_length, tried)


def test_a_smear_is_never_undone_shorter_than_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    # a smear left partly in makes clubs spades: an independent harness's 3C, its smear measured
    # 18 % short, read 3S past every test once undone at 0.8-0.9 of that length; the recogniser
    # looks again at the length measured, then longer (here every card is kept unread in the
    # frames the smear was undone in, so that every length is tried)
    calibration, layout, image, _ = _smeared_scene("svg-cards", 5)
    measured: list[float] = []
    lengths: list[float] = []

    def measuring(cards: list[CardSpectra]) -> Smear | None:
        smear = frame_smear(cards)
        measured.extend([] if smear is None else [smear.length_px])
        return smear

    def undoing(frame: np.ndarray, smear: Smear, boxes: list[tuple[int, int, int, int]]) -> np.ndarray:
        lengths.append(smear.length_px)
        return unsmeared(frame, smear, boxes)

    look = Recognizer._look

    def unread_once_undone(self: Recognizer, frame: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        result = look(self, frame, *args, **kwargs)
        return result if frame is image or not result.read else recognizer_module._unread(result)

    monkeypatch.setattr(recognizer_module, "frame_smear", measuring)
    monkeypatch.setattr(recognizer_module, "unsmeared", undoing)
    monkeypatch.setattr(Recognizer, "_look", unread_once_undone)
    # the doubtful reads' check undoes the measured length once more: not asked here
    monkeypatch.setattr(Recognizer, "_checked_unsmeared", lambda self, frame, looks, *args: looks)
    Recognizer(calibration, layout).recognize(image)
    assert len(measured) == 1 and len(lengths) == len(smear_module.LENGTH_TRIES) >= 2, (measured, lengths)
    assert lengths[0] == pytest.approx(measured[0]) and min(lengths) == lengths[0] < max(lengths)


def _boxes() -> list[tuple[int, int, int, int]]:
    """The bounding boxes (x0, y0, x1, y1) of :data:`CARDS`."""
    return [(min(x for x, _ in q), min(y for _, y in q), max(x for x, _ in q), max(y for _, y in q))
            for q in CARDS.values()]


@pytest.mark.parametrize("deck_name", DECKS)
@pytest.mark.parametrize(("length", "angle"), [(7, 20.0), (9, 150.0), (11, 60.0), (12, 105.0)])
def test_a_blind_guess_at_the_smear_lies_near_it(deck_name: str, length: int, angle: float) -> None:
    # no face known: the cepstrum of the cards' pictures guesses the smear; one of the guesses
    # (at most three, likeliest first, each within the lengths a guess may have, no two alike)
    # lies near it
    deck_or_skip(deck_name)
    guesses = smear_guesses(cv2.cvtColor(_frame(templates_for(deck_name).faces, (length, angle), continuous=True),
                                         cv2.COLOR_BGR2GRAY), _boxes())
    assert len(guesses) == smear_module.GUESSES  # a card's print has dips enough for all of them
    assert all(GUESS_LENGTHS[0] <= g.length_px <= GUESS_LENGTHS[1] for g in guesses), guesses
    apart = smear_module.GUESS_APART
    assert all(abs(a.length_px - b.length_px) >= apart[0] or smear_module.angle_apart(a.angle_deg, b.angle_deg)
               >= apart[1] for i, a in enumerate(guesses) for b in guesses[i + 1 :]), guesses
    assert any(abs(g.length_px / length - 1) <= 0.25 and abs((g.angle_deg - angle + 90) % 180 - 90) <= 12
               for g in guesses), guesses


def test_a_guess_is_made_only_from_windows_inside_the_frame() -> None:
    # a frame wider than tall, a card by its bottom edge and one by its right edge: only their
    # windows that fit are used, none when none fits
    gray = np.random.default_rng(0).integers(0, 255, (200, 400), dtype=np.uint8)
    half = smear_module.GUESS_WINDOW // 2
    # the card by the bottom edge (its middle at y 150, its windows at 150 -/+ 15): only the upper
    # window fits, so it guesses as a box of no height at y 135 does, whose two windows are that one
    by_bottom = smear_guesses(gray, [(100, 100, 180, 200)])
    assert by_bottom == smear_guesses(gray, [(100, 135, 180, 135)])
    assert by_bottom != smear_guesses(gray, [(100, 100, 180, 170)])  # both windows fit there: others
    assert len(smear_guesses(gray, [(400 - 2 * half, 20, 400, 180)])) == smear_module.GUESSES  # flush right
    assert smear_guesses(gray, [(400 - 2 * half + 2, 20, 400, 180)]) == []  # a window 1 px past it
    assert smear_guesses(gray, [(0, 0, 30, 40)]) == []  # its windows reach past the top-left corner
    assert smear_guesses(gray, []) == []


@pytest.mark.parametrize(("deck_name", "seed"), [("svg-cards", 5), ("kde-standard", 0)])
def test_a_frame_so_smeared_that_no_card_is_read_is_read_with_the_smear_a_guess_lets_it_measure(
        deck_name: str, seed: int) -> None:
    # 18 px at 130 degrees: no card of the frame is read from its face, so none can measure the
    # smear; a card read quickly with a blind guess undone measures it, and every card is read
    # with that undone, rightly
    calibration, layout, image, truth = _smeared_scene(deck_name, seed, 18, 130.0)
    unguessed = Recognizer(calibration, layout)
    unguessed._guessed_smear = lambda frame, gray, unread, candidates: None  # type: ignore[method-assign]
    assert all(r.code is None for r in unguessed.recognize(image))
    assert sorted(r.code or "-" for r in Recognizer(calibration, layout).recognize(image)) == truth


@pytest.mark.parametrize(("deck_name", "seed"), [("svg-cards", 5), ("kde-standard", 0)])
def test_a_frame_none_of_whose_cards_is_read_measures_its_smear_on_a_face_read_but_for_a_pip(
        deck_name: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # the same frame, no blind guess allowed: no card is read; with one pip card's face among the
    # frame's pip doubts (Recognizer._passes: read but for a pip its index could not rule out),
    # the smear is measured on it, undone, and every card is read, rightly
    calibration, layout, image, truth = _smeared_scene(deck_name, seed, 18, 130.0)
    monkeypatch.setattr(Recognizer, "_guessed_smear", lambda self, frame, gray, unread, candidates: None)
    assert all(r.code is None for r in Recognizer(calibration, layout).recognize(image))
    tf = generate_test_set(deck_or_skip(deck_name), [layout], 1, seed=seed, off_layout_every=0, empty_every=0,
                           degradation=Degradation.mild())[0]
    pip = next(c for c in tf.scene.cards if c.code and c.code[0] in "23456789")
    doubt = (pip.code, np.array(pip.corners, np.float32))
    looks_unsmeared = Recognizer._unsmeared_looks

    def with_the_doubt(self: Recognizer, frame: np.ndarray, looks: list[Any]) -> list[Any]:
        self._pip_doubts = [doubt]
        return looks_unsmeared(self, frame, looks)

    monkeypatch.setattr(Recognizer, "_unsmeared_looks", with_the_doubt)
    assert sorted(r.code or "-" for r in Recognizer(calibration, layout).recognize(image)) == truth
    # a doubt a pip short (its face the card with a pip fewer) on an outline 3 px off: the
    # cards are read under every test all the same, and none is read wrong
    fewer = "23456789"[max(0, "23456789".index(pip.code[0]) - 1)] + pip.code[1]
    doubt = (fewer, np.array(pip.corners, np.float32) + np.float32(3.0))
    assert set(r.code for r in Recognizer(calibration, layout).recognize(image)) - {None} <= set(truth)


def _guess_search(monkeypatch: pytest.MonkeyPatch, measured: Smear | None, confidence: float = 0.9,
                  nearer: bool = True) -> tuple[Smear | None, list[float], int]:
    """``Recognizer._guessed_smear`` on one candidate card, the guess 10 px at 130 degrees, every
    quick look reading it (at ``confidence``) and the card measuring ``measured``; each try
    brings it ``nearer`` a face or not. Returns the smear given, the lengths undone, and how
    many quick looks were made."""
    calibration, layout, image, _ = _smeared_scene("svg-cards", 5, 18, 130.0)
    reading = recognizer_module.CardReading("AS", confidence, [(0.0, 0.0)] * 4, None, (0.0, 0.0))
    read = recognizer_module._Look(reading, (0.0, 0.0), True, False, None, None)  # type: ignore[arg-type]
    undone: list[float] = []
    looked: list[int] = []

    def undoing(frame: np.ndarray, smear: Smear, boxes: list[tuple[int, int, int, int]]) -> np.ndarray:
        undone.append(smear.length_px)
        return frame.copy()

    def distances(self: Recognizer, frame: np.ndarray, looks: list[Any]) -> list[float]:
        return [100.0 if frame is image else (80.0 if nearer else 120.0) for _ in looks]

    def looking(self: Recognizer, *args: Any, **kwargs: Any) -> Any:
        looked.append(1)
        return read

    monkeypatch.setattr(recognizer_module, "smear_guesses", lambda gray, boxes: [Smear(10.0, 130.0)])
    monkeypatch.setattr(recognizer_module, "unsmeared", undoing)
    monkeypatch.setattr(Recognizer, "_face_distances", distances)
    monkeypatch.setattr(Recognizer, "_look", looking)
    monkeypatch.setattr(Recognizer, "_measured_smear", lambda self, gray, cards: measured)
    got = Recognizer(calibration, layout)._guessed_smear(image, image[:, :, 0], [(0, 0, 40, 60)],
                                                         [(read, (0, 0, 40, 60))])
    return got, undone, len(looked)


@pytest.mark.parametrize(("measured", "tries"), [
    (Smear(9.0, 135.0), 1), (Smear(14.5, 130.0), 2),  # 14.5: near only the longer try (11.5 px)
    (Smear(9.0, 40.0), None), (Smear(20.0, 130.0), None), (None, None)])
def test_a_guess_gives_the_smear_measured_on_the_card_read_with_it_only_where_that_lies_near_the_try(
        measured: Smear | None, tries: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    # a card read as the wrong face with a guess undone measures another line, or none: the
    # measure is the frame's smear only where it lies near the smear tried (GUESS_AGREES);
    # else the guess is tried at every length of LENGTH_TRIES, then given up
    got, undone, _ = _guess_search(monkeypatch, measured)
    assert got == (measured if tries else None)
    lengths = smear_module.LENGTH_TRIES[: tries or len(smear_module.LENGTH_TRIES)]
    assert undone == pytest.approx([10.0 * k for k in lengths])


def test_a_card_a_try_takes_no_nearer_a_face_is_not_looked_at_nor_is_the_guess_tried_longer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    got, undone, looked = _guess_search(monkeypatch, Smear(9.0, 135.0), nearer=False)
    assert got is None and looked == 0 and undone == [10.0]
    assert _guess_search(monkeypatch, Smear(9.0, 135.0))[2] == 1


def test_a_card_read_only_from_its_indexes_with_a_guess_undone_measures_no_smear(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # its face was not read: it cannot say how the frame was smeared
    got, _, looked = _guess_search(monkeypatch, Smear(9.0, 135.0), confidence=AGREEING_CONFIDENCE)
    assert got is None and looked == len(smear_module.LENGTH_TRIES)


@pytest.mark.parametrize(("shares", "cap", "chosen"), [
    ((0.3, 0.1, 0.5, 0.9), 2, [1, 0]), ((0.3, 0.1, 0.5, 0.9), 3, [1, 0, 2]), ((0.9, 0.7), 2, [])])
def test_the_cards_read_with_a_guess_undone_are_those_nearest_a_face_and_none_face_down(
        shares: tuple[float, ...], cap: int, chosen: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    calibration, layout, image, _ = _smeared_scene("svg-cards", 5, 18, 130.0)
    recognizer = Recognizer(calibration, layout)
    far = calibration.templates.model.max_distance
    monkeypatch.setattr(Recognizer, "_face_distances", lambda self, frame, looks: [k * far for k in shares])
    monkeypatch.setattr(recognizer_module, "GUESSED_ON", cap)
    looks: list[Any] = [object()] * len(shares)
    assert recognizer._likeliest_faces(image, looks, list(range(len(shares)))) == chosen


@pytest.mark.parametrize(("length", "angle", "agrees"), [
    (10.0, 130.0, True), (10.0 * (1 + recognizer_module.GUESS_AGREES[0]) - 0.01, 130.0, True),
    (10.0 * (1 + recognizer_module.GUESS_AGREES[0]) + 0.01, 130.0, False),
    (10.0 * (1 - recognizer_module.GUESS_AGREES[0]) - 0.01, 130.0, False),
    (10.0, 130.0 + recognizer_module.GUESS_AGREES[1] - 0.1, True),
    (10.0, 130.0 - recognizer_module.GUESS_AGREES[1] - 0.1, False),
])
def test_a_measured_smear_agrees_with_a_guess_within_its_share_of_length_and_degrees(
        length: float, angle: float, agrees: bool) -> None:
    assert recognizer_module._smears_agree(Smear(length, angle), Smear(10.0, 130.0)) is agrees
    # a line and its reverse are one smear: 175 and 5 degrees lie 10 apart
    assert recognizer_module._smears_agree(Smear(length, (angle + 45.0) % 180.0), Smear(10.0, 175.0)) is agrees


def test_cards_lying_face_down_cost_no_guess_at_a_smear(monkeypatch: pytest.MonkeyPatch) -> None:
    # no card read from its face, but none lies near a face either (their backs lie beyond
    # FACE_LIKE of the model's distance): no guess is made, none of them is looked at again
    layout = load_layout("baccarat")
    deck = deck_or_skip("kde-standard")
    tf = generate_test_set(deck, [layout], 1, seed=0, off_layout_every=0, empty_every=0,
                           degradation=Degradation.mild())[0]
    calibration = calibration_for("kde-standard", tf.empty, layout)
    backs = [PlacedCard(slot.name, "AS", slot.centre, 0.0, face_up=False) for slot in layout.slots[:4]]
    image = render_scene(layout, deck, backs, random.Random(1), Degradation.mild()).image
    guessed: list[int] = []
    monkeypatch.setattr(recognizer_module, "smear_guesses", lambda gray, boxes: guessed.append(len(boxes)) or [])
    assert [r.code for r in Recognizer(calibration, layout).recognize(image)] == [None] * 4
    assert guessed == []
    monkeypatch.setattr(recognizer_module, "FACE_LIKE", 1.0)
    Recognizer(calibration, layout).recognize(image)
    assert guessed == [4]


@pytest.mark.parametrize("checked", [True, False])
def test_a_doubtful_read_on_a_smeared_frame_as_taken_is_left_unread_where_the_smear_undone_reads_another_code(
        checked: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # a held-out tigullio 9C, in a frame smeared 8 px, read 9S (2.3 times past the margin limit)
    # before the smear was known; with the smear undone it read 9C. Here the first card read on
    # the frame as taken in full (the first pass's quick reads are sure ones) is made its suit
    # twin, below a sure read (the others measure the smear): it is looked at again with the smear
    # undone, reads its own code there, and is left unread; unchecked, the twin comes through.
    # Smeared 11 px, every card here is read, some only in full (no card is left to undo it for)
    calibration, layout, image, truth = _smeared_scene("kde-standard", 0, 11)
    if not checked:
        monkeypatch.setattr(Recognizer, "_checked_unsmeared", lambda self, frame, looks, *args: looks)
    real = Recognizer._read
    twin_of: list[str] = []

    def fooled(self: Recognizer, frame: np.ndarray, outlines: Any, quick: bool = False, *args: Any) -> Any:
        code, confidence, corners = real(self, frame, outlines, quick, *args)
        if frame is image and not quick and code is not None and twin_of in ([], [code]):
            twin_of[:] = [code]
            return suit_twin(code), 0.75, corners  # twice past the margin limit
        return code, confidence, corners

    monkeypatch.setattr(Recognizer, "_read", fooled)
    after = sorted(r.code or "-" for r in Recognizer(calibration, layout).recognize(image))
    assert twin_of and suit_twin(twin_of[0]) not in truth
    # checked, that card alone is left unread: every other card is read as it is
    expected = sorted("-" if code == twin_of[0] else code for code in truth)
    assert after == (expected if checked else sorted(suit_twin(c) if c == twin_of[0] else c for c in truth)), after


def test_a_read_on_a_frame_with_its_smear_undone_must_lead_its_suit_twin_by_more(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a held-out tigullio 4C smeared 10.7 px, the smear undone, read 4S at a lead of 0.003 over
    # 4C on the pair's own axis: there a doubtful read must lead by UNSMEARED_TWIN_LEAD
    calibration, layout, image, _ = _smeared_scene("kde-standard", 0)
    rec = Recognizer(calibration, layout)
    model = calibration.templates.model
    limit = rec.threshold * model.min_margin
    m = model.read(warp_card(_frame(templates_for("kde-standard").faces, None), np.array(CARDS["7C"], np.float32)))
    assert m.code == "7C"
    barely = replace(m, twin_lead=(recognizer_module.TWIN_LEAD + recognizer_module.UNSMEARED_TWIN_LEAD) / 2)
    assert rec._plausible(barely, limit, set())
    leads: list[float] = []

    def look(frame: np.ndarray, finder: Any, found: Any, centre: Any) -> Any:
        leads.append(rec._twin_lead)
        return rec._plausible(barely, limit, set())

    monkeypatch.setattr(rec, "_look", look)
    a_look: Any = types.SimpleNamespace(finder=None, found=None, centre=None)
    assert rec._unsmeared_look(image, a_look) is False
    assert leads == [recognizer_module.UNSMEARED_TWIN_LEAD] and rec._plausible(barely, limit, set())

    def failing(frame: np.ndarray, finder: Any, found: Any, centre: Any) -> Any:
        raise RuntimeError("a look that fails")

    monkeypatch.setattr(rec, "_look", failing)
    with pytest.raises(RuntimeError):
        rec._unsmeared_look(image, a_look)
    assert rec._plausible(barely, limit, set())  # the usual lead again


def test_a_look_with_the_smear_undone_knows_whether_the_card_was_burnt_while_it_looks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rec = recognizer_module.Recognizer.__new__(recognizer_module.Recognizer)
    rec._twin_lead = recognizer_module.TWIN_LEAD
    rec._burnt_unsmeared = False
    seen: list[bool] = []
    monkeypatch.setattr(rec, "_look", lambda frame, finder, found, centre: seen.append(rec._burnt_unsmeared))
    a_look: Any = types.SimpleNamespace(finder=None, found=None, centre=None)
    image = np.zeros((8, 8, 3), np.uint8)
    rec._unsmeared_look(image, a_look, burnt=True)
    rec._unsmeared_look(image, a_look)
    assert seen == [True, False] and rec._burnt_unsmeared is False


def test_the_fits_line_transfer_is_the_magnitude_of_sinc_at_every_length_tried() -> None:
    # the fit's sines come by a recurrence over the evenly spaced lengths (5 times cheaper than
    # np.sinc at each): the same numbers, sinc(0) = 1 included
    along = np.random.default_rng(3).uniform(-0.3, 0.3, (29, 400))
    along[0, :3] = 0.0
    for start in (4.5, 9.0, 24.0):
        lengths = start * smear_module.FIT_LENGTHS
        expected = np.abs(np.sinc(lengths[:, None, None] * along[None]))
        assert np.allclose(smear_module._line_transfer(lengths, along), expected, rtol=0.0, atol=1e-9)
