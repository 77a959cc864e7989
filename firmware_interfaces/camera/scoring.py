"""Score recogniser output against a scene's ground truth (tests and the benchmark share it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from firmware_interfaces.camera.recognizer import CardReading
from firmware_interfaces.camera.scenes import TruthCard

#: A reading belongs to a true card when their centres are this close (pixels).
MATCH_PX = 25.0


@dataclass
class Score:
    """Counts over many frames. ``wrong`` = a card reported with another code or in another
    slot than it truly lies; ``phantom`` = a card reported where there is none."""

    cards: int = 0
    correct: int = 0
    no_reads: int = 0
    missed: int = 0
    wrong: int = 0
    phantom: int = 0
    errors: list[str] = field(default_factory=list)

    def add(self, truth: Sequence[TruthCard], readings: Sequence[CardReading], label: str = "") -> None:
        used: set[int] = set()
        for t in truth:
            self.cards += 1
            centre = np.mean(t.corners, axis=0)
            best, best_d = None, MATCH_PX
            for k, r in enumerate(readings):
                d = float(np.hypot(*(np.mean(r.corners, axis=0) - centre)))
                if k not in used and d < best_d:
                    best, best_d = k, d
            if best is None:
                self.missed += 1
                self.errors.append(f"{label} missed {t.code} at {t.slot}")
                continue
            used.add(best)
            r = readings[best]
            if r.code is None:
                self.no_reads += 1
            elif r.code == t.code and r.position == t.slot:
                self.correct += 1
            else:
                self.wrong += 1
                self.errors.append(f"{label} WRONG {t.code}@{t.slot} read as {r.code}@{r.position}")
        for k, r in enumerate(readings):
            if k not in used:
                self.phantom += 1
                self.errors.append(f"{label} PHANTOM {r.code}@{r.position}")

    @property
    def read_rate(self) -> float:
        return self.correct / self.cards if self.cards else 1.0

    def to_dict(self) -> dict:  # type: ignore[type-arg]
        return {
            "cards": self.cards,
            "read_correctly": self.correct,
            "read_rate": round(self.read_rate, 5),
            "no_reads": self.no_reads,
            "missed": self.missed,
            "wrong_reads": self.wrong,
            "phantom_cards": self.phantom,
        }
