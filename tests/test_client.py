"""TableClient: snapshot then every later event once, gaps, restarts, garbage on the wire."""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Iterator

import pytest
import zmq
from fake_table import BANKER_ROUND, PLAYER_ROUND, TIE_ROUND, FakeTable, as_event

from table_controller.client import Snapshot, TableClient
from table_controller.event_types import CardDealt, Heartbeat, RoundResult, TableStatus, as_dict, decode_event
from table_controller.events import encode, make_event
from table_controller.publish import EventPublisher

LOOPBACK = "tcp://127.0.0.1:0"


@pytest.fixture
def context() -> Iterator[zmq.Context]:
    ctx = zmq.Context()
    yield ctx
    ctx.destroy(linger=0)


class Collector:
    """Runs ``client.events()`` in a thread; items land on a queue."""

    def __init__(self, client: TableClient) -> None:
        self.client = client
        self.items: queue.Queue = queue.Queue()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            for item in self.client.events(timeout=0.05):
                self.items.put(item)

    def next(self, timeout: float = 5.0):
        return self.items.get(timeout=timeout)

    def until(self, predicate, drive=None, limit: int = 400) -> list:
        """Items until one matches ``predicate``; ``drive()`` runs whenever nothing came in 20 ms."""
        got: list = []
        for _ in range(limit):
            try:
                item = self.items.get(timeout=0.02 if drive else 5.0)
            except queue.Empty:
                if drive is None:
                    raise
                drive()
                continue
            got.append(item)
            if predicate(item):
                return got
        raise AssertionError(f"nothing matched; got {[type(i).__name__ for i in got]}")

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.client.close()


def typed(events: list[dict]) -> list:
    """The typed events the client yields for these event dicts."""
    return [as_event(e) for e in events]


def is_snapshot(item) -> bool:
    return isinstance(item, Snapshot)


def test_late_joiner_mid_round_gets_snapshot_then_every_later_event_once(context):
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context) as publisher:
        table = FakeTable(publisher)
        table.new_shoe()
        first = table.play_round(BANKER_ROUND)
        opened = table.open_round()
        closed = table.emit("betting.closed")
        collector = Collector(TableClient(publisher.bound_publish, publisher.bound_snapshot, "T01"))
        try:
            snap = collector.until(is_snapshot, drive=table.heartbeat)[-1]
            assert snap.table == "T01"
            assert snap.round == typed([opened[1], closed])
            assert snap.history == typed([first[-2]])
            assert snap.seq == table.seq
            later = [*table.deal(PLAYER_ROUND), *table.finish()]
            got = [collector.next() for _ in later]
            assert got == typed(later)
            assert [type(e) for e in got[2:4]] == [CardDealt, CardDealt]
            assert collector.items.empty()
            assert collector.client.stats.snapshots == 1
            assert collector.client.stats.gaps == 0
        finally:
            collector.close()


def test_gap_in_seq_makes_the_client_snapshot_again(context):
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context) as publisher:
        table = FakeTable(publisher)
        collector = Collector(TableClient(publisher.bound_publish, publisher.bound_snapshot, "T01"))
        try:
            collector.until(is_snapshot, drive=table.heartbeat)
            lost = make_event(table="T01", seq=table.seq + 1, ts=0, type="table.state",
                              game="baccarat", round=None, state="paused", reason="lost on the wire")
            publisher.prime([lost])  # in the snapshot, never sent: the wire lost it
            table.seq += 1
            after = table.heartbeat()
            items = collector.until(lambda i: i.seq == after.seq)
            snapshot = items[-1]
            assert is_snapshot(snapshot)
            assert snapshot.state == TableStatus(state="paused", reason="lost on the wire")
            assert collector.client.stats.gaps == 1
            follow = table.heartbeat()
            assert collector.next() == as_event(follow)
        finally:
            collector.close()


def test_controller_restart_continues_seq_without_duplicate_result():
    # Each publisher has its own context (as its own process would): closing it frees the ports.
    with EventPublisher("T01", LOOPBACK, LOOPBACK) as first:
        publish_at, snapshot_at = first.bound_publish, first.bound_snapshot
        table = FakeTable(first)
        collector = Collector(TableClient(publish_at, snapshot_at, "T01"))
        collector.until(is_snapshot, drive=table.heartbeat)
        round_one = table.play_round(BANKER_ROUND)
        seen = [collector.next() for _ in round_one]
        assert seen == typed(round_one)
    try:
        # The controller comes back on the same endpoints with its journal.
        with EventPublisher("T01", publish_at, snapshot_at) as second:
            second.prime(table.journal)
            table.publisher = second
            round_two = table.play_round(TIE_ROUND)
            items = collector.until(lambda i: i.seq == round_two[-1].seq or
                                    (is_snapshot(i) and i.seq >= round_two[-1].seq),
                                    drive=table.heartbeat)
            later = table.heartbeat()
            items.append(collector.next())
            assert items[-1] == as_event(later)
        results: list[str] = []
        last_seq = round_one[-1].seq
        for item in items:
            assert item.seq > last_seq  # seq continuity: never back, never twice
            last_seq = item.seq
            match item:
                case Snapshot(history=history):
                    results = [e.round for e in history]  # a snapshot replaces
                case RoundResult(round=round_id):
                    results.append(round_id)
        assert results in (["T01-000001", "T01-000002"], ["T01-000002"])
        assert results.count("T01-000002") == 1
    finally:
        collector.close()


class RawTable:
    """A PUB socket that sends whatever a test writes, and a snapshot endpoint primed with the good events."""

    def __init__(self, context: zmq.Context, snapshots: EventPublisher) -> None:
        self.pub = context.socket(zmq.PUB)
        self.pub.setsockopt(zmq.LINGER, 0)
        self.pub.bind(LOOPBACK)
        self.endpoint = self.pub.getsockopt_string(zmq.LAST_ENDPOINT)
        self.snapshots = snapshots
        self.seq = 0

    def send(self, **fields) -> dict:
        self.seq += 1
        event = make_event(table="T01", seq=self.seq, ts=0, game="baccarat", round=None, **fields)
        self.snapshots.prime([event])
        self.pub.send_multipart(encode(event))
        return event

    def heartbeat(self) -> dict:
        return self.send(type="heartbeat", state="idle")

    def close(self) -> None:
        self.pub.close(linger=0)


def test_malformed_messages_are_logged_and_skipped(context, caplog):
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context) as snapshots:
        raw = RawTable(context, snapshots)
        collector = Collector(TableClient(raw.endpoint, snapshots.bound_snapshot, "T01"))
        try:
            collector.until(is_snapshot, drive=raw.heartbeat)
            caplog.set_level(logging.WARNING, logger="table_controller.client")
            card = (b'{"v":1,"table":"T01","seq":%d,"ts":"2026-11-29T18:40:02.123Z","type":"card",'
                    b'"game":"baccarat","round":null,"position":"player","index":0,"code":"QH"%s}')
            raw.pub.send_multipart([b"T01.card", b"{not json"])
            raw.pub.send_multipart([b"T01.card"])
            raw.pub.send_multipart([b"T01.card", card % (raw.seq + 1, b"")])  # no source
            raw.pub.send_multipart([b"T01.alert", card % (raw.seq + 1, b',"source":"shoe"')])
            raw.pub.send_multipart([b"T01.card", b'{"type":"card","x":' + b"[" * 5000 + b"]" * 5000 + b"}"])
            good = raw.send(type="table.state", state="betting", reason=None)
            assert collector.next() == as_event(good)
            assert collector.client.stats.malformed == 5
            assert collector.client.stats.gaps == 0
            messages = [r.getMessage() for r in caplog.records]
            assert any("event body is not JSON: JSON is malformed" in m for m in messages)
            assert any("expected 2 frames" in m for m in messages)
            assert any("card event lacks field 'source'" in m for m in messages)
            assert any("topic b'T01.alert' does not match event 'T01.card'" in m for m in messages)
            assert any("nested too deep" in m for m in messages)
        finally:
            collector.close()
            raw.close()


def test_events_of_an_unknown_type_are_skipped_without_a_gap_and_logged_once(context, caplog):
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context) as snapshots:
        raw = RawTable(context, snapshots)
        collector = Collector(TableClient(raw.endpoint, snapshots.bound_snapshot, "T01"))
        try:
            collector.until(is_snapshot, drive=raw.heartbeat)
            caplog.set_level(logging.WARNING, logger="table_controller.client")
            for _ in range(2):  # a later version's type: it has its seq in the stream
                raw.seq += 1
                raw.pub.send_multipart([b"T01.dance", b'{"v":1,"table":"T01","seq":%d,"ts":"x",'
                                        b'"type":"dance","game":"baccarat","round":null}' % raw.seq])
            good = raw.send(type="table.state", state="betting", reason=None)
            assert collector.next() == as_event(good)
            assert collector.items.empty()
            assert collector.client.stats.unknown_types == 2
            assert collector.client.stats.malformed == 0
            assert collector.client.stats.gaps == 0
            assert collector.client.stats.snapshots == 1
            unknown = [r.getMessage() for r in caplog.records if "unknown type" in r.getMessage()]
            first = good.seq - 2
            assert unknown == [f"table T01: skipping events of unknown type 'dance' (seq {first}); later ones silently"]
        finally:
            collector.close()
            raw.close()


def test_snapshot_request_is_repeated_when_the_endpoint_does_not_answer(context):
    silent = context.socket(zmq.ROUTER)  # accepts requests, never answers
    silent.setsockopt(zmq.LINGER, 0)
    silent.bind(LOOPBACK)
    pub = context.socket(zmq.PUB)
    pub.setsockopt(zmq.LINGER, 0)
    pub.bind(LOOPBACK)
    clock_now = [0.0]
    client = TableClient(pub.getsockopt_string(zmq.LAST_ENDPOINT),
                         silent.getsockopt_string(zmq.LAST_ENDPOINT), "T01",
                         snapshot_timeout=2.0, settle=0.0, clock=lambda: clock_now[0])
    try:
        assert list(client.events(timeout=0)) == []
        assert silent.poll(5000)
        assert silent.recv_multipart()[1:] == [b"", b'{"op": "snapshot"}']
        clock_now[0] = 2.5
        assert list(client.events(timeout=0)) == []
        assert silent.poll(5000)
        silent.recv_multipart()
        assert client.stats.snapshot_timeouts == 1
    finally:
        client.close()
        silent.close(linger=0)
        pub.close(linger=0)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_controller_killed_and_restarted_display_keeps_seq_and_counts_each_result_once(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from table_controller.display.model import TableView

    here = Path(__file__).resolve().parent
    publish, snapshot = f"tcp://127.0.0.1:{free_port()}", f"tcp://127.0.0.1:{free_port()}"
    journal = tmp_path / "journal.jsonl"

    def controller(*rounds: list[str]) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, str(here / "table_process.py"), publish, snapshot,
                                 str(journal), *[",".join(r) for r in rounds]],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline() == "ready\n"
        return proc

    view = TableView("T01")
    items: list = []
    first = controller(BANKER_ROUND)
    collector = Collector(TableClient(publish, snapshot, "T01"))
    try:
        items += collector.until(lambda i: isinstance(i, RoundResult) or
                                 (is_snapshot(i) and len(i.history) == 1))
        first.kill()  # kill -9: no goodbye
        first.wait(5)
        second = controller(PLAYER_ROUND)
        try:
            items += collector.until(
                lambda i: isinstance(i, RoundResult) and i.round == "T01-000002" or
                (is_snapshot(i) and len(i.history) == 2))
            items += collector.until(lambda i: isinstance(i, Heartbeat))
        finally:
            second.kill()
            second.wait(5)
    finally:
        collector.close()
    journaled = [decode_event(line) for line in journal.read_text().splitlines()]
    assert [e.seq for e in journaled] == list(range(1, len(journaled) + 1))  # seq continues
    last = 0
    for item in items:
        assert item.seq > last or (is_snapshot(item) and item.seq >= last)
        last = item.seq
        assert view.apply(item)
        if not is_snapshot(item):
            assert item == as_event(journaled[item.seq - 1])  # what the controller journaled
    assert [h["round"] for h in view.view(0)["history"]] == ["T01-000001", "T01-000002"]
    assert [h["label"] for h in view.view(0)["history"]] == ["B", "P"]


class ScriptedSnapshots:
    """A snapshot endpoint that answers only when the test says so, with the reply it is given."""

    def __init__(self, context: zmq.Context) -> None:
        self.router = context.socket(zmq.ROUTER)
        self.router.setsockopt(zmq.LINGER, 0)
        self.router.bind(LOOPBACK)
        self.endpoint = self.router.getsockopt_string(zmq.LAST_ENDPOINT)

    def requested(self, timeout_ms: int = 0):
        """The peer that asked for a snapshot (None if nobody did within the timeout)."""
        if not self.router.poll(timeout_ms):
            return None
        peer, _, request = self.router.recv_multipart()
        assert request == b'{"op": "snapshot"}'
        return peer

    def answer(self, peer, seq: int) -> None:
        reply = {"seq": seq, "state": None, "round": [], "history": [], "shoe": []}
        self.router.send_multipart([peer, b"", json.dumps(reply).encode()])

    def close(self) -> None:
        self.router.close(linger=0)


def pump(client: TableClient, until, timeout: float = 5.0) -> list:
    """Items of ``client`` (its clock stands still) until ``until(items so far)`` holds."""
    import time

    got: list = []
    deadline = time.monotonic() + timeout
    while not until(got):
        assert time.monotonic() < deadline, f"gave up; got {got}"
        got += client.events(timeout=0)
    return got


def test_a_slow_consumers_backlog_after_a_snapshot_is_dropped_not_a_snapshot_storm(context):
    """Regression (20 x 200 soak): a slow display re-snapshotted after a restart's gap,
    then read its backlog of older events; each one was taken for a replaced journal
    and triggered yet another snapshot. A backlog drains; only a stream that stays
    behind for REPLACED_AFTER seconds means the journal was replaced."""
    from table_controller.client import REPLACED_AFTER

    now = [100.0]
    pub = context.socket(zmq.PUB)
    pub.setsockopt(zmq.LINGER, 0)
    pub.bind(LOOPBACK)
    snapshots = ScriptedSnapshots(context)
    # settle never passes on this clock: the client asks once the subscription is live
    client = TableClient(pub.getsockopt_string(zmq.LAST_ENDPOINT), snapshots.endpoint, "T01",
                         context=context, settle=1e9, clock=lambda: now[0])

    def send(seq: int) -> None:
        event = make_event(table="T01", seq=seq, ts=0, type="heartbeat", game="baccarat",
                           round=None, state="idle")
        pub.send_multipart(encode(event))

    try:
        peer = None
        while peer is None:
            send(2812)
            assert list(client.events(timeout=0)) == []
            peer = snapshots.requested(20)
        snapshots.answer(peer, 2812)  # the snapshot went past the backlog
        got = pump(client, lambda got: bool(got))
        assert [type(i) for i in got] == [Snapshot] and got[0].seq == 2812
        for seq in range(2331, 2340):  # the backlog
            send(seq)
        assert pump(client, lambda got: client.stats.duplicates == 9) == []
        assert snapshots.requested() is None
        send(2813)  # caught up: the stream goes on
        got = pump(client, lambda got: bool(got))
        assert [i.seq for i in got] == [2813]
        for n in range(3):  # a replaced journal: seq 1.. for longer than REPLACED_AFTER
            send(1)
            assert pump(client, lambda got, n=n: client.stats.duplicates == 10 + n) == []
            now[0] += REPLACED_AFTER / 2
        assert list(client.events(timeout=0)) == []
        assert snapshots.requested(5000) is not None  # asks for a snapshot again
        assert client.stats.snapshots == 1
    finally:
        client.close()
        snapshots.close()
        pub.close(linger=0)


def test_a_snapshot_and_an_event_encode_as_the_json_of_contract_version_1():
    from table_controller.client import encode_item, item_as_dict

    shoe = make_event(table="T01", seq=1, ts=0, type="shoe", game="baccarat", round=None,
                      event="new", count=416, decks=8)
    card = make_event(table="T01", seq=3, ts=0, type="card", game="baccarat", round="R1",
                      position="player", index=0, code="QH", source="shoe")
    start = make_event(table="T01", seq=2, ts=0, type="round.start", game="baccarat", round="R1",
                       variant="baccarat", betting_seconds=15)
    snapshot = Snapshot(table="T01", seq=3, state=TableStatus(state="dealing", reason=None),
                        round=typed([start, card]), history=[], shoe=typed([shoe]))
    expected = {"type": "snapshot", "table": "T01", "seq": 3, "state": {"state": "dealing", "reason": None},
                "round": [as_dict(start), as_dict(card)], "history": [], "shoe": [as_dict(shoe)]}
    assert json.loads(encode_item(snapshot)) == expected
    assert list(json.loads(encode_item(snapshot))) == list(expected)  # the order display --json printed
    assert item_as_dict(snapshot) == expected
    assert encode_item(card) == json.dumps(as_dict(card), separators=(",", ":")).encode()
