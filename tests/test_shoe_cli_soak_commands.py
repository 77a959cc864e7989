"""The shoe simulator's commands the soak relies on: the unread card, load with a cut, stats."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_noread_names_the_unread_card_load_takes_a_cut_and_stats_is_json(tmp_path: Path) -> None:
    script = tmp_path / "cards.txt"
    script.write_text("TS AH KD\n", encoding="utf-8")
    sim = subprocess.Popen(
        [sys.executable, "-m", "table_controller", "shoe", "sim", "--link", "tcp:0", "--decks", "1",
         "--script", str(script), "--seed", "4"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert sim.stdin is not None and sim.stdout is not None
    monitor = None
    try:
        device = sim.stdout.readline().split("device: ", 1)[1].strip()
        assert sim.stdout.readline().startswith("boot ")
        monitor = subprocess.Popen(
            [sys.executable, "-m", "table_controller", "shoe", "monitor", device, "--unlock",
             "--duration", "20", "--stats-every", "0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        assert sim.stdout.readline().strip() == "gate unlocked"
        sim.stdin.write("noread\nload 1 10\nstats\nquit\n")
        sim.stdin.flush()
        lines = [sim.stdout.readline().strip() for _ in range(4)]
        assert lines[:3] == ["noread count 1", "unread TS count 1", "new shoe of 1 decks"]
        stats = json.loads(lines[3].removeprefix("stats "))
        assert stats["unplugs"] == 0 and stats["frames_sent"] >= 3  # HELLO, NEWSHOE, NOREAD at least
        assert sim.wait(timeout=10) == 0
    finally:
        for proc in (monitor, sim):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=10)


@pytest.mark.slow
def test_a_line_reader_answers_the_same_commands_with_its_count_and_the_faults_of_each_line(
    tmp_path: Path,
) -> None:
    """``shoe sim --protocol lines``: no gate (it says so at once), ``card TS count N`` with the
    simulator's own count and the faults that hit the line; the line goes out as the fault says."""
    import serial

    script = tmp_path / "cards.txt"
    script.write_text("TS AH KD\n", encoding="utf-8")
    link = tmp_path / "reader"
    sim = subprocess.Popen(
        [sys.executable, "-m", "table_controller", "shoe", "sim", "--protocol", "lines",
         "--device-link", str(link), "--decks", "1", "--script", str(script), "--seed", "4",
         "--faults", "twice=1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert sim.stdin is not None and sim.stdout is not None
    try:
        assert sim.stdout.readline().strip() == f"device: {link}"
        assert sim.stdout.readline().strip() == "reader lines, no gate, 3 cards, faults twice=1"
        assert sim.stdout.readline().strip() == "gate unlocked"
        port = serial.Serial(str(link), timeout=1)
        sim.stdin.write("draw\nnoread\nlid open\nload 1\nstats\nquit\n")
        sim.stdin.flush()
        lines = [sim.stdout.readline().strip() for _ in range(6)]
        assert lines[:5] == [
            "card TS count 1 twice", "noread count 2", "unread AH count 2",
            "lid sensor: none (a line reader has no lid)", "new shoe of 1 decks",
        ]
        stats = json.loads(lines[5].removeprefix("stats "))
        assert (stats["twice"], stats["lost"], stats["count"], stats["remaining"]) == (1, 0, 0, 52)
        assert port.read(8) == b"TS\r\nTS\r\n"  # the double read; nothing for the unread card
        port.close()
        assert sim.wait(timeout=10) == 0
    finally:
        if sim.poll() is None:
            sim.terminate()
            sim.wait(timeout=10)
