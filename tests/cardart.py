"""Card art, calibrations and glared faces shared by the camera tests (scenes come from
``firmware_interfaces.camera.scenes``, the generator the benchmark uses too)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from calibration.layout import Layout
from calibration.store import Calibration
from calibration.table import calibrate_from_markers
from calibration.templates import CardTemplates
from firmware_interfaces.camera.deck_art import CardArtMissing, DeckArt, load_deck

#: The two deck designs every camera test runs on: npm svg-cards (PNG) and a KDE SVG deck.
DECKS = ("svg-cards", "kde-standard")


@functools.cache
def _deck(name: str) -> DeckArt | str:
    try:
        deck = load_deck(name)
        deck.faces()
    except CardArtMissing as e:
        return str(e)
    return deck


def deck_or_skip(name: str) -> DeckArt:
    """The deck design, or skip the test saying how to install it."""
    deck = _deck(name)
    if isinstance(deck, str):
        pytest.skip(f"card art not installed ({deck}); run scripts/install-card-art.sh as root")
    return deck


@functools.cache
def templates_for(name: str) -> CardTemplates:
    return CardTemplates(deck_or_skip(name).faces())


def calibration_for(name: str, empty_frame, layout: Layout) -> Calibration:  # type: ignore[no-untyped-def]
    """Calibrate like a studio: templates from the deck, table plane from an empty frame's markers."""
    return Calibration(calibrate_from_markers(empty_frame, layout), templates_for(name))


def glared(face: np.ndarray, glows: list[tuple[float, float, float, float]]) -> np.ndarray:
    """``face`` as a camera exposes it (paper a little under white) with glare added: each glow
    (x, y as shares of the card, sigma as a share of its width, peak grey levels)."""
    card = face.astype(np.float32) * 0.85
    h, w = card.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    for fx, fy, fs, peak in glows:
        card += (peak * np.exp(-((xx - fx * w) ** 2 + (yy - fy * h) ** 2) / (2 * (fs * w) ** 2)))[..., None]
    return np.clip(card, 0, 255).astype(np.uint8)
