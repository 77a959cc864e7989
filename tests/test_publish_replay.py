"""The replay endpoint: journaled events from any seq, bounded per request, over the snapshot
endpoint's binding and keys; bad requests are refused and the server serves on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq
from journal_helpers import write_rounds

from table_controller.event_types import RoundResult
from table_controller.journal import Journal
from table_controller.publish import CurveConfig, EventPublisher, generate_keys
from table_controller.publish.replay import MAX_LIMIT, JournalReplay
from table_controller.publish.security import ClientCurve
from table_controller.replay_client import ReplayedEvent, ReplayError, ReplayRefused, ReplaySlice, fetch_replay

LOOPBACK = "tcp://127.0.0.1:0"


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    j = Journal(tmp_path / "T01.sqlite", table="T01", game="baccarat", variant="baccarat")
    write_rounds(j, rounds=8)
    yield j
    j.close()


@pytest.fixture
def publisher(journal: Journal) -> Iterator[EventPublisher]:
    context: zmq.Context[Any] = zmq.Context()
    replay = JournalReplay(journal.path, "T01")
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context, replay=replay) as pub:
        yield pub
    context.destroy(linger=0)


def _ask(endpoint: str, request: bytes) -> dict[str, Any]:
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    sock.send_multipart([b"", request])
    assert sock.poll(5000), "no answer"
    reply: dict[str, Any] = json.loads(sock.recv_multipart()[-1])
    sock.close(linger=0)
    return reply


def test_a_gap_of_any_size_is_filled_slice_by_slice_exactly_as_journaled(journal: Journal,
                                                                        publisher: EventPublisher) -> None:
    endpoint = publisher.bound_snapshot
    assert endpoint is not None
    stored = list(journal.records())
    assert len(stored) > 60
    got: list[ReplayedEvent] = []
    after, slices = 17, 0
    while True:
        part = fetch_replay(endpoint, after_seq=after, limit=25)
        part.verify()
        assert part.last_seq == stored[-1].seq and len(part.events) <= 25
        got += part.events
        after, slices = part.end_seq, slices + 1
        if not part.more:
            break
    assert [(e.seq, e.hash, e.body) for e in got] == [(r.seq, r.hash, r.body) for r in stored[17:]]
    assert slices == -(-(len(stored) - 17) // 25)
    results = [e for e in fetch_replay(endpoint, 0, 1000).decoded() if isinstance(e, RoundResult)]
    assert len(results) == 8


def test_the_first_slice_chains_from_the_genesis_and_the_limit_is_capped(publisher: EventPublisher) -> None:
    assert publisher.bound_snapshot is not None
    part = fetch_replay(publisher.bound_snapshot, 0, MAX_LIMIT * 10)
    assert part.prev_hash == "0" * 64 and part.events[0].seq == 1
    part.verify()
    assert len(part.events) == min(part.last_seq, MAX_LIMIT)


def test_at_the_journal_end_the_slice_is_empty_and_beyond_it_refused(publisher: EventPublisher) -> None:
    endpoint = publisher.bound_snapshot
    assert endpoint is not None
    last = fetch_replay(endpoint, 0, 1).last_seq
    end = fetch_replay(endpoint, last)
    assert end.events == [] and not end.more and end.end_seq == last
    with pytest.raises(ReplayRefused, match="beyond the journal's last seq") as refused:
        fetch_replay(endpoint, last + 1)
    assert refused.value.code == "beyond-end"


@pytest.mark.parametrize("request_body", [
    b'{"op": "replay", "after_seq": -1}',
    b'{"op": "replay", "after_seq": "12"}',
    b'{"op": "replay", "after_seq": true}',
    b'{"op": "replay", "after_seq": 1.5}',
    b'{"op": "replay", "limit": 0}',
    b'{"op": "replay", "limit": [1]}',
    b'{"op": "replay", "after_seq": 1e400}',
    b'{"op": "replay", "after_seq": 99999999999999999999999999}',
])
def test_a_malformed_replay_request_is_refused_and_the_server_serves_on(publisher: EventPublisher,
                                                                        request_body: bytes) -> None:
    assert publisher.bound_snapshot is not None
    reply = _ask(publisher.bound_snapshot, request_body)
    expected = "beyond-end" if request_body.endswith(b"99}") else "bad-request"  # a whole number past the end
    assert "error" in reply and reply["code"] == expected and "events" not in reply
    assert _ask(publisher.bound_snapshot, b'{"op": "snapshot"}')["seq"] >= 0
    assert fetch_replay(publisher.bound_snapshot, 0, 3).events


def test_a_tampered_or_reordered_slice_fails_verification(publisher: EventPublisher) -> None:
    assert publisher.bound_snapshot is not None
    part = fetch_replay(publisher.bound_snapshot, 5, 6)
    edited = ReplaySlice(part.table, part.after_seq, part.prev_hash, part.last_seq, part.more,
                         [part.events[0], ReplayedEvent(part.events[1].seq, part.events[1].hash,
                                                        part.events[1].body.replace("T01", "T02")),
                          *part.events[2:]])
    with pytest.raises(ReplayError, match="does not chain"):
        edited.verify()
    swapped = ReplaySlice(part.table, part.after_seq, part.prev_hash, part.last_seq, part.more,
                          [part.events[1], part.events[0], *part.events[2:]])
    with pytest.raises(ReplayError, match="follows"):
        swapped.verify()


def test_a_table_without_its_journal_at_hand_says_so(tmp_path: Path) -> None:
    context: zmq.Context[Any] = zmq.Context()
    with EventPublisher("T09", LOOPBACK, LOOPBACK, context=context) as pub:
        assert pub.bound_snapshot is not None
        with pytest.raises(ReplayError, match="does not replay"):
            fetch_replay(pub.bound_snapshot, 0)
    with EventPublisher("T09", LOOPBACK, LOOPBACK, context=context,
                        replay=JournalReplay(tmp_path / "gone.sqlite", "T09")) as pub:
        assert pub.bound_snapshot is not None
        with pytest.raises(ReplayError, match="replay unavailable"):
            fetch_replay(pub.bound_snapshot, 0)
    context.destroy(linger=0)


def test_replay_keeps_the_snapshot_endpoints_keys(tmp_path: Path, journal: Journal) -> None:
    generate_keys(tmp_path / "server", "table-T01")
    generate_keys(tmp_path / "clients", "archive")
    generate_keys(tmp_path / "intruders", "intruder")
    context: zmq.Context[Any] = zmq.Context()
    security = CurveConfig(tmp_path / "server" / "table-T01.key_secret", tmp_path / "clients")
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context, security=security,
                        replay=JournalReplay(journal.path, "T01")) as pub:
        assert pub.bound_snapshot is not None
        server = tmp_path / "server" / "table-T01.key"
        archive = ClientCurve(tmp_path / "clients" / "archive.key_secret", server)
        ok = fetch_replay(pub.bound_snapshot, 0, 5, curve=archive)
        assert len(ok.events) == 5
        intruder = ClientCurve(tmp_path / "intruders" / "intruder.key_secret", server)
        with pytest.raises(ReplayError, match="no replay"):
            fetch_replay(pub.bound_snapshot, 0, 5, curve=intruder, timeout=1.0)
        with pytest.raises(ReplayError, match="no replay"):
            fetch_replay(pub.bound_snapshot, 0, 5, timeout=1.0)
    context.destroy(linger=0)
