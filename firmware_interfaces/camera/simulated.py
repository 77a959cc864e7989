"""A simulated overhead camera: renders the layout with the cards a simulated dealer placed.

The simulated table runs the real camera path with it: the frames carry the
layout's ArUco markers (so ``calibrate table`` works on them), real card art
and mild camera noise; :meth:`SimulatedCamera.blackout` is the camera-down
fault.
"""

from __future__ import annotations

import random
import threading

import numpy as np

from calibration.layout import Layout, slot_name
from firmware_interfaces.camera.deck_art import CODES, DeckArt
from firmware_interfaces.camera.scenes import (
    FRAME_SIZE,
    Degradation,
    PlacedCard,
    Scene,
    camera_homography,
    card_size_mm,
    free_spot,
    render_felt,
    render_scene,
)
from firmware_interfaces.errors import DeviceConfigError


class SimulatedCamera:
    """Camera source that draws the placed cards on the layout, frame after frame."""

    def __init__(self, layout: Layout, deck_art: DeckArt, seed: int | None = None,
                 degradation: Degradation | None = None, frame_size: tuple[int, int] = FRAME_SIZE,
                 reuse_frames: int = 0):
        """``reuse_frames``: while the layout is unchanged, hand out the last frame that
        many more times before rendering a fresh one (rendering costs about 60 ms a
        frame; a rig running several tables on one machine cannot afford it 8 times a
        second). 0 renders every frame."""
        self.layout = layout
        self.reuse_frames = reuse_frames
        self._version = 0
        self._cached: tuple[int, np.ndarray] | None = None
        self._reused = 0
        self.deck = deck_art
        self._rng = random.Random(seed)
        self.degradation = degradation or Degradation.mild()
        self.frame_size = frame_size
        self.table_to_image = camera_homography(layout, self._rng, 0.6, frame_size)
        self._felt = render_felt(layout, self._rng)
        self._cards: list[PlacedCard] = []
        self._dark = False
        self._lock = threading.Lock()
        self.last_scene: Scene | None = None

    def place(self, position: str | None, code: str, index: int | None = None, face_up: bool = True) -> None:
        """Lay card ``code`` on slot ``position`` (a slot name such as ``banker2``, or a game
        position with ``index``: ``("banker", 1)``), or anywhere off every slot when
        ``position`` is None (a dropped or exposed card)."""
        if code not in CODES:
            raise DeviceConfigError(f"unknown card code {code!r}")
        with self._lock:
            size = card_size_mm(self.layout, self.deck.face(code))
            d = self.degradation
            angle = self._rng.uniform(-d.max_rotation_deg, d.max_rotation_deg) + self._rng.choice([0.0, 180.0])
            if position is None:
                centre = free_spot(self.layout, self._rng, [c.centre_mm for c in self._cards], size)
                slot = None
            else:
                slot = slot_name(position, index) if index is not None else position
                sx, sy = self.layout.slot(slot).centre
                self._cards = [c for c in self._cards if c.slot != slot]
                j = d.jitter_mm
                centre = (sx + self._rng.uniform(-j, j), sy + self._rng.uniform(-j, j))
            self._cards.append(PlacedCard(slot, code, centre, angle, face_up))
            self._version += 1

    def remove(self, position: str) -> None:
        """Take the card off slot ``position``."""
        with self._lock:
            self._cards = [c for c in self._cards if c.slot != position]
            self._version += 1

    def clear(self) -> None:
        """Take every card off the table."""
        with self._lock:
            self._cards = []
            self._version += 1

    def blackout(self, on: bool) -> None:
        """Camera-down fault: while on, ``read()`` returns None."""
        self._dark = on

    @property
    def placed(self) -> list[PlacedCard]:
        return list(self._cards)

    def read(self) -> np.ndarray | None:
        if self._dark:
            return None
        with self._lock:
            cards, version = list(self._cards), self._version
        if self._cached is not None and self._cached[0] == version and self._reused < self.reuse_frames:
            self._reused += 1
            return self._cached[1]
        scene = render_scene(self.layout, self.deck, cards, self._rng, self.degradation,
                             table_to_image=self.table_to_image, felt=self._felt, frame_size=self.frame_size)
        self.last_scene = scene
        self._cached, self._reused = (version, scene.image), 0
        return scene.image

    def close(self) -> None:
        self._dark = True
