"""Subscribe to a table's event stream the right way: the Clone pattern of events.md.

:class:`TableClient` subscribes, waits until the subscription is live, asks the
table's snapshot endpoint for a snapshot, drops the events the snapshot
already covers, and from then on yields every event exactly once in seq
order. A gap in seq (a slow display lost messages, the controller restarted)
makes it ask for a snapshot again; ZeroMQ reconnects both sockets by itself
when the controller comes back. Every display of this project uses it, and
third-party display vendors may too (see ``docs/events.md``).

Items are typed: each event is one of the frozen classes of
:mod:`table_controller.event_types` (dispatch with ``match`` or ``isinstance``), and
each snapshot is a :class:`Snapshot` that *replaces* what the consumer knew of that
table. Events of a type this client does not know (a later version of the contract)
keep the seq count going but are not yielded: consumers ignore what they do not know.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import msgspec
import zmq

from table_controller.event_types import (
    EVENT_CLASSES,
    Event,
    EventError,
    RoundResult,
    RoundVoided,
    ShoeChanged,
    SnapshotReply,
    TableStatus,
    decode_event,
    decode_snapshot_reply,
    encode_event,
)
from table_controller.publish.security import ClientCurve

log = logging.getLogger(__name__)

SNAPSHOT_REQUEST = json.dumps({"op": "snapshot"}).encode()
#: Events kept while waiting for a snapshot; beyond it the oldest go (the snapshot covers them).
BUFFER_LIMIT = 10_000
#: Events older than the stream for this long (not a backlog draining) mean a replaced journal.
REPLACED_AFTER = 5.0


class Snapshot(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="snapshot"):
    """A table's snapshot as the client yields it: the reply of its snapshot endpoint, for ``table``.

    It replaces what a consumer knew of that table: ``state`` (the latest ``table.state``
    payload, or None), ``round`` (the events of the round in progress), ``history`` (the
    last results and voids) and ``shoe`` (the current shoe's ``shoe`` events); ``seq`` is
    the last event it covers. As JSON (:func:`encode_item`) it is
    ``{"type": "snapshot", "table", "seq", "state", "round", "history", "shoe"}``.
    """

    table: str
    seq: int
    state: TableStatus | None
    round: list[Event]
    history: list[RoundResult | RoundVoided]
    shoe: list[ShoeChanged] = []

    @classmethod
    def of(cls, table: str, reply: SnapshotReply) -> Snapshot:
        """The snapshot of ``table`` that its endpoint's ``reply`` describes."""
        return cls(table=table, seq=reply.seq, state=reply.state, round=reply.round,
                   history=reply.history, shoe=reply.shoe)


#: What :meth:`TableClient.events` yields.
ClientItem: TypeAlias = Event | Snapshot

_SNAPSHOT_ENCODER = msgspec.json.Encoder()


def encode_item(item: ClientItem) -> bytes:
    """Compact JSON of a client item: an event as on the wire, a snapshot as described in :class:`Snapshot`."""
    if isinstance(item, Snapshot):
        return _SNAPSHOT_ENCODER.encode(item)
    return encode_event(item)


def item_as_dict(item: ClientItem) -> dict[str, Any]:
    """A client item as plain JSON data, for consumers that still take dicts (fields left unset are absent)."""
    data: dict[str, Any] = msgspec.to_builtins(item)
    return data


class _UnknownEvent(msgspec.Struct, frozen=True):
    """The common head of an event of a type this client does not know: counted for seq, never yielded."""

    table: str
    seq: int
    type: str


_UNKNOWN_HEAD = msgspec.json.Decoder(_UnknownEvent)

_Received: TypeAlias = Event | _UnknownEvent


def decode_message(frames: list[bytes]) -> Event:
    """The typed event of a published message (topic frame, JSON frame).

    Raises :class:`EventError` for anything malformed: not two frames, a body that is not
    an event, or a topic other than ``<table>.<type>`` of the body.
    """
    if len(frames) != 2:
        raise EventError(f"expected 2 frames (topic, JSON), got {len(frames)}")
    try:
        event = decode_event(frames[1])
    except RecursionError:
        raise EventError("event body is JSON nested too deep") from None
    expected = f"{event.table}.{event.type}"
    if frames[0].decode("utf-8", "replace") != expected:
        raise EventError(f"topic {frames[0][:60]!r} does not match event {expected!r}")
    return event


def _unknown_event(frames: list[bytes]) -> _UnknownEvent | None:
    """The head of a well-formed message whose type this client does not know, else None."""
    if len(frames) != 2:
        return None
    try:
        head = _UNKNOWN_HEAD.decode(frames[1])
    except (msgspec.DecodeError, RecursionError):
        return None
    if head.type in EVENT_CLASSES or head.seq < 1:
        return None
    if frames[0].decode("utf-8", "replace") != f"{head.table}.{head.type}":
        return None
    return head


@dataclass
class _TableSync:
    """Where one table's stream stands: synced up to ``last_seq``, or waiting for a snapshot."""

    table: str
    endpoint: str | None
    synced: bool = False
    last_seq: int = 0
    buffer: list[_Received] = field(default_factory=list)
    dealer: zmq.Socket[Any] | None = None
    requested_at: float | None = None
    first_message_at: float | None = None
    behind_since: float | None = None  # since when only events older than last_seq arrived


@dataclass
class ClientStats:
    """What the client had to repair: counted for logs, tests and the display's status line."""

    snapshots: int = 0
    gaps: int = 0
    malformed: int = 0
    unknown_types: int = 0
    duplicates: int = 0
    snapshot_timeouts: int = 0


class TableClient:
    """Subscribe + snapshot (Clone pattern) for one table, or for all tables with ``table=None``.

    ``snapshot_endpoint`` is the table's snapshot endpoint; with ``table=None`` it is
    a mapping table -> endpoint (tables not in it are followed without snapshots) or
    ``None`` (no snapshots: gaps are only logged and counted).

    Iterate :meth:`events` for typed items (:data:`ClientItem`); the latest
    :class:`Snapshot` of each table is also kept in :attr:`snapshots`, and
    ``on_snapshot`` (if given) is called with it. Nothing that arrives ends the
    iteration: malformed messages and replies are logged, counted and skipped.
    """

    def __init__(
        self,
        publish_endpoint: str,
        snapshot_endpoint: str | Mapping[str, str] | None,
        table: str | None = "T01",
        *,
        curve: ClientCurve | None = None,
        context: zmq.Context[Any] | None = None,
        snapshot_timeout: float = 2.0,
        settle: float = 1.5,
        on_snapshot: Callable[[Snapshot], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if table is not None and isinstance(snapshot_endpoint, Mapping):
            snapshot_endpoint = snapshot_endpoint.get(table)
        if table is None and isinstance(snapshot_endpoint, str):
            raise ValueError("with table=None give the snapshot endpoints as a mapping table -> endpoint")
        self.table = table
        self.publish_endpoint = publish_endpoint
        self._endpoints: Mapping[str, str] = (
            {table: snapshot_endpoint} if table is not None and isinstance(snapshot_endpoint, str)
            else snapshot_endpoint if isinstance(snapshot_endpoint, Mapping) else {}
        )
        self.curve = curve
        self._own_context = context is None
        self.context: zmq.Context[Any] = context or zmq.Context()
        self.snapshot_timeout = snapshot_timeout
        self.settle = settle
        self.on_snapshot = on_snapshot
        self.clock = clock
        self.snapshots: dict[str, Snapshot] = {}
        self.stats = ClientStats()
        self._tables: dict[str, _TableSync] = {}
        self._ready: deque[ClientItem] = deque()
        self._unknown_seen: set[str] = set()
        self._started_at = clock()
        self._sub = self.context.socket(zmq.SUB)
        self._configure(self._sub)
        self._sub.setsockopt(zmq.RCVHWM, 100_000)
        self._sub.setsockopt_string(zmq.SUBSCRIBE, f"{table}." if table else "")
        self._sub.connect(publish_endpoint)
        if table is not None:
            self._sync_of(table)

    @property
    def snapshot(self) -> Snapshot | None:
        """The latest snapshot of the client's table (``None`` before the first)."""
        return self.snapshots.get(self.table) if self.table else None

    def _configure(self, socket: zmq.Socket[Any]) -> None:
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.RECONNECT_IVL, 100)
        socket.setsockopt(zmq.RECONNECT_IVL_MAX, 1000)
        if self.curve is not None:
            self.curve.apply(socket)

    def _sync_of(self, table: str) -> _TableSync:
        sync = self._tables.get(table)
        if sync is None:
            sync = self._tables[table] = _TableSync(table, self._endpoints.get(table))
        return sync

    # -- the loop -------------------------------------------------------------------------------

    def events(self, timeout: float | None = None) -> Iterator[ClientItem]:
        """Yield each event once, in seq order, after a :class:`Snapshot` per table.

        With ``timeout`` the iterator ends after that many seconds without anything
        to yield (so a display can refresh its countdown and iterate again); the
        client keeps its place between calls.
        """
        idle_since = self.clock()
        while True:
            while self._ready:
                idle_since = self.clock()
                yield self._ready.popleft()
            now = self.clock()
            self._request_snapshots(now)
            wait = 0.1 if timeout is None else max(0.0, min(0.1, timeout - (now - idle_since)))
            poller = zmq.Poller()
            poller.register(self._sub, zmq.POLLIN)
            for sync in self._tables.values():
                if sync.dealer is not None:
                    poller.register(sync.dealer, zmq.POLLIN)
            ready = dict(poller.poll(int(wait * 1000)))
            if self._sub in ready:
                self._drain_sub()
            for sync in list(self._tables.values()):
                if sync.dealer is not None and sync.dealer in ready:
                    self._take_snapshot(sync)
            if (not self._ready and timeout is not None
                    and self.clock() - idle_since >= timeout):
                return

    def _drain_sub(self) -> None:
        for _ in range(1000):
            try:
                frames = self._sub.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            try:
                received: _Received = decode_message(frames)
            except Exception as e:  # whoever reached the stream: skip it, never stop reading
                unknown = _unknown_event(frames)
                if unknown is None:
                    self.stats.malformed += 1
                    log.warning("skipped a malformed message on %s (topic %r): %s",
                                self.publish_endpoint, frames[0][:60] if frames else b"", e)
                    continue
                self._skip_unknown(unknown)
                received = unknown
            self._receive(received)

    def _skip_unknown(self, event: _UnknownEvent) -> None:
        self.stats.unknown_types += 1
        if event.type not in self._unknown_seen:  # once per type: it may come every second
            self._unknown_seen.add(event.type)
            log.warning("table %s: skipping events of unknown type %r (seq %d); later ones silently",
                        event.table, event.type[:60], event.seq)

    def _receive(self, event: _Received) -> None:
        sync = self._sync_of(event.table)
        if sync.first_message_at is None:
            sync.first_message_at = self.clock()
        if not sync.synced:
            sync.buffer.append(event)
            if len(sync.buffer) > BUFFER_LIMIT:
                del sync.buffer[: len(sync.buffer) - BUFFER_LIMIT]
            if sync.endpoint is None:  # no snapshot to wait for: follow from here
                sync.synced, sync.last_seq = True, event.seq - 1
                self._flush(sync)
            return
        seq = event.seq
        if seq == sync.last_seq + 1:
            sync.last_seq, sync.behind_since = seq, None
            self._yield(event)
        elif seq <= sync.last_seq:
            # An event we already have: a duplicate, or the backlog a slow consumer still
            # reads after a snapshot that went past it. Only a stream that stays behind
            # means the controller's journal was replaced (its seq starts again).
            self.stats.duplicates += 1
            now = self.clock()
            if sync.behind_since is None:
                sync.behind_since = now
            if now - sync.behind_since < REPLACED_AFTER:
                return
            log.warning("table %s: seq went back from %d to %d for %.0f s (controller journal replaced?)",
                        sync.table, sync.last_seq, seq, now - sync.behind_since)
            sync.behind_since = None
            if sync.endpoint is None:
                sync.last_seq = seq
                self._yield(event)
            else:
                self._resync(sync, event)
        else:
            self.stats.gaps += 1
            log.warning("table %s: events %d..%d lost; asking for a snapshot",
                        sync.table, sync.last_seq + 1, seq - 1)
            if sync.endpoint is None:
                sync.last_seq = seq
                self._yield(event)
            else:
                self._resync(sync, event)

    def _yield(self, event: _Received) -> None:
        if not isinstance(event, _UnknownEvent):
            self._ready.append(event)

    def _resync(self, sync: _TableSync, event: _Received) -> None:
        sync.synced = False
        sync.buffer = [event]

    def _flush(self, sync: _TableSync) -> None:
        buffered, sync.buffer = sync.buffer, []
        for event in buffered:
            if event.seq > sync.last_seq:
                self._receive(event)

    # -- snapshots ------------------------------------------------------------------------------

    def _request_snapshots(self, now: float) -> None:
        for sync in self._tables.values():
            if sync.synced or sync.endpoint is None:
                continue
            if sync.requested_at is not None:
                if now - sync.requested_at < self.snapshot_timeout:
                    continue
                if sync.dealer is not None and sync.dealer.poll(0, zmq.POLLIN):
                    continue  # the reply came while the consumer was busy: the poll takes it
                self.stats.snapshot_timeouts += 1
                log.warning("table %s: no snapshot from %s within %.1f s; asking again",
                            sync.table, sync.endpoint, self.snapshot_timeout)
                self._close_dealer(sync)
            # Ask once the subscription is live (first message seen), or after `settle`.
            live = sync.first_message_at is not None or now - self._started_at >= self.settle
            if not live:
                continue
            if sync.dealer is None:
                sync.dealer = self.context.socket(zmq.DEALER)
                self._configure(sync.dealer)
                sync.dealer.connect(sync.endpoint)
            sync.dealer.send_multipart([b"", SNAPSHOT_REQUEST])
            sync.requested_at = now

    def _take_snapshot(self, sync: _TableSync) -> None:
        assert sync.dealer is not None
        frames = sync.dealer.recv_multipart()
        sync.requested_at = None
        try:
            reply = decode_snapshot_reply(frames[-1])
        except (EventError, RecursionError) as e:
            self.stats.malformed += 1
            log.warning("table %s: unusable snapshot reply from %s: %s", sync.table, sync.endpoint, e)
            return
        item = Snapshot.of(sync.table, reply)
        self.stats.snapshots += 1
        sync.synced, sync.last_seq, sync.behind_since = True, item.seq, None
        self.snapshots[sync.table] = item
        self._ready.append(item)
        if self.on_snapshot is not None:
            self.on_snapshot(item)
        self._flush(sync)

    def _close_dealer(self, sync: _TableSync) -> None:
        if sync.dealer is not None:
            sync.dealer.close(linger=0)
            sync.dealer = None
        sync.requested_at = None

    def close(self) -> None:
        """Close the sockets (and the context if it is the client's own)."""
        for sync in self._tables.values():
            self._close_dealer(sync)
        self._sub.close(linger=0)
        if self._own_context:
            self.context.term()

    def __enter__(self) -> TableClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
