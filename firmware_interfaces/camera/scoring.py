"""Score recogniser output against a scene's ground truth (tests and the benchmark share it).

Each true card ends as one outcome: read correctly; rightly not named (a card whose
truth code is None: face down, half under a hand, cut by the frame edge, reported
with code None); a no-read (a nameable card reported with code None); missed (not
found); or wrong (another code or slot, or any code on a card nobody may name).
A reading that belongs to no true card is a phantom.

Given the scene's ``meta["conditions"]``, :meth:`Score.add` also counts every card in
*bands* of the conditions it was drawn under (blur, noise, JPEG, tilt, glare on the
card, the ink glare and exposure left showing, motion blur, felt colour, card width,
frame size, kind), so a failure can be traced to its condition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import cv2
import numpy as np

from firmware_interfaces.camera.recognizer import CardReading
from firmware_interfaces.camera.scenes import TruthCard

#: A reading belongs to a true card when their centres are this close (pixels).
MATCH_PX = 25.0

#: Numeric condition bands: band name -> (condition key, band edges). A value below the
#: first edge is in band "<e0", one between two edges in "e0-e1" (edges included), one
#: above the last in ">eN".
NUMERIC_BANDS: dict[str, tuple[str, tuple[float, ...]]] = {
    "blur_sigma": ("blur_sigma", (0.8, 1.3)),
    "noise_sigma": ("noise_sigma", (3.0, 5.0)),
    "jpeg_quality": ("jpeg_quality", (70.0, 85.0)),
    "tilt_deg": ("tilt_deg", (10.0, 18.0)),
    "exposure_stops": ("exposure_stops", (-0.5, 0.5)),
    "card_width_mm": ("card_width_mm", (58.0, 60.0, 62.0)),
    "pose_shift_px": ("pose_shift_px", (1.0, 3.0)),
    # the share of a card's ink glare and exposure left showing (scene_effects.ink_left)
    "ink_left": ("ink_left", (0.5, 0.75, 0.9)),
}
#: Yes/no bands: band name -> condition key (yes when the value is true or above 0).
YES_NO_BANDS: dict[str, str] = {"glare_on_card": "glare_on_card", "motion_blur": "motion_blur_px",
                                "glare_burnt": "glare_burnt"}
#: Bands named by the condition's own value: band name -> condition key.
LABEL_BANDS: dict[str, str] = {"felt_colour": "felt_colour", "frame_size": "frame_size", "kind": "kind"}


def _edge(v: float) -> str:
    return f"{v:g}"


def numeric_band(value: float, edges: Sequence[float]) -> str:
    """The band of ``value`` between ``edges``: ``"<0.8"``, ``"0.8-1.3"`` or ``">1.3"``."""
    if value < edges[0]:
        return f"<{_edge(edges[0])}"
    for lo, hi in pairwise(edges):
        if value <= hi:
            return f"{_edge(lo)}-{_edge(hi)}"
    return f">{_edge(edges[-1])}"


def _band_order(band: str, label: str) -> tuple[int, str]:
    if band in NUMERIC_BANDS:
        edges = NUMERIC_BANDS[band][1]
        labels = [f"<{_edge(edges[0])}"] + [f"{_edge(a)}-{_edge(b)}" for a, b in pairwise(edges)]
        labels.append(f">{_edge(edges[-1])}")
        return (labels.index(label) if label in labels else len(labels), label)
    if band in YES_NO_BANDS:
        return (0 if label == "no" else 1, label)
    return (0, label)


def bands_of(conditions: Mapping[str, object]) -> dict[str, str]:
    """Band name -> band label for a set of conditions (a card's merged over its frame's);
    a band whose condition is missing or None is left out."""
    out: dict[str, str] = {}
    for band, (key, edges) in NUMERIC_BANDS.items():
        v = conditions.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[band] = numeric_band(float(v), edges)
    for band, key in YES_NO_BANDS.items():
        v = conditions.get(key)
        if v is not None:
            out[band] = "yes" if (v is True or (not isinstance(v, bool) and isinstance(v, (int, float)) and v > 0)) \
                else "no"
    for band, key in LABEL_BANDS.items():
        v = conditions.get(key)
        if isinstance(v, (list, tuple)) and len(v) == 2:
            out[band] = f"{v[0]}x{v[1]}"
        elif v is not None:
            out[band] = str(v)
    return out


@dataclass
class Tally:
    """Outcome counts of a set of true cards (and the phantoms among their frames' readings)."""

    cards: int = 0
    correct: int = 0
    correct_no_read: int = 0
    no_reads: int = 0
    missed: int = 0
    wrong: int = 0
    phantom: int = 0

    def count(self, outcome: str) -> None:
        """Count one card's outcome (``correct``, ``correct_no_read``, ``no_read``, ``missed``,
        ``wrong``) or one ``phantom``."""
        if outcome == "phantom":
            self.phantom += 1
            return
        self.cards += 1
        if outcome == "correct":
            self.correct += 1
        elif outcome == "correct_no_read":
            self.correct_no_read += 1
        elif outcome == "no_read":
            self.no_reads += 1
        elif outcome == "missed":
            self.missed += 1
        elif outcome == "wrong":
            self.wrong += 1
        else:
            raise ValueError(f"unknown outcome {outcome!r}")

    @property
    def read_rate(self) -> float:
        """Share of cards given the right answer: their code, or None where none may be named."""
        return (self.correct + self.correct_no_read) / self.cards if self.cards else 1.0

    def to_dict(self) -> dict[str, object]:
        return {
            "cards": self.cards,
            "read_correctly": self.correct,
            "correct_no_read": self.correct_no_read,
            "read_rate": round(self.read_rate, 5),
            "no_reads": self.no_reads,
            "missed": self.missed,
            "wrong_reads": self.wrong,
            "phantom_cards": self.phantom,
        }


def match(truth: Sequence[TruthCard], readings: Sequence[CardReading],
          ) -> tuple[list[tuple[TruthCard, str, CardReading | None]], list[int]]:
    """Each true card's outcome with the reading that belongs to it (None when missed), and
    the indexes of the readings that belong to no card (phantoms). A reading belongs to the
    unclaimed true card whose centre is nearest, within
    :data:`MATCH_PX`; also when the reading's centre lies on the card and either names no
    code: a card nobody may name (code None: a card cut by the frame edge is found, if at all,
    by its visible part), or a no-read, which says only that a card lies there (an outline
    that took in a glare pool beside the card lies off its centre; session 65)."""
    used: set[int] = set()
    outcomes: list[tuple[TruthCard, str, CardReading | None]] = []
    centres = [np.mean(r.corners, axis=0) for r in readings]
    for t in truth:
        centre = np.mean(t.corners, axis=0)
        poly = np.asarray(t.corners, np.float32).reshape(-1, 1, 2)
        best, best_d = None, float("inf")
        for k, c in enumerate(centres):
            if k in used:
                continue
            d = float(np.hypot(*(c - centre)))
            on_it = (t.code is None or readings[k].code is None) \
                and cv2.pointPolygonTest(poly, (float(c[0]), float(c[1])), False) >= 0
            near = d < MATCH_PX or on_it
            if near and d < best_d:
                best, best_d = k, d
        if best is None:
            outcomes.append((t, "missed", None))
            continue
        used.add(best)
        r = readings[best]
        if t.code is None:
            outcome = "correct_no_read" if r.code is None else "wrong"
        elif r.code is None:
            outcome = "no_read"
        elif r.code == t.code and r.position == t.slot:
            outcome = "correct"
        else:
            outcome = "wrong"
        outcomes.append((t, outcome, r))
    return outcomes, [k for k in range(len(readings)) if k not in used]


@dataclass
class Score(Tally):
    """Counts over many frames. ``wrong`` = a card reported with another code or in another
    slot than it truly lies, or with any code where none may be named; ``phantom`` = a card
    reported where there is none. ``bands`` holds the same counts per condition band (band
    name -> band label -> :class:`Tally`) for the frames added with their conditions."""

    errors: list[str] = field(default_factory=list)
    bands: dict[str, dict[str, Tally]] = field(default_factory=dict)

    def add(self, truth: Sequence[TruthCard], readings: Sequence[CardReading], label: str = "",
            conditions: Mapping[str, object] | None = None) -> None:
        """Score one frame. With ``conditions`` (the scene's ``meta["conditions"]``) each card
        is also counted in its bands (its own ``TruthCard.conditions`` over the frame's), and
        each phantom in the frame's."""
        outcomes, phantoms = match(truth, readings)
        for t, outcome, r in outcomes:
            self.count(outcome)
            if outcome == "missed":
                self.errors.append(f"{label} missed {t.code}@{t.slot}")
            elif outcome == "wrong" and r is not None:
                self.errors.append(f"{label} WRONG {t.code}@{t.slot} read as {r.code}@{r.position}")
            if conditions is not None:
                self._count_in_bands({**conditions, **t.conditions}, outcome)
        for k in phantoms:
            self.count("phantom")
            self.errors.append(f"{label} PHANTOM {readings[k].code}@{readings[k].position}")
            if conditions is not None:
                self._count_in_bands(conditions, "phantom")

    def _count_in_bands(self, conditions: Mapping[str, object], outcome: str) -> None:
        for band, value in bands_of(conditions).items():
            self.bands.setdefault(band, {}).setdefault(value, Tally()).count(outcome)

    def bands_dict(self) -> dict[str, dict[str, dict[str, object]]]:
        """``bands`` as plain dicts, each band's labels in order (low to high, no before yes)."""
        return {band: {label: self.bands[band][label].to_dict()
                       for label in sorted(self.bands[band], key=lambda lb: _band_order(band, lb))}
                for band in self.bands}

    def to_dict(self) -> dict[str, object]:
        out = super().to_dict()
        if self.bands:
            out["bands"] = self.bands_dict()
        return out
