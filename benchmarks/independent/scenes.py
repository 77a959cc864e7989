"""Independent renderer of overhead-camera frames of a casino card table.

Written from a written description only (see README.md in this folder): it
does not import or reuse anything of the product.  It needs numpy, OpenCV and
the `rsvg-convert` program.

The model
---------
* The table is a plane; table millimetres (x right, y down, z into the table)
  are the world frame.  A pinhole camera looks at it from above with a tilt of
  up to ~25 degrees, a small yaw and roll; every frame jitters that pose a
  little.  The homography image <- table mm is  K [r1 r2 t].
* The felt (printed layout: table outline, slot outlines, words), the padded
  rail, the wood beyond it, chips and card shadows are painted on a top-down
  texture which is warped into the frame.  Cards are warped straight from their
  (high resolution) artwork into the frame, with rounded corners.
* Everything is rendered at 2x and reduced, then lit in linear light
  (exposure, white balance, colour cast, gradient, vignette, glare), then
  optically blurred, motion blurred, given sensor noise and JPEG-encoded.

Every random choice is recorded in the frame's ground truth (`Frame.truth`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

KDE_ROOT = Path("/usr/share/carddecks")
SVG_CARDS_PNG = Path("/opt/card-art/node_modules/svg-cards/png/2x")
CACHE = Path(os.environ.get("INDEPENDENT_SCENES_CACHE", Path.home() / ".cache" / "independent-scenes"))

RANKS = "A23456789TJQK"
SUITS = "SHDC"
CODES = [r + s for s in SUITS for r in RANKS]
_RANK_NAME = {"A": "1", "T": "10", "J": "jack", "Q": "queen", "K": "king"}
_SUIT_NAME = {"S": "spade", "H": "heart", "D": "diamond", "C": "club"}

CARD_FORMATS = {"bridge": (56.5, 88.0), "poker": (63.0, 88.0)}
CHIP_DIAMETER_MM = 39.0

FELTS = {  # name: sRGB (B, G, R) base colour
    "green": (56, 122, 36),
    "blue": (138, 74, 28),
    "red": (38, 32, 140),
    "grey": (108, 105, 100),
    "dark": (36, 40, 33),
}
LINE_COLOURS = {"light": (225, 236, 240), "gold": (80, 170, 205)}
CHIP_COLOURS = {
    "red": (40, 40, 190), "blue": (160, 70, 30), "green": (50, 130, 40), "black": (30, 30, 30),
    "purple": (120, 40, 110), "yellow": (40, 190, 225), "orange": (30, 120, 230), "white": (215, 215, 215),
}
WORDS = ["BANKER", "PLAYER", "TIE", "PAYS 8 TO 1", "DRAGON", "BONUS", "PAIR"]

SUPERSAMPLE = 2
BASE_EXPOSURE = 0.68
INK_LOST_GLARE = 0.9   # glare (linear, added) above which even dark ink is burnt to white


# --------------------------------------------------------------------------------------------
# card art


def decks_available() -> list[str]:
    out = sorted(p.name for p in KDE_ROOT.glob("svg-*") if list(p.glob("*.svgz")) or list(p.glob("*.svg")))
    if SVG_CARDS_PNG.is_dir():
        out.append("svg-cards")
    return out


def _kde_svg(deck: str) -> Path:
    """The deck's SVG, gunzipped once into the cache."""
    folder = KDE_ROOT / deck
    files = sorted(folder.glob("*.svgz")) + sorted(folder.glob("*.svg"))
    if not files:
        raise FileNotFoundError(f"no SVG deck in {folder}")
    src = files[0]
    dst = CACHE / deck / (src.stem + ".svg")
    if not dst.exists():
        dst.parent.mkdir(parents=True, exist_ok=True)
        data = src.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        tmp = dst.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(dst)
    return dst


def _kde_element(ids: set[str], code: str) -> str:
    name = f"{_RANK_NAME.get(code[0], code[0])}_{_SUIT_NAME[code[1]]}"
    for cand in (name, "img_" + name, "g-" + name):
        if cand in ids:
            return cand
    raise KeyError(f"no element for {code} ({name})")


def _rsvg(svg: Path, element: str, height: int, out: Path) -> np.ndarray:
    res = subprocess.run(["rsvg-convert", "--export-id", element, "--height", str(height), "-o", str(out), str(svg)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"rsvg-convert {svg.name}#{element}: {res.stderr.strip()}")
    img = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise RuntimeError(f"rsvg-convert wrote nothing for {svg.name}#{element}")
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGRA)
    if img.shape[2] == 3:
        img = np.dstack([img, np.full(img.shape[:2], 255, np.uint8)])
    return img


def _alpha_bbox(rgba: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(rgba[..., 3] > 8)
    if len(xs) == 0:
        raise RuntimeError("empty render")
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def _flatten_white(rgba: np.ndarray) -> np.ndarray:
    a = rgba[..., 3:4].astype(np.float32) / 255.0
    rgb = rgba[..., :3].astype(np.float32) * a + 255.0 * (1.0 - a)
    return np.clip(rgb + 0.5, 0, 255).astype(np.uint8)


def card_face(deck: str, code: str, height: int = 640) -> np.ndarray:
    """Upright face of `code` in `deck` as BGR uint8, `height` px high, cut to the card,
    transparent parts (rounded corners, see-through art) flattened onto white.  Cached."""
    cache = CACHE / deck / f"{code}_{height}.png"
    if cache.exists():
        img = cv2.imread(str(cache), cv2.IMREAD_COLOR)
        if img is not None:
            return img
    cache.parent.mkdir(parents=True, exist_ok=True)
    if deck == "svg-cards":
        name = f"{_SUIT_NAME[code[1]]}_{_RANK_NAME.get(code[0], code[0])}.png"
        rgba = cv2.imread(str(SVG_CARDS_PNG / name), cv2.IMREAD_UNCHANGED)
        if rgba is None:
            raise FileNotFoundError(SVG_CARDS_PNG / name)
        if rgba.shape[2] == 3:
            rgba = np.dstack([rgba, np.full(rgba.shape[:2], 255, np.uint8)])
    else:
        svg = _kde_svg(deck)
        ids_cache = svg.with_suffix(".ids.json")
        if ids_cache.exists():
            ids = set(json.loads(ids_cache.read_text()))
        else:
            ids = {x.decode() for x in re.findall(rb'\bid="([^"]+)"', svg.read_bytes())}
            ids_cache.write_text(json.dumps(sorted(ids)))
        element = _kde_element(ids, code)
        with tempfile.TemporaryDirectory(prefix="indep-rsvg-") as td:
            probe = _rsvg(svg, element, 400, Path(td) / "probe.png")
            x0, y0, x1, y1 = _alpha_bbox(probe)
            # --export-id's page is sometimes much larger than the card: render again so that
            # the card itself comes out at about 1.25x the height we want
            frac = (y1 - y0) / probe.shape[0]
            h2 = int(min(12000, math.ceil(height * 1.25 / max(frac, 1e-3))))
            rgba = _rsvg(svg, element, h2, Path(td) / "full.png")
    x0, y0, x1, y1 = _alpha_bbox(rgba)
    rgba = rgba[y0:y1, x0:x1]
    face = _flatten_white(rgba)
    w = int(round(face.shape[1] * height / face.shape[0]))
    face = cv2.resize(face, (w, height), interpolation=cv2.INTER_AREA if face.shape[0] > height else cv2.INTER_CUBIC)
    tmp = cache.with_name(cache.stem + ".tmp.png")
    cv2.imwrite(str(tmp), face)
    tmp.replace(cache)
    return face


class Deck:
    """The 52 faces of one deck design, and its physical format."""

    def __init__(self, name: str, height: int = 640):
        self.name = name
        self.faces = {c: card_face(name, c, height) for c in CODES}
        aspect = float(np.median([f.shape[1] / f.shape[0] for f in self.faces.values()]))
        self.aspect = aspect
        # the format whose aspect is nearest the art (a real deck has one format)
        self.format = min(CARD_FORMATS, key=lambda k: abs(CARD_FORMATS[k][0] / CARD_FORMATS[k][1] - aspect))
        self.card_mm = CARD_FORMATS[self.format]

    def write_faces(self, folder: Path, height: int | None = None) -> list[Path]:
        folder.mkdir(parents=True, exist_ok=True)
        out = []
        for code, face in self.faces.items():
            if height:
                face = cv2.resize(face, (int(round(face.shape[1] * height / face.shape[0])), height),
                                  interpolation=cv2.INTER_AREA)
            p = folder / f"{code}.png"
            cv2.imwrite(str(p), face)
            out.append(p)
        return out


# --------------------------------------------------------------------------------------------
# geometry


def _rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


@dataclass
class Pose:
    """Camera looking at point (px, py) of the table from distance d (mm)."""

    px: float
    py: float
    d: float
    tilt_deg: float       # angle between the optical axis and the table normal
    tilt_dir_deg: float   # direction of the tilt in the table plane
    yaw_deg: float        # rotation about the optical axis (image rotation)
    focal_px: float       # focal length in pixels at 1280 wide
    W: int
    H: int

    def rotation(self) -> np.ndarray:
        a = math.radians(self.tilt_dir_deg)
        return _rz(a) @ _rx(math.radians(self.tilt_deg)) @ _rz(-a) @ _rz(math.radians(self.yaw_deg))

    def homography(self, scale: float = 1.0) -> np.ndarray:
        """image pixels (frame scaled by `scale`) <- table mm."""
        R = self.rotation()  # camera -> world
        fwd = R[:, 2]
        C = np.array([self.px, self.py, 0.0]) - self.d * fwd
        Rt = R.T
        t = -Rt @ C
        f = self.focal_px * self.W / 1280.0 * scale
        K = np.array([[f, 0, self.W * scale / 2.0], [0, f, self.H * scale / 2.0], [0, 0, 1]])
        M = K @ np.column_stack([Rt[:, 0], Rt[:, 1], t])
        return M / M[2, 2]

    def as_dict(self) -> dict:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def project(H: np.ndarray, pts) -> np.ndarray:
    p = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    q = np.column_stack([p, np.ones(len(p))]) @ H.T
    return q[:, :2] / q[:, 2:3]


# --------------------------------------------------------------------------------------------
# table / session


@dataclass
class Table:
    """One table: printed layout, felt, and a nominal camera pose (one calibration)."""

    name: str
    table_mm: tuple[float, float]
    card_mm: tuple[float, float]
    slot_margin_mm: float
    slots: dict[str, list[float]]             # name -> [x, y, w, h] (mm, top-left)
    words: list[dict]
    felt: str
    felt_bgr: tuple[int, int, int]
    line: str
    line_bgr: tuple[int, int, int]
    line_mm: float
    rail: dict
    pose: Pose
    style: str
    texture_origin: tuple[float, float] = (0.0, 0.0)
    ppm: float = 2.5
    texture: np.ndarray | None = field(default=None, repr=False)

    def layout_toml(self) -> str:
        W, H = self.table_mm
        lines = [
            f'# Independent harness table {self.name} ({self.style}); no markers are printed on this felt,',
            '# the [markers] block is only there because the format requires it.',
            f'name = "{self.name}"',
            f'table_mm = [{W:g}, {H:g}]',
            f'card_mm = [{self.card_mm[0]:g}, {self.card_mm[1]:g}]',
            '',
            '[markers]',
            'dictionary = "DICT_4X4_50"',
            'size_mm = 50',
            'ids = [0, 1, 2, 3]',
            f'centres_mm = [[35, 35], [{W - 35:g}, 35], [{W - 35:g}, {H - 35:g}], [35, {H - 35:g}]]',
            '',
            '[slots]',
        ]
        for n, (x, y, w, h) in self.slots.items():
            key = f'"{n}"' if not re.fullmatch(r"[A-Za-z0-9_-]+", n) else n
            lines.append(f"{key} = [{x:g}, {y:g}, {w:g}, {h:g}]")
        return "\n".join(lines) + "\n"

    def outline_corners_mm(self) -> np.ndarray:
        W, H = self.table_mm
        return np.array([[0, 0], [W, 0], [W, H], [0, H]], dtype=np.float64)

    def summary(self) -> dict:
        return {
            "table": self.name, "style": self.style, "table_mm": list(self.table_mm), "card_mm": list(self.card_mm),
            "slot_margin_mm": round(self.slot_margin_mm, 2), "slots": self.slots, "felt": self.felt,
            "felt_bgr": list(self.felt_bgr), "line": self.line, "line_bgr": list(self.line_bgr),
            "line_mm": round(self.line_mm, 2), "rail": self.rail, "words": self.words, "pose": self.pose.as_dict(),
        }


def _make_layout(rng: np.random.Generator, card_mm, margin: float):
    cw, ch = card_mm
    sw, sh = round(cw + 2 * margin, 1), round(ch + 2 * margin, 1)
    # pitch: a card turned 10 deg, 5 % big, 6 mm off-centre must not touch its neighbour's
    ext_w = (cw * math.cos(math.radians(10)) + ch * math.sin(math.radians(10))) * 1.05
    pitch = float(rng.uniform(max(ext_w + 13, sw + 6), max(ext_w + 13, sw + 6) + 18))
    style = str(rng.choice(["baccarat", "two-rows", "teen-patti", "three-face"], p=[0.35, 0.25, 0.2, 0.2]))
    slots: dict[str, list[float]] = {}
    words: list[dict] = []
    vpitch = ch * 1.05 + 45 + float(rng.uniform(0, 40))
    if style in ("baccarat", "teen-patti"):
        gap = float(rng.uniform(60, 160))
        n = 3
        group_w = (n - 1) * pitch + sw
        W = 2 * group_w + gap + 2 * float(rng.uniform(70, 140))
        H = float(rng.uniform(430, 560))
        y = H * float(rng.uniform(0.36, 0.5)) - sh / 2
        left0 = W / 2 - gap / 2 - group_w
        right0 = W / 2 + gap / 2
        if style == "baccarat":
            names_l = ["player3", "player2", "player1"]
            names_r = ["banker1", "banker2", "banker3"]
            lw, rw = "PLAYER", "BANKER"
        else:
            names_l = ["a1", "a2", "a3"]
            names_r = ["b1", "b2", "b3"]
            lw, rw = "PLAYER A", "PLAYER B"
        for i, nm in enumerate(names_l):
            slots[nm] = [left0 + i * pitch, y, sw, sh]
        for i, nm in enumerate(names_r):
            slots[nm] = [right0 + i * pitch, y, sw, sh]
        below = rng.random() < 0.6
        wy = y + sh + 40 if below else y - 40
        words.append({"text": lw, "x": left0 + group_w / 2, "y": wy})
        words.append({"text": rw, "x": right0 + group_w / 2, "y": wy})
        if rng.random() < 0.5:
            words.append({"text": str(rng.choice(["TIE", "PAYS 8 TO 1", "BONUS"])), "x": W / 2,
                          "y": (y + sh + 95) if below else y + sh + 50})
    elif style == "two-rows":
        n = int(rng.integers(3, 5))
        W = (n - 1) * pitch + sw + 2 * float(rng.uniform(150, 260))
        H = float(rng.uniform(460, 600))
        x0 = (W - ((n - 1) * pitch + sw)) / 2
        y1 = H / 2 - vpitch / 2 - sh / 2 + float(rng.uniform(-20, 20))
        for i in range(n):
            slots[f"banker{i + 1}"] = [x0 + i * pitch, y1, sw, sh]
            slots[f"player{i + 1}"] = [x0 + i * pitch, y1 + vpitch, sw, sh]
        words.append({"text": "BANKER", "x": W / 2, "y": y1 - 34})
        words.append({"text": "PLAYER", "x": W / 2, "y": y1 + vpitch + sh + 34})
    else:  # three-face: first + banker1..3 on top, box1..3 of three along the bottom
        gap = float(rng.uniform(18, 40))
        group_w = 2 * pitch + sw
        W = 3 * group_w + 2 * gap + 2 * float(rng.uniform(45, 90))
        H = float(rng.uniform(480, 600))
        x0 = (W - (3 * group_w + 2 * gap)) / 2
        y1 = H / 2 - vpitch / 2 - sh / 2
        slots["first"] = [x0, y1, sw, sh]
        for i in range(3):
            slots[f"banker{i + 1}"] = [x0 + group_w + gap + i * pitch, y1, sw, sh]
        for b in range(3):
            for i in range(3):
                slots[f"box{b + 1}.{i + 1}"] = [x0 + b * (group_w + gap) + i * pitch, y1 + vpitch, sw, sh]
        words.append({"text": "BANKER", "x": x0 + group_w + gap + group_w / 2, "y": y1 - 32})
    slots = {k: [round(v, 1) for v in r] for k, r in slots.items()}
    if rng.random() < 0.25:  # some felts carry no printed words
        words = []
    return style, (round(W), round(H)), slots, words


def _fit_pose(rng, table_mm, W, H, tilt, tilt_dir, yaw, focal, fill) -> Pose:
    tw, th = table_mm
    corners = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], dtype=np.float64)
    px = tw / 2 + float(rng.uniform(-0.03, 0.03)) * tw
    py = th / 2 + float(rng.uniform(-0.03, 0.03)) * th
    lo, hi = 200.0, 20000.0
    for _ in range(60):
        d = (lo + hi) / 2
        pose = Pose(px, py, d, tilt, tilt_dir, yaw, focal, W, H)
        q = project(pose.homography(), corners)
        f = max((q[:, 0].max() - q[:, 0].min()) / W, (q[:, 1].max() - q[:, 1].min()) / H)
        if f > fill:
            lo = d
        else:
            hi = d
    pose = Pose(px, py, (lo + hi) / 2, tilt, tilt_dir, yaw, focal, W, H)
    # re-centre the projected outline in the image by moving the look-at point
    for _ in range(8):
        Hm = pose.homography()
        q = project(Hm, corners)
        centre_img = (q.min(0) + q.max(0)) / 2 + np.array([rng.uniform(-0.01, 0.01) * W, rng.uniform(-0.01, 0.01) * H])
        target = project(np.linalg.inv(Hm), [[W / 2, H / 2]])[0]
        now = project(np.linalg.inv(Hm), [centre_img])[0]
        pose.px += float(now[0] - target[0])
        pose.py += float(now[1] - target[1])
    return pose


def make_table(rng: np.random.Generator, name: str, card_mm, size=(1280, 720), felt: str | None = None,
               tilt_range: tuple[float, float] | None = None) -> Table:
    """A random table; `felt` and `tilt_range` (degrees) let a caller stratify them over tables."""
    W, H = size
    margin = float(rng.uniform(2.0, 6.0))
    style, table_mm, slots, words = _make_layout(rng, card_mm, margin)
    felt = str(rng.choice(list(FELTS))) if felt is None else felt
    base = np.array(FELTS[felt], dtype=np.float64)
    base = np.clip(base * rng.uniform(0.85, 1.15) + rng.normal(0, 6, 3), 5, 250)
    line = str(rng.choice(list(LINE_COLOURS), p=[0.6, 0.4]))
    lbgr = np.clip(np.array(LINE_COLOURS[line], dtype=np.float64) + rng.normal(0, 8, 3), 0, 255)
    line_mm = float(rng.uniform(1.0, 2.5))
    side = str(rng.choice(["bottom", "top", "left", "right"], p=[0.45, 0.35, 0.1, 0.1]))
    rail = {
        "side": side, "gap_mm": round(float(rng.uniform(10, 60)), 1), "width_mm": round(float(rng.uniform(90, 150)), 1),
        "bgr": [int(v) for v in np.clip(np.array(rng.choice([[30, 45, 70], [20, 20, 22], [40, 30, 90], [25, 60, 110]]))
                                        * rng.uniform(0.8, 1.2), 0, 255)],
        "wood_bgr": [int(v) for v in np.clip(np.array([35, 60, 95]) * rng.uniform(0.5, 1.2), 0, 255)],
    }
    if tilt_range is None:
        tilt = float(min(25.0, abs(rng.normal(0, 11)))) if rng.random() < 0.85 else float(rng.uniform(15, 25))
    else:
        tilt = float(rng.uniform(*tilt_range))
    tilt_dir = float(rng.normal(90, 20) * rng.choice([-1, 1])) if rng.random() < 0.8 else float(rng.uniform(0, 360))
    yaw = float(rng.normal(0, 2.5))
    focal = 1280 / (2 * math.tan(math.radians(float(rng.uniform(55, 75)) / 2)))
    fill = float(rng.uniform(0.80, 0.94))
    pose = _fit_pose(rng, table_mm, W, H, tilt, tilt_dir, yaw, focal, fill)
    pose.__dict__["fill"] = fill  # recorded only
    for w in words:
        w["size_mm"] = round(float(rng.uniform(20, 34)), 1)
        w["x"], w["y"] = round(w["x"], 1), round(w["y"], 1)
    t = Table(name, table_mm, tuple(card_mm), margin, slots, words, felt, tuple(int(v) for v in base), line,
              tuple(int(v) for v in lbgr), line_mm, rail, pose, style)
    _paint_texture(t, rng)
    return t


def _text_mask(text: str, height_px: int) -> np.ndarray:
    """White-on-black mask of `text` in a serif bold face, via rsvg-convert (cached)."""
    key = hashlib.sha1(f"{text}|{height_px}".encode()).hexdigest()[:16]
    p = CACHE / "text" / f"{key}.png"
    if not p.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
        fs = 100
        wpx = int(fs * 0.8 * len(text) + 40)
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{wpx}" height="{int(fs * 1.3)}">'
               f'<text x="{wpx / 2}" y="{fs}" font-family="DejaVu Serif" font-weight="bold" font-size="{fs}" '
               f'text-anchor="middle" fill="white" letter-spacing="6">{text}</text></svg>')
        tmp = p.with_name(p.stem + ".tmp.png")
        subprocess.run(["rsvg-convert", "--height", str(int(height_px * 1.3)), "-o", str(tmp)], input=svg.encode(),
                       check=True, capture_output=True)
        tmp.replace(p)
    img = cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
    m = img[..., 3] if img.ndim == 3 and img.shape[2] == 4 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    ys, xs = np.nonzero(m > 10)
    if len(xs):
        m = m[max(0, ys.min() - 2):ys.max() + 3, max(0, xs.min() - 2):xs.max() + 3]
    return m


def _paint_texture(t: Table, rng: np.random.Generator) -> None:
    """The static felt of a table, top down, at t.ppm pixels per mm, covering all the nominal view + slack."""
    pose = t.pose
    Hinv = np.linalg.inv(pose.homography())
    edge = []
    for s in np.linspace(0, 1, 9):
        edge += [[s * pose.W, 0], [s * pose.W, pose.H], [0, s * pose.H], [pose.W, s * pose.H]]
    vis = project(Hinv, edge)
    x0, y0 = vis.min(0) - 80
    x1, y1 = vis.max(0) + 80
    ppm = t.ppm
    tw, th = int((x1 - x0) * ppm), int((y1 - y0) * ppm)
    t.texture_origin = (float(x0), float(y0))

    def px(x, y):
        return (x - x0) * ppm, (y - y0) * ppm

    base = np.array(t.felt_bgr, dtype=np.float32)
    # felt: low-frequency blotches + fibre noise
    low = cv2.resize(rng.normal(0, 1, (7, 12)).astype(np.float32), (tw, th), interpolation=cv2.INTER_CUBIC)
    fib = rng.normal(0, 1, (th, tw)).astype(np.float32)
    fib = cv2.GaussianBlur(fib, (0, 0), 0.8)
    shade = 1.0 + 0.035 * low + 0.05 * fib
    tex = base[None, None, :] * shade[..., None]
    del low, fib, shade
    # rail and wood beyond it
    W, H = t.table_mm
    r = t.rail
    g, wdt = r["gap_mm"], r["width_mm"]
    if r["side"] in ("bottom", "top"):
        a = H + g if r["side"] == "bottom" else -g - wdt
        coord = (np.arange(th, dtype=np.float32) / ppm + y0)[:, None]
        u = (coord - a) / wdt  # 0..1 across the rail
        beyond = (u > 1) if r["side"] == "bottom" else (u < 0)
        uu = np.broadcast_to(u, (th, tw))
        bb = np.broadcast_to(beyond, (th, tw))
    else:
        a = W + g if r["side"] == "right" else -g - wdt
        coord = (np.arange(tw, dtype=np.float32) / ppm + x0)[None, :]
        u = (coord - a) / wdt
        beyond = (u > 1) if r["side"] == "right" else (u < 0)
        uu = np.broadcast_to(u, (th, tw))
        bb = np.broadcast_to(beyond, (th, tw))
    inrail = (uu >= 0) & (uu <= 1)
    cyl = np.clip(np.sin(np.clip(uu, 0, 1) * np.pi), 0, 1) ** 0.6
    hl = np.exp(-((uu - 0.35) / 0.08) ** 2) * 0.35
    rail_col = np.array(r["bgr"], dtype=np.float32)
    railimg = rail_col[None, None, :] * (0.45 + 0.75 * cyl + hl)[..., None]
    tex = np.where(inrail[..., None], railimg, tex)
    wood = np.array(r["wood_bgr"], dtype=np.float32)
    grain = cv2.resize(rng.normal(0, 1, (th // 40 + 2, 4)).astype(np.float32), (tw, th), interpolation=cv2.INTER_CUBIC)
    woodimg = wood[None, None, :] * (1 + 0.12 * grain[..., None])
    tex = np.where(bb[..., None], woodimg, tex)
    # stitch line on the rail
    tex = np.clip(tex, 0, 255).astype(np.uint8)
    del railimg, woodimg, grain
    lc = tuple(int(v) for v in t.line_bgr)
    lt = max(1, int(round(t.line_mm * ppm)))
    sh = 4  # fixed point bits
    f = 1 << sh

    def P(x, y):
        a, b = px(x, y)
        return int(round(a * f)), int(round(b * f))

    # table outline (the four points clicked by the technician are its corners)
    cv2.polylines(tex, [np.array([P(0, 0), P(W, 0), P(W, H), P(0, H)], np.int32)], True, lc, lt, cv2.LINE_AA, sh)
    inner = float(rng.uniform(6, 14))
    if rng.random() < 0.5:
        cv2.polylines(
            tex,
            [np.array([P(inner, inner), P(W - inner, inner), P(W - inner, H - inner), P(inner, H - inner)], np.int32)],
            True,
            lc,
            max(1, lt // 2),
            cv2.LINE_AA,
            sh,
        )
    # slot outlines, rounded corners
    rad = float(rng.uniform(2, 6))
    for x, y, w, h in t.slots.values():
        pts = []
        for cx, cy, a0 in (
            (x + w - rad, y + rad, -90),
            (x + w - rad, y + h - rad, 0),
            (x + rad, y + h - rad, 90),
            (x + rad, y + rad, 180),
        ):
            for a in np.linspace(a0, a0 + 90, 6):
                pts.append(P(cx + rad * math.cos(math.radians(a)), cy + rad * math.sin(math.radians(a))))
        cv2.polylines(tex, [np.array(pts, np.int32)], True, lc, lt, cv2.LINE_AA, sh)
    # printed words
    for wd in t.words:
        m = _text_mask(wd["text"], int(wd["size_mm"] * ppm))
        if wd.get("rotate"):
            m = cv2.rotate(m, cv2.ROTATE_90_COUNTERCLOCKWISE)
        cx, cy = px(wd["x"], wd["y"])
        hh, ww = m.shape
        xa, ya = int(cx - ww / 2), int(cy - hh / 2)
        xs0, ys0 = max(0, xa), max(0, ya)
        xs1, ys1 = min(tw, xa + ww), min(th, ya + hh)
        if xs1 <= xs0 or ys1 <= ys0:
            continue
        al = (m[ys0 - ya : ys1 - ya, xs0 - xa : xs1 - xa].astype(np.float32) / 255.0 * 0.9)[..., None]
        roi = tex[ys0:ys1, xs0:xs1].astype(np.float32)
        tex[ys0:ys1, xs0:xs1] = (roi * (1 - al) + np.array(lc, np.float32) * al).astype(np.uint8)
    t.texture = tex


# --------------------------------------------------------------------------------------------
# frames


@dataclass
class Frame:
    image: np.ndarray  # final BGR uint8 (before JPEG)
    jpeg: bytes
    truth: dict


def _srgb_to_lin_lut() -> np.ndarray:
    x = np.arange(256, dtype=np.float64) / 255.0
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4).astype(np.float32)


_LUT = _srgb_to_lin_lut()


def _lin_to_srgb(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return np.where(x <= 0.0031308, x * 12.92, 1.055 * np.power(x, 1 / 2.4) - 0.055) * 255.0


def _rounded_mask(h: int, w: int, r: float) -> np.ndarray:
    m = np.zeros((h, w), np.uint8)
    r = int(round(r))
    cv2.rectangle(m, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(m, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(m, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return m


def _card_corners_mm(cx, cy, w, h, rot_deg):
    a = math.radians(rot_deg)
    c, s = math.cos(a), math.sin(a)
    local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    return local @ np.array([[c, s], [-s, c]]) + np.array([cx, cy])


def _draw_chip(tex, ppm, ox, oy, x, y, colour, rng, shadow=True):
    r = CHIP_DIAMETER_MM / 2 * ppm
    cx, cy = (x - ox) * ppm, (y - oy) * ppm
    sh = 4
    f = 1 << sh
    C = (int(cx * f), int(cy * f))
    if shadow:
        roi_r = int(r * 1.6)
        x0, y0 = int(cx - roi_r), int(cy - roi_r)
        if x0 >= 0 and y0 >= 0 and x0 + 2 * roi_r < tex.shape[1] and y0 + 2 * roi_r < tex.shape[0]:
            m = np.zeros((2 * roi_r, 2 * roi_r), np.float32)
            cv2.circle(m, (int(cx - x0 + 1.2 * ppm), int(cy - y0 + 1.8 * ppm)), int(r), 1.0, -1)
            m = cv2.GaussianBlur(m, (0, 0), 1.5 * ppm)
            roi = tex[y0 : y0 + 2 * roi_r, x0 : x0 + 2 * roi_r].astype(np.float32)
            tex[y0 : y0 + 2 * roi_r, x0 : x0 + 2 * roi_r] = (roi * (1 - 0.45 * m[..., None])).astype(np.uint8)
    col = tuple(int(v) for v in colour)
    white = (235, 238, 240)
    cv2.circle(tex, C, int(r * f), col, -1, cv2.LINE_AA, sh)
    nstripe = int(rng.choice([4, 6, 8]))
    a0 = float(rng.uniform(0, 360))
    half = 180.0 / nstripe * 0.42
    for k in range(nstripe):
        a = a0 + k * 360.0 / nstripe
        pts = []
        for aa in np.linspace(a - half, a + half, 5):
            pts.append((cx + r * 0.98 * math.cos(math.radians(aa)), cy + r * 0.98 * math.sin(math.radians(aa))))
        for aa in np.linspace(a + half, a - half, 5):
            pts.append((cx + r * 0.74 * math.cos(math.radians(aa)), cy + r * 0.74 * math.sin(math.radians(aa))))
        cv2.fillPoly(tex, [(np.array(pts) * f).astype(np.int32)], white, cv2.LINE_AA, sh)
    cv2.circle(tex, C, int(r * 0.66 * f), white, max(1, int(0.04 * r)), cv2.LINE_AA, sh)
    inner = tuple(int(min(255, v * 1.15 + 18)) for v in colour)
    cv2.circle(tex, C, int(r * 0.60 * f), inner, -1, cv2.LINE_AA, sh)
    val = str(rng.choice(["5", "25", "100", "500", "1K"]))
    fs = r * 0.022
    (tw_, th_), _ = cv2.getTextSize(val, cv2.FONT_HERSHEY_DUPLEX, fs, max(1, int(r * 0.05)))
    tc = white if sum(colour) < 450 else (40, 40, 40)
    cv2.putText(
        tex,
        val,
        (int(cx - tw_ / 2), int(cy + th_ / 2)),
        cv2.FONT_HERSHEY_DUPLEX,
        fs,
        tc,
        max(1, int(r * 0.05)),
        cv2.LINE_AA,
    )
    cv2.circle(tex, C, int(r * f), tuple(int(v * 0.6) for v in colour), max(1, int(0.03 * r)), cv2.LINE_AA, sh)


def sample_conditions(rng: np.random.Generator) -> dict:
    """Photometric and optical settings of one frame."""
    ev = float(rng.uniform(-1.0, 1.0))
    temp = float(rng.normal(0, 0.08))
    wb = [
        1.0 + temp + float(rng.normal(0, 0.02)),
        1.0 + float(rng.normal(0, 0.03)),
        1.0 - temp + float(rng.normal(0, 0.02)),
    ]
    cast = [float(v) for v in rng.normal(0, 0.012, 3)]
    grad_ang = float(rng.uniform(0, 360))
    grad = float(rng.uniform(0.0, 0.35))
    vign = float(rng.uniform(0.0, 0.45))
    glare = rng.random() < 0.33
    motion = rng.random() < 0.2
    return {
        "exposure_ev": round(ev, 3),
        "wb_gains_bgr": [round(v, 4) for v in wb],
        "cast_bgr": [round(v, 4) for v in cast],
        "gradient": {"strength": round(grad, 3), "angle_deg": round(grad_ang, 1)},
        "vignette": round(vign, 3),
        "glare": {"on": bool(glare)},
        "blur_sigma": round(float(rng.uniform(0.3, 1.7)), 3),
        "motion_blur": (
            {
                "on": True,
                "length_px": round(float(rng.uniform(3, 11)), 2),
                "angle_deg": round(float(rng.uniform(0, 180)), 1),
            }
            if motion
            else {"on": False}
        ),
        "noise_sigma": round(float(rng.uniform(1.5, 6.0)), 3),
        "jpeg_quality": int(rng.integers(55, 96)),
    }


def jitter_pose(rng, pose: Pose) -> tuple[Pose, dict]:
    j = {
        "dx_mm": float(rng.normal(0, 1.5)),
        "dy_mm": float(rng.normal(0, 1.5)),
        "dd_mm": float(rng.normal(0, 2.0)),
        "dtilt_deg": float(rng.normal(0, 0.25)),
        "dtilt_dir_deg": float(rng.normal(0, 0.5)),
        "dyaw_deg": float(rng.normal(0, 0.25)),
        "dfocal_rel": float(rng.normal(0, 0.002)),
    }
    p = Pose(
        pose.px + j["dx_mm"],
        pose.py + j["dy_mm"],
        pose.d + j["dd_mm"],
        max(0.0, pose.tilt_deg + j["dtilt_deg"]),
        pose.tilt_dir_deg + j["dtilt_dir_deg"],
        pose.yaw_deg + j["dyaw_deg"],
        pose.focal_px * (1 + j["dfocal_rel"]),
        pose.W,
        pose.H,
    )
    return p, {k: round(v, 4) for k, v in j.items()}


def sample_cards(rng, table: Table, deck: Deck, n: int | None = None) -> list[dict]:
    names = list(table.slots)
    n = int(rng.integers(2, 7)) if n is None else n
    n = min(n, len(names))
    chosen = rng.choice(len(names), size=n, replace=False)
    codes = rng.choice(len(CODES), size=n, replace=False)
    cards = []
    for si, ci in zip(chosen, codes, strict=False):
        nm = names[int(si)]
        x, y, w, h = table.slots[nm]
        r = float(rng.uniform(0, 6.0)) * math.sqrt(rng.random())
        a = float(rng.uniform(0, 2 * math.pi))
        scale = float(rng.uniform(0.95, 1.05))
        rot = float(rng.uniform(-10, 10))
        upside = bool(rng.random() < 0.15)
        cw, ch = deck.card_mm
        cards.append(
            {
                "code": CODES[int(ci)],
                "slot": nm,
                "offset_mm": [round(r * math.cos(a), 3), round(r * math.sin(a), 3)],
                "rotation_deg": round(rot, 3),
                "upside_down": upside,
                "scale": round(scale, 4),
                "size_mm": [round(cw * scale, 3), round(ch * scale, 3)],
                "format": deck.format,
                "centre_mm": [round(x + w / 2 + r * math.cos(a), 3), round(y + h / 2 + r * math.sin(a), 3)],
            }
        )
    return cards


def sample_chips(rng, table: Table) -> list[dict]:
    W, H = table.table_mm
    chips = []
    keep_out = []
    for x, y, w, h in table.slots.values():
        keep_out.append((x - 16, y - 16, x + w + 16, y + h + 16))
    for wd in table.words:  # chips are not put on the printed words
        hw, hh = 0.42 * wd["size_mm"] * len(wd["text"]) + 10, wd["size_mm"] * 0.6 + 6
        keep_out.append((wd["x"] - hw, wd["y"] - hh, wd["x"] + hw, wd["y"] + hh))
    n = int(rng.integers(1, 7))
    tries = 0
    while len(chips) < n and tries < 200:
        tries += 1
        cx = float(rng.uniform(30, W - 30))
        cy = float(rng.uniform(30, H - 30))
        rr = CHIP_DIAMETER_MM / 2 + 3
        if any(cx + rr > a and cx - rr < c and cy + rr > b and cy - rr < d for a, b, c, d in keep_out):
            continue
        if any(math.hypot(cx - o["x"], cy - o["y"]) < CHIP_DIAMETER_MM + 2 for o in chips):
            continue
        stack = int(rng.choice([1, 1, 1, 2, 3]))
        chips.append(
            {"x": round(cx, 1), "y": round(cy, 1), "colour": str(rng.choice(list(CHIP_COLOURS))), "stack": stack}
        )
    return chips


def render_frame(
    rng: np.random.Generator,
    table: Table,
    deck: Deck,
    cards: list[dict] | None = None,
    conditions: dict | None = None,
    empty: bool = False,
    jitter: bool = True,
) -> Frame:
    """One JPEG frame of `table` with `cards` (sampled when None) under `conditions` (sampled when None)."""
    S = SUPERSAMPLE
    cond = sample_conditions(rng) if conditions is None else conditions
    if jitter:
        pose, jit = jitter_pose(rng, table.pose)
    else:
        pose, jit = table.pose, {}
    cards = [] if empty else (sample_cards(rng, table, deck) if cards is None else cards)
    chips = sample_chips(rng, table)
    W, H = pose.W, pose.H
    Hs = pose.homography(S)
    H1 = pose.homography(1.0)
    ppm = table.ppm
    ox, oy = table.texture_origin
    tex = table.texture.copy()
    # chips (a stack: a few chips slightly offset; the top one fully drawn)
    for ch in chips:
        for k in range(ch["stack"]):
            dx, dy = (k - ch["stack"] + 1) * 0.8, (k - ch["stack"] + 1) * 1.2
            crng = np.random.default_rng(abs(hash((ch["x"], ch["y"], k))) % (2**32))
            _draw_chip(tex, ppm, ox, oy, ch["x"] - dx, ch["y"] - dy, CHIP_COLOURS[ch["colour"]], crng, shadow=(k == 0))
    # card shadows on the felt
    light = (float(rng.uniform(-1, 1)), float(rng.uniform(0.3, 1.5)))
    shadow_op = float(rng.uniform(0.25, 0.5))
    for c in cards:
        cw, chh = c["size_mm"]
        rot = c["rotation_deg"] + (180 if c["upside_down"] else 0)
        cm = _card_corners_mm(c["centre_mm"][0] + light[0], c["centre_mm"][1] + light[1], cw, chh, rot)
        q = (cm - [ox, oy]) * ppm
        x0, y0 = np.floor(q.min(0) - 12).astype(int)
        x1, y1 = np.ceil(q.max(0) + 12).astype(int)
        x0, y0 = max(0, x0), max(0, y0)
        x1, y1 = min(tex.shape[1], x1), min(tex.shape[0], y1)
        if x1 <= x0 or y1 <= y0:
            continue
        m = np.zeros((y1 - y0, x1 - x0), np.float32)
        cv2.fillPoly(m, [((q - [x0, y0]) * 16).astype(np.int32)], 1.0, cv2.LINE_AA, 4)
        m = cv2.GaussianBlur(m, (0, 0), 1.2 * ppm)
        roi = tex[y0:y1, x0:x1].astype(np.float32)
        tex[y0:y1, x0:x1] = (roi * (1 - shadow_op * m[..., None])).astype(np.uint8)
    T = np.array([[1 / ppm, 0, ox], [0, 1 / ppm, oy], [0, 0, 1]])
    big = cv2.warpPerspective(
        tex,
        Hs @ T,
        (W * S, H * S),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=tuple(int(v) for v in table.rail["wood_bgr"]),
    )
    del tex
    # cards
    card_masks = []
    for c in cards:
        face = deck.faces[c["code"]]
        cw, chh = c["size_mm"]
        rot = c["rotation_deg"] + (180 if c["upside_down"] else 0)
        cm = _card_corners_mm(c["centre_mm"][0], c["centre_mm"][1], cw, chh, rot)
        qi = project(Hs, cm)
        # pre-shrink the art to about the projected size so the warp does not alias
        proj_h = max(np.linalg.norm(qi[3] - qi[0]), np.linalg.norm(qi[2] - qi[1]))
        target_h = int(max(40, min(face.shape[0], proj_h * 1.15)))
        art = cv2.resize(
            face, (max(8, int(round(face.shape[1] * target_h / face.shape[0]))), target_h), interpolation=cv2.INTER_AREA
        )
        ah, aw = art.shape[:2]
        mask = _rounded_mask(ah, aw, 3.2 / chh * ah)
        src = np.array([[0, 0], [aw, 0], [aw, ah], [0, ah]], np.float32)
        x0, y0 = np.floor(qi.min(0) - 3).astype(int)
        x1, y1 = np.ceil(qi.max(0) + 3).astype(int)
        x0, y0 = max(0, x0), max(0, y0)
        x1, y1 = min(W * S, x1), min(H * S, y1)
        if x1 <= x0 or y1 <= y0:
            card_masks.append(None)
            continue
        M = cv2.getPerspectiveTransform(src, (qi - [x0, y0]).astype(np.float32))
        wa = cv2.warpPerspective(art, M, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        wm = cv2.warpPerspective(mask, M, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderValue=0)
        # a slightly darker paper edge
        edge = cv2.morphologyEx(wm, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)).astype(np.float32) / 255.0 * 0.25
        al = wm.astype(np.float32)[..., None] / 255.0
        roi = big[y0:y1, x0:x1].astype(np.float32)
        out = roi * (1 - al) + wa.astype(np.float32) * al * (1 - edge[..., None])
        big[y0:y1, x0:x1] = np.clip(out, 0, 255).astype(np.uint8)
        card_masks.append((x0, y0, x1, y1, wm))
    # light, in linear RGB at 2x
    lin = _LUT[big]
    del big
    yy, xx = np.mgrid[0 : H * S, 0 : W * S].astype(np.float32)
    xn = (xx / (W * S) - 0.5) * 2
    yn = (yy / (H * S) - 0.5) * 2
    g = cond["gradient"]
    ga = math.radians(g["angle_deg"])
    gain = 1.0 + g["strength"] * 0.5 * (xn * math.cos(ga) + yn * math.sin(ga))
    r2 = (xn**2 * (W / H) ** 2 + yn**2) / (1 + (W / H) ** 2)
    gain *= 1.0 - cond["vignette"] * r2
    # EV 0 puts white card paper at about sRGB 215, as an auto-exposed studio camera would
    gain *= BASE_EXPOSURE * 2.0 ** cond["exposure_ev"]
    lin *= gain[..., None]
    lin *= np.array(cond["wb_gains_bgr"], np.float32)[None, None, :]
    lin += np.array(cond["cast_bgr"], np.float32)[None, None, :] * 0.2
    # glare: a soft elliptic hot spot, centred on a card in half the cases
    glare_map = None
    if cond["glare"]["on"]:
        gl = cond["glare"]
        if "x" not in gl:
            on_card = bool(cards) and rng.random() < 0.5
            if on_card:
                k = int(rng.integers(0, len(cards)))
                cc = project(H1, [cards[k]["centre_mm"]])[0]
                gx, gy = cc + rng.normal(0, 12, 2) * W / 1280
                gl["aimed_at_card"] = cards[k]["code"]
            else:
                gx, gy = rng.uniform(0.1, 0.9) * W, rng.uniform(0.1, 0.9) * H
                gl["aimed_at_card"] = None
            gl.update(
                {
                    "x": round(float(gx), 1),
                    "y": round(float(gy), 1),
                    "radius_px": round(float(rng.uniform(25, 110)) * W / 1280, 1),
                    "aspect": round(float(rng.uniform(0.5, 1.0)), 3),
                    "angle_deg": round(float(rng.uniform(0, 180)), 1),
                    "intensity": round(float(rng.uniform(0.4, 2.0)), 3),
                }
            )
        ca, sa = math.cos(math.radians(gl["angle_deg"])), math.sin(math.radians(gl["angle_deg"]))
        dx = xx / S - gl["x"]
        dy = yy / S - gl["y"]
        u = (dx * ca + dy * sa) / gl["radius_px"]
        v = (-dx * sa + dy * ca) / (gl["radius_px"] * gl["aspect"])
        glare_map = gl["intensity"] * np.exp(-0.5 * (u * u + v * v) ** 1.3)
        lin += glare_map[..., None] * np.array([1.0, 0.98, 0.95], np.float32)[None, None, :]
    del xx, yy, xn, yn, gain, r2
    srgb = _lin_to_srgb(lin).astype(np.float32)
    del lin
    img = cv2.resize(srgb, (W, H), interpolation=cv2.INTER_AREA)
    del srgb
    # optics and motion
    img = cv2.GaussianBlur(img, (0, 0), cond["blur_sigma"])
    mb = cond["motion_blur"]
    if mb["on"]:
        L = mb["length_px"] * W / 1280
        k = int(math.ceil(L)) | 1
        kern = np.zeros((k * 2 + 1, k * 2 + 1), np.float32)
        a = math.radians(mb["angle_deg"])
        c0 = k
        for t_ in np.linspace(-L / 2, L / 2, int(L * 4) + 2):
            kern[int(round(c0 + t_ * math.sin(a))), int(round(c0 + t_ * math.cos(a)))] += 1
        kern /= kern.sum()
        img = cv2.filter2D(img, -1, kern)
    # sensor noise: a little signal-dependent, then 8 bit
    ns = cond["noise_sigma"]
    noise = rng.normal(0, 1, img.shape).astype(np.float32) * (ns * (0.7 + 0.6 * img / 255.0))
    img = np.clip(img + noise + 0.5, 0, 255).astype(np.uint8)
    ok, enc = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, cond["jpeg_quality"]])
    assert ok
    jpeg = enc.tobytes()
    decoded = cv2.imdecode(enc, cv2.IMREAD_COLOR)
    # truth per card, with the actual (jittered) pose
    gray = decoded.max(axis=2)
    gsmall = cv2.resize(glare_map, (W, H), interpolation=cv2.INTER_AREA) if glare_map is not None else None
    for c in cards:
        cw, chh = c["size_mm"]
        rot = c["rotation_deg"] + (180 if c["upside_down"] else 0)
        cm = _card_corners_mm(c["centre_mm"][0], c["centre_mm"][1], cw, chh, rot)
        qi = project(H1, cm)
        c["corners_px"] = [[round(float(a), 2), round(float(b), 2)] for a, b in qi]
        c["centre_px"] = [round(float(v), 2) for v in project(H1, [c["centre_mm"]])[0]]
        c["height_px"] = round(float((np.linalg.norm(qi[3] - qi[0]) + np.linalg.norm(qi[2] - qi[1])) / 2), 2)
        m = np.zeros((H, W), np.uint8)
        cv2.fillPoly(m, [np.round(qi).astype(np.int32)], 1)
        area = int(m.sum())
        clipped = float(((gray >= 250) & (m > 0)).sum()) / max(1, area)
        c["clipped_fraction"] = round(clipped, 4)
        if glare_map is not None:
            c["glare_cover"] = round(float(((gsmall > 0.3) & (m > 0)).sum()) / max(1, area), 4)
            lost = float(((gsmall > INK_LOST_GLARE) & (m > 0)).sum()) / max(1, area)
        else:
            c["glare_cover"] = 0.0
            lost = 0.0
        c["ink_lost_fraction"] = round(lost, 4)
        c["in_frame"] = bool(
            (qi[:, 0] >= 0).all() and (qi[:, 0] < W).all() and (qi[:, 1] >= 0).all() and (qi[:, 1] < H).all()
        )
        # a card is taken as truly unreadable when glare burns even its ink to white on most of it
        c["readable"] = bool(lost < 0.5 and c["in_frame"])
    tilt = math.degrees(math.acos(max(-1.0, min(1.0, pose.rotation()[2, 2]))))
    truth = {
        "size": [W, H],
        "table": table.name,
        "deck": deck.name,
        "felt": table.felt,
        "line": table.line,
        "line_mm": round(table.line_mm, 2),
        "tilt_deg": round(tilt, 3),
        "pose": pose.as_dict(),
        "pose_jitter": jit,
        "homography_img_from_mm": [[float(v) for v in row] for row in H1],
        "conditions": cond,
        "shadow": {"offset_mm": [round(light[0], 3), round(light[1], 3)], "opacity": round(shadow_op, 3)},
        "chips": chips,
        "cards": cards,
    }
    return Frame(decoded, jpeg, truth)


def outline_points(table: Table, rng: np.random.Generator | None = None, click_sigma_px: float = 0.0):
    """The table outline's corners TL TR BR BL in image pixels for the nominal pose (what a technician
    clicks), with optional click error."""
    q = project(table.pose.homography(1.0), table.outline_corners_mm())
    if rng is not None and click_sigma_px > 0:
        q = q + rng.normal(0, click_sigma_px, q.shape)
    return q


if __name__ == "__main__":  # a quick look: python scenes.py OUT.png [deck] [seed]
    import sys

    out = sys.argv[1] if len(sys.argv) > 1 else "scene.png"
    deck = Deck(sys.argv[2] if len(sys.argv) > 2 else "svg-standard")
    rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    t = make_table(rng, "look", deck.card_mm)
    fr = render_frame(rng, t, deck)
    cv2.imwrite(out, fr.image)
    print(json.dumps(fr.truth, indent=1)[:3000])
