"""Picture effects for randomised table scenes (domain randomisation).

Pure drawing functions used by :mod:`firmware_interfaces.camera.scenes`: a pinhole
camera pitched over the table, felt texture, printed slot lines and words, a padded
rail, casino chips, a dealer's hand and a hand's shadow, glare, and the camera's own
faults (exposure, colour cast, vignette, blur, motion blur, sensor noise, JPEG).
Every function takes its settings as arguments and draws nothing at random on its
own (noise comes from the ``numpy`` generator it is handed), so the caller draws
the settings, records them in the ground truth and gets the same picture again
from the same seed.

Table drawings work on a *canvas*: a picture of the table plane at ``ppm`` pixels
per millimetre whose pixel (0, 0) is table point ``origin_mm``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.layout import Layout
from firmware_interfaces.camera.face_ink import whiteness

#: Felt base colours (BGR) by name; the scene generator jitters them.
FELT_COLOURS: dict[str, tuple[int, int, int]] = {
    "green": (45, 112, 32),
    "blue": (112, 62, 24),
    "red": (36, 34, 128),
    "grey": (86, 86, 90),
    "dark": (21, 22, 19),
}
#: Printed line colours (BGR) by name.
PRINT_COLOURS: dict[str, tuple[int, int, int]] = {"gold": (62, 178, 218), "white": (232, 232, 228)}
#: Rail leather colours (BGR) by name.
RAIL_COLOURS: dict[str, tuple[int, int, int]] = {
    "black": (26, 25, 28), "brown": (32, 50, 78), "burgundy": (40, 28, 88),
}
#: Chip colours (BGR) by name.
CHIP_COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (40, 40, 190), "blue": (170, 80, 30), "green": (60, 140, 40), "black": (35, 35, 35),
    "purple": (130, 40, 110), "yellow": (40, 200, 225), "orange": (30, 120, 235),
}
#: Skin tones (BGR) by name, for the dealer's hand.
SKIN_TONES: dict[str, tuple[int, int, int]] = {
    "light": (150, 172, 222), "medium": (105, 140, 192), "tan": (78, 112, 165), "dark": (48, 68, 108),
}
_SHIFT = 4  # fixed-point bits for sub-pixel cv2 drawing
_ONE = 1 << _SHIFT


def _fp(x: float) -> int:
    return round(x * _ONE)


def project(h: np.ndarray, points: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """Points (N, 2) through homography ``h``."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, h).reshape(-1, 2)


def canvas_to_table(ppm: float, origin_mm: tuple[float, float]) -> np.ndarray:
    """Homography canvas px -> table mm for a canvas at ``ppm`` px/mm whose (0, 0) is ``origin_mm``."""
    return np.array([[1 / ppm, 0, origin_mm[0]], [0, 1 / ppm, origin_mm[1]], [0, 0, 1]], dtype=np.float64)


# -- camera ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class PinholeCamera:
    """A camera over the table: its table mm -> image px homography and the intrinsics it
    was built from (focal length and principal point, px)."""

    table_to_image: np.ndarray
    focal_px: float
    principal_point: tuple[float, float]


def pinhole_camera(table_mm: tuple[float, float], frame_size: tuple[int, int], tilt_deg: float,
                   roll_deg: float = 0.0, yaw_deg: float = 0.0, distance_mm: float = 1500.0,
                   margins: tuple[float, float, float, float] = (0.03, 0.04, 0.03, 0.04),
                   look_at_offset_mm: tuple[float, float] = (0.0, 0.0),
                   flush_edge: str | None = None, flush_margin_mm: float = 12.0) -> PinholeCamera:
    """A pinhole camera ``distance_mm`` from the table centre, pitched ``tilt_deg`` from
    straight down (it stands beyond the near edge, table y = max, so the far edge is the
    top of the picture and the narrower), turned ``yaw_deg`` about the vertical and rolled
    ``roll_deg`` about its optical axis; its focal length and principal point chosen so
    the table fills the frame inside ``margins`` (left, top, right, bottom, as fractions).

    ``flush_edge`` ("top" or "bottom") frames the picture's edge ``flush_margin_mm`` beyond
    that table edge, so that a card lying over it is cut by the frame edge (the corner
    markers near that edge are not found reliably with less than about 10 mm of table
    and rail beyond their quiet zone; keep roll and yaw at 0: the edge must run along the
    frame). Raises ValueError for another edge name.
    """
    w_mm, h_mm = table_mm
    fw, fh = frame_size
    tilt, yaw, roll = (math.radians(a) for a in (tilt_deg, yaw_deg, roll_deg))
    # world: x right, y towards the camera (down the picture), z into the table
    look = np.array([w_mm / 2 + look_at_offset_mm[0], h_mm / 2 + look_at_offset_mm[1], 0.0])
    centre = look + distance_mm * np.array([0.0, math.sin(tilt), -math.cos(tilt)])
    pitch = np.array([[1, 0, 0], [0, math.cos(tilt), math.sin(tilt)], [0, -math.sin(tilt), math.cos(tilt)]])
    rz = np.array([[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0], [0, 0, 1]])
    centre = look + rz @ (centre - look)
    rot = pitch @ rz.T
    rroll = np.array([[math.cos(roll), -math.sin(roll), 0], [math.sin(roll), math.cos(roll), 0], [0, 0, 1]])
    rot = rroll @ rot
    h0 = np.column_stack([rot[:, 0], rot[:, 1], -rot @ centre])  # unit focal length, principal point 0
    outline = np.array([[0, 0], [w_mm, 0], [w_mm, h_mm], [0, h_mm]], dtype=np.float64)
    proj = project(h0, outline)
    (x0, y0), (x1, y1) = proj.min(axis=0), proj.max(axis=0)
    ml, mt, mr, mb = margins
    avail_w, avail_h = fw * (1 - ml - mr), fh * (1 - mt - mb)
    f = min(avail_w / (x1 - x0), avail_h / (y1 - y0))
    px = fw * ml + (avail_w - f * (x1 - x0)) / 2 - f * x0
    py = fh * mt + (avail_h - f * (y1 - y0)) / 2 - f * y0
    if flush_edge is not None:
        if flush_edge not in ("top", "bottom"):
            raise ValueError(f"flush_edge must be 'top' or 'bottom', not {flush_edge!r}")
        y_mm = 0.0 if flush_edge == "top" else h_mm
        inward = 1.0 if flush_edge == "top" else -1.0
        k = np.array([[f, 0, px], [0, f, py], [0, 0, 1]])
        edge, inside = project(k @ h0, [(w_mm / 2, y_mm), (w_mm / 2, y_mm + inward)])
        px_per_mm = float(np.hypot(*(inside - edge)))
        target = flush_margin_mm * px_per_mm if flush_edge == "top" else fh - flush_margin_mm * px_per_mm
        py += target - edge[1]
    k = np.array([[f, 0, px], [0, f, py], [0, 0, 1]])
    h = k @ h0
    return PinholeCamera(h / h[2, 2], float(f), (float(px), float(py)))


def tilt_from_homography(table_to_image: np.ndarray, focal_px: float,
                         principal_point: tuple[float, float]) -> float:
    """The angle (degrees) between a camera's optical axis and the table normal, from its
    table -> image homography and intrinsics: checks what a generated pose really is."""
    k_inv = np.linalg.inv(np.array([[focal_px, 0, principal_point[0]], [0, focal_px, principal_point[1]],
                                    [0, 0, 1]]))
    g = k_inv @ table_to_image  # ~ [r1 r2 t]
    n = np.cross(g[:, 0] / np.linalg.norm(g[:, 0]), g[:, 1] / np.linalg.norm(g[:, 1]))
    return math.degrees(math.acos(min(1.0, abs(float(n[2])) / float(np.linalg.norm(n)))))


# -- the printed table -----------------------------------------------------------------------

def felt_texture(size_px: tuple[int, int], base_bgr: tuple[int, int, int], strength: float,
                 nrng: np.random.Generator) -> np.ndarray:
    """Felt of ``base_bgr`` with fibre noise, blotches and broad shading of ``strength`` (grey levels)."""
    w, h = size_px
    fine = nrng.standard_normal((h, w), dtype=np.float32) * (0.5 * strength)
    blotch = cv2.resize(nrng.normal(0, strength, (h // 6 + 2, w // 6 + 2)).astype(np.float32), (w, h),
                        interpolation=cv2.INTER_CUBIC)
    broad = cv2.resize(nrng.normal(0, 0.8 * strength, (h // 120 + 2, w // 120 + 2)).astype(np.float32), (w, h),
                       interpolation=cv2.INTER_CUBIC)
    tint = nrng.normal(0, 0.25 * strength, 3).astype(np.float32)
    lum = (fine + blotch + broad)[:, :, None]
    felt = np.asarray(base_bgr, np.float32)[None, None, :] + tint + lum
    return np.clip(felt, 0, 255).astype(np.uint8)


@dataclass(frozen=True)
class SlotPrint:
    """How the layout's slots are printed: an outline ``pad_mm`` bigger than the card on each
    side, ``line_mm`` wide, and optionally a second outline ``second_gap_mm`` outside it."""

    colour: str
    pad_mm: float
    line_mm: float
    second_gap_mm: float | None = None
    second_line_mm: float = 1.0

    def to_dict(self) -> dict[str, object]:
        return {"colour": self.colour, "pad_mm": round(self.pad_mm, 2), "line_mm": round(self.line_mm, 2),
                "second_gap_mm": None if self.second_gap_mm is None else round(self.second_gap_mm, 2),
                "second_line_mm": round(self.second_line_mm, 2)}


def _rect_mm(canvas: np.ndarray, ppm: float, origin: tuple[float, float], x0: float, y0: float,
             x1: float, y1: float, colour: tuple[int, int, int], line_mm: float) -> None:
    ox, oy = origin
    p0 = (_fp((x0 - ox) * ppm), _fp((y0 - oy) * ppm))
    p1 = (_fp((x1 - ox) * ppm), _fp((y1 - oy) * ppm))
    cv2.rectangle(canvas, p0, p1, colour, max(1, round(line_mm * ppm)), cv2.LINE_AA, _SHIFT)


def draw_slot_print(canvas: np.ndarray, layout: Layout, ppm: float, origin_mm: tuple[float, float],
                    style: SlotPrint) -> list[tuple[float, float, float, float]]:
    """Print every slot's outline (the layout's card size plus ``style.pad_mm``) on ``canvas``;
    returns the outer boxes (x0, y0, x1, y1) in mm of what was printed."""
    colour = PRINT_COLOURS[style.colour]
    cw, ch = layout.card_mm
    boxes = []
    for s in layout.slots:
        cx, cy = s.centre
        hw, hh = cw / 2 + style.pad_mm, ch / 2 + style.pad_mm
        _rect_mm(canvas, ppm, origin_mm, cx - hw, cy - hh, cx + hw, cy + hh, colour, style.line_mm)
        if style.second_gap_mm is not None:
            g = style.second_gap_mm + style.line_mm / 2 + style.second_line_mm / 2
            hw, hh = hw + g, hh + g
            _rect_mm(canvas, ppm, origin_mm, cx - hw, cy - hh, cx + hw, cy + hh, colour, style.second_line_mm)
        pad = style.line_mm / 2
        boxes.append((cx - hw - pad, cy - hh - pad, cx + hw + pad, cy + hh + pad))
    return boxes


def position_label(position: str) -> str:
    """The word printed by a position: ``banker`` -> ``BANKER``, ``box2`` -> ``BOX 2``, ``a`` -> ``PLAYER A``."""
    head = position.rstrip("0123456789")
    tail = position[len(head):]
    if len(head) == 1:
        return f"PLAYER {head.upper()}"
    return f"{head.upper()} {tail}".strip()


_FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_COMPLEX)


def draw_word(canvas: np.ndarray, ppm: float, origin_mm: tuple[float, float], text: str,
              centre_mm: tuple[float, float], height_mm: float, stroke_mm: float, font: int,
              colour: tuple[int, int, int]) -> tuple[float, float, float, float]:
    """Print ``text`` centred on ``centre_mm``, its capitals ``height_mm`` tall; returns its box in mm."""
    (tw, th), _ = cv2.getTextSize(text, _FONTS[font], 1.0, 1)
    scale = height_mm * ppm / th
    thick = max(1, round(stroke_mm * ppm))
    (tw, th), _ = cv2.getTextSize(text, _FONTS[font], scale, thick)
    x = (centre_mm[0] - origin_mm[0]) * ppm - tw / 2
    y = (centre_mm[1] - origin_mm[1]) * ppm + th / 2
    cv2.putText(canvas, text, (round(x), round(y)), _FONTS[font], scale, colour, thick, cv2.LINE_AA)
    return (centre_mm[0] - tw / ppm / 2, centre_mm[1] - th / ppm / 2,
            centre_mm[0] + tw / ppm / 2, centre_mm[1] + th / ppm / 2)


def word_box(text: str, centre_mm: tuple[float, float], height_mm: float,
             font: int) -> tuple[float, float, float, float]:
    """The box (mm) :func:`draw_word` would print ``text`` in (to test for room before printing)."""
    (tw, th), _ = cv2.getTextSize(text, _FONTS[font], 1.0, 1)
    half_w = tw * height_mm / th / 2 * 1.05
    return (centre_mm[0] - half_w, centre_mm[1] - height_mm / 2, centre_mm[0] + half_w, centre_mm[1] + height_mm / 2)


def add_rail(felt: np.ndarray, ppm: float, rail_mm: float, colour: str, background: tuple[int, int, int],
             nrng: np.random.Generator) -> np.ndarray:
    """The felt (table mm from (0, 0)) inside a padded leather rail ``rail_mm`` wide: a new
    canvas whose (0, 0) is table point (-rail_mm, -rail_mm); beyond the rail's rounded
    outer edge, ``background``."""
    fh, fw = felt.shape[:2]
    r = round(rail_mm * ppm)
    h, w = fh + 2 * r, fw + 2 * r
    step = 2  # the cushion is smooth: draw it at half the resolution
    yy, xx = np.mgrid[0:h:step, 0:w:step].astype(np.float32)
    dx = np.maximum(np.maximum(r - xx, xx - (r + fw - 1)), 0)
    dy = np.maximum(np.maximum(r - yy, yy - (r + fh - 1)), 0)
    dist = np.sqrt(dx * dx + dy * dy) / max(1, r)  # 0 at the felt's edge, 1 at the rail's outer edge
    padded = 0.5 + 0.65 * np.maximum(np.sin(np.pi * np.clip(dist, 0, 1)), 0) ** 0.7  # the cushion's highlight
    band = np.clip((1.0 - dist) * r / step, 0, 1)[:, :, None]  # 1 on the rail, 0 beyond, soft outer edge
    grain = nrng.standard_normal(dist.shape, dtype=np.float32)[:, :, None] * 5
    leather = np.asarray(RAIL_COLOURS[colour], np.float32)[None, None, :] * padded[:, :, None] + grain
    small = leather * band + np.asarray(background, np.float32)[None, None, :] * (1 - band)
    out: np.ndarray = cv2.resize(np.clip(small, 0, 255).astype(np.uint8), (w, h), interpolation=cv2.INTER_LINEAR)
    out[r : r + fh, r : r + fw] = felt
    return out


# -- things on the table ---------------------------------------------------------------------

def chip_face(colour: str, stripes: int, px: int = 160) -> tuple[np.ndarray, np.ndarray]:
    """A casino chip seen from above, ``px`` square: coloured disc, ``stripes`` white edge
    stripes, a white inner ring and a paler inlay. Returns (BGR picture, alpha 0..255)."""
    base = CHIP_COLOURS[colour]
    img = np.zeros((px, px, 3), np.uint8)
    c = (px / 2, px / 2)
    r = px / 2 - 1

    def disc(radius: float, col: tuple[int, int, int]) -> None:
        cv2.circle(img, (_fp(c[0]), _fp(c[1])), _fp(radius), col, -1, cv2.LINE_AA, _SHIFT)

    disc(r, base)
    width = 360 / stripes * 0.42
    for k in range(stripes):
        a = k * 360 / stripes
        cv2.ellipse(img, (_fp(c[0]), _fp(c[1])), (_fp(r), _fp(r)), 0, a - width / 2, a + width / 2,
                    (238, 238, 238), -1, cv2.LINE_AA, _SHIFT)
    disc(0.8 * r, base)
    cv2.circle(img, (_fp(c[0]), _fp(c[1])), _fp(0.66 * r), (236, 236, 236), max(1, px // 40), cv2.LINE_AA, _SHIFT)
    inlay = tuple(int(min(255, v * 0.6 + 100)) for v in base)
    disc(0.56 * r, inlay)  # type: ignore[arg-type]
    yy, xx = np.mgrid[0:px, 0:px].astype(np.float32)
    shade = 1.08 - 0.16 * ((xx + yy) / (2 * px))  # light from the top left
    img = np.clip(img.astype(np.float32) * shade[:, :, None], 0, 255).astype(np.uint8)
    alpha = np.zeros((px, px), np.uint8)
    cv2.circle(alpha, (_fp(c[0]), _fp(c[1])), _fp(r), 255, -1, cv2.LINE_AA, _SHIFT)
    return img, alpha


@dataclass(frozen=True)
class HandPose:
    """A dealer's hand flat over the table, in table mm: palm centre, the direction from the
    palm to the wrist (unit vector), palm size and arm width; fingers point the other way."""

    palm_mm: tuple[float, float]
    wrist_dir: tuple[float, float]
    palm_len_mm: float = 95.0
    palm_width_mm: float = 78.0
    finger_len_mm: float = 70.0
    arm_width_mm: float = 68.0
    arm_len_mm: float = 450.0

    def moved(self, t_mm: float) -> HandPose:
        """The same hand ``t_mm`` further towards the wrist."""
        x, y = self.palm_mm
        ux, uy = self.wrist_dir
        return HandPose((x + ux * t_mm, y + uy * t_mm), self.wrist_dir, self.palm_len_mm, self.palm_width_mm,
                        self.finger_len_mm, self.arm_width_mm, self.arm_len_mm)


def hand_mask(shape: tuple[int, int], ppm: float, origin_mm: tuple[float, float], hand: HandPose) -> np.ndarray:
    """The hand and forearm as a 0/255 mask on a canvas of ``shape`` (h, w)."""
    mask = np.zeros(shape, np.uint8)
    ox, oy = origin_mm
    ux, uy = hand.wrist_dir
    vx, vy = -uy, ux  # across the hand

    def px(x_mm: float, y_mm: float) -> tuple[int, int]:
        return (_fp((x_mm - ox) * ppm), _fp((y_mm - oy) * ppm))

    def ellipse(cx: float, cy: float, along: float, across: float, dx: float, dy: float) -> None:
        angle = math.degrees(math.atan2(dy, dx))
        cv2.ellipse(mask, px(cx, cy), (_fp(along / 2 * ppm), _fp(across / 2 * ppm)), angle, 0, 360, 255, -1,
                    cv2.LINE_AA, _SHIFT)

    pxm, pym = hand.palm_mm
    ellipse(pxm, pym, hand.palm_len_mm, hand.palm_width_mm, ux, uy)
    # forearm: from the wrist out of the picture
    wx, wy = pxm + ux * hand.palm_len_mm * 0.35, pym + uy * hand.palm_len_mm * 0.35
    ex, ey = wx + ux * hand.arm_len_mm, wy + uy * hand.arm_len_mm
    hw = hand.arm_width_mm / 2
    poly = np.array([px(wx + vx * hw * 0.85, wy + vy * hw * 0.85), px(ex + vx * hw, ey + vy * hw),
                     px(ex - vx * hw, ey - vy * hw), px(wx - vx * hw * 0.85, wy - vy * hw * 0.85)], np.int32)
    cv2.fillConvexPoly(mask, poly, 255, cv2.LINE_AA, _SHIFT)
    # four fingers, the middle ones longest, spread a little
    knuckle = hand.palm_len_mm * 0.38
    for across, length, spread in ((-0.36, 0.82, -7), (-0.12, 1.0, -2), (0.12, 0.95, 2), (0.36, 0.72, 7)):
        a = math.atan2(-uy, -ux) + math.radians(spread)
        fx, fy = math.cos(a), math.sin(a)
        base_x = pxm - ux * knuckle + vx * across * hand.palm_width_mm
        base_y = pym - uy * knuckle + vy * across * hand.palm_width_mm
        ln = hand.finger_len_mm * length
        ellipse(base_x + fx * ln / 2, base_y + fy * ln / 2, ln * 1.15, hand.palm_width_mm * 0.22, fx, fy)
    # thumb, out to one side
    a = math.atan2(vy, vx) - math.radians(35)
    tx, ty = math.cos(a), math.sin(a)
    bx, by = pxm + vx * hand.palm_width_mm * 0.42, pym + vy * hand.palm_width_mm * 0.42
    ellipse(bx + tx * 22, by + ty * 22, 58, hand.palm_width_mm * 0.27, tx, ty)
    return mask


def coverage(mask: np.ndarray, polygon_px: np.ndarray) -> float:
    """Fraction of the convex ``polygon_px`` (canvas px) that ``mask`` covers (> 127)."""
    poly = np.zeros(mask.shape, np.uint8)
    cv2.fillConvexPoly(poly, np.round(polygon_px * _ONE).astype(np.int32), 255, cv2.LINE_8, _SHIFT)
    inside = poly > 0
    n = int(inside.sum())
    return float((mask[inside] > 127).sum()) / n if n else 0.0


def paint_hand(frame: np.ndarray, mask_canvas: np.ndarray, canvas_to_image: np.ndarray, skin: str,
               shadow_offset_px: tuple[float, float], nrng: np.random.Generator) -> None:
    """Composite a hand (its canvas mask warped by ``canvas_to_image``) onto ``frame`` in
    place: a soft shadow under it, then rounded, shaded skin."""
    h, w = frame.shape[:2]
    m = cv2.warpPerspective(mask_canvas, canvas_to_image, (w, h), flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_CONSTANT).astype(np.float32) / 255.0
    if not m.any():
        return
    scale = w / 1280.0
    sh = cv2.GaussianBlur(m, (0, 0), 9 * scale)
    shift = np.array([[1, 0, shadow_offset_px[0]], [0, 1, shadow_offset_px[1]]], np.float32)
    sh = cv2.warpAffine(sh, shift, (w, h))
    img = frame.astype(np.float32) * (1 - 0.45 * sh)[:, :, None]
    # rounded look: darker towards the outline
    inner = cv2.distanceTransform((m > 0.5).astype(np.uint8), cv2.DIST_L2, 5)
    shade = 0.72 + 0.38 * np.clip(inner / (14 * scale), 0, 1)
    mottle = cv2.resize(nrng.normal(0, 6, (h // 16 + 2, w // 16 + 2)).astype(np.float32), (w, h))
    skin_img = np.asarray(SKIN_TONES[skin], np.float32)[None, None, :] * shade[:, :, None] + mottle[:, :, None]
    a = cv2.GaussianBlur(m, (0, 0), 0.8 * scale)[:, :, None]
    frame[:] = np.clip(skin_img * a + img * (1 - a), 0, 255).astype(np.uint8)


def shadow_canvas(shape: tuple[int, int], ppm: float, origin_mm: tuple[float, float],
                  centre_mm: tuple[float, float], axes_mm: tuple[float, float], angle_deg: float,
                  softness_mm: float) -> np.ndarray:
    """A soft elliptical shadow (0..1 float32) on a canvas of ``shape`` (h, w)."""
    field_ = np.zeros(shape, np.float32)
    c = (_fp((centre_mm[0] - origin_mm[0]) * ppm), _fp((centre_mm[1] - origin_mm[1]) * ppm))
    cv2.ellipse(field_, c, (_fp(axes_mm[0] * ppm), _fp(axes_mm[1] * ppm)), angle_deg, 0, 360, 1.0, -1,
                cv2.LINE_AA, _SHIFT)
    return cv2.GaussianBlur(field_, (0, 0), softness_mm * ppm)


# -- light and the camera --------------------------------------------------------------------

@dataclass(frozen=True)
class GlareSpot:
    """A specular highlight in image px: centre, spread (sigma x, y) and strength (grey levels)."""

    x: float
    y: float
    sigma_x: float
    sigma_y: float
    strength: float

    def to_dict(self) -> dict[str, float]:
        return {"x": round(self.x, 1), "y": round(self.y, 1), "sigma_x": round(self.sigma_x, 1),
                "sigma_y": round(self.sigma_y, 1), "strength": round(self.strength, 1)}


def glare_field(frame_size: tuple[int, int], spots: Sequence[GlareSpot], step: int = 4) -> np.ndarray:
    """The added light (float32, h x w) of ``spots``."""
    w, h = frame_size
    yy, xx = np.mgrid[0:h:step, 0:w:step].astype(np.float32)
    g = np.zeros_like(xx)
    for s in spots:
        g += s.strength * np.exp(-(((xx - s.x) / s.sigma_x) ** 2 + ((yy - s.y) / s.sigma_y) ** 2) / 2)
    field: np.ndarray = cv2.resize(g, (w, h), interpolation=cv2.INTER_LINEAR)
    return field


def light_field(frame_size: tuple[int, int], gradient: tuple[float, float], direction: tuple[float, float],
                vignette: float) -> np.ndarray:
    """Uneven light: a linear ramp from ``gradient[0]`` to ``gradient[1]`` along ``direction``,
    times a vignette that darkens the corners by ``vignette`` (0..1). Float32, h x w."""
    w, h = frame_size
    yy, xx = np.mgrid[0:h:8, 0:w:8].astype(np.float32)
    ramp = (xx / w - 0.5) * direction[0] + (yy / h - 0.5) * direction[1]
    lo, hi = gradient
    ramp = lo + (hi - lo) * (ramp - ramp.min()) / max(1e-6, float(np.ptp(ramp)))
    r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
    field: np.ndarray = cv2.resize(ramp * (1 - vignette * r2), (w, h), interpolation=cv2.INTER_LINEAR)
    return field


def motion_kernel(length_px: int, angle_deg: float) -> np.ndarray:
    """A normalised linear motion-blur kernel ``length_px`` long at ``angle_deg``."""
    k = np.zeros((length_px, length_px), np.float32)
    c = (length_px - 1) / 2
    dx, dy = math.cos(math.radians(angle_deg)) * c, math.sin(math.radians(angle_deg)) * c
    cv2.line(k, (_fp(c - dx), _fp(c - dy)), (_fp(c + dx), _fp(c + dy)), 1.0, 1, cv2.LINE_AA, _SHIFT)
    return k / max(1e-6, float(k.sum()))


@dataclass(frozen=True)
class CameraFaults:
    """What the camera does to the light reaching it: exposure (stops), per-channel gains
    (B, G, R: a colour cast), optical blur, motion blur, sensor noise and JPEG quality."""

    exposure_stops: float = 0.0
    gains: tuple[float, float, float] = (1.0, 1.0, 1.0)
    blur_sigma: float = 0.0
    motion_blur_px: int = 0
    motion_blur_deg: float = 0.0
    noise_sigma: float = 0.0
    jpeg_quality: int = 95


def apply_camera(image: np.ndarray, light: np.ndarray, glare: np.ndarray, faults: CameraFaults,
                 nrng: np.random.Generator) -> np.ndarray:
    """Light the scene (``light`` multiplies, ``glare`` adds), then expose, tint, blur, add
    sensor noise, clip and JPEG-compress it, in the order a camera does."""
    img: np.ndarray = image.astype(np.float32)
    img *= light[:, :, None]
    img += glare[:, :, None]
    img *= (2.0 ** faults.exposure_stops) * np.asarray(faults.gains, np.float32)[None, None, :]
    if faults.blur_sigma > 0.25:
        img = cv2.GaussianBlur(img, (0, 0), faults.blur_sigma)
    if faults.motion_blur_px >= 2:
        img = cv2.filter2D(img, -1, motion_kernel(faults.motion_blur_px, faults.motion_blur_deg),
                           borderType=cv2.BORDER_REFLECT)
    if faults.noise_sigma > 0:
        img += nrng.standard_normal(img.shape, dtype=np.float32) * faults.noise_sigma
    out = np.clip(img, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(faults.jpeg_quality)])
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    if decoded is None:
        raise RuntimeError("OpenCV could not JPEG-encode and decode a generated frame")
    return decoded


#: A face's ink: pixels whose darkest channel (``face_ink.whiteness``: red ink too) lies this
#: many grey levels under its paper's (the face's 92nd percentile of it).
INK_UNDER_PAPER = 60.0
#: Ink still this many grey levels darker than its paper (in some channel) once lit, exposed
#: and clipped shows; less is lost (noise of up to 6 levels and JPEG then hide it).
INK_SHOWS_STEP = 25.0
#: Width (px) the face is measured at: finer than any frame shows it.
_INK_FACE_PX = 200


def ink_left(face: np.ndarray, corners: np.ndarray, light: np.ndarray, glare: np.ndarray,
             faults: CameraFaults) -> float:
    """The share of a face-up card's ink that still shows once the scene is lit (``light``
    multiplies, ``glare`` adds: image-sized fields) and exposed (``faults``' stops and gains)
    and the camera clips at 255: ink still :data:`INK_SHOWS_STEP` darker than the card's
    paper under the same light, in some channel. Glare and over-exposure clip paper and ink
    alike to white; what they clip is gone before blur, noise or JPEG touch it. ``face`` is
    the card's picture (BGR), ``corners`` its image corners (TL, TR, BR, BL), the whole card
    in the frame (a card the frame's edge cuts is not measured: the fields are only known
    inside the frame). A hand over the card is not taken into account. 1.0 for a face with
    no ink."""
    fh, fw = face.shape[:2]
    small = cv2.resize(face, (_INK_FACE_PX, round(_INK_FACE_PX * fh / fw)), interpolation=cv2.INTER_AREA)
    sh, sw = small.shape[:2]
    white = whiteness(small)
    ink = white < float(np.percentile(white, 92)) - INK_UNDER_PAPER
    if not ink.any():
        return 1.0
    paper = np.percentile(small.reshape(-1, 3), 92, axis=0).astype(np.float32)
    face_px = np.array([[0, 0], [sw, 0], [sw, sh], [0, sh]], np.float32)
    image_to_face = cv2.getPerspectiveTransform(np.asarray(corners, np.float32), face_px)
    # the fields are smooth: sampled at the face's pixels, they are the light each one gets
    lit = cv2.warpPerspective(np.asarray(light, np.float32), image_to_face, (sw, sh), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)[ink][:, None]
    added = cv2.warpPerspective(np.asarray(glare, np.float32), image_to_face, (sw, sh), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REPLICATE)[ink][:, None]
    gain = (2.0 ** faults.exposure_stops) * np.asarray(faults.gains, np.float32)
    ink_now = np.minimum((small[ink].astype(np.float32) * lit + added) * gain, 255.0)
    paper_now = np.minimum((paper * lit + added) * gain, 255.0)
    shows = (paper_now - ink_now).max(axis=1) >= INK_SHOWS_STEP
    return float(np.count_nonzero(shows)) / len(shows)
