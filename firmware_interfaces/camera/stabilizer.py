"""Turn per-frame card readings into stable cards.

A card is reported once, when it has been read the same way (same code, or
no-read) at the same place in ``frames`` consecutive frames. A place is the
card's layout slot, or for a card off every slot its location on the table
(within :data:`OFF_SLOT_RADIUS_MM`). A card that changes reading starts its
count again; a card that leaves is forgotten (and listed in ``removed``), so
laying it again reports it again.
"""

from __future__ import annotations

from dataclasses import dataclass

from calibration.layout import split_slot
from firmware_interfaces.camera.recognizer import CardReading

#: Two off-slot sightings closer than this (mm) are the same card.
OFF_SLOT_RADIUS_MM = 30.0


@dataclass(frozen=True)
class StableCard:
    """A card read the same way in enough consecutive frames.

    ``position`` is the layout slot (``"banker2"``) or ``None`` off every slot
    (a dropped or exposed card: raise an alert); ``game_position`` and
    ``index`` are the card event's ``position`` and ``index`` (slot
    ``banker2`` -> ``banker``, 1). ``code`` is ``None`` for a stable no-read.
    """

    position: str | None
    code: str | None
    confidence: float
    corners: list[tuple[float, float]]
    centre_mm: tuple[float, float]
    frames: int

    @property
    def game_position(self) -> str | None:
        return split_slot(self.position)[0] if self.position else None

    @property
    def index(self) -> int | None:
        return split_slot(self.position)[1] if self.position else None


@dataclass
class _Track:
    key: str
    code: str | None
    count: int
    reading: CardReading
    reported: bool = False


class Stabilizer:
    """Feeds on each frame's readings; returns the cards newly stable in that frame."""

    def __init__(self, frames: int = 3):
        if frames < 1:
            raise ValueError(f"frames must be >= 1, not {frames}")
        self.frames = frames
        self._tracks: dict[str, _Track] = {}
        self.removed: list[StableCard] = []
        self._next_id = 0

    def _key(self, r: CardReading) -> str:
        if r.position is not None:
            return r.position
        for key, t in self._tracks.items():
            if key.startswith("@"):
                cx, cy = t.reading.centre_mm
                if (cx - r.centre_mm[0]) ** 2 + (cy - r.centre_mm[1]) ** 2 <= OFF_SLOT_RADIUS_MM**2:
                    return key
        self._next_id += 1
        return f"@{self._next_id}"

    def update(self, readings: list[CardReading]) -> list[StableCard]:
        """One frame's readings in; the cards that became stable in this frame out.

        ``self.removed`` then lists the stable cards that left the table in this frame.
        """
        seen: dict[str, CardReading] = {}
        for r in readings:
            key = self._key(r)
            if key in seen:  # two cards in one slot: keep the one read better
                if r.confidence <= seen[key].confidence:
                    continue
            seen[key] = r
        self.removed = [self._stable(t) for k, t in self._tracks.items() if k not in seen and t.reported]
        new: list[StableCard] = []
        tracks: dict[str, _Track] = {}
        for key, r in seen.items():
            t = self._tracks.get(key)
            if t is None or t.code != r.code:
                t = _Track(key, r.code, 0, r)
            t.count += 1
            t.reading = r
            if not t.reported and t.count >= self.frames:
                t.reported = True
                new.append(self._stable(t))
            tracks[key] = t
        self._tracks = tracks
        return new

    @property
    def stable(self) -> list[StableCard]:
        """Every card currently stable on the table."""
        return [self._stable(t) for t in self._tracks.values() if t.reported]

    def reset(self) -> None:
        """Forget everything (a new round)."""
        self._tracks.clear()
        self.removed = []

    @staticmethod
    def _stable(t: _Track) -> StableCard:
        r = t.reading
        return StableCard(r.position, t.code, r.confidence, r.corners, r.centre_mm, t.count)
