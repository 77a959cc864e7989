"""Motion-smear benchmark: how well the cards read measure a frame's smear, one JSON object.

For each deck design it calibrates as a studio would, makes our randomised scenes
(``recognition.scene_set``; a quarter of them motion-blurred 3-9 px), reads each frame,
and measures the smear on every card read that the frame holds
(``firmware_interfaces.camera.smear.card_smear``; the reads are kept by the truth, not by
the recogniser's own test of a read from its face: slightly optimistic) and the frame's
(``frame_smear``). Reported per design (tuned-on or held-out): on smeared frames,
the median ratio of the measured length to the drawn one, the median direction error,
how many frames were found smeared; on frames without motion blur, how many were found
smeared anyway (they would be filtered for nothing) and the longest smear measured.
``LENGTH_SCALE`` was set from the tuned-on designs' ratio. Progress goes to stderr.

    python benchmarks/smear.py [--decks svg-cards,kde-standard] [--frames 120] [--seed 31] [--json]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from recognition import GAMES, TUNED_ON, _recognizer, calibrate_like_a_studio, progress, scene_set  # noqa: E402

from calibration.layout import load_layout  # noqa: E402
from calibration.templates import CardTemplates  # noqa: E402
from firmware_interfaces.camera.deck_art import load_deck  # noqa: E402
from firmware_interfaces.camera.smear import MIN_SMEAR_PX, card_smear, frame_smear  # noqa: E402

DEFAULT_DECKS = ("svg-cards", "kde-standard")


def _axial_error(a: float, b: float) -> float:
    """Degrees between two directions (0 and 180 are one)."""
    return abs((a - b + 90.0) % 180.0 - 90.0)


def measure(name: str, frames: int, seed: int) -> dict[str, object]:
    templates, _, _ = calibrate_like_a_studio(load_deck(name))
    assert isinstance(templates, CardTemplates)
    layouts = [load_layout(g) for g in GAMES]
    faces = {c: cv2.cvtColor(f, cv2.COLOR_BGR2GRAY) for c, f in templates.faces.items()}
    ratios: list[float] = []
    card_ratios: list[float] = []
    errors: list[float] = []
    smeared = found = 0
    still = still_found = 0
    still_longest = 0.0
    for i, tf in enumerate(scene_set(load_deck(name), layouts, frames, seed, True)):
        progress(f"{name}: frame {i + 1}/{frames}")
        conditions = tf.scene.meta.get("conditions", {})
        drawn = float(conditions.get("motion_blur_px") or 0)
        gray = cv2.cvtColor(tf.scene.image, cv2.COLOR_BGR2GRAY)
        truth = {c.code for c in tf.scene.cards if c.code}
        readings = [r for r in _recognizer(tf, templates).recognize(tf.scene.image) if r.code in truth]
        cards = [s for s in (card_smear(gray, faces[r.code], np.array(r.corners)) for r in readings if r.code)
                 if s is not None]
        frame = frame_smear(cards)
        if drawn >= 2:
            smeared += 1
            card_ratios += [s.line.length_px / drawn for s in cards]
            if frame is not None:
                found += 1
                ratios.append(frame.length_px / drawn)
                errors.append(_axial_error(frame.angle_deg, float(conditions.get("motion_blur_deg") or 0)))
        else:
            still += 1
            if frame is not None:
                still_found += 1
            if cards:
                still_longest = max(still_longest, float(np.median([s.line.length_px for s in cards])))
    progress("")

    def median(values: list[float]) -> float | None:
        return round(float(np.median(values)), 3) if values else None

    return {"tuned_on": name in TUNED_ON, "frames": frames,
            "smeared_frames": smeared, "smeared_found": found,
            "length_ratio_median": median(ratios), "card_length_ratio_median": median(card_ratios),
            "direction_error_median_deg": median(errors),
            "direction_error_max_deg": round(max(errors), 1) if errors else None,
            "still_frames": still, "still_found_smeared": still_found,
            "still_longest_median_px": round(still_longest, 2), "min_smear_px": MIN_SMEAR_PX}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decks", default=",".join(DEFAULT_DECKS), help="comma-separated deck designs")
    parser.add_argument("--frames", type=int, default=120, help="frames per design (default 120)")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    args = parser.parse_args(argv)
    out = {"seed": args.seed, "decks": {name: measure(name, args.frames, args.seed)
                                        for name in args.decks.split(",")}}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
