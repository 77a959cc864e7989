"""`table-controller run` stopped with SIGTERM at any moment of its start-up exits 0 with a
whole journal (or none, when it had not created one yet).

The handler used to be installed only once the table was built (configuration, journal
checked, publisher, panel, shoe, control socket: about 0.7 s, seconds on a loaded
machine); a SIGTERM before that ended the controller with -15. The soak's runner met it
when its killer had just restarted a table and the run's end stopped it.
"""

from __future__ import annotations

import os
import random
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from shoe_process_fixture import simulated_shoe

from table_controller.control import token_digest
from table_controller.journal import verify_journal
from table_controller.soak.controller_process import ControlClient, ControllerProcess, write_config
from table_controller.soak.runner import free_port
from table_controller.soak.shoe_process import ShoeProcess

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

#: Seconds from the controller's start to its SIGTERM: the interpreter's start, the imports,
#: the configuration, the journal's creation and check, the devices, the restore, running.
DELAYS = (0.0, 0.01, 0.03, 0.06, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.85, 1.0,
          1.3, 1.8)


@pytest.fixture
def shoe(tmp_path: Path) -> Iterator[ShoeProcess]:
    yield from simulated_shoe(tmp_path)


def _config(tmp_path: Path, shoe: ShoeProcess, journal: Path) -> tuple[Path, str]:
    """A soak table's configuration (baccarat, the shoe's pty, mock panel); its control endpoint."""
    ports = random.Random()
    snapshot, control, publish = (f"tcp://127.0.0.1:{free_port(ports)}" for _ in range(3))
    config = tmp_path / "T01.toml"
    write_config(
        config, table="T01", variant="baccarat", shoe_port=shoe.device_link, journal=journal,
        publish=publish, snapshot=snapshot, control=control,
        token_sha256=token_digest(secrets.token_hex(16)), betting_seconds=1, result_seconds=1,
    )
    return config, control


def _journal_state(journal: Path) -> str:
    """"none" when no journal was created, "ok N" for a whole one; the problems otherwise."""
    if not journal.exists():
        return "none"
    report = verify_journal(journal)
    return f"ok {report.events}" if report.ok else f"broken: {report.problems}"


def _caught(pid: int, sig: int) -> bool:
    """Whether the process has a handler for ``sig`` (Linux: SigCgt in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (sig - 1) & 1)


@pytest.mark.slow
def test_sigterm_at_every_moment_of_start_up_exits_0_with_a_whole_journal(
    tmp_path: Path, shoe: ShoeProcess,
) -> None:
    """The soak's controller command, stopped with SIGTERM 0 s to 1.8 s after its start, then
    once the moment its journal file appears and once fully up, over the same journal (the
    first stops come before it exists): every exit is 0 and the journal is whole throughout."""
    journal = tmp_path / "T01.sqlite"
    config, control = _config(tmp_path, shoe, journal)
    log_path = tmp_path / "T01.log"
    outcomes: list[tuple[str, int | None, str]] = []
    with open(log_path, "a", encoding="utf-8") as log:
        table = ControllerProcess(
            [sys.executable, "-m", "table_controller", "-vv", "run", "--config", str(config)], log
        )
        for delay in DELAYS:
            table.start()
            time.sleep(delay)
            outcomes.append((f"{delay} s", table.stop(timeout=20), _journal_state(journal)))

        # the moment the journal file appears: the journal is being created or checked
        journal.unlink(missing_ok=True)
        for leftover in tmp_path.glob("T01.sqlite*"):
            leftover.unlink()
        table.start()
        deadline = time.monotonic() + 30
        while not journal.exists() and table.alive and time.monotonic() < deadline:
            time.sleep(0.001)
        outcomes.append(("journal appears", table.stop(timeout=20), _journal_state(journal)))

        table.start()  # and fully up: it answers on its control socket
        context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        client = ControlClient(control, context, timeout=1.0)
        deadline = time.monotonic() + 30
        while client.request({"op": "status"}) is None:
            assert time.monotonic() < deadline, "the controller never answered"
        client.close()
        context.term()
        outcomes.append(("running", table.stop(timeout=20), _journal_state(journal)))
    text = log_path.read_text(encoding="utf-8")
    # the failing moments first: the whole list and the log's tail do not fit a failure's report
    failed = [o for o in outcomes if not (o[1] == 0 and o[2].split()[0] in ("none", "ok"))]
    why = [line for line in text.splitlines() if "not started" in line or "stopped:" in line or "Error" in line]
    assert not failed, (failed, why[-20:], text[-3000:])
    assert outcomes[-1][2].startswith("ok")
    assert "Traceback" not in text, text[-3000:]


def test_run_handles_sigterm_before_it_touches_the_journal_or_a_device(
    tmp_path: Path, shoe: ShoeProcess,
) -> None:
    """Started plainly (no blocked signals), `run` has its SIGTERM handler before it creates
    its journal; a SIGTERM the moment the handler is there ends it with 0 and no journal."""
    journal = tmp_path / "T01.sqlite"
    config, _ = _config(tmp_path, shoe, journal)
    proc = subprocess.Popen(
        [sys.executable, "-m", "table_controller", "run", "--config", str(config)],
        env=ENV, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not _caught(proc.pid, signal.SIGTERM):
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "no SIGTERM handler after 30 s"
            time.sleep(0.001)
        handled_before_journal = not journal.exists()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0, err
    assert handled_before_journal, "the SIGTERM handler came only after the journal was created"
    assert _journal_state(journal) == "none" or _journal_state(journal).startswith("ok")
    assert b"Traceback" not in err, err


def test_a_running_table_writes_its_threads_stacks_on_sigusr1_and_goes_on(
    tmp_path: Path, shoe: ShoeProcess,
) -> None:
    """SIGUSR1 writes every thread's Python stack to standard error (a hung table says where it
    hangs); the table keeps running and still answers, and SIGTERM then stops it with 0."""
    journal = tmp_path / "T01.sqlite"
    config, control = _config(tmp_path, shoe, journal)
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "table_controller", "run", "--config", str(config)],
            env=ENV, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
        )
    try:
        context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        client = ControlClient(control, context, timeout=1.0)
        deadline = time.monotonic() + 30
        while client.request({"op": "status"}) is None:
            assert proc.poll() is None, err_path.read_text()
            assert time.monotonic() < deadline, "the controller never answered"
        assert _caught(proc.pid, signal.SIGUSR1)
        proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 10
        while "most recent call first" not in err_path.read_text(errors="replace"):
            assert time.monotonic() < deadline, err_path.read_text(errors="replace")
            time.sleep(0.05)
        assert proc.poll() is None
        assert client.request({"op": "status"}) is not None
        client.close()
        context.term()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    text = err_path.read_text(errors="replace")
    assert proc.returncode == 0, text[-3000:]
    # the main thread waits in the run command's loop; the control socket's thread serves
    assert "run_table" in text and "control.py" in text, text


def test_the_stacks_handler_is_not_installed_over_a_standard_error_that_is_no_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A caller that captures standard error (a StringIO) gets no handler and no error."""
    import io

    from table_controller.service.stacks import dump_stacks_on_signal

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert dump_stacks_on_signal() is False


#: A stand-in for a controller that hangs: its stacks on SIGUSR1, SIGTERM ignored.
_HUNG = (
    "import faulthandler, signal, sys, time\n"
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)\n"
    "print('up', file=sys.stderr, flush=True)\n"
    "while True:\n"
    "    time.sleep(0.05)\n"
)


@pytest.mark.parametrize("run_controller", [True, False])
def test_the_soak_launcher_asks_a_hung_run_controller_for_its_stacks_before_killing_it(
    tmp_path: Path, run_controller: bool,
) -> None:
    """A `run` controller that does not stop in time gets SIGUSR1 (its stacks go to its log),
    then SIGKILL; another command (the archive, the studio API: SIGUSR1 would end it) only the kill."""
    log_path = tmp_path / "hung.log"
    with open(log_path, "a", encoding="utf-8") as log:
        hung = ControllerProcess([sys.executable, "-c", _HUNG], log, block_stop_signals=run_controller)
        hung.start()
        deadline = time.monotonic() + 20
        while "up" not in log_path.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert hung.stop(timeout=0.5) == -signal.SIGKILL
    text = log_path.read_text()
    assert ("most recent call first" in text) is run_controller, text
