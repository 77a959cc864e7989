"""Pip-rival benchmark: reads against a runner-up with a pip fewer, one JSON object.

Glare hides pips and never adds them, so a read whose runner-up has a pip or two *more*
(a 4D read with 6D behind it) may be a face that lost pips: the recogniser asks its clearer
corner index to favour it (``recognizer.INDEX_LEAD``). A read whose runner-up has a pip
*fewer* (3H read, 2H behind it) is not asked that (session 58): its extra pip is ink glare
cannot have made. Both stay pip rivals for the margin (twice the limit,
``recognizer.TWIN_MARGIN``).

Scenes hold few such reads, so this benchmark makes many: for each deck design it
calibrates as a studio would (``recognition.calibrate_like_a_studio``) and reads ``--views``
views of every pip card (``calibration.augment.random_view``) drawn hard: 55-110 px wide,
blur sigma 0.3-2, motion blur in half of them, exposure ±1 stop, glare, veils and shadows,
outlines 2.5 % of the width off. Each read whose runner-up is its suit's card with a pip
fewer is put to a doubtful read's tests (``Recognizer._passes``, its views around the card
taken to agree). Reported per design: such reads, those that pass, right and wrong, and how
many of the right ones an index lead asked of them too would have turned away. The designs
in ``recognition.TUNED_ON`` are marked tuned-on; every other one is held out. Progress goes
to stderr.

    python benchmarks/pip_rivals.py [--decks kde-nicu-ornamental,kde-tigullio-international]
                                    [--views 800] [--seed 11] [--json]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import sys  # noqa: E402
from dataclasses import asdict  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from recognition import GAMES, _recognizer, progress, views_benchmark  # noqa: E402

from calibration.augment import ViewRanges, random_view  # noqa: E402
from calibration.deck_model import _for_views  # noqa: E402
from calibration.layout import load_layout  # noqa: E402
from calibration.templates import CardTemplates  # noqa: E402
from firmware_interfaces.camera.deck_art import CODES, DeckArt  # noqa: E402
from firmware_interfaces.camera.recognizer import (  # noqa: E402
    INDEX_LEAD,
    PIPS,
    Recognizer,
    _beyond_index_doubt,
    pip_neighbours,
    pips_hidden,
)
from firmware_interfaces.camera.scenes import Degradation, generate_test_set  # noqa: E402

#: Views harder than the scenes' usual: small, blurred, smeared, glared and veiled cards.
HARD = ViewRanges(card_width_px=(55.0, 110.0), blur_sigma=(0.3, 2.0), motion_chance=0.5, exposure_stops=1.0,
                  outline_error=0.025, glare_chance=0.4, veil_chance=0.3, shadow_chance=0.4)
DEFAULT_DECKS = ("kde-nicu-ornamental", "kde-tigullio-international")


def measure(rec: Recognizer, views: int, seed: int, name: str = "") -> dict[str, object]:
    """Read ``views`` hard views of every pip card; put the reads against a pip fewer to the tests."""
    templates = rec.calibration.templates
    model = templates.model
    limit = rec.threshold * model.min_margin
    rng = np.random.default_rng(seed)
    against_fewer = right = wrong = right_index_against = 0
    wrong_reads: list[str] = []
    pip_cards = [code for code in CODES if code[0] in PIPS]
    for k, code in enumerate(pip_cards):
        progress(f"{name}: {code} ({k + 1}/{len(pip_cards)})")
        face = _for_views(templates.faces[code], HARD)
        for _ in range(views):
            view = random_view(face, rng, HARD)
            m = model.read(view)
            if not pip_neighbours(m.code, m.runner_up) or pips_hidden(m.code, m.runner_up):
                continue  # not a read against a pip fewer
            against_fewer += 1
            if not rec._passes(m, view, limit, set(), {m.code}):
                continue
            if m.code == code:
                right += 1
                # as the rule before session 58 asked it: not of a read beyond its indexes' doubt
                right_index_against += (not _beyond_index_doubt(model, m, limit)
                                        and templates.index_lead(view, m.code, m.runner_up) <= INDEX_LEAD)
            else:
                wrong += 1
                wrong_reads.append(f"{code}->{m.code} (runner-up {m.runner_up}) at {m.margin / limit:.2f} x limit")
    progress("")
    return {"views": views * len(pip_cards), "reads_against_a_pip_fewer": against_fewer,
            "passed_right": right, "passed_wrong": wrong,
            "right_an_index_lead_would_turn_away": right_index_against, "wrong_reads": wrong_reads}


def _measured(name: str, deck: DeckArt, templates: CardTemplates, views: int, seed: int) -> dict[str, object]:
    # a table to hold the recogniser; the views are read on their own
    frame = generate_test_set(deck, [load_layout(GAMES[0])], 1, seed=seed, degradation=Degradation.mild())[0]
    return measure(_recognizer(frame, templates), views, seed, name)


def main(argv: list[str] | None = None) -> int:
    return views_benchmark(__doc__.split("\n\n")[0], argv, DEFAULT_DECKS, 800, 11, "views of every pip card",
                           {"ranges": asdict(HARD)}, _measured)


if __name__ == "__main__":
    sys.exit(main())
