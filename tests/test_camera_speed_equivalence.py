"""The recogniser's faster paths compute exactly what the plain ones did: each is checked here
against the plain computation, bit for bit where it can be (an OpenCV or numpy upgrade that broke one would
show here before it moved a read)."""

from __future__ import annotations

import cv2
import numpy as np
from cardart import deck_or_skip, templates_for

from calibration.deck_model import FULL_INK, INK_SHARE, MIN_INK, _balanced, _channels, _paper, both_ways, card_features
from calibration.layout import load_layout
from calibration.table import calibrate_from_markers
from calibration.templates import INDEX_PATCH, _ShiftedPatches, corner_windows, order_portrait
from firmware_interfaces.camera.channels import brightest_channel, darkest_channel
from firmware_interfaces.camera.finder import (
    _ALL_LEVELS,
    _COARSE_SHAPES,
    _COARSE_SHIFTS,
    _FINE_SHAPES,
    _FINE_SHIFTS,
    _INSIDE_MM,
    _OUTSIDE_MM,
    _SIDE_POINTS,
    COVER_BLUR_MM,
    COVER_STEP,
    FIND_PX_PER_MM,
    CardFinder,
    _EmptyTable,
    _masked_medians,
    _median_u8,
    _middle_pair,
    _rect_steps,
    _warp_whiteness,
    learn_empty_table,
)
from firmware_interfaces.camera.refine import REFINE_SPAN, _side_bands, _view_side
from firmware_interfaces.camera.scenes import DomainRandomisation, generate_test_set


def test_the_turned_view_is_the_upright_ones_blocks_turned() -> None:
    rng = np.random.default_rng(3)
    pictures = [rng.integers(0, 256, (160, 112, 3), dtype=np.uint8) for _ in range(20)]
    face = cv2.resize(deck_or_skip("svg-cards").face("QH"), (112, 160), interpolation=cv2.INTER_AREA)
    pictures.append(np.clip(face.astype(np.int16) + rng.integers(-20, 20, face.shape), 0, 255).astype(np.uint8))
    # a red card under a veil of light: its redness is scaled by its ink, sampled alike either way up
    red = cv2.resize(deck_or_skip("svg-cards").face("7H"), (112, 160), interpolation=cv2.INTER_AREA)
    pictures.append(np.clip(red.astype(np.float32) * 0.25 + 190 + rng.normal(0, 2, red.shape), 0, 255).astype(np.uint8))
    for card in pictures:
        plain = np.stack([card_features(card), card_features(np.ascontiguousarray(card[::-1, ::-1]))])
        assert np.array_equal(both_ways(card)[0], plain[0])  # the upright view is the fit's own
        assert np.abs(both_ways(card)[1] - plain[1]).max() < 1e-5  # the turned one, to float rounding


def test_dividing_by_the_paper_level_with_opencv_is_numpys_division() -> None:
    rng = np.random.default_rng(4)
    for _ in range(50):
        card = rng.integers(0, 256, (160, 112, 3)).astype(np.uint8)
        level = np.maximum(rng.integers(0, 256, 3).astype(np.float32), 8.0)
        plain = card.astype(np.float32) / level
        # each uint8 channel divided into float32 (as _balanced does), and a float32 card's
        for given in (card, card.astype(np.float32)):
            for c, (channel, value) in enumerate(zip(_channels(given), level.tolist(), strict=True)):
                assert np.array_equal(cv2.divide(channel, value, dtype=cv2.CV_32F), plain[:, :, c])


def test_a_cards_balanced_grey_and_redness_are_the_plain_computations() -> None:
    # numpy's float32 division by the paper's level, per pixel; the grey and redness from it
    rng = np.random.default_rng(9)
    face = cv2.resize(deck_or_skip("svg-cards").face("7H"), (112, 160), interpolation=cv2.INTER_AREA)
    cards = [rng.integers(0, 256, (160, 112, 3), dtype=np.uint8), face,
             np.clip(face.astype(np.float32) * 0.25 + 190, 0, 255).astype(np.uint8)]  # a veiled red card
    for card in cards:
        for given in (card, card.astype(np.float32), np.asfortranarray(card), card[::-1, ::-1]):
            img = np.asarray(given, np.float32) / np.maximum(_paper(np.asarray(given)), 8.0)
            b, g, r = img[:, :, 0], img[:, :, 1], img[:, :, 2]
            grey, red = _balanced(given)
            assert np.array_equal(grey, 0.114 * b + 0.587 * g + 0.299 * r)
            plain_red = np.maximum(r - np.maximum(b, g), 0.0)
            inside = grey[6:-6:3, 6:-6:3].reshape(-1)
            k = int(INK_SHARE * (inside.size - 1))
            ink = 1.0 - float(np.partition(inside, k)[k])
            if ink < FULL_INK:
                plain_red = plain_red * (FULL_INK / max(ink, MIN_INK))
            assert np.array_equal(red, plain_red)


def test_the_darkest_and_brightest_channel_by_erosion_are_numpys_min_and_max() -> None:
    rng = np.random.default_rng(11)
    frame = rng.integers(0, 256, (72, 129, 3), np.uint8)
    # a whole picture, a crop of it (rows strided in memory), one row, one column, float32,
    # and types OpenCV does not erode (numpy's way)
    grey_levels = rng.normal(100, 60, (31, 47, 3)).astype(np.float32)
    for img in (frame, frame[5:60, 17:101], frame[:1], frame[:, :1], grey_levels, grey_levels.astype(np.float64),
                frame.astype(np.int16) - 128):
        darkest, brightest = darkest_channel(img), brightest_channel(img)
        for got in (darkest, brightest):
            assert got.dtype == img.dtype and got.flags.c_contiguous and got.shape == img.shape[:2]
        assert np.array_equal(darkest, img.min(axis=2))
        assert np.array_equal(brightest, img.max(axis=2))
    # a fourth channel (alpha) is left out, as the minima of the three channels' views left it
    four = rng.integers(0, 256, (9, 11, 4), np.uint8)
    assert np.array_equal(darkest_channel(four), four[:, :, :3].min(axis=2))
    assert np.array_equal(brightest_channel(four), four[:, :, :3].max(axis=2))


def test_the_templates_best_code_is_their_reads_code() -> None:
    templates = templates_for("svg-cards")
    rng = np.random.default_rng(13)
    for k, code in enumerate(templates.codes):
        face = templates.faces[code].astype(np.float32)
        # seen turned, blurred, shifted a few pixels, under noise, half burnt white, or nothing but noise
        seen = face[::-1, ::-1] if k % 2 else face
        seen = cv2.GaussianBlur(seen, (0, 0), 0.5 + k % 3)
        seen = np.roll(seen, (k % 5 - 2, k % 7 - 3), axis=(0, 1)) + rng.normal(0, 4 + k % 20, seen.shape)
        if k % 4 == 0:
            seen[: seen.shape[0] // 2] = 255
        if k % 13 == 0:
            seen = rng.normal(128, 60, seen.shape)
        card = np.clip(seen, 0, 255).astype(np.uint8)
        assert templates.best_code(card) == templates.read(card).code


def test_uint8_medians_from_histograms_are_numpys() -> None:
    rng = np.random.default_rng(5)
    for n in [*range(1, 30), 751, 1100, 4999, 5000, 5001, 5002, 20001]:  # partitioned, then counted
        v = rng.integers(0, 256, n, dtype=np.uint8)
        assert _median_u8(v) == float(np.median(v))
    # per channel, of the pixels a mask marks (the felt's level in each frame)
    for n in (1, 2, 3, 750, 751, 20001):
        image = rng.integers(80, 120, (150, 200, 3), dtype=np.uint8)
        mask = np.zeros(image.shape[:2], np.uint8)
        mask.reshape(-1)[rng.choice(mask.size, n, replace=False)] = 255
        assert np.array_equal(_masked_medians(image, mask, n), np.median(image[mask > 0], axis=0))


def test_the_gain_lookup_table_is_opencvs_multiply() -> None:
    rng = np.random.default_rng(6)
    img = rng.integers(0, 256, (50, 90, 3), dtype=np.uint8)
    for _ in range(50):
        scale = (*rng.uniform(0.2, 3.0, 3).tolist(), 0.0)
        assert np.array_equal(cv2.LUT(img, cv2.multiply(_ALL_LEVELS, scale)), cv2.multiply(img, scale))


def _plain_rect_steps(white: np.ndarray, hyps: np.ndarray, slot_centre: tuple[float, float], base_deg: float,
                      card_mm: tuple[float, float], px_per_mm: float) -> tuple[np.ndarray, np.ndarray]:
    """The slot fit's side steps one side and one hypothesis (dx, dy, angle, width, height) at a
    time, each point at its nearest pixel (halves up): the plain computation the fast one must
    match."""
    cw, ch = card_mm
    t = (np.arange(_SIDE_POINTS) + 0.5) / _SIDE_POINTS * 0.8 + 0.1
    u = t - 0.5
    hw, hh = 0.5 * cw * hyps[:, 3], 0.5 * ch * hyps[:, 4]
    a = np.deg2rad(base_deg + hyps[:, 2])
    ca, sa = np.cos(a), np.sin(a)
    h, w = white.shape

    def sample(px: np.ndarray, py: np.ndarray) -> np.ndarray:
        gx = (slot_centre[0] + hyps[:, 0:1] + (ca[:, None] * px - sa[:, None] * py)) * px_per_mm
        gy = (slot_centre[1] + hyps[:, 1:2] + (sa[:, None] * px + ca[:, None] * py)) * px_per_mm
        xi = np.clip(np.floor(gx + 0.5).astype(np.int32), 0, w - 1)
        yi = np.clip(np.floor(gy + 0.5).astype(np.int32), 0, h - 1)
        return np.asarray(white[yi, xi])

    steps = np.empty((len(hyps), 4), np.float32)
    for k, (nx, ny) in enumerate(((0, -1), (1, 0), (0, 1), (-1, 0))):
        if nx == 0:
            lx, ly = u[None, :] * 2 * hw[:, None], np.repeat((ny * hh)[:, None], _SIDE_POINTS, axis=1)
        else:
            lx, ly = np.repeat((nx * hw)[:, None], _SIDE_POINTS, axis=1), u[None, :] * 2 * hh[:, None]
        inside = sample(lx - nx * _INSIDE_MM, ly - ny * _INSIDE_MM)
        outside = np.minimum(*(sample(lx + nx * d, ly + ny * d) for d in _OUTSIDE_MM))
        steps[:, k] = np.median(inside.astype(np.float32) - outside.astype(np.float32), axis=1)
    ordered = np.sort(steps, axis=1)
    return ordered[:, 1:].sum(axis=1) + ordered[:, 0] / 2, steps


def test_the_slot_fit_samples_all_sides_at_once_as_one_at_a_time() -> None:
    rng = np.random.default_rng(7)
    white = cv2.GaussianBlur(rng.integers(0, 256, (300, 400), dtype=np.uint8), (0, 0), 3.0)
    fine_around = np.array([3.0, -6.0, 4.0, 0.94, 1.08])
    for centre, base, scale in (((120.0, 150.0), 0.0, 1.0), ((390.0, 20.0), 90.0, 1.0), ((100.0, 80.0), 0.0, 0.5),
                                ((151.5, 140.25), 7.0, 1.0), ((200.0, 10.0), 0.0, 1.0)):
        for shifts, shapes in ((_COARSE_SHIFTS, _COARSE_SHAPES),
                               (fine_around[:2] + _FINE_SHIFTS, fine_around[2:] + _FINE_SHAPES)):
            hyps = np.array([[*d, *s] for d in shifts for s in shapes])  # every shift with every shape
            fast = _rect_steps(white, shifts, shapes, centre, base, (63.0, 88.0), scale)
            plain = _plain_rect_steps(white, hyps, centre, base, (63.0, 88.0), scale)
            assert all(np.array_equal(f, p) and f.dtype == p.dtype for f, p in zip(fast, plain, strict=True))


def test_the_slot_fits_median_network_picks_the_middle_pair_np_sort_does() -> None:
    # every row of twelve 0s and 1s (the 0-1 principle: a network that orders these orders any
    # numbers), then whole-number steps as the slot fit has them, ties and all
    bits = (np.arange(4096)[:, None] >> np.arange(12)[None, :]) & 1
    rng = np.random.default_rng(5)
    for values in (bits.astype(np.int16), rng.integers(-255, 256, (3000, 4, 12)).astype(np.int16),
                   rng.integers(-3, 4, (3000, 12)).astype(np.int16)):
        ordered = np.sort(values, axis=-1)
        below, above = _middle_pair(values)
        assert np.array_equal(below, ordered[..., 5]) and np.array_equal(above, ordered[..., 6])
    odd = rng.integers(0, 9, (50, 7)).astype(np.int16)  # another length: its median second
    assert np.array_equal(_middle_pair(odd)[1], np.median(odd, axis=-1).astype(np.int16))


def test_covered_print_compared_on_the_print_alone_is_the_whole_tables_comparison() -> None:
    layout = load_layout("baccarat")
    tf = generate_test_set(deck_or_skip("svg-cards"), [layout], 1, seed=12, randomise=DomainRandomisation())[0]
    plane = calibrate_from_markers(tf.empty, layout)
    printed, empty_table = learn_empty_table(plane, layout, tf.empty)
    finder = CardFinder(plane, layout, printed=printed, empty_table=empty_table)
    table = finder.top_down(tf.scene.image)
    ref = finder._lined_up(cv2.min(cv2.min(table[:, :, 0], table[:, :, 1]), table[:, :, 2]))
    assert ref is not None and ref.hi is not None and ref.lo is not None
    against = finder._against_empty(table, ref)
    assert against is not None
    # the whole table, as the comparison was first written
    now = cv2.GaussianBlur(table, (0, 0), COVER_BLUR_MM * FIND_PX_PER_MM)
    k = finder._stride
    gain = np.median(now[::k, ::k][finder._bare], axis=0) / finder._empty_felt
    scale = (*gain.tolist(), 0.0)
    hi = cv2.multiply(ref.hi, scale)  # type: ignore[call-overload]
    lo = cv2.multiply(ref.lo, scale)  # type: ignore[call-overload]
    moved = brightest_channel(cv2.max(cv2.subtract(now, hi), cv2.subtract(lo, now)))
    covered = cv2.bitwise_and(cv2.threshold(moved, COVER_STEP, 255, cv2.THRESH_BINARY)[1], ref.printed)
    assert np.count_nonzero(ref.printed) and np.array_equal(against[0], covered)


def test_the_printed_pixels_indexes_are_numpys_flatnonzero() -> None:
    rng = np.random.default_rng(8)
    for share in (0.0, 0.001, 0.05, 0.5):
        printed = ((rng.random((50, 90)) < share) * 255).astype(np.uint8)
        at = _EmptyTable(printed, cv2.bitwise_not(printed)).printed_at
        assert np.array_equal(at, np.flatnonzero(printed))


def test_a_patchs_whiteness_from_its_crop_is_the_whole_frames() -> None:
    rng = np.random.default_rng(6)
    frame = rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    patch = np.array([[0, 0], [40, 0], [40, 60], [0, 60]], np.float32)
    worst = 0
    for _ in range(200):
        # outlines inside the frame, across its edges and (a few) wholly outside it
        centre = rng.uniform([-80, -80], [1360, 800])
        half = rng.uniform([15, 25], [60, 90])
        turn = rng.uniform(-0.4, 0.4)
        rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
        corners = centre + (np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * half) @ rot.T
        corners[2] += rng.uniform(-5, 5, 2)  # a little perspective
        to_patch = cv2.getPerspectiveTransform(corners.astype(np.float32), patch)
        whole = cv2.warpPerspective(darkest_channel(frame), to_patch, (40, 60), flags=cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_REPLICATE)
        worst = max(worst, int(np.abs(_warp_whiteness(frame, to_patch, (40, 60)).astype(int) - whole).max()))
    assert worst <= 1  # the crop's shifted warp may round an interpolation weight the other way


def test_the_paper_level_from_histograms_is_the_sorted_ones() -> None:
    rng = np.random.default_rng(7)
    for _ in range(100):
        card = cv2.GaussianBlur(rng.integers(0, 256, (160, 112, 3), dtype=np.uint8), (0, 0), rng.uniform(0.3, 3))
        sample = card[::3, ::3].reshape(-1, 3).astype(np.float32)
        k = int(0.92 * len(sample))
        assert np.array_equal(_paper(card), np.partition(sample, k, axis=0)[k])


def test_the_refinements_side_bands_are_the_whole_patch_blurred_where_it_looks() -> None:
    rng = np.random.default_rng(6)
    edge, depth = 18, 14
    for k in range(40):
        # a card's patch, and a square one (a layout's card 60 x 60.1 mm: its sides' strips
        # must not be taken for each other)
        w, h = (225, 300) if k % 4 else (216, 216)
        crop = cv2.GaussianBlur(rng.integers(0, 256, (150, 120), dtype=np.uint8), (0, 0), 1 + k % 3)
        src = np.array([[6, 8], [110, 4], [114, 140], [2, 146]], np.float32)
        src += rng.normal(0, 4, (4, 2)).astype(np.float32)
        dst = np.array([[edge, edge], [w - edge, edge], [w - edge, h - edge], [edge, h - edge]], np.float32)
        warp = cv2.getPerspectiveTransform(src, dst).astype(np.float64)
        whole = cv2.warpPerspective(crop, warp, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        whole = cv2.GaussianBlur(whole, (0, 0), 1.0).astype(np.float32)
        bands = _side_bands(crop, warp, (w, h), edge, depth)
        # where refine_outline looks on each side, seen with that side on top: the rows within
        # depth of the side's line, along its middle REFINE_SPAN
        for side, band in enumerate(bands):
            view = _view_side(whole, side)
            span = view.shape[1] - 2 * edge
            a0, a1 = edge + int(span * (1 - REFINE_SPAN) / 2), edge + int(span * (1 + REFINE_SPAN) / 2)
            assert band.dtype == np.float32 and band.flags.c_contiguous
            assert np.array_equal(band, view[edge - depth : edge + depth + 1, a0:a1])


def _order_portrait_plain(pts: np.ndarray) -> np.ndarray:
    """``order_portrait`` as numpy spells it (how it was written before plain floats)."""
    pts = np.asarray(pts, dtype=np.float32).reshape(4, 2)
    c = pts.mean(axis=0)
    pts = pts[np.argsort(np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0]))]
    if np.linalg.norm(pts[1] - pts[0]) > np.linalg.norm(pts[2] - pts[1]):
        pts = np.roll(pts, -1, axis=0)
    if pts[0, 1] + pts[1, 1] > pts[2, 1] + pts[3, 1]:
        pts = np.roll(pts, 2, axis=0)
    return pts


def test_corners_ordered_with_plain_floats_are_ordered_as_numpy_orders_them() -> None:
    rng = np.random.default_rng(7)
    for k in range(3000):
        (cx, cy), (w, h) = rng.uniform(0, 1300, 2), rng.uniform(20, 120, 2)
        box = cv2.boxPoints(((cx, cy), (w, h), rng.uniform(-180, 180))).astype(np.float64)
        if k % 2:
            box += rng.normal(0, 2, (4, 2))  # a found outline, not a perfect rectangle
        box = box[rng.permutation(4)]
        assert np.array_equal(order_portrait(box), _order_portrait_plain(box))


def test_shifted_patch_scores_are_the_centred_and_normalised_patches_ncc() -> None:
    # the plain computation: every shifted patch centred, scaled to unit norm, times the templates
    _, _, pw, ph = INDEX_PATCH
    rng = np.random.default_rng(8)
    templates = rng.normal(0, 1, (ph * pw, 6)).astype(np.float32)
    templates -= templates.mean(axis=0)
    templates /= np.linalg.norm(templates, axis=0)
    face = cv2.resize(deck_or_skip("svg-cards").face("7H"), (112, 160), interpolation=cv2.INTER_AREA)
    windows = [w for w in corner_windows(face)]
    windows += [rng.uniform(0, 255, windows[0].shape).astype(np.float32) for _ in range(5)]
    windows.append(np.full(windows[0].shape, 251.0, np.float32))  # a corner glare burnt flat
    windows.append((windows[0] * 0.05 + 240).astype(np.float32))  # a corner under a veil of glare
    # a corner burnt flat but for a rim of felt (an outline a px or two wide): its patches
    # clear of the rim are flat in a window that is not (a review found those scoring up to
    # 1.06 when only the window's level was taken off)
    rim = np.full(windows[0].shape, 255.0, np.float32)
    rim[:2, :] = rim[:, :2] = 30.0
    windows.append(rim)
    # nearly flat: patch norms of about 1e-3 to 0.5, where a floor or a lost digit would show
    spread = 1.2e-3 / np.sqrt(ph * pw)
    windows += [(251.0 + rng.normal(0, sigma, windows[0].shape)).astype(np.float32) for sigma in (spread, 1e-2)]
    for window in windows:
        rows = np.lib.stride_tricks.sliding_window_view(window.astype(np.float64), (ph, pw)).reshape(-1, ph * pw)
        centred = rows - rows.mean(axis=1, keepdims=True)
        normalised = centred / np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-3)
        patches = _ShiftedPatches.of(window)
        assert np.abs(patches.scores(templates) - normalised @ templates).max() < 1e-5
        for k in (0, len(rows) // 2, len(rows) - 1):
            assert np.abs(patches.normalised(k) - normalised[k]).max() < 1e-5


def _correlate_plain(level, patch, warp, steps):  # type: ignore[no-untyped-def]
    """The Gauss-Newton steps as they were before the template's part of a step was kept
    per face (session 62): computed afresh at every step."""
    from firmware_interfaces.camera.alignment import _CONVERGED_SHIFT, _LEAST_INSIDE, _SMOOTH, _step_warp

    smooth = cv2.GaussianBlur(patch, (_SMOOTH, _SMOOTH), 0)
    height, width = smooth.shape
    m = np.vstack([warp, [0.0, 0.0, 1.0]]).astype(np.float64)
    done = 0
    while True:
        a = m.astype(np.float32)
        mx = (a[0, 0] * level.x + a[0, 1] * level.y + a[0, 2]).reshape(1, -1)
        my = (a[1, 0] * level.x + a[1, 1] * level.y + a[1, 2]).reshape(1, -1)
        seen = cv2.remap(smooth, mx, my, cv2.INTER_LINEAR).ravel()
        inside = ((mx >= 0) & (my >= 0) & (mx <= width - 1) & (my <= height - 1)).ravel()
        if inside.all():
            centred, norm, descent, hessian = level.centred, level.norm, level.descent, level.hessian
            seen = seen - seen.mean()
        else:
            if inside.sum() < _LEAST_INSIDE * len(inside):
                raise ValueError("the card left the patch")
            centred = level.centred[inside] - level.centred[inside].mean()
            norm = float(np.sqrt(centred @ centred))
            descent = level.descent[inside] - level.descent[inside].mean(axis=0)
            hessian = (descent.T @ descent).astype(np.float64)
            seen = seen[inside] - seen[inside].mean()
        seen_norm = float(np.sqrt(seen @ seen))
        if norm == 0 or seen_norm == 0:
            raise ValueError("a flat picture")
        correlation = float(centred @ seen) / (norm * seen_norm)
        if done == steps:
            return correlation, m[:2].astype(np.float32)
        onto_seen = (descent.T @ seen).astype(np.float64)
        onto_template = (descent.T @ centred).astype(np.float64)
        solved = np.linalg.solve(hessian, onto_template)
        reach = float(seen @ centred) - float(onto_seen @ solved)
        if reach <= 0:
            raise ValueError("uncorrelated: a step would lower the correlation")
        scale = (norm * norm - float(onto_template @ solved)) / reach
        dp = np.linalg.solve(hessian, scale * onto_seen - onto_template)
        m = m @ np.linalg.inv(_step_warp(dp))
        done += 1
        if np.abs((_step_warp(dp) - np.eye(3))[:2] @ level.corners).max() < _CONVERGED_SHIFT:
            steps = done


def test_the_gauss_newton_steps_with_the_templates_part_kept_are_the_plain_steps() -> None:
    from firmware_interfaces.camera import alignment

    templates = templates_for("svg-cards")
    rng = np.random.default_rng(9)
    outcomes = set()
    for code in sorted(templates.faces)[::3]:
        coarse, fine = alignment._face_levels(templates.faces[code].tobytes(), templates.faces[code].dtype.str,
                                              templates.faces[code].shape)
        template, _ = alignment._template(templates.faces[code])
        # a start near the card, one off it by half the margin (pixels sampled outside the
        # patch: the template's part computed afresh), one that diverges
        for shift, level, steps in ((2.0, fine, 10), (alignment.ALIGN_MARGIN * 1.4, fine, 10), (1.0, coarse, 15)):
            warp = np.array([[1 + rng.normal(0, 0.03), rng.normal(0, 0.03), rng.normal(0, shift)],
                             [rng.normal(0, 0.03), 1 + rng.normal(0, 0.03), rng.normal(0, shift)]], np.float32)
            patch = cv2.warpAffine(template, warp, (template.shape[1], template.shape[0])) * 0.7 + 20
            patch = np.clip(patch + rng.normal(0, 3, patch.shape), 0, 255).astype(np.float32)
            if level is coarse:
                patch = cv2.resize(patch, (patch.shape[1] // 2, patch.shape[0] // 2), interpolation=cv2.INTER_AREA)
            start = np.eye(2, 3, dtype=np.float32)
            try:
                expected = _correlate_plain(level, patch, start, steps)
            except (ValueError, np.linalg.LinAlgError) as e:
                expected = type(e)
            try:
                got = alignment._correlate(level, patch, start, steps)
            except (ValueError, np.linalg.LinAlgError) as e:
                got = type(e)
            if isinstance(expected, tuple):
                assert isinstance(got, tuple) and got[0] == expected[0] and np.array_equal(got[1], expected[1]), code
                outcomes.add("matched")
            else:
                assert got is expected, code
                outcomes.add("failed alike")
    assert outcomes == {"matched", "failed alike"}
