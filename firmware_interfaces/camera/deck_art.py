"""Real playing-card artwork for the simulated camera, the tests and the benchmark.

Two families of deck design install through the package registries
(``scripts/install-card-art.sh`` installs both):

* KDE's SVG decks (Debian ``kdegames-card-data-kf5``, under
  ``/usr/share/carddecks/svg-*/``): one ``.svgz`` holding every card as an
  element with an id such as ``queen_heart`` or ``10_spade``. Rendering one
  element needs an element-aware renderer: ``rsvg-convert --export-id``
  (Debian ``librsvg2-bin``).
* The npm package ``svg-cards``: one PNG per card (``png/2x/heart_queen.png``).

Rendered faces are cached as PNG files (``TABLE_CONTROLLER_CACHE`` or
``~/.cache/table-controller/card-art``) so that a deck is rendered once per
machine. Every face is returned as an upright BGR image of the card alone,
its transparent rounded corners filled with white.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from firmware_interfaces.cards import CODES as CODES  # the scene renderer's import
from firmware_interfaces.errors import DeviceConfigError

#: Where ``scripts/install-card-art.sh`` puts the npm package.
CARD_ART_ROOT = Path(os.environ.get("TABLE_CONTROLLER_CARD_ART", "/opt/card-art"))
KDE_DECKS_ROOT = Path("/usr/share/carddecks")

_KDE_RANK = {"A": "1", "T": "10", "J": "jack", "Q": "queen", "K": "king"}
_SVGCARDS_RANK = {"A": "1", "T": "10", "J": "jack", "Q": "queen", "K": "king"}
_SUIT_NAME = {"S": "spade", "H": "heart", "D": "diamond", "C": "club"}

#: Card height in pixels of cached faces.
FACE_HEIGHT = 360


class CardArtMissing(DeviceConfigError, FileNotFoundError):
    """A deck design's artwork (or the renderer it needs) is not installed."""


def _cache_root() -> Path:
    base = os.environ.get("TABLE_CONTROLLER_CACHE")
    root = Path(base) if base else Path.home() / ".cache" / "table-controller"
    return root / "card-art"


def _flatten(image: np.ndarray) -> np.ndarray:
    """BGRA -> BGR on white, cropped to the opaque card."""
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 3:
        return image
    alpha = image[:, :, 3].astype(np.float32) / 255.0
    bgr = image[:, :, :3].astype(np.float32)
    out = bgr * alpha[:, :, None] + 255.0 * (1.0 - alpha[:, :, None])
    ys, xs = np.nonzero(image[:, :, 3] > 128)
    if len(xs):
        out = out[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    face: np.ndarray = np.clip(out, 0, 255).astype(np.uint8)
    return face


@dataclass
class DeckArt:
    """One deck design: 52 upright card faces as BGR images, loaded lazily."""

    name: str
    source: Path
    kind: str  # "kde-svg" or "png-dir"
    _faces: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def face(self, code: str) -> np.ndarray:
        """The upright face of card ``code`` (``"TS"``), a BGR image."""
        if code not in CODES:
            raise DeviceConfigError(f"unknown card code {code!r} for deck {self.name}")
        if code not in self._faces:
            self._faces[code] = self._load(code)
        return self._faces[code]

    def back(self) -> np.ndarray:
        """The card back, a BGR image the size of a face."""
        if "back" not in self._faces:
            if self.kind == "png-dir":
                path = self.source / "back.png"
                img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
                if img is None:
                    raise CardArtMissing(f"deck {self.name}: cannot read {path}")
                self._faces["back"] = _flatten(img)
            else:
                self._faces["back"] = self._render_kde("back", "back")
        return self._faces["back"]

    def faces(self) -> dict[str, np.ndarray]:
        """All 52 faces by code."""
        return {code: self.face(code) for code in CODES}

    def _load(self, code: str) -> np.ndarray:
        rank, suit = code[0], code[1]
        if self.kind == "png-dir":
            name = f"{_SUIT_NAME[suit]}_{_SVGCARDS_RANK.get(rank, rank)}.png"
            path = self.source / name
            img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
            if img is None:
                raise CardArtMissing(f"deck {self.name}: cannot read {path}")
            return _flatten(img)
        element = f"{_KDE_RANK.get(rank, rank)}_{_SUIT_NAME[suit]}"
        return self._render_kde(code, element)

    def _render_kde(self, code: str, element: str) -> np.ndarray:
        cache = _cache_root() / self.name / f"{code}.png"
        if not cache.exists():
            renderer = shutil.which("rsvg-convert")
            if renderer is None:
                raise CardArtMissing(
                    "rsvg-convert not found: install Debian package librsvg2-bin "
                    "(scripts/install-card-art.sh does)"
                )
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(f".{os.getpid()}.tmp.png")  # this process's own: renders may run at once
            svg = _unzipped_svg(self.source)
            subprocess.run(
                [renderer, "--export-id", element, "--height", str(FACE_HEIGHT), "-o", str(tmp), str(svg)],
                check=True,
                capture_output=True,
            )
            tmp.replace(cache)
        img = cv2.imread(str(cache), cv2.IMREAD_UNCHANGED)
        if img is None:
            raise CardArtMissing(f"deck {self.name}: cannot read rendered card {cache}")
        return _flatten(img)


def _unzipped_svg(svgz: Path) -> Path:
    """rsvg-convert reads .svgz directly, but unzipping once makes 52 renders 5x faster."""
    if svgz.suffix != ".svgz":
        return svgz
    import gzip

    out = _cache_root() / "svg" / (svgz.stem + ".svg")
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_bytes(gzip.decompress(svgz.read_bytes()))
        tmp.replace(out)
    return out


#: Deck designs known by name, in the order tests and the benchmark prefer them.
KNOWN_DECKS: dict[str, tuple[str, str]] = {
    "svg-cards": ("png-dir", "node_modules/svg-cards/png/2x"),
    "kde-standard": ("kde-svg", "svg-standard/standard.svgz"),
    "kde-nicu-white": ("kde-svg", "svg-nicu-white/white.svgz"),
    # the other installed KDE designs that this renderer draws as cards. Left out: svg-xskat-german
    # (German suits), svg-konqi-modern and svg-xskat-french (rsvg-convert refuses them: "the SVG
    # has no dimensions"), svg-future (its card ids name other pictures). Some of these render a few
    # faces at a low resolution: benchmarks/recognition.py checks the art before using a deck.
    "kde-ancient-egyptians": ("kde-svg", "svg-ancient-egyptians/Ancient_Egyptians.svgz"),
    "kde-dondorf": ("kde-svg", "svg-dondorf/dondorf.svgz"),
    "kde-gm-paris": ("kde-svg", "svg-gm-paris/paris.svgz"),
    "kde-jolly-royal": ("kde-svg", "svg-jolly-royal/jolly-royal.svgz"),
    "kde-nicu-ornamental": ("kde-svg", "svg-nicu-ornamental/ornamental.svgz"),
    "kde-oxygen": ("kde-svg", "svg-oxygen/oxygen.svgz"),
    "kde-oxygen-air": ("kde-svg", "svg-oxygen-air/oxygen-air.svgz"),
    "kde-oxygen-white": ("kde-svg", "svg-oxygen-white/oxygen-white.svgz"),
    "kde-penguins": ("kde-svg", "svg-penguins/penguins.svgz"),
    "kde-tigullio-international": (
        "kde-svg", "svg-tigullio-international/tigullio-international.svgz"),
}


def load_deck(name: str) -> DeckArt:
    """Load a deck design by name (``svg-cards``, ``kde-standard``, ``kde-nicu-white``)
    or from a path (a folder of ``heart_queen.png``-style files, or a KDE ``.svgz``).

    Raises :class:`CardArtMissing` when it is not installed.
    """
    if name in KNOWN_DECKS:
        kind, rel = KNOWN_DECKS[name]
        path = (CARD_ART_ROOT if kind == "png-dir" else KDE_DECKS_ROOT) / rel
    else:
        path = Path(name)
        kind = "png-dir" if path.is_dir() else "kde-svg"
    if not path.exists():
        raise CardArtMissing(
            f"card art for deck {name!r} not found at {path}: run scripts/install-card-art.sh as root"
        )
    if kind == "kde-svg" and shutil.which("rsvg-convert") is None:
        raise CardArtMissing("rsvg-convert not found: install Debian package librsvg2-bin")
    return DeckArt(name=name if name in KNOWN_DECKS else path.stem, source=path, kind=kind)


def available_decks() -> list[str]:
    """Names of the known deck designs installed on this machine."""
    out = []
    for name in KNOWN_DECKS:
        try:
            load_deck(name)
        except CardArtMissing:
            continue
        out.append(name)
    return out
