"""Fetch journaled events from a table's replay endpoint, and check them against the hash chain.

    from table_controller.replay_client import fetch_replay

    slice_ = fetch_replay("tcp://127.0.0.1:5557", after_seq=120)
    slice_.verify()                     # ReplayError unless every hash chains from prev_hash
    for event in slice_.decoded():      # typed events, seq order
        ...
    while slice_.more:                  # fill a gap of any size, a bounded slice at a time
        slice_ = fetch_replay(endpoint, after_seq=slice_.end_seq)

The request and reply are described in :mod:`table_controller.publish.replay`
and docs/events.md ("Replay").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import msgspec
import zmq

from table_controller.event_types import Event, decode_event
from table_controller.publish.security import ClientCurve


class ReplayError(Exception):
    """The replay endpoint refused or did not answer, or its answer does not hold together."""


class ReplayRefused(ReplayError):
    """The replay endpoint answered with a refusal; ``code`` is its reply's ``code``."""

    def __init__(self, text: str, code: str) -> None:
        super().__init__(text)
        self.code = code


class ReplayedEvent(msgspec.Struct, frozen=True):
    """One journaled event as replayed: its seq, chain hash and body exactly as journaled."""

    seq: int
    hash: str
    body: str


class ReplaySlice(msgspec.Struct, frozen=True):
    """One reply of a replay endpoint: the events after ``after_seq`` (at most the limit)."""

    table: str
    after_seq: int
    prev_hash: str
    last_seq: int
    more: bool
    events: list[ReplayedEvent]

    @property
    def end_seq(self) -> int:
        """The seq to ask after next: the last one in this slice (``after_seq`` when empty)."""
        return self.events[-1].seq if self.events else self.after_seq

    def verify(self) -> None:
        """Raise :class:`ReplayError` unless the seqs follow ``after_seq`` one by one and every
        hash is sha256(previous hash + body), starting from ``prev_hash``."""
        prev, seq = self.prev_hash, self.after_seq
        for e in self.events:
            if e.seq != seq + 1:
                raise ReplayError(f"table {self.table}: seq {e.seq} follows {seq}")
            if hashlib.sha256((prev + e.body).encode()).hexdigest() != e.hash:
                raise ReplayError(f"table {self.table}: the hash of seq {e.seq} does not chain from seq {seq}")
            prev, seq = e.hash, e.seq

    def decoded(self) -> Iterator[Event]:
        """The typed events of the slice (raises EventError for a body that is none)."""
        for e in self.events:
            yield decode_event(e.body)


_REPLY = msgspec.json.Decoder(ReplaySlice)
#: The largest reply taken: 1,000 events of a few hundred bytes each, with room to spare.
MAX_REPLY_BYTES = 16 * 1024 * 1024


def fetch_replay(endpoint: str, after_seq: int = 0, limit: int = 500, *, timeout: float = 5.0,
                 curve: ClientCurve | None = None, context: zmq.Context[Any] | None = None) -> ReplaySlice:
    """Ask ``endpoint`` (a table's snapshot endpoint) for the events after ``after_seq``."""
    ctx = context or zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.MAXMSGSIZE, MAX_REPLY_BYTES)  # a larger reply is dropped unread
    try:
        if curve is not None:
            curve.apply(sock)
        # a peer whose handshake never completes (a CURVE server asked without keys) leaves a
        # DEALER with no pipe to send on: the send must time out too, never block
        sock.setsockopt(zmq.SNDTIMEO, int(timeout * 1000))
        sock.connect(endpoint)
        try:
            sock.send_multipart([b"", json.dumps({"op": "replay", "after_seq": after_seq, "limit": limit}).encode()])
        except zmq.Again:
            raise ReplayError(f"no replay from {endpoint} within {timeout:g} s (request not sent)") from None
        if not sock.poll(int(timeout * 1000), zmq.POLLIN):
            raise ReplayError(f"no replay from {endpoint} within {timeout:g} s")
        body = sock.recv_multipart()[-1]
    finally:
        sock.close(linger=0)
    return decode_reply(body, endpoint)


def decode_reply(body: bytes | str, where: str) -> ReplaySlice:
    """The slice a replay reply holds, or :class:`ReplayRefused` for a refusal or a reply that is none."""
    try:
        return _REPLY.decode(body)
    except msgspec.ValidationError:
        try:
            refusal = json.loads(body)
            error, code = refusal.get("error"), refusal.get("code")
        except (ValueError, AttributeError, RecursionError):  # RecursionError: [[[[...]]]]
            error = code = None
        if isinstance(error, str):
            raise ReplayRefused(f"{where}: {error}", str(code)) from None
        raise ReplayRefused(f"{where}: not a replay reply", "malformed") from None
    except msgspec.DecodeError as e:
        raise ReplayRefused(f"{where}: not a replay reply ({e})", "malformed") from None
