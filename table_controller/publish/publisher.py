"""The PUB socket and the snapshot server of one table (events.md, the Clone pattern)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

import msgspec
import zmq

from table_controller.event_types import Event, SnapshotReply
from table_controller.events import encode
from table_controller.publish.replay import JournalReplay, ReplayRequestError, error_reply, parse_replay_request
from table_controller.publish.security import (
    CurveConfig,
    HandshakeWatch,
    make_server,
    start_authenticator,
)
from table_controller.publish.snapshot import SnapshotState

log = logging.getLogger(__name__)


def binds_beyond_loopback(endpoint: str) -> bool:
    """True for an endpoint that listens on a network other hosts reach (``tcp://*:5556``,
    ``tcp://0.0.0.0:...``, ``tcp://10.0.0.5:...``); False for loopback, ipc, inproc and
    ``connect:`` endpoints (outgoing)."""
    if endpoint.startswith("connect:") or not endpoint.startswith("tcp://"):
        return False
    host = endpoint[len("tcp://"):].rsplit(":", 1)[0].strip("[]")
    return not (host in ("localhost", "::1") or host.startswith("127."))

#: The largest snapshot request accepted (``{"op": "snapshot"}`` is 18 bytes).
MAX_REQUEST_BYTES = 4096

DEFAULT_PUBLISH = "tcp://127.0.0.1:5556"  # loopback unless the studio names an address
DEFAULT_SNAPSHOT = "tcp://127.0.0.1:5557"
#: Messages queued per subscriber before ZeroMQ drops for that subscriber (a slow display).
DEFAULT_SNDHWM = 10_000
CONNECT_PREFIX = "connect:"


def attach(socket: zmq.Socket[Any], endpoint: str) -> str:
    """Bind ``socket`` to ``endpoint``, or connect it when written ``connect:tcp://host:port``.

    Returns the endpoint actually used (``tcp://127.0.0.1:0`` binds a free port).
    """
    if endpoint.startswith(CONNECT_PREFIX):
        target = endpoint[len(CONNECT_PREFIX):]
        socket.connect(target)
        return target
    socket.bind(endpoint)
    return socket.getsockopt_string(zmq.LAST_ENDPOINT)


class EventPublisher:
    """PUB socket + snapshot server for one table.

    The controller journals an event (which gives it its seq) and then calls
    :meth:`publish`; the publisher sends it as ``<table>.<type>`` + JSON and folds
    it into the snapshot that its ROUTER socket serves to late joiners
    (``{"op": "snapshot"}`` -> ``{"seq", "state", "round", "history", "shoe"}``).

    ``publish_endpoint`` is bound, or connected to a studio proxy's XSUB frontend
    when written ``connect:tcp://proxy:5559``. :meth:`publish` never blocks: a
    subscriber that falls ``sndhwm`` messages behind loses messages (and will
    re-snapshot on the seq gap) instead of slowing the table.

    With ``replay`` (the table's journal) the same ROUTER socket also answers
    ``{"op": "replay", "after_seq": N, "limit": M}`` with the journaled events after
    ``N`` (:mod:`table_controller.publish.replay`), under the same binding and keys.

    With ``security`` the two endpoints are CURVE servers that serve only clients
    whose public key is in ``security.authorized_clients_dir``.
    """

    def __init__(
        self,
        table: str,
        publish_endpoint: str = DEFAULT_PUBLISH,
        snapshot_endpoint: str = DEFAULT_SNAPSHOT,
        *,
        security: CurveConfig | None = None,
        context: zmq.Context[Any] | None = None,
        history: int = 100,
        sndhwm: int = DEFAULT_SNDHWM,
        clock: Callable[[], float] = time.monotonic,
        replay: JournalReplay | None = None,
    ) -> None:
        self.table = table
        self.replay = replay
        self.publish_endpoint = publish_endpoint
        self.snapshot_endpoint = snapshot_endpoint
        self.security = security
        self._own_context = context is None
        self.context: zmq.Context[Any] = context or zmq.Context()
        self._state = SnapshotState(history)
        self._lock = threading.Lock()
        self._pub: zmq.Socket[Any] | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._auth: Any = None
        self.handshakes = HandshakeWatch()
        self.sndhwm = sndhwm
        self.bound_publish: str | None = None
        self.bound_snapshot: str | None = None
        self.published = 0
        self.snapshots_served = 0
        self.replays_served = 0
        self.restarts = 0
        #: Called (from the server thread) when the snapshot server had to be reopened.
        self.on_trouble: Callable[[str], None] | None = None
        self.clock = clock
        self._last_sent = clock()
        self._reply_cache: tuple[int, str] | None = None

    # -- life cycle ---------------------------------------------------------------------------

    def prime(self, events: Iterable[Event]) -> None:
        """Rebuild the snapshot (state, round in progress, last results, seq) from journaled events."""
        with self._lock:
            for event in events:
                self._state.apply(event)

    def start(self) -> EventPublisher:
        """Bind (or connect) the PUB socket and start the snapshot server thread."""
        if self._pub is not None:
            return self
        keys = self.security.load() if self.security else None
        if self.security is not None:
            self._auth = start_authenticator(self.context, self.security)
        pub = self.context.socket(zmq.PUB)
        pub.setsockopt(zmq.LINGER, 0)
        pub.setsockopt(zmq.SNDHWM, self.sndhwm)
        if keys:
            make_server(pub, *keys)
            self.handshakes.watch(pub, "publish")
        try:
            self.bound_publish = attach(pub, self.publish_endpoint)
        except zmq.ZMQError as e:
            pub.close(linger=0)
            self._stop_auth()
            raise OSError(f"cannot open the event publisher at {self.publish_endpoint}: {e}") from e
        self._pub = pub
        self._thread = threading.Thread(target=self._serve, args=(keys,), daemon=True,
                                        name=f"snapshot-{self.table}")
        self._thread.start()
        self._ready.wait(timeout=10)
        if self._error is not None:
            self.close()
            raise OSError(f"cannot open the snapshot endpoint at {self.snapshot_endpoint}: "
                          f"{self._error}") from self._error
        return self

    def close(self) -> None:
        """Stop the snapshot server, close the sockets (and the context if it is ours)."""
        self._stop.set()
        server_stuck = False
        if self._thread is not None:
            if self._thread.is_alive():  # a stop can come between its creation and its start
                self._thread.join(timeout=5)
            # The thread closes its ROUTER itself; while it lives, term() would wait for ever.
            server_stuck = self._thread.is_alive()
            if server_stuck:
                log.error("snapshot server of table %s did not stop within 5 s; its context "
                          "is left open", self.table)
            self._thread = None
        with self._lock:
            if self._pub is not None:
                if self.security is not None:
                    self.handshakes.stop([self._pub])
                self._pub.close(linger=0)
                self._pub = None
        self._stop_auth()
        if self.replay is not None and not server_stuck:
            self.replay.close()
        if self._own_context and not server_stuck and not self.context.closed:
            self.context.term()

    def reload_authorized_clients(self) -> None:
        """Re-read the authorised client keys folder (a display added or removed; no restart)."""
        if self.security is None or self._auth is None:
            return
        self.security.load()  # clear errors for a malformed new key file
        self._auth.configure_curve(domain="*", location=str(self.security.authorized_clients_dir))

    def _stop_auth(self) -> None:
        if self._auth is not None:
            self._auth.stop()
            self._auth = None

    def __enter__(self) -> EventPublisher:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- publishing -----------------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """The seq of the latest event published or primed (0 before any)."""
        return self._state.seq

    def publish(self, event: Event) -> None:
        """Send one journaled event and fold it into the snapshot. Thread-safe, never blocks.

        Raises ``ValueError`` for an event of another table and when its seq does not
        follow the last one (the journal gives every event the next seq; the journal
        also checked it against its type).
        """
        if event.table != self.table:
            raise ValueError(f"event of table {event.table!r} given to the publisher of {self.table!r}")
        frames = encode(event)
        with self._lock:
            if self._pub is None:
                raise RuntimeError(f"the event publisher of table {self.table} is not started")
            if event.seq <= self._state.seq:
                raise ValueError(f"event seq {event.seq} does not follow the last published "
                                 f"seq {self._state.seq} of table {self.table}")
            self._state.apply(event)
            try:
                self._pub.send_multipart(frames, flags=zmq.NOBLOCK, copy=True)
            except zmq.Again:  # only a connect:-mode PUB whose proxy queue is full
                log.warning("event seq %s of table %s dropped: the proxy is not keeping up",
                            event.seq, self.table)
            self.published += 1
            self._last_sent = self.clock()

    def idle_seconds(self) -> float:
        """Seconds since the last publish (or start): the controller sends a heartbeat at >= 1."""
        return self.clock() - self._last_sent

    def snapshot(self) -> SnapshotReply:
        """The snapshot as the endpoint would answer it now."""
        with self._lock:
            return self._state.reply()

    # -- snapshot server --------------------------------------------------------------------------

    def _serve(self, keys: tuple[bytes, bytes] | None) -> None:
        """Serve snapshots until closed; a socket that fails anyway is replaced on the same
        endpoint and ``on_trouble`` (the table's alert) is told."""
        endpoint = self.snapshot_endpoint
        started = False
        while not self._stop.is_set():
            router = self._snapshot_socket(keys, endpoint)
            if router is None:
                if not started:
                    return  # start() raises the bind error
                # The failed socket's port is released by ZeroMQ's I/O thread a moment after
                # the close: try again until it is free, never give the snapshots up.
                log.warning("snapshot server of table %s: %s is not free yet, retrying", self.table, endpoint)
                self._stop.wait(0.2)
                continue
            started = True
            endpoint = self.bound_snapshot or endpoint  # a restart keeps the port it had
            failure: Exception | None = None
            try:
                self._serve_socket(router)
            except Exception as e:  # supervised: log, reopen, say so
                log.exception("snapshot server of table %s failed: reopening", self.table)
                failure = e
            finally:
                if keys:
                    self.handshakes.stop([router])
                router.close(linger=0)  # before the pause: the port must be free to bind again
            if failure is not None:
                self.restarts += 1
                if self.on_trouble is not None:
                    self.on_trouble(
                        f"the snapshot server failed ({type(failure).__name__}: {failure}) and was reopened"
                    )
                self._stop.wait(0.5)

    def _snapshot_socket(self, keys: tuple[bytes, bytes] | None, endpoint: str) -> Any:
        router = self.context.socket(zmq.ROUTER)
        router.setsockopt(zmq.LINGER, 0)
        router.setsockopt(zmq.SNDHWM, 1000)
        router.setsockopt(zmq.ROUTER_MANDATORY, 0)
        # A snapshot request is a few bytes: a bigger message is dropped by ZeroMQ itself
        # (the peer is disconnected) before it is ever read into memory.
        router.setsockopt(zmq.MAXMSGSIZE, MAX_REQUEST_BYTES)
        try:
            if keys:
                make_server(router, *keys)
                self.handshakes.watch(router, "snapshot")
            self.bound_snapshot = attach(router, endpoint)
        except zmq.ZMQError as e:
            if not self._ready.is_set():
                self._error = e
            router.close(linger=0)
            self._ready.set()
            return None
        self._ready.set()
        return router

    def _serve_socket(self, router: zmq.Socket[Any]) -> None:
        poller = zmq.Poller()
        poller.register(router, zmq.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(100):
                continue
            try:  # never a blocking recv: the thread must see _stop within a poll
                frames = router.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                continue
            try:
                self._answer(router, frames)
            except Exception:  # one request never stops the server: log it, serve on
                log.exception("snapshot server of table %s: a request failed", self.table)

    def _snapshot_json(self) -> str:
        # Copy references under the lock (microseconds), serialise outside it: a burst of
        # snapshot requests never holds up publish(). Published events are not mutated.
        with self._lock:
            seq = self._state.seq
            if self._reply_cache is not None and self._reply_cache[0] == seq:
                return self._reply_cache[1]
            reply = self._state.reply()
        text: str = msgspec.json.encode(reply).decode("utf-8")
        self._reply_cache = (seq, text)
        return text

    def _replay_json(self, request: dict[str, object]) -> str:
        if self.replay is None:
            return error_reply(f"table {self.table} does not replay its journal here", "no-replay")
        try:
            after_seq, limit = parse_replay_request(request)
        except ReplayRequestError as e:
            return error_reply(str(e), e.code)
        self.replays_served += 1
        return self.replay.reply(after_seq, limit)

    def _answer(self, router: zmq.Socket[Any], frames: list[bytes]) -> None:
        # ROUTER envelope: [identity, (b"" from REQ clients), request]; echo it back.
        if len(frames) < 2:
            return
        envelope, body = frames[:-1], frames[-1]
        try:
            request = json.loads(body)
            op = request.get("op") if isinstance(request, dict) else None
        except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: [[[[...]]]]
            op = None
        if op == "snapshot":
            reply = self._snapshot_json()
            self.snapshots_served += 1
        elif op == "replay":
            reply = self._replay_json(request)
        else:
            reply = json.dumps({"error": 'unknown request; send {"op": "snapshot"} or '
                                         '{"op": "replay", "after_seq": N, "limit": M}'})
        try:
            router.send_multipart([*envelope, reply.encode()], flags=zmq.NOBLOCK)
        except zmq.Again:
            log.warning("snapshot reply to a slow client of table %s dropped", self.table)
