"""Refining a card's outline onto its own border (``refine.refine_outline``) beside the
table's print: a white card over a white slot line has no edge of its own there, and the
sharpest fall in whiteness is the line's outer edge, square to the slot, not to the card.
Knowing the empty table, such falls are left out and the sides without an edge are placed
from the others; a card's edge along a line less white than the card is its own."""

from __future__ import annotations

import cv2
import numpy as np
from cardart import deck_or_skip

from calibration.layout import load_layout
from calibration.table import calibrate_from_markers
from firmware_interfaces.camera.finder import CardFinder, learn_empty_table
from firmware_interfaces.camera.refine import EmptyInPatch, RefinedOutline, refine_outline
from firmware_interfaces.camera.scenes import DomainRandomisation, generate_test_set

PX_PER_MM = 2.0
CARD_MM = (62.0, 88.0)
FELT = (120, 60, 25)
PAPER = (245, 245, 245)
_CENTRE_MM = (100.0, 80.0)


def _box(cx: float, cy: float, w: float, h: float, turn: float) -> np.ndarray:
    """A rectangle's image corners (TL, TR, BR, BL) from its centre and size in mm."""
    b = cv2.boxPoints(((cx * PX_PER_MM, cy * PX_PER_MM), (w * PX_PER_MM, h * PX_PER_MM), turn)).astype(np.float64)
    s, d = b.sum(axis=1), b[:, 0] - b[:, 1]
    return np.array([b[np.argmin(s)], b[np.argmax(d)], b[np.argmax(s)], b[np.argmin(d)]])


def _fill(img: np.ndarray, corners: np.ndarray, colour: tuple[int, int, int]) -> None:
    cv2.fillPoly(img, [np.int32(np.round(corners * 16))], colour, lineType=cv2.LINE_AA, shift=4)


def _slot_with_a_card(turn: float, shift_mm: tuple[float, float], line: tuple[int, int, int],
                      pad_mm: float = 1.0, line_mm: float = 2.0,
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, EmptyInPatch]:
    """A slot printed as a ``line``-coloured outline on blue felt, a card turned ``turn``° and
    moved ``shift_mm`` from its middle: (frame, the outline a finder cut along the slot's
    inside (upright, in the middle), the card's true outline, the empty table's whiteness
    for ``refine_outline(empty=)``)."""
    empty = np.full((int(160 * PX_PER_MM), int(200 * PX_PER_MM), 3), FELT, np.uint8)
    cx, cy = _CENTRE_MM
    cw, ch = CARD_MM
    _fill(empty, _box(cx, cy, cw + 2 * (pad_mm + line_mm), ch + 2 * (pad_mm + line_mm), 0), line)
    _fill(empty, _box(cx, cy, cw + 2 * pad_mm, ch + 2 * pad_mm, 0), FELT)
    frame = empty.copy()
    truth = _box(cx + shift_mm[0], cy + shift_mm[1], cw, ch, turn)
    _fill(frame, truth, PAPER)
    for dx, dy in ((-12, -20), (12, -20), (0, 0), (-12, 20), (12, 20)):  # pips, well inside
        at = (int((cx + shift_mm[0] + dx) * PX_PER_MM), int((cy + shift_mm[1] + dy) * PX_PER_MM))
        cv2.circle(frame, at, int(4 * PX_PER_MM), (30, 30, 200), -1)
    frame = cv2.GaussianBlur(frame, (0, 0), 0.8)
    white = cv2.GaussianBlur(cv2.min(cv2.min(empty[:, :, 0], empty[:, :, 1]), empty[:, :, 2]), (0, 0), 0.8)

    def empty_in_patch(to_patch: np.ndarray, size: tuple[int, int]) -> np.ndarray:
        return np.asarray(cv2.warpPerspective(white, to_patch, size, flags=cv2.INTER_LINEAR,
                                              borderMode=cv2.BORDER_REPLICATE), np.float32)

    return frame, _box(cx, cy, cw, ch, 0), truth, empty_in_patch


def _off(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max())


def test_a_card_turned_over_a_white_slot_line_is_refined_from_the_sides_that_show_its_edge() -> None:
    for shift in ((-1.5, -1.5), (1.5, 1.5)):
        frame, found, truth, empty = _slot_with_a_card(2.0, shift, PAPER)
        refined = refine_outline(frame, found, CARD_MM, empty=empty)
        blind = refine_outline(frame, found, CARD_MM)
        # not knowing the print, the refinement takes the line's outer edge for the card's
        # (measured: 6.1 px off -> 12.8); knowing it, it keeps the sides that show the card's
        # own edge and places the others from them (-> 3.2, two sides placed)
        assert _off(blind.corners, truth) > _off(found, truth) + 3.0
        assert refined.sides_placed >= 1
        assert _off(refined.corners, truth) < 0.7 * _off(found, truth)


def test_a_card_whose_edge_lies_along_a_line_less_white_than_it_is_refined_onto_its_own_edge() -> None:
    # a grey line, the card's edge over it half a millimetre from the line's outer edge: the
    # empty table fell as steeply there, but the card is far whiter than the line was, so that
    # edge is the card's own (measured: 6.5 px off -> 2.1, no side placed; taking every fall
    # the empty table had for print's: 5.1, one side placed)
    frame, found, truth, empty = _slot_with_a_card(1.0, (2.5, 0.0), (150, 150, 150))
    refined = refine_outline(frame, found, CARD_MM, empty=empty)
    assert refined.sides_placed == 0
    assert _off(refined.corners, truth) < 0.5 * _off(found, truth)
    # and where the line's own edge is the sharpest fall, it is not taken for the card's
    # (measured: 4.5 px off -> 2.9 knowing the print, 5.6 not)
    frame, found, truth, empty = _slot_with_a_card(1.0, (1.5, 0.0), (150, 150, 150))
    assert _off(refine_outline(frame, found, CARD_MM, empty=empty).corners, truth) \
        < _off(refine_outline(frame, found, CARD_MM).corners, truth) - 1.5


def test_an_outline_the_refinement_gives_up_on_beside_the_print_says_so() -> None:
    # a card flush with a white slot line all round: every side's only edge is the line's
    frame, found, truth, empty = _slot_with_a_card(0.0, (0.0, 0.0), PAPER, pad_mm=0.0)
    refined = refine_outline(frame, found, CARD_MM, empty=empty)
    assert np.array_equal(refined.corners, found)
    assert refined.sides_beside_print >= 3 and refined.sides_unseen == 0
    # not knowing the print, the line's edges were taken for the card's: the outline moved
    assert not np.array_equal(refine_outline(frame, found, CARD_MM).corners, found)


def test_an_outline_with_too_few_edges_is_given_back_unchanged() -> None:
    frame = np.full((320, 400, 3), FELT, np.uint8)  # no card at all: no side has an edge
    found = _box(*_CENTRE_MM, *CARD_MM, 0)
    for empty in (None, lambda to_patch, size: np.full(size[::-1], FELT[2], np.float32)):
        refined = refine_outline(frame, found, CARD_MM, empty=empty)
        assert isinstance(refined, RefinedOutline) and refined.sides_placed == 0
        assert np.array_equal(refined.corners, found)
        assert refined.sides_unseen == 4 and refined.sides_beside_print == 0


def test_the_empty_table_is_seen_where_the_frame_shows_it_in_the_frames_light() -> None:
    """``CardFinder.empty_in_patch`` lines the calibration's empty table up with a patch of a
    frame: on a frame of the empty table itself, brightened a stop, a patch around a slot
    shows what the frame shows there (a wrong homography, scale or shift would not)."""
    layout = load_layout("baccarat")
    tf = generate_test_set(deck_or_skip("svg-cards"), [layout], 1, seed=5,
                           randomise=DomainRandomisation(frame_sizes=((1280, 720),)))[0]
    plane = calibrate_from_markers(tf.empty, tf.layout)
    printed, empty = learn_empty_table(plane, tf.layout, tf.empty)
    finder = CardFinder(plane, tf.layout, printed=printed, empty_table=empty)
    brighter = cv2.convertScaleAbs(tf.empty, alpha=1.6)
    finder.find(brighter)
    size = (222, 300)
    dst = np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], np.float32)
    white = cv2.min(cv2.min(brighter[:, :, 0], brighter[:, :, 1]), brighter[:, :, 2])
    for slot in tf.layout.slots[:3]:
        corners = finder.slot_outline(slot)
        centre = corners.mean(axis=0)
        around = (centre + (corners - centre) * 1.3).astype(np.float32)  # the slot's print inside
        to_patch = cv2.getPerspectiveTransform(around, dst)
        seen = cv2.warpPerspective(white, to_patch, size, flags=cv2.INTER_LINEAR).astype(np.float32)
        before = finder.empty_in_patch(to_patch, size)
        assert before is not None and before.shape == seen.shape
        # blurred by its 1 px a mm, but lined up and in the frame's light
        assert float(np.corrcoef(before.ravel(), seen.ravel())[0, 1]) > 0.8
        assert abs(float(before.mean()) - float(seen.mean())) < 0.1 * float(seen.mean())
        moved = cv2.getPerspectiveTransform(around + np.float32([12, 0]), dst)
        assert float(np.corrcoef(finder.empty_in_patch(moved, size).ravel(), seen.ravel())[0, 1]) < \
            float(np.corrcoef(before.ravel(), seen.ravel())[0, 1]) - 0.2
    # the camera bumped 7 px since calibration: the shift the search finds moves the empty table too
    bumped = cv2.warpAffine(brighter, np.float32([[1, 0, 7], [0, 1, 0]]), brighter.shape[1::-1],
                            borderMode=cv2.BORDER_REPLICATE)
    finder.find(bumped)
    white = cv2.min(cv2.min(bumped[:, :, 0], bumped[:, :, 1]), bumped[:, :, 2])
    corners = finder.slot_outline(tf.layout.slots[0])
    centre = corners.mean(axis=0)
    to_patch = cv2.getPerspectiveTransform((centre + (corners - centre) * 1.3).astype(np.float32), dst)
    seen = cv2.warpPerspective(white, to_patch, size, flags=cv2.INTER_LINEAR).astype(np.float32)
    before = finder.empty_in_patch(to_patch, size)
    assert before is not None and float(np.corrcoef(before.ravel(), seen.ravel())[0, 1]) > 0.8
