"""``table-controller calibrate table|templates|check``: set a camera up on a table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from table_controller.cli.camera_cmd import progress_bar
from table_controller.errors import ConfigError


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cal = subparsers.add_parser("calibrate", help="calibrate the camera: table plane, card templates, check")
    sub = cal.add_subparsers(dest="calibrate_command", metavar="ACTION")
    sub.required = True

    table = sub.add_parser(
        "table",
        help="table plane from the layout's four ArUco markers (or four points) in one frame",
        description=("Writes CAL_DIR/table.json (the homography from image pixels to table millimetres), "
                     "CAL_DIR/layout.toml (the layout calibrated with: recognize uses it), CAL_DIR/printed.png "
                     "(what is printed on the empty felt, which the card finder tells from cards) and "
                     "CAL_DIR/empty_table.png (the empty table seen from above, which every frame is compared "
                     "with: take the frame of the empty table). Without markers "
                     "in the layout, give --points: the corners of the layout's table_mm rectangle."),
    )
    table.add_argument("--image", required=True, type=Path, metavar="FRAME", help="a frame of the empty table")
    table.add_argument("--layout", required=True, help="layout file or game name (baccarat, three-pictures, ...)")
    table.add_argument("--points", metavar="X,Y", nargs=4,
                       help="the table outline's corners TL TR BR BL in pixels, instead of markers")
    table.add_argument("--out", required=True, type=Path, metavar="CAL_DIR")
    table.add_argument("--json", action="store_true")
    table.set_defaults(func=run_table)

    tpl = sub.add_parser(
        "templates",
        help="card templates from the studio's own deck",
        description=(
            "--from-images DIR: one upright frontal image per card named by its code (AS.png, 10H.png or "
            "TH.png, QD.jpg). --live: the calibration deck drawn through the shoe one card at a time under "
            "the camera; the shoe's card codes arrive one per line on standard input and each names the "
            "frame taken when it arrives (needs CAL_DIR/table.json first). Writes CAL_DIR/templates/, learns "
            "the deck (CAL_DIR/deck_model.npz, about 20 s of CPU) and self-tests it (CAL_DIR/templates.json): "
            "exit 1 below 100 %, naming the cards it confuses."
        ),
    )
    src = tpl.add_mutually_exclusive_group(required=True)
    src.add_argument("--from-images", type=Path, metavar="DIR")
    src.add_argument("--live", action="store_true", help="capture from --camera, codes from stdin")
    tpl.add_argument("--camera", default="opencv:0", help="camera for --live: opencv:INDEX|URL|FILE or files:DIR")
    tpl.add_argument("--layout", help="layout for --live (default: the calibration's)")
    tpl.add_argument("--out", required=True, type=Path, metavar="CAL_DIR")
    tpl.add_argument("--json", action="store_true")
    tpl.set_defaults(func=run_templates)

    check = sub.add_parser(
        "check",
        help="draw the overlay picture for the technician and report template self-test accuracy",
    )
    check.add_argument("--calibration", required=True, type=Path, metavar="CAL_DIR")
    check.add_argument("--image", required=True, type=Path, metavar="FRAME")
    check.add_argument("--layout", help="layout file or game name (default: the calibration's)")
    check.add_argument("--out", type=Path, help="overlay picture to write (default FRAME-overlay.png)")
    check.add_argument("--json", action="store_true")
    check.set_defaults(func=run_check)


def _read_image(path: Path):  # type: ignore[no-untyped-def]
    import cv2

    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise ConfigError(f"cannot read image {path}")
    return img


def _point(text: str) -> tuple[float, float]:
    try:
        x, y = text.split(",")
        return (float(x), float(y))
    except ValueError:
        raise ConfigError(f"bad point {text!r}: expected X,Y in pixels") from None


def run_table(args: argparse.Namespace) -> int:
    from calibration.layout import load_layout
    from calibration.table import calibrate_from_markers, calibrate_from_points

    layout = load_layout(args.layout)
    frame = _read_image(args.image)
    if args.points:
        plane = calibrate_from_points([_point(p) for p in args.points], (frame.shape[1], frame.shape[0]), layout)
    else:
        plane = calibrate_from_markers(frame, layout)
    path = plane.save(args.out)
    from calibration.layout import layout_source
    from calibration.store import save_table_files
    from firmware_interfaces.camera.finder import learn_empty_table

    save_table_files(args.out, layout_source(args.layout), *learn_empty_table(plane, layout, frame))
    result = {"table": str(path), "layout": layout.name, "rms_error_mm": round(plane.rms_error_mm, 3),
              "method": "points" if args.points else "markers"}
    print(json.dumps(result) if args.json else
          f"table plane written to {path} (layout {layout.name}, fit error {plane.rms_error_mm:.2f} mm)")
    return 0


def run_templates(args: argparse.Namespace) -> int:
    from calibration.templates import CardTemplates, load_face_images, write_report

    if args.from_images:
        with progress_bar("reading card images", 52) as step:
            faces = load_face_images(args.from_images, progress=step)
        source = str(args.from_images)
    else:
        faces = _live_capture(args)
        source = f"live:{args.camera}"
    templates = CardTemplates(faces)
    with progress_bar("learning the deck (views of every card)", 1) as step:
        templates.fit_model(progress=step)
    with progress_bar("self-test", 52) as step:
        report = templates.self_test(progress=step)
    folder = templates.save(args.out)
    write_report(args.out, {"source": source, "self_test": report})
    if args.json:
        print(json.dumps({"templates": str(folder), "self_test": report}))
    else:
        print(f"52 templates and the deck model written to {folder.parent}; self-test "
              f"{report['correct']}/{report['cards']} ({100 * report['accuracy']:.1f} %)")
        for pair in report["pairs"]:
            print(f"  cannot always tell {pair['cards'][0]} from {pair['cards'][1]}: {pair['why']}")
    return 0 if report["accuracy"] == 1.0 else 1


def _live_capture(args: argparse.Namespace) -> dict:  # type: ignore[type-arg]
    from calibration.capture import CaptureError, TemplateCapture
    from calibration.layout import load_layout
    from calibration.table import TablePlane
    from firmware_interfaces.camera.sources import open_source

    plane = TablePlane.load(args.out / "table.json")
    layout = load_layout(args.layout or plane.layout_name)
    kind, _, target = args.camera.partition(":")
    camera = open_source(kind, target)
    capture = TemplateCapture(plane, layout)
    try:
        with progress_bar("capturing the calibration deck", 52) as step:
            for line in sys.stdin:
                code = line.strip()
                if not code:
                    continue
                frame = camera.read()
                if frame is None:
                    raise ConfigError(f"camera {args.camera} gave no frame for card {code}")
                try:
                    capture.add(code, frame)
                except CaptureError as e:
                    print(f"skipped: {e}", file=sys.stderr)
                    continue
                step(len(capture.faces), 52)
                if not capture.missing:
                    break
    finally:
        camera.close()
    return capture.templates().faces


def run_check(args: argparse.Namespace) -> int:
    import cv2

    from calibration.overlay import draw_overlay
    from firmware_interfaces.camera import Recognizer, load_calibration, load_layout

    cal = load_calibration(args.calibration)
    layout = load_layout(args.layout or cal.table.layout_name)
    frame = _read_image(args.image)
    readings = Recognizer(cal, layout).recognize(frame)
    out = args.out or args.image.with_name(args.image.stem + "-overlay.png")
    cv2.imwrite(str(out), draw_overlay(frame, cal.table, layout, readings))
    report = cal.templates.self_test()
    result = {"overlay": str(out), "cards": [r.to_dict() for r in readings],
              "self_test": {k: report[k] for k in ("cards", "correct", "accuracy", "min_margin")},
              "table_fit_error_mm": round(cal.table.rms_error_mm, 3)}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"overlay written to {out}")
        print(f"table fit error {cal.table.rms_error_mm:.2f} mm; template self-test "
              f"{report['correct']}/{report['cards']} ({100 * report['accuracy']:.1f} %)")
        for r in readings:
            print(f"  {r.code or 'NO-READ':8} {r.confidence:.2f}  {r.position or 'OFF-SLOT'}")
    return 0
