"""Views of one card face as a table camera could show it, for learning a deck.

The deck model (:mod:`calibration.deck_model`) never sees a real frame
before it must read one, so it learns from these: the face is put on a felt
patch at a random size in pixels and pose, lit, blurred, noised and
JPEG-compressed the way a studio camera does it, then cut out again the way
the recogniser cuts a card out of a frame — from an outline that is a pixel
or two off — into the canonical upright picture.
Every range here is wider than the scene generator's defaults: the model
must hold on cameras and light it was never shown.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.templates import CARD_SIZE, canonical_corners


@dataclass(frozen=True)
class ViewRanges:
    """The ranges views are drawn from (frame pixels unless said otherwise)."""

    card_width_px: tuple[float, float] = (52.0, 150.0)
    corner_jitter: float = 0.04  # perspective: each corner moved up to this share of the width
    rotation_deg: float = 14.0
    # how far the recogniser's outline may be off, per corner (sigma: the larger of a share of
    # the width and pixels); 3 % of the width was tried and made the discriminant too lax
    outline_error: float = 0.0
    outline_error_px: float = 1.3
    exposure_stops: float = 1.2
    colour_cast: float = 0.22
    gradient: float = 0.35
    glare_chance: float = 0.3
    #: a veil of glare: the picture blended toward white (``veil``: how far at its middle) in a
    #: broad smooth spot, as a camera's highlight roll-off turns a strong reflection (the ink
    #: lifted toward the paper, little clipped); not in the deck model's views (0), for the
    #: benchmarks' harder ones
    veil_chance: float = 0.0
    veil: tuple[float, float] = (0.4, 0.97)
    shadow_chance: float = 0.25
    blur_sigma: tuple[float, float] = (0.2, 2.0)
    motion_chance: float = 0.3
    motion_px: tuple[int, int] = (3, 9)
    noise_sigma: tuple[float, float] = (0.5, 7.0)
    jpeg_quality: tuple[int, int] = (50, 96)


#: A camera on a fair day: what the calibration self-test reads every card back under.
FAIR_DAY = ViewRanges(
    card_width_px=(80.0, 140.0),
    corner_jitter=0.02,
    rotation_deg=8.0,
    outline_error=0.01,
    outline_error_px=0.8,
    exposure_stops=0.5,
    colour_cast=0.1,
    glare_chance=0.0,
    shadow_chance=0.0,
    blur_sigma=(0.3, 1.0),
    motion_chance=0.0,
    noise_sigma=(1.0, 3.0),
    jpeg_quality=(80, 96),
)


def random_view(face: np.ndarray, rng: np.random.Generator, ranges: ViewRanges | None = None) -> np.ndarray:
    """One canonical (:data:`CARD_SIZE`) BGR picture of ``face`` as a camera could deliver it."""
    r = ranges or ViewRanges()
    fh, fw = face.shape[:2]
    w_px = rng.uniform(*r.card_width_px)
    h_px = w_px * fh / fw
    size = int(np.ceil(max(w_px, h_px) * 1.5)) + 8
    c = size / 2
    a = np.deg2rad(rng.uniform(-r.rotation_deg, r.rotation_deg))
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    local = np.array([[-w_px / 2, -h_px / 2], [w_px / 2, -h_px / 2], [w_px / 2, h_px / 2], [-w_px / 2, h_px / 2]])
    local += rng.uniform(-r.corner_jitter, r.corner_jitter, (4, 2)) * w_px
    corners = (local @ rot.T + c).astype(np.float32)

    patch = np.empty((size, size, 3), np.uint8)
    patch[:] = [int(rng.uniform(10, 150)) for _ in range(3)]  # felt
    # shrink the print first so the warp does not alias it, as a lens would
    scale = max(1.0, fw / w_px / 1.5)
    small = cv2.resize(face, (max(8, int(fw / scale)), max(8, int(fh / scale))), interpolation=cv2.INTER_AREA)
    sh, sw = small.shape[:2]
    src = np.array([[0, 0], [sw, 0], [sw, sh], [0, sh]], np.float32)
    m = cv2.getPerspectiveTransform(src, corners)
    cv2.warpPerspective(small, m, (size, size), dst=patch, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT)
    img = patch.astype(np.float32)

    # light, shadow and glare are smooth: draw them on a coarse grid and scale it up
    g = 24
    yy, xx = np.mgrid[0:g, 0:g].astype(np.float32) / (g - 1) - 0.5
    light = 2.0 ** rng.uniform(-r.exposure_stops, r.exposure_stops)
    light = light * (1 + r.gradient * (xx * rng.uniform(-1, 1) + yy * rng.uniform(-1, 1)))
    glare = np.zeros_like(light)
    if rng.random() < r.shadow_chance:
        sx, sy = rng.uniform(-0.5, 0.5, 2)
        rad = rng.uniform(0.2, 0.6)
        light *= 1 - rng.uniform(0.3, 0.65) * np.exp(-((xx - sx) ** 2 + (yy - sy) ** 2) / (2 * rad**2))
    if rng.random() < r.glare_chance:
        gx, gy = rng.uniform(-0.35, 0.35, 2)
        rad = rng.uniform(0.05, 0.3)
        glare = rng.uniform(40, 160) * np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * rad**2))
    light_px = cv2.resize(light.astype(np.float32), (size, size), interpolation=cv2.INTER_LINEAR)
    gains = (1 + rng.uniform(-r.colour_cast, r.colour_cast, 3)).astype(np.float32)
    img = img * light_px[:, :, None] * gains
    if glare.any():
        img += cv2.resize(glare.astype(np.float32), (size, size), interpolation=cv2.INTER_LINEAR)[:, :, None]
    if r.veil_chance > 0 and rng.random() < r.veil_chance:  # (no draw at all when 0: the model's views unchanged)
        vx, vy = rng.uniform(-0.4, 0.4, 2)
        rad = rng.uniform(0.2, 0.8)
        veil = rng.uniform(*r.veil) * np.exp(-((xx - vx) ** 2 + (yy - vy) ** 2) / (2 * rad**2))
        veil_px = cv2.resize(veil.astype(np.float32), (size, size), interpolation=cv2.INTER_LINEAR)[:, :, None]
        img += veil_px * (rng.uniform(230, 300) - img)
    img = np.asarray(cv2.GaussianBlur(img, (0, 0), rng.uniform(*r.blur_sigma)), np.float32)
    if rng.random() < r.motion_chance:
        n = int(rng.integers(r.motion_px[0], r.motion_px[1] + 1))
        k = np.zeros((n, n), np.float32)
        k[n // 2, :] = 1.0 / n
        k = np.asarray(
            cv2.warpAffine(k, cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), rng.uniform(0, 180), 1.0), (n, n)),
            np.float32,
        )
        img = np.asarray(cv2.filter2D(img, -1, k / max(float(k.sum()), 1e-6)), np.float32)
    noise = np.empty(img.shape, np.float32)
    cv2.setRNGSeed(int(rng.integers(1 << 31)))
    cv2.randn(noise, np.zeros(1), np.full(1, float(rng.uniform(*r.noise_sigma))))
    img += noise
    out = np.clip(img, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(*r.jpeg_quality))])
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    if decoded is not None:
        out = np.asarray(decoded, np.uint8)
    seen = corners + rng.normal(0, max(r.outline_error_px, r.outline_error * w_px), (4, 2)).astype(np.float32)
    back = cv2.getPerspectiveTransform(seen, canonical_corners())
    return cv2.warpPerspective(out, back, CARD_SIZE, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
