"""The studio proxy: 10 tables × 50 subscribers meet at one address, nothing lost."""

from __future__ import annotations

import threading
import time

import pytest
import zmq
from fake_table import FakeTable

from table_controller.events import decode
from table_controller.publish import EventPublisher, StudioProxy

LOOPBACK = "tcp://127.0.0.1:0"
TABLES = [f"T{n:02d}" for n in range(1, 11)]
SUBSCRIBERS = 50
EVENTS_PER_TABLE = 50
RATE_PER_TABLE = 50.0  # events per second


@pytest.mark.slow
def test_ten_tables_fifty_subscribers_through_the_proxy_lose_nothing():
    context = zmq.Context()
    proxy = StudioProxy(LOOPBACK, LOOPBACK, context=context).start()
    publishers = [
        EventPublisher(t, f"connect:{proxy.bound_frontend}", LOOPBACK, context=context).start()
        for t in TABLES
    ]
    tables = [FakeTable(p, table=t) for p, t in zip(publishers, TABLES, strict=True)]
    subs = []
    for _ in range(SUBSCRIBERS):
        sub = context.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.subscribe(b"")
        sub.connect(proxy.bound_backend)
        subs.append(sub)
    received: list[dict[str, list[int]]] = [{t: [] for t in TABLES} for _ in subs]
    stop = threading.Event()
    final_box: list[dict[str, int]] = []  # set once, whole, by the main thread
    complete = threading.Event()

    def read() -> None:
        poller = zmq.Poller()
        for sub in subs:
            poller.register(sub, zmq.POLLIN)
        while not stop.is_set():
            for sub, _ in poller.poll(50):
                index = subs.index(sub)
                while True:
                    try:
                        event = decode(sub.recv_multipart(zmq.NOBLOCK))
                    except zmq.Again:
                        break
                    received[index][event.table].append(event.seq)
            final = final_box[0] if final_box else None
            if final and all(r[t] and r[t][-1] == seq for r in received for t, seq in final.items()):
                complete.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        # Warm up: heartbeats until every subscriber hears every table (subscriptions are live).
        for _ in range(300):
            for table in tables:
                table.heartbeat()
            if all(all(seqs for seqs in r.values()) for r in received):
                break
            time.sleep(0.02)  # the tables' pace, not a wait for a condition
        else:
            raise AssertionError("subscriptions never became live through the proxy")
        marks = {table.table: table.seq for table in tables}
        period = 1.0 / RATE_PER_TABLE
        start = time.monotonic()
        for n in range(EVENTS_PER_TABLE):
            for table in tables:
                table.emit("alert", kind="no-read", severity="info", detail=f"steady {n}")
            time.sleep(max(0.0, start + (n + 1) * period - time.monotonic()))
        for table in tables:  # a final marker per table, then wait for everybody to have it
            table.heartbeat()
        final_box.append({table.table: table.seq for table in tables})
        complete.wait(10)
        stop.set()
        reader.join(5)
        for index, per_table in enumerate(received):
            for table in tables:
                steady = [s for s in per_table[table.table] if s > marks[table.table]]
                expected = list(range(marks[table.table] + 1, table.seq + 1))
                assert steady == expected, f"subscriber {index} lost events of {table.table}"
    finally:
        stop.set()
        reader.join(5)
        for sub in subs:
            sub.close(linger=0)
        for publisher in publishers:
            publisher.close()
        proxy.close()
        context.term()


def test_client_of_all_tables_through_the_proxy_snapshots_each_table():
    from table_controller.client import Snapshot, TableClient
    from table_controller.event_types import Heartbeat

    context = zmq.Context()
    proxy = StudioProxy(LOOPBACK, LOOPBACK, context=context).start()
    publishers = {t: EventPublisher(t, f"connect:{proxy.bound_frontend}", LOOPBACK,
                                    context=context).start() for t in ("T01", "T02", "T03")}
    tables = {t: FakeTable(p, table=t) for t, p in publishers.items()}
    tables["T01"].play_round(["QH", "8S", "3C", "QD"])
    snapshots = {t: p.bound_snapshot for t, p in publishers.items() if t != "T03"}
    client = TableClient(proxy.bound_backend, snapshots, table=None)
    try:
        got: dict[str, Snapshot] = {}
        for _ in range(300):  # the tables' heartbeats until T01 and T02 are snapshotted
            for table in tables.values():
                table.heartbeat()
            for item in client.events(timeout=0.02):
                if isinstance(item, Snapshot):
                    got[item.table] = item
            if len(got) == 2:
                break
        assert sorted(got) == ["T01", "T02"]
        assert [e.round for e in got["T01"].history] == ["T01-000001"]
        assert got["T02"].history == []
        for item in client.events(timeout=0.2):  # drain heartbeats
            assert isinstance(item, Heartbeat)
        sent = [tables["T02"].emit("table.state", state="paused", reason="break"),
                tables["T01"].emit("table.state", state="closed", reason=None),
                tables["T03"].emit("table.state", state="betting", reason=None)]
        received = [next(client.events(timeout=5)) for _ in sent]
        assert sorted(received, key=lambda e: e.table) == sorted(sent, key=lambda e: e.table)
        assert client.stats.gaps == 0
    finally:
        client.close()
        for publisher in publishers.values():
            publisher.close()
        proxy.close()
        context.term()


def test_the_proxy_refuses_a_network_bind_without_insecure() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "table_controller", "proxy", "--frontend", "tcp://*:0",
         "--backend", "tcp://127.0.0.1:0"], capture_output=True, text=True, timeout=30,
    )
    assert done.returncode == 2
    assert "--frontend tcp://*:0 listens beyond this machine" in done.stderr


def test_raw_bytes_and_a_crafted_old_protocol_message_reach_no_display() -> None:
    """Found by the hostile soak: raw TCP to the frontend was forwarded as ZMTP/1.0 messages,
    and one nested body stopped every TableClient (issue 13)."""
    import socket
    import struct
    import time

    import zmq

    from table_controller.publish.proxy import StudioProxy

    ctx = zmq.Context()
    with StudioProxy("tcp://127.0.0.1:0", "tcp://127.0.0.1:0", context=ctx) as proxy:
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(proxy.bound_backend)
        time.sleep(0.3)
        host, port = proxy.bound_frontend[len("tcp://"):].rsplit(":", 1)
        raw = socket.create_connection((host, int(port)))
        raw.sendall(b"\x01\x00" + b"\x09\x01T01.card" + b"\xff" + struct.pack(">Q", 100001)
                    + b"\x00" + b"[" * 100000)
        time.sleep(0.5)
        raw.close()
        assert not sub.poll(300), "garbage from a raw TCP peer was forwarded"
        sub.close()
    ctx.term()


def test_a_client_skips_a_malformed_event_of_any_shape() -> None:
    from table_controller.events import EventError, decode

    for body in (b"[" * 5000 + b"]" * 5000, b'{"type": ["x"]}', b"1" * 5000,
                 b'{"v":1,"table":["T01"],"seq":1,"ts":"x","type":"heartbeat","game":"g","round":null,"state":"idle"}'):
        with pytest.raises(EventError):
            decode([b"T01.card", body])
