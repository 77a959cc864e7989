"""Card templates from the studio's own deck, and the index reader that uses them.

Every card is looked at the same way: warped upright to a canonical
:data:`CARD_SIZE` picture; its rank+suit index sits in the top-left corner
and, upside down, in the bottom-right corner. A template is the index region
of each corner of each of the 52 faces (104 patches). A card on the table is
read by normalised cross-correlation of both its corners against all
templates, over small shifts, under both 0° and 180° hypotheses; the score of
a code is the mean of its two corners. Its *margin* over the runner-up code is
what makes a read trustworthy.

Templates are stored as 52 canonical PNG faces in ``CAL_DIR/templates/``
(a technician can look at them) and rebuilt on load.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from calibration.errors import CalibrationFileError
from firmware_interfaces.cards import CODES, parse_code
from firmware_interfaces.errors import UnknownCardCode

if TYPE_CHECKING:
    from calibration.deck_model import DeckModel

#: Canonical upright card, (width, height) pixels.
CARD_SIZE = (112, 160)
#: Shift search in canonical pixels, each way.
SHIFT = 4
#: Index patch (x, y, w, h) inside the canonical card, clear of the search margin.
INDEX_PATCH = (SHIFT, SHIFT, 30, 60)
_WIN_W = INDEX_PATCH[2] + 2 * SHIFT
_WIN_H = INDEX_PATCH[3] + 2 * SHIFT
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")
#: The fitted deck model inside a calibration folder.
MODEL_FILE = "deck_model.npz"


_BLAS: Any = None  # None: not looked up yet; False: no threadpoolctl; else its controller


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run numpy's products on one thread: the template products are small, and BLAS
    threads only fight the controller's other work on a two-core box (measured: a 25 ms
    frame took up to 600 ms). Uses ``threadpoolctl`` when installed."""
    global _BLAS
    if _BLAS is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            _BLAS = False
        else:
            _BLAS = ThreadpoolController()
    if _BLAS is False:
        yield
        return
    with _BLAS.limit(limits=1, user_api="blas"):
        yield


def canonical_corners() -> np.ndarray:
    w, h = CARD_SIZE
    return np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float32)


def warp_card(frame: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """The card whose image corners are TL, TR, BR, BL, warped upright to :data:`CARD_SIZE`."""
    m = cv2.getPerspectiveTransform(np.asarray(corners, dtype=np.float32), canonical_corners())
    return cv2.warpPerspective(frame, m, CARD_SIZE, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _gray(card: np.ndarray) -> np.ndarray:
    g = card if card.ndim == 2 else cv2.cvtColor(card, cv2.COLOR_BGR2GRAY)
    return cv2.GaussianBlur(g.astype(np.float32), (0, 0), 1.0)


def corner_windows(card: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The top-left search windows of the canonical card and of the card turned 180°."""
    g = _gray(card)
    a = g[:_WIN_H, :_WIN_W]
    b = g[::-1, ::-1][:_WIN_H, :_WIN_W]
    return np.ascontiguousarray(a), np.ascontiguousarray(b)


#: Whole-card feature: the canonical card less a border, at half resolution.
WHOLE_MARGIN = 6
WHOLE_SIZE = ((CARD_SIZE[0] - 2 * WHOLE_MARGIN) // 2, (CARD_SIZE[1] - 2 * WHOLE_MARGIN) // 2)


def whole_features(card: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The whole face small and blurred, upright and turned 180°, normalised: its grey
    picture (pips, court figure) followed by its redness (red suits against black ones)."""
    m = WHOLE_MARGIN
    inner = card[m:-m, m:-m]
    small: np.ndarray = cv2.resize(inner, WHOLE_SIZE, interpolation=cv2.INTER_AREA).astype(np.float32)
    small = cv2.GaussianBlur(small, (0, 0), 1.0)
    if small.ndim == 2:
        gray, red = small, np.zeros_like(small)
    else:
        b, g, r = small[:, :, 0], small[:, :, 1], small[:, :, 2]
        gray = 0.114 * b + 0.587 * g + 0.299 * r
        red = np.maximum(r - np.maximum(g, b), 0.0)
    feats = []
    for turn in (False, True):
        gg, rr = (gray[::-1, ::-1], red[::-1, ::-1]) if turn else (gray, red)
        gv = _normalise_rows(gg.reshape(1, -1))[0]
        rv = rr.reshape(-1) / 255.0
        rv = rv / max(float(np.linalg.norm(rv)), RED_FLOOR)
        feats.append((np.concatenate([gv, REDNESS_WEIGHT * rv]) / np.sqrt(1 + REDNESS_WEIGHT**2)).astype(np.float32))
    return feats[0], feats[1]


#: A card with less red than this (norm of the redness map / 255) counts as black.
RED_FLOOR = 3.0
REDNESS_WEIGHT = 0.7


def _normalise_rows(m: np.ndarray) -> np.ndarray:
    m = m - m.mean(axis=1, keepdims=True)
    n = np.linalg.norm(m, axis=1, keepdims=True)
    rows: np.ndarray = m / np.maximum(n, 1e-3)
    return rows


@dataclass(frozen=True, eq=False)
class _ShiftedPatches:
    """Every (2*SHIFT+1)^2 shifted index patch of a corner window as a centred row, with
    each one's norm: their normalised cross-correlation with the (normalised) templates is
    the rows' product over these norms. The norms come from integral images, so the 81 rows
    of 1,800 pixels are centred but never measured or divided (``index_lead`` costs about a
    third of what it did, a template read a tenth less)."""

    rows: np.ndarray  # (shifts, patch pixels) float32, each less its own mean
    norms: np.ndarray  # (shifts,) each row's norm, at least 1e-3

    @classmethod
    def of(cls, window: np.ndarray) -> _ShiftedPatches:
        _, _, pw, ph = INDEX_PATCH
        n = ph * pw
        # the window's level taken off first (in float32 whatever it came as): the sums of
        # squares below then lose nothing to the level of a bright corner
        window = window.astype(np.float32) - np.float32(window.mean(dtype=np.float64))
        total, squares = cv2.integral2(window, sdepth=cv2.CV_64F, sqdepth=cv2.CV_64F)
        sums = (total[ph:, pw:] - total[:-ph, pw:] - total[ph:, :-pw] + total[:-ph, :-pw]).reshape(-1)
        sq = (squares[ph:, pw:] - squares[:-ph, pw:] - squares[ph:, :-pw] + squares[:-ph, :-pw]).reshape(-1)
        norms = np.sqrt(np.maximum(sq - sums * sums / n, 0.0))
        # each row centred on its own mean: a patch burnt flat is then 0 and scores 0, as in
        # the plain computation, even where the window around it is not flat (a felt rim)
        rows = np.lib.stride_tricks.sliding_window_view(window, (ph, pw)).reshape(-1, n)  # a copy
        np.subtract(rows, (sums / n).astype(np.float32)[:, None], out=rows)
        return cls(rows, np.maximum(norms, 1e-3).astype(np.float32))

    def scores(self, templates: np.ndarray) -> np.ndarray:
        """NCC of every shifted patch (rows) with every normalised template (columns)."""
        out: np.ndarray = (self.rows @ templates) / self.norms[:, None]
        return out

    def normalised(self, k: int) -> np.ndarray:
        """Shifted patch ``k``, centred and scaled to unit norm."""
        out: np.ndarray = self.rows[k] / self.norms[k]
        return out


#: A card's two corners' shifted index patches (:meth:`CardTemplates.corner_patches`).
CornerPatches = tuple[_ShiftedPatches, _ShiftedPatches]

#: How many runner-up codes stage 2 weighs the winner against, and how close they must score.
RIVALS = 6
RIVAL_WINDOW = 0.25


def _pair_position(x: np.ndarray, t1: np.ndarray, t2: np.ndarray, sigma: float) -> tuple[float, float]:
    """Where ``x`` lies on the line from template ``t2`` (0) to ``t1`` (1), measured along
    the direction in which they differ (0.5 is halfway, 1 is exactly ``t1``), and how many
    noise widths ``sigma`` it lies past the halfway point (a z-score: small when the two
    templates differ by less than the picture's own noise)."""
    v = t1 - t2
    d = float(np.linalg.norm(v))
    if d < 1e-9:
        return 0.5, 0.0
    along = float((x - t2) @ v) / d  # distance from t2 along the unit direction
    return along / d, (along - d / 2) / sigma


def _patch(window: np.ndarray) -> np.ndarray:
    x, y, w, h = INDEX_PATCH
    return window[y : y + h, x : x + w].reshape(-1)


@dataclass(frozen=True)
class Reading:
    """Result of reading one canonical card: best code, its score, the runner-up, 180° flag."""

    code: str
    score: float
    second_code: str
    second_score: float
    flipped: bool
    margin: float  # 0..1: worst two-class position of the reading between the winner and a rival
    z: float = 0.0  # worst distance past the halfway point to a rival, in noise widths


class CardTemplates:
    """The 52 index templates of one deck design, and the deck model learned from its faces
    (:attr:`model`, fitted on first use or loaded from the calibration folder)."""

    def __init__(self, faces: dict[str, np.ndarray], model: DeckModel | None = None):
        missing = [c for c in CODES if c not in faces]
        if missing:
            raise CalibrationFileError(f"templates are missing {len(missing)} card(s): {' '.join(missing)}")
        self.codes: tuple[str, ...] = CODES
        self._source_faces = {c: faces[c] for c in CODES}
        self._model = model
        self.faces = {c: cv2.resize(faces[c], CARD_SIZE, interpolation=cv2.INTER_AREA)
                      if faces[c].shape[:2] != CARD_SIZE[::-1] else faces[c].copy() for c in CODES}
        for face in self.faces.values():
            face.setflags(write=False)  # what the index patches were made from (the alignment keeps it too)
        tl, br = [], []
        for c in CODES:
            a, b = corner_windows(self.faces[c])
            tl.append(_patch(a))
            br.append(_patch(b))
        # rows: 52 top-left templates, then 52 bottom-right (turned) templates
        self._rows = np.ascontiguousarray(_normalise_rows(np.array(tl + br, dtype=np.float32)))
        self._t = np.ascontiguousarray(self._rows.T)
        self._wrows = np.ascontiguousarray(np.array([whole_features(self.faces[c])[0] for c in CODES], np.float32))
        self._w = np.ascontiguousarray(self._wrows.T)

    @property
    def model(self) -> DeckModel:
        """The classifier learned from this deck (see :mod:`calibration.deck_model`)."""
        if self._model is None:
            self._model = self.fit_model()
        return self._model

    def fit_model(self, progress: Callable[[int, int], None] | None = None) -> DeckModel:
        """Fit (or fetch from this machine's cache) the deck model from the faces given."""
        from calibration.deck_model import model_for

        with one_blas_thread():
            self._model = model_for(self._source_faces, progress)
        return self._model

    def index_lead(self, card: np.ndarray, code: str, rival: str) -> float:
        """How much better ``code``'s corner index matches the card than ``rival``'s (NCC, best
        shift, either way up), at the clearer of the card's two corners: the one where either
        matches best. A glare spot or a finger rarely covers both corners, and the index is
        where two pip cards one pip apart differ most plainly."""
        return self.index_leads(card, code, [rival])[0]

    def index_leads(self, card: np.ndarray, code: str, rivals: list[str],
                    patches: CornerPatches | None = None) -> list[float]:
        """:meth:`index_lead` of ``code`` over each of ``rivals`` (the same numbers), the corner
        windows' shifted patches made once for them all (they are most of a lead's 0.25 ms), or
        taken from ``patches`` (:meth:`corner_patches` of this ``card``: a caller that asks a
        card's leads more than once makes them once)."""
        if not rivals:
            return []
        n, i = len(self.codes), self.codes.index(code)
        if patches is None:
            patches = self.corner_patches(card)
        leads = []
        for rival in rivals:
            j = self.codes.index(rival)
            # the two codes' templates alone, either way up (4 of 104 columns: 0.6 -> 0.04 ms)
            pair = self._t[:, [i, n + i, j, n + j]]
            at_corners = []
            for corner in patches:
                best = corner.scores(pair).max(axis=0)
                mine, theirs = max(best[0], best[1]), max(best[2], best[3])
                at_corners.append((float(max(mine, theirs)), float(mine - theirs)))
            leads.append(max(at_corners)[1])  # at the corner where either matches best
        return leads

    @staticmethod
    def corner_patches(card: np.ndarray) -> CornerPatches:
        """Both corners' shifted index patches of ``card``, as :meth:`index_leads` takes them."""
        a, b = corner_windows(card)
        return _ShiftedPatches.of(a), _ShiftedPatches.of(b)

    def _stage_one(self, card: np.ndarray) -> tuple[_ShiftedPatches, _ShiftedPatches, np.ndarray, np.ndarray,
                                                    np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Stage 1 of :meth:`read`: the corners' shifted patches and their NCC with every
        template, the whole face's features both ways up, and each code's score upright and
        turned."""
        a, b = corner_windows(card)
        pa, pb = _ShiftedPatches.of(a), _ShiftedPatches.of(b)
        sa_all, sb_all = pa.scores(self._t), pb.scores(self._t)  # (shifts, 104)
        sa, sb = sa_all.max(axis=0), sb_all.max(axis=0)
        w_up, w_turned = whole_features(card)
        su, sf = w_up @ self._w, w_turned @ self._w  # (52,)
        n = len(self.codes)
        upright = 0.25 * (sa[:n] + sb[n:]) + 0.5 * su
        flipped = 0.25 * (sa[n:] + sb[:n]) + 0.5 * sf
        return pa, pb, sa_all, sb_all, w_up, w_turned, upright, flipped

    def likeliest(self, card: np.ndarray, k: int) -> list[tuple[str, bool]]:
        """The ``k`` codes whose templates match ``card`` best (stage 1 of :meth:`read`: the
        corner indexes searched over shifts, so an outline a few pixels off still ranks its
        card high), each with whether it lies turned 180°."""
        *_, upright, flipped = self._stage_one(card)
        scores = np.maximum(upright, flipped)
        return [(self.codes[int(i)], bool(flipped[i] > upright[i])) for i in np.argsort(scores)[::-1][:k]]

    def best_code(self, card: np.ndarray) -> str:
        """The code :meth:`read` reads ``card`` as, from stage 1 alone (stage 2 only measures
        how clearly: the recogniser asks for the rank alone, 0.3 ms a read less)."""
        return self.likeliest(card, 1)[0][0]

    def read(self, card: np.ndarray) -> Reading:
        """Read a canonical card picture (see :func:`warp_card`).

        Stage 1 ranks all 52 codes by normalised cross-correlation (NCC) of
        both corner indexes (best shift) and of the whole face (pips or
        picture, small), best of 0°/180°. Stage 2 weighs the winner against every close rival
        along the direction in which their templates differ (a two-class linear
        discriminant), so that a 5 is told from a 6 by the stroke that differs,
        not by the white paper they share: ``Reading.margin`` is the worst of
        these pairwise margins, 1 for a clean read, 0 for a coin toss.
        """
        pa, pb, sa_all, sb_all, w_up, w_turned, upright, flipped = self._stage_one(card)
        n = len(self.codes)
        scores = np.maximum(upright, flipped)
        order = np.argsort(scores)[::-1]
        best = int(order[0])
        is_flipped = bool(flipped[best] > upright[best])
        # columns used by views A and B under the winner's orientation
        col_a = (best + n) if is_flipped else best
        col_b = best if is_flipped else (best + n)
        xa = pa.normalised(int(np.argmax(sa_all[:, col_a])))
        xb = pb.normalised(int(np.argmax(sb_all[:, col_b])))
        xw = w_turned if is_flipped else w_up
        x = np.concatenate([xa, xb, xw])
        t1 = np.concatenate([self._rows[col_a], self._rows[col_b], self._wrows[best]])
        rivals = [int(c) for c in order[1:RIVALS + 1] if scores[best] - scores[c] < RIVAL_WINDOW]
        if not rivals:
            rivals = [int(order[1])]
        # noise of this picture per dimension, from how far it lies from its own template
        sigma = max(float(np.linalg.norm(x - t1)) / np.sqrt(x.size), 1e-6)
        t_min, z_min, worst = 1e9, 1e9, rivals[0]
        for r in rivals:
            rival_a, rival_b = (r + n, r) if is_flipped else (r, r + n)
            t2 = np.concatenate([self._rows[rival_a], self._rows[rival_b], self._wrows[r]])
            t, z = _pair_position(x, t1, t2, sigma)
            if t < t_min:
                t_min, worst = t, r
            z_min = min(z_min, z)
        return Reading(self.codes[best], float(scores[best]), self.codes[worst], float(scores[worst]),
                       is_flipped, float(np.clip(t_min, 0.0, 1.0)), float(z_min))

    def self_test(self, trials: int = 4, seed: int = 0,
                  progress: Callable[[int, int], None] | None = None) -> dict:  # type: ignore[type-arg]
        """Read every card back through the deck model from ``trials`` fresh views each (a
        camera on a fair day: :data:`calibration.augment.FAIR_DAY`), as the recogniser would.

        Returns ``{"cards": n, "correct": k, "accuracy": k/n, "min_margin": m,
        "confusions": ["AC->AS", ...], "pairs": [{"cards": ["AC", "AS"], "why": ...}],
        "model": {held-out figures of the fit}}``. Below 100 % the pairs name the two cards it
        cannot tell apart and how far apart their pictures lie in units of how much views
        of one card vary."""
        with one_blas_thread():
            model = self.model
            return _self_test(self, model, trials, seed, progress)

    def save(self, cal_dir: Path) -> Path:
        """Write ``templates/*.png`` and the deck model (``deck_model.npz``) into ``cal_dir``."""
        out = cal_dir / "templates"
        out.mkdir(parents=True, exist_ok=True)
        for c in self.codes:
            cv2.imwrite(str(out / f"{c}.png"), self.faces[c])
        self.model.save(cal_dir / MODEL_FILE)
        return out

    @classmethod
    def load(cls, cal_dir: Path) -> CardTemplates:
        """Read ``CAL_DIR/templates/*.png``; raises :class:`CalibrationFileError` naming what is missing."""
        folder = cal_dir / "templates"
        if not folder.is_dir():
            raise CalibrationFileError(f"no templates in {cal_dir}: run `table-controller calibrate templates`")
        faces = {}
        for c in CODES:
            img = cv2.imread(str(folder / f"{c}.png"), cv2.IMREAD_COLOR)
            if img is None:
                raise CalibrationFileError(f"template {folder / (c + '.png')} is missing or unreadable")
            faces[c] = img
        from calibration.deck_model import DeckModel

        return cls(faces, DeckModel.load(cal_dir / MODEL_FILE))


def _self_test(templates: CardTemplates, model: DeckModel, trials: int, seed: int,
               progress: Callable[[int, int], None] | None) -> dict:  # type: ignore[type-arg]
    from calibration.augment import FAIR_DAY, random_view
    from calibration.deck_model import suit_twin

    rng = np.random.default_rng(seed)
    correct, total, margins, confusions = 0, 0, [], []
    pairs: dict[tuple[str, str], int] = {}
    for i, code in enumerate(templates.codes):
        for _ in range(trials):
            view = random_view(templates._source_faces[code], rng, FAIR_DAY)
            if rng.random() < 0.5:
                view = np.ascontiguousarray(view[::-1, ::-1])
            r = model.read(view)
            total += 1
            margins.append(r.margin)
            # the recogniser reads a card only if it looks more like it than like its suit twin
            if r.code == code and r.accepted and r.twin_lead > 0:
                correct += 1
            else:
                other = r.code if r.code != code else suit_twin(code) if r.twin_lead <= 0 else r.runner_up
                confusions.append(f"{code}->{other}")
                key = (min(code, other), max(code, other))
                pairs[key] = pairs.get(key, 0) + 1
        if progress:
            progress(i + 1, len(templates.codes))
    return {
        "cards": total, "correct": correct, "accuracy": correct / total,
        "min_margin": round(float(min(margins)), 4), "confusions": confusions,
        "pairs": [{"cards": list(k), "misses": n, "why": model.why_confused(*k)} for k, n in sorted(pairs.items())],
        "model": model.report,
        # the corner index read alone, on the same held-out views (what reads a card glare burnt out)
        "index_model": model.index.report if model.index is not None else None,
    }


def code_from_filename(path: Path) -> str:
    """``AS.png`` / ``10H.jpg`` / ``th.png`` -> canonical code; raises UnknownCardCode naming the file."""
    try:
        return parse_code(path.stem)
    except UnknownCardCode as e:
        raise UnknownCardCode(f"{path.name}: file name is not a card code ({e})") from None


def find_card_in_photo(image: np.ndarray) -> np.ndarray:
    """The card of a frontal photo, upright and cropped to the card's outline.

    A photo of a card on a darker background is cut to the largest bright
    quadrilateral; a picture that is the card already is kept whole.
    """
    h, w = image.shape[:2]
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    pad = 8
    padded = cv2.copyMakeBorder(gray, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    _, mask = cv2.threshold(padded, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if contours:
        big = max(contours, key=cv2.contourArea)
        if cv2.contourArea(big) > 0.2 * w * h:
            rect = cv2.minAreaRect(big)
            box = cv2.boxPoints(rect) - pad
            box = order_portrait(box)
            if cv2.contourArea(big) < 0.97 * (w + 2 * pad) * (h + 2 * pad):
                return warp_card(image, box)
    return cv2.resize(image, CARD_SIZE, interpolation=cv2.INTER_AREA)


def order_portrait(pts: np.ndarray) -> np.ndarray:
    """Order 4 rectangle corners TL, TR, BR, BL with the long side vertical
    (one of the two upright readings; the reader tries both)."""
    pts = np.asarray(pts, dtype=np.float32).reshape(4, 2)
    # four points: plain floats are several times faster than numpy's small-array calls here
    xy = pts.tolist()
    cx, cy = sum(p[0] for p in xy) / 4, sum(p[1] for p in xy) / 4
    order = sorted(range(4), key=lambda k: math.atan2(xy[k][1] - cy, xy[k][0] - cx))
    # clockwise in image coordinates (y down), starting near -180°; then rotated so that
    # pts[0]->pts[1] is a short side and pts[0] is the top-left-most candidate
    a, b, c = xy[order[0]], xy[order[1]], xy[order[2]]
    if math.hypot(b[0] - a[0], b[1] - a[1]) > math.hypot(c[0] - b[0], c[1] - b[1]):
        order = order[1:] + order[:1]
    if xy[order[0]][1] + xy[order[1]][1] > xy[order[2]][1] + xy[order[3]][1]:
        order = order[2:] + order[:2]  # short side at the bottom: start at the other one
    return np.array([xy[k] for k in order], np.float32)  # float32 -> float -> float32: the same values


def load_face_images(folder: Path, progress: Callable[[int, int], None] | None = None) -> dict[str, np.ndarray]:
    """Read one image per card from ``folder`` (named by code), each cut to its card."""
    if not folder.is_dir():
        raise CalibrationFileError(f"template image folder {folder} does not exist")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    faces: dict[str, np.ndarray] = {}
    for i, path in enumerate(files):
        code = code_from_filename(path)
        if code in faces:
            raise CalibrationFileError(f"{path.name}: card {code} has two images in {folder}")
        img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if img is None:
            raise CalibrationFileError(f"cannot read image {path}")
        if img.ndim == 3 and img.shape[2] == 4:
            a = img[:, :, 3:4].astype(np.float32) / 255
            img = (img[:, :, :3] * a + 255 * (1 - a)).astype(np.uint8)
        elif img.ndim == 2:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
        faces[code] = find_card_in_photo(img)
        if progress:
            progress(i + 1, len(files))
    missing = [c for c in CODES if c not in faces]
    if missing:
        raise CalibrationFileError(f"{folder}: no image for {len(missing)} card(s): {' '.join(missing)}")
    return faces


def build_templates(faces: dict[str, np.ndarray] | Iterable[tuple[str, np.ndarray]]) -> CardTemplates:
    """Templates from upright card faces by code."""
    return CardTemplates(dict(faces))


def write_report(cal_dir: Path, report: dict) -> Path:  # type: ignore[type-arg]
    path = cal_dir / "templates.json"
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return path
