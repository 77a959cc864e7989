"""Render overhead-camera frames of a card table with exact ground truth.

Shared by the simulated camera, the tests and ``benchmarks/recognition.py``:
real card faces (:mod:`deck_art`) laid on a felt layout with its ArUco corner
markers, seen by a tilted camera (perspective), then degraded the way studio
video is: rotation (±10°), blur, sensor noise, uneven light, glare and JPEG
compression. The truth of every card (code, image corners, slot) is exact
because the renderer places it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import cv2
import numpy as np

from calibration.layout import Layout
from calibration.table import aruco_dictionary
from firmware_interfaces.camera.deck_art import DeckArt

FRAME_SIZE = (1280, 720)


@dataclass(frozen=True)
class PlacedCard:
    """A card to draw: its slot (None = off every slot), code, and pose in table mm."""

    slot: str | None
    code: str
    centre_mm: tuple[float, float]
    angle_deg: float = 0.0
    face_up: bool = True


@dataclass(frozen=True)
class TruthCard:
    """Ground truth of one drawn card: code, image corners (TL, TR, BR, BL of the face), slot."""

    code: str | None  # None for a face-down card
    corners: list[tuple[float, float]]
    slot: str | None
    centre_mm: tuple[float, float]


@dataclass
class Degradation:
    """How hard the camera is on the picture; the defaults match a studio camera on a bad day."""

    blur_sigma: tuple[float, float] = (0.3, 1.2)
    noise_sigma: tuple[float, float] = (1.0, 5.0)
    jpeg_quality: tuple[int, int] = (55, 92)
    light_gradient: tuple[float, float] = (0.65, 1.1)
    glare_chance: float = 0.6
    glare_strength: tuple[float, float] = (40.0, 120.0)
    max_rotation_deg: float = 10.0
    jitter_mm: float = 5.0
    perspective: float = 1.0  # 0 = straight down, 1 = the usual tilt

    @classmethod
    def mild(cls) -> Degradation:
        return cls(blur_sigma=(0.3, 0.6), noise_sigma=(1.0, 2.0), jpeg_quality=(85, 95),
                   light_gradient=(0.9, 1.0), glare_chance=0.0, max_rotation_deg=4.0, jitter_mm=3.0)


@dataclass
class Scene:
    """One rendered frame and what is truly on it."""

    image: np.ndarray
    cards: list[TruthCard]
    table_to_image: np.ndarray
    meta: dict = field(default_factory=dict)  # type: ignore[type-arg]


def camera_homography(layout: Layout, rng: random.Random, perspective: float = 1.0,
                      frame_size: tuple[int, int] = FRAME_SIZE) -> np.ndarray:
    """A plausible overhead camera: table mm -> image px, the table filling most of the frame,
    the far edge narrower (tilt), a small roll and offset."""
    fw, fh = frame_size
    margin_x, margin_y = 0.03 * fw, 0.04 * fh
    squeeze = perspective * rng.uniform(0.03, 0.09) * fw
    pts = [
        (margin_x + squeeze, margin_y),
        (fw - margin_x - squeeze, margin_y),
        (fw - margin_x, fh - margin_y),
        (margin_x, fh - margin_y),
    ]
    jit = 0.012 * fw
    pts = [(x + rng.uniform(-jit, jit), y + rng.uniform(-jit, jit)) for x, y in pts]
    # the layout's aspect differs from 16:9: keep mm square-ish by shrinking the wider side
    src = np.array(layout.outline_mm, dtype=np.float32)
    dst = np.array(pts, dtype=np.float32)
    ratio_img = (fw - 2 * margin_x) / (fh - 2 * margin_y)
    ratio_tab = layout.width_mm / layout.height_mm
    if ratio_tab < ratio_img:  # table taller than the frame: narrow it horizontally
        cx = fw / 2
        dst[:, 0] = cx + (dst[:, 0] - cx) * ratio_tab / ratio_img
    else:
        cy = fh / 2
        dst[:, 1] = cy + (dst[:, 1] - cy) * ratio_img / ratio_tab
    return cv2.getPerspectiveTransform(src, dst).astype(np.float64)


def render_felt(layout: Layout, rng: random.Random, ppm: float = 1.0) -> np.ndarray:
    """The printed layout in table coordinates (``ppm`` px per mm): felt, slot outlines, markers."""
    w, h = int(layout.width_mm * ppm), int(layout.height_mm * ppm)
    base = rng.choice([(40, 110, 35), (35, 95, 50), (90, 60, 30), (35, 40, 120), (50, 50, 55)])
    base = tuple(int(np.clip(c + rng.uniform(-15, 15), 0, 255)) for c in base)
    felt = np.empty((h, w, 3), np.uint8)
    felt[:] = base
    nrng = np.random.default_rng(rng.randrange(1 << 30))
    texture = cv2.resize(nrng.normal(0, 8, (h // 8 + 1, w // 8 + 1)).astype(np.float32), (w, h))
    felt = np.clip(felt.astype(np.float32) + texture[:, :, None], 0, 255).astype(np.uint8)
    line = tuple(int(min(255, c + 60)) for c in base)
    for s in layout.slots:
        cv2.rectangle(felt, (int(s.x * ppm), int(s.y * ppm)), (int((s.x + s.w) * ppm), int((s.y + s.h) * ppm)),
                      line, max(1, int(1.5 * ppm)), cv2.LINE_AA)
    dictionary = aruco_dictionary(layout.markers.dictionary)
    size = int(layout.markers.size_mm * ppm)
    quiet = max(2, int(6 * ppm))
    for k, marker_id in enumerate(layout.markers.ids):
        img = cv2.aruco.generateImageMarker(dictionary, marker_id, size)
        cx, cy = layout.markers.centres_mm[k]
        x0, y0 = int(cx * ppm) - size // 2, int(cy * ppm) - size // 2
        cv2.rectangle(felt, (x0 - quiet, y0 - quiet), (x0 + size + quiet, y0 + size + quiet), (235, 235, 235), -1)
        felt[y0 : y0 + size, x0 : x0 + size] = img[:, :, None]
    return felt


def card_corners_mm(card: PlacedCard, size_mm: tuple[float, float]) -> np.ndarray:
    """TL, TR, BR, BL of the face in table mm."""
    w, h = size_mm
    a = np.deg2rad(card.angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    return local @ rot.T + np.array(card.centre_mm)


def card_size_mm(layout: Layout, face: np.ndarray) -> tuple[float, float]:
    """The deck's own aspect at the layout's card width."""
    w = layout.card_mm[0]
    return (w, w * face.shape[0] / face.shape[1])


def draw_card(frame: np.ndarray, face: np.ndarray, img_corners: np.ndarray) -> None:
    """Warp ``face`` onto ``frame`` (in place) so that its corners land on ``img_corners``."""
    fh, fw = face.shape[:2]
    x0, y0 = np.floor(img_corners.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(img_corners.max(axis=0)).astype(int) + 2
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, frame.shape[1]), min(y1, frame.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    src = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], dtype=np.float32)
    dst = (img_corners - np.array([x0, y0])).astype(np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    size = (x1 - x0, y1 - y0)
    # supersampled face: shrink first so warping does not alias the print
    scale = max(1.0, fw / max(1.0, np.linalg.norm(img_corners[1] - img_corners[0])) / 1.5)
    if scale > 1.0:
        small = cv2.resize(face, (int(fw / scale), int(fh / scale)), interpolation=cv2.INTER_AREA)
        m = m @ np.diag([scale, scale, 1.0])
    else:
        small = face
    warped = cv2.warpPerspective(small, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    mask = cv2.warpPerspective(np.full(small.shape[:2], 255, np.uint8), m, size, flags=cv2.INTER_LINEAR)
    roi = frame[y0:y1, x0:x1]
    a = (mask.astype(np.float32) / 255.0)[:, :, None]
    roi[:] = (warped * a + roi * (1 - a)).astype(np.uint8)


def degrade(image: np.ndarray, rng: random.Random, d: Degradation) -> np.ndarray:
    """Uneven light, glare, blur, noise and JPEG, in the order a camera adds them."""
    h, w = image.shape[:2]
    nrng = np.random.default_rng(rng.randrange(1 << 30))
    img = image.astype(np.float32)
    lo, hi = d.light_gradient
    gx, gy = rng.uniform(-1, 1), rng.uniform(-1, 1)
    yy, xx = np.mgrid[0:h:8, 0:w:8].astype(np.float32)
    field_ = (xx / w - 0.5) * gx + (yy / h - 0.5) * gy
    field_ = lo + (hi - lo) * (field_ - field_.min()) / max(1e-6, float(np.ptp(field_)))
    img *= cv2.resize(field_, (w, h))[:, :, None]
    if rng.random() < d.glare_chance:
        for _ in range(rng.randint(1, 2)):
            cx, cy = rng.uniform(0.1, 0.9) * w, rng.uniform(0.1, 0.9) * h
            sx, sy = rng.uniform(30, 120), rng.uniform(20, 90)
            amp = rng.uniform(*d.glare_strength)
            g = np.exp(-(((xx - cx) / sx) ** 2 + ((yy - cy) / sy) ** 2) / 2) * amp
            img += cv2.resize(g, (w, h))[:, :, None]
    sigma = rng.uniform(*d.blur_sigma)
    if sigma > 0.25:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    img += nrng.normal(0, rng.uniform(*d.noise_sigma), img.shape).astype(np.float32)
    out = np.clip(img, 0, 255).astype(np.uint8)
    q = rng.randint(*d.jpeg_quality)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])
    assert ok
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def free_spot(layout: Layout, rng: random.Random, taken: list[tuple[float, float]],
              size_mm: tuple[float, float]) -> tuple[float, float]:
    """A card centre off every slot and marker, clear of other cards (a dropped card)."""
    half = max(size_mm) / 2 + 8
    for _ in range(500):
        x = rng.uniform(half + 70, layout.width_mm - half - 70)
        y = rng.uniform(half + 10, layout.height_mm - half - 10)
        clear_of_slots = all(
            x + half < s.x or x - half > s.x + s.w or y + half < s.y or y - half > s.y + s.h for s in layout.slots
        )
        clear_of_cards = all(abs(x - tx) > 2 * half or abs(y - ty) > 2 * half for tx, ty in taken)
        if clear_of_slots and clear_of_cards:
            return (x, y)
    raise ValueError(f"layout {layout.name}: no free spot left for an off-layout card")


def place_cards(layout: Layout, deal: list[tuple[str | None, str]], rng: random.Random,
                d: Degradation, size_mm: tuple[float, float]) -> list[PlacedCard]:
    """Poses for ``(slot or None, code)`` pairs: slot centre plus jitter, random roll, 180° flips."""
    placed: list[PlacedCard] = []
    for slot, code in deal:
        angle = rng.uniform(-d.max_rotation_deg, d.max_rotation_deg) + rng.choice([0.0, 180.0])
        if slot is None:
            centre = free_spot(layout, rng, [p.centre_mm for p in placed], size_mm)
        else:
            sx, sy = layout.slot(slot).centre
            centre = (sx + rng.uniform(-d.jitter_mm, d.jitter_mm), sy + rng.uniform(-d.jitter_mm, d.jitter_mm))
        placed.append(PlacedCard(slot, code, centre, angle))
    return placed


def render_scene(layout: Layout, deck: DeckArt, placed: list[PlacedCard], rng: random.Random,
                 degradation: Degradation | None = None, table_to_image: np.ndarray | None = None,
                 felt: np.ndarray | None = None, frame_size: tuple[int, int] = FRAME_SIZE) -> Scene:
    """Draw ``placed`` cards on the layout as the camera sees them."""
    d = degradation or Degradation()
    if table_to_image is None:
        table_to_image = camera_homography(layout, rng, d.perspective, frame_size)
    ppm = 1.0
    if felt is None:
        felt = render_felt(layout, rng, ppm)
    frame = np.empty((frame_size[1], frame_size[0], 3), np.uint8)
    frame[:] = (28, 26, 24)
    to_img = table_to_image @ np.diag([1 / ppm, 1 / ppm, 1.0])
    cv2.warpPerspective(felt, to_img, frame_size, dst=frame, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT)
    truth: list[TruthCard] = []
    for card in placed:
        face = deck.face(card.code) if card.face_up else deck.back()
        corners_mm = card_corners_mm(card, card_size_mm(layout, face))
        corners_img = cv2.perspectiveTransform(corners_mm.reshape(-1, 1, 2), table_to_image).reshape(-1, 2)
        draw_card(frame, face, corners_img)
        truth.append(TruthCard(card.code if card.face_up else None,
                               [(float(x), float(y)) for x, y in corners_img], card.slot, card.centre_mm))
    image = degrade(frame, rng, d)
    return Scene(image, truth, table_to_image, {"deck": deck.name, "layout": layout.name})


def random_deal(layout: Layout, rng: random.Random, n_cards: int, off_layout: int = 0) -> list[tuple[str | None, str]]:
    """``n_cards`` distinct random cards in random distinct slots, plus ``off_layout`` dropped cards."""
    from firmware_interfaces.camera.deck_art import CODES

    codes = rng.sample(CODES, n_cards + off_layout)
    slots = rng.sample([s.name for s in layout.slots], n_cards)
    deal: list[tuple[str | None, str]] = list(zip(slots, codes[:n_cards]))
    deal += [(None, c) for c in codes[n_cards:]]
    return deal


@dataclass
class GeneratedFrame:
    """One frame of a generated test set, with the empty-table frame to calibrate from."""

    layout: Layout
    empty: np.ndarray
    scene: Scene


def generate_test_set(deck: DeckArt, layouts: list[Layout], frames: int, seed: int = 0, cards: int = 6,
                off_layout_every: int = 4, empty_every: int = 10,
                degradation: Degradation | None = None) -> list[GeneratedFrame]:
    """A reproducible test set: ``frames`` frames cycling through ``layouts``, each from its own
    camera pose, with ``cards`` cards in slots; every ``off_layout_every``-th frame adds a card
    off every slot, every ``empty_every``-th frame has no card at all (phantom check)."""
    out = []
    for i in range(frames):
        rng = random.Random(seed * 100_003 + i)
        layout = layouts[i % len(layouts)]
        d = degradation or Degradation()
        table_to_image = camera_homography(layout, rng, d.perspective)
        felt = render_felt(layout, rng)
        empty = render_scene(layout, deck, [], rng, Degradation.mild(), table_to_image=table_to_image, felt=felt)
        n = 0 if empty_every and i % empty_every == empty_every - 1 else min(cards, len(layout.slots))
        off = 1 if off_layout_every and n and i % off_layout_every == 1 else 0
        size = card_size_mm(layout, deck.face("AS"))
        placed = place_cards(layout, random_deal(layout, rng, n, off), rng, d, size)
        scene = render_scene(layout, deck, placed, rng, d, table_to_image=table_to_image, felt=felt)
        out.append(GeneratedFrame(layout, empty.image, scene))
    return out
