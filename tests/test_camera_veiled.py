"""A card under a veil of glare (its ink lifted toward its paper, nothing burnt out) read where
the whole card and both its corner indexes name the same code (``Recognizer._agreeing_read``),
and never where they do not."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from cardart import calibration_for, deck_or_skip, templates_for
from test_camera_burnt_glare import DECK, _recognizer

from calibration.layout import load_layout
from calibration.templates import CARD_SIZE, canonical_corners
from firmware_interfaces.camera import recognizer as recognizer_module
from firmware_interfaces.camera.recognizer import Recognizer
from firmware_interfaces.camera.scene_effects import SKIN_TONES
from firmware_interfaces.camera.scenes import Degradation, generate_test_set
from firmware_interfaces.cards import CODES


def _veiled(code: str, amount: float, seed: int = 0, centre: tuple[float, float] = (0.5, 0.6),
            radius: float = 0.9) -> np.ndarray:
    """The canonical face of ``code`` as a camera exposes it, blended toward white by a veil
    (``amount`` at ``centre``, in shares of the card's width and height; ``radius``: its sigma
    in card widths), blurred and noised."""
    face = templates_for(DECK).faces[code].astype(np.float32) * 0.85
    w, h = CARD_SIZE
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    cx, cy = centre[0] * w, centre[1] * h
    veil = amount * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * (radius * w) ** 2))
    card = face + veil[:, :, None] * (255.0 - face)
    card = cv2.GaussianBlur(card, (0, 0), 1.0)
    card += np.random.default_rng(seed).normal(0.0, 3.0, card.shape).astype(np.float32)
    return np.clip(card, 0, 255).astype(np.uint8)


def _agreeing(card: np.ndarray, clear_elsewhere: frozenset[str] = frozenset()) -> str | None:
    rec = _recognizer()
    corners = canonical_corners().astype(np.float64)  # the card is its own frame
    read = rec._agreeing_read([(rec.calibration.templates.model.read(card), corners, card)], set(clear_elsewhere))
    return None if read is None else read[0]


def test_cards_under_a_heavy_veil_the_whole_card_reads_unclearly_are_read_from_their_agreeing_indexes() -> None:
    model = _recognizer().calibration.templates.model
    unclear = read = 0
    for code in CODES:
        card = _veiled(code, 0.9)
        m = model.read(card)
        got = _agreeing(card)
        assert got in (None, code), f"{code} read {got}"
        if not (m.accepted and m.margin >= model.min_margin):
            unclear += 1
            read += got == code
    print("unclear", unclear, "read", read)  # measured on svg-cards: 17 unclear, 16 read
    assert unclear >= 8  # the veil must make the test: cards the whole-card read leaves doubtful
    assert read >= 0.75 * unclear


def test_indexes_that_name_another_code_than_the_whole_card_read_nothing() -> None:
    # the bottom-right corner's index taken from another card: the indexes disagree
    card = _veiled("7C", 0.85)
    other = _veiled("8C", 0.85)
    w, h = CARD_SIZE
    card[h - 70:, w - 40:] = other[h - 70:, w - 40:]
    assert _agreeing(_veiled("7C", 0.85)) == "7C"
    assert _agreeing(card) is None


def test_an_outline_that_read_another_code_clearly_vetoes_the_agreeing_read() -> None:
    card = _veiled("QH", 0.85)
    assert _agreeing(card) == "QH"
    assert _agreeing(card, frozenset({"QD"})) is None
    assert _agreeing(card, frozenset({"QH"})) == "QH"


def test_indexes_below_the_share_of_the_limit_read_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    card = _veiled("5S", 0.85)
    assert _agreeing(card) == "5S"
    monkeypatch.setattr(recognizer_module, "AGREEING_INDEX_SHARE", 50.0)
    assert _agreeing(card) is None


@pytest.mark.parametrize(("seed", "card_at"), [(0, 0), (2, 5), (3, 0)])
def test_a_card_under_a_veil_of_glare_in_a_scene_is_read_only_through_its_agreeing_indexes(
        seed: int, card_at: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # a veil 90 % toward white over one card of a generated scene (svg-cards; measured over
    # seeds 0-3: 5 of 24 cards so veiled read only this way, 7 left unread, none wrong)
    layout = load_layout("baccarat")
    tf = generate_test_set(deck_or_skip(DECK), [layout], 1, seed=seed, off_layout_every=0, empty_every=0,
                           degradation=Degradation.mild())[0]
    calibration = calibration_for(DECK, tf.empty, layout)
    card = tf.scene.cards[card_at]
    corners = np.array(card.corners, np.float32)
    centre, width = corners.mean(axis=0), float(np.linalg.norm(corners[1] - corners[0]))
    image = tf.scene.image.astype(np.float32)
    yy, xx = np.mgrid[0 : image.shape[0], 0 : image.shape[1]].astype(np.float32)
    veil = 0.9 * np.exp(-((xx - centre[0]) ** 2 + (yy - centre[1]) ** 2) / (2 * (0.9 * width) ** 2))
    image = np.clip(image + veil[..., None] * (255.0 - image), 0, 255).astype(np.uint8)
    truth = {c.code for c in tf.scene.cards if c.code}
    read = [r.code for r in Recognizer(calibration, layout).recognize(image)]
    assert card.code in read and set(read) - {None} <= truth, read
    monkeypatch.setattr(recognizer_module, "AGREEING_INDEX_SHARE", 50.0)
    assert card.code not in [r.code for r in Recognizer(calibration, layout).recognize(image)]


@pytest.mark.parametrize("skin", ["light", "dark"])
def test_a_card_half_under_a_hand_is_never_read_from_its_clear_indexes(skin: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # a hand over the middle of a card leaves both its indexes clear, and the whole card may
    # still read its code, short of the limit: it must be a no-read all the same (the print
    # test: a hand hides the face's print and is darker than paper; without it, a review of
    # this route found 18 of 52 such cards read)
    w, h = CARD_SIZE
    colour = SKIN_TONES[skin]

    def under_a_hand(code: str, veil: float) -> np.ndarray:
        card = _veiled(code, veil)
        hand = np.zeros(card.shape[:2], np.uint8)
        cv2.ellipse(hand, (w - 5, 5), (95, 75), 45, 0, 360, 255, -1)
        cv2.ellipse(hand, (5, h - 5), (60, 50), 45, 0, 360, 255, -1)
        # skin as a camera sees it: the scenes' brightest shade, and noise (a flat, noiseless
        # hand correlates with no print at all, and hid that noise on skin passed the first
        # version of the print test)
        skin = np.asarray(colour, np.float32) * 1.1 + np.random.default_rng(1).normal(0.0, 3.0, card.shape)
        card[hand > 0] = np.clip(skin, 0, 255).astype(np.uint8)[hand > 0]
        return card

    cards = [under_a_hand(code, veil) for code in CODES for veil in (0.0, 0.6)]
    assert [_agreeing(card) for card in cards] == [None] * len(cards)
    monkeypatch.setattr(recognizer_module, "VEIL_PRINT_LOST", 1.0)
    assert sum(_agreeing(card) is not None for card in cards) >= 3  # what the print test stops


@pytest.mark.parametrize(("deck_name", "seed", "card_at", "colour", "veil"), [
    ("svg-cards", 2, 1, (200, 200, 200), 0.0),  # a light-grey sleeve
    ("kde-standard", 3, 2, SKIN_TONES["light"], 0.0),
    ("svg-cards", 2, 5, SKIN_TONES["light"], 0.7),  # a veil over the card and the hand alike
])
def test_a_card_47_percent_under_a_hand_in_a_scene_is_no_read(deck_name: str, seed: int, card_at: int,
                                                               colour: tuple[int, int, int], veil: float) -> None:
    # a second review's scenes: both indexes clear, the whole card and both indexes naming the
    # card; the first print test (correlation 0.3 over all cells) let the hand's noise pass
    # for print and named these cards at confidence 0.4
    w, h = CARD_SIZE
    shape = np.zeros((h, w), np.uint8)
    cv2.ellipse(shape, (w - 5, 5), (95, 75), 45, 0, 360, 255, -1)
    cv2.ellipse(shape, (5, h - 5), (60, 50), 45, 0, 360, 255, -1)
    layout = load_layout("baccarat")
    tf = generate_test_set(deck_or_skip(deck_name), [layout], 1, seed=seed, off_layout_every=0, empty_every=0,
                           degradation=Degradation.mild())[0]
    height, width = tf.scene.image.shape[:2]
    corners = np.array(tf.scene.cards[card_at].corners, np.float32)
    to_image = cv2.getPerspectiveTransform(canonical_corners(), corners)
    hand = cv2.warpPerspective(shape, to_image, (width, height)).astype(np.float32) / 255.0
    hand = cv2.GaussianBlur(hand, (0, 0), 0.8)[..., None]
    rng = np.random.default_rng(0)
    mottle = cv2.resize(rng.normal(0, 6, (height // 16 + 2, width // 16 + 2)).astype(np.float32), (width, height))
    skin = np.float32(colour) + mottle[..., None] + rng.normal(0, 2.5, (height, width, 3))
    image = skin * hand + tf.scene.image.astype(np.float32) * (1 - hand)
    if veil:
        centre, card_width = corners.mean(axis=0), float(np.linalg.norm(corners[1] - corners[0]))
        yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
        spot = veil * np.exp(-((xx - centre[0]) ** 2 + (yy - centre[1]) ** 2) / (2 * (0.9 * card_width) ** 2))
        image += spot[..., None] * (255.0 - image)
    frame = np.clip(image, 0, 255).astype(np.uint8)
    calibration = calibration_for(deck_name, tf.empty, layout)
    there = [r.code for r in Recognizer(calibration, layout).recognize(frame)
             if np.hypot(*(np.mean(r.corners, axis=0) - corners.mean(axis=0))) < 30]
    assert there in ([], [None]), there


def test_reads_from_agreeing_indexes_are_the_only_ones_below_the_confidence_of_a_read_at_the_limit() -> None:
    # _by_indexes tells them by their confidence alone: every other read reports at least 0.5
    from firmware_interfaces.camera.recognizer import AGREEING_CONFIDENCE, INDEX_CONFIDENCE, _confidence

    assert AGREEING_CONFIDENCE < INDEX_CONFIDENCE
    assert min(_confidence(margin, 0.9) for margin in (0.0, 0.5, 0.9, 1.0, 50.0)) >= INDEX_CONFIDENCE
