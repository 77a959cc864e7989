"""The README's install walk-through, run as written in a scratch root.

Every command of the block after ``<!-- walkthrough -->`` is run with bash, with these
changes only: ``sudo`` is dropped; ``/etc/table-controller``, ``/var/lib/table-controller``
and ``/dev/ttyUSB0`` live under the scratch root (the shoe port is a simulated shoe's
pty); ``table-controller`` is this checkout's; ``--gpio native`` becomes ``mock`` (no
pins here); ``install-service`` writes into the scratch root. What needs root or a
running systemd (installing packages and the venv, the account, systemctl, journalctl)
is not run, and the test fails if the README's block gains a step it neither runs nor
knows it skips. Where systemd would start the table, the test starts the unit's own
``ExecStart``, then runs the README's health and metrics checks against it.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from table_controller.soak.shoe_process import ShoeProcess

README = Path(__file__).resolve().parent.parent / "README.md"
PROGRAM = str(Path(sys.executable).with_name("table-controller"))
#: Steps that need root or a running systemd: not run here.
NOT_RUN = ("sudo apt-get ", "git clone ", "sudo python3 -m venv ", "sudo /opt/table-controller/bin/pip ",
           "sudo ln ", "sudo groupadd ", "sudo useradd ", "sudo systemctl ", "systemctl ", "journalctl ")


def walkthrough() -> list[str]:
    block = re.search(r"<!-- walkthrough -->\n```sh\n(.*?)```", README.read_text(), re.S)
    assert block is not None, "README.md has no walk-through block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def localised(line: str, root: Path) -> str:
    """The command as run here (see the module docstring for every change)."""
    line = re.sub(r"\s+#\s.*$", "", line)
    line = line.replace("sudo ", "")
    for system_path in ("/etc/table-controller", "/var/lib/table-controller", "/dev/ttyUSB0"):
        line = line.replace(system_path, f"{root}{system_path}")
    line = line.replace("install -d -o tablectl -g tablectl ", "install -d ")
    line = line.replace("--gpio native", "--gpio mock")
    line = re.sub(r"(^|\| )table-controller ", lambda m: f"{m.group(1)}{shlex.quote(PROGRAM)} ", line)
    if " install-service " in line:
        line += f" --dir {root}/etc/systemd/system --program {shlex.quote(PROGRAM)}"
    return line


def shoe(root: Path, *args: str) -> ShoeProcess:
    link = root / "dev" / "ttyUSB0"
    log = open(root / "shoe.log", "a", encoding="utf-8")  # noqa: SIM115 - closed with the shoe's stop
    return ShoeProcess([sys.executable, "-m", "table_controller", "shoe", "sim", "--link", "pty",
                        "--device-link", str(link), *args], link, log)


def test_the_readme_walkthrough_installs_a_table_that_deals(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "dev").mkdir(parents=True)
    (root / "etc" / "systemd" / "system").mkdir(parents=True)
    ran, skipped = [], []
    table: subprocess.Popen[bytes] | None = None
    current = shoe(root, "--decks", "1", "--draw-every", "0.01")  # a deck to check, dealt as it is unlocked
    try:
        for line in walkthrough():
            if line.startswith(NOT_RUN):
                skipped.append(line)
                if line.startswith("sudo systemctl enable"):
                    current.stop()
                    current = shoe(root)  # the table's shoe, loaded with 8 decks
                    table = start_the_unit(root)
                continue
            if line.startswith("curl "):
                wait_for_health()
            done = subprocess.run(["bash", "-o", "pipefail", "-c", localised(line, root)], capture_output=True,
                                  text=True, timeout=120, cwd=tmp_path)
            assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
            ran.append((line, done.stdout))
    finally:
        if table is not None:
            table.send_signal(signal.SIGTERM)
            try:
                table.wait(timeout=20)
            except subprocess.TimeoutExpired:
                table.kill()
        current.stop()
    assert table is not None and table.returncode == 0, "the table did not stop cleanly on SIGTERM"
    commands = [line for line, _ in ran]
    assert any(" deck-check " in c for c in commands) and any("install-service prune" in c for c in commands)
    assert any(line.startswith("curl ") and "table_journal_bytes" in out for line, out in ran)
    assert (root / "etc" / "systemd" / "system" / "table-controller-prune-T01.timer").exists()
    assert len(skipped) == 11, skipped


def start_the_unit(root: Path) -> subprocess.Popen[bytes]:
    """What systemd would run: the table unit's ExecStart, as written by install-service."""
    unit = (root / "etc" / "systemd" / "system" / "table-controller-T01.service").read_text()
    exec_start = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"}
    return subprocess.Popen(shlex.split(exec_start.removeprefix("ExecStart=")), env=env,
                            stdout=subprocess.DEVNULL, stderr=open(root / "table.log", "wb"))  # noqa: SIM115


def wait_for_health(timeout: float = 30.0) -> None:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen("http://127.0.0.1:9108/healthz", timeout=2) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            pytest.fail("the table's /healthz did not answer ok")
        time.sleep(0.2)
