"""The simulated camera drives the real camera path: calibrate, recognise, stabilise."""

from __future__ import annotations

import pytest
from cardart import calibration_for, deck_or_skip

from calibration.errors import LayoutError
from calibration.layout import load_layout
from firmware_interfaces.camera import Recognizer, SimulatedCamera, Stabilizer
from firmware_interfaces.camera.sources import CameraSource
from firmware_interfaces.errors import DeviceConfigError


def _rig(layout_name: str, deck_name: str, seed: int = 2):  # type: ignore[no-untyped-def]
    layout = load_layout(layout_name)
    cam = SimulatedCamera(layout, deck_or_skip(deck_name), seed=seed)
    rec = Recognizer(calibration_for(deck_name, cam.read(), layout), layout)
    return cam, rec


def test_placed_cards_become_stable_after_three_frames() -> None:
    cam, rec = _rig("three-face", "kde-standard")
    assert isinstance(cam, CameraSource)
    cam.place("first", "KS")
    cam.place("player2", "9H", index=2)
    cam.place("banker", "4C", index=0)
    st = Stabilizer(frames=3)
    assert st.update(rec.recognize(cam.read())) == []
    assert st.update(rec.recognize(cam.read())) == []
    stable = st.update(rec.recognize(cam.read()))
    assert sorted((s.game_position, s.index, s.code) for s in stable) == [
        ("banker", 0, "4C"), ("first", 0, "KS"), ("player2", 2, "9H")]


def test_a_dropped_card_is_seen_off_every_slot() -> None:
    cam, rec = _rig("baccarat", "svg-cards")
    cam.place(None, "7D")
    cam.place("player1", "AS")
    st = Stabilizer(frames=2)
    st.update(rec.recognize(cam.read()))
    stable = st.update(rec.recognize(cam.read()))
    assert sorted((s.position or "-", s.code) for s in stable) == [("-", "7D"), ("player1", "AS")]


def test_blackout_gives_no_frame_and_clear_empties_the_table() -> None:
    cam, rec = _rig("teen-patti-2020", "svg-cards")
    cam.place("a1", "QC")
    cam.blackout(True)
    assert cam.read() is None
    cam.blackout(False)
    assert [r.code for r in rec.recognize(cam.read())] == ["QC"]
    cam.clear()
    assert rec.recognize(cam.read()) == []


def test_placing_on_an_unknown_slot_or_card_is_refused() -> None:
    cam, _ = _rig("baccarat", "svg-cards")
    with pytest.raises(LayoutError, match="layout baccarat has no slot 'box1.1'"):
        cam.place("box1", "AS", index=0)
    with pytest.raises(DeviceConfigError, match="unknown card code 'ZZ'"):
        cam.place("player1", "ZZ")


def test_reused_frames_follow_every_change_of_the_layout() -> None:
    cam = SimulatedCamera(load_layout("baccarat"), deck_or_skip("svg-cards"), seed=3, reuse_frames=5)
    first = cam.read()
    assert cam.read() is first  # unchanged layout: the frame is handed out again
    cam.place("player1", "AS")
    laid = cam.read()
    assert laid is not first and [c.code for c in cam.last_scene.cards] == ["AS"]
    for _ in range(5):
        assert cam.read() is laid
    assert cam.read() is not laid  # fresh noise after reuse_frames
