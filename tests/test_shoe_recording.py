"""Record a reader's byte stream and replay it through the real drivers.

Until a studio contributes a recording of real hardware (it goes in
tests/fixtures/ with a note of the device), the tests record shoes we did not
write at run time: the independent conformance shoe and the independent line
reader emulator.
"""

from __future__ import annotations

import argparse
import io
import json
import threading
import time
from pathlib import Path

import pytest

from firmware_interfaces.shoe import FaultPlan, FaultyTransport, ShoeDriver, open_url
from firmware_interfaces.shoe.lines import LineReaderDriver
from firmware_interfaces.shoe.recording import (
    Recording,
    RecordingError,
    RecordingWriter,
    ReplayTransport,
    recording_opener,
)
from firmware_interfaces.shoe.testing import EventRecorder
from table_controller.cli.shoe_cmd import run_replay
from tests.conformance.slp1_shoe import ConformanceShoe, PtyShoe, ShoeBehaviour
from tests.linereader.emulator import DIALECTS, Faults, LineReaderPty, random_deck

pytestmark = pytest.mark.timeout(90)
FIXTURES = Path(__file__).parent / "fixtures"


def wait_cards(recorder: EventRecorder, n: int, timeout: float = 30) -> None:
    assert recorder.wait_for(lambda ev: len(recorder.drawn) >= n, timeout), recorder.drawn


def replay(recording: Recording, driver_class: type = ShoeDriver, **kw: object) -> EventRecorder:
    transport = ReplayTransport(recording)
    got = EventRecorder()
    driver = driver_class(lambda: transport, listener=got, **kw)
    driver.start()
    try:
        deadline = time.monotonic() + 20
        while not transport.exhausted and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
    finally:
        driver.close()
    return got


def test_a_recorded_smart_shoe_replays_to_the_same_cards(tmp_path: Path) -> None:
    behaviour = ShoeBehaviour(drop=0.04, corrupt=0.04, duplicate=0.04)
    shoe = ConformanceShoe(behaviour, cards=random_deck(40, seed=4), seed=4, now=time.monotonic())
    path = tmp_path / "shoe.jsonl"
    with PtyShoe(shoe, behaviour=behaviour) as runner, open(path, "w") as out:
        time.sleep(1.0)  # powered on before the host: its HELLO and NEWSHOE are re-sent
        writer = RecordingWriter(out, protocol="slp1", device=runner.path, note="conformance shoe")
        plan = FaultPlan.parse("drop=0.04,corrupt=0.04,dup=0.04", seed=4)
        opener = recording_opener(lambda: FaultyTransport(open_url(runner.path)(), plan), writer)
        live = EventRecorder()
        driver = ShoeDriver(opener, listener=live)
        driver.start()
        try:
            driver.wait_up(10)
            driver.unlock()
            drawn = 0
            while drawn < 20:
                if runner.call(lambda s, now: s.draw(now)):
                    drawn += 1
                time.sleep(0.01)
            wait_cards(live, 20)
        finally:
            driver.close()
        truth = runner.call(lambda s, now: list(s.drawn))
    assert live.drawn == truth
    recording = Recording.load(path)
    assert recording.note == "conformance shoe" and b"CARD" in recording.received
    replayed = replay(recording)
    assert replayed.drawn == truth  # the recorded RESET nonces are answered for the new driver


def test_a_recorded_line_reader_replays_to_the_same_cards(tmp_path: Path) -> None:
    path = tmp_path / "reader.jsonl"
    with LineReaderPty(dialect=DIALECTS["kitchen_sink"], seed=8, line_delay=0.003) as reader, \
            open(path, "w") as out:
        writer = RecordingWriter(out, protocol="lines", device=reader.path)
        live = EventRecorder()
        driver = LineReaderDriver(recording_opener(open_url(reader.path), writer), listener=live,
                                  burst_window=0)
        driver.start()
        try:
            driver.wait_up(5)
            emitted = reader.send(random_deck(30, seed=8), faults=Faults(keepalive=0.3))
            wait_cards(live, len(emitted.cards))
        finally:
            driver.close()
    replayed = replay(Recording.load(path), LineReaderDriver, burst_window=0)
    assert [c for c, _ in replayed.drawn] == emitted.cards == [c for c, _ in live.drawn]


def test_shoe_replay_prints_the_recorded_cards_as_json(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with open(path, "w") as out:
        writer = RecordingWriter(out, protocol="lines", device="/dev/ttyUSB0")
        writer.chunk("in", b"AS\r\nCARD:10h\r\nHB\r\n")
    stdout = io.StringIO()
    args = argparse.Namespace(recording=path, speed=0.0, json=True, pattern=None)
    assert run_replay(args, stdout=stdout) == 0
    lines = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert [(d["code"], d["reader"]) for d in lines if d["event"] == "card"] == [("AS", "L"), ("TH", "L")]
    assert lines[-1]["event"] == "stats" and lines[-1]["cards"] == 2


def test_a_broken_recording_is_refused_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"format": "shoe-recording/1", "protocol": "slp1"}\n{"t": 0, "dir": "sideways"}\n')
    with pytest.raises(RecordingError, match=r"bad.jsonl:2: "):
        Recording.load(path)


def test_real_device_recordings_in_fixtures_replay_cleanly() -> None:
    """Every recording a studio contributed replays without a protocol error."""
    recordings = sorted(FIXTURES.glob("*.shoe.jsonl")) if FIXTURES.is_dir() else []
    if not recordings:
        pytest.skip("no real-device recording in tests/fixtures/ yet (docs/shoe.md: how to contribute one)")
    for path in recordings:
        recording = Recording.load(path)
        cls = LineReaderDriver if recording.protocol == "lines" else ShoeDriver
        assert replay(recording, cls).drawn, f"{path.name}: no card replayed"


def test_shoe_monitor_reads_a_line_reader_and_prints_card_events(monkeypatch: pytest.MonkeyPatch) -> None:
    from table_controller.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO())
    with LineReaderPty(dialect=DIALECTS["stx_etx"], seed=3, line_delay=0.01) as reader:
        stdout = io.StringIO()
        sender = threading.Timer(0.5, reader.send, args=(["AS", "TD", "QH"],))
        sender.start()
        import contextlib

        with contextlib.redirect_stdout(stdout):
            code = main(["shoe", "monitor", reader.path, "--protocol", "lines", "--json",
                         "--cards", "3", "--duration", "20", "--stats-every", "0"])
        sender.join()
    assert code == 0
    lines = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert [d["code"] for d in lines if d["event"] == "card"] == ["AS", "TD", "QH"]
    assert lines[0]["event"] == "link-up"
