"""The supervisor's control socket: status, press (mock panel), resume and void with a token."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory

from table_controller.cli.supervise_cmd import send_request
from table_controller.config import DEFAULT_PINS
from table_controller.control import ControlServer, token_digest
from table_controller.controller import TableController
from table_controller.event_types import TableStateChanged
from table_controller.journal import Journal
from table_controller.panel import DealerPanel
from table_controller.rules import load_game
from table_controller.sim.control import RigControlOps
from table_controller.table import inputs as i

TOKEN = "s3cret-floor-token"


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[TableController, ControlServer]]:
    import threading

    game = load_game("teen-patti-2020")
    journal = Journal(tmp_path / "T01.sqlite", table="T01", game=game.game_id, variant=game.variant.id)
    controller = TableController(game, journal, table="T01", has_shoe=False, betting_seconds=30)
    factory = MockFactory()
    controller.panel = DealerPanel(DEFAULT_PINS, factory, controller.on_button)
    stop = threading.Event()
    loop = threading.Thread(target=controller.run, args=(stop,))
    loop.start()
    rig = RigControlOps(controller.panel)
    server = ControlServer(controller, "tcp://127.0.0.1:0", [token_digest(TOKEN)], extra_ops=[rig])
    server.start()
    yield controller, server
    server.close()
    stop.set()
    loop.join()
    controller.panel.close()
    journal.close()


def ask(server: ControlServer, **request) -> dict:
    return send_request(server.endpoint, request, timeout=5)


def test_press_status_and_a_supervised_no_read(table) -> None:
    controller, server = table
    assert ask(server, op="press", button="start_round") == {"ok": True}
    controller.request(i.CloseBetting())
    controller.request(i.CardPresented("AS"))
    controller.request(i.NoRead())
    status = ask(server, op="status")
    assert (status["state"], status["awaiting"], status["cause"], status["next_position"]) == (
        "paused", "card", "no-read", "b")
    refused = ask(server, op="resume", token="wrong", card="KD")
    assert refused == {"ok": False, "error": "not authorised: a valid supervisor token is required"}
    answer = ask(server, op="resume", token=TOKEN, card="KD", by="maria")
    assert answer["ok"] is True
    card = [e for e in answer["events"] if e["type"] == "card"][0]
    assert (card["position"], card["code"], card["source"]) == ("b", "KD", "manual")
    resumed = [e for e in controller.journal.events() if isinstance(e, TableStateChanged)][-1]
    assert resumed.by == "supervisor maria (token)"


def test_void_needs_a_token_and_is_journaled_with_who(table) -> None:
    controller, server = table
    ask(server, op="press", button="start_round")
    assert ask(server, op="void")["ok"] is False
    answer = ask(server, op="void", token=TOKEN, by="li", reason="camera fault")
    void = answer["events"][0]
    assert (void["type"], void["reason"], void["by"], void["refund"]) == (
        "round.void", "camera fault", "supervisor li (token)", True)


def test_a_dealer_is_signed_in_only_with_the_token_and_every_round_after_carries_her(table) -> None:
    controller, server = table
    assert ask(server, op="dealer", dealer="D042")["ok"] is False
    for bad in ("", "x" * 65, "D\n42", 42):
        assert ask(server, op="dealer", token=TOKEN, dealer=bad)["ok"] is False
    answer = ask(server, op="dealer", token=TOKEN, dealer="D042", by="ana")
    signed = [(e["type"], e["dealer"], e["by"]) for e in answer["events"]]
    assert signed == [("dealer", "D042", "supervisor ana (token)")]
    ask(server, op="press", button="start_round")
    import time

    from table_controller.event_types import RoundStarted

    deadline = time.monotonic() + 10  # the press reaches the loop through its queue
    while not (started := [e for e in controller.journal.events() if isinstance(e, RoundStarted)]):
        assert time.monotonic() < deadline, "no round started"
        time.sleep(0.02)
    assert started[-1].dealer == "D042"
    out = ask(server, op="dealer", token=TOKEN, dealer=None)
    assert out["ok"] is True and out["events"][0]["dealer"] is None


def test_an_illegal_action_is_refused_with_the_reason(table) -> None:
    _, server = table
    answer = ask(server, op="resume", token=TOKEN)
    assert answer == {"ok": False, "error": "nothing to resume: the table is idle"}
    assert ask(server, op="press", button="self_destruct")["ok"] is False
    assert "unknown op" in ask(server, op="launch")["error"]


# -- hostile input (issue 13, findings 2, 3 and 10) ----------------------------------

def raw_request(server: ControlServer, frames: list[bytes]) -> dict:
    import json

    import zmq

    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        sock.connect(server.endpoint)
        sock.send_multipart(frames)
        assert sock.poll(5000), "no answer"
        return json.loads(sock.recv())
    finally:
        sock.close()


def test_a_two_frame_request_is_refused_and_the_socket_keeps_answering(table) -> None:
    _, server = table
    answer = raw_request(server, [b'{"op":"status"}', b"x"])
    assert answer == {"ok": False, "error": "a request is one frame, not 2"}
    assert ask(server, op="status")["ok"] is True


def test_deeply_nested_json_is_refused_and_the_socket_keeps_answering(table) -> None:
    _, server = table
    answer = raw_request(server, [b"[" * 5000 + b"]" * 5000])
    assert answer["ok"] is False
    assert ask(server, op="status")["ok"] is True


def test_a_supervisors_typo_in_the_card_is_refused_and_the_table_runs_on(table) -> None:
    controller, server = table
    ask(server, op="press", button="start_round")
    controller.request(i.CloseBetting())
    controller.request(i.CardPresented("AS"))
    controller.request(i.NoRead())
    refused = ask(server, op="resume", token=TOKEN, card="10X")
    assert refused["ok"] is False and "cannot resume" in refused["error"] and "10X" in refused["error"]
    assert ask(server, op="status")["state"] == "paused"
    assert ask(server, op="resume", token=TOKEN, card="KD")["ok"] is True


@pytest.mark.parametrize("field,value", [("card", {"x": 1}), ("reason", ["void"]), ("by", 7)])
def test_a_control_field_of_the_wrong_type_is_refused(table, field: str, value: object) -> None:
    _, server = table
    answer = ask(server, op="void", token=TOKEN, **{field: value})
    assert answer["ok"] is False and answer["error"].startswith(f"{field}: expected a string")


def test_a_salted_token_opens_the_socket_and_a_wrong_one_does_not(tmp_path: Path) -> None:
    from table_controller.tokens import check_stored_form, matches, stored_form

    stored = stored_form(TOKEN)
    assert check_stored_form(stored) is None and stored.startswith("scrypt$16384$8$1$")
    assert stored != stored_form(TOKEN)  # a fresh salt every time
    assert matches(TOKEN, stored) and not matches(TOKEN + "x", stored)
    assert matches(TOKEN, token_digest(TOKEN))  # legacy SHA-256 still accepted


def test_supervise_reads_the_token_from_a_file_or_the_environment(tmp_path: Path, monkeypatch) -> None:
    from table_controller.cli.supervise_cmd import read_token

    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    assert read_token(path) == TOKEN
    monkeypatch.setenv("TABLE_SUPERVISOR_TOKEN", "from-env")
    assert read_token(None) == "from-env"


def test_a_production_tables_control_socket_has_no_rig_ops(tmp_path: Path) -> None:
    """On a `run` table with mock pins, `press` once voided a round without a token (issue 13)."""
    game = load_game("teen-patti-2020")
    journal = Journal(tmp_path / "T02.sqlite", table="T02", game=game.game_id, variant=game.variant.id)
    controller = TableController(game, journal, table="T02", has_shoe=False)
    server = ControlServer(controller, "tcp://127.0.0.1:0", [token_digest(TOKEN)])
    server.start()
    try:
        for op in ("press", "lay", "clear", "dark"):
            answer = ask(server, op=op, button="void_request")
            assert answer == {"ok": False, "error": (
                f"unknown op {op!r}: this control socket serves status, resume, void, new-shoe, dealer "
                "(a test rig's ops only with rig.control_ops)")}
    finally:
        server.close()
        journal.close()


def test_a_control_socket_that_fails_anyway_is_reopened_and_an_alert_says_so(table, monkeypatch) -> None:
    import zmq

    controller, server = table
    real = zmq.Socket.recv_multipart
    calls = []

    def failing_once_in_the_server(sock, *args, **kw):  # type: ignore[no-untyped-def]
        # The transport fails under the server, once: what no request could cause.
        if threading.current_thread().name == "control":
            calls.append(sock)
            if len(calls) == 1:
                raise zmq.ZMQError(zmq.EFAULT, "an unforeseen failure")
        return real(sock, *args, **kw)

    monkeypatch.setattr(zmq.Socket, "recv_multipart", failing_once_in_the_server)

    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(server.endpoint)
    sock.send(b'{"op": "status"}')
    assert not sock.poll(1500)  # the failed request got no answer...
    sock.close()
    assert ask(server, op="status")["ok"] is True  # ...but the socket serves again
    assert server.restarts == 1
    import time

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        alerts = [e for e in controller.journal.events(types=["alert"]) if "control socket failed" in e.detail]
        if alerts:
            break
        time.sleep(0.05)
    assert alerts and alerts[0].severity == "warning"
