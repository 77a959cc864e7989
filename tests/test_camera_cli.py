"""The calibrate and camera commands, end to end on simulated frames."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest
from cardart import deck_or_skip

from table_controller.cli import main


@pytest.fixture(scope="module")
def sim(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    deck_or_skip("kde-standard")
    out = tmp_path_factory.mktemp("sim")
    assert main(["camera", "simulate", "--layout", "baccarat", "--deck", "kde-standard",
                 "--frames", "2", "--seed", "3", "--out", str(out)]) == 0
    return out


def test_recognize_prints_one_json_line_per_image_matching_the_truth(sim: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    frames = sorted((sim / "frames").glob("*.jpg"))
    assert main(["camera", "recognize", "--calibration", str(sim / "calibration"), *map(str, frames), "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    truth = [json.loads(line) for line in (sim / "truth.jsonl").read_text().splitlines()]
    assert len(lines) == 2
    for line, true in zip(lines, truth, strict=True):
        result = json.loads(line)
        assert set(result) == {"image", "cards", "ms"}
        assert result["image"] == true["image"]
        assert sorted((c["position"], c["code"]) for c in result["cards"]) == sorted(
            (c["position"], c["code"]) for c in true["cards"])
        for c in result["cards"]:
            assert set(c) == {"code", "confidence", "corners", "position"}
            assert len(c["corners"]) == 4 and 0.0 <= c["confidence"] <= 1.0


def test_recognize_reports_an_unreadable_image_and_fails(sim: Path, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not a jpeg")
    assert main(["camera", "recognize", "--calibration", str(sim / "calibration"), str(bad), "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == {"image": str(bad), "error": f"cannot read image {bad}"}


def test_calibrate_table_then_templates_then_check(sim: Path, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    cal = tmp_path / "cal"
    frame = sorted((sim / "frames").glob("*.jpg"))[0]
    assert main(["calibrate", "table", "--image", str(frame), "--layout", "baccarat", "--out", str(cal), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert (table["layout"], table["method"]) == ("baccarat", "markers")
    assert table["rms_error_mm"] < 1.5
    faces = tmp_path / "faces"
    faces.mkdir()
    deck = deck_or_skip("kde-standard")
    for code, face in deck.faces().items():
        cv2.imwrite(str(faces / f"{code.replace('T', '10')}.png"), face)
    assert main(["calibrate", "templates", "--from-images", str(faces), "--out", str(cal), "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["self_test"]["accuracy"] == 1.0
    assert "reading card images: 52/52" in out.err
    overlay = tmp_path / "overlay.png"
    assert (
        main(["calibrate", "check", "--calibration", str(cal), "--image", str(frame), "--out", str(overlay), "--json"])
        == 0
    )
    check = json.loads(capsys.readouterr().out)
    assert check["self_test"]["accuracy"] == 1.0
    assert len(check["cards"]) == 6 and all(c["code"] for c in check["cards"])
    assert cv2.imread(str(overlay)).shape == (720, 1280, 3)


def test_missing_calibration_is_a_clear_error(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["camera", "recognize", "--calibration", str(tmp_path / "nope"), "x.jpg"]) == 2
    assert f"calibration folder {tmp_path / 'nope'} does not exist" in capsys.readouterr().err


def test_calibrate_table_without_markers_names_them(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), cv2.UMat(720, 1280, cv2.CV_8UC3).get() * 0)
    assert main(["calibrate", "table", "--image", str(blank), "--layout", "baccarat", "--out", str(tmp_path)]) == 2
    assert "ArUco marker(s) [0, 1, 2, 3] of layout baccarat not found" in capsys.readouterr().err


def test_live_template_capture_takes_shoe_codes_on_stdin(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import io
    import random

    from calibration.layout import load_layout
    from calibration.table import calibrate_from_markers
    from firmware_interfaces.camera.simulated import SimulatedCamera
    from table_controller.rules.cards import CODES

    layout = load_layout("teen-patti-2020")
    cam = SimulatedCamera(layout, deck_or_skip("svg-cards"), seed=8)
    cal = tmp_path / "cal"
    calibrate_from_markers(cam.read(), layout).save(cal)
    frames = tmp_path / "frames"
    frames.mkdir()
    order = random.Random(2).sample(CODES, 52)
    for i, code in enumerate(order):  # the dealer draws each card from the shoe and lays it in view
        cam.clear()
        cam.place("b2", code)
        cv2.imwrite(str(frames / f"frame_{i:04d}.png"), cam.read())
    shoe_output = "".join(f"{c.replace('T', '10')}\n" for c in order)
    monkeypatch.setattr("sys.stdin", io.StringIO(shoe_output))
    assert main(["calibrate", "templates", "--live", "--camera", f"files:{frames}", "--out", str(cal), "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["self_test"]["accuracy"] == 1.0
    assert "capturing the calibration deck: 52/52" in out.err
    assert len(list((cal / "templates").glob("*.png"))) == 52


def test_record_saves_numbered_frames_until_the_camera_stops(sim: Path, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "rec"
    assert main(["camera", "record", "--camera", f"files:{sim / 'frames'}", "--frames", "3", "--out", str(out)]) == 1
    assert sorted(p.name for p in out.iterdir()) == ["frame_0000.png", "frame_0001.png"]
    assert "gave no frame after 2 frame(s)" in capsys.readouterr().err


def test_a_custom_layout_without_markers_calibrated_from_four_points_is_kept_with_the_calibration(
    sim: Path, tmp_path, capsys
) -> None:  # type: ignore[no-untyped-def]
    """Found by the independent scene harness: `calibrate table --layout FILE` kept only the
    layout's name, so `camera recognize` refused it, or silently used a shipped layout of the
    same name; and a layout had to name markers even when calibrated from clicked points."""
    from calibration.layout import load_layout

    shipped = load_layout("baccarat")
    slots = (
        "\n".join(f"{s.name} = [{s.x}, {s.y}, {s.w}, {s.h}]" for s in shipped.slots) + "\nspare1 = [420, 10, 60, 60]"
    )
    own = tmp_path / "studio-table.toml"
    own.write_text(
        f'name = "baccarat"\ntable_mm = [{shipped.width_mm}, {shipped.height_mm}]\n'
        f"card_mm = [63, 88]\n[slots]\n{slots}\n",
        encoding="utf-8",
    )
    assert load_layout(own).markers.ids == ()
    frames = sorted((sim / "frames").glob("*.jpg"))
    cal_sim = json.loads((sim / "calibration" / "table.json").read_text())
    import numpy as np

    to_image = np.linalg.inv(np.array(cal_sim["image_to_table"]))
    corners = cv2.perspectiveTransform(np.array(shipped.outline_mm, np.float64).reshape(-1, 1, 2), to_image)
    points = [f"{x:.1f},{y:.1f}" for x, y in corners.reshape(-1, 2)]
    cal = tmp_path / "cal"
    assert (
        main(
            [
                "calibrate",
                "table",
                "--image",
                str(frames[0]),
                "--layout",
                str(own),
                "--points",
                *points,
                "--out",
                str(cal),
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["method"] == "points"
    assert (cal / "layout.toml").read_text(encoding="utf-8") == own.read_text(encoding="utf-8")
    assert (cal / "printed.png").exists()
    for name in ("templates", "deck_model.npz"):
        src = sim / "calibration" / name
        if src.is_dir():
            import shutil

            shutil.copytree(src, cal / name)
        else:
            (cal / name).write_bytes(src.read_bytes())
    # the layout now lives in the calibration: no --layout needed, and it is ours, not the shipped one
    from calibration.store import load_calibration

    loaded = load_calibration(cal)
    kept = loaded.layout
    assert kept is not None and "spare1" in [s.name for s in kept.slots]
    # the empty table is kept top-down at the finder's scale, beside the print mask
    assert loaded.printed is not None and loaded.empty_table is not None
    assert loaded.empty_table.shape[:2] == loaded.printed.shape[:2] and loaded.empty_table.shape[2] == 3
    assert main(["camera", "recognize", "--calibration", str(cal), str(frames[1]), "--json"]) == 0
    cards = json.loads(capsys.readouterr().out)["cards"]
    truth = [json.loads(line) for line in (sim / "truth.jsonl").read_text().splitlines()][1]["cards"]
    assert sorted((c["position"], c["code"]) for c in cards) == sorted((c["position"], c["code"]) for c in truth)
    # markers cannot calibrate a layout that has none: a clear refusal, not a crash
    assert main(["calibrate", "table", "--image", str(frames[0]), "--layout", str(own), "--out", str(cal)]) == 2
    assert "no markers" in capsys.readouterr().err


CAMERA_TABLE = """
[table]
id = "T01"
variant = "baccarat"

[sources]
cards = ["camera"]

[camera]
kind = "files"
source = "frames"
calibration = "nope"
{layout}

[panel]
gpio = "mock"
start_round = 17
close_betting = 27
card_dropped = 22
void_request = 23
supervisor_key = 24
lamp_betting = 5
lamp_dealing = 6
lamp_alarm = 13
buzzer = 19

[journal]
path = "T01.sqlite"
"""


@pytest.mark.parametrize(("layout", "message"), [
    ("", "camera.calibration: calibration folder {dir}/nope does not exist"),
    ('layout = "craps"', "camera.layout: unknown layout 'craps': shipped layouts are baccarat, "),
])
def test_a_camera_table_with_a_bad_calibration_is_not_started_and_the_key_is_named(
    tmp_path: Path, capsys, layout: str, message: str,  # type: ignore[no-untyped-def]
) -> None:
    config = tmp_path / "T01.toml"
    config.write_text(CAMERA_TABLE.format(layout=layout), encoding="utf-8")
    assert main(["run", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"table-controller: error: {config}: " + message.format(dir=tmp_path)), err
