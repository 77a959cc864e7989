"""Ink a read face does not explain (firmware_interfaces/camera/face_ink.py, and the recogniser's
test of a doubtful pip card's read with it)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from cardart import DECKS, deck_or_skip, glared, templates_for

from firmware_interfaces.camera.face_ink import explained, unexplained_ink
from firmware_interfaces.camera.recognizer import PIPS, UNEXPLAINED_INK


def _camera_view(face: np.ndarray, rng: np.random.Generator, turned: bool) -> np.ndarray:
    """``face`` a few px off, under a light gradient, blurred, noisy and JPEG'd (turned 180° if
    ``turned``)."""
    h, w = face.shape[:2]
    shift = np.float32([[1, 0, rng.uniform(-4, 4)], [0, 1, rng.uniform(-4, 4)]])
    view = cv2.warpAffine(face, shift, (w, h), borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
    view = view * 0.85 * np.linspace(0.7, 1.0, w)[None, :, None]
    view = cv2.GaussianBlur(view, (0, 0), 1.6) + rng.normal(0, 4, view.shape)
    view = np.clip(view, 0, 255).astype(np.uint8)
    view = cv2.imdecode(cv2.imencode(".jpg", view, [cv2.IMWRITE_JPEG_QUALITY, 60])[1], cv2.IMREAD_COLOR)
    return np.ascontiguousarray(view[::-1, ::-1]) if turned else view


@pytest.mark.parametrize("deck_name", DECKS)
def test_a_6h_whose_middle_pips_glare_washed_out_is_not_explained_by_a_4h(deck_name: str) -> None:
    # tigullio, burnt glare: the right middle pip burnt out, the left one lifted to a faint pink,
    # read 4H 8.6 times past the margin limit (session 43)
    deck_or_skip(deck_name)
    faces = templates_for(deck_name).faces
    card = glared(faces["6H"], [(0.68, 0.5, 0.12, 600.0), (0.3, 0.5, 0.1, 150.0)])
    assert unexplained_ink(card, explained(faces["4H"])) > UNEXPLAINED_INK
    # glare only took ink away: the card's own face explains what is left
    assert unexplained_ink(card, explained(faces["6H"])) <= UNEXPLAINED_INK / 4


@pytest.mark.parametrize("deck_name", DECKS)
def test_a_camera_view_of_a_pip_card_leaves_no_ink_its_own_face_does_not_explain(deck_name: str) -> None:
    # blurred, up to 4 px off, under a light gradient, noisy, JPEG 60, either way up
    deck_or_skip(deck_name)
    faces = templates_for(deck_name).faces
    rng = np.random.default_rng(14)
    pip_codes = [code for code in faces if code[0] in PIPS]
    assert len(pip_codes) == 40
    worst = max(unexplained_ink(_camera_view(faces[code], rng, turned), explained(faces[code]), (turned,))
                for code in pip_codes for turned in (False, True))
    assert worst <= UNEXPLAINED_INK / 2


@pytest.mark.parametrize("deck_name", DECKS)
def test_no_pip_card_is_explained_by_the_face_with_one_or_two_pips_fewer(deck_name: str) -> None:
    deck_or_skip(deck_name)
    faces = templates_for(deck_name).faces
    for code in (c for c in faces if c[0] in PIPS[1:]):
        card = (faces[code] * 0.85).astype(np.uint8)
        i = PIPS.index(code[0])
        for fewer in (PIPS[j] + code[1] for j in (i - 1, i - 2) if j >= 0):
            assert unexplained_ink(card, explained(faces[fewer])) > UNEXPLAINED_INK, (code, fewer)
            # turned 180 degrees, compared the right way up
            turned = np.ascontiguousarray(card[::-1, ::-1])
            assert unexplained_ink(turned, explained(faces[fewer]), (True,)) > UNEXPLAINED_INK, (code, fewer)


def test_the_cells_are_averaged_as_plain_means_of_the_slid_difference() -> None:
    # the cell means are taken by shrinking with INTER_AREA (for speed): the same as numpy's
    # mean of each cell of the saturated difference, at every slide, either way up
    from firmware_interfaces.camera import face_ink

    faces = templates_for(DECKS[0]).faces
    rng = np.random.default_rng(43)

    def reference(card: np.ndarray, face_ink_map: np.ndarray, turned: bool) -> float:
        r, c, s = face_ink.RIM, face_ink.CELL, face_ink.SLIDE
        seen = face_ink.ink(card)[r:-r, r:-r]
        face = face_ink_map[::-1, ::-1] if turned else face_ink_map
        rows, cols = seen.shape[0] // c, seen.shape[1] // c
        seen = seen[: rows * c, : cols * c]
        return min(float(np.maximum(seen - face[r - dy : r - dy + rows * c, r - dx : r - dx + cols * c], 0)
                         .reshape(rows, c, cols, c).mean(axis=(1, 3)).max())
                   for dy in range(-s, s + 1) for dx in range(-s, s + 1))

    codes = sorted(faces)
    for k in range(24):
        card_code, read_code = rng.choice(codes, 2)
        card = np.clip(faces[card_code] * rng.uniform(0.5, 1.0) + rng.normal(0, 8, faces[card_code].shape), 0, 255)
        card = card.astype(np.uint8)
        read = explained(faces[read_code])
        assert abs(unexplained_ink(card, read, (bool(k % 2),)) - reference(card, read, bool(k % 2))) < 1e-5


@pytest.mark.parametrize("deck_name", DECKS)
def test_either_way_up_is_the_less_of_the_two_and_a_turned_card_is_explained_by_its_own_face(deck_name: str) -> None:
    deck_or_skip(deck_name)
    faces = templates_for(deck_name).faces
    six = glared(faces["6H"], [(0.68, 0.5, 0.12, 600.0), (0.3, 0.5, 0.1, 150.0)])
    turned = np.ascontiguousarray(six[::-1, ::-1])
    own, four = explained(faces["6H"]), explained(faces["4H"])
    for card in (six, turned):
        both = unexplained_ink(card, own)
        assert both == min(unexplained_ink(card, own, (False,)), unexplained_ink(card, own, (True,)))
        assert both <= UNEXPLAINED_INK / 4
        # a face with fewer pips explains it neither way up
        assert unexplained_ink(card, four) > UNEXPLAINED_INK


def test_a_card_of_another_size_than_the_face_is_refused_and_the_cells_cover_the_card_evenly() -> None:
    from firmware_interfaces.camera import face_ink

    faces = templates_for(DECKS[0]).faces
    with pytest.raises(ValueError, match="canonical"):
        unexplained_ink(cv2.resize(faces["6H"], (100, 150)), explained(faces["4H"]))
    # what the rim leaves is cut into whole cells (nothing left out on one side only, which a
    # card turned 180 degrees would swap), and a slide never reaches past the rim
    rows, cols = explained(faces["4H"]).shape
    assert (rows - 2 * face_ink.RIM) % face_ink.CELL == 0 and (cols - 2 * face_ink.RIM) % face_ink.CELL == 0
    assert face_ink.SLIDE <= face_ink.RIM


def test_the_search_stops_at_the_first_slide_that_explains_enough_and_only_then() -> None:
    faces = templates_for(DECKS[0]).faces
    six = glared(faces["6H"], [(0.68, 0.5, 0.12, 600.0), (0.3, 0.5, 0.1, 150.0)])
    own, four = explained(faces["6H"]), explained(faces["4H"])
    # enough met: some value at or under it (not always the least), the same verdict
    quick = unexplained_ink(six, own, enough=UNEXPLAINED_INK)
    assert unexplained_ink(six, own) <= quick <= UNEXPLAINED_INK
    # never met: the whole search, the least
    assert unexplained_ink(six, four, enough=UNEXPLAINED_INK) == unexplained_ink(six, four) > UNEXPLAINED_INK
