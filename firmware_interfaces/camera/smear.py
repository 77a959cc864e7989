"""Motion smear: measured on the cards a frame was read by, undone where a card was not.

A camera that moves while it exposes smears the whole frame along one line, and a
smeared card's pips and index suits lose their shape: clubs and spades, hearts and
diamonds become alike, and the recogniser rightly refuses to choose. But the cards of
the same frame it *did* read say how the frame was smeared: each such card's face is
known (the deck's template), so the smear is what turns the face, placed where the card
was read, into the picture the camera took (:func:`card_smear`). Its shape, a short line,
gives the smear's length and direction; the cards' median is the frame's
(:func:`frame_smear`). A Wiener filter with that line then undoes most of the smear
around the cards left unread (:func:`unsmeared`), and they are read again, under every
test a read must pass.

A frame so smeared that no card is read from its face has no face to measure the smear on.
There the smear is first *guessed* blind, from the cepstrum of the cards' pictures
(:func:`smear_guesses`: a line's spectrum has zeros spaced by its length, across its
direction); a guess only serves to read a card quickly with it undone, and the smear is then
measured on that card as above. A guess is never what the cards are read with.

A card that moves alone (a dealer's hand sliding it) smears only itself: the cards that
lie still then show no smear, and nothing is undone. (Where no card was read from its face,
the smear a guess lets one card measure is undone around the other unread cards too; each is
still read under every test, and a still card so undone only rings.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

#: Half the side of the smear kernel estimated from a card (px): smears up to about 24 px.
KERNEL_REACH = 15
#: Share of the estimated kernel's peak below which it is taken as noise.
KERNEL_FLOOR = 0.2
#: Regularisation of the kernel's estimate, as a share of the face's mean spectral power.
ESTIMATE_REGULARISATION = 0.02
#: The moments of the thresholded kernel understate a line's length; measured on our own
#: scenes' smears (``benchmarks/smear.py``), the line is this much longer.
LENGTH_SCALE = 1.12
#: The lengths a frame's smear is undone at, as shares of the length measured, in turn, for the
#: cards each one left unread. Measured on our own scenes (a box, the harness's sampled line and
#: our anti-aliased line, 5-12 px, 22 frames each), a frame's length lay at 0.91-1.10 of the
#: drawn one; on independent harness frames it came out short (9.7 px measured 8.3 from one
#: card read, which left four cards unread that the smear undone 15 % longer read). Never
#: shorter: a smear left partly in makes clubs spades (a harness 3C, smeared 8.65 px and
#: measured 7.06, read 3S past every test undone at 0.8-0.9 of that, and no card at 1-1.15).
LENGTH_TRIES = (1.0, 1.15)
#: A frame counts as smeared when its cards' median smear is at least this long (px): frames
#: without one measured at most 3.2 px (optical blur alone widens the kernel a little).
MIN_SMEAR_PX = 4.5
#: The directions measured on the cards read must agree this closely (degrees, each from
#: their circular mean) for a frame's smear to be trusted.
DIRECTION_SPREAD_DEG = 35.0
#: And every card's line must be at least this share of their median length: a camera's
#: motion smears every card alike, a card slid by a hand smears alone (a still card's line
#: measures 0.3-3 px, its direction any).
SAME_SMEAR_SHARE = 0.5
#: Wiener filter's noise-to-signal ratio: low enough to restore the pips' shapes, high
#: enough not to raise the sensor's noise and the JPEG blocks into ink.
NOISE_TO_SIGNAL = 0.01
#: Margin (px) around a card undone: the filter rings within a smear's length of the cut.
MARGIN_PX = 12


@dataclass(frozen=True)
class Smear:
    """A straight motion smear: its length in pixels and its direction (degrees, 0-180, image x
    towards image y)."""

    length_px: float
    angle_deg: float


def smear_kernel(smear: Smear) -> np.ndarray:
    """A normalised straight line ``smear.length_px`` long at ``smear.angle_deg``, centred in an
    odd square: points every tenth of a pixel along it, each shared among its four nearest
    pixels (a fractional length counts; cv2.line draws a float kernel without anti-aliasing)."""
    size = (int(math.ceil(smear.length_px)) + 3) | 1
    c = (size - 1) / 2
    # a box ``length_px`` long, as the fit's model has it (:func:`_fitted`)
    half = smear.length_px / 2
    t = np.linspace(-half, half, max(2, int(math.ceil(smear.length_px * 10))))
    x = c + t * math.cos(math.radians(smear.angle_deg))
    y = c + t * math.sin(math.radians(smear.angle_deg))
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    fx, fy = x - x0, y - y0
    k = np.zeros((size, size), np.float64)
    for dy, dx, weight in ((0, 0, (1 - fx) * (1 - fy)), (0, 1, fx * (1 - fy)), (1, 0, (1 - fx) * fy), (1, 1, fx * fy)):
        np.add.at(k, (np.clip(y0 + dy, 0, size - 1), np.clip(x0 + dx, 0, size - 1)), weight)
    return (k / max(float(k.sum()), 1e-12)).astype(np.float32)


def card_smear(gray: np.ndarray, face: np.ndarray, corners: np.ndarray) -> CardSpectra | None:
    """The smear that turns ``face`` (a card's canonical template, grey) placed at ``corners``
    (image px, TL, TR, BR, BL of the face as read) into what ``gray`` (the frame, grey) shows
    there; None where it cannot be measured (a card at the frame's edge, too small a card)."""
    q = np.asarray(corners, np.float32)
    x0, y0 = (np.floor(q.min(axis=0)).astype(int) - MARGIN_PX).tolist()
    x1, y1 = (np.ceil(q.max(axis=0)).astype(int) + MARGIN_PX).tolist()
    if x0 < 0 or y0 < 0 or x1 > gray.shape[1] or y1 > gray.shape[0]:
        return None
    h, w = y1 - y0, x1 - x0
    if h <= 2 * KERNEL_REACH + 2 or w <= 2 * KERNEL_REACH + 2:
        return None
    fh, fw = face.shape[:2]
    source = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32)
    placed = cv2.getPerspectiveTransform(source, q - np.array([x0, y0], np.float32))
    sharp = cv2.warpPerspective(face.astype(np.float32), placed, (w, h), flags=cv2.INTER_AREA)
    card = cv2.warpPerspective(np.full((fh, fw), 255, np.uint8), placed, (w, h), flags=cv2.INTER_NEAREST)
    # the card's own edge is left out: what lies beside it (felt, a line, a neighbour) is not
    # in the face
    inside = cv2.erode(card, np.ones((9, 9), np.uint8)) > 0
    if not inside.any():
        return None
    seen = gray[y0:y1, x0:x1].astype(np.float32)
    o = np.where(inside, seen - seen[inside].mean(), 0.0)
    s = np.where(inside, sharp - sharp[inside].mean(), 0.0)
    window = np.outer(np.hanning(h), np.hanning(w))
    spectrum_seen = np.fft.rfft2(o * window)
    spectrum_face = np.fft.rfft2(s * window)
    power = np.abs(spectrum_face) ** 2
    ratio = spectrum_seen * np.conj(spectrum_face) / (power + ESTIMATE_REGULARISATION * power.mean() + 1e-12)
    kernel = np.fft.fftshift(np.fft.irfft2(ratio, s=(h, w)))
    r = KERNEL_REACH
    line = _line_of(kernel[h // 2 - r : h // 2 + r + 1, w // 2 - r : w // 2 + r + 1])
    if line is None:
        return None
    return CardSpectra(line, np.abs(spectrum_seen), np.abs(spectrum_face), np.fft.fftfreq(h)[:, None],
                       np.fft.rfftfreq(w)[None, :])


def _line_of(kernel: np.ndarray) -> Smear | None:
    """The straight smear whose spread matches the estimated ``kernel``'s (its part above
    :data:`KERNEL_FLOOR` of its peak): the long axis's direction, and the length of a line that
    spreads as much more along it than across it (a line of length L spreads L**2 / 12 along
    itself; the optical blur spreads both ways alike)."""
    if not np.isfinite(kernel).all() or kernel.max() <= 0:
        return None
    k = np.maximum(kernel - KERNEL_FLOOR * kernel.max(), 0.0)
    total = float(k.sum())
    r = kernel.shape[0] // 2
    yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
    mx, my = float((k * xx).sum()) / total, float((k * yy).sum()) / total
    cxx = float((k * (xx - mx) ** 2).sum()) / total
    cyy = float((k * (yy - my) ** 2).sum()) / total
    cxy = float((k * (xx - mx) * (yy - my)).sum()) / total
    spread, axes = np.linalg.eigh(np.array([[cxx, cxy], [cxy, cyy]]))
    length = LENGTH_SCALE * math.sqrt(max(12.0 * float(spread[1] - spread[0]), 0.0))
    angle = math.degrees(math.atan2(float(axes[1, 1]), float(axes[0, 1]))) % 180.0
    return Smear(length, angle)


@dataclass(frozen=True)
class CardSpectra:
    """One card read's measure of the smear: the line its estimated kernel's spread gives
    (``line``), and the magnitudes of the spectra of what the camera saw and of the face placed
    there (``seen``, ``face``; rfft2 layout, ``fy`` and ``fx`` their frequencies, cycles/px)."""

    line: Smear
    seen: np.ndarray
    face: np.ndarray
    fy: np.ndarray
    fx: np.ndarray


#: The joint fit of the frame's smear: frequencies used (cycles/px; beyond, noise and JPEG
#: blocks dominate), lengths (share of the cards' median line) and directions (degrees
#: around their mean) tried, and the optical blurs (sigma, px) the smear is taken with.
FIT_MAX_FREQUENCY = 0.3
FIT_LENGTHS = np.arange(0.7, 1.61, 0.05)
FIT_ANGLES = np.arange(-21.0, 21.1, 1.5)
FIT_SIGMAS = (0.4, 0.8, 1.2, 1.6)
FIT_FREQUENCIES = 1200


def _line_transfer(lengths: np.ndarray, along: np.ndarray) -> np.ndarray:
    """``|sinc(length * along)|`` for every one of ``lengths`` (evenly spaced, as
    :data:`FIT_LENGTHS` scales them) and every value of ``along`` (the frequencies along each
    direction tried): the magnitude of a line's transfer function, shape (L, *along.shape).
    The sines come by the recurrence sin(x + (k + 1) d) = 2 cos(d) sin(x + k d) - sin(x + (k - 1) d)
    from two of them, not one each: np.sinc over every length took 14 ms a card, most of a
    smeared frame's fit."""
    x = np.pi * along
    step = float(lengths[1] - lengths[0]) if len(lengths) > 1 else 0.0
    before, now = np.sin(x * (lengths[0] - step)), np.sin(x * lengths[0])
    twice_cos = 2.0 * np.cos(x * step)
    zero = np.abs(x) < 1e-12  # sinc(0) = 1
    inverse = 1.0 / np.where(zero, 1.0, np.abs(x))
    out = np.empty((len(lengths), *along.shape))
    for k, length in enumerate(lengths):
        np.multiply(np.abs(now), inverse / length, out=out[k])
        before, now = now, twice_cos * now - before
    out[:, zero] = 1.0
    return out


def _fitted(cards: Sequence[CardSpectra], start: Smear) -> Smear:
    """The smear (line length and direction, with an optical blur of its own) whose transfer
    function's magnitude best turns each card's face spectrum into what was seen, summed over
    the cards (each with its own gain, in the least-squares sense, over its strongest
    :data:`FIT_FREQUENCIES` below :data:`FIT_MAX_FREQUENCY`): magnitudes, so that a card read a
    pixel off (a phase ramp) fits as well."""
    lengths = start.length_px * FIT_LENGTHS
    angles = np.deg2rad(start.angle_deg + FIT_ANGLES)
    sigmas = np.asarray(FIT_SIGMAS)
    total = np.zeros((len(lengths), len(angles), len(sigmas)))
    for card in cards:
        fy = np.broadcast_to(card.fy, card.face.shape)
        fx = np.broadcast_to(card.fx, card.face.shape)
        radius = np.hypot(fx, fy)
        usable = (radius > 0) & (radius <= FIT_MAX_FREQUENCY)
        face, seen = card.face[usable], card.seen[usable]
        fx_u, fy_u, r2 = fx[usable], fy[usable], radius[usable] ** 2
        keep = np.argsort(face)[-FIT_FREQUENCIES:]
        face, seen, fx_u, fy_u, r2 = face[keep], seen[keep], fx_u[keep], fy_u[keep], r2[keep]
        along = np.cos(angles)[:, None] * fx_u[None, :] + np.sin(angles)[:, None] * fy_u[None, :]  # (A, F)
        line = _line_transfer(lengths, along)  # (L, A, F)
        optics = np.exp(-2.0 * np.pi**2 * sigmas[:, None] ** 2 * r2[None, :])  # (S, F)
        # the model m = line * optics * face, each hypothesis with its best gain: the residual
        # is sum(seen**2) - sum(m * seen)**2 / sum(m**2), both sums over the frequencies (as
        # matrix products: L * A rows of F against S columns)
        rows = line.reshape(-1, line.shape[-1])
        cross = (rows @ (optics * face * seen).T).reshape(len(lengths), len(angles), len(sigmas))
        power = ((rows * rows) @ ((optics * face) ** 2).T).reshape(len(lengths), len(angles), len(sigmas))
        seen_power = max(float((seen * seen).sum()), 1e-12)
        total += (seen_power - cross * cross / np.maximum(power, 1e-12)) / seen_power
    li, ai, _ = np.unravel_index(int(np.argmin(total)), total.shape)
    return Smear(float(lengths[li]), float(np.rad2deg(angles[ai])) % 180.0)


def frame_smear(cards: Sequence[CardSpectra]) -> Smear | None:
    """The frame's smear from its cards' measures (:func:`card_smear`): their lines' median length
    and mean direction as a start, fitted jointly on their spectra (:func:`_fitted`), when the
    lines are at least :data:`MIN_SMEAR_PX` long (median), none shorter than
    :data:`SAME_SMEAR_SHARE` of that, and every card's direction lies within
    :data:`DIRECTION_SPREAD_DEG` of their mean; else None (no smear, or none the cards agree on)."""
    if not cards:
        return None
    lines = [c.line for c in cards]
    length = float(np.median([s.length_px for s in lines]))
    if length < MIN_SMEAR_PX or min(s.length_px for s in lines) < SAME_SMEAR_SHARE * length:
        return None  # no smear, or not the frame's: a card slid alone beside still ones
    # directions are axial (0 and 180 are one): the mean of the doubled angles' vectors
    doubled = np.deg2rad([2.0 * s.angle_deg for s in lines])
    mean = math.degrees(math.atan2(float(np.sin(doubled).mean()), float(np.cos(doubled).mean()))) / 2.0 % 180.0
    off = [angle_apart(s.angle_deg, mean) for s in lines]
    if max(off) > DIRECTION_SPREAD_DEG:
        return None
    return _fitted(cards, Smear(length, mean))


#: Blind guesses (:func:`smear_guesses`): the side of the square windows (px) whose cepstra are
#: averaged, two per card (above and below its middle, by this share of its height), the
#: lengths (px) a guess may have, how many guesses are made, and how far apart (px, degrees)
#: two guesses must lie. On 43 frames of five independent harness runs smeared 6-11 px, the
#: first three guesses held one within 12 degrees and 25 % of the drawn smear on 40 (the first
#: guess on 28); windows of 64 px, or one per card, held one on 32-37.
GUESS_WINDOW = 96
GUESS_OFFSET = 0.15
GUESS_LENGTHS = (MIN_SMEAR_PX, 24.0)
GUESSES = 3
GUESS_APART = (2.0, 12.0)


def smear_guesses(gray: np.ndarray, boxes: Sequence[tuple[int, int, int, int]]) -> list[Smear]:
    """Up to :data:`GUESSES` guesses at a frame's smear, likeliest first, from the cepstrum of
    ``gray`` (the frame, grey) in windows centred in ``boxes`` (x0, y0, x1, y1 in px: cards not
    read; a window may reach past a small card's sides, never past the frame's). The
    spectrum of a picture smeared along a line of length L falls to zero every 1/L across the
    line's direction, so the log spectrum's own spectrum (the cepstrum) dips at L along it;
    averaged over the windows, the deepest dips between :data:`GUESS_LENGTHS` are the guesses.
    Only guesses: a card's print has periods of its own (``Recognizer._guessed_smear`` reads a
    card with each undone, then measures the smear on it)."""
    n = GUESS_WINDOW
    taper = np.outer(np.hanning(n), np.hanning(n))
    total = np.zeros((n, n))
    windows = 0
    for x0, y0, x1, y1 in boxes:
        cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
        for side in (-1, 1):
            top, left = cy + round(side * GUESS_OFFSET * (y1 - y0)) - n // 2, cx - n // 2
            if top < 0 or left < 0 or top + n > gray.shape[0] or left + n > gray.shape[1]:
                continue
            window = gray[top : top + n, left : left + n].astype(np.float64)
            window = (window - window.mean()) * taper
            magnitude = np.abs(np.fft.fft2(window))
            total += np.real(np.fft.ifft2(np.log(magnitude + 1e-3 * magnitude.mean() + 1e-9)))
            windows += 1
    if not windows:
        return []
    cepstrum = np.fft.fftshift(total / windows)
    c = n // 2
    yy, xx = np.mgrid[-c : n - c, -c : n - c]
    radius = np.hypot(xx, yy)
    # a line and its reverse are one smear: half the plane
    usable = (radius >= GUESS_LENGTHS[0]) & (radius <= GUESS_LENGTHS[1]) & ((yy > 0) | ((yy == 0) & (xx > 0)))
    guesses: list[Smear] = []
    for flat in np.argsort(np.where(usable, cepstrum, np.inf), axis=None):
        y, x = divmod(int(flat), n)
        if not usable[y, x] or cepstrum[y, x] >= 0.0 or len(guesses) == GUESSES:
            break
        guess = Smear(float(radius[y, x]), math.degrees(math.atan2(y - c, x - c)) % 180.0)
        if not any(abs(guess.length_px - g.length_px) < GUESS_APART[0]
                   and angle_apart(guess.angle_deg, g.angle_deg) < GUESS_APART[1] for g in guesses):
            guesses.append(guess)
    return guesses


def angle_apart(a: float, b: float) -> float:
    """How far apart two directions (degrees, 0 and 180 being one) lie, 0-90."""
    return abs((a - b + 90.0) % 180.0 - 90.0)


def unsmeared(frame: np.ndarray, smear: Smear, boxes: Sequence[tuple[int, int, int, int]]) -> np.ndarray:
    """A copy of ``frame`` (BGR) with the smear undone (Wiener filter, :data:`NOISE_TO_SIGNAL`)
    within each of ``boxes`` (x0, y0, x1, y1 in px; clipped to the frame)."""
    out = frame.copy()
    kernel = smear_kernel(smear)
    height, width = frame.shape[:2]
    pad = MARGIN_PX + kernel.shape[0]
    for x0, y0, x1, y1 in boxes:
        ax0, ay0 = max(0, x0 - pad), max(0, y0 - pad)
        ax1, ay1 = min(width, x1 + pad), min(height, y1 + pad)
        if ax1 - ax0 < kernel.shape[1] or ay1 - ay0 < kernel.shape[0]:
            continue
        # reflected beyond the window, so that the filter's wrap-around meets no edge
        reach = 2 * kernel.shape[0]
        window = cv2.copyMakeBorder(frame[ay0:ay1, ax0:ax1], reach, reach, reach, reach,
                                    cv2.BORDER_REFLECT_101).astype(np.float32)
        h, w = window.shape[:2]
        psf = np.zeros((h, w), np.float32)
        kh, kw = kernel.shape
        psf[:kh, :kw] = kernel
        psf = np.roll(psf, (-(kh // 2), -(kw // 2)), axis=(0, 1))
        transfer = np.fft.rfft2(psf)
        inverse = np.conj(transfer) / (np.abs(transfer) ** 2 + NOISE_TO_SIGNAL)
        for c in range(window.shape[2]):
            channel = np.fft.irfft2(np.fft.rfft2(window[:, :, c]) * inverse, s=(h, w))
            window[:, :, c] = channel
        # back into the frame: the box and its margin (the window's own margin rings)
        bx0, by0 = max(0, x0 - MARGIN_PX), max(0, y0 - MARGIN_PX)
        bx1, by1 = min(width, x1 + MARGIN_PX), min(height, y1 + MARGIN_PX)
        inner = window[by0 - ay0 + reach : by1 - ay0 + reach, bx0 - ax0 + reach : bx1 - ax0 + reach]
        out[by0:by1, bx0:bx1] = np.clip(inner + 0.5, 0, 255).astype(np.uint8)
    return out
