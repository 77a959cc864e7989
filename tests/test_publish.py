"""The publisher and snapshot server of one table (events.md transport)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest
import zmq
from fake_table import BANKER_ROUND, FakeTable

from table_controller.event_types import (
    SnapshotReply,
    TableStatus,
    decode_event,
    decode_snapshot_reply,
    encode_event,
)
from table_controller.events import decode, make_event
from table_controller.publish import EventPublisher, SnapshotState

LOOPBACK = "tcp://127.0.0.1:0"


@pytest.fixture
def context() -> Iterator[zmq.Context]:
    ctx = zmq.Context()
    yield ctx
    ctx.destroy(linger=0)


@pytest.fixture
def publisher(context: zmq.Context) -> Iterator[EventPublisher]:
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context) as pub:
        yield pub


def subscriber(context: zmq.Context, endpoint: str, prefix: str = "") -> zmq.Socket:
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt_string(zmq.SUBSCRIBE, prefix)
    sub.connect(endpoint)
    return sub


def wait_live(table: FakeTable, sub: zmq.Socket) -> int:
    """Publish heartbeats until ``sub`` receives one; drain; return the seq it got last."""
    for _ in range(200):
        table.heartbeat()
        if sub.poll(20):
            last = 0
            while sub.poll(50):
                last = decode(sub.recv_multipart()).seq
            return last
    raise AssertionError("subscriber never received a heartbeat")


def ask_snapshot(context: zmq.Context, endpoint: str) -> SnapshotReply:
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(endpoint)
    try:
        dealer.send_multipart([b"", b'{"op": "snapshot"}'])
        assert dealer.poll(5000), "no snapshot reply"
        empty, body = dealer.recv_multipart()
        assert empty == b""
        return decode_snapshot_reply(body)
    finally:
        dealer.close(linger=0)


def test_published_event_has_topic_and_json_of_events_md(context, publisher):
    table = FakeTable(publisher)
    sub = subscriber(context, publisher.bound_publish, "T01.card")
    table.open_round()
    for _ in range(200):  # burn cards until the subscription is live (it only hears cards)
        table.emit("card", position="burn", index=0, code="AS", source="shoe")
        if sub.poll(20):
            break
    while sub.poll(50):
        sub.recv_multipart()
    card = table.emit("card", position="player", index=0, code="TS", source="shoe+camera")
    topic, body = sub.recv_multipart()
    assert topic == b"T01.card"
    assert decode_event(body) == card
    assert body == encode_event(card)
    sub.close(linger=0)


def test_topic_prefix_selects_results_only(context, publisher):
    table = FakeTable(publisher)
    results = subscriber(context, publisher.bound_publish, "T01.round.")
    everything = subscriber(context, publisher.bound_publish)
    wait_live(table, everything)
    events = table.play_round(BANKER_ROUND)
    got = [decode(results.recv_multipart()) for _ in range(2)]
    assert [e.type for e in got] == ["round.start", "round.result"]
    assert got == [e for e in events if e.type.startswith("round.")]
    assert not results.poll(50)
    results.close(linger=0)
    everything.close(linger=0)


def test_snapshot_mid_round_has_state_round_events_history_and_seq(context, publisher):
    table = FakeTable(publisher)
    shoe = table.new_shoe()
    first = table.play_round(BANKER_ROUND)
    opened = table.open_round()
    dealt = [
        table.emit("betting.closed"),
        table.emit("table.state", state="dealing", reason=None),
        table.emit("card", position="player", index=0, code="4H", source="shoe"),
        table.emit("card", position="banker", index=0, code="KS", source="shoe"),
    ]
    snap = ask_snapshot(context, publisher.bound_snapshot)
    assert snap.seq == table.seq == publisher.last_seq
    assert snap.state == TableStatus(state="dealing", reason=None)
    assert snap.round == [opened[1], *dealt]
    assert snap.history == [first[-2]]
    assert snap.shoe == [shoe]


def test_snapshot_history_keeps_the_last_100_results():
    state = SnapshotState(history=100)
    for seq in range(1, 131):
        state.apply(make_event(table="T01", seq=seq, ts=0, type="round.void", game="baccarat",
                               round=f"R{seq}", reason="test", refund=True))
    reply = state.reply()
    assert len(reply.history) == 100
    assert reply.history[0].round == "R31"
    assert reply.history[-1].round == "R130"
    assert reply.seq == 130


def test_prime_rebuilds_the_snapshot_from_the_journal(context, publisher):
    table = FakeTable(publisher)
    table.play_round(BANKER_ROUND)
    table.open_round()
    before = publisher.snapshot()
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context) as restarted:
        restarted.prime(table.journal)
        assert restarted.last_seq == table.seq
        assert restarted.snapshot() == before
        assert ask_snapshot(context, restarted.bound_snapshot) == before


def test_unknown_snapshot_request_gets_an_error_reply(context, publisher):
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(publisher.bound_snapshot)
    dealer.send_multipart([b"", b"not json"])
    assert dealer.poll(5000)
    assert json.loads(dealer.recv_multipart()[-1]) == {
        "error": 'unknown request; send {"op": "snapshot"} or {"op": "replay", "after_seq": N, "limit": M}'}
    dealer.close(linger=0)


def test_req_socket_clients_get_snapshots_too(context, publisher):
    FakeTable(publisher).heartbeat()
    req = context.socket(zmq.REQ)
    req.setsockopt(zmq.LINGER, 0)
    req.connect(publisher.bound_snapshot)
    req.send(b'{"op":"snapshot"}')
    assert req.poll(5000)
    assert decode_snapshot_reply(req.recv()).seq == 1
    req.close(linger=0)


def test_publish_rejects_a_seq_that_does_not_follow(publisher):
    table = FakeTable(publisher)
    event = table.heartbeat()
    with pytest.raises(ValueError, match="event seq 1 does not follow the last published seq 1"):
        publisher.publish(event)


def test_publish_rejects_another_tables_event(publisher):
    event = make_event(table="T02", seq=1, ts=0, type="heartbeat", game="baccarat", round=None,
                       state="idle")
    with pytest.raises(ValueError, match="event of table 'T02' given to the publisher of 'T01'"):
        publisher.publish(event)


def test_busy_endpoint_is_a_clear_error(context, publisher):
    with pytest.raises(OSError, match=f"cannot open the event publisher at {publisher.bound_publish}"):
        EventPublisher("T02", publisher.bound_publish, LOOPBACK, context=context).start()


def test_stuck_subscriber_never_slows_the_table(context):
    """A subscriber that never reads loses messages; the table's publish() calls all return
    and an attentive subscriber receives every event in order."""
    count, padding = 30_000, "x" * 1000
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context) as publisher:
        stuck = context.socket(zmq.SUB)
        stuck.setsockopt(zmq.LINGER, 0)
        stuck.setsockopt(zmq.RCVHWM, 10)
        stuck.setsockopt(zmq.RCVBUF, 4096)
        stuck.subscribe(b"")
        stuck.connect(publisher.bound_publish)
        attentive = subscriber(context, publisher.bound_publish)
        attentive.setsockopt(zmq.RCVHWM, 0)
        table = FakeTable(publisher)
        start = wait_live(table, attentive)
        while stuck.poll(0):  # the stuck one is live too; then it stops reading
            stuck.recv_multipart()
        received: list[int] = []

        def read() -> None:
            while len(received) < count:
                if not attentive.poll(5000):
                    return
                received.append(decode(attentive.recv_multipart()).seq)

        reader = threading.Thread(target=read)
        reader.start()
        done = threading.Event()

        def play() -> None:
            for _ in range(count):
                table.emit("alert", kind="no-read", severity="info", detail=padding)
            done.set()

        threading.Thread(target=play, daemon=True).start()
        assert done.wait(30), "publish() blocked behind a stuck subscriber"
        reader.join(30)
        assert received == list(range(start + 1, start + 1 + count))
        got_by_stuck = 0
        while stuck.poll(200):
            stuck.recv_multipart()
            got_by_stuck += 1
        assert got_by_stuck < count  # ZeroMQ dropped for the stuck one, not for the table
        stuck.close(linger=0)
        attentive.close(linger=0)


def test_idle_seconds_counts_from_the_last_publish(context):
    now = [100.0]
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context, clock=lambda: now[0]) as pub:
        now[0] = 100.4
        assert pub.idle_seconds() == pytest.approx(0.4)
        FakeTable(pub).heartbeat()
        now[0] = 101.0
        assert pub.idle_seconds() == pytest.approx(0.6)


# -- hostile requests (issue 13, findings 1 and 9) ------------------------------------

def send_raw(context: zmq.Context, endpoint: str, body: bytes, wait_ms: int = 2000) -> bytes | None:
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(endpoint)
    try:
        dealer.send_multipart([b"", body])
        if not dealer.poll(wait_ms):
            return None
        return dealer.recv_multipart()[-1]
    finally:
        dealer.close(linger=0)


def test_deeply_nested_json_gets_an_error_and_snapshots_are_still_served(context, publisher):
    reply = send_raw(context, publisher.bound_snapshot, b"[" * 2000 + b"]" * 2000)
    assert reply is not None and b"unknown request" in reply
    assert ask_snapshot(context, publisher.bound_snapshot).seq == publisher.last_seq


def test_an_oversized_request_is_dropped_unread_and_snapshots_are_still_served(context, publisher):
    assert send_raw(context, publisher.bound_snapshot, b"[" * 200_000, wait_ms=500) is None
    assert ask_snapshot(context, publisher.bound_snapshot).seq == publisher.last_seq


def test_a_snapshot_server_that_fails_anyway_is_reopened_on_its_port_and_says_so(context, publisher, monkeypatch):
    import time

    told: list[str] = []
    publisher.on_trouble = told.append
    endpoint = publisher.bound_snapshot
    real = zmq.Socket.recv_multipart
    calls = []
    server_thread = f"snapshot-{publisher.table}"

    def fails_once_in_the_server(sock, *args, **kw):  # type: ignore[no-untyped-def]
        # The transport fails under the server, once: what no request could cause.
        if threading.current_thread().name == server_thread:
            calls.append(sock)
            if len(calls) == 1:
                raise zmq.ZMQError(zmq.EFAULT, "the socket failed")
        return real(sock, *args, **kw)

    monkeypatch.setattr(zmq.Socket, "recv_multipart", fails_once_in_the_server)
    assert send_raw(context, endpoint, b'{"op": "snapshot"}', wait_ms=500) is None
    deadline = time.monotonic() + 5
    while not told and time.monotonic() < deadline:
        time.sleep(0.05)
    assert told and "snapshot server failed" in told[0] and publisher.restarts == 1
    assert publisher.bound_snapshot == endpoint
    assert ask_snapshot(context, endpoint).seq == publisher.last_seq
