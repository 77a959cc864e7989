"""``table-controller camera recognize|simulate``: card recognition from the shell."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from table_controller.errors import ConfigError


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    camera = subparsers.add_parser("camera", help="read cards in camera frames; simulated camera frames")
    sub = camera.add_subparsers(dest="camera_command", metavar="ACTION")
    sub.required = True

    rec = sub.add_parser(
        "recognize",
        help="find and read every card in images",
        description=(
            'Prints per image {"image", "cards": [{"code", "confidence", "corners", "position"}], "ms"}; '
            "code is null for a no-read, position null for a card off every slot. Exit status 1 when "
            "any image cannot be read."
        ),
    )
    rec.add_argument("images", nargs="+", type=Path, metavar="IMAGE")
    rec.add_argument("--calibration", required=True, type=Path, metavar="CAL_DIR", help="calibration folder")
    rec.add_argument("--layout", metavar="FILE", help="layout file or game name (default: the calibration's)")
    rec.add_argument(
        "--threshold",
        type=float,
        help="caution: a multiple of the deck model's own margin limit "
        "(default 1.0; higher = fewer reads, more no-reads)",
    )
    rec.add_argument("--json", action="store_true", help="one JSON line per image")
    rec.set_defaults(func=run_recognize)

    record = sub.add_parser(
        "record",
        help="save frames from a camera as numbered PNGs (test media to replay with files:DIR)",
    )
    record.add_argument("--camera", default="opencv:0", help="opencv:INDEX|URL|FILE, files:DIR or sim:LAYOUT")
    record.add_argument("--frames", type=int, default=30, help="frames to save (default 30)")
    record.add_argument("--out", required=True, type=Path, help="output folder")
    record.set_defaults(func=run_record)

    sim = sub.add_parser(
        "simulate",
        help="render simulated camera frames of a layout with random cards, plus a calibration for them",
        description=(
            "Writes OUT/frames/frame_NNNN.jpg, OUT/truth.jsonl (the cards truly on each frame) and "
            "OUT/calibration/ (table plane from the markers of an empty frame, templates from the deck's "
            "art), ready for `camera recognize --calibration OUT/calibration OUT/frames/*.jpg`."
        ),
    )
    sim.add_argument("--layout", default="baccarat", help="game name or layout file (default baccarat)")
    sim.add_argument("--deck", default="svg-cards", help="deck design: svg-cards, kde-standard, kde-nicu-white")
    sim.add_argument("--frames", type=int, default=5, help="frames to render (default 5)")
    sim.add_argument("--cards", type=int, default=6, help="cards on each frame (default 6)")
    sim.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    sim.add_argument("--out", required=True, type=Path, help="output folder")
    sim.set_defaults(func=run_simulate)


@contextmanager
def progress_bar(label: str, total: int) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on a terminal; plain ``label: n/total`` lines otherwise."""
    if sys.stderr.isatty():
        from rich.progress import Progress

        with Progress(transient=True) as p:
            task = p.add_task(label, total=total)
            yield lambda done, tot: p.update(task, completed=done, total=tot)
    else:
        last = [-1]

        def plain(done: int, tot: int) -> None:
            step = max(1, tot // 10)
            if done == tot or done // step != last[0]:
                last[0] = done // step
                print(f"{label}: {done}/{tot}", file=sys.stderr, flush=True)

        yield plain


def run_recognize(args: argparse.Namespace) -> int:
    import cv2

    from firmware_interfaces.camera import Recognizer, load_calibration, load_layout

    cal = load_calibration(args.calibration)
    layout = (
        load_layout(args.layout)
        if args.layout
        else cal.layout or load_layout(cal.table.layout_name or _no_layout(args.calibration))
    )
    kwargs = {"threshold": args.threshold} if args.threshold is not None else {}
    rec = Recognizer(cal, layout, **kwargs)
    failures = 0
    for path in args.images:
        frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if frame is None:
            failures += 1
            _emit(args.json, {"image": str(path), "error": f"cannot read image {path}"})
            continue
        t0 = time.perf_counter()
        try:
            cards = rec.recognize(frame)
        except ValueError as e:
            failures += 1
            _emit(args.json, {"image": str(path), "error": str(e)})
            continue
        ms = (time.perf_counter() - t0) * 1000
        _emit(args.json, {"image": str(path), "cards": [c.to_dict() for c in cards], "ms": round(ms, 1)})
    return 1 if failures else 0


def _no_layout(cal_dir: Path) -> str:
    raise ConfigError(f"{cal_dir}/table.json names no layout: give --layout")


def _emit(as_json: bool, result: dict) -> None:  # type: ignore[type-arg]
    if as_json:
        print(json.dumps(result, separators=(",", ":")), flush=True)
        return
    if "error" in result:
        print(f"{result['image']}: error: {result['error']}")
        return
    print(f"{result['image']}: {len(result['cards'])} card(s) in {result['ms']} ms")
    for c in result["cards"]:
        code = c["code"] or "NO-READ"
        where = c["position"] or "OFF-SLOT (dropped/exposed)"
        print(f"  {code:8} {c['confidence']:.2f}  {where}")


def run_record(args: argparse.Namespace) -> int:
    import cv2

    from firmware_interfaces.camera.sources import open_source

    kind, _, target = args.camera.partition(":")
    camera = open_source(kind, target)
    args.out.mkdir(parents=True, exist_ok=True)
    saved = 0
    try:
        with progress_bar("recording", args.frames) as step:
            for i in range(args.frames):
                frame = camera.read()
                if frame is None:
                    print(f"camera {args.camera} gave no frame after {saved} frame(s)", file=sys.stderr)
                    break
                cv2.imwrite(str(args.out / f"frame_{i:04d}.png"), frame)
                saved += 1
                step(saved, args.frames)
    finally:
        camera.close()
    print(f"saved {saved} frame(s) to {args.out}")
    return 0 if saved == args.frames else 1


def run_simulate(args: argparse.Namespace) -> int:
    import random

    import cv2

    from calibration.layout import load_layout
    from calibration.table import calibrate_from_markers
    from calibration.templates import CardTemplates, write_report
    from firmware_interfaces.camera.deck_art import load_deck
    from firmware_interfaces.camera.scenes import Degradation, place_cards, random_deal
    from firmware_interfaces.camera.simulated import SimulatedCamera

    layout = load_layout(args.layout)
    deck = load_deck(args.deck)
    if not 0 <= args.cards <= len(layout.slots):
        raise ConfigError(f"--cards must be 0..{len(layout.slots)} for layout {layout.name}")
    cam = SimulatedCamera(layout, deck, seed=args.seed, degradation=Degradation())
    rng = random.Random(args.seed)
    cal_dir = args.out / "calibration"
    frames_dir = args.out / "frames"
    frames_dir.mkdir(parents=True, exist_ok=True)
    blank = cam.read()
    assert blank is not None
    plane = calibrate_from_markers(blank, layout)
    plane.save(cal_dir)
    from calibration.layout import layout_source
    from calibration.store import save_table_files
    from firmware_interfaces.camera.finder import learn_empty_table

    save_table_files(cal_dir, layout_source(args.layout), *learn_empty_table(plane, layout, blank))
    with progress_bar("templates", 52) as step:
        faces = {}
        for i, (code, face) in enumerate(deck.faces().items()):
            faces[code] = face
            step(i + 1, 52)
    templates = CardTemplates(faces)
    templates.save(cal_dir)
    write_report(cal_dir, {"deck": deck.name, "self_test": templates.self_test()})
    with open(args.out / "truth.jsonl", "w", encoding="utf-8") as truth, progress_bar("frames", args.frames) as step:
        for i in range(args.frames):
            cam.clear()
            for p in place_cards(layout, random_deal(layout, rng, args.cards), rng, cam.degradation, (63, 88)):
                cam.place(p.slot, p.code)
            frame = cam.read()
            assert frame is not None and cam.last_scene is not None
            path = frames_dir / f"frame_{i:04d}.jpg"
            cv2.imwrite(str(path), frame, [cv2.IMWRITE_JPEG_QUALITY, 92])
            cards = [
                {"code": c.code, "position": c.slot, "corners": [[round(x, 1), round(y, 1)] for x, y in c.corners]}
                for c in cam.last_scene.cards
            ]
            truth.write(json.dumps({"image": str(path), "cards": cards}) + "\n")
            step(i + 1, args.frames)
    print(f"wrote {args.frames} frame(s) to {frames_dir} and a calibration to {cal_dir}")
    return 0
