"""Regression (found by the soak): a slow consumer must not time out a snapshot reply already waiting.

A display that spends longer than ``snapshot_timeout`` handling the events it
was given used to find its snapshot request "timed out" before it looked at
the reply sitting in its socket; it closed the socket, asked again, and under
steady traffic never resynchronised.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import zmq

from table_controller.client import Snapshot, TableClient
from table_controller.events import make_event
from table_controller.publish import EventPublisher

LOOPBACK = "tcp://127.0.0.1:0"


class ManualClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def context() -> Iterator[zmq.Context]:
    ctx = zmq.Context()
    yield ctx
    ctx.destroy(linger=0)


def test_snapshot_reply_waiting_in_the_socket_is_taken_after_a_slow_consumer(
    context: zmq.Context,
) -> None:
    publisher = EventPublisher("T01", LOOPBACK, LOOPBACK, context=context).start()
    try:
        publisher.publish(
            make_event(
                table="T01",
                seq=1,
                ts=0.0,
                type="heartbeat",
                game="baccarat",
                round=None,
                state="idle",
            )
        )
        # the first look must find the reply not yet there (the case this test is about); a
        # publisher quick enough to answer within that look leaves nothing to test: ask again
        for _ in range(20):
            clock = ManualClock()
            client = TableClient(
                publisher.bound_publish,
                publisher.bound_snapshot,
                "T01",
                context=context,
                snapshot_timeout=2.0,
                settle=0.0,
                clock=clock,
            )
            if list(client.events(timeout=0)) == []:  # subscribed, snapshot asked at t = 0
                break
            client.close()
        else:
            pytest.fail("every snapshot reply came within the first look: the slow consumer was never slow")
        try:
            time.sleep(0.5)  # the reply arrives and waits in the socket
            clock.now = 3.0  # the consumer was busy for longer than the snapshot timeout
            item = next(client.events())
            assert isinstance(item, Snapshot) and item.seq == 1
            assert client.stats.snapshot_timeouts == 0
            assert client.stats.snapshots == 1
        finally:
            client.close()
    finally:
        publisher.close()
