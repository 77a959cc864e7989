"""TableClient: snapshot then every later event once, gaps, restarts, garbage on the wire."""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Iterator

import pytest
import zmq
from fake_table import BANKER_ROUND, PLAYER_ROUND, TIE_ROUND, FakeTable

from table_controller.client import TableClient
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

    def next(self, timeout: float = 5.0) -> dict:
        return self.items.get(timeout=timeout)

    def until(self, predicate, drive=None, limit: int = 400) -> list[dict]:
        """Items until one matches ``predicate``; ``drive()`` runs whenever nothing came in 20 ms."""
        got: list[dict] = []
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
        raise AssertionError(f"nothing matched; got {[i['type'] for i in got]}")

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.client.close()


def test_late_joiner_mid_round_gets_snapshot_then_every_later_event_once(context):
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context) as publisher:
        table = FakeTable(publisher)
        table.new_shoe()
        first = table.play_round(BANKER_ROUND)
        opened = table.open_round()
        closed = table.emit("betting.closed")
        collector = Collector(TableClient(publisher.bound_publish, publisher.bound_snapshot, "T01"))
        try:
            snap = collector.until(lambda i: i["type"] == "snapshot", drive=table.heartbeat)[-1]
            assert snap["round"] == [opened[1], closed]
            assert snap["history"] == [first[-2]]
            assert snap["seq"] == table.seq
            later = [*table.deal(PLAYER_ROUND), *table.finish()]
            got = [collector.next() for _ in later]
            assert got == later
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
            collector.until(lambda i: i["type"] == "snapshot", drive=table.heartbeat)
            lost = make_event(table="T01", seq=table.seq + 1, ts=0, type="table.state",
                              game="baccarat", round=None, state="paused", reason="lost on the wire")
            publisher.prime([lost])  # in the snapshot, never sent: the wire lost it
            table.seq += 1
            after = table.heartbeat()
            items = collector.until(lambda i: i["seq"] == after["seq"])
            snapshot = items[-1]
            assert snapshot["type"] == "snapshot"
            assert snapshot["state"] == {"state": "paused", "reason": "lost on the wire"}
            assert collector.client.stats.gaps == 1
            follow = table.heartbeat()
            assert collector.next() == follow
        finally:
            collector.close()


def test_controller_restart_continues_seq_without_duplicate_result():
    # Each publisher has its own context (as its own process would): closing it frees the ports.
    with EventPublisher("T01", LOOPBACK, LOOPBACK) as first:
        publish_at, snapshot_at = first.bound_publish, first.bound_snapshot
        table = FakeTable(first)
        collector = Collector(TableClient(publish_at, snapshot_at, "T01"))
        collector.until(lambda i: i["type"] == "snapshot", drive=table.heartbeat)
        round_one = table.play_round(BANKER_ROUND)
        seen = [collector.next() for _ in round_one]
        assert seen == round_one
    try:
        # The controller comes back on the same endpoints with its journal.
        with EventPublisher("T01", publish_at, snapshot_at) as second:
            second.prime(table.journal)
            table.publisher = second
            round_two = table.play_round(TIE_ROUND)
            items = collector.until(lambda i: i.get("seq") == round_two[-1]["seq"] or
                                    (i["type"] == "snapshot" and i["seq"] >= round_two[-1]["seq"]),
                                    drive=table.heartbeat)
            later = table.heartbeat()
            items.append(collector.next())
            assert items[-1] == later
        results: list[str] = []
        last_seq = round_one[-1]["seq"]
        for item in items:
            assert item["seq"] > last_seq  # seq continuity: never back, never twice
            last_seq = item["seq"]
            if item["type"] == "snapshot":
                results = [e["round"] for e in item["history"]]  # a snapshot replaces
            elif item["type"] == "round.result":
                results.append(item["round"])
        assert results in (["T01-000001", "T01-000002"], ["T01-000002"])
        assert results.count("T01-000002") == 1
    finally:
        collector.close()


def test_malformed_json_and_unknown_type_are_logged_and_skipped(context, caplog):
    raw = context.socket(zmq.PUB)
    raw.setsockopt(zmq.LINGER, 0)
    raw.bind(LOOPBACK)
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context) as snapshots:
        seq = 0

        def send(**fields) -> dict:
            nonlocal seq
            seq += 1
            event = make_event(table="T01", seq=seq, ts=0, game="baccarat", round=None, **fields)
            snapshots.prime([event])
            raw.send_multipart(encode(event))
            return event

        collector = Collector(TableClient(raw.getsockopt_string(zmq.LAST_ENDPOINT),
                                          snapshots.bound_snapshot, "T01"))
        try:
            collector.until(lambda i: i["type"] == "snapshot",
                            drive=lambda: send(type="heartbeat", state="idle"))
            caplog.set_level(logging.WARNING, logger="table_controller.client")
            raw.send_multipart([b"T01.card", b"{not json"])
            raw.send_multipart([b"T01.dance", b'{"v":1,"table":"T01","seq":999,"ts":"x",'
                                              b'"type":"dance","game":"baccarat","round":null}'])
            raw.send_multipart([b"T01.card"])
            good = send(type="table.state", state="betting", reason=None)
            assert collector.next() == good
            assert collector.client.stats.malformed == 3
            messages = [r.getMessage() for r in caplog.records]
            assert any("not UTF-8 JSON" in m for m in messages)
            assert any("unknown event type 'dance'" in m for m in messages)
            assert any("expected 2 frames" in m for m in messages)
        finally:
            collector.close()
            raw.close(linger=0)


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
    items: list[dict] = []
    first = controller(BANKER_ROUND)
    collector = Collector(TableClient(publish, snapshot, "T01"))
    try:
        items += collector.until(lambda i: i["type"] == "round.result" or
                                 (i["type"] == "snapshot" and len(i["history"]) == 1))
        first.kill()  # kill -9: no goodbye
        first.wait(5)
        second = controller(PLAYER_ROUND)
        try:
            items += collector.until(
                lambda i: i["type"] == "round.result" and i["round"] == "T01-000002" or
                (i["type"] == "snapshot" and len(i["history"]) == 2))
            items += collector.until(lambda i: i["type"] == "heartbeat")
        finally:
            second.kill()
            second.wait(5)
    finally:
        collector.close()
    journaled = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [e["seq"] for e in journaled] == list(range(1, len(journaled) + 1))  # seq continues
    last = 0
    for item in items:
        assert item["seq"] > last or (item["type"] == "snapshot" and item["seq"] >= last)
        last = item["seq"]
        view.apply(item)
        if item["type"] != "snapshot":
            assert item == journaled[item["seq"] - 1]  # what the controller journaled, exactly
    assert [h["round"] for h in view.view(0)["history"]] == ["T01-000001", "T01-000002"]
    assert [h["label"] for h in view.view(0)["history"]] == ["B", "P"]


def test_a_slow_consumers_backlog_after_a_snapshot_is_dropped_not_a_snapshot_storm(context):
    """Regression (20 x 200 soak): a slow display re-snapshotted after a restart's gap,
    then read its backlog of older events; each one was taken for a replaced journal
    and triggered yet another snapshot. A backlog drains; only a stream that stays
    behind for REPLACED_AFTER seconds means the journal was replaced."""
    from table_controller.client import REPLACED_AFTER

    now = [100.0]
    client = TableClient("tcp://127.0.0.1:1", "tcp://127.0.0.1:2", "T01", context=context,
                         clock=lambda: now[0])
    try:
        sync = client._sync_of("T01")
        sync.synced, sync.last_seq = True, 2812  # the snapshot went past the backlog

        def event(seq: int) -> dict:
            return make_event(table="T01", seq=seq, ts=0, type="heartbeat", game="baccarat",
                              round=None, state="idle")

        for seq in range(2331, 2340):  # the backlog
            client._receive(event(seq))
            now[0] += 0.01
        assert sync.synced and not client._ready and client.stats.duplicates == 9
        client._receive(event(2813))  # caught up: the stream goes on
        assert [e["seq"] for e in client._ready] == [2813]
        for _ in range(3):  # a replaced journal: seq 1.. for longer than REPLACED_AFTER
            client._receive(event(1))
            now[0] += REPLACED_AFTER / 2
        assert not sync.synced  # asks for a snapshot
    finally:
        client.close()
