"""Card recognition benchmark: one JSON object, one entry per deck design.

For each installed deck design (real card art, see scripts/install-card-art.sh)
it calibrates exactly as a studio would (templates from one image per card,
timed: ``calibration.templates.build_templates``, and apart the first read of
a clean frame, which finishes any calibration left for first use; table plane
from the ArUco markers of an empty frame) and reads a generated test set over the four games'
layouts: 6 cards a frame, some frames with a card off every slot, some empty.

* ``--hard`` (the default): randomised scenes (``DomainRandomisation``): five
  felt colours, slot lines touching the cards, printed words, a rail, chips, a
  hand's shadow, cards 56-64 mm wide, a pinhole camera tilted up to 25° and moved
  a little since the empty frame it was calibrated from, colour
  casts, exposure ±1 stop, vignette, glare on the cards, blur, motion blur,
  noise, JPEG, 1280x720 and 1920x1080 frames. Every card is also counted in
  bands of the conditions it was drawn under (``bands``).
* ``--classic``: today's ``Degradation`` at 1280x720 (1920x1080 for timing).
* ``--special``: also frames with a face-down card, a card half under a hand
  and a card cut by the frame edge: none of them may get a code, and there may be no
  wrong read or phantom among the other cards of those frames (``special`` in ``targets_met``).
* ``--perturb NAMES`` (comma-separated, or ``all``): the scored frames read again, each
  changed a little after the table was calibrated (shifted a pixel or two, turned 0.3°,
  re-encoded, fresh noise: :mod:`firmware_interfaces.camera.perturbations`), tallied apart
  in ``perturbed`` with the frames whose reads changed; a wrong read or a phantom there
  fails the accuracy target too.

Each deck design is "tuned-on" (in :data:`TUNED_ON`, the designs the recogniser
was developed against) or "held-out"; the accuracy targets are for held-out
designs. Timing is on one core: OpenCV and BLAS are limited to one thread and
the ms are the thread's CPU time of ``Recognizer.recognize`` (so other work on a
shared machine does not inflate them), on frames with 6 cards, per frame size
(at least :data:`MIN_TIMED_FRAMES`: the scored ones, then extra ones, whose reads are
counted apart in ``extra_timing_frames``: not in the read rate, but a wrong read or a phantom
there fails the accuracy target too);
the wall clock median is reported beside it, and the median of each frame's
least time over :data:`TIMED_REPEATS` reads (``ms_median_best_of_3``: the same
work, less of a shared machine's noise; the target is judged on the single
reads); ``machine`` says how fast the machine was at the run's start and end
(:func:`machine_reference`): timings of two runs compare only as far as those do.
Beside each size's figures, ``next_frame``: the same frames each read in full by a recogniser
that has just read its table's previous frame (a table's frame rate, in the cache a reading
table keeps warm; the judged read follows a fresh calibration, as a table's first frame does),
``speed_next_frame`` in ``targets_met`` (``held_out_targets_met`` asks every entry of every
held-out design's ``targets_met``);
``still_table_stream``: the CPU ms per frame of 30-frame streams of a still
6-card table (fresh sensor noise and JPEG each frame), where the recogniser
reuses its last full read while nothing moved (``firmware_interfaces.camera.change``),
and ``hand_over_table_stream``: the same tables with a dealer's hand sweeping across them
(``scenes.hand_over``), every frame read in full, and the codes given that no reader may
(a wrong one, or one for a card at least ``scenes.OCCLUDED_AT`` under the hand); the speed
target itself is judged on single frames, one recogniser each. Progress goes to stderr.

    python benchmarks/recognition.py [--frames 150] [--decks svg-cards,kde-dondorf]
                                     [--hard | --classic] [--special] [--seed 7]
                                     [--burnt-glare CHANCE] [--perturb NAMES|all]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import replace  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from calibration.layout import Layout, load_layout  # noqa: E402
from calibration.store import Calibration  # noqa: E402
from calibration.table import CalibrationError, calibrate_from_markers  # noqa: E402
from calibration.templates import CardTemplates, build_templates, load_face_images  # noqa: E402
from firmware_interfaces.camera.deck_art import CODES, DeckArt, available_decks, load_deck  # noqa: E402
from firmware_interfaces.camera.finder import learn_empty_table  # noqa: E402
from firmware_interfaces.camera.losses import CAUSES, loss_cause  # noqa: E402
from firmware_interfaces.camera.perturbations import PERTURBATIONS, perturbation  # noqa: E402
from firmware_interfaces.camera.recognizer import CardReading, Recognizer  # noqa: E402
from firmware_interfaces.camera.scenes import (  # noqa: E402
    OCCLUDED_AT,
    Degradation,
    DomainRandomisation,
    GeneratedFrame,
    generate_test_set,
    hand_over,
    shares_under_hand,
)
from firmware_interfaces.camera.scoring import Score, Tally, match  # noqa: E402

#: Deck designs the recogniser was tuned on; every other design is held out.
TUNED_ON = ("svg-cards", "kde-standard", "kde-nicu-white")
GAMES = ("baccarat", "three-pictures", "three-face", "teen-patti-2020")
TIMED_SIZES = ((1280, 720), (1920, 1080))
#: Frames with 6 cards timed per frame size at least (extra frames if the test set has fewer: scored apart).
#: A median of 15 frames (60 scored frames hold about that many at 720p) jumped by 20 % between
#: runs of the same code: the frames near it lie in two clusters (easy, and one hard card).
MIN_TIMED_FRAMES = 30
#: Extra frames are made this many at a time, until enough hold 6 cards.
EXTRA_CHUNK = 10
#: Each timed frame is also read this many times in all, and the least time kept (reported beside
#: the single read's: on this machine whole runs moved by 10-20 % with nothing else running).
TIMED_REPEATS = 3
TARGETS: dict[str, Any] = {
    "read_rate": 0.995, "wrong_reads": 0, "phantom_cards": 0,
    "fps_6_cards_1280x720": 30.0, "fps_6_cards_1920x1080": 15.0,
    "special_cards_given_a_code": 0,
    "applies_to": "held-out deck designs (speed: every design)",
}
#: A deck whose faces render smaller than this (px high), or off a card's aspect, is not
#: benchmarked unless named with --decks: deck_art renders some KDE designs badly.
MIN_FACE_PX = 150
CARD_ASPECT = (1.3, 1.65)


def progress(text: str) -> None:
    """One progress line on stderr, overwritten by the next."""
    print(f"\r{text:<60}", end="", file=sys.stderr, flush=True)


def art_problems(deck: DeckArt) -> list[str]:
    """What is wrong with a deck design's rendered faces, if anything."""
    faces = deck.faces()
    small = [c for c in CODES if faces[c].shape[0] < MIN_FACE_PX]
    odd = [c for c in CODES if not CARD_ASPECT[0] <= faces[c].shape[0] / faces[c].shape[1] <= CARD_ASPECT[1]]
    problems = []
    if small:
        problems.append(f"{len(small)} face(s) render below {MIN_FACE_PX} px high: {' '.join(small[:8])}")
    if odd:
        problems.append(f"{len(odd)} face(s) are not card-shaped (height/width outside {CARD_ASPECT}): "
                        f"{' '.join(odd[:8])}")
    return problems


def machine_reference() -> dict[str, float]:
    """How fast this machine is at this moment, to set the timings beside: thread CPU of a fixed
    Python loop (5 M additions) and the median thread CPU of a 720p frame warped to a 900 x 500
    top-down view (the finder's first step). The same code has timed 20-30 % apart on two
    machines of one kind, and up to 20 % apart from hour to hour on one (docs/camera.md)."""
    c0 = time.thread_time()
    total = 0
    for k in range(5_000_000):
        total += k
    loop_s = time.thread_time() - c0
    frame = np.random.default_rng(0).integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    tilt = np.array([[0.7, 0.05, -20.0], [0.0, 0.72, -40.0], [0.0, 0.0001, 1.0]])
    warps = []
    for _ in range(50):
        c0 = time.thread_time()
        cv2.warpPerspective(frame, tilt, (900, 500), flags=cv2.INTER_LINEAR)
        warps.append(time.thread_time() - c0)
    return {"python_loop_5m_s": round(loop_s, 3), "warp_720p_ms": round(float(np.median(warps)) * 1000, 3)}


def calibrate_like_a_studio(deck: DeckArt) -> tuple[object, float, float]:
    """Write one image per card named by code, read them back like a studio's photos, and
    time ``build_templates`` on them: (templates, wall seconds, CPU seconds of the process)."""
    with tempfile.TemporaryDirectory() as tmp:
        for code, face in deck.faces().items():
            cv2.imwrite(str(Path(tmp) / f"{code}.png"), face)
        faces = load_face_images(Path(tmp))
    # a fresh model cache, so the deck model is really fitted (and timed) here
    before = os.environ.get("TABLE_CONTROLLER_CACHE")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TABLE_CONTROLLER_CACHE"] = cache
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            templates = build_templates(faces)
            templates.fit_model()
            return templates, time.perf_counter() - t0, time.process_time() - c0
        finally:
            if before is None:
                del os.environ["TABLE_CONTROLLER_CACHE"]
            else:
                os.environ["TABLE_CONTROLLER_CACHE"] = before


#: What a views benchmark measures of one deck design: (design name, its art, its templates as a
#: studio calibrates them, views of every card, seed) -> figures.
ViewsMeasure = Callable[[str, DeckArt, CardTemplates, int, int], dict[str, object]]


def views_benchmark(description: str, argv: list[str] | None, default_decks: tuple[str, ...], views: int,
                    seed: int, views_help: str, header: dict[str, object], measure: ViewsMeasure) -> int:
    """The ``main`` of a benchmark that reads views of cards per deck design (``suit_twins``,
    ``veiled_indexes``, ``pip_rivals``): its options (``--decks``, ``--views``, ``--seed``,
    ``--json``), each design calibrated as a studio would (:func:`calibrate_like_a_studio`) and
    measured, and one JSON object on stdout: ``header``, the seed, and per design whether it
    was tuned on and its figures."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--decks", default=",".join(default_decks), help="comma-separated deck designs")
    parser.add_argument("--views", type=int, default=views, help=f"{views_help} (default {views})")
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    args = parser.parse_args(argv)
    decks: dict[str, object] = {}
    for name in args.decks.split(","):
        progress(f"{name}: calibrating")
        deck = load_deck(name)
        templates, _, _ = calibrate_like_a_studio(deck)
        assert isinstance(templates, CardTemplates)
        decks[name] = {"tuned_on": name in TUNED_ON, **measure(name, deck, templates, args.views, args.seed)}
    print(json.dumps({**header, "seed": args.seed, "decks": decks}, indent=2))
    return 0


def _size(tf: GeneratedFrame) -> str:
    h, w = tf.scene.image.shape[:2]
    return f"{w}x{h}"


def _timing(ms: list[float], wall: list[float], source: str, best: list[float]) -> dict[str, object]:
    if not ms:
        return {"frames_timed": 0}
    med = float(np.median(ms))
    best_med = float(np.median(best)) if best else None
    return {"frames_timed": len(ms), "timed_on": source, "ms_median": round(med, 2),
            "ms_p95": round(float(np.percentile(ms, 95)), 2), "wall_ms_median": round(float(np.median(wall)), 2),
            "fps": round(1000 / med, 1) if med > 0 else None,
            f"ms_median_best_of_{TIMED_REPEATS}": round(best_med, 2) if best_med is not None else None,
            f"fps_best_of_{TIMED_REPEATS}": round(1000 / best_med, 1) if best_med else None}


def _best_of(rec_for: Callable[[], Recognizer], image: np.ndarray, first_ms: float) -> float:
    """The least thread CPU ms of :data:`TIMED_REPEATS` reads of ``image`` (the first took
    ``first_ms``), each by a fresh recogniser: the same work, less of the machine's noise."""
    return min([first_ms] + [_timed_read(rec_for(), image)[1] for _ in range(TIMED_REPEATS - 1)])


def _recognizer(tf: GeneratedFrame, templates: object) -> Recognizer:
    """Calibrated as ``calibrate table`` does it: the plane from the empty frame's markers and
    the print on the empty felt."""
    plane = calibrate_from_markers(tf.empty, tf.layout)
    printed, empty_table = learn_empty_table(plane, tf.layout, tf.empty)
    return Recognizer(Calibration(plane, templates, printed=printed, empty_table=empty_table),  # type: ignore[arg-type]
                      tf.layout)


def _timed_read(rec: Recognizer, image: np.ndarray) -> tuple[list, float, float]:  # type: ignore[type-arg]
    t0, c0 = time.perf_counter(), time.thread_time()
    readings = rec.recognize(image)
    return readings, (time.thread_time() - c0) * 1000, (time.perf_counter() - t0) * 1000


#: A still-table stream: frames per scene (the first as rendered, the rest with fresh sensor
#: noise and JPEG, as a camera's next frames of the same table), and how many scenes per size.
STREAM_FRAMES = 30
STREAM_SCENES = 4


def _next_frame(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noisy = np.clip(image.astype(np.float32) + rng.normal(0, 3, image.shape), 0, 255).astype(np.uint8)
    return cv2.imdecode(cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, 75])[1], cv2.IMREAD_COLOR)


def _stream_timing(scenes: list[GeneratedFrame], templates: object) -> dict[str, object]:
    """Thread CPU ms per frame over still-table streams of 6-card scenes (one recogniser per
    stream, as a table has one): the first frame of each is read in full, the others are
    reused while nothing moved (``Recognizer.frames_reused``), one in 30 read again. Also
    whether every frame of a stream reported the same cards as its first."""
    rng = np.random.default_rng(0)
    ms: list[float] = []
    read = reused = 0
    stable = True
    for tf in scenes[:STREAM_SCENES]:
        rec = _recognizer(tf, templates)
        first = None
        for k in range(STREAM_FRAMES):
            image = tf.scene.image if k == 0 else _next_frame(tf.scene.image, rng)
            readings, t_ms, _ = _timed_read(rec, image)
            ms.append(t_ms)
            key = sorted((r.code or "-", r.position or "-") for r in readings)
            first = key if first is None else first
            stable = stable and key == first
        read, reused = read + rec.frames_read, reused + rec.frames_reused
    if not ms:
        return {"frames_timed": 0}
    mean = float(np.mean(ms))
    return {"frames_timed": len(ms), "scenes": min(len(scenes), STREAM_SCENES), "ms_mean": round(mean, 2),
            "fps": round(1000 / mean, 1) if mean > 0 else None, "frames_read_in_full": read,
            "frames_reused": reused, "same_cards_every_frame": stable}


def _next_frame_timing(frames: list[tuple[GeneratedFrame, list[tuple[str, str]]]],
                       templates: object) -> dict[str, object]:
    """Thread CPU ms of a table's next frame read in full: for each timed 6-card frame (with
    the reads its judged first read gave), a recogniser calibrated on its table first reads the
    table's previous frame (the same scene with fresh sensor noise and JPEG, :func:`_next_frame`),
    is told that something moved since (``ChangeDetector.forget``: a card laid, a hand gone),
    and reads the frame in full. This is the cost at a table's frame rate, in the cache a table
    that is reading keeps warm; the judged read follows a fresh calibration, as a table's first
    frame does, and costs more (measured in docs/camera.md, session 69). Also how many frames it
    read as the judged first read did."""
    rng = np.random.default_rng(2)
    ms: list[float] = []
    same = full = 0
    for tf, first_reads in frames:
        rec = _recognizer(tf, templates)
        rec.recognize(_next_frame(tf.scene.image, rng))
        if rec.change is not None:
            rec.change.forget()
        before = rec.frames_read
        readings, t_ms, _ = _timed_read(rec, tf.scene.image)
        full += rec.frames_read - before
        ms.append(t_ms)
        same += _read_keys(readings) == first_reads
    if not ms:
        return {"frames_timed": 0}
    med = float(np.median(ms))
    return {"frames_timed": len(ms), "frames_read_in_full": full, "ms_median": round(med, 2),
            "ms_p95": round(float(np.percentile(ms, 95)), 2), "fps": round(1000 / med, 1) if med > 0 else None,
            "frames_read_as_first": same}


#: Frames of a stream with a dealer's hand sweeping across the table.
HAND_FRAMES = 30


def _hand_at(tf: GeneratedFrame, k: int) -> tuple[float, float]:
    """Where the palm of a dealer's hand sweeping across the table, left to right and a little
    up and down, lies in frame ``k`` (table mm)."""
    w, h = tf.layout.width_mm, tf.layout.height_mm
    return (w * (0.05 + 0.9 * k / (HAND_FRAMES - 1)), h * (0.5 + 0.15 * np.sin(k / 3)))


def _with_hand(tf: GeneratedFrame, k: int, rng: np.random.Generator) -> np.ndarray:
    """The scene as the camera's frame ``k`` of the sweeping hand (``scenes.hand_over``), with
    fresh sensor noise and JPEG."""
    out = hand_over(tf.scene.image, tf.layout, tf.scene.table_to_image, _hand_at(tf, k), seed=k)
    noisy = np.clip(out.astype(np.float32) + rng.normal(0, 3, out.shape), 0, 255).astype(np.uint8)
    return cv2.imdecode(cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, 75])[1], cv2.IMREAD_COLOR)


def _wrong_under_hand(tf: GeneratedFrame, k: int, readings: list[CardReading]) -> int:
    """How many of ``readings`` name a code no reader may give in frame ``k`` of the sweeping
    hand: another card's, a code for a card the hand covers by OCCLUDED_AT or more, or any
    code where no card lies."""
    cards = tf.scene.cards
    covered = shares_under_hand(tf.layout, tf.scene.table_to_image, _hand_at(tf, k),
                                [np.array(c.corners) for c in cards])
    wrong = 0
    for r in readings:
        if r.code is None:
            continue
        at = np.mean(r.corners, axis=0)
        near = [j for j, c in enumerate(cards) if np.hypot(*(np.mean(c.corners, axis=0) - at)) < 30]
        if not near or cards[near[0]].code != r.code or covered[near[0]] >= OCCLUDED_AT:
            wrong += 1
    return wrong


def _hand_stream_timing(scenes: list[GeneratedFrame], templates: object) -> dict[str, object]:
    """Thread CPU ms per frame over streams of a 6-card table with a dealer's hand sweeping
    across it (no frame is still as a whole: every frame is read in full), one recogniser per
    stream, and how many codes it gave that no reader may (``_wrong_under_hand``)."""
    rng = np.random.default_rng(1)
    ms: list[float] = []
    wrong = 0
    for tf in scenes[:STREAM_SCENES]:
        rec = _recognizer(tf, templates)
        for k in range(HAND_FRAMES):
            readings, t_ms, _ = _timed_read(rec, _with_hand(tf, k, rng))
            ms.append(t_ms)
            wrong += _wrong_under_hand(tf, k, readings)
    if not ms:
        return {"frames_timed": 0}
    return {"frames_timed": len(ms), "scenes": min(len(scenes), STREAM_SCENES),
            "ms_mean": round(float(np.mean(ms)), 2), "ms_median": round(float(np.median(ms)), 2),
            "ms_p95": round(float(np.percentile(ms, 95)), 2), "codes_no_reader_may_give": wrong}


def _losses(tf: GeneratedFrame, rec: Recognizer, readings: list[CardReading], label: str) -> list[dict[str, object]]:
    """Each nameable card of ``tf`` left unread or unfound by ``rec`` (its ``readings``), with
    why (``losses.loss_cause``: the card's print, the finder's outline, or the reader's tests)."""
    out: list[dict[str, object]] = []
    outcomes, _ = match(tf.scene.cards, readings)
    for card, outcome, _reading in outcomes:
        if outcome in ("no_read", "missed") and card.code is not None:
            out.append({"frame": label, "code": card.code, "slot": card.slot, "outcome": outcome,
                        **loss_cause(tf.scene.image, card, rec).to_dict()})
    return out


def scene_set(deck: DeckArt, layouts: list[Layout], frames: int, seed: int, hard: bool,
              size: tuple[int, int] | None = None, special: bool = False,
              burnt_glare: float = 0.0, first: int = 0) -> list[GeneratedFrame]:
    """The frames to read: randomised (``hard``, ``special`` adds the special cards,
    ``burnt_glare`` is the chance of a burnt-out highlight on a card) or classic; ``size``
    fixes the frame size (for timing); ``first``: the set's first frame number."""
    if hard or special:
        r = DomainRandomisation.with_special_cards() if special else DomainRandomisation()
        r = replace(r, burnt_glare_chance=burnt_glare)
        if size is not None:
            r = replace(r, frame_sizes=(size,))
        return generate_test_set(deck, layouts, frames, seed=seed, randomise=r, first=first)
    return generate_test_set(deck, layouts, frames, seed=seed, degradation=Degradation(),
                             frame_size=size or (1280, 720), first=first)


def _read_keys(readings: list[CardReading]) -> list[tuple[str, str]]:
    return sorted((r.code or "-", r.position or "-") for r in readings)


def bench_perturbed(name: str, frames_set: list[GeneratedFrame], templates: object, kinds: list[str],
                    plain: dict[int, list[tuple[str, str]]]) -> dict[str, object]:
    """The scored frames read again under each perturbation in ``kinds``, each by a
    recogniser calibrated on the unchanged table: per perturbation the tally, its errors and
    the frames whose reads (code and slot) differ from ``plain`` (frame index: reads)."""
    out: dict[str, object] = {}
    for kind in kinds:
        perturb = perturbation(kind)
        score = Score()
        changed: list[int] = []
        for i, tf in enumerate(frames_set):
            if i not in plain:
                continue  # its table did not calibrate
            progress(f"{name}: perturbed {kind} frame {i + 1}/{len(frames_set)}")
            readings = _recognizer(tf, templates).recognize(perturb(tf.scene.image, i))
            score.add(tf.scene.cards, readings, f"{name}#{i}+{kind}", conditions=tf.scene.meta.get("conditions"))
            if _read_keys(readings) != plain[i]:
                changed.append(i)
        tally = score.to_dict()
        out[kind] = {**{k: tally[k] for k in ("cards", "read_correctly", "read_rate", "no_reads", "missed",
                                              "wrong_reads", "phantom_cards")},
                     "frames_read_differently": changed, "examples_of_errors": score.errors[:8]}
    return out


def bench_deck(name: str, deck: DeckArt, frames: int, seed: int, hard: bool,
               special: bool, burnt_glare: float = 0.0, perturb: list[str] | None = None) -> dict[str, object]:
    """Calibrate for one deck design, read its test set and report counts, bands, timing."""
    design = "tuned-on" if name in TUNED_ON else "held-out"
    progress(f"{name}: calibrating")
    templates, cal_s, cal_cpu_s = calibrate_like_a_studio(deck)
    layouts = [load_layout(g) for g in GAMES]
    score = Score()
    ms_all: list[float] = []
    timed: dict[str, tuple[list[float], list[float], list[float]]] = {
        f"{w}x{h}": ([], [], []) for w, h in TIMED_SIZES}
    plane_failures: list[str] = []
    # every timed 6-card frame (scored first, then extra) with the reads of its judged read, per size
    timed_frames: dict[str, list[tuple[GeneratedFrame, list[tuple[str, str]]]]] = {}
    plain_reads: dict[int, list[tuple[str, str]]] = {}
    losses: list[dict[str, object]] = []
    t_gen = time.perf_counter()
    frames_set = scene_set(deck, layouts, frames, seed, hard, burnt_glare=burnt_glare)
    gen_s = time.perf_counter() - t_gen
    # the first read may finish a calibration that build_templates left for later (a model
    # fitted on first use): time it apart, on a clean frame with cards, and keep it out of
    # the per-frame figures
    progress(f"{name}: first read")
    clean = generate_test_set(deck, layouts[:1], 1, seed=seed, off_layout_every=0, degradation=Degradation.mild())[0]
    t0, c0 = time.perf_counter(), time.process_time()
    _recognizer(clean, templates).recognize(clean.scene.image)
    first_s, first_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    for i, tf in enumerate(frames_set):
        progress(f"{name}: frame {i + 1}/{frames}")
        try:
            rec = _recognizer(tf, templates)
        except CalibrationError as e:
            plane_failures.append(f"{name}#{i}: {e}")
            continue
        readings, ms, wall = _timed_read(rec, tf.scene.image)
        ms_all.append(ms)
        if len(tf.scene.cards) == 6 and _size(tf) in timed:
            timed[_size(tf)][0].append(ms)
            timed[_size(tf)][1].append(wall)
            timed[_size(tf)][2].append(_best_of(partial(_recognizer, tf, templates), tf.scene.image, ms))
            timed_frames.setdefault(_size(tf), []).append((tf, _read_keys(readings)))
        score.add(tf.scene.cards, readings, f"{name}#{i}", conditions=tf.scene.meta.get("conditions"))
        losses += _losses(tf, rec, readings, f"{name}#{i}")
        plain_reads[i] = _read_keys(readings)
    timing: dict[str, dict[str, object]] = {}
    # the extra frames timed are read in full too: scored apart (a wrong read there is one)
    extra_score = Score()
    for w, h in TIMED_SIZES:
        key = f"{w}x{h}"
        size_ms, size_wall, size_best = timed[key]
        source = "scored frames"
        if len(size_ms) < MIN_TIMED_FRAMES:  # the test set has too few frames of this size: time extra ones
            source = "scored frames + extra frames" if size_ms else "extra frames"
            first = 0
            while len(size_ms) < MIN_TIMED_FRAMES and first < 20 * MIN_TIMED_FRAMES:
                extra = scene_set(deck, layouts, EXTRA_CHUNK, seed + 1000 + w, hard, (w, h),
                                  burnt_glare=burnt_glare, first=first)
                for j, tf in enumerate(extra, start=first):
                    if len(size_ms) >= MIN_TIMED_FRAMES:
                        break
                    if len(tf.scene.cards) != 6:
                        continue
                    progress(f"{name}: timing {key} {j + 1} ({len(size_ms) + 1}/{MIN_TIMED_FRAMES})")
                    try:
                        t_rec = _recognizer(tf, templates)
                    except CalibrationError as e:  # counted as the scored frames' are, not the end of the run
                        plane_failures.append(f"{name}#timing{key}-{j}: {e}")
                        continue
                    t_readings, t_ms, t_wall = _timed_read(t_rec, tf.scene.image)
                    extra_score.add(tf.scene.cards, t_readings, f"{name}#timing{key}-{j}",
                                    conditions=tf.scene.meta.get("conditions"))
                    size_ms.append(t_ms)
                    size_wall.append(t_wall)
                    size_best.append(_best_of(partial(_recognizer, tf, templates), tf.scene.image, t_ms))
                    timed_frames.setdefault(key, []).append((tf, _read_keys(t_readings)))
                first += EXTRA_CHUNK
        timing[key] = _timing(size_ms, size_wall, source, size_best)
        progress(f"{name}: next frames {key}")
        frames_at = timed_frames.pop(key, [])  # (let go of each size's frames once timed)
        timing[key]["next_frame"] = _next_frame_timing(frames_at, templates)
        scenes = [tf for tf, _ in frames_at]
        progress(f"{name}: still-table streams {key}")
        timing[key]["still_table_stream"] = _stream_timing(scenes, templates)
        progress(f"{name}: streams with a hand {key}")
        timing[key]["hand_over_table_stream"] = _hand_stream_timing(scenes, templates)
    result: dict[str, object] = {"design": design}
    result.update(score.to_dict())
    result.update({
        "frames": frames,
        "plane_calibration_failures": plane_failures,
        "ms_per_frame_median": round(float(np.median(ms_all)), 2) if ms_all else None,
        "ms_6_cards": timing,
        "calibration_s": round(cal_s, 3),
        "calibration_cpu_s": round(cal_cpu_s, 3),
        "first_read_s": round(first_s, 3),
        "first_read_cpu_s": round(first_cpu_s, 3),
        "scene_generation_s_per_frame": round(gen_s / max(1, frames), 3),
    })
    self_test = getattr(templates, "self_test", None)
    if callable(self_test):
        result["self_test_accuracy"] = self_test(trials=2)["accuracy"]
    result["examples_of_errors"] = score.errors[:8]
    result["lost_by_cause"] = {cause: sum(1 for loss in losses if loss["cause"] == cause) for cause in CAUSES}
    result["losses"] = losses
    extra_tally = extra_score.to_dict()
    kept = ("cards", "read_correctly", "correct_no_read", "read_rate", "no_reads", "missed", "wrong_reads",
            "phantom_cards")
    result["extra_timing_frames"] = {**{k: extra_tally[k] for k in kept},
                                     "examples_of_errors": extra_score.errors[:8]}
    if special:
        result["special"] = bench_special(name, deck, templates, layouts, frames, seed + 1)
    perturbed_clean = True
    if perturb:
        result["perturbed"] = bench_perturbed(name, frames_set, templates, perturb, plain_reads)
        perturbed_clean = all(p["wrong_reads"] == 0 and p["phantom_cards"] == 0  # type: ignore[index]
                              for p in result["perturbed"].values())  # type: ignore[attr-defined]
    fps720 = float(timing["1280x720"].get("fps") or 0)  # type: ignore[arg-type]
    fps1080 = float(timing["1920x1080"].get("fps") or 0)  # type: ignore[arg-type]
    accuracy_met = bool(score.read_rate >= TARGETS["read_rate"] and score.wrong == 0 and score.phantom == 0
                        and extra_score.wrong == 0 and extra_score.phantom == 0 and perturbed_clean)
    speed_met = bool(fps720 >= TARGETS["fps_6_cards_1280x720"] and fps1080 >= TARGETS["fps_6_cards_1920x1080"])
    # the target is for a frame read just after a calibration; a table's next frame and a still
    # table's stream are reported beside it
    def fps_met(entry: str) -> bool:
        def fps(key: str) -> float:
            figures = timing[key].get(entry)
            return float(figures.get("fps") or 0) if isinstance(figures, dict) else 0.0
        return (fps("1280x720") >= TARGETS["fps_6_cards_1280x720"]
                and fps("1920x1080") >= TARGETS["fps_6_cards_1920x1080"])

    result["targets_met"] = {"accuracy": accuracy_met, "speed": speed_met,
                             "speed_next_frame": fps_met("next_frame"),
                             "speed_still_table_stream": fps_met("still_table_stream")}
    if special:
        result["targets_met"]["special"] = special_met(result["special"])  # type: ignore[index,arg-type]
    progress("")
    print("\r", end="", file=sys.stderr)
    return result


def special_met(special: dict[str, Any]) -> bool:
    """The ``special`` verdict on what :func:`bench_special` measured: no special card given a
    code, and no wrong read and no phantom among the other cards of those frames (a wrong read
    is one wherever it lies: a 3H and a 2H in a smeared special scene were read 3D and 2D, and
    until session 70 failed no verdict)."""
    others = special["other_cards_in_these_frames"]
    return bool(special["given_a_code"] == 0 and others["wrong_reads"] == 0 and others["phantom_cards"] == 0)


def bench_special(name: str, deck: DeckArt, templates: object, layouts: list[Layout], frames: int,
                  seed: int) -> dict[str, object]:
    """Frames with a face-down card, a card half under a hand and one cut by the frame edge:
    how many of them got a code (must be 0), by kind; the other cards of those frames apart."""
    kinds: dict[str, Tally] = {}
    others = Score()
    examples: list[str] = []
    for i, tf in enumerate(scene_set(deck, layouts, frames, seed, hard=True, special=True)):
        progress(f"{name}: special frame {i + 1}/{frames}")
        try:
            readings = _recognizer(tf, templates).recognize(tf.scene.image)
        except CalibrationError:
            continue
        outcomes, _ = match(tf.scene.cards, readings)
        for t, outcome, r in outcomes:
            if t.code is None:
                kind = str(t.conditions.get("kind", "?"))
                kinds.setdefault(kind, Tally()).count(outcome)
                if outcome == "wrong" and r is not None and len(examples) < 8:
                    examples.append(f"{name}#{i} {kind} card at {t.slot} given code {r.code}")
        on_special = {id(r) for t, _, r in outcomes if t.code is None and r is not None}
        others.add([t for t in tf.scene.cards if t.code is not None],
                   [r for r in readings if id(r) not in on_special], f"{name}#{i}")
    by_kind = {kind: {"cards": t.cards, "given_a_code": t.wrong, "no_read": t.correct_no_read, "not_found": t.missed}
               for kind, t in sorted(kinds.items())}
    return {
        "frames": frames,
        "cards": sum(t.cards for t in kinds.values()),
        "given_a_code": sum(t.wrong for t in kinds.values()),
        "by_kind": by_kind,
        "other_cards_in_these_frames": {k: v for k, v in others.to_dict().items() if k != "bands"},
        "examples": examples + [e for e in others.errors if " WRONG " in e or " PHANTOM " in e][:8],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=150, help="frames per deck design (default 150)")
    parser.add_argument("--decks", help="comma-separated deck designs (default: every one installed whose art "
                                        "renders well)")
    parser.add_argument("--seed", type=int, default=7)
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--hard", dest="hard", action="store_true", default=True,
                      help="randomised scenes (domain randomisation; the default)")
    kind.add_argument("--classic", dest="hard", action="store_false", help="today's Degradation scenes")
    parser.add_argument("--special", action="store_true",
                        help="also frames with face-down, half-covered and cut cards: none may get a code, "
                             "and no wrong read or phantom among the other cards of those frames")
    parser.add_argument("--burnt-glare", type=float, default=0.0, metavar="CHANCE",
                        help="chance per frame of a burnt-out highlight on a card (0..1, default 0); a card "
                             "burnt over half of it must get no code")
    parser.add_argument("--perturb", metavar="NAMES", default="",
                        help="also read the scored frames again, each changed a little after calibration: "
                             f"comma-separated, of {', '.join(PERTURBATIONS)}, or 'all'")
    parser.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    args = parser.parse_args()
    if not 0.0 <= args.burnt_glare <= 1.0:
        parser.error("--burnt-glare is a chance, 0..1")
    named_perturbations = [k.strip() for k in args.perturb.split(",") if k.strip()]
    perturb = list(PERTURBATIONS) if named_perturbations == ["all"] else list(dict.fromkeys(named_perturbations))
    unknown = [k for k in perturb if k not in PERTURBATIONS]
    if unknown:
        parser.error(f"--perturb: unknown {', '.join(unknown)} (known: {', '.join(PERTURBATIONS)}, all)")
    cv2.setNumThreads(1)
    named = args.decks.split(",") if args.decks else None
    names = named or available_decks()
    if not names:
        print(json.dumps({"benchmark": "recognition", "error": "no card art: run scripts/install-card-art.sh"}))
        return 1
    out: dict[str, object] = {
        "benchmark": "recognition", "scenes": "hard" if args.hard else "classic", "special": args.special,
        "burnt_glare_chance": args.burnt_glare, "perturbations": perturb,
        "frame_sizes": ["1280x720", "1920x1080"] if args.hard else ["1280x720"], "cores": 1,
        "seed": args.seed, "targets": TARGETS, "tuned_on": list(TUNED_ON),
    }
    machine = {"at_start": machine_reference()}
    decks: dict[str, object] = {}
    skipped: dict[str, object] = {}
    for name in names:
        progress(f"{name}: loading art")
        try:
            deck = load_deck(name)
            problems = art_problems(deck)
        except Exception as e:  # a deck that will not render is reported, not fatal  # noqa: BLE001
            skipped[name] = f"{type(e).__name__}: {e}"
            continue
        if problems and named is None:
            skipped[name] = problems
            continue
        result = bench_deck(name, deck, args.frames, args.seed, args.hard, args.special, args.burnt_glare, perturb)
        if problems:
            result["art_problems"] = problems
        decks[name] = result
        extra = result["extra_timing_frames"]
        print(f"{name}: read rate {result['read_rate']}, wrong {result['wrong_reads']}, "
              f"phantom {result['phantom_cards']}; extra timing frames: wrong {extra['wrong_reads']}, "  # type: ignore[index]
              f"phantom {extra['phantom_cards']}", file=sys.stderr)  # type: ignore[index]
    machine["at_end"] = machine_reference()
    out["machine"] = machine
    out["decks"] = decks
    out["skipped_decks"] = skipped
    held_out = [d for d in decks.values() if d["design"] == "held-out"]  # type: ignore[index]
    out["held_out_targets_met"] = bool(held_out) and all(
        all(d["targets_met"].values()) for d in held_out)  # type: ignore[index]
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
