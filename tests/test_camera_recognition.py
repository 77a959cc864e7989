"""The recogniser on generated table scenes from real card art, on two deck designs."""

from __future__ import annotations

import random

import cv2
import numpy as np
import pytest
from cardart import DECKS, calibration_for, deck_or_skip

from calibration.layout import load_layout
from firmware_interfaces.camera.recognizer import Recognizer
from firmware_interfaces.camera.scenes import (
    Degradation,
    PlacedCard,
    camera_homography,
    draw_card,
    generate_test_set,
    render_felt,
    render_scene,
)
from firmware_interfaces.camera.scoring import Score

GAMES = ("baccarat", "three-pictures", "three-face", "teen-patti-2020")


@pytest.mark.slow
@pytest.mark.parametrize("deck_name", DECKS)
def test_generated_scenes_are_read_with_no_wrong_read_and_no_phantom(deck_name: str) -> None:
    deck = deck_or_skip(deck_name)
    score = Score()
    for i, tf in enumerate(generate_test_set(deck, [load_layout(g) for g in GAMES], 16, seed=101)):
        rec = Recognizer(calibration_for(deck_name, tf.empty, tf.layout), tf.layout)
        score.add(tf.scene.cards, rec.recognize(tf.scene.image), f"frame {i}")
    assert (score.wrong, score.phantom, score.missed) == (0, 0, 0), score.errors
    assert score.cards == 93  # 15 frames of 6, 3 cards off every slot, 1 empty frame
    assert score.correct >= 90, score.errors  # the benchmark holds the 99.5 % target


def _table(deck_name: str, layout_name: str = "baccarat", seed: int = 4, d: Degradation | None = None):  # type: ignore[no-untyped-def]
    layout = load_layout(layout_name)
    rng = random.Random(seed)
    h = camera_homography(layout, rng)
    felt = render_felt(layout, rng)
    deck = deck_or_skip(deck_name)
    empty = render_scene(layout, deck, [], rng, Degradation.mild(), table_to_image=h, felt=felt)
    rec = Recognizer(calibration_for(deck_name, empty.image, layout), layout)

    def shoot(cards: list[PlacedCard]):  # type: ignore[no-untyped-def]
        return render_scene(layout, deck, cards, rng, d or Degradation.mild(), table_to_image=h, felt=felt)

    return layout, rec, shoot


@pytest.mark.parametrize("deck_name", DECKS)
def test_each_card_gets_its_code_slot_and_corners(deck_name: str) -> None:
    layout, rec, shoot = _table(deck_name)
    cards = [PlacedCard(s, c, layout.slot(s).centre, a) for s, c, a in
             [("player1", "6S", 3.0), ("banker1", "9S", -8.0), ("player2", "QH", 181.0), ("banker3", "TD", 95.0)]]
    scene = shoot(cards)
    readings = sorted(rec.recognize(scene.image), key=lambda r: r.position or "")
    assert [(r.position, r.code) for r in readings] == [
        ("banker1", "9S"), ("banker3", "TD"), ("player1", "6S"), ("player2", "QH")]
    truth = {t.slot: np.array(t.corners) for t in scene.cards}
    errors = []
    for r in readings:
        got = np.array(r.corners)
        # a pip card reads the same either way up: corners match up to a half turn
        err = min(np.abs(got - truth[r.position]).max(), np.abs(np.roll(got, 2, axis=0) - truth[r.position]).max())
        # the outline the card was read on: the refined one, or the finder's own where the read
        # was sure there (measured up to 4.8 px off at 720p, a turned card; refined, 2.5; with
        # the view warped from the half frame, 5.3: held-out tigullio's 720p cards lay a median
        # 2.25 px off, 90 % within 4.8 and 99 % within 7.1, session 63)
        assert err < 6.0, (r.code, err)
        errors.append(err)
        assert 0.6 <= r.confidence <= 1.0
    assert np.median(errors) < 4.0, errors  # the bound each card had before session 62


def test_an_empty_table_has_no_cards_even_under_glare() -> None:
    _, rec, shoot = _table("svg-cards", d=Degradation(glare_chance=1.0, glare_strength=(120, 160)))
    for _ in range(3):
        assert rec.recognize(shoot([]).image) == []


def test_a_card_off_every_slot_has_no_position() -> None:
    layout, rec, shoot = _table("kde-standard", "teen-patti-2020")
    readings = rec.recognize(shoot([PlacedCard(None, "8C", (450.0, 420.0), 30.0),
                                    PlacedCard("a2", "JH", layout.slot("a2").centre, 0.0)]).image)
    assert sorted((r.position or "-", r.code) for r in readings) == [("-", "8C"), ("a2", "JH")]


def test_a_face_down_card_is_a_no_read_not_a_guess() -> None:
    layout, rec, shoot = _table("svg-cards")
    readings = rec.recognize(
        shoot([PlacedCard("banker2", "AS", layout.slot("banker2").centre, 2.0, face_up=False)]).image
    )
    assert [(r.position, r.code) for r in readings] == [("banker2", None)]


def test_a_blank_card_is_a_no_read_not_a_guess() -> None:
    layout, rec, shoot = _table("kde-standard")
    scene = shoot([PlacedCard("player1", "5S", layout.slot("player1").centre, 0.0)])
    image = scene.image.copy()
    blank = np.full((360, 266, 3), 235, np.uint8)  # a card of no known design: a cut card, say
    draw_card(image, blank, np.array(scene.cards[0].corners))
    assert [(r.position, r.code) for r in rec.recognize(image)] == [("player1", None)]


@pytest.mark.parametrize("deck_name", DECKS)
def test_a_card_under_the_dealers_fingers_is_read_right_or_not_at_all(deck_name: str) -> None:
    layout, rec, shoot = _table(deck_name, seed=9)
    codes = ["5S", "6C", "9H", "QD", "TS", "2C"]
    slots = ["player1", "player2", "player3", "banker1", "banker2", "banker3"]
    scene = shoot([PlacedCard(s, c, layout.slot(s).centre, 4.0) for s, c in zip(slots, codes, strict=True)])
    image = scene.image.copy()
    for t in scene.cards:  # fingers over the top index and the middle of every card
        (x0, y0), (x2, y2) = t.corners[0], t.corners[2]
        cv2.circle(image, (int(x0 + 12), int(y0 + 15)), 18, (70, 90, 150), -1)
        cv2.ellipse(image, (int((x0 + x2) / 2), int((y0 + y2) / 2)), (35, 14), 0, 0, 360, (80, 100, 160), -1)
    truth = dict(zip(slots, codes, strict=True))
    for r in rec.recognize(image):
        assert r.code in (None, truth[r.position])


def test_a_frame_of_the_wrong_size_is_refused_clearly() -> None:
    _, rec, _ = _table("svg-cards")
    with pytest.raises(ValueError, match="frame is 640x480 but the calibration is for 1280x720"):
        rec.recognize(np.zeros((480, 640, 3), np.uint8))


def test_suit_twins_are_the_same_rank_in_the_other_suit_of_its_colour() -> None:
    from firmware_interfaces.camera.recognizer import suit_twins

    assert suit_twins("7C", "7S") and suit_twins("7S", "7C") and suit_twins("QH", "QD")
    assert not suit_twins("7C", "7H") and not suit_twins("7C", "8C") and not suit_twins("7C", "7C")


#: Card-shaped things that are no card: noise, flat grey, stripes, half a face, a mirrored face,
#: a face with its indexes blacked out.
HOSTILE_PATCHES = ("noise", "grey", "stripes", "half a face", "mirrored", "no indexes")


def _hostile_patch(kind: str, face: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    h, w = face.shape[:2]
    if kind == "noise":
        return rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    if kind == "grey":
        return np.full((h, w, 3), int(rng.integers(0, 256)), np.uint8)
    if kind == "stripes":
        patch = np.zeros((h, w, 3), np.uint8)
        patch[:, :: int(rng.integers(2, 20))] = 255
        return patch
    if kind == "mirrored":
        return face[:, ::-1].copy()
    patch = face.copy()
    if kind == "half a face":
        patch[h // 2 :] = 240
    else:
        patch[:70, :50] = 0
        patch[-70:, -50:] = 0
    return patch


def _under_glare(image: np.ndarray, corners: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``image`` with a pool of glare, clipped to white, over part of the card at ``corners``."""
    radius = int(0.35 * np.linalg.norm(corners[0] - corners[3]))
    pool = np.zeros(image.shape[:2], np.float32)
    centre = corners.mean(axis=0) + rng.uniform(-0.5, 0.5, 2) * radius
    cv2.circle(pool, (int(centre[0]), int(centre[1])), radius, 1.0, -1)
    pool = cv2.GaussianBlur(pool, (0, 0), radius / 3)
    return np.clip(image.astype(np.float32) + 400 * pool[..., None], 0, 255).astype(np.uint8)


def _hostile_patches_named(kinds: tuple[str, ...], seed: int, glare: bool = False) -> list[tuple[str, str]]:
    """Frames of card-shaped hostile patches (one kind a frame, on card outlines in six slots,
    under a pool of glare each if ``glare``): the codes the recogniser gave any of them."""
    layout, rec, shoot = _table("svg-cards")
    faces = deck_or_skip("kde-standard").faces()
    rng = np.random.default_rng(seed)
    slots = [s.name for s in layout.slots][:6]
    named = []
    for kind in kinds:
        scene = shoot([PlacedCard(s, "5S", layout.slot(s).centre, float(rng.uniform(-12, 12))) for s in slots])
        image = scene.image.copy()
        for t in scene.cards:
            face = cv2.resize(faces[str(rng.choice(list(faces)))], (266, 360))
            draw_card(image, _hostile_patch(kind, face, rng), np.array(t.corners))
            if glare:
                image = _under_glare(image, np.array(t.corners, np.float64), rng)
        named += [(kind, str(r.code)) for r in rec.recognize(image) if r.code is not None]
    return named


def test_card_shaped_hostile_patches_reach_every_look_and_are_never_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each kind of hostile patch (:data:`HOSTILE_PATCHES`) goes through every look down to the
    templates' faces (``_template_starts``); none raises and none gets a code."""
    from firmware_interfaces.camera import recognizer

    reached: list[int] = []
    real = recognizer.Recognizer._template_starts

    def counted(self: Recognizer, *args: object) -> object:
        reached.append(1)
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(recognizer.Recognizer, "_template_starts", counted)
    assert _hostile_patches_named(HOSTILE_PATCHES, seed=5) == []
    assert len(reached) >= 12, "the patches did not reach the last alignment"


def test_card_shaped_hostile_patches_under_glare_are_aligned_under_glare_and_never_named(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile patches with a pool of glare clipping part of each to white: they reach the
    alignment under glare (``align_under_glare``) and none gets a code (an ad-hoc run of 120
    such frames: 4,378 glare alignments, none named, no exception)."""
    from firmware_interfaces.camera import recognizer

    calls: list[int] = []
    real = recognizer.align_under_glare

    def counted(*args: np.ndarray) -> object:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(recognizer, "align_under_glare", counted)
    assert _hostile_patches_named(("noise", "mirrored", "grey", "no indexes"), seed=7, glare=True) == []
    assert len(calls) >= 20, "the patches did not reach the alignment under glare"
