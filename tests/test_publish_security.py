"""CURVE: authorised clients get the stream and snapshots; anybody else gets nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from fake_table import FakeTable, as_event

from table_controller.client import Snapshot, TableClient
from table_controller.publish import (
    ClientCurve,
    CurveConfig,
    EventPublisher,
    KeyFileError,
    generate_keys,
)

LOOPBACK = "tcp://127.0.0.1:0"


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, Path]:
    generate_keys(tmp_path / "server", "table-T01")
    generate_keys(tmp_path / "clients", "floor-display")
    generate_keys(tmp_path / "intruders", "intruder")
    return {
        "server_secret": tmp_path / "server" / "table-T01.key_secret",
        "server_public": tmp_path / "server" / "table-T01.key",
        "client_secret": tmp_path / "clients" / "floor-display.key_secret",
        "clients": tmp_path / "clients",
        "intruder_secret": tmp_path / "intruders" / "intruder.key_secret",
    }


@pytest.fixture
def secured(keys) -> Iterator[EventPublisher]:
    context = zmq.Context()
    security = CurveConfig(keys["server_secret"], keys["clients"])
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context, security=security) as pub:
        yield pub
    context.destroy(linger=0)


def drive_until_snapshot(client: TableClient, table: FakeTable) -> Snapshot:
    for _ in range(200):
        table.heartbeat()
        for item in client.events(timeout=0.02):
            if isinstance(item, Snapshot):
                return item
    raise AssertionError("no snapshot")


def test_authorised_client_gets_snapshot_and_events(keys, secured):
    table = FakeTable(secured)
    curve = ClientCurve(keys["client_secret"], keys["server_public"])
    with TableClient(secured.bound_publish, secured.bound_snapshot, "T01", curve=curve) as client:
        snapshot = drive_until_snapshot(client, table)
        assert snapshot.seq >= 1
        event = table.emit("table.state", state="betting", reason=None)
        assert next(client.events(timeout=5)) == as_event(event)


def test_unauthorised_client_receives_nothing_and_gets_no_snapshot(keys, secured):
    table = FakeTable(secured)
    intruder = ClientCurve(keys["intruder_secret"], keys["server_public"])
    with TableClient(secured.bound_publish, secured.bound_snapshot, "T01", curve=intruder,
                     settle=0.0) as client:
        table.heartbeat()
        assert list(client.events(timeout=0.1)) == []
        assert secured.handshakes.failed.wait(5), "the refused handshake was not seen"
        authorised = ClientCurve(keys["client_secret"], keys["server_public"])
        with TableClient(secured.bound_publish, secured.bound_snapshot, "T01",
                         curve=authorised) as friend:
            drive_until_snapshot(friend, table)  # events flow to authorised clients meanwhile
        assert list(client.events(timeout=0.2)) == []
        assert client.snapshot is None
        assert secured.snapshots_served == 1  # the friend's only
    assert {name for name, _ in secured.handshakes.failures} == {"publish", "snapshot"}


def test_client_without_any_key_receives_nothing(secured):
    table = FakeTable(secured)
    context = zmq.Context()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.subscribe(b"")
    sub.connect(secured.bound_publish)
    try:
        assert secured.handshakes.failed.wait(5)
        for _ in range(5):
            table.heartbeat()
        assert not sub.poll(200)
    finally:
        sub.close(linger=0)
        context.term()


def test_missing_server_key_names_the_file(tmp_path):
    security = CurveConfig(tmp_path / "nope.key_secret", tmp_path)
    with pytest.raises(KeyFileError, match=r"CURVE key file .*nope.key_secret does not exist"):
        EventPublisher("T01", LOOPBACK, LOOPBACK, security=security).start()


def test_public_key_given_as_server_secret_is_a_clear_error(keys):
    security = CurveConfig(keys["server_public"], keys["clients"])
    with pytest.raises(KeyFileError, match="holds no secret key"):
        security.load()


def test_malformed_authorised_key_names_the_file(keys):
    (keys["clients"] / "broken.key").write_text("not a certificate\n")
    with pytest.raises(KeyFileError, match=r"broken\.key is not a ZeroMQ certificate"):
        CurveConfig(keys["server_secret"], keys["clients"]).load()


def test_generate_refuses_to_overwrite(keys):
    with pytest.raises(KeyFileError, match="already exists"):
        generate_keys(keys["clients"], "floor-display")


def test_a_display_authorised_later_is_served_after_reload(keys, secured):
    import shutil

    table = FakeTable(secured)
    generate_keys(keys["clients"].parent / "late", "late-display")
    late = ClientCurve(keys["clients"].parent / "late" / "late-display.key_secret",
                       keys["server_public"])
    shutil.copy(keys["clients"].parent / "late" / "late-display.key", keys["clients"])
    secured.reload_authorized_clients()
    with TableClient(secured.bound_publish, secured.bound_snapshot, "T01", curve=late) as client:
        assert drive_until_snapshot(client, table).seq >= 1


def test_curve_config_from_a_configuration_table(tmp_path):
    from table_controller.errors import ConfigError

    config = CurveConfig.from_mapping(
        {"server_secret_file": "keys/table.key_secret", "authorized_clients_dir": "clients"},
        base=tmp_path)
    assert config == CurveConfig(tmp_path / "keys" / "table.key_secret", tmp_path / "clients")
    with pytest.raises(ConfigError, match=r"\[events.curve\] lacks key 'authorized_clients_dir'"):
        CurveConfig.from_mapping({"server_secret_file": "k"}, base=tmp_path)


def test_a_curve_control_socket_answers_an_authorised_key_and_nobody_else(keys, tmp_path: Path) -> None:
    from table_controller.cli.supervise_cmd import ControlUnreachable, send_request
    from table_controller.control import ControlServer
    from table_controller.controller import TableController
    from table_controller.journal import Journal
    from table_controller.rules import load_game

    game = load_game("baccarat")
    journal = Journal(tmp_path / "T01.sqlite", table="T01", game="baccarat", variant="baccarat")
    controller = TableController(game, journal, table="T01", has_shoe=False)
    server = ControlServer(controller, LOOPBACK, [], security=CurveConfig(keys["server_secret"], keys["clients"]))
    server.start()
    try:
        friend = ClientCurve(keys["client_secret"], keys["server_public"])
        assert send_request(server.endpoint, {"op": "status"}, 5, friend)["ok"] is True
        intruder = ClientCurve(keys["intruder_secret"], keys["server_public"])
        with pytest.raises(ControlUnreachable):
            send_request(server.endpoint, {"op": "status"}, 1, intruder)
        with pytest.raises(ControlUnreachable):
            send_request(server.endpoint, {"op": "status"}, 1)  # no key at all
    finally:
        server.close()
        journal.close()
