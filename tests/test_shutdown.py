"""A table stopped with SIGTERM ends cleanly: status 0, a whole journal, whatever clients sent.

A ZeroMQ socket closed while another thread waits in it makes libzmq abort the
process (``Assertion failed: pfd.revents & POLLIN (src/signaler.cpp:238)``,
status -6). A control socket sent a message without the empty delimiter (a
DEALER's, as the soak's hostile clients send) used to wait in a blocking recv
for the next request, and was closed under that wait at shutdown.
"""

from __future__ import annotations

import os
import random
import secrets
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from shoe_process_fixture import simulated_shoe

from table_controller.control import token_digest
from table_controller.journal import verify_journal
from table_controller.soak.controller_process import ControlClient, ControllerProcess, write_config
from table_controller.soak.hostile import HostileClients, HostileTarget
from table_controller.soak.runner import free_port
from table_controller.soak.shoe_process import ShoeProcess

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _send_without_delimiter(context: zmq.Context[zmq.Socket[bytes]], endpoint: str) -> None:
    """A request from a DEALER without the empty frame a REP needs to route its reply."""
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(endpoint)
    dealer.send(b'{"op": "status"}')
    time.sleep(0.2)  # delivered before the socket goes
    dealer.close()


CLOSE_AFTER_A_REQUEST_WITHOUT_DELIMITER = textwrap.dedent("""
    import time
    import zmq
    from table_controller.control import ControlServer

    class Controller:
        machine = None
        def post(self, event): pass

    context = zmq.Context.instance()
    server = ControlServer(Controller(), "tcp://127.0.0.1:0", [])
    server.start()
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(server.endpoint)
    dealer.send(b'{"op": "status"}')
    time.sleep(0.5)
    started = time.monotonic()
    server.close()
    print(f"{time.monotonic() - started:.2f}", flush=True)
    dealer.close()
    time.sleep(0.5)  # an aborting libzmq thread gets its time to abort
""")


def test_a_control_socket_closes_at_once_after_a_request_without_the_delimiter() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CLOSE_AFTER_A_REQUEST_WITHOUT_DELIMITER],
        env=ENV, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout) < 1.0  # a poll or two (0.2 s each), not a wait for a request


@pytest.fixture
def shoe(tmp_path: Path) -> Iterator[ShoeProcess]:
    yield from simulated_shoe(tmp_path)


@pytest.mark.slow
def test_sigterm_under_hostile_clients_ends_the_controller_with_0_and_a_whole_journal(
    tmp_path: Path, shoe: ShoeProcess,
) -> None:
    """Started, kept busy by hostile clients, sent a request without the delimiter, then
    SIGTERMed, four times over the same journal: every exit is 0 and the journal verifies."""
    ports = random.Random()
    snapshot, control, publish = (f"tcp://127.0.0.1:{free_port(ports)}" for _ in range(3))
    journal = tmp_path / "T01.sqlite"
    config = tmp_path / "T01.toml"
    write_config(
        config, table="T01", variant="baccarat", shoe_port=shoe.device_link, journal=journal,
        publish=publish, snapshot=snapshot, control=control,
        token_sha256=token_digest(secrets.token_hex(16)), betting_seconds=1, result_seconds=1,
    )
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    log_path = tmp_path / "T01.log"
    statuses = []
    with open(log_path, "a", encoding="utf-8") as log:
        table = ControllerProcess(
            [sys.executable, "-m", "table_controller", "-v", "run", "--config", str(config)], log
        )
        for run in range(4):
            table.start()
            client = ControlClient(control, context, timeout=1.0)
            deadline = time.monotonic() + 30
            while client.request({"op": "status"}) is None:
                assert time.monotonic() < deadline, "the controller never answered"
            client.close()
            target = HostileTarget("T01", snapshot, control, [], alive=lambda: table.alive)
            hostile = HostileClients(2, [target], "tcp://127.0.0.1:1", "tcp://127.0.0.1:1",
                                     seed=run).start()
            time.sleep(1.0)
            hostile.stop()  # as the soak does: the clients stop before the controller
            _send_without_delimiter(context, control)
            statuses.append(table.stop(timeout=20))
    context.term()
    text = log_path.read_text(encoding="utf-8")
    assert statuses == [0, 0, 0, 0], text[-3000:]
    assert "Assertion failed" not in text and "Traceback" not in text
    report = verify_journal(journal)
    assert report.ok, report.problems
    assert report.events > 0
