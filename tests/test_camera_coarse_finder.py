"""The finder's coarse view (2 mm a pixel) and the finer search near a card it leaves unread:
what each view computes from the calibration's 1 px/mm maps matches the plain computation on
the whole table, the coarse view finds the cards a fair camera shows, and the finer search
near a card finds it again."""

from __future__ import annotations

import functools

import cv2
import numpy as np
import pytest
from cardart import deck_or_skip, templates_for

from calibration.layout import load_layout
from calibration.store import Calibration
from calibration.table import calibrate_from_markers
from firmware_interfaces.camera.finder import (
    CALIBRATION_PX_PER_MM,
    FIND_PX_PER_MM,
    HALF_FRAME_RANGE,
    SAME_CARD_MM,
    WINDOW_MM,
    CardFinder,
    _frame_px_per_mm,
    learn_empty_table,
)
from firmware_interfaces.camera.recognizer import Recognizer
from firmware_interfaces.camera.scenes import DomainRandomisation, GeneratedFrame, generate_test_set


@functools.cache
def _fair_frames() -> tuple[GeneratedFrame, ...]:
    r = DomainRandomisation(glare_spots=(0, 0), glare_on_card_chance=0.0, motion_blur_chance=0.0,
                            blur_sigma=(0.4, 0.8), noise_sigma=(1.0, 2.0), jpeg_quality=(85, 95),
                            hand_shadow_chance=0.0)
    layouts = [load_layout(g) for g in ("baccarat", "three-pictures")]
    return tuple(generate_test_set(deck_or_skip("svg-cards"), layouts, 4, seed=61, randomise=r, empty_every=0))


def _finder(tf: GeneratedFrame, px_per_mm: float) -> CardFinder:
    plane = calibrate_from_markers(tf.empty, tf.layout)
    printed, empty_table = learn_empty_table(plane, tf.layout, tf.empty)
    return CardFinder(plane, tf.layout, printed=printed, empty_table=empty_table, px_per_mm=px_per_mm)


def _near(corners: np.ndarray, truth: np.ndarray, px: float) -> bool:
    return bool(np.hypot(*(corners.mean(axis=0) - truth.mean(axis=0))) < px)


def test_calibration_keeps_its_maps_at_1_px_per_mm_and_the_coarse_finder_shrinks_them() -> None:
    tf = _fair_frames()[0]
    plane = calibrate_from_markers(tf.empty, tf.layout)
    printed, empty_table = learn_empty_table(plane, tf.layout, tf.empty)
    w, h = round(tf.layout.width_mm * CALIBRATION_PX_PER_MM), round(tf.layout.height_mm * CALIBRATION_PX_PER_MM)
    assert printed.shape == (h, w) and empty_table.shape == (h, w, 3)
    coarse = CardFinder(plane, tf.layout, printed=printed, empty_table=empty_table)
    assert coarse._px_per_mm == FIND_PX_PER_MM < CALIBRATION_PX_PER_MM
    ref = coarse._reference
    assert ref is not None and ref.hi is not None
    coarse_size = (round(tf.layout.width_mm * FIND_PX_PER_MM), round(tf.layout.height_mm * FIND_PX_PER_MM))
    assert ref.printed.shape == coarse_size[::-1]
    # print covering at least half of a coarse pixel is print there; the print does not vanish
    share = cv2.resize(printed, ref.printed.shape[::-1], interpolation=cv2.INTER_AREA)
    assert np.array_equal(ref.printed > 0, share > 127.5)
    assert np.count_nonzero(ref.printed) > 0.3 * np.count_nonzero(printed) * FIND_PX_PER_MM**2


def test_the_slot_fits_window_at_1_px_per_mm_is_the_whole_tables_comparison_there() -> None:
    tf = _fair_frames()[1]
    finder = _finder(tf, CALIBRATION_PX_PER_MM)
    table, white = finder._view(tf.scene.image)
    ref = finder._lined_up(white)
    against = finder._against_empty(table, ref)
    assert against is not None and ref is not None
    _, border, _, gain = against
    x0, y0, size = 300, 180, (150, 160)
    window, printed = finder._fine_window(tf.scene.image, gain, x0, y0, size)
    assert printed is not None
    inner = (slice(5, size[1] - 5), slice(5, size[0] - 5))  # clear of the blur's edge
    whole = border[y0 : y0 + size[1], x0 : x0 + size[0]]
    assert np.array_equal(window[inner], whole[inner])
    assert np.array_equal(printed, ref.printed[y0 : y0 + size[1], x0 : x0 + size[0]])


def test_a_coarse_grid_at_a_windows_pixels_is_the_grid_grown_to_the_whole_view_there() -> None:
    tf = _fair_frames()[0]
    finder = _finder(tf, CALIBRATION_PX_PER_MM)
    rng = np.random.default_rng(9)
    grid = rng.integers(0, 256, (finder._coarse[1], finder._coarse[0], 3), dtype=np.uint8)
    whole = cv2.resize(grid, finder._size, interpolation=cv2.INTER_LINEAR)
    for x0, y0 in ((0, 0), (233, 117), (600, 300)):
        size = (170, 150)
        part = finder._grid_in(grid, x0, y0, size)
        # both interpolate linearly, each in its own fixed point: equal to a level
        diff = np.abs(part.astype(int) - whole[y0 : y0 + size[1], x0 : x0 + size[0]].astype(int))
        assert diff.max() <= 1


def test_the_coarse_view_finds_every_card_of_a_fair_frame_near_its_outline() -> None:
    errors = []
    for tf in _fair_frames():
        finder = _finder(tf, FIND_PX_PER_MM)
        found = finder.find(tf.scene.image)
        for t in tf.scene.cards:
            truth = np.array(t.corners)
            near = [f for f in found if _near(f.outlines[0], truth, 25)]
            assert near, t.code
            errors.append(min(np.abs(np.roll(near[0].outlines[0], k, axis=0) - truth).max() for k in (0, 2)))
    # at 2 mm a pixel the outlines are a little coarser than at 1 px/mm (measured on these
    # frames: median 3.7 frame px against 2.8, worst 9.5 against 6.9); the refinement that
    # follows moves each side up to 4 mm
    assert np.median(errors) < 5.0 and max(errors) < 12.0, errors


def test_the_finer_search_near_a_card_finds_it_again_and_nothing_far_from_it() -> None:
    for tf in _fair_frames()[:2]:
        coarse = _finder(tf, FIND_PX_PER_MM)
        fine = _finder(tf, CALIBRATION_PX_PER_MM)
        coarse.find(tf.scene.image)
        assert coarse.surroundings is not None
        for t in tf.scene.cards:
            found = fine.find_near(tf.scene.image, [t.centre_mm], coarse.surroundings)
            truth = np.array(t.corners)
            assert any(_near(f.outlines[0], truth, 10) for f in found), t.code
            for f in found:
                x, y = fine.to_table(f.outlines[0].mean(axis=0))
                assert abs(x - t.centre_mm[0]) <= WINDOW_MM / 2 and abs(y - t.centre_mm[1]) <= WINDOW_MM / 2


def test_with_and_without_the_second_pass_no_card_is_read_wrong_and_the_second_pass_loses_none() -> None:
    templates = templates_for("svg-cards")
    for tf in _fair_frames():
        plane = calibrate_from_markers(tf.empty, tf.layout)
        printed, empty_table = learn_empty_table(plane, tf.layout, tf.empty)
        cal = Calibration(plane, templates, printed=printed, empty_table=empty_table)
        reads = []
        for second in (False, True):
            readings = Recognizer(cal, tf.layout, second_pass=second).recognize(tf.scene.image)
            codes = {r.code for r in readings if r.code is not None}
            assert codes <= {t.code for t in tf.scene.cards}
            reads.append(codes)
        assert reads[0] <= reads[1]


def test_the_search_with_the_print_kept_in_finds_each_card_and_no_empty_slot() -> None:
    # the baccarat table: every card found again (its cards lie clear of each other)
    tf = _fair_frames()[0]
    coarse = _finder(tf, FIND_PX_PER_MM)
    card = tf.scene.cards[0]
    assert coarse.cards_over_print(tf.scene.image, card.centre_mm, coarse.surroundings) == []  # not searched yet
    coarse.find(tf.scene.image)
    for t in tf.scene.cards:
        outlines = coarse.cards_over_print(tf.scene.image, t.centre_mm, coarse.surroundings)
        assert any(_near(o, np.array(t.corners), 10) for o in outlines), t.code
        for o in outlines:
            x, y = coarse.to_table(o.mean(axis=0))
            assert np.hypot(x - t.centre_mm[0], y - t.centre_mm[1]) < SAME_CARD_MM
    # only cards within SAME_CARD_MM of the point asked: none 30 mm from a card's centre, though
    # the card lies whole in the window searched around that point
    beside = (card.centre_mm[0], card.centre_mm[1] + 30.0)
    assert coarse.cards_over_print(tf.scene.image, beside, coarse.surroundings) == []
    # a frame of another size is not searched (its cards where they were, a strip more below)
    taller = np.pad(tf.scene.image, ((0, 8), (0, 0), (0, 0)))
    assert coarse.cards_over_print(taller, card.centre_mm, coarse.surroundings) == []
    # an empty slot's lines, kept in, are no card: their border does not step out of the empty
    # table (three-pictures leaves slots empty beside its cards)
    tf = _fair_frames()[1]
    coarse = _finder(tf, FIND_PX_PER_MM)
    coarse.find(tf.scene.image)
    taken = {t.slot for t in tf.scene.cards}
    empty = [slot for slot in tf.layout.slots if slot.name not in taken]
    assert empty
    assert all(coarse.cards_over_print(tf.scene.image, slot.centre, coarse.surroundings) == [] for slot in empty)


def test_a_720p_frame_is_viewed_from_its_half_and_the_view_is_the_fine_views_own() -> None:
    # a 720p camera over a 900 mm table has 1.1-1.3 px per mm: the half frame (averaged 2 x 2)
    # has a pixel or more for each of the 2 mm view's, and the view is warped from it; a 1080p
    # frame's half would be sampled sparsely, and is not used
    # (little noise: each view averages it differently; both average over about 2 mm)
    r = DomainRandomisation(frame_sizes=((1280, 720),), motion_blur_chance=0.0, noise_sigma=(1.0, 2.0),
                            jpeg_quality=(90, 95))
    frames = generate_test_set(deck_or_skip("svg-cards"), [load_layout("baccarat")], 3, seed=62, randomise=r)
    halved = 0
    for tf in frames:
        finder = _finder(tf, FIND_PX_PER_MM)
        least, most = _frame_px_per_mm(finder._to_image, (tf.layout.width_mm, tf.layout.height_mm))
        low, high = HALF_FRAME_RANGE
        assert finder._from_half_frame == (low <= least / (2 * FIND_PX_PER_MM) and most / (2 * FIND_PX_PER_MM) <= high)
        if not finder._from_half_frame:
            continue  # (a camera tilted far: the half frame is coarser than the view in depth)
        halved += 1
        half_table, half_white = finder._view(tf.scene.image)
        finder._from_half_frame = False
        table, white = finder._view(tf.scene.image)
        assert half_table.shape == table.shape and half_white.shape == white.shape
        apart = np.abs(half_white.astype(np.int16) - white.astype(np.int16))
        # (sharp felt grain and print are sampled a little differently: 0.5-1.5 levels apart on average)
        assert apart.mean() < 2.0 and np.percentile(apart, 99) <= 20, (apart.mean(), np.percentile(apart, 99))
        # on the same grid: the two views lie within a twentieth of a pixel of each other
        (dx, dy), _ = cv2.phaseCorrelate(white.astype(np.float32), half_white.astype(np.float32))
        assert np.hypot(dx, dy) < 0.05, (dx, dy)
    assert halved >= 2
    # a frame of odd width or height: its last column and row are left out of the halving
    image = frames[0].scene.image
    odd = np.concatenate([image, image[:, -1:]], axis=1)
    odd = np.concatenate([odd, odd[-1:]], axis=0)
    finder = _finder(frames[0], FIND_PX_PER_MM)
    finder._from_half_frame = True
    assert [np.array_equal(a, b) for a, b in zip(finder._view(odd), finder._view(image), strict=True)] == [True, True]
    big = DomainRandomisation(frame_sizes=((1920, 1080),), motion_blur_chance=0.0)
    tf = generate_test_set(deck_or_skip("svg-cards"), [load_layout("baccarat")], 1, seed=62, randomise=big)[0]
    assert not _finder(tf, FIND_PX_PER_MM)._from_half_frame
    assert not _finder(tf, CALIBRATION_PX_PER_MM)._from_half_frame


def test_the_frames_pixels_per_mm_are_the_fewest_and_most_in_any_direction() -> None:
    # 1.2 px per mm across, 0.8 in depth: the area's mean (0.98) would hide the 0.8
    least, most = _frame_px_per_mm(np.diag([1.2, 0.8, 1.0]), (900.0, 500.0))
    assert least == pytest.approx(0.8) and most == pytest.approx(1.2)
    # a camera whose horizon crosses the table: nothing is assumed of it
    horizon = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1 / 250, 1.0]])
    assert _frame_px_per_mm(horizon, (900.0, 500.0)) == (0.0, np.inf)
