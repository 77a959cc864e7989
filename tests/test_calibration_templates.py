"""Card templates from the studio's deck: file naming, photos, self-test, live capture."""

from __future__ import annotations

import random
from pathlib import Path

import cv2
import numpy as np
import pytest
from cardart import DECKS, deck_or_skip

from calibration.capture import CaptureError, TemplateCapture
from calibration.errors import CalibrationFileError
from calibration.layout import load_layout
from calibration.table import calibrate_from_markers
from calibration.templates import CardTemplates, code_from_filename, load_face_images
from firmware_interfaces.camera.simulated import SimulatedCamera
from firmware_interfaces.errors import UnknownCardCode
from table_controller.rules.cards import CODES


def _write_deck(folder: Path, deck, style: str = "plain") -> None:  # type: ignore[no-untyped-def]
    for code, face in deck.faces().items():
        name = code
        if style == "ten-as-10" and code[0] == "T":
            name = "10" + code[1]
        if style == "lower":
            name = code.lower()
        img = face
        if style == "photo":  # the card photographed on a dark bench, a little off-centre
            img = cv2.copyMakeBorder(face, 40, 25, 30, 55, cv2.BORDER_CONSTANT, value=(35, 30, 30))
        cv2.imwrite(str(folder / f"{name}.{'jpg' if style == 'photo' else 'png'}"), img)


@pytest.mark.parametrize(("name", "code"), [("AS.png", "AS"), ("10H.png", "TH"), ("th.jpg", "TH"), ("QD.jpg", "QD")])
def test_file_names_are_card_codes(name: str, code: str) -> None:
    assert code_from_filename(Path(name)) == code


def test_a_file_name_that_is_no_card_is_named() -> None:
    with pytest.raises(UnknownCardCode, match="XX.png: file name is not a card code"):
        code_from_filename(Path("XX.png"))


@pytest.mark.parametrize("deck_name", DECKS)
@pytest.mark.parametrize("style", ["plain", "ten-as-10", "lower", "photo"])
def test_templates_from_images_read_every_card_back(tmp_path, deck_name: str, style: str) -> None:  # type: ignore[no-untyped-def]
    deck = deck_or_skip(deck_name)
    _write_deck(tmp_path, deck, style)
    seen: list[int] = []
    templates = CardTemplates(load_face_images(tmp_path, progress=lambda done, total: seen.append(done)))
    assert seen[-1] == 52
    report = templates.self_test(trials=1)
    assert report["accuracy"] == 1.0
    assert report["confusions"] == []


def test_a_missing_card_image_is_listed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    _write_deck(tmp_path, deck_or_skip("svg-cards"))
    (tmp_path / "QD.png").unlink()
    (tmp_path / "7C.png").unlink()
    with pytest.raises(CalibrationFileError, match="no image for 2 card\\(s\\): 7C QD"):
        load_face_images(tmp_path)


def test_templates_save_and_load(tmp_path) -> None:  # type: ignore[no-untyped-def]
    deck = deck_or_skip("svg-cards")
    CardTemplates(deck.faces()).save(tmp_path)
    loaded = CardTemplates.load(tmp_path)
    assert loaded.read(loaded.faces["9D"]).code == "9D"
    (tmp_path / "templates" / "9D.png").unlink()
    with pytest.raises(CalibrationFileError, match="template .*9D.png is missing"):
        CardTemplates.load(tmp_path)


def test_live_capture_names_each_picture_by_the_shoe_code() -> None:
    deck = deck_or_skip("kde-standard")
    layout = load_layout("baccarat")
    cam = SimulatedCamera(layout, deck, seed=5)
    plane = calibrate_from_markers(cam.read(), layout)
    progress: list[tuple[int, str]] = []
    capture = TemplateCapture(plane, layout, progress=lambda n, total, code: progress.append((n, code)))
    order = random.Random(1).sample(CODES, 52)  # the shoe deals the calibration deck in any order
    for code in order:
        cam.clear()
        cam.place("player1", code)
        capture.add(code, cam.read())
    assert progress[-1] == (52, order[-1])
    templates = capture.templates()
    assert templates.self_test(trials=1)["accuracy"] == 1.0
    # the captured templates read the deck's own art
    assert all(templates.read(cv2.resize(deck.face(c), (112, 160))).code == c for c in ("5S", "6S", "QH", "TC"))


def test_live_capture_refuses_a_frame_with_two_cards() -> None:
    deck = deck_or_skip("svg-cards")
    layout = load_layout("baccarat")
    cam = SimulatedCamera(layout, deck, seed=6)
    capture = TemplateCapture(calibrate_from_markers(cam.read(), layout), layout)
    cam.place("player1", "AS")
    cam.place("banker1", "KD")
    with pytest.raises(CaptureError, match="card 2H: expected exactly one card on the table, found 2"):
        capture.add("2H", cam.read())
    assert capture.missing == list(CODES)


def test_live_capture_refuses_a_code_the_shoe_should_not_report() -> None:
    layout = load_layout("baccarat")
    cam = SimulatedCamera(layout, deck_or_skip("svg-cards"), seed=7)
    capture = TemplateCapture(calibrate_from_markers(cam.read(), layout), layout)
    cam.place("player1", "AS")
    with pytest.raises(UnknownCardCode, match=r"^shoe reported 'ZS': unknown card code 'ZS': expected rank"):
        capture.add("ZS", cam.read())
    capture.add("10s", cam.read())  # the shoe's spelling of a ten: stored under its canonical code
    assert "TS" in capture.faces and len(capture.missing) == 51


@pytest.mark.parametrize("deck_name", DECKS)
def test_the_clearer_corner_index_tells_pip_neighbours_apart_when_a_glare_spot_hides_a_pip(deck_name: str) -> None:
    """5S under glare over its centre pip and, blown out, its top corner: the other corner
    still says 5 (the clearer corner is the one read)."""
    from firmware_interfaces.camera.recognizer import pip_neighbours

    deck = deck_or_skip(deck_name)
    templates = CardTemplates(deck.faces())
    card = templates.faces["5S"].astype("float32")
    h, w = card.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    for cx, cy, sigma, peak in ((w * 0.5, h * 0.5, w * 0.12, 255.0), (w * 0.08, h * 0.08, w * 0.15, 600.0)):
        glow = peak * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * sigma**2))
        card = card + glow[..., None] if card.ndim == 3 else card + glow
    glared = np.clip(card, 0, 255).astype("uint8")
    assert templates.index_lead(glared, "5S", "4S") > 0 > templates.index_lead(glared, "4S", "5S")
    assert templates.index_lead(templates.faces["8H"], "8H", "7H") > 0
    # the corners' patches made once and passed in give the same leads, bit for bit
    patches = templates.corner_patches(glared)
    rivals = ["4S", "6S"]
    assert templates.index_leads(glared, "5S", rivals, patches) == templates.index_leads(glared, "5S", rivals)
    assert templates.index_leads(glared, "4S", ["5S"], patches) == [templates.index_lead(glared, "4S", "5S")]
    assert pip_neighbours("4S", "5S") and pip_neighbours("AS", "2S") and pip_neighbours("9D", "TD")
    assert not pip_neighbours("4S", "5H") and not pip_neighbours("TS", "JS") and not pip_neighbours("4S", "6S")
