"""Suit-twin benchmark: how often a blurred card is read as its suit twin, one JSON object.

A card and its suit twin (7C and 7S, 7H and 7D) differ only in the shape of
their pips and index suits, which blur smears first: the one wrong read the
independent harness found in session 42 was a smeared 3C read 3S. Scenes hold
few such cards, so this benchmark makes many: for each deck design it
calibrates as a studio would (``recognition.calibrate_like_a_studio``) and reads
``--views`` views of every card (``calibration.augment.random_view``) drawn
harder than scenes usually are: 55-80 px wide cards, blur sigma 1.2-2, motion
blur in 70 % of them, exposure ±1 stop, outlines 2 % of the width off, no glare.

Each read whose runner-up is its suit twin is put to the recogniser's tests
that need nothing but the read and the card (``Recognizer._passes`` without the
views around the card): near its card, past the twin margin, no corner index
naming another card, the templates giving its rank. Reported per design:
reads that pass, right and wrong, and of the wrong ones how many the pair's own
discriminant (``ModelReading.twin_lead``, :data:`TWIN_LEAD`) turns away, and
what it costs right ones. The designs in ``recognition.TUNED_ON`` are marked
tuned-on; every other one is held out. Progress goes to stderr.

    python benchmarks/suit_twins.py [--decks kde-nicu-ornamental,kde-tigullio-international]
                                    [--views 200] [--seed 21] [--json]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from recognition import progress, views_benchmark  # noqa: E402

from calibration.augment import ViewRanges, random_view  # noqa: E402
from calibration.deck_model import _for_views  # noqa: E402
from calibration.templates import CardTemplates  # noqa: E402
from firmware_interfaces.camera.deck_art import CODES  # noqa: E402
from firmware_interfaces.camera.recognizer import (  # noqa: E402
    NEAR_SLACK,
    TWIN_LEAD,
    TWIN_MARGIN,
    same_rank,
    suit_twins,
)

#: Views harder than the scenes' usual: small, blurred and smeared cards, outlines a little off.
SMEARED = ViewRanges(card_width_px=(55.0, 80.0), blur_sigma=(1.2, 2.0), motion_chance=0.7, exposure_stops=1.0,
                     outline_error=0.02, glare_chance=0.0)
DEFAULT_DECKS = ("kde-nicu-ornamental", "kde-tigullio-international")


def measure(templates: CardTemplates, views: int, seed: int, name: str = "") -> dict[str, object]:
    """Read ``views`` smeared views of every card; count the twin reads that pass the tests."""
    model = templates.model
    limit = model.min_margin
    rng = np.random.default_rng(seed)
    twin_reads = right = wrong = wrong_turned_away = right_lost = 0
    wrong_pairs: list[str] = []
    for k, code in enumerate(CODES):
        progress(f"{name}: {code} ({k + 1}/{len(CODES)})")
        face = _for_views(templates.faces[code], SMEARED)
        for _ in range(views):
            view = random_view(face, rng, SMEARED)
            m = model.read(view)
            if not suit_twins(m.code, m.runner_up):
                continue
            twin_reads += 1
            passes = (m.accepted and m.margin >= TWIN_MARGIN * limit
                      and m.distance <= NEAR_SLACK * model.near_limit(m.code)
                      and not model.index_names_another(m) and same_rank(templates.read(view).code, m.code))
            if not passes:
                continue
            if m.code == code:
                right += 1
                right_lost += m.twin_lead <= TWIN_LEAD
            else:
                wrong += 1
                wrong_turned_away += m.twin_lead <= TWIN_LEAD
                wrong_pairs.append(f"{code}->{m.code} at {m.margin / limit:.2f} x limit, twin lead {m.twin_lead:.2f}")
    progress("")
    return {"views": views * len(CODES), "twin_runner_up_reads": twin_reads,
            "passed_right": right, "passed_wrong_without_twin_lead": wrong,
            "wrong_turned_away_by_twin_lead": wrong_turned_away, "right_lost_to_twin_lead": right_lost,
            "wrong_reported": wrong - wrong_turned_away, "wrong_reads": wrong_pairs}


def main(argv: list[str] | None = None) -> int:
    return views_benchmark(__doc__.split("\n\n")[0], argv, DEFAULT_DECKS, 200, 21, "views of every card",
                           {"ranges": SMEARED.__dict__, "twin_lead": TWIN_LEAD},
                           lambda name, _deck, templates, views, seed: measure(templates, views, seed, name))


if __name__ == "__main__":
    sys.exit(main())
