"""Veiled-card benchmark: cards read from their agreeing corner indexes, one JSON object.

A strong reflection, rolled off by the camera's highlight curve, veils a card: its ink is
lifted toward its paper, little of it clipped. The whole card then reads short of the deck
model's margin limit while its corner indexes, small and dark, may still show the code. The
recogniser reads such a card where the indexes name the code the whole card reads
(``Recognizer._agreeing_read``: both at ``AGREEING_INDEX_SHARE`` of the index model's margin
limit), the face's print shows all over the card (``recognizer.print_lost``) and the read passes
the tests that need no margin.

For each deck design this calibrates as a studio would (``recognition.calibrate_like_a_studio``)
and reads ``--views`` views of every card (``calibration.augment.random_view``) under a veil
(40-97 % toward white in a broad spot), with the usual blur, noise, motion smear (30 %, 4-12 px)
and JPEG, 55-110 px wide cards and outlines 2.5 px off, half of them turned 180°. The route is
run with the share at its floor below (0.3) and each read it gives is counted at every share
it reaches, right or wrong; ``gained`` counts right ones the whole card did not read clearly
(not past the margin limit). The designs in ``recognition.TUNED_ON`` are marked
tuned-on; every other one is held out. Progress goes to stderr.

    python benchmarks/veiled_indexes.py [--decks kde-nicu-ornamental,kde-tigullio-international]
                                        [--views 400] [--seed 11] [--json]
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
from recognition import GAMES, progress, views_benchmark  # noqa: E402

from calibration.augment import ViewRanges, random_view  # noqa: E402
from calibration.deck_model import _for_views  # noqa: E402
from calibration.layout import load_layout  # noqa: E402
from calibration.store import Calibration  # noqa: E402
from calibration.table import calibrate_from_markers  # noqa: E402
from calibration.templates import CardTemplates, canonical_corners  # noqa: E402
from firmware_interfaces.camera import recognizer as recognizer_module  # noqa: E402
from firmware_interfaces.camera.deck_art import CODES, load_deck  # noqa: E402
from firmware_interfaces.camera.recognizer import Recognizer  # noqa: E402
from firmware_interfaces.camera.scenes import DomainRandomisation, generate_test_set  # noqa: E402

VEILED = ViewRanges(card_width_px=(55.0, 110.0), outline_error_px=2.5, veil_chance=1.0, motion_px=(4, 12))
SHARES = (0.3, 0.4, 0.5, 0.6)
DEFAULT_DECKS = ("kde-nicu-ornamental", "kde-tigullio-international")


def _recognizer(templates: CardTemplates) -> Recognizer:
    """A recogniser over a generated table (only its ``_agreeing_read`` is asked; a view is its
    own frame, which no table marker lies on)."""
    deck = load_deck("svg-cards")
    layout = load_layout(GAMES[0])
    tf = generate_test_set(deck, [layout], 1, seed=3, randomise=DomainRandomisation(frame_sizes=((1280, 720),)))[0]
    rec = Recognizer(Calibration(calibrate_from_markers(tf.empty, tf.layout), templates), tf.layout)
    rec.finder.on_marker = lambda corners: False  # type: ignore[method-assign]
    return rec


def measure(templates: CardTemplates, views: int, seed: int, name: str = "") -> dict[str, object]:
    """Read ``views`` veiled views of every card through the agreeing-index route."""
    model = templates.model
    assert model.index is not None
    rec = _recognizer(templates)
    index_limit = model.index.min_margin
    rng = np.random.default_rng(seed)
    corners = canonical_corners().astype(np.float64)
    counts = {s: {"read": 0, "gained": 0, "wrong": 0} for s in SHARES}
    wrong_reads: list[str] = []
    in_use = recognizer_module.AGREEING_INDEX_SHARE
    recognizer_module.AGREEING_INDEX_SHARE = SHARES[0]
    try:
        for k, code in enumerate(CODES):
            progress(f"{name}: {code} ({k + 1}/{len(CODES)})")
            face = _for_views(templates.faces[code], VEILED)
            for _ in range(views):
                view = random_view(face, rng, VEILED)
                if rng.random() < 0.5:
                    view = np.ascontiguousarray(view[::-1, ::-1])
                m = model.read(view)
                got = rec._agreeing_read([(m, corners, view)], set())
                if got is None or m.indexes is None:
                    continue
                share = min(r.margin for r in m.indexes) / index_limit
                clear = m.accepted and m.margin >= model.min_margin and m.code == code
                for floor, c in counts.items():
                    if share >= floor:
                        c["read"] += 1
                        c["wrong"] += got[0] != code
                        c["gained"] += got[0] == code and not clear
                if got[0] != code:
                    wrong_reads.append(f"{code}->{got[0]} at {share:.2f} of the index limit")
    finally:
        recognizer_module.AGREEING_INDEX_SHARE = in_use
    progress("")
    return {"views": views * len(CODES), "by_share": {str(s): c for s, c in counts.items()},
            "wrong_reads": wrong_reads}


def main(argv: list[str] | None = None) -> int:
    return views_benchmark(__doc__.split("\n\n")[0], argv, DEFAULT_DECKS, 400, 11, "views of every card",
                           {"ranges": asdict(VEILED), "share_in_use": recognizer_module.AGREEING_INDEX_SHARE},
                           lambda name, _deck, templates, views, seed: measure(templates, views, seed, name))


if __name__ == "__main__":
    sys.exit(main())
