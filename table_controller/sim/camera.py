"""A simulated overhead camera over a game's layout, calibrated the way a studio would do it."""

from __future__ import annotations

import logging
import time
from typing import Any

log = logging.getLogger(__name__)


def simulated_camera(
    game_id: str, deck_name: str = "svg-cards", seed: int | None = None, reuse_frames: int = 3
) -> tuple[Any, Any]:
    """(SimulatedCamera, Calibration): table plane from the markers of an empty frame,
    templates and the deck model from the deck design's own faces (the model is fitted once
    per machine, about 20 s, then cached), the print from the empty felt. An unchanged layout is rendered afresh
    every ``reuse_frames + 1`` frames (see :class:`SimulatedCamera`)."""
    from calibration.layout import load_layout
    from calibration.store import Calibration
    from calibration.table import calibrate_from_markers
    from calibration.templates import CardTemplates
    from firmware_interfaces.camera.deck_art import load_deck
    from firmware_interfaces.camera.finder import learn_empty_table
    from firmware_interfaces.camera.simulated import SimulatedCamera

    layout = load_layout(game_id)
    deck = load_deck(deck_name)
    camera = SimulatedCamera(layout, deck, seed=seed, reuse_frames=reuse_frames)
    empty = camera.read()
    if empty is None:
        raise RuntimeError(f"the simulated camera gave no frame of the empty {game_id} table")
    plane = calibrate_from_markers(empty, layout)
    templates = CardTemplates(deck.faces())
    started = time.monotonic()
    log.info("camera: learning deck %s (about 20 s the first time on this machine)", deck_name)
    templates.fit_model()
    log.info("camera: deck model for %s ready in %.1f s", deck_name, time.monotonic() - started)
    printed, empty_table = learn_empty_table(plane, layout, empty)
    return camera, Calibration(plane, templates, printed=printed, empty_table=empty_table)


def slot_for(camera: Any, position: str, index: int) -> str:
    """The layout slot of (position, index); ``first`` has a single slot of that name."""
    from calibration.layout import slot_name

    names = {s.name for s in camera.layout.slots}
    return position if position in names else slot_name(position, index)
