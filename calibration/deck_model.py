"""A classifier learned from the studio's own deck at calibration time.

The 52 face images are all the recogniser is given of a deck, so at
calibration it makes its own training set from them: many views of every
face as a camera could deliver it (:func:`calibration.augment.random_view`:
size in pixels, perspective, an outline a pixel or two off, exposure, colour
cast, glare, shadow, blur, motion blur, noise, JPEG). From these it fits a
linear discriminant (LDA): features are the card white-balanced against its
own paper and high-passed (glare and light gradients are smooth, ink is
sharp), then its two corner indexes (rank and suit: this is what tells a
QD from a KH when the two share a court picture), the whole face small (pips,
picture) and its redness. LDA whitens the features by how much views of one
card vary and keeps the 51 directions that separate the 52 cards; a card is
read as the nearest card in that space.

A read is reported only when it is both *near* its card (``distance``, in
units of how views of one card spread: a face-down card, a card under a hand
or a torn outline is far from every card) and *clearly nearer* than to any
other (``margin``: how much further the runner-up lies, relative to the
distance of the card read; a plain log-likelihood ratio was measured to
trust badly blurred views far too much, because they lie far from every
card and their differences are large in absolute terms). Both limits
are set on views held out of the fit, so that no held-out view that would be
read wrong passes them (:meth:`DeckModel.fit`); the self-test reports
which pairs of cards are confused and how often.

A card and its suit twin (7C and 7S, 7H and 7D) differ only in the shape of
their pips and index suits, which blur smears first; the 52-card discriminant
pools how views of all cards vary and weighs that shape little. So each twin
pair also gets a discriminant of its own, fitted on the two cards' views alone
(``ModelReading.twin_lead``: which of the two the card looks like, in units of
how far apart held-out views of the two lie).

Plain numpy: the fit is a few matrix products and one eigen-decomposition
(the ``cv2.ml`` module is gone from OpenCV 5, and a network would need a
training framework the table PC does not have).
"""

from __future__ import annotations

import hashlib
import math
import os
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from calibration.augment import ViewRanges, random_view
from firmware_interfaces.cards import CODES

#: Bump when features or the fit change: cached models of an older version are refitted.
MODEL_VERSION = 12
#: Views per card to fit on, and to set the reject limits on.
FIT_VIEWS = 90
HELD_OUT_VIEWS = 40
#: Threads that make the views (at most the machine's cores).
FIT_THREADS = 4
#: Covariance shrinkage toward a scaled identity (a little keeps 1,800 features well posed).
SHRINKAGE = 0.08
#: The same for a suit-twin discriminant (:func:`_twin_axis`: two cards' 180 views in all the
#: features; the identity carries the directions those few views do not span).
TWIN_SHRINKAGE = 0.08
#: A twin pair is told apart only when at least this share of each card's held-out views lies
#: on its own side of the pair's discriminant (real pairs: 99.9 % of held-out views; two faces
#: printed alike split theirs about evenly, and an axis fitted on noise must not be trusted).
TWIN_SEPARATED = 0.9
#: How much further than the worst held-out view a card may lie and still be read.
DISTANCE_SLACK = 3.0
#: A doubtful card's second look must lie as near its card as this share of held-out views did.
NEAR_PERCENTILE = 97.0
#: The margin limit is this many times the largest margin of a wrong held-out read.
MARGIN_SAFETY = 1.2
#: A margin limit is never below this: the largest wrong held-out margin depends on one view,
#: and across random streams it was measured between 0.4 and 1.5; the benchmarks that found
#: no wrong read ran with limits of 0.9 to 1.0.
MIN_MARGIN = 0.9

#: The grey picture loses what varies slower than this (px of the 112 px wide canonical card):
#: glare, a light gradient and a shadow are smooth, ink is sharp. Measured on the tuned-on
#: decks' hard scenes (80 frames each): svg-cards 418 -> 424 of 448 read, kde-standard
#: 422 -> 425, no wrong read either way; 4 and 10 px did no better.
HIGH_PASS_SIGMA = 6.0
#: A card's redness is restored (scaled up) where its ink lies less than FULL_INK under its
#: paper (grey levels, the paper 1; its darkest INK_SHARE), never by more than FULL_INK/MIN_INK.
#: Clean red pip cards' ink lies 0.63-0.67 under the paper, black ones' 0.9, and 95 % of the
#: augmented views' at least 0.5; a card under the independent harness's veil of glare (its
#: paper clipped white, its pips pale pink) lay 0.15-0.25 under it and read as a black card
#: (a 7H as 7C, a 6H as 6C). Restoring every card's redness instead lost 7 reads on a tuned-on
#: set and read a held-out 5S under glare as 4S (session 42).
FULL_INK = 0.5
MIN_INK = 0.05
INK_SHARE = 0.01
_CORNER = (slice(2, 66), slice(2, 36))
#: Where a canonical card's top-left corner index lies (rows, columns).
INDEX_CORNER = _CORNER
_CORNER_SIZE = (17, 32)
_FACE_SIZE = (28, 40)
_RED_SIZE = (10, 15)


def _normalised(v: np.ndarray) -> np.ndarray:
    """``v`` flattened, less its mean, scaled to unit length (mean and spread from
    cv2.meanStdDev: half numpy's cost, and the same to 1e-8)."""
    mean, spread = cv2.meanStdDev(v)
    length = float(spread[0, 0]) * float(np.sqrt(v.size))
    return (v.reshape(-1) - float(mean[0, 0])) / max(length, 1e-3)


def _low_pass(gray: np.ndarray) -> np.ndarray:
    """``gray`` blurred by about :data:`HIGH_PASS_SIGMA`, at a quarter of the cost: shrunk 4
    times, blurred by a quarter of the sigma, grown back (a card is read up to 30 times a frame)."""
    h, w = gray.shape
    small = cv2.resize(gray, (w // 4, h // 4), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), HIGH_PASS_SIGMA / 4)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _balanced(card: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The grey picture (unblurred) and the redness of a canonical BGR card, white-balanced
    against its own paper: per pixel, so those of the card turned 180° are these turned; the
    redness of a card whose ink lies less than :data:`FULL_INK` under its paper is scaled up
    by one factor for the whole card."""
    # white balance against the card's own paper: undoes exposure and colour cast
    level = np.maximum(_paper(card), 8.0).tolist()
    # each channel divided by its level by cv2.divide into float32: IEEE float32 division as
    # numpy's, bit for bit, at a seventh of the cost (numpy's broadcast over a last axis of 3
    # is slow); the channels split while still uint8 (half the cost of splitting float32 ones)
    b, g, r = (cv2.divide(channel, value, dtype=cv2.CV_32F)
               for channel, value in zip(_channels(card), level, strict=True))
    gray = 0.114 * b + 0.587 * g + 0.299 * r
    red = cv2.max(cv2.subtract(r, cv2.max(b, g)), 0.0)
    # a veil of glare or light lifts the ink towards the paper, and the red with it: the grey
    # is normalised below, the redness is restored here on a card whose ink lies less than
    # FULL_INK under its paper (the darkest INK_SHARE of its inside; every third pixel from the
    # inside's edges, so the card turned 180 degrees gives the same samples)
    inside = gray[6:-6:3, 6:-6:3].reshape(-1)
    k = int(INK_SHARE * (inside.size - 1))
    ink = 1.0 - float(np.partition(inside, k)[k])
    if ink < FULL_INK:
        red = red * (FULL_INK / max(ink, MIN_INK))
    return gray, red


def _channels(card: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A BGR card's three channels, each as float32 when the card is not uint8."""
    b, g, r = cv2.split(card if card.dtype == np.uint8 else card.astype(np.float32))
    return b, g, r


def _paper(card: np.ndarray) -> np.ndarray:
    """Per channel, the level 92 % of a grid of the card's pixels (every third) lie at or
    under: its paper's. From each channel's histogram when the card is uint8 (the same value
    as sorting, at a third of the cost)."""
    sample = card[::3, ::3].reshape(-1, card.shape[2])
    k = int(0.92 * len(sample))
    if card.dtype != np.uint8:
        return np.asarray(np.partition(sample.astype(np.float32), k, axis=0)[k])
    return np.array([np.searchsorted(np.cumsum(np.bincount(sample[:, c], minlength=256)), k + 1)
                     for c in range(sample.shape[1])], np.float32)


def _parts(gray: np.ndarray, red: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The feature blocks, unnormalised: both corner indexes (top-left, and bottom-right seen
    turned 180°), the whole face and its redness."""
    gray = cv2.GaussianBlur(gray, (0, 0), 1.0)
    gray = gray - _low_pass(gray)
    tl = cv2.resize(gray[_CORNER], _CORNER_SIZE, interpolation=cv2.INTER_AREA)
    turned = gray[::-1, ::-1]
    br = cv2.resize(turned[_CORNER], _CORNER_SIZE, interpolation=cv2.INTER_AREA)
    face = cv2.resize(gray[6:-6, 6:-6], _FACE_SIZE, interpolation=cv2.INTER_AREA)
    red = cv2.resize(red[6:-6, 6:-6], _RED_SIZE, interpolation=cv2.INTER_AREA)
    return tl, br, face, red


def _blocks(tl: np.ndarray, br: np.ndarray, face: np.ndarray, red: np.ndarray) -> tuple[np.ndarray, ...]:
    """The feature blocks flattened, the grey ones normalised (see :func:`_assembled`)."""
    return _normalised(tl), _normalised(br), _normalised(face), red.reshape(-1)


def _assembled(tl: np.ndarray, br: np.ndarray, face: np.ndarray, red: np.ndarray) -> np.ndarray:
    """One feature vector from flattened blocks: both corners, the face, the redness."""
    return np.concatenate([tl, br, face, red]).astype(np.float32)


def _features(gray: np.ndarray, red: np.ndarray) -> np.ndarray:
    return _assembled(*_blocks(*_parts(gray, red)))


def card_features(card: np.ndarray) -> np.ndarray:
    """Feature vector of one canonical BGR card picture, as it lies (no turning)."""
    return _features(*_balanced(card))


def both_ways(card: np.ndarray) -> np.ndarray:
    """Features of the card as it lies and turned 180° (2, D).

    Every step (white balance, blur, high pass, shrinking) is symmetric under the turn: the
    paper's level comes from a symmetric sample grid, the Gaussians' borders reflect, the
    shrinking's grid is the same read from either end. So the turned card's blocks are the
    upright card's own, its corners swapped and its face and redness turned: the same
    features as computing them again on the turned picture, to float rounding (3.5e-7 at
    most, measured on random and blurred pictures), at half the cost."""
    tl, br, face, red = _blocks(*_parts(*_balanced(card)))
    # a block turned 180° and flattened is the flattened block reversed; normalising does not
    # care about order, so each block is normalised once for both ways
    return np.stack([_assembled(tl, br, face, red), _assembled(br, tl, face[::-1], red[::-1])])


@dataclass(frozen=True)
class ModelReading:
    """What the deck model makes of one card picture."""

    code: str
    runner_up: str
    flipped: bool
    distance: float  # squared distance to the card read, in spreads of its views (about 51 when typical)
    margin: float  # (runner-up's distance - this one's) / this one's; larger is clearer
    accepted: bool  # near enough and clear enough to be reported
    #: the corner index model's reads of the card's two corners, each on its own: the top-left
    #: one as the card lies, the bottom-right one turned upright (either way up, each holds an
    #: upright index); None when the model has no index model
    indexes: tuple[ModelReading, ModelReading] | None = None
    #: how much more the card looks like ``code`` than like its suit twin, by that pair's own
    #: discriminant (:func:`_twin_axis`): held-out views of ``code`` score a median of +1, of
    #: the twin -1; infinite when the model has no twin discriminants
    twin_lead: float = math.inf


@dataclass
class DeckModel:
    """The fitted discriminant of one deck and its reject limits."""

    projection: np.ndarray  # (D, 51)
    offset: np.ndarray  # (51,)
    means: np.ndarray  # (52, 51)
    max_distance: float
    min_margin: float
    report: dict[str, object] = field(default_factory=dict)
    near_distance: float = 0.0  # 97 % of held-out views of all cards lay this near their card
    #: per card: 97 % of its own held-out views lay this near it (never below ``near_distance``)
    near_by_card: np.ndarray | None = None
    #: the corner index alone (one block: rank and suit, upright), fitted on the same views'
    #: two corners, with limits of its own: what reads a card whose face glare has burnt out
    index: DeckModel | None = None
    #: per card (rows in ``CODES`` order), the axis and offset of its suit-twin discriminant,
    #: scaled and signed so that ``features @ axis - offset`` is its ``twin_lead``
    twin_axes: np.ndarray | None = None  # (52, D)
    twin_offsets: np.ndarray | None = None  # (52,)

    def near_limit(self, code: str) -> float:
        """How near card ``code`` a view must lie to count as near it: as near as 97 % of the
        held-out views of that card did (the recogniser lets a doubtful read lie a little
        farther: ``recognizer.NEAR_SLACK``). A court card's views spread more than a pip
        card's (its picture has more detail for blur and glare to change), so one limit for
        all cards turned away court cards whose reads were clear."""
        if self.near_by_card is None:
            return self.near_distance
        return float(self.near_by_card[CODES.index(code)])

    def read(self, card: np.ndarray) -> ModelReading:
        """Read a canonical card picture (either way up)."""
        features = both_ways(card)
        z = features @ self.projection - self.offset  # (2, 51)
        d = ((z[:, None, :] - self.means[None, :, :]) ** 2).sum(axis=2)  # (2, 52)
        per_code = d.min(axis=0)
        order = np.argsort(per_code)
        best, second = int(order[0]), int(order[1])
        flipped = bool(d[1, best] < d[0, best])
        dist = float(per_code[best])
        margin = float(per_code[second] - dist) / max(dist, 1e-6)
        indexes = None
        if self.index is not None:
            indexes = self.index._index_reads(features[0, :INDEX_DIMS], features[0, INDEX_DIMS : 2 * INDEX_DIMS])
        twin_lead = math.inf
        if self.twin_axes is not None and self.twin_offsets is not None:
            twin_lead = float(features[int(flipped)] @ self.twin_axes[best] - self.twin_offsets[best])
        return ModelReading(CODES[best], CODES[second], flipped, dist, margin,
                            dist <= self.max_distance and margin >= self.min_margin, indexes, twin_lead)

    def _index_reads(self, tl: np.ndarray, br: np.ndarray) -> tuple[ModelReading, ModelReading]:
        """This (index) model's reads of two normalised corner blocks."""
        z = np.stack([tl, br]).astype(np.float32) @ self.projection - self.offset
        d = ((z[:, None, :] - self.means[None, :, :]) ** 2).sum(axis=2)  # (2, 52)
        reads = []
        for row in d:
            order = np.argsort(row)
            best, second = int(order[0]), int(order[1])
            dist = float(row[best])
            margin = float(row[second] - dist) / max(dist, 1e-6)
            reads.append(ModelReading(CODES[best], CODES[second], False, dist, margin,
                                      dist <= self.max_distance and margin >= self.min_margin))
        return reads[0], reads[1]

    def index_names_another(self, m: ModelReading, veto_margin: float | None = None) -> bool:
        """Whether a corner index of the card read as ``m`` names another code: its index
        model's nearest code is another, lying as near as 97 % of held-out index views did
        and clearer than ``veto_margin`` (:data:`INDEX_VETO_MARGIN` when not given). Glare that burns pips away leaves a
        face that reads as a card with fewer pips, far past the margin limit (a held-out
        design's 5S read as 4S at six times it), while an index it left shows the rank."""
        if m.indexes is None or self.index is None:
            return False
        need = INDEX_VETO_MARGIN if veto_margin is None else veto_margin
        return any(r.code != m.code and r.distance <= self.index.near_distance and r.margin >= need
                   for r in m.indexes)

    def index_hidden(self, m: ModelReading) -> bool:
        """Whether a corner of the card read as ``m`` shows no index at all: it lies farther
        from every code than the index model's distance limit (three times as far as 99.5 %
        of held-out index views). A hand over the corner does that; a card partly under a
        hand must be a no-read, however clearly the rest of it reads."""
        if m.indexes is None or self.index is None:
            return False
        return any(r.distance > self.index.max_distance for r in m.indexes)

    @property
    def typical_distance(self) -> float:
        """How far the farthest of nearly all held-out views of a card lay (99.5 %): a doubtful
        read must lie nearer than this, a clear one within :attr:`max_distance`."""
        return self.max_distance / DISTANCE_SLACK

    def why_confused(self, a: str, b: str) -> str:
        """Why two cards may be taken for each other: how far apart their pictures lie, in
        spreads of how views of one card vary (the limit needs about ``sqrt(max_distance)``)."""
        ia, ib = CODES.index(a), CODES.index(b)
        apart = float(np.sqrt(((self.means[ia] - self.means[ib]) ** 2).sum()))
        return (f"{a} and {b} lie {apart:.1f} spreads apart in the model (views of one card spread about "
                f"{np.sqrt(self.typical_distance):.1f}): their indexes and faces differ by "
                f"less than a camera's blur and noise hide")

    # -- fitting -----------------------------------------------------------------------
    @classmethod
    def fit(cls, faces: dict[str, np.ndarray], seed: int = 0, fit_views: int = FIT_VIEWS,
            held_out_views: int = HELD_OUT_VIEWS, ranges: ViewRanges | None = None,
            progress: Callable[[int, int], None] | None = None) -> DeckModel:
        """Fit on ``fit_views`` views per card, set the limits on ``held_out_views`` others."""
        ranges = ranges or ViewRanges()
        n = fit_views + held_out_views

        def views_of(k: int) -> np.ndarray:
            # each card its own random stream, so the fit is the same however threads interleave
            rng = np.random.default_rng([seed, k])
            face = _for_views(faces[CODES[k]], ranges)
            return np.array([card_features(random_view(face, rng, ranges)) for _ in range(n)], np.float32)

        # OpenCV and numpy release the GIL in the heavy calls: threads share the cores
        workers = max(1, min(FIT_THREADS, os.cpu_count() or 1))
        per_card: list[np.ndarray] = []
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for k, views in enumerate(pool.map(views_of, range(len(CODES)))):
                per_card.append(views)
                if progress:
                    progress((k + 1) * n, len(CODES) * n)
        x_fit = [v[:fit_views] for v in per_card]
        x_out = [v[fit_views:] for v in per_card]
        y_fit = [k for k in range(len(CODES)) for _ in range(fit_views)]
        y_out = [k for k in range(len(CODES)) for _ in range(held_out_views)]
        total = len(CODES) * n
        x, y = np.concatenate(x_fit).astype(np.float64), np.array(y_fit)
        projection, offset, means = _lda(x, y, len(CODES))
        model = cls(projection.astype(np.float32), offset.astype(np.float32), means.astype(np.float32), np.inf, 0.0)
        model._set_limits(np.concatenate(x_out), np.array(y_out))
        # the corner index alone: both corners of every view are samples of an upright index
        xi, yi = _index_blocks(x), np.concatenate([y, y])
        projection, offset, means = _lda(xi, yi, len(CODES))
        model.index = cls(projection.astype(np.float32), offset.astype(np.float32), means.astype(np.float32),
                          np.inf, 0.0)
        y_held = np.array(y_out)
        model.index._set_limits(_index_blocks(np.concatenate(x_out)), np.concatenate([y_held, y_held]))
        model._fit_twins(x_fit, x_out)
        if progress:
            progress(total, total)
        return model

    def _fit_twins(self, x_fit: list[np.ndarray], x_out: list[np.ndarray]) -> None:
        """Each card's suit-twin discriminant (:func:`_twin_axis`), from its and its twin's fit
        views, scaled on their held-out views; the self-test's report gains how often a
        held-out view of a card looked at least as much like its twin (``held_out_twin_doubt``)
        and which pairs are not told apart at all (``twins_not_told_apart``: printed alike)."""
        dims = x_fit[0].shape[1]
        axes = np.zeros((len(CODES), dims), np.float32)
        offsets = np.zeros(len(CODES), np.float32)
        alike: list[str] = []
        for a, code in enumerate(CODES):
            b = CODES.index(suit_twin(code))
            if b < a:
                continue
            axis, offset = _twin_axis(x_fit[a], x_fit[b], x_out[a], x_out[b])
            if not axis.any():
                alike.append("/".join(sorted((code, CODES[b]))))
            axes[a], offsets[a] = axis, offset
            axes[b], offsets[b] = -axis, -offset
        self.twin_axes, self.twin_offsets = axes, offsets
        leads = np.concatenate([x_out[k] @ axes[k] - offsets[k] for k in range(len(CODES))])
        # (on the views that also scaled the axes and passed the pairs: a little optimistic)
        self.report["held_out_twin_doubt"] = round(float((leads <= 0).mean()), 5)
        self.report["twins_not_told_apart"] = alike

    def _set_limits(self, x: np.ndarray, y: np.ndarray) -> None:
        z = x @ self.projection - self.offset
        d = ((z[:, None, :] - self.means[None, :, :]) ** 2).sum(axis=2)
        order = np.argsort(d, axis=1)
        best, second = order[:, 0], order[:, 1]
        rows = np.arange(len(y))
        dist = d[rows, best]
        margin = (d[rows, second] - dist) / np.maximum(dist, 1e-6)
        right = best == y
        self.max_distance = float(np.percentile(dist[right], 99.5) * DISTANCE_SLACK) if right.any() else 0.0
        self.near_distance = float(np.percentile(dist[right], NEAR_PERCENTILE)) if right.any() else 0.0
        self.near_by_card = np.array([
            max(self.near_distance, float(np.percentile(dist[right & (y == k)], NEAR_PERCENTILE)))
            if (right & (y == k)).any() else self.near_distance
            for k in range(len(CODES))
        ], np.float32)
        worst_wrong = float(margin[~right].max()) if (~right).any() else 0.0
        self.min_margin = max(MIN_MARGIN, MARGIN_SAFETY * worst_wrong)
        accepted = (dist <= self.max_distance) & (margin >= self.min_margin)
        confusions: dict[str, int] = {}
        for t, b in zip(y[~right], best[~right], strict=False):
            pair = f"{CODES[int(t)]}->{CODES[int(b)]}"
            confusions[pair] = confusions.get(pair, 0) + 1
        self.report = {
            "held_out_views": len(y),
            "held_out_nearest_correct": round(float(right.mean()), 5),
            "held_out_read": round(float((accepted & right).mean()), 5),
            "held_out_wrong_accepted": int((accepted & ~right).sum()),
            "max_distance": round(self.max_distance, 2),
            "near_distance": round(self.near_distance, 2),
            "min_margin": round(self.min_margin, 3),
            "confusions": dict(sorted(confusions.items(), key=lambda kv: -kv[1])[:12]),
        }

    # -- storage -----------------------------------------------------------------------
    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # a name of this process's own: two calibrations (or test workers) may fit the same deck at once
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp.npz")
        near_by_card = self.near_by_card if self.near_by_card is not None else np.full(len(CODES), self.near_distance)
        arrays: dict[str, np.ndarray] = {
            "version": np.array(MODEL_VERSION), "projection": self.projection, "offset": self.offset,
            "means": self.means, "max_distance": np.array(self.max_distance), "min_margin": np.array(self.min_margin),
            "near_distance": np.array(self.near_distance), "near_by_card": near_by_card,
            "report": np.array(repr(self.report)), **self._index_arrays(), **self._twin_arrays()}
        np.savez(tmp, **arrays)  # type: ignore[arg-type]
        tmp.replace(path)

    def _twin_arrays(self) -> dict[str, np.ndarray]:
        if self.twin_axes is None or self.twin_offsets is None:
            return {}
        return {"twin_axes": self.twin_axes, "twin_offsets": self.twin_offsets}

    def _index_arrays(self) -> dict[str, np.ndarray]:
        i = self.index
        if i is None:
            return {}
        return {"index_projection": i.projection, "index_offset": i.offset, "index_means": i.means,
                "index_limits": np.array([i.max_distance, i.min_margin, i.near_distance], np.float64),
                "index_report": np.array(repr(i.report))}

    @classmethod
    def load(cls, path: Path) -> DeckModel | None:
        """The model stored at ``path``, or ``None`` if absent, unreadable or of an older version."""
        try:
            with np.load(path, allow_pickle=False) as z:
                if int(z["version"]) != MODEL_VERSION:
                    return None
                import ast

                report = ast.literal_eval(str(z["report"]))
                projection, offset, means = z["projection"], z["offset"], z["means"]
                near_by_card = z["near_by_card"]
                dims = len(CODES) - 1
                # a model of another shape (a damaged or foreign file) would fail on the first card
                if (projection.ndim != 2 or projection.shape[1] != dims or offset.shape != (dims,)
                        or means.shape != (len(CODES), dims) or near_by_card.shape != (len(CODES),)
                        or not all(np.isfinite(a).all() for a in (projection, offset, means, near_by_card))):
                    return None
                model = cls(projection.astype(np.float32), offset.astype(np.float32), means.astype(np.float32),
                            float(z["max_distance"]), float(z["min_margin"]),
                            report if isinstance(report, dict) else {}, float(z["near_distance"]),
                            near_by_card.astype(np.float32))
                if "index_projection" in z.files:
                    ip, io, im, lim = z["index_projection"], z["index_offset"], z["index_means"], z["index_limits"]
                    if (ip.ndim != 2 or ip.shape != (INDEX_DIMS, dims) or io.shape != (dims,)
                            or im.shape != (len(CODES), dims) or lim.shape != (3,)
                            or not all(np.isfinite(a).all() for a in (ip, io, im, lim))):
                        return None
                    index_report = ast.literal_eval(str(z["index_report"]))
                    model.index = cls(ip.astype(np.float32), io.astype(np.float32), im.astype(np.float32),
                                      float(lim[0]), float(lim[1]),
                                      index_report if isinstance(index_report, dict) else {}, float(lim[2]))
                # every model of this version has its twin discriminants: without them the twin
                # test would pass every read (a lead of +inf)
                ta, to = z["twin_axes"], z["twin_offsets"]
                if (ta.shape != (len(CODES), projection.shape[0]) or to.shape != (len(CODES),)
                        or not all(np.issubdtype(a.dtype, np.floating) for a in (ta, to))
                        or not (np.isfinite(ta).all() and np.isfinite(to).all())):
                    return None
                model.twin_axes, model.twin_offsets = ta.astype(np.float32), to.astype(np.float32)
                return model
        except (OSError, KeyError, ValueError, SyntaxError, TypeError, EOFError, zipfile.BadZipFile):
            # a damaged or foreign file (truncated, a flipped bit, arrays of strings): refitted
            return None


#: How clear a corner index's read of another code must be to veto a read (see
#: :meth:`DeckModel.index_names_another`).
INDEX_VETO_MARGIN = 0.3
#: Length of one corner index block of the features (the first two blocks are the two corners).
INDEX_DIMS = _CORNER_SIZE[0] * _CORNER_SIZE[1]


def _index_blocks(x: np.ndarray) -> np.ndarray:
    """Both corner blocks of feature rows ``x``, as rows of their own: top-left ones, then
    bottom-right ones (turned upright)."""
    return np.concatenate([x[:, :INDEX_DIMS], x[:, INDEX_DIMS : 2 * INDEX_DIMS]])


def suit_twin(code: str) -> str:
    """The card of the same rank in the other suit of the same colour (7C -> 7S, 7H -> 7D)."""
    return code[0] + {"C": "S", "S": "C", "H": "D", "D": "H"}[code[1]]


def _twin_axis(fit_a: np.ndarray, fit_b: np.ndarray, held_a: np.ndarray,
               held_b: np.ndarray) -> tuple[np.ndarray, float]:
    """The axis and offset that tell card a's views from its twin b's: a two-class linear
    discriminant whose covariance is these two cards' own (``fit_*``, shrunk by
    :data:`TWIN_SHRINKAGE`), scaled so that held-out views (``held_*``) of a score a median of
    +1 and of b -1. Zero (a lead of 0 for every view: the twin is never told apart) unless
    :data:`TWIN_SEPARATED` of each card's held-out views fall on its own side.

    A heavily blurred club reads as its spade in the 52-card discriminant, twice past the
    margin limit (a harness 3C, session 42), while this pair's own axis still put it nearer the
    club."""
    mean_a, mean_b = fit_a.mean(axis=0).astype(np.float64), fit_b.mean(axis=0).astype(np.float64)
    centred = np.concatenate([fit_a - mean_a, fit_b - mean_b]).astype(np.float64)
    n, dims = centred.shape
    # covariance S = alpha I + beta C'C; solved through the n x n system (Woodbury), as the
    # two cards' views are far fewer than the features
    beta = (1 - TWIN_SHRINKAGE) / max(1, n - 2)
    alpha = TWIN_SHRINKAGE * float((centred**2).sum()) / max(1, n - 2) / dims
    v = mean_a - mean_b
    small = (alpha / beta) * np.eye(n) + centred @ centred.T
    w = (v - centred.T @ np.linalg.solve(small, centred @ v)) / alpha
    score_a, score_b = held_a @ w, held_b @ w
    on_a, on_b = float(np.median(score_a)), float(np.median(score_b))
    half, middle = (on_a - on_b) / 2, (on_a + on_b) / 2
    if not (half > 0 and np.mean(score_a > middle) >= TWIN_SEPARATED and np.mean(score_b < middle) >= TWIN_SEPARATED):
        return np.zeros(dims, np.float32), 0.0
    return (w / half).astype(np.float32), middle / half


def _for_views(face: np.ndarray, ranges: ViewRanges) -> np.ndarray:
    """The face shrunk once to the largest size a view needs (views shrink it further)."""
    width = int(ranges.card_width_px[1] * 1.5)
    if face.shape[1] <= width:
        return face
    return cv2.resize(face, (width, round(face.shape[0] * width / face.shape[1])), interpolation=cv2.INTER_AREA)


def _lda(x: np.ndarray, y: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Projection (D, classes-1) whitening the within-class spread, its offset, and the class means."""
    means = np.array([x[y == k].mean(axis=0) for k in range(classes)])
    centred = x - means[y]
    within = centred.T @ centred / max(1, len(x) - classes)
    scale = float(np.trace(within)) / within.shape[0]
    within = (1 - SHRINKAGE) * within + SHRINKAGE * scale * np.eye(within.shape[0])
    vals, vecs = np.linalg.eigh(within)
    whiten = vecs / np.sqrt(np.maximum(vals, 1e-12))
    grand = means.mean(axis=0)
    mw = (means - grand) @ whiten
    _, _, vt = np.linalg.svd(mw, full_matrices=False)
    projection = whiten @ vt[: classes - 1].T
    offset = grand @ projection
    return projection, offset, (means @ projection - offset)


def faces_digest(faces: dict[str, np.ndarray]) -> str:
    """A short hash of the 52 faces: a cached model is reused only for the very same deck pictures."""
    h = hashlib.sha256(f"v{MODEL_VERSION}".encode())
    for code in CODES:
        f = np.ascontiguousarray(faces[code])
        h.update(code.encode() + str(f.shape).encode() + f.tobytes())
    return h.hexdigest()[:24]


def model_cache_dir() -> Path:
    """Where fitted models are kept by :func:`faces_digest` (``$TABLE_CONTROLLER_CACHE``)."""
    base = os.environ.get("TABLE_CONTROLLER_CACHE")
    root = Path(base) if base else Path.home() / ".cache" / "table-controller"
    return root / "deck-models"


def model_for(faces: dict[str, np.ndarray], progress: Callable[[int, int], None] | None = None) -> DeckModel:
    """The deck model of these faces: from the cache when this very deck was fitted before
    on this machine, else fitted now (about 20 s on one core) and cached."""
    path = model_cache_dir() / f"{faces_digest(faces)}.npz"
    model = DeckModel.load(path)
    if model is None:
        model = DeckModel.fit(faces, progress=progress)
        try:
            model.save(path)
        except OSError:
            pass  # a read-only home: fit again next time rather than fail
    return model
