"""Finding and reading cards in randomised scenes: printed lines under and beside cards, the
print mask from the empty felt, and the cards no reader may name."""

from __future__ import annotations

import functools

import cv2
import numpy as np
import pytest
from cardart import deck_or_skip, templates_for

import firmware_interfaces.camera.finder as finder_module
import firmware_interfaces.camera.recognizer as recognizer_module
from calibration.layout import load_layout
from calibration.store import Calibration
from calibration.table import TablePlane, calibrate_from_markers
from firmware_interfaces.camera.finder import (
    CALIBRATION_PX_PER_MM,
    PAPER_CONTRAST,
    CardFinder,
    FoundCard,
    _print_unseen,
    best_rect,
    learn_empty_table,
)
from firmware_interfaces.camera.recognizer import Recognizer
from firmware_interfaces.camera.scenes import DomainRandomisation, GeneratedFrame, generate_test_set
from firmware_interfaces.camera.scoring import Score

LAYOUTS = ("baccarat", "three-pictures", "three-face", "teen-patti-2020")


def _frames(n: int, seed: int, deck: str = "svg-cards", first: int = 0, **ranges: object) -> list[GeneratedFrame]:
    r = DomainRandomisation(**ranges)  # type: ignore[arg-type]
    return generate_test_set(deck_or_skip(deck), [load_layout(g) for g in LAYOUTS], n, seed=seed, randomise=r,
                             first=first)


def _recognizer(tf: GeneratedFrame, deck: str = "svg-cards", empty_table: bool = True) -> Recognizer:
    """Calibrated as ``calibrate table`` does it; ``empty_table=False`` keeps only the print
    mask, as calibration folders made before ``empty_table.png`` was kept."""
    plane = calibrate_from_markers(tf.empty, tf.layout)
    mask, empty = learn_empty_table(plane, tf.layout, tf.empty)
    return Recognizer(Calibration(plane, templates_for(deck), printed=mask,
                                  empty_table=empty if empty_table else None), tf.layout)


def _corner_error(a: np.ndarray, b: np.ndarray) -> float:
    return float(min(np.abs(np.roll(a, k, axis=0) - b).max() for k in (0, 2)))


@functools.cache
def _lines_under_cards() -> tuple[GeneratedFrame, ...]:
    """Slot outlines drawn right at the cards' edges, cards pushed off-centre over them,
    in a camera's fair light (so that only the print makes them hard)."""
    return tuple(_frames(8, seed=21, slot_pad_mm=(0.3, 0.8), line_mm=(2.0, 2.5), offset_mm=6.0,
                         glare_spots=(0, 0), glare_on_card_chance=0.0, motion_blur_chance=0.0,
                         blur_sigma=(0.4, 0.8), noise_sigma=(1.0, 2.0), jpeg_quality=(85, 95),
                         hand_shadow_chance=0.0, exposure_stops=(0.0, 0.0)))


def _read_over_lines(empty_table: bool) -> tuple[Score, list[float]]:
    score, errors = Score(), []
    for i, tf in enumerate(_lines_under_cards()):
        readings = _recognizer(tf, empty_table=empty_table).recognize(tf.scene.image)
        score.add(tf.scene.cards, readings, f"frame {i}")
        for t in tf.scene.cards:
            truth = np.array(t.corners)
            near = [r for r in readings if np.hypot(*(np.mean(r.corners, axis=0) - truth.mean(axis=0))) < 25]
            if near:
                errors.append(_corner_error(np.array(near[0].corners), truth))
    return score, errors


def test_a_card_lying_over_its_printed_slot_line_is_found_whole_and_read() -> None:
    score, errors = _read_over_lines(empty_table=True)
    assert (score.wrong, score.phantom) == (0, 0), score.errors
    # measured here: 50 of 50 read (45 before the camera's shift since calibration was
    # measured and undone); the line a card covers changed colour from the empty table's, so
    # it is given back to the card and its edge past the line is kept
    assert score.missed == 0 and score.read_rate >= 0.98, score.errors
    # 90th percentile of the corners' error: 3.8 px when every outline was refined, 4.65 px
    # since a card read for sure on the finder's own outline keeps that outline (a refinement
    # costs 0.55 ms a card; see docs/camera.md, session 37); an outline clipped at the line is
    # 15 px off (the test below)
    assert float(np.percentile(errors, 90)) < 5.5, "outlines are not on the cards' own edges (measured: 4.65 px)"


def test_without_the_empty_table_a_card_over_its_line_is_still_never_read_wrong() -> None:
    """A calibration folder made before ``empty_table.png`` was kept: only the print mask,
    which cannot follow the camera's shift since calibration (measured: 36 of 50 read, 2
    missed, outlines clipped at the line: 90th percentile 15 px off). Never a wrong read."""
    score, _ = _read_over_lines(empty_table=False)
    assert (score.wrong, score.phantom) == (0, 0), score.errors
    assert score.missed <= 3 and score.read_rate >= 0.6, score.errors


def test_a_card_left_on_the_table_at_calibration_is_not_taken_for_print() -> None:
    tf = _lines_under_cards()[0]
    plane = calibrate_from_markers(tf.empty, tf.layout)
    finder = CardFinder(plane, tf.layout, px_per_mm=CALIBRATION_PX_PER_MM)  # as calibration makes it, 1 px/mm
    from_empty = finder.printed_structure(tf.empty) > 0
    with_cards = finder.printed_structure(tf.scene.image) > 0
    extra = with_cards & ~from_empty
    card_area = tf.layout.card_mm[0] * tf.layout.card_mm[1]
    # at most the cards' thin edges and ink: less than one card's area for all six
    assert extra.sum() < card_area
    for t in tf.scene.cards:
        x, y = (int(v) for v in t.centre_mm)
        middle = with_cards[y - 15 : y + 15, x - 10 : x + 10]
        assert middle.mean() < 0.2, f"the middle of {t.code} was taken for print"
    assert from_empty.sum() > 0


def test_hard_empty_tables_show_no_card() -> None:
    frames = _frames(10, seed=31, deck="kde-standard", chips=(2, 5), words_chance=1.0, hand_shadow_chance=0.5)
    for tf in frames:
        rec = _recognizer(tf, "kde-standard")
        assert rec.recognize(tf.empty) == [], "a card was reported on an empty table"


def test_a_lit_empty_table_shows_no_card_against_its_calibration() -> None:
    """The table calibrated empty in mild light, then seen empty in the frames' own light:
    glare, chips, words, exposure, colour cast and vignette change the table against the
    empty table it is compared with, and none of it may become a card. (A pool of glare
    framed by a slot's lines, with cards on the table, is frame 13 of the hard-scenes test.)"""
    r = DomainRandomisation(glare_spots=(2, 3), chips=(2, 5), words_chance=1.0)
    frames = generate_test_set(deck_or_skip("svg-cards"), [load_layout(g) for g in LAYOUTS], 12, seed=61,
                               randomise=r, empty_every=1)
    for i, tf in enumerate(frames):
        assert tf.scene.cards == []
        assert _recognizer(tf).recognize(tf.scene.image) == [], f"a card was reported on empty frame {i}"


def test_face_down_half_covered_and_cut_cards_are_never_named() -> None:
    frames = _frames(12, seed=41, face_down_cards=1, occluded_cards=1, cut_cards=1)
    named = []
    for i, tf in enumerate(frames):
        readings = _recognizer(tf).recognize(tf.scene.image)
        for t in tf.scene.cards:
            if t.code is not None:
                continue
            truth = np.array(t.corners)
            for r in readings:
                if r.code is not None and np.hypot(*(np.mean(r.corners, axis=0) - truth.mean(axis=0))) < 30:
                    named.append(f"frame {i}: {t.conditions.get('kind')} card read as {r.code}")
    assert named == []


def test_hard_scenes_are_read_with_no_wrong_read_and_no_phantom() -> None:
    score = Score()
    for i, tf in enumerate(_frames(16, seed=51)):
        score.add(tf.scene.cards, _recognizer(tf).recognize(tf.scene.image), f"frame {i}",
                  conditions=tf.scene.meta.get("conditions"))
    assert (score.wrong, score.phantom) == (0, 0), score.errors
    assert score.read_rate >= 0.85, score.errors


def test_a_frame_with_alpha_or_in_grey_and_a_grey_or_wrong_sized_empty_table_do_not_stop_the_reader(caplog) -> None:  # type: ignore[no-untyped-def]
    import cv2

    tf = _lines_under_cards()[0]
    rec = _recognizer(tf)
    want = sorted((r.code or "", r.position or "") for r in rec.recognize(tf.scene.image))
    assert len(want) == len(tf.scene.cards)
    with_alpha = cv2.cvtColor(tf.scene.image, cv2.COLOR_BGR2BGRA)
    assert sorted((r.code or "", r.position or "") for r in rec.recognize(with_alpha)) == want
    grey = cv2.cvtColor(tf.scene.image, cv2.COLOR_BGR2GRAY)
    assert all(r.position for r in rec.recognize(grey))  # read or not, it is found and placed
    plane = calibrate_from_markers(tf.empty, tf.layout)
    mask, empty = learn_empty_table(plane, tf.layout, tf.empty)
    for odd in (cv2.cvtColor(empty, cv2.COLOR_BGR2GRAY), empty[:-5]):
        odd_rec = Recognizer(Calibration(plane, templates_for("svg-cards"), printed=mask, empty_table=odd), tf.layout)
        assert len(odd_rec.recognize(tf.scene.image)) == len(tf.scene.cards)
    assert "is not used" in caplog.text  # the wrong-sized one is named, not silently dropped


@functools.cache
def _glare_on_offset_cards() -> tuple[GeneratedFrame, ...]:
    """Frames 2 and 5 of these hard scenes each hold a card pushed 2-8 mm off its slot's centre,
    turned 5-7°, with glare on it: no mask cuts it out, and the slot fit's best rectangle
    steps up on three sides while the fourth, inside the washed-out card, steps down a little."""
    return tuple(_frames(6, seed=101))


def test_a_slot_fit_whose_fourth_side_steps_down_a_little_is_still_tried_and_read() -> None:
    frames = _glare_on_offset_cards()
    # frame 2's KS was read this way too, until the alignment was kept from stretching a card
    for i, code in ((5, "7C"),):
        tf = frames[i]
        truth = next(t for t in tf.scene.cards if t.code == code)
        readings = _recognizer(tf).recognize(tf.scene.image)
        centre = np.mean(truth.corners, axis=0)
        near = [r for r in readings if np.hypot(*(np.mean(r.corners, axis=0) - centre)) < 25]
        assert [r.code for r in near] == [code], (i, [(r.code, r.position) for r in readings])


@functools.cache
def _glare_in_double_lined_slots() -> tuple[GeneratedFrame, ...]:
    """Empty tables under strong glare with every slot outlined twice: in frames 7 and 12 a
    pool of light between a slot's lines is cut out as a card-shaped, card-sized blob."""
    r = DomainRandomisation(second_line_chance=1.0, glare_spots=(3, 3), glare_strength=(120.0, 160.0),
                            words_chance=1.0)
    layouts = [load_layout(g) for g in ("baccarat", "three-pictures", "teen-patti-2020")]
    return tuple(generate_test_set(deck_or_skip("svg-cards"), layouts, 13, seed=4, randomise=r, empty_every=1))


def test_a_pool_of_glare_between_a_slots_lines_is_no_card_the_felt_shows_through_it() -> None:
    frames = _glare_in_double_lined_slots()
    for i in (7, 12):
        tf = frames[i]
        assert not tf.scene.cards
        readings = _recognizer(tf).recognize(tf.scene.image)
        assert readings == [], (i, [(r.code, r.position) for r in readings])


def test_the_felt_shows_through_no_card_face_up_or_down() -> None:
    tf = _frames(4, seed=12, face_down_cards=1, occluded_cards=0, cut_cards=0)[0]
    rec = _recognizer(tf)
    rec.recognize(tf.scene.image)
    for t in tf.scene.cards:
        assert rec.finder.felt_showing(tf.scene.image, np.array(t.corners)) < 0.3, t.code



def _moved_mm(plane: TablePlane, corners: np.ndarray, dx: float, dy: float) -> np.ndarray:
    mm = cv2.perspectiveTransform(np.asarray(corners, np.float64).reshape(-1, 1, 2), plane.image_to_table)
    return cv2.perspectiveTransform(mm + (dx, dy), plane.table_to_image).reshape(-1, 2)


def test_a_card_whose_found_outline_lies_a_centimetre_off_is_read_where_a_card_sized_fit_puts_it() -> None:
    """A found outline 9 mm by 5 mm off its card (two outlines joined, a printed line taken
    in) and no slot to start from (with one, the slot's own start reads most such cards; the
    fit is for those whose slot start reads another face): the card-sized rectangle
    ``CardFinder.fit_cards`` fits around it brings the reader onto the card; without it, it
    reads next to nothing (measured: 25 of 36 read with it, 2 without; none wrong either way)."""
    frames = _frames(6, seed=33, slot_pad_mm=(0.5, 2.0), line_mm=(1.5, 2.5), offset_mm=6.0, max_rotation_deg=10.0,
                     glare_spots=(0, 0), glare_on_card_chance=0.0, motion_blur_chance=0.0, hand_shadow_chance=0.0)
    read = {"fitted": 0, "not fitted": 0}
    cards = 0
    for tf in frames:
        rec = _recognizer(tf)
        rec.finder.find(tf.scene.image)  # a fit takes the frame's exposure and camera shift from the search
        for t in tf.scene.cards:
            if t.code is None or t.slot is None:
                continue
            cards += 1
            start = _moved_mm(rec.calibration.table, np.array(t.corners), 9.0, 5.0)
            for way in read:
                if way == "not fitted":
                    rec.finder.fit_cards = lambda *_: []  # type: ignore[method-assign]
                code, _, _ = rec._read(tf.scene.image, [start], False, None)
                assert code in (None, t.code), f"{t.code} read {code} ({way})"
                read[way] += code == t.code
                if way == "not fitted":
                    del rec.finder.fit_cards
    assert cards >= 30
    assert read["fitted"] >= 0.6 * cards and read["not fitted"] <= 0.2 * cards, (read, cards)


def test_a_card_dealt_off_the_slots_that_no_mask_cut_out_is_fitted_where_the_most_light_is() -> None:
    """Two dropped cards of the benchmark's tuned-on svg-cards scenes (seed 101) that every
    mask missed: a QH whose court picture split it in two, and a JC in a pool of glare that
    joined it to its neighbour in a slot. Paper away from every slot and card found is
    looked for (``CardFinder._loose_paper``), a card fitted there and read; without that
    search, neither is found at all."""
    r = DomainRandomisation()
    layouts = [load_layout(g) for g in LAYOUTS]
    for first, code in ((25, "QH"), (37, "JC")):
        tf = generate_test_set(deck_or_skip("svg-cards"), layouts, 1, seed=101, randomise=r, first=first)[0]
        truth = next(t for t in tf.scene.cards if t.slot is None)
        assert truth.code == code  # the generator still makes the scene this test was measured on
        centre = np.mean(truth.corners, axis=0)
        for search in (True, False):
            rec = _recognizer(tf)
            if not search:
                rec.finder._loose_paper = lambda *_: []  # type: ignore[method-assign]
            near = [r.code for r in rec.recognize(tf.scene.image)
                    if np.hypot(*(np.mean(r.corners, axis=0) - centre)) < 25]
            assert near == ([code] if search else []), (code, search, near)


def test_an_outline_reaching_a_corner_marker_or_its_quiet_zone_is_known_as_such() -> None:
    """The reader takes no index-alone read from a view over a marker (its white zone passes
    for burnt-out glare, its modules for an index: a held-out deck's loose-paper fit next to
    a marker was read KH that way before ``CardFinder.on_marker`` kept it out)."""
    tf = _frames(1, seed=3)[0]
    finder = _recognizer(tf).finder
    layout = tf.layout
    cw, ch = layout.card_mm
    zone = layout.markers.size_mm / 2 + 12.0  # MARKER_MARGIN_MM
    plane = finder._to_image
    for mx, my in layout.markers.centres_mm:
        inward_x = 1.0 if mx < layout.width_mm / 2 else -1.0
        inward_y = 1.0 if my < layout.height_mm / 2 else -1.0
        for gap, expected in ((-3.0, True), (3.0, False)):
            # a card beside the marker, its near edge ``gap`` mm outside the zone's edge
            cx = mx + inward_x * (zone + gap + cw / 2)
            box = np.array([[cx - cw / 2, my - ch / 2], [cx + cw / 2, my - ch / 2],
                            [cx + cw / 2, my + ch / 2], [cx - cw / 2, my + ch / 2]], np.float64)
            box[:, 1] += inward_y * ch / 2  # onto the table
            img = cv2.perspectiveTransform(box.reshape(-1, 1, 2), plane).reshape(-1, 2)
            assert finder.on_marker(img) is expected, ((mx, my), gap)


def _special_cards_named(first: int, kind: str) -> list[str]:
    """Frame ``first`` of the special scenes (seed 5: a face-down, a half-covered and a cut
    card a frame): the codes read within 30 px of a card of ``kind`` (must be none)."""
    tf = _frames(1, seed=5, first=first, face_down_cards=1, occluded_cards=1, cut_cards=1)[0]
    special = [t for t in tf.scene.cards if t.code is None and t.conditions.get("kind") == kind]
    assert special, first  # the generator still makes the scene the test was measured on
    readings = _recognizer(tf).recognize(tf.scene.image)
    named = []
    for t in special:
        centre = np.mean(t.corners, axis=0)
        named += [r.code for r in readings if r.code and np.hypot(*(np.mean(r.corners, axis=0) - centre)) < 30]
    return named


def test_a_card_half_under_an_over_exposed_hand_is_not_read_from_its_clear_index() -> None:
    """Two cards 45-46 % under a light-skinned hand the exposure clipped to white (seed 5,
    frames 22 and 24: a JS and a KC), whose top-left index lies clear: the clipped skin passed
    for a burnt-out highlight, and the index-alone read named them, until the code read had to
    show its print around the burnt patch (``print_shows_around_glare``)."""
    for first in (22, 24):
        assert _special_cards_named(first, "occluded") == [], first


def test_a_card_the_frames_edge_cuts_is_not_fitted_as_a_loose_card() -> None:
    """Two cut cards (seed 5, frames 3 and 23) whose visible part holds enough paper and ink
    for the loose-paper search: fitted as whole cards, their fits ran out of sight and were
    read JD and AD, until a loose fit had to lie wholly where the camera sees the table."""
    for first in (3, 23):
        assert _special_cards_named(first, "cut") == [], first


def test_a_slot_fit_takes_the_cards_own_height_when_the_card_looks_smaller_than_the_layouts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A card seen 8 % smaller than the layout's 63 x 88 mm (the camera or the table a little
    off their calibration; the independent harness scales cards 0.92-1.10) inside its slot's
    printed outline, in brightness over the empty table: the felt grey, the slot's line darker
    (it was brighter on the empty table), the card bright."""
    window = np.full((200, 200), 60, np.uint8)
    cv2.rectangle(window, (65, 53), (135, 147), 15, 3)  # the slot's line
    card_w, card_h = 63.0 * 0.92, 88.0 * 0.92
    x0, y0 = round(100 - card_w / 2), round(100 - card_h / 2)
    cv2.rectangle(window, (x0, y0), (x0 + round(card_w), y0 + round(card_h)), 200, -1)
    window = cv2.GaussianBlur(window, (0, 0), 0.8)
    card_centre_y = y0 + round(card_h) / 2
    best, sides = best_rect(window, (100.0, 100.0), 0.0, (63.0, 88.0), CALIBRATION_PX_PER_MM)
    dx, dy, angle, width, height = best
    assert abs(height - 0.92) <= 0.03 and abs(width * 63.0 - card_w) <= 2.5
    assert abs(100.0 + dy - card_centre_y) <= 1.5 and abs(dx) <= 1.0 and abs(angle) <= 1.0
    assert min(sides) >= PAPER_CONTRAST  # four sides on the card's edges
    # searched at the layout's height alone (as the fit was before session 42, though ranked by
    # today's score), the best box is too tall: one side lies on nothing (on the harness's
    # glare-lit felt it stepped down, and the fit was refused)
    coarse, fine = finder_module._COARSE_SHAPES, finder_module._FINE_SHAPES
    monkeypatch.setattr(finder_module, "_COARSE_SHAPES", coarse[coarse[:, 2] == 1.0])
    monkeypatch.setattr(finder_module, "_FINE_SHAPES", fine[fine[:, 2] == 0.0])
    tall, tall_sides = best_rect(window, (100.0, 100.0), 0.0, (63.0, 88.0), CALIBRATION_PX_PER_MM)
    assert abs(tall[1]) >= 1.5 and min(tall_sides) < PAPER_CONTRAST


def _card_across_slot_lines(size: int = 240) -> tuple[np.ndarray, np.ndarray]:
    """A card 61.5 x 88 mm turned 11.6° in a slot printed round the layout's 63 x 88 mm card, in
    brightness over the empty table at CALIBRATION_PX_PER_MM (``size`` px square, the card in
    the middle): the felt grey, the slot's white line dark whether bare or under the card (the card
    is as white as the line was), the card bright; and the print as stored (grown a pixel)."""
    c = CALIBRATION_PX_PER_MM
    window = np.full((size, size), 60, np.uint8)
    card = cv2.boxPoints(((size / 2, size / 2), (61.5 * c, 88.0 * c), 11.6)).astype(np.int32)
    cv2.fillPoly(window, [card], 200)
    line = np.zeros_like(window)
    # the slot's line, 2 mm wide, round a box 67 x 96 mm (the card's corners reach over it)
    cv2.rectangle(line, (round(size / 2 - 33.5 * c), round(size / 2 - 48 * c)),
                  (round(size / 2 + 33.5 * c), round(size / 2 + 48 * c)), 255, round(2 * c))
    window[line > 0] = 15
    window = cv2.GaussianBlur(window, (0, 0), 0.8)
    return window, cv2.dilate(line, np.ones((3, 3), np.uint8))


def test_a_card_turned_across_its_slots_lines_is_fitted_where_it_lies_not_as_the_slots_inside() -> None:
    """Held-out tigullio, seed 23: a JH turned 11.6° across its slot's lines was missed. Taken as
    felt, the line under the card gave the slot's inside four sides, and the fit took it;
    outside samples on the print are no evidence of felt."""
    window, printed = _card_across_slot_lines()
    c = CALIBRATION_PX_PER_MM
    at = (window.shape[1] / 2 / c, window.shape[0] / 2 / c)
    best, sides = best_rect(window, at, 0.0, (63.0, 88.0), c, _print_unseen(window, printed))
    dx, dy, angle, width, height = best
    assert abs(angle - 11.6) <= 2.0 and abs(dx) <= 1.5 and abs(dy) <= 1.5 and abs(height - 1.0) <= 0.04
    # narrower than the card (0.88 of the layout's 63 mm): where a wider box's outside samples
    # both fall on the print, its side steps down to white; the refinement then finds the edges
    assert 0.85 <= width <= 1.0
    assert min(sides) >= PAPER_CONTRAST
    # with every outside sample taken as it is, the fit is the slot's inside, square to it
    square, _ = best_rect(window, at, 0.0, (63.0, 88.0), c)
    assert abs(square[2]) <= 4.0


def test_a_fit_asked_to_leave_the_print_out_does_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """``CardFinder._fit_rects`` asked to leave the print out fits the card of
    :func:`_card_across_slot_lines` where it lies, without it as the slot's inside; with the
    print not known there is nothing to leave out."""
    tf = _frames(1, seed=3)[0]
    finder = _recognizer(tf).finder
    seen: list[tuple[int, int]] = []

    def fine_window(frame: np.ndarray, gain: np.ndarray | None, x0: int, y0: int,
                    size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        seen.append(size)
        return _card_across_slot_lines(size[0])  # the search's centre in the window's middle

    monkeypatch.setattr(finder, "_fine_window", fine_window)
    centre = (400.0, 300.0)
    plain, print_left_out = finder._fit_rects(tf.scene.image, None, centre, 0.0, (False, True))

    def angle(fitted: tuple[float, np.ndarray, tuple[float, float]] | None) -> float:
        assert fitted is not None
        box = fitted[1]
        top = box[np.argsort(box[:, 1])[:2]]
        left, right = top[np.argsort(top[:, 0])]
        return float(np.degrees(np.arctan2(right[1] - left[1], right[0] - left[0])))

    assert abs(abs(angle(print_left_out)) - 11.6) <= 2.5
    assert abs(angle(plain)) <= 4.0
    assert len(seen) == 1  # one window for both fits
    assert seen and seen[0][0] == seen[0][1]
    assert _print_unseen(np.zeros((4, 4), np.uint8), None) is None


def test_the_fits_around_a_card_are_made_with_the_samples_as_they_are_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """``fit_cards`` fits each start twice, every plain fit first, as before the others were
    added: the fit that takes print as no felt is added to the plain ones, never in their place
    (alone it lost our sets 2-7 reads each: docs/camera.md, session 57). Both are kept when
    they differ."""
    tf = _frames(1, seed=3)[0]
    rec = _recognizer(tf)
    rec.finder.find(tf.scene.image)
    calls: list[tuple[bool, ...]] = []
    plain_boxes: list[np.ndarray] = []
    plain_fits = CardFinder._fit_rects
    # each start's fits told apart by where they lie: the plain ones where the plain fit puts
    # them, the others that far moved by 3 mm (another box: both must be kept)
    moved = np.array([3.0, 3.0])

    def fit_rects(self: CardFinder, frame: np.ndarray, gain: np.ndarray | None, centre: tuple[float, float],
                  base: float, ways: tuple[bool, ...]) -> list[tuple[float, np.ndarray, tuple[float, float]] | None]:
        calls.append(ways)
        plain = plain_fits(self, frame, gain, centre, base, (False,))[0]
        if plain is not None:
            plain_boxes.append(plain[1])
        fits: list[tuple[float, np.ndarray, tuple[float, float]] | None] = []
        for print_unseen in ways:
            if plain is None or not print_unseen:
                fits.append(plain)
            else:
                contrast, box, at = plain
                fits.append((contrast, box + moved, (at[0] + 3.0, at[1] + 3.0)))
        return fits

    monkeypatch.setattr(CardFinder, "_fit_rects", fit_rects)
    card = tf.scene.cards[0]
    corners = np.array(card.corners, np.float32)
    slot = rec.layout.slot_at(*rec.finder.to_table(corners.mean(axis=0)))
    fits = rec.finder.fit_cards(tf.scene.image, corners, slot)
    starts = 2 if slot is not None else 1
    assert calls == [(False, True)] * starts
    # the plain fits as fit_cards keeps them: two starts that settle on one card give one
    distinct: list[np.ndarray] = []
    for b in (np.sort(b, axis=0) for b in plain_boxes):
        if not any(np.abs(b - d).max() < 1.0 for d in distinct):
            distinct.append(b)
    assert distinct and len(fits) == 2 * len(distinct)
    # every plain fit before every other (outlines back on the table, corners in any order)
    on_table = [np.sort(cv2.perspectiveTransform(f.reshape(-1, 1, 2).astype(np.float64),
                                                 rec.finder._to_table).reshape(-1, 2), axis=0) for f in fits]
    assert all(any(np.abs(t - d).max() < 0.05 for d in distinct) for t in on_table[:len(distinct)])
    assert all(any(np.abs(t - (d + moved)).max() < 0.05 for d in distinct) for t in on_table[len(distinct):])


def test_an_empty_slots_printed_lines_are_no_paper_to_fit_a_card_to(monkeypatch: pytest.MonkeyPatch) -> None:
    """Doubled slot lines fill 30-60 % of a card's area of an empty slot; counted as paper,
    each such slot cost a card-sized fit (about 5 ms at 720p) in every frame. Bare print is
    no paper (print a card covers still is). Measured on these 12 empty tables of the games
    with 12-13 slots, no glare: 21 slots fitted before, 3 since (the count depends on the
    seed: over seeds 1, 2, 3, 5 and 7, 105 before and 31 since, the rest in slots where
    paper-bright pixels lie off the print)."""
    r = DomainRandomisation(second_line_chance=1.0, glare_spots=(0, 0), words_chance=1.0, hand_shadow_chance=0.0)
    frames = generate_test_set(deck_or_skip("svg-cards"), [load_layout(g) for g in ("three-pictures", "three-face")],
                               12, seed=5, randomise=r, empty_every=1)
    in_slot = []
    fit_in_slot, fit_rect = CardFinder._fit_in_slot, CardFinder._fit_rect

    def slot_fit(self: CardFinder, *args: object) -> object:
        in_slot.append(True)
        try:
            return fit_in_slot(self, *args)  # type: ignore[arg-type]
        finally:
            in_slot.pop()

    fitted_slots = []

    def counted(self: CardFinder, *args: object) -> object:
        if in_slot:
            fitted_slots.append(1)  # the slot's paper was enough to try a fit
        return fit_rect(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(CardFinder, "_fit_in_slot", slot_fit)
    monkeypatch.setattr(CardFinder, "_fit_rect", counted)
    for tf in frames:
        assert tf.scene.cards == []
        assert _recognizer(tf).recognize(tf.scene.image) == []
    assert len(fitted_slots) <= 5, (f"{len(fitted_slots)} empty slots fitted on 12 empty tables "
                                    "(3 measured; 21 with the lines taken for paper)")


#: The harness's empty-slot phantoms' conditions: dark felt, a 720p frame, blurred.
_BLURRED_DARK_FELT: dict[str, object] = {
    "felt_colours": ("dark",), "blur_sigma": (1.6, 1.8), "felt_texture": (2.0, 4.0), "frame_sizes": ((1280, 720),),
    "glare_spots": (0, 0), "motion_blur_chance": 0.0}


@pytest.mark.parametrize("light", ["blurred dark felt", "grey felt a stop brighter than at calibration"])
def test_an_empty_slot_still_shows_the_felts_colour_and_no_card_does(light: str) -> None:
    """Between an empty slot's printed lines on a dark felt, blurred, the felt's grain no longer
    shows (``felt_showing``), but its colour is still the empty table's (``felt_unchanged``); on
    every card, face up or down, it is not. The independent harness's empty slots on dark felt,
    blurred 1.2-1.7 px, were reported as cards (no-reads) for want of this (session 55). The
    colour is the empty table's in the frame's own light: a frame a stop brighter doubles it."""
    blurred = light == "blurred dark felt"
    ranges = dict(_BLURRED_DARK_FELT) if blurred else {
        "felt_colours": ("grey",), "exposure_stops": (0.9, 1.0), "frame_sizes": ((1280, 720),), "glare_spots": (0, 0)}
    frames = _frames(3, seed=12, **ranges, face_down_cards=1, occluded_cards=0, cut_cards=0)
    empty_slots = 0
    for tf in frames:
        rec = _recognizer(tf)
        rec.finder.find(tf.scene.image)  # lines the empty table up with the frame, takes its exposure
        taken = {t.slot for t in tf.scene.cards}
        for slot in tf.layout.slots:
            if slot.name in taken:
                continue
            empty_slots += 1
            outline = rec.finder.slot_outline(slot)
            if blurred:
                assert rec.finder.felt_showing(tf.scene.image, outline) < recognizer_module.FELT_SHOWING, slot.name
            assert rec.finder.felt_unchanged(tf.scene.image, outline) >= 0.9, slot.name
        for t in tf.scene.cards:
            assert rec.finder.felt_unchanged(tf.scene.image, np.array(t.corners)) < 0.3, (t.code, t.slot)
    assert empty_slots >= 5


def test_an_unread_outline_over_an_empty_slot_is_not_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """An outline the masks cut out of an empty slot's lines (its felt blurred past showing its
    grain) is not reported as a card; were its colour not asked, it would be, as a no-read."""
    tf = _frames(3, seed=12, **_BLURRED_DARK_FELT)[2]  # a three-face table: slots to spare
    rec = _recognizer(tf)
    rec.finder.find(tf.scene.image)
    taken = {t.slot for t in tf.scene.cards}
    slot = next(s for s in tf.layout.slots if s.name not in taken)
    found = FoundCard([rec.finder.slot_outline(slot)], False)
    centre = (slot.x + slot.w / 2, slot.y + slot.h / 2)
    assert rec._look(tf.scene.image, rec.finder, found, centre).reading is None
    monkeypatch.setattr(recognizer_module, "FELT_UNCHANGED", 2.0)
    reading = rec._look(tf.scene.image, rec.finder, found, centre).reading
    assert reading is not None and reading.code is None and reading.position == slot.name
