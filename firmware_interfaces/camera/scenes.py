"""Render overhead-camera frames of a card table with exact ground truth.

Shared by the simulated camera, the tests and ``benchmarks/recognition.py``:
real card faces (:mod:`deck_art`) laid on a felt layout with its ArUco corner
markers, seen by a tilted camera (perspective), then degraded the way studio
video is: rotation (±10°), blur, sensor noise, uneven light, glare and JPEG
compression. The truth of every card (code, image corners, slot) is exact
because the renderer places it.

Two kinds of scene:

* *classic* (:class:`Degradation`, what the simulated camera and the soak use):
  one felt look, a squeezed-quad camera, the degradations above;
* *randomised* (:class:`DomainRandomisation`, ``generate_test_set(...,
  randomise=...)``): felt of five colours with texture, slot lines that touch
  the cards, printed words, a padded rail, chips, a hand's shadow, card sizes
  56-64 mm wide, a pinhole camera tilted up to 25° (and moved a little since the
  empty frame that calibrates the table), colour casts, exposure,
  vignette, glare on the cards, motion blur, 720p and 1080p frames; and, on
  request, cards no reader may name (face down, half under a hand, cut by the
  frame edge: truth code None).

Every setting a frame drew is in ``Scene.meta["conditions"]`` and every card's
own in ``TruthCard.conditions``, so that a failure can be traced to its
condition (:mod:`firmware_interfaces.camera.scoring` bands them).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from calibration.layout import Layout
from calibration.table import aruco_dictionary
from firmware_interfaces.camera.deck_art import CODES, DeckArt
from firmware_interfaces.camera.scene_effects import (
    CHIP_COLOURS,
    FELT_COLOURS,
    PRINT_COLOURS,
    RAIL_COLOURS,
    SKIN_TONES,
    CameraFaults,
    GlareSpot,
    HandPose,
    SlotPrint,
    add_rail,
    apply_camera,
    canvas_to_table,
    chip_face,
    coverage,
    draw_slot_print,
    draw_word,
    felt_texture,
    glare_field,
    hand_mask,
    ink_left,
    light_field,
    paint_hand,
    pinhole_camera,
    position_label,
    project,
    shadow_canvas,
    word_box,
)

FRAME_SIZE = (1280, 720)


@dataclass(frozen=True)
class PlacedCard:
    """A card to draw: its slot (None = off every slot), code, and pose in table mm;
    ``size_mm`` (width, height) is its physical size, None = the deck's aspect at the
    layout's card width (:func:`card_size_mm`)."""

    slot: str | None
    code: str
    centre_mm: tuple[float, float]
    angle_deg: float = 0.0
    face_up: bool = True
    size_mm: tuple[float, float] | None = None


@dataclass(frozen=True)
class TruthCard:
    """Ground truth of one drawn card: code, image corners (TL, TR, BR, BL of the face), slot.

    ``code`` is None for a card no reader may name (face down, half under a hand, cut by
    the frame edge): the right answer there is a no-read. ``conditions`` records how this
    card was drawn (``kind``, ``card_width_mm``, ``rotation_deg``, ``offset_mm``,
    ``glare_on_card``, ``occluded``, ``cut``, ``face_up``, ...; in randomised scenes
    ``ink_left``: the share of its ink glare and exposure left showing,
    :func:`~firmware_interfaces.camera.scene_effects.ink_left`, None face down or cut by the
    frame's edge)."""

    code: str | None
    corners: list[tuple[float, float]]
    slot: str | None
    centre_mm: tuple[float, float]
    conditions: dict[str, object] = field(default_factory=dict)


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
        """What the simulated camera uses: a good studio camera (and the empty frames that
        calibrate the table plane)."""
        return cls(blur_sigma=(0.3, 0.6), noise_sigma=(1.0, 2.0), jpeg_quality=(85, 95),
                   light_gradient=(0.9, 1.0), glare_chance=0.0, max_rotation_deg=4.0, jitter_mm=3.0)


@dataclass
class Scene:
    """One rendered frame and what is truly on it; ``meta["conditions"]`` holds the
    frame-level settings it was drawn with."""

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


_CLASSIC_FELTS = {(40, 110, 35): "green", (35, 95, 50): "green", (90, 60, 30): "blue", (35, 40, 120): "red",
                  (50, 50, 55): "grey"}


def render_felt(layout: Layout, rng: random.Random, ppm: float = 1.0,
                record: dict[str, object] | None = None) -> np.ndarray:
    """The printed layout in table coordinates (``ppm`` px per mm): felt, slot outlines, markers.
    ``record``, when given, receives the felt colour's name (``felt_colour``)."""
    w, h = int(layout.width_mm * ppm), int(layout.height_mm * ppm)
    base = rng.choice([(40, 110, 35), (35, 95, 50), (90, 60, 30), (35, 40, 120), (50, 50, 55)])
    if record is not None:
        record["felt_colour"] = _CLASSIC_FELTS[base]
    shifted = [int(np.clip(c + rng.uniform(-15, 15), 0, 255)) for c in base]
    base = (shifted[0], shifted[1], shifted[2])
    felt = np.empty((h, w, 3), np.uint8)
    felt[:] = base
    nrng = np.random.default_rng(rng.randrange(1 << 30))
    texture = cv2.resize(nrng.normal(0, 8, (h // 8 + 1, w // 8 + 1)).astype(np.float32), (w, h))
    felt = np.clip(felt.astype(np.float32) + texture[:, :, None], 0, 255).astype(np.uint8)
    line = (min(255, base[0] + 60), min(255, base[1] + 60), min(255, base[2] + 60))
    for s in layout.slots:
        cv2.rectangle(felt, (int(s.x * ppm), int(s.y * ppm)), (int((s.x + s.w) * ppm), int((s.y + s.h) * ppm)),
                      line, max(1, int(1.5 * ppm)), cv2.LINE_AA)
    draw_markers(felt, layout, ppm)
    printed: np.ndarray = felt
    return printed


def draw_markers(felt: np.ndarray, layout: Layout, ppm: float) -> None:
    """Print the layout's ArUco corner markers, each in its white quiet zone, on ``felt``
    (table mm from (0, 0) at ``ppm`` px/mm), in place."""
    dictionary = aruco_dictionary(layout.markers.dictionary)
    size = int(layout.markers.size_mm * ppm)
    quiet = max(2, int(6 * ppm))
    for k, marker_id in enumerate(layout.markers.ids):
        img = cv2.aruco.generateImageMarker(dictionary, marker_id, size)
        cx, cy = layout.markers.centres_mm[k]
        x0, y0 = int(cx * ppm) - size // 2, int(cy * ppm) - size // 2
        cv2.rectangle(felt, (x0 - quiet, y0 - quiet), (x0 + size + quiet, y0 + size + quiet), (235, 235, 235), -1)
        felt[y0 : y0 + size, x0 : x0 + size] = img[:, :, None]


def card_corners_mm(card: PlacedCard, size_mm: tuple[float, float]) -> np.ndarray:
    """TL, TR, BR, BL of the face in table mm."""
    w, h = size_mm
    a = np.deg2rad(card.angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    corners: np.ndarray = local @ rot.T + np.array(card.centre_mm)
    return corners


def card_size_mm(layout: Layout, face: np.ndarray) -> tuple[float, float]:
    """The deck's own aspect at the layout's card width."""
    w = layout.card_mm[0]
    return (w, w * face.shape[0] / face.shape[1])


def draw_card(frame: np.ndarray, face: np.ndarray, img_corners: np.ndarray, alpha: np.ndarray | None = None) -> None:
    """Warp ``face`` onto ``frame`` (in place) so that its corners land on ``img_corners``;
    ``alpha`` (0..255, the face's size) makes parts of it transparent (a round chip)."""
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
    if alpha is None:
        opaque = np.full(small.shape[:2], 255, np.uint8)
    elif small is face:
        opaque = alpha
    else:
        opaque = cv2.resize(alpha, (small.shape[1], small.shape[0]), interpolation=cv2.INTER_AREA)
    warped = cv2.warpPerspective(small, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    mask = cv2.warpPerspective(opaque, m, size, flags=cv2.INTER_LINEAR)
    roi = frame[y0:y1, x0:x1]
    a = (mask.astype(np.float32) / 255.0)[:, :, None]
    roi[:] = (warped * a + roi * (1 - a)).astype(np.uint8)


def degrade(image: np.ndarray, rng: random.Random, d: Degradation,
            record: dict[str, object] | None = None) -> np.ndarray:
    """Uneven light, glare, blur, noise and JPEG, in the order a camera adds them.
    ``record``, when given, receives the settings drawn (``blur_sigma``, ``noise_sigma``,
    ``jpeg_quality``, ``glare_spots``, ``light_gradient``)."""
    h, w = image.shape[:2]
    nrng = np.random.default_rng(rng.randrange(1 << 30))
    img: np.ndarray = image.astype(np.float32)
    lo, hi = d.light_gradient
    gx, gy = rng.uniform(-1, 1), rng.uniform(-1, 1)
    yy, xx = np.mgrid[0:h:8, 0:w:8].astype(np.float32)
    field_ = (xx / w - 0.5) * gx + (yy / h - 0.5) * gy
    field_ = lo + (hi - lo) * (field_ - field_.min()) / max(1e-6, float(np.ptp(field_)))
    img *= cv2.resize(field_, (w, h))[:, :, None]
    spots: list[dict[str, float]] = []
    if rng.random() < d.glare_chance:
        for _ in range(rng.randint(1, 2)):
            cx, cy = rng.uniform(0.1, 0.9) * w, rng.uniform(0.1, 0.9) * h
            sx, sy = rng.uniform(30, 120), rng.uniform(20, 90)
            amp = rng.uniform(*d.glare_strength)
            g = np.exp(-(((xx - cx) / sx) ** 2 + ((yy - cy) / sy) ** 2) / 2) * amp
            img += cv2.resize(g, (w, h))[:, :, None]
            spots.append(GlareSpot(cx, cy, sx, sy, amp).to_dict())
    sigma = rng.uniform(*d.blur_sigma)
    if sigma > 0.25:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    noise = rng.uniform(*d.noise_sigma)
    img += nrng.normal(0, noise, img.shape).astype(np.float32)
    out = np.clip(img, 0, 255).astype(np.uint8)
    q = rng.randint(*d.jpeg_quality)
    if record is not None:
        record.update({"light_gradient": [round(lo, 3), round(hi, 3)], "glare_spots": len(spots), "glare": spots,
                       "blur_sigma": round(sigma, 3), "motion_blur_px": 0, "noise_sigma": round(noise, 3),
                       "jpeg_quality": q})
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    if decoded is None:
        raise RuntimeError("OpenCV could not encode and decode a JPEG frame")
    return decoded


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
        size = card.size_mm or card_size_mm(layout, face)
        corners_mm = card_corners_mm(card, size)
        corners_img = cv2.perspectiveTransform(corners_mm.reshape(-1, 1, 2), table_to_image).reshape(-1, 2)
        draw_card(frame, face, corners_img)
        truth.append(TruthCard(card.code if card.face_up else None,
                               [(float(x), float(y)) for x, y in corners_img], card.slot, card.centre_mm,
                               _pose_conditions(layout, card, size)))
    conditions: dict[str, object] = {"mode": "classic", "frame_size": list(frame_size), "tilt_deg": None}
    image = degrade(frame, rng, d, conditions)
    return Scene(image, truth, table_to_image, {"deck": deck.name, "layout": layout.name, "conditions": conditions})


def _pose_conditions(layout: Layout, card: PlacedCard, size: tuple[float, float]) -> dict[str, object]:
    """How a card lies: size, turn (rotation off upright or off a half turn), offset from its slot."""
    angle = (card.angle_deg + 180.0) % 360.0 - 180.0
    half_turn = abs(angle) > 90.0
    rotation = angle - math.copysign(180.0, angle) if half_turn else angle
    offset = None
    if card.slot is not None:
        sx, sy = layout.slot(card.slot).centre
        offset = round(float(np.hypot(card.centre_mm[0] - sx, card.centre_mm[1] - sy)), 2)
    return {"kind": "normal" if card.face_up else "face_down", "face_up": card.face_up,
            "card_width_mm": round(size[0], 2), "card_height_mm": round(size[1], 2),
            "rotation_deg": round(rotation, 2), "half_turn": half_turn, "off_slot": card.slot is None,
            "offset_mm": offset}


def random_deal(layout: Layout, rng: random.Random, n_cards: int, off_layout: int = 0) -> list[tuple[str | None, str]]:
    """``n_cards`` distinct random cards in random distinct slots, plus ``off_layout`` dropped cards."""
    from firmware_interfaces.camera.deck_art import CODES

    codes = rng.sample(CODES, n_cards + off_layout)
    slots = rng.sample([s.name for s in layout.slots], n_cards)
    deal: list[tuple[str | None, str]] = list(zip(slots, codes[:n_cards], strict=False))
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
                      degradation: Degradation | None = None,
                      randomise: DomainRandomisation | None = None,
                      frame_size: tuple[int, int] = FRAME_SIZE, first: int = 0) -> list[GeneratedFrame]:
    """A reproducible test set: ``frames`` frames cycling through ``layouts``, each from its own
    camera pose, with ``cards`` cards in slots; every ``off_layout_every``-th frame adds a card
    off every slot, every ``empty_every``-th frame has no card at all (phantom check).
    ``first`` skips that many frames: each frame is made from its seed and number alone, so
    frame ``first + k`` is the one a set started at 0 would hold there.

    Classic frames (``degradation``, :class:`Degradation` by default) are ``frame_size``;
    ``randomise`` makes randomised ones instead (:func:`render_randomised_scene`; their size
    is drawn from ``randomise.frame_sizes``). Either way the empty frame that calibrates the
    plane is mild, on the same felt, from the same pose."""
    out = []
    for i in range(first, first + frames):
        rng = random.Random(seed * 100_003 + i)
        layout = layouts[i % len(layouts)]
        n = 0 if empty_every and i % empty_every == empty_every - 1 else min(cards, len(layout.slots))
        off = 1 if off_layout_every and n and i % off_layout_every == 1 else 0
        if randomise is not None:
            out.append(_randomised_frame(deck, layout, rng, randomise, n, off))
            continue
        d = degradation or Degradation()
        table_to_image = camera_homography(layout, rng, d.perspective, frame_size)
        felt_record: dict[str, object] = {}
        felt = render_felt(layout, rng, record=felt_record)
        empty = render_scene(layout, deck, [], rng, Degradation.mild(), table_to_image=table_to_image, felt=felt,
                             frame_size=frame_size)
        size = card_size_mm(layout, deck.face("AS"))
        placed = place_cards(layout, random_deal(layout, rng, n, off), rng, d, size)
        scene = render_scene(layout, deck, placed, rng, d, table_to_image=table_to_image, felt=felt,
                             frame_size=frame_size)
        scene.meta["conditions"].update(felt_record)
        out.append(GeneratedFrame(layout, empty.image, scene))
    return out


# -- randomised scenes (domain randomisation) ------------------------------------------------

#: Pixels per mm of a randomised table's printed surface (fine enough for 1080p frames).
SURFACE_PPM = 2.0
#: Pixels per mm of the canvas a hand and a hand's shadow are drawn on.
HAND_PPM = 1.0
#: A card this much under a hand is one no reader may name (truth code None).
OCCLUDED_AT = 0.3
#: Glare adding this many grey levels somewhere on a card counts as glare on that card.
GLARE_ON_CARD_LEVEL = 30.0
#: Glare adding this many grey levels burns a card's ink to white (ink is 20-60 grey levels
#: dark; most exposures leave it clipped), and a card burnt over more than this share of it
#: is one no reader may name (``DomainRandomisation.burnt_glare_chance``).
BURNT_LEVEL = 200.0
BURNT_UNREADABLE = 0.5
#: Chip diameter, mm.
CHIP_MM = 39.0
#: A frame with cards cut by its edge ends this far beyond that table edge (mm): the corner
#: markers there need the room to be found.
CUT_EDGE_MARGIN_MM = 12.0
_MARKER_CLEAR_MM = 6.0  # a marker's printed quiet zone


@dataclass(frozen=True)
class DomainRandomisation:
    """Ranges a randomised ("hard") scene draws its settings from, and how many cards of
    each special kind to add. A range ``(lo, hi)`` with ``lo == hi`` forces that value; a
    chance of 1.0 forces that thing. Every value drawn is recorded in the scene's
    ``meta["conditions"]`` (frame) and each ``TruthCard.conditions`` (card).

    The special cards (``face_down_cards``, ``occluded_cards``: half under a dealer's hand,
    ``cut_cards``: cut by the frame edge) have truth code None; they are off by default so
    that they are measured apart (:meth:`with_special_cards`)."""

    # the printed table
    felt_colours: tuple[str, ...] = tuple(FELT_COLOURS)
    felt_texture: tuple[float, float] = (3.0, 12.0)
    slot_pad_mm: tuple[float, float] = (1.0, 5.0)
    line_mm: tuple[float, float] = (1.0, 2.5)
    second_line_chance: float = 0.35
    words_chance: float = 0.75
    rail_chance: float = 0.75
    rail_mm: tuple[float, float] = (35.0, 70.0)
    # things on it
    chips: tuple[int, int] = (0, 5)
    hand_shadow_chance: float = 0.3
    # the cards
    card_width_mm: tuple[float, float] = (56.0, 64.0)
    card_height_mm: float = 88.0
    deck_aspect_chance: float = 0.25  # else card_height_mm
    max_rotation_deg: float = 12.0
    half_turn_chance: float = 0.5
    offset_mm: float = 8.0
    # the camera's pose
    tilt_deg: tuple[float, float] = (0.0, 25.0)
    roll_deg: float = 2.0
    yaw_deg: float = 3.0
    camera_distance_mm: tuple[float, float] = (1100.0, 1900.0)
    # how far the camera moved between the empty frame that calibrated the table and this
    # one (a mount's vibration, a bump): sigma of the shift (px of the frame) and turn (deg)
    pose_jitter_px: float = 2.0
    pose_jitter_deg: float = 0.1
    frame_sizes: tuple[tuple[int, int], ...] = ((1280, 720), (1920, 1080))
    # light and the camera's faults
    cast_gain: tuple[float, float] = (0.85, 1.15)
    exposure_stops: tuple[float, float] = (-1.0, 1.0)
    light_gradient: tuple[float, float] = (0.6, 1.1)
    vignette: tuple[float, float] = (0.0, 0.45)
    glare_spots: tuple[int, int] = (0, 3)
    glare_on_card_chance: float = 0.35
    glare_strength: tuple[float, float] = (40.0, 140.0)
    # a burnt-out highlight (a glossy card under a studio's key light): per frame with cards,
    # the chance of a glare spot on one card strong enough to clip its paper and ink to white
    # over part of it, its strength (grey levels added at its peak) and spread (sigma, px of a
    # 720p frame). Drawn from a stream of its own: at 0 (the default) frames are as without it.
    # A card whose ink it burns (BURNT_LEVEL) over more than BURNT_UNREADABLE of it is one no
    # reader may name (kind "burnt", truth code None).
    burnt_glare_chance: float = 0.0
    burnt_glare_strength: tuple[float, float] = (180.0, 450.0)
    burnt_glare_sigma: tuple[float, float] = (10.0, 35.0)
    blur_sigma: tuple[float, float] = (0.3, 1.8)
    motion_blur_chance: float = 0.25
    motion_blur_px: tuple[int, int] = (3, 9)
    noise_sigma: tuple[float, float] = (1.0, 6.0)
    jpeg_quality: tuple[int, int] = (55, 95)
    # special cards (truth code None), per frame with cards
    face_down_cards: int = 0
    occluded_cards: int = 0
    cut_cards: int = 0
    occluded_fraction: tuple[float, float] = (0.4, 0.7)
    cut_fraction: tuple[float, float] = (0.3, 0.6)

    @classmethod
    def with_special_cards(cls, face_down: int = 1, occluded: int = 1, cut: int = 1) -> DomainRandomisation:
        """The default ranges plus, in every frame with cards, ``face_down`` cards turned face
        down, ``occluded`` cards half under a hand and ``cut`` cards cut by the frame edge."""
        return cls(face_down_cards=face_down, occluded_cards=occluded, cut_cards=cut)


@dataclass
class TableView:
    """One table as one camera sees it: the printed surface (felt, slot print, words, rail,
    markers; a picture of the table plane at ``ppm`` px/mm whose pixel (0, 0) is table point
    ``origin_mm``) and the camera pose. The empty frame that calibrates the plane and the
    frames with cards share it; ``conditions`` records what was drawn."""

    layout: Layout
    frame_size: tuple[int, int]
    table_to_image: np.ndarray
    surface: np.ndarray
    ppm: float
    origin_mm: tuple[float, float]
    background: tuple[int, int, int]
    conditions: dict[str, object]

    @property
    def surface_to_image(self) -> np.ndarray:
        """Homography surface px -> image px."""
        homography: np.ndarray = self.table_to_image @ canvas_to_table(self.ppm, self.origin_mm)
        return homography

    def compose(self) -> np.ndarray:
        """The bare table in the camera's picture, before light and camera faults."""
        w, h = self.frame_size
        frame = np.empty((h, w, 3), np.uint8)
        frame[:] = self.background
        cv2.warpPerspective(self.surface, self.surface_to_image, (w, h), dst=frame, flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_TRANSPARENT)
        return frame


def _jitter(colour: tuple[int, int, int], rng: random.Random, amount: float) -> tuple[int, int, int]:
    b, g, r = (int(np.clip(c + rng.uniform(-amount, amount), 0, 255)) for c in colour)
    return (b, g, r)


def _boxes_meet(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _marker_boxes(layout: Layout, grow_mm: float = 0.0) -> list[tuple[float, float, float, float]]:
    half = layout.markers.size_mm / 2 + _MARKER_CLEAR_MM + grow_mm
    return [(cx - half, cy - half, cx + half, cy + half) for cx, cy in layout.markers.centres_mm]


def _print_words(felt: np.ndarray, layout: Layout, ppm: float, rng: random.Random, style: SlotPrint,
                 slot_boxes: list[tuple[float, float, float, float]]) -> list[dict[str, object]]:
    """Each position's name (BANKER, PLAYER 2, ...) printed just above or below its slots."""
    groups: dict[str, list[tuple[float, float, float, float]]] = {}
    for s, box in zip(layout.slots, slot_boxes, strict=False):
        groups.setdefault(s.position, []).append(box)
    colour = PRINT_COLOURS[style.colour]
    keep_out = _marker_boxes(layout, 4.0)
    printed: list[dict[str, object]] = []
    taken: list[tuple[float, float, float, float]] = []
    for position, boxes in groups.items():
        x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
        x1, y1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
        text = position_label(position)
        height, stroke = rng.uniform(10.0, 22.0), rng.uniform(1.2, 2.5)
        font, gap = rng.randrange(4), rng.uniform(0.5, 8.0)
        sides = ["above", "below"] if rng.random() < 0.5 else ["below", "above"]
        for side in sides:
            cy = y0 - gap - height / 2 if side == "above" else y1 + gap + height / 2
            centre = ((x0 + x1) / 2, cy)
            box = word_box(text, centre, height, font)
            inside = box[0] > 3 and box[1] > 3 and box[2] < layout.width_mm - 3 and box[3] < layout.height_mm - 3
            if inside and not any(_boxes_meet(box, k) for k in keep_out + taken):
                draw_word(felt, ppm, (0.0, 0.0), text, centre, height, stroke, font, colour)
                taken.append(box)
                printed.append({"text": text, "side": side, "height_mm": round(height, 1), "gap_mm": round(gap, 1)})
                break
    return printed


def random_table_view(layout: Layout, rng: random.Random, randomise: DomainRandomisation,
                      cut_edge: str | None = None) -> TableView:
    """Draw a table's look and a camera pose from ``randomise``: felt colour and texture, slot
    print, words, rail, frame size, tilt/roll/yaw and distance. ``cut_edge`` ("top" or
    "bottom") frames that table edge just outside the picture, with no roll or yaw, for
    cards cut by the frame edge."""
    r = randomise
    nrng = np.random.default_rng(rng.randrange(1 << 30))
    frame_size = tuple(rng.choice(r.frame_sizes))
    fw, fh = int(frame_size[0]), int(frame_size[1])
    tilt = rng.uniform(*r.tilt_deg)
    roll = 0.0 if cut_edge else rng.uniform(-r.roll_deg, r.roll_deg)
    yaw = 0.0 if cut_edge else rng.uniform(-r.yaw_deg, r.yaw_deg)
    distance = rng.uniform(*r.camera_distance_mm)
    ml, mt, mr, mb = (rng.uniform(0.02, 0.06) for _ in range(4))
    look = (rng.uniform(-15.0, 15.0), rng.uniform(-15.0, 15.0))
    camera = pinhole_camera((layout.width_mm, layout.height_mm), (fw, fh), tilt, roll, yaw, distance,
                            (ml, mt, mr, mb), look, cut_edge, CUT_EDGE_MARGIN_MM)
    colour = rng.choice(r.felt_colours)
    base = _jitter(FELT_COLOURS[colour], rng, 10.0)
    texture = rng.uniform(*r.felt_texture)
    ppm = SURFACE_PPM
    felt = felt_texture((int(layout.width_mm * ppm), int(layout.height_mm * ppm)), base, texture, nrng)
    style = SlotPrint(colour=rng.choice(sorted(PRINT_COLOURS)), pad_mm=rng.uniform(*r.slot_pad_mm),
                      line_mm=rng.uniform(*r.line_mm),
                      second_gap_mm=rng.uniform(1.5, 5.0) if rng.random() < r.second_line_chance else None,
                      second_line_mm=rng.uniform(*r.line_mm))
    boxes = draw_slot_print(felt, layout, ppm, (0.0, 0.0), style)
    words = _print_words(felt, layout, ppm, rng, style, boxes) if rng.random() < r.words_chance else []
    draw_markers(felt, layout, ppm)
    background = _jitter((28, 26, 24), rng, 8.0)
    rail: dict[str, object] | None = None
    surface, origin = felt, (0.0, 0.0)
    if rng.random() < r.rail_chance:
        rail_px = round(rng.uniform(*r.rail_mm) * ppm)
        rail_colour = rng.choice(sorted(RAIL_COLOURS))
        surface = add_rail(felt, ppm, rail_px / ppm, rail_colour, background, nrng)
        origin = (-rail_px / ppm, -rail_px / ppm)
        rail = {"width_mm": rail_px / ppm, "colour": rail_colour}
    conditions: dict[str, object] = {
        "mode": "randomised",
        "frame_size": [fw, fh],
        "tilt_deg": round(tilt, 3), "roll_deg": round(roll, 3), "yaw_deg": round(yaw, 3),
        "camera_distance_mm": round(distance, 1), "focal_px": round(camera.focal_px, 2),
        "principal_point": [round(camera.principal_point[0], 2), round(camera.principal_point[1], 2)],
        "margins": [round(v, 4) for v in (ml, mt, mr, mb)], "cut_edge": cut_edge,
        "cut_edge_margin_mm": CUT_EDGE_MARGIN_MM if cut_edge else None,
        "felt_colour": colour, "felt_bgr": list(base), "felt_texture": round(texture, 2),
        "slot_print": style.to_dict(), "words": words, "rail": rail,
    }
    return TableView(layout, (fw, fh), camera.table_to_image, surface, ppm, origin, background, conditions)


def render_empty_table(view: TableView, rng: random.Random) -> Scene:
    """The table with nothing on it, mildly degraded (:meth:`Degradation.mild`): what the
    table plane is calibrated from (its corner markers)."""
    record: dict[str, object] = {}
    image = degrade(view.compose(), rng, Degradation.mild(), record)
    conditions = dict(view.conditions, degradation="mild", **record)
    return Scene(image, [], view.table_to_image, {"layout": view.layout.name, "conditions": conditions})


def _polygon_mm(card: PlacedCard, grow_mm: float = 0.0) -> np.ndarray:
    assert card.size_mm is not None
    w, h = card.size_mm
    return card_corners_mm(card, (w + 2 * grow_mm, h + 2 * grow_mm)).astype(np.float32)


def _overlaps(a: PlacedCard, b: PlacedCard, gap_mm: float = 1.5) -> bool:
    assert a.size_mm is not None and b.size_mm is not None
    reach = float(np.hypot(*a.size_mm) + np.hypot(*b.size_mm)) / 2 + 2 * gap_mm
    if np.hypot(a.centre_mm[0] - b.centre_mm[0], a.centre_mm[1] - b.centre_mm[1]) > reach:
        return False
    area, _ = cv2.intersectConvexConvex(_polygon_mm(a, gap_mm / 2), _polygon_mm(b, gap_mm / 2))
    return bool(area > 0.0)


def _random_poses(layout: Layout, deal: list[tuple[str | None, str]], rng: random.Random,
                  r: DomainRandomisation, size: tuple[float, float]) -> list[PlacedCard]:
    """Poses for the deal: slot centre plus an offset up to ``r.offset_mm``, a turn up to
    ``r.max_rotation_deg``, sometimes a half turn; no card overlapping another."""
    placed: list[PlacedCard] = []
    for slot, code in deal:
        card = None
        for attempt in range(30):
            ease = 1.0 if attempt < 10 else 0.5 if attempt < 20 else 0.0
            angle = rng.uniform(-r.max_rotation_deg, r.max_rotation_deg) * ease
            angle += 180.0 if rng.random() < r.half_turn_chance else 0.0
            if slot is None:
                centre = free_spot(layout, rng, [p.centre_mm for p in placed], size)
            else:
                sx, sy = layout.slot(slot).centre
                dist, a = r.offset_mm * math.sqrt(rng.random()) * ease, rng.uniform(0.0, 2 * math.pi)
                centre = (sx + dist * math.cos(a), sy + dist * math.sin(a))
            card = PlacedCard(slot, code, centre, angle, True, size)
            if not any(_overlaps(card, p) for p in placed):
                break
        assert card is not None
        placed.append(card)
    return placed


def _cut_card(view: TableView, code: str, rng: random.Random, r: DomainRandomisation,
              size: tuple[float, float], others: list[PlacedCard]) -> tuple[PlacedCard, float]:
    """A card lying over the table edge that the camera frames flush, placed so that about
    a fraction drawn from ``r.cut_fraction`` of it is outside the picture; returns the card
    and the fraction that really is."""
    layout = view.layout
    edge = view.conditions["cut_edge"]
    w, h = view.frame_size
    frame_rect = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    target = rng.uniform(*r.cut_fraction)
    angle = rng.uniform(-r.max_rotation_deg, r.max_rotation_deg) + (90.0 if rng.random() < 0.3 else 0.0)
    angle += 180.0 if rng.random() < r.half_turn_chance else 0.0
    reach = float(np.hypot(*size)) / 2
    clear = layout.markers.size_mm + _MARKER_CLEAR_MM + 10.0 + reach
    x = rng.uniform(clear, layout.width_mm - clear)
    for _ in range(20):
        if not any(abs(x - o.centre_mm[0]) < 2 * reach + 3 and o.slot is None for o in others):
            break
        x = rng.uniform(clear, layout.width_mm - clear)

    def out_of_frame(y: float) -> float:
        corners = project(view.table_to_image, card_corners_mm(PlacedCard(None, code, (x, y), angle), size))
        area = abs(cv2.contourArea(corners.astype(np.float32)))
        inside, _ = cv2.intersectConvexConvex(corners.astype(np.float32), frame_rect)
        return 1.0 - float(inside) / area if area else 1.0

    table_edge = 0.0 if edge == "top" else layout.height_mm
    outward = -1.0 if edge == "top" else 1.0
    lo, hi = table_edge - outward * (reach + 10), table_edge + outward * (reach + 10)  # all in .. all out
    for _ in range(30):
        mid = (lo + hi) / 2
        if out_of_frame(mid) < target:
            lo = mid
        else:
            hi = mid
    y = (lo + hi) / 2
    return PlacedCard(None, code, (x, y), angle, True, size), out_of_frame(y)


def _chip_spots(layout: Layout, rng: random.Random, n: int, cards: list[PlacedCard]) -> list[tuple[float, float]]:
    """Up to ``n`` chip centres (mm) on the table, beside the cards, on no card or marker."""
    radius = CHIP_MM / 2
    polys = [_polygon_mm(c) for c in cards]
    keep_out = _marker_boxes(layout, radius + 3)
    spots: list[tuple[float, float]] = []
    for _ in range(n):
        for _attempt in range(60):
            if cards and rng.random() < 0.6:
                c = rng.choice(cards)
                assert c.size_mm is not None
                d = float(np.hypot(*c.size_mm)) / 2 * rng.uniform(0.75, 1.0) + radius + rng.uniform(3, 30)
                a = rng.uniform(0.0, 2 * math.pi)
                x, y = c.centre_mm[0] + d * math.cos(a), c.centre_mm[1] + d * math.sin(a)
            else:
                x = rng.uniform(radius + 5, layout.width_mm - radius - 5)
                y = rng.uniform(radius + 5, layout.height_mm - radius - 5)
            if not (radius + 3 < x < layout.width_mm - radius - 3 and radius + 3 < y < layout.height_mm - radius - 3):
                continue
            if any(k[0] < x < k[2] and k[1] < y < k[3] for k in keep_out):
                continue
            if any(cv2.pointPolygonTest(p, (x, y), True) > -(radius + 2) for p in polys):
                continue
            if any(np.hypot(x - sx, y - sy) < 2 * radius + 1 for sx, sy in spots):
                continue
            spots.append((x, y))
            break
    return spots


def _point_on(corners: np.ndarray, rng: random.Random) -> tuple[float, float]:
    u, v = rng.uniform(0.15, 0.85), rng.uniform(0.15, 0.85)
    tl, tr, br, bl = corners
    p = (1 - v) * ((1 - u) * tl + u * tr) + v * ((1 - u) * bl + u * br)
    return (float(p[0]), float(p[1]))


def _values_over(field_: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """The values of the image-sized ``field_`` over the card with image ``corners`` (none when
    the card is outside the image)."""
    h, w = field_.shape
    x0, y0 = np.floor(corners.min(axis=0)).astype(int)
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return np.zeros(0, field_.dtype)
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(mask, np.round(corners - (x0, y0)).astype(np.int32), 1)
    return np.asarray(field_[y0:y1, x0:x1][mask > 0])


def _max_over(field_: np.ndarray, corners: np.ndarray) -> float:
    """The largest value of the image-sized ``field_`` over the card with image ``corners``."""
    roi = _values_over(field_, corners)
    return float(roi.max()) if roi.size else 0.0


def _share_over(field_: np.ndarray, corners: np.ndarray, level: float) -> float:
    """The share of the card with image ``corners`` where the image-sized ``field_`` is at
    least ``level``."""
    roi = _values_over(field_, corners)
    return float(np.count_nonzero(roi >= level)) / roi.size if roi.size else 0.0


def _burnt_spots(placed: list[PlacedCard], kinds: list[str], corners_img: list[np.ndarray],
                 r: DomainRandomisation, scale: float, rng: random.Random) -> list[GlareSpot]:
    """The burnt-out highlight of a frame, if it has one (see ``DomainRandomisation.burnt_glare_chance``),
    on one of its normal cards; from a stream of its own, so every other setting of the frame
    is as without it."""
    normal = [k for k, kind in enumerate(kinds) if kind == "normal"]
    if r.burnt_glare_chance <= 0 or not normal:
        return []
    own = random.Random("burnt glare " + str(rng.getstate()[1][:16]))
    if own.random() >= r.burnt_glare_chance:
        return []
    k = own.choice(normal)
    x, y = _point_on(corners_img[k], own)
    return [GlareSpot(x, y, own.uniform(*r.burnt_glare_sigma) * scale, own.uniform(*r.burnt_glare_sigma) * scale,
                      own.uniform(*r.burnt_glare_strength))]


def _place_hand(card: PlacedCard, target: float, rng: random.Random, layout: Layout) -> HandPose:
    """A hand reaching in from the nearer long edge of the table, moved along its arm until it
    covers ``target`` of ``card``."""
    toward = 1.0 if card.centre_mm[1] > layout.height_mm / 2 else -1.0
    a = math.radians(rng.uniform(-35.0, 35.0))
    direction = (math.sin(a), toward * math.cos(a))
    hand = HandPose(card.centre_mm, direction, rng.uniform(85, 100), rng.uniform(72, 85), rng.uniform(60, 75),
                    rng.uniform(60, 75))
    poly = _polygon_mm(card)
    x0, y0 = poly.min(axis=0) - 2
    x1, y1 = poly.max(axis=0) + 2
    shape = (int((y1 - y0) * HAND_PPM) + 1, int((x1 - x0) * HAND_PPM) + 1)
    local = (poly - (x0, y0)) * HAND_PPM
    lo, hi = -100.0, 250.0  # palm on the card's far side (all covered) .. well away (none)
    for _ in range(16):
        mid = (lo + hi) / 2
        if coverage(hand_mask(shape, HAND_PPM, (float(x0), float(y0)), hand.moved(mid)), local) > target:
            lo = mid
        else:
            hi = mid
    return hand.moved((lo + hi) / 2)


#: The canvas hands and their shadows are drawn on reaches this far (mm) beyond the table.
_HAND_MARGIN_MM = 200.0


def _hand_canvas_of(layout: Layout) -> tuple[tuple[int, int], tuple[float, float]]:
    """The shape (h, w) at :data:`HAND_PPM` of the canvas over ``layout`` and around it that
    hands and shadows are drawn on, and its origin in table mm."""
    m = _HAND_MARGIN_MM
    return (int((layout.height_mm + 2 * m) * HAND_PPM), int((layout.width_mm + 2 * m) * HAND_PPM)), (-m, -m)


def _hand_canvas(layout: Layout, palm_mm: tuple[float, float]) -> tuple[np.ndarray, tuple[float, float]]:
    """The mask of a hand over ``layout`` (palm at ``palm_mm``, the forearm reaching in from
    the near edge) on that canvas, and the canvas's origin in table mm."""
    shape, origin = _hand_canvas_of(layout)
    return hand_mask(shape, HAND_PPM, origin, HandPose(palm_mm, (0.0, 1.0))), origin


def hand_over(image: np.ndarray, layout: Layout, table_to_image: np.ndarray, palm_mm: tuple[float, float],
              skin: str = "medium", seed: int = 0) -> np.ndarray:
    """A copy of ``image`` (a frame of ``layout`` seen through ``table_to_image``) with a
    dealer's hand flat over the table, its palm at ``palm_mm``, its forearm reaching in from
    the table's near (bottom) edge, drawn as the randomised scenes draw theirs (its shadow
    too; the frame's sensor noise and JPEG are not added): what the camera sees while the
    dealer works. :func:`shares_under_hand` says how much of each card it covers."""
    mask, origin = _hand_canvas(layout, palm_mm)
    out = image.copy()
    scale = image.shape[1] / 1280.0
    paint_hand(out, mask, table_to_image @ canvas_to_table(HAND_PPM, origin), skin, (5 * scale, 5 * scale),
               np.random.default_rng(seed))
    return out


def shares_under_hand(layout: Layout, table_to_image: np.ndarray, palm_mm: tuple[float, float],
                      cards_px: list[np.ndarray]) -> list[float]:
    """How much of each card (image corners) in ``cards_px`` the hand :func:`hand_over` draws
    with its palm at ``palm_mm`` covers (0..1; at :data:`OCCLUDED_AT` or more no reader may
    name the card); the hand is drawn once for them all."""
    mask, origin = _hand_canvas(layout, palm_mm)
    to_table = np.linalg.inv(table_to_image)
    shares = []
    for corners in cards_px:
        mm = cv2.perspectiveTransform(np.asarray(corners, np.float64).reshape(-1, 1, 2), to_table).reshape(-1, 2)
        shares.append(coverage(mask, (mm - np.array(origin)) * HAND_PPM))
    return shares


def render_randomised_scene(view: TableView, deck: DeckArt, deal: list[tuple[str | None, str]],
                            rng: random.Random, randomise: DomainRandomisation) -> Scene:
    """Draw ``deal`` (``(slot or None, code)`` pairs) on the table ``view`` with settings drawn
    from ``randomise``: card size, poses, special cards, chips, a hand's shadow, glare, light
    and camera faults; every setting recorded in the ground truth."""
    r = randomise
    layout = view.layout
    nrng = np.random.default_rng(rng.randrange(1 << 30))
    w, h = view.frame_size
    scale = w / 1280.0
    # the deck on this table: one physical size for all its cards
    card_w = rng.uniform(*r.card_width_mm)
    deck_aspect = rng.random() < r.deck_aspect_chance
    face0 = deck.face("AS")
    size = (card_w, card_w * face0.shape[0] / face0.shape[1] if deck_aspect else r.card_height_mm)
    placed = _random_poses(layout, deal, rng, r, size)
    kinds = ["normal"] * len(placed)
    in_slots = [k for k, p in enumerate(placed) if p.slot is not None]
    for k in rng.sample(in_slots, min(r.face_down_cards, len(in_slots))):
        kinds[k] = "face_down"
        p = placed[k]
        placed[k] = PlacedCard(p.slot, p.code, p.centre_mm, p.angle_deg, False, p.size_mm)
    still_up = [k for k in in_slots if kinds[k] == "normal"]
    for k in rng.sample(still_up, min(r.occluded_cards, len(still_up))):
        kinds[k] = "occluded"
    cut_fractions: dict[int, float] = {}
    if view.conditions.get("cut_edge") and r.cut_cards and placed:
        spare = [c for c in CODES if c not in {p.code for p in placed}]
        for code in rng.sample(spare, r.cut_cards):
            card, fraction = _cut_card(view, code, rng, r, size, placed)
            cut_fractions[len(placed)] = fraction
            placed.append(card)
            kinds.append("cut")
    h_img = view.table_to_image
    corners_img = [project(h_img, card_corners_mm(p, size)) for p in placed]

    frame = view.compose()
    # chips beside the cards
    chip_log = []
    for cx, cy in _chip_spots(layout, rng, rng.randint(*r.chips), placed):
        colour, stripes = rng.choice(sorted(CHIP_COLOURS)), rng.choice((6, 8))
        diameter = CHIP_MM + rng.uniform(-1.0, 1.0)
        face, alpha = chip_face(colour, stripes)
        spin = PlacedCard(None, "AS", (cx, cy), rng.uniform(0.0, 360.0))  # only its square's pose is used
        draw_card(frame, face, project(h_img, card_corners_mm(spin, (diameter, diameter))), alpha)
        chip_log.append({"colour": colour, "centre_mm": [round(cx, 1), round(cy, 1)]})
    for p, corners in zip(placed, corners_img, strict=False):
        draw_card(frame, deck.face(p.code) if p.face_up else deck.back(), corners)

    # a canvas over the table and around it for hands and shadows
    canvas_shape, origin = _hand_canvas_of(layout)
    canvas_to_image = h_img @ canvas_to_table(HAND_PPM, origin)
    canvas_polys = [(_polygon_mm(p) - origin) * HAND_PPM for p in placed]

    light = light_field((w, h), (1.0, 1.0), (1.0, 0.0), 0.0)
    hand_shadow = None
    shadow_on = [0.0] * len(placed)
    if placed and rng.random() < r.hand_shadow_chance:
        near = rng.choice(placed)
        a, d = rng.uniform(0.0, 2 * math.pi), rng.uniform(30.0, 70.0)
        centre = (near.centre_mm[0] + d * math.cos(a), near.centre_mm[1] + d * math.sin(a))
        axes = (rng.uniform(50.0, 100.0), rng.uniform(28.0, 50.0))
        angle, softness, darkness = rng.uniform(0.0, 180.0), rng.uniform(8.0, 18.0), rng.uniform(0.25, 0.55)
        shade = shadow_canvas(canvas_shape, HAND_PPM, origin, centre, axes, angle, softness)
        shade_img = cv2.warpPerspective(shade, canvas_to_image, (w, h), flags=cv2.INTER_LINEAR,
                                        borderMode=cv2.BORDER_CONSTANT)
        light = light * (1.0 - darkness * shade_img)
        shadow_on = [round(darkness * _max_over(shade_img, c), 3) for c in corners_img]
        hand_shadow = {"centre_mm": [round(centre[0], 1), round(centre[1], 1)],
                       "axes_mm": [round(axes[0], 1), round(axes[1], 1)], "darkness": round(darkness, 3),
                       "softness_mm": round(softness, 1)}
    # dealers' hands over the occluded cards
    hands = []
    under_hand = [0.0] * len(placed)
    for k in [k for k, kind in enumerate(kinds) if kind == "occluded"]:
        target = rng.uniform(*r.occluded_fraction)
        pose = _place_hand(placed[k], target, rng, layout)
        mask = hand_mask(canvas_shape, HAND_PPM, origin, pose)
        skin = rng.choice(sorted(SKIN_TONES))
        paint_hand(frame, mask, canvas_to_image, skin, (rng.uniform(3, 8) * scale, rng.uniform(3, 8) * scale), nrng)
        under_hand = [max(u, coverage(mask, poly)) for u, poly in zip(under_hand, canvas_polys, strict=False)]
        hands.append({"card": placed[k].code, "target_fraction": round(target, 3), "skin": skin,
                      "palm_mm": [round(pose.palm_mm[0], 1), round(pose.palm_mm[1], 1)]})
    for k, u in enumerate(under_hand):
        if kinds[k] == "normal" and u >= OCCLUDED_AT:
            kinds[k] = "occluded"  # a neighbour the hand covered as well

    # light: gradient and vignette, glare (some on a card)
    k_grad = rng.random()
    lo_g, hi_g = 1.0 - k_grad * (1.0 - r.light_gradient[0]), rng.uniform(1.0, max(1.0, r.light_gradient[1]))
    direction = (rng.uniform(-1, 1), rng.uniform(-1, 1))
    vignette = rng.uniform(*r.vignette)
    light = light * light_field((w, h), (lo_g, hi_g), direction, vignette)
    spots: list[GlareSpot] = []
    aimed: list[str | None] = []
    for _ in range(rng.randint(*r.glare_spots)):
        strength = rng.uniform(*r.glare_strength)
        if placed and rng.random() < r.glare_on_card_chance:
            k = rng.randrange(len(placed))
            x, y = _point_on(corners_img[k], rng)
            spots.append(GlareSpot(x, y, rng.uniform(12, 45) * scale, rng.uniform(10, 40) * scale, strength))
            aimed.append(placed[k].code)
        else:
            x, y = rng.uniform(0.05, 0.95) * w, rng.uniform(0.05, 0.95) * h
            spots.append(GlareSpot(x, y, rng.uniform(30, 110) * scale, rng.uniform(20, 80) * scale, strength))
            aimed.append(None)
    burnt = _burnt_spots(placed, kinds, corners_img, r, scale, rng)
    spots += burnt
    aimed += [None] * len(burnt)
    glare = glare_field((w, h), spots)
    glare_peaks = [_max_over(glare, c) for c in corners_img]
    burnt_share = [_share_over(glare, c, BURNT_LEVEL) for c in corners_img] if r.burnt_glare_chance > 0 else []
    for k, share in enumerate(burnt_share):
        if kinds[k] == "normal" and share > BURNT_UNREADABLE:
            kinds[k] = "burnt"
    faults = CameraFaults(
        exposure_stops=rng.uniform(*r.exposure_stops),
        gains=(rng.uniform(*r.cast_gain), rng.uniform(*r.cast_gain), rng.uniform(*r.cast_gain)),
        blur_sigma=rng.uniform(*r.blur_sigma),
        motion_blur_px=rng.randint(*r.motion_blur_px) if rng.random() < r.motion_blur_chance else 0,
        motion_blur_deg=rng.uniform(0.0, 180.0),
        noise_sigma=rng.uniform(*r.noise_sigma),
        jpeg_quality=rng.randint(*r.jpeg_quality),
    )
    # (a card the frame's edge cuts is not measured: the light is known only in the frame)
    ink_shows = [ink_left(deck.face(p.code), c, light, glare, faults) if p.face_up and kind != "cut" else None
                 for p, c, kind in zip(placed, corners_img, kinds, strict=False)]
    image = apply_camera(frame, light, glare, faults, nrng)

    truth: list[TruthCard] = []
    for k, (p, corners) in enumerate(zip(placed, corners_img, strict=False)):
        cond = _pose_conditions(layout, p, size)
        cond.update({
            "kind": kinds[k],
            "glare_on_card": glare_peaks[k] >= GLARE_ON_CARD_LEVEL, "glare_peak": round(glare_peaks[k], 1),
            "occluded": kinds[k] == "occluded", "occluded_fraction": round(under_hand[k], 3),
            "cut": kinds[k] == "cut", "cut_fraction": round(cut_fractions.get(k, 0.0), 3),
            "shadow": shadow_on[k],
            "ink_left": _rounded(ink_shows[k]),
        })
        if burnt_share:
            cond.update({"glare_burnt": burnt_share[k] > 0.0, "glare_burnt_share": round(burnt_share[k], 3)})
        nameable: str | None = p.code if kinds[k] == "normal" else None
        truth.append(TruthCard(nameable, [(float(x), float(y)) for x, y in corners], p.slot, p.centre_mm, cond))
    conditions = dict(view.conditions)
    conditions.update({
        "card_width_mm": round(size[0], 2), "card_height_mm": round(size[1], 2),
        "card_aspect": "deck" if deck_aspect else "fixed height",
        "chips": len(chip_log), "chip_list": chip_log,
        "hand_shadow": hand_shadow, "hands": hands,
        "light_gradient": [round(lo_g, 3), round(hi_g, 3)], "vignette": round(vignette, 3),
        "glare_spots": len(spots), "glare": [dict(s.to_dict(), aimed_at=a) for s, a in zip(spots, aimed, strict=False)],
        "glare_on_card": sum(1 for g in glare_peaks if g >= GLARE_ON_CARD_LEVEL),
        "exposure_stops": round(faults.exposure_stops, 3), "cast_gains": [round(g, 3) for g in faults.gains],
        "blur_sigma": round(faults.blur_sigma, 3), "motion_blur_px": faults.motion_blur_px,
        "motion_blur_deg": round(faults.motion_blur_deg, 1) if faults.motion_blur_px else None,
        "noise_sigma": round(faults.noise_sigma, 3), "jpeg_quality": faults.jpeg_quality,
        "special": {kind: kinds.count(kind) for kind in ("face_down", "occluded", "cut")},
    })
    if r.burnt_glare_chance > 0:
        special = {kind: kinds.count(kind) for kind in ("face_down", "occluded", "cut", "burnt")}
        conditions.update({"burnt_glare": len(burnt), "special": special})
    return Scene(image, truth, h_img, {"deck": deck.name, "layout": layout.name, "conditions": conditions})


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _randomised_frame(deck: DeckArt, layout: Layout, rng: random.Random, r: DomainRandomisation, n: int,
                      off: int) -> GeneratedFrame:
    cut_edge = rng.choice(("top", "bottom")) if r.cut_cards and n else None
    view = random_table_view(layout, rng, r, cut_edge)
    empty = render_empty_table(view, rng)
    # drawn from a stream of its own, so every other setting of the frame is as without it
    # (seeded from the state's numbers: hash() of the state is not the same in two processes)
    moved, jitter = _jittered(view, random.Random(str(rng.getstate()[1][:16])), r)
    scene = render_randomised_scene(moved, deck, random_deal(layout, rng, n, off), rng, r)
    scene.meta["conditions"].update(jitter)
    return GeneratedFrame(layout, empty.image, scene)


def _jittered(view: TableView, rng: random.Random, r: DomainRandomisation) -> tuple[TableView, dict[str, object]]:
    """The view from a camera moved a little since the empty frame: shifted and turned
    about the frame's centre (recorded as ``pose_shift_px`` and ``pose_turn_deg``)."""
    dx, dy = rng.gauss(0.0, r.pose_jitter_px), rng.gauss(0.0, r.pose_jitter_px)
    turn = rng.gauss(0.0, r.pose_jitter_deg)
    w, h = view.frame_size
    m = np.vstack([cv2.getRotationMatrix2D((w / 2, h / 2), turn, 1.0), [0.0, 0.0, 1.0]])
    m[0, 2] += dx
    m[1, 2] += dy
    return replace(view, table_to_image=m @ view.table_to_image), {
        "pose_shift_px": round(float(np.hypot(dx, dy)), 2), "pose_turn_deg": round(turn, 3)}
