"""``table-controller shoe sim`` and ``shoe monitor`` as an installer uses them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from table_controller.cli import main

SCRIPT_CARDS = ["TS", "AH", "KD", "2C", "9S", "QH", "3D", "JC", "5H", "8D"] * 3


def start_sim(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "table_controller", "shoe", "sim", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("device: "), first
    return proc, first[len("device: "):].strip()


@pytest.fixture
def sims() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=10)


def monitor(device: str, *args: str, timeout: float = 30) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "table_controller", "shoe", "monitor", device, "--json", *args],
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.slow
def test_monitor_prints_every_scripted_card_once_in_order_despite_faults(
    sims: list, tmp_path: Path
) -> None:
    script = tmp_path / "cards.txt"
    script.write_text("# a scripted shoe\n" + "\n".join(" ".join(SCRIPT_CARDS[i:i + 5])
                                                      for i in range(0, 30, 5)) + "\n")
    proc, device = start_sim("--script", str(script), "--draw-every", "0.005", "--seed", "1",
                             "--faults", "drop=0.05,corrupt=0.05,dup=0.05,garbage=0.01",
                             "--device-link", str(tmp_path / "shoe"))
    sims.append(proc)
    assert device == str(tmp_path / "shoe")
    lines = monitor(device, "--unlock", "--cards", "30")
    cards = [line for line in lines if line["event"] == "card"]
    assert [c["code"] for c in cards] == SCRIPT_CARDS
    assert [c["count"] for c in cards] == list(range(1, 31))
    assert set(cards[0]) == {"event", "code", "reader", "count", "seq", "boot"}
    hello = next(line for line in lines if line["event"] == "hello")
    assert hello["vendor"] == "OPENTABLE" and len(hello["boot"]) == 8
    assert lines[-1]["event"] == "stats" and lines[-1]["delivered"] >= 31


def test_sim_on_tcp_prints_a_socket_url_and_honours_the_locked_gate(sims: list) -> None:
    proc, device = start_sim("--link", "tcp:0", "--seed", "2", "--decks", "1")
    sims.append(proc)
    assert device.startswith("socket://127.0.0.1:")
    proc.stdin.write("draw 2\n")
    proc.stdin.flush()
    assert proc.stdout.readline().startswith("boot ")
    assert proc.stdout.readline().strip() == "no card: the gate is locked"
    lines = monitor(device, "--status", "--duration", "1.5", "--stats-every", "0")
    state = next(line for line in lines if line["event"] == "state")
    assert (state["gate_locked"], state["lid_open"], state["count"]) == (True, False, 0)
    assert not [line for line in lines if line["event"] == "card"]


def test_bad_fault_spec_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["shoe", "sim", "--faults", "drop=0.05,jitter=3"]) == 2
    err = capsys.readouterr().err
    assert "unknown fault 'jitter'" in err and "drop, corrupt, dup, garbage" in err
    assert main(["shoe", "sim", "--faults", "drop=1.5"]) == 2
    assert "fault drop=1.5: a probability must be in 0..1" in capsys.readouterr().err


def test_bad_script_names_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "cards.txt"
    script.write_text("AS KH\nQD 1X\n")
    assert main(["shoe", "sim", "--script", str(script)]) == 2
    assert f"card script {script}, line 2: '1X' is not a card code" in capsys.readouterr().err


def test_bad_resume_state_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["shoe", "monitor", "/dev/null", "--resume", "XYZ:1"]) == 2
    assert "link state 'XYZ:1': expected BOOTID:SEQ" in capsys.readouterr().err


@pytest.mark.parametrize("action", ["sim", "monitor"])
def test_help(action: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["shoe", action, "--help"])
    assert exit_.value.code == 0
    assert "usage: table-controller shoe " + action in capsys.readouterr().out
