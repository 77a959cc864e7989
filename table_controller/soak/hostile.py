"""Hostile clients: random and malformed messages at every endpoint of a soak's studio.

``soak --hostile N`` runs N of them while the tables deal. Each sends, a few
times a second per table, garbage to every table's snapshot endpoint (ROUTER:
as a DEALER or a REQ) and control endpoint (REP: as a REQ, a fresh socket per
message, since a REQ that got no reply cannot send again), and raw bytes to
the studio proxy's frontend and backend (plain TCP connections, half or whole
ZeroMQ handshakes) plus garbage subscriptions at the backend (SUB and XSUB
sockets). What is sent: random bytes; JSON of random shape, deeply nested
(up to a few KiB) or with huge strings; multipart messages of 2-5 frames;
oversized messages (1 MB, and one byte over the endpoint's limit: ZeroMQ must
drop them unread, ``ZMQ_MAXMSGSIZE``); valid-looking requests with wrong types,
wrong tokens and unknown ops; ``{"op": "void"}`` without a token.

Never sent: a valid supervisor token (the clients do not know the soak's),
the test rig's own unauthenticated ops (``press``, ``lay``, ``clear``,
``dark``: a soak table is a rig, ``rig.control_ops``, and those would deal for
real), and messages published through the proxy (it forwards whatever a
publisher sends, and a well-formed fake event would be taken for a real one).

The clients count what they sent and what was answered; a request that a
controller which was up (alive, not killed in the last moments, and heard from
since its last restart) left without a reply for ``REPLY_TIMEOUT`` s is
counted as unanswered; an endpoint that answered none of them for more than
``SILENCE_LIMIT`` s, or a supervisor op answered ``"ok": true``, fails the
check :data:`HOSTILE_CHECK`.
"""

from __future__ import annotations

import json
import logging
import random
import re
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq

from table_controller.control import MAX_REQUEST_BYTES as CONTROL_MAX_BYTES
from table_controller.publish.publisher import MAX_REQUEST_BYTES as SNAPSHOT_MAX_BYTES
from table_controller.soak.checker import CheckResult

log = logging.getLogger(__name__)

HOSTILE_CHECK = "hostile_clients_refused"
#: Messages per second each client sends to each table's control and snapshot endpoint,
#: and to the proxy (its frontend and backend together).
CONTROL_PER_SECOND = 2.0
SNAPSHOT_PER_SECOND = 2.0
PROXY_PER_SECOND = 2.0
#: A request that expects a reply and has none this long is unanswered.
REPLY_TIMEOUT = 3.0
#: An endpoint of a controller that was up and answered no hostile request this long fails
#: the check.
SILENCE_LIMIT = 10.0
#: A controller killed this recently is not up (its restart takes a few seconds) unless it
#: has answered a hostile request since; a kill within ``KILL_MARGIN`` s before a request
#: was sent, or while it waited, excuses its loss.
KILL_GRACE = 30.0
KILL_MARGIN = 1.0
#: Sockets (and raw connections) one client holds at once; more sends wait.
MAX_PENDING = 64
OVERSIZED_BYTES = 1 << 20
#: The rig's unauthenticated ops: never sent (they would press buttons and lay cards).
RIG_OPS = frozenset({"press", "lay", "clear", "dark"})
SUPERVISOR_OPS = ("resume", "void", "new-shoe")
#: What a controller logs when one of its server threads met a request it could not handle
#: (control.py, publish/publisher.py): the servers survive it, but it is a finding.
SERVER_TROUBLE = re.compile(
    r"control socket failed|control request failed|control socket: a request could not be"
    r"|snapshot server of table \S+ (?:failed|stopped)|snapshot server of table \S+: a request"
)
#: ZMTP 3.0: signature, version, mechanism, as-server, filler (64 bytes).
ZMTP_SIGNATURE = b"\xff" + b"\x00" * 8 + b"\x7f"


def _greeting(version: bytes = b"\x03\x00", mechanism: bytes = b"NULL") -> bytes:
    return ZMTP_SIGNATURE + version + mechanism.ljust(20, b"\x00")[:20] + b"\x00" + b"\x00" * 31


def _frame(body: bytes, *, more: bool = False, command: bool = False) -> bytes:
    flags = (0x01 if more else 0) | (0x04 if command else 0)
    if len(body) < 256:
        return bytes([flags]) + bytes([len(body)]) + body
    return bytes([flags | 0x02]) + struct.pack(">Q", len(body)) + body


def _ready(socket_type: bytes) -> bytes:
    name = b"Socket-Type"
    body = b"\x05READY" + bytes([len(name)]) + name + struct.pack(">I", len(socket_type)) + socket_type
    return _frame(body, command=True)


@dataclass(frozen=True)
class Message:
    """One hostile message: its frames, a label for reports, and what its server must do."""

    label: str
    frames: tuple[bytes, ...]
    expect_reply: bool  # small enough to be read: the server must answer it
    may_succeed: bool = False  # a plain status (or snapshot) request: "ok": true is fine
    oversized: bool = False  # a frame over the endpoint's limit: must be dropped unread

    def describe(self, limit: int = 160) -> str:
        text = repr(self.frames[0][:limit]) if len(self.frames) == 1 else (
            f"{len(self.frames)} frames " + ", ".join(repr(f[:40]) for f in self.frames)
        )
        size = sum(len(f) for f in self.frames)
        return f"{self.label} ({size} bytes): {text[: limit + 60]}"


# ---------------------------------------------------------------------------------- payloads
class Payloads:
    """Seeded generators of hostile bodies for the control and snapshot endpoints."""

    WRONG_TYPES: tuple[dict[str, Any], ...] = (
        {"op": "resume", "token": 123, "card": {"x": 1}},
        {"op": "void"},
        {"op": "resume"},
        {"op": "new-shoe"},
        {"op": "void", "token": None},
        {"op": "void", "token": ["token"]},
        {"op": "resume", "token": {"token": "x"}, "card": [1, 2]},
        {"op": "new-shoe", "token": True},
        {"op": "resume", "token": 1.5, "card": None},
        {"op": "void", "token": 0, "by": {"a": 1}, "reason": [1]},
        {"op": ["resume"]},
        {"op": {"op": "void"}},
        {"op": None},
        {"op": 123},
        {"op": True},
        {"OP": "void"},
        {"token": "x"},
        {"op": "status", "token": 123, "x": [None, {}]},
        {"op": "snapshot"},
        {"op": "snapshot", "since": -1},
    )
    UNKNOWN_OPS = ("VOID", "Resume", "void ", " status", "new_shoe", "newshoe", "snapshot", "",
                   "status\u0000", "kill", "shutdown", "reset", "eval", "__class__", "void\n",
                   "résumé", "\u202eesume", "PRESS", "Lay", "CLEAR", "dark!")
    RAW = (
        b"", b"null", b"[]", b"{}", b"0", b'"op"', b'{"op"}', b'{"op":"void"', b'{"op":NaN}',
        b'{"op":Infinity,"token":-Infinity}', b'{"op":"status","op":"void"}', b"\x00" * 64,
        b'{"op":"void","token":"\\ud800"}', b'{"op":"resume","token":"\\udfff\\ud800","card":"9H"}',
        b'{"op":"\xff\xfe"}', b'{"op":"status"}\x00', b'{"op":"status"} {"op":"void"}',
        b"\xef\xbb\xbf" + b'{"op":"void"}', '{"op":"void"}'.encode("utf-16"),
        '{"op":"new-shoe"}'.encode("utf-32"), b'{"op":1' + b"0" * 5000 + b"}",
        b'{"op":"void","token":1e999999}', b'{"op":-0.0e-99999}', b"\\u0000",
        b'{"op":"status","x":"' + b"\\" * 2001 + b'"}',
    )

    def __init__(self, rng: random.Random, token_length: int = 32) -> None:
        self.rng = rng
        self.token_length = token_length

    # -- pieces -------------------------------------------------------------------------------
    def text(self, longest: int = 40) -> str:
        r = self.rng
        n = r.randint(0, longest)
        pick = r.random()
        if pick < 0.4:
            return "".join(chr(r.randint(0x20, 0x7E)) for _ in range(n))
        if pick < 0.7:
            return "".join(chr(r.randint(0, 0x2FF)) for _ in range(n))
        if pick < 0.85:  # any code point, lone surrogates included
            return "".join(chr(r.randint(0, 0x10FFFF)) for _ in range(n))
        return r.choice(("op", "token", "card", "by", "reason", "button", "slot", "code", "on"))

    def wrong_token(self) -> Any:
        r = self.rng
        pick = r.random()
        if pick < 0.4:  # the soak's own format (32 hex digits), but not its token
            return f"{r.getrandbits(4 * self.token_length):0{self.token_length}x}"
        if pick < 0.55:
            return f"{r.getrandbits(256):064x}"  # looks like a stored SHA-256 digest
        if pick < 0.65:
            return ""
        if pick < 0.75:
            return "a" * r.choice((255, 256, 257, 4000))
        if pick < 0.85:
            return "scrypt$16384$8$1$" + "00" * 16 + "$" + "00" * 32
        return self.text(80)

    def value(self, budget: list[int], depth: int = 0) -> Any:
        r = self.rng
        budget[0] -= 1
        if depth >= 8 or budget[0] <= 0 or r.random() < 0.35:
            pick = r.random()
            if pick < 0.15:
                return None
            if pick < 0.25:
                return r.random() < 0.5
            if pick < 0.45:
                return r.choice((0, -1, 1, 2**31, 2**63, 2**64 + 1, -(2**70), r.randint(-999, 999)))
            if pick < 0.55:
                return r.choice((0.5, -1e308, 1e-320, float("inf"), float("nan"), r.random()))
            return self.text()
        if r.random() < 0.5:
            return [self.value(budget, depth + 1) for _ in range(r.randint(0, 6))]
        return {self.text(12): self.value(budget, depth + 1) for _ in range(r.randint(0, 6))}

    def random_shape(self) -> Any:
        """JSON of random shape; an object with a random or supervisor "op" half the time."""
        r = self.rng
        body = self.value([r.randint(1, 60)])
        if r.random() < 0.5:
            request = body if isinstance(body, dict) else {"x": body}
            request["op"] = r.choice((*SUPERVISOR_OPS, "status", "snapshot", self.text(12)))
            if request["op"] in SUPERVISOR_OPS and r.random() < 0.7:
                request["token"] = self.wrong_token()
            return request
        return body

    def encode(self, value: Any) -> bytes:
        r = self.rng
        text = json.dumps(value, ensure_ascii=r.random() < 0.5, allow_nan=True)
        return text.encode("utf-8", "surrogatepass")  # a lone surrogate: invalid UTF-8

    def nested(self, limit: int) -> bytes:
        """Deep nesting that still fits in ``limit`` bytes (the endpoint must read it)."""
        r = self.rng
        kind = r.randrange(5)
        if kind == 0:
            d = r.randint(10, limit // 2 - 1)
            return b"[" * d + b"]" * d
        if kind == 1:
            d = r.randint(10, (limit - 2) // 6)
            return b'{"a":' * d + b"1" + b"}" * d
        if kind == 2:
            d = r.randint(10, (limit - 40) // 2)
            return b'{"op":"status","x":' + b"[" * d + b"]" * d + b"}"
        if kind == 3:
            d = r.randint(10, (limit - 60) // 2)
            return b'{"op":"void","token":' + b"[" * d + b"]" * d + b"}"
        d = r.randint(10, limit - 1)
        return b"[" * d  # never closed

    def huge_string(self, limit: int) -> bytes:
        r = self.rng
        n = r.randint(limit // 4, limit - 64)
        field_name = r.choice(("op", "token", "card", "by", "reason"))
        request: dict[str, Any] = {"op": r.choice(SUPERVISOR_OPS)}
        request[field_name] = r.choice(("A", "\u00e9", "\\")) * (n // 2)
        return json.dumps(request).encode()[:limit]

    def valid_looking(self) -> Any:
        r = self.rng
        pick = r.random()
        if pick < 0.4:
            return dict(r.choice(self.WRONG_TYPES))
        if pick < 0.75:  # a well-formed supervisor request with a wrong token
            request: dict[str, Any] = {"op": r.choice(SUPERVISOR_OPS), "token": self.wrong_token()}
            if r.random() < 0.5:
                request["by"] = r.choice(("hostile", "supervisor", "floor", self.text(20)))
            if request["op"] == "resume" and r.random() < 0.6:
                request["card"] = r.choice(("9H", "AS", "10D", "XX", self.text(4)))
            if request["op"] == "void" and r.random() < 0.6:
                request["reason"] = self.text(30)
            return request
        request = {"op": r.choice(self.UNKNOWN_OPS)}
        if r.random() < 0.5:
            request["token"] = self.wrong_token()
        return request

    def oversized(self, limit: int) -> bytes:
        r = self.rng
        size = r.choice((OVERSIZED_BYTES, OVERSIZED_BYTES, limit + 1, r.randint(limit + 2, 4 * limit)))
        pick = r.randrange(3)
        if pick == 0:
            return r.randbytes(size)
        if pick == 1:
            head = b'{"op":"void","token":"'
            return head + b"a" * (size - len(head) - 2) + b'"}'
        return b"[" * (size // 2) + b"]" * (size - size // 2)

    def body(self, limit: int) -> bytes:
        """One frame that fits in ``limit`` bytes."""
        r = self.rng
        pick = r.random()
        if pick < 0.2:
            data = r.randbytes(r.randint(1, min(limit, 2000)))
            return (b"{" + data[1:]) if r.random() < 0.3 else data
        if pick < 0.4:
            return self.encode(self.random_shape())[:limit]
        if pick < 0.52:
            return self.nested(limit)
        if pick < 0.6:
            return self.huge_string(limit)
        if pick < 0.88:
            return self.encode(self.valid_looking())[:limit]
        return r.choice(self.RAW)[:limit]

    def message(self, limit: int) -> Message:
        """A message for an endpoint that reads frames of up to ``limit`` bytes."""
        r = self.rng
        for _ in range(20):
            pick = r.random()
            if pick < 0.04:
                frames: tuple[bytes, ...] = (self.oversized(limit),)
                label = "oversized"
            elif pick < 0.14:
                n = r.randint(2, 5)
                frames = tuple(
                    b"" if r.random() < 0.15 else self.body(limit) for _ in range(n)
                )
                label = "multipart"
            elif pick < 0.18:
                frames = (b'{"op":"void"}',)
                label = "void-without-token"
            else:
                frames = (self.body(limit),)
                label = "single"
            decoded = _decode(frames)
            if isinstance(decoded, dict) and _hashable(decoded.get("op")) in RIG_OPS:
                continue  # the rig's own hands: never sent
            oversized = any(len(f) > limit for f in frames)
            return Message(
                label, frames, expect_reply=not oversized,
                may_succeed=isinstance(decoded, dict) and decoded.get("op") in ("status", "snapshot"),
                oversized=oversized,
            )
        return Message("void-without-token", (b'{"op":"void"}',), expect_reply=True)


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str) else None


def _decode(frames: Sequence[bytes]) -> Any:
    """A single frame decoded as the servers would (None if they could not)."""
    if len(frames) != 1:
        return None
    try:
        return json.loads(frames[0])
    except (ValueError, RecursionError, TypeError):
        return None


# ----------------------------------------------------------------------------- bookkeeping
@dataclass
class HostileTarget:
    """One table as a hostile client sees it: endpoints, and whether its controller is up."""

    table: str
    snapshot: str
    control: str
    kills: list[float]  # the soak's kill (and death) times of this table, time.time(), live
    alive: Callable[[], bool]

    def last_kill(self, before: float | None = None) -> float | None:
        times = [k for k in list(self.kills) if before is None or k <= before]
        return max(times) if times else None

    def killed_between(self, start: float, end: float) -> bool:
        return any(start <= k <= end for k in list(self.kills))


@dataclass
class HostileStats:
    """What every hostile client sent and got (thread-safe)."""

    started: float = field(default_factory=time.time)
    sent: Counter[str] = field(default_factory=Counter)
    answers: Counter[str] = field(default_factory=Counter)
    unanswered_while_up: Counter[str] = field(default_factory=Counter)
    oversized: int = 0
    internal_errors: int = 0
    skipped: int = 0  # sends left out while a client held MAX_PENDING sockets
    #: Malformed messages the soak's subscribers skipped: raw bytes at the proxy's frontend
    #: are read as a ZMTP/1.0 peer's messages and forwarded to every subscriber.
    subscribers_skipped: int = 0
    problems: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # unanswered requests, internal errors
    #: (table, endpoint) -> time of the last reply.
    last_answer: dict[tuple[str, str], float] = field(default_factory=dict)
    #: (table, endpoint) -> (the table's last kill then, or None; the endpoint's first reply
    #: after that kill). The snapshot server answers before the control server serves (a
    #: restart restores the table in between), so each endpoint counts for itself.
    first_heard: dict[tuple[str, str], tuple[float | None, float]] = field(default_factory=dict)
    _silent: set[tuple[str, str]] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count_sent(self, endpoint: str, message: Message | None = None) -> None:
        with self.lock:
            self.sent[endpoint] += 1
            if message is not None and message.oversized:
                self.oversized += 1

    def answered(self, target: HostileTarget, endpoint: str, at: float) -> None:
        kill = target.last_kill(at)
        with self.lock:
            self.answers[endpoint] += 1
            self.last_answer[(target.table, endpoint)] = at
            self._silent.discard((target.table, endpoint))
            # A reply within KILL_MARGIN of a kill may still come from the killed process.
            if kill is None or at > kill + KILL_MARGIN:
                first = self.first_heard.get((target.table, endpoint))
                if first is None or first[0] != kill:
                    self.first_heard[(target.table, endpoint)] = (kill, at)

    def heard_since_kill(self, target: HostileTarget, endpoint: str, kill: float,
                         before: float) -> bool:
        """The restarted controller's ``endpoint`` answered a hostile request after ``kill``,
        before ``before``."""
        with self.lock:
            first = self.first_heard.get((target.table, endpoint))
        return first is not None and first[0] == kill and first[1] <= before

    def problem(self, text: str) -> None:
        with self.lock:
            if len(self.problems) < 40:
                self.problems.append(text)
        log.error("hostile: %s", text)

    def finding(self, text: str) -> None:
        with self.lock:
            if len(self.findings) < 40:
                self.findings.append(text)
        log.warning("hostile: %s", text)

    def unanswered(self, target: HostileTarget, endpoint: str, message: Message,
                   sent: float, now: float) -> None:
        """A request a controller that was up left without a reply."""
        key = (target.table, endpoint)
        with self.lock:
            self.unanswered_while_up[endpoint] += 1
            since = max(self.last_answer.get(key, self.started), target.last_kill(now) or 0.0,
                        self.started)
            silent = now - since
            report = silent > SILENCE_LIMIT and key not in self._silent
            if report:
                self._silent.add(key)
        self.finding(f"{target.table} {endpoint}: no reply in {REPLY_TIMEOUT:.0f} s to "
                     f"{message.describe()}")
        if report:
            self.problem(
                f"{target.table} {endpoint}: no reply to any hostile request for {silent:.1f} s "
                f"while the controller was up; the last one: {message.describe()}"
            )

    def counts(self, clients: int) -> dict[str, int]:
        with self.lock:
            return {
                "hostile_clients": clients,
                "hostile_messages": sum(self.sent.values()),
                "hostile_control_messages": self.sent["control"],
                "hostile_snapshot_messages": self.sent["snapshot"],
                "hostile_proxy_messages": self.sent["proxy-frontend"] + self.sent["proxy-backend"],
                "hostile_oversized": self.oversized,
                "hostile_control_answers": self.answers["control"],
                "hostile_control_unanswered_while_up": self.unanswered_while_up["control"],
                "hostile_snapshot_answers": self.answers["snapshot"],
                "hostile_snapshot_unanswered_while_up": self.unanswered_while_up["snapshot"],
                "hostile_internal_errors": self.internal_errors,
                "subscribers_skipped_malformed": self.subscribers_skipped,
            }


@dataclass
class _Pending:
    sock: Any  # a zmq socket, or a raw socket.socket (proxy)
    target: HostileTarget | None
    endpoint: str
    message: Message | None
    sent: float  # time.time()
    until: float  # time.monotonic(): give up (or, for proxy sockets, close) then
    alive_at_send: bool = True
    raw: bool = False


# --------------------------------------------------------------------------------- a client
class HostileClient:
    """One hostile client: its own thread, sockets in its own ZeroMQ context."""

    def __init__(
        self,
        number: int,
        targets: Sequence[HostileTarget],
        frontend: str,
        backend: str,
        context: zmq.Context[Any],
        stats: HostileStats,
        seed: int,
    ) -> None:
        self.name = f"hostile{number}"
        self.targets = list(targets)
        self.frontend = frontend
        self.backend = backend
        self.context = context
        self.stats = stats
        self.rng = random.Random(seed)
        self.payloads = Payloads(self.rng)
        self._pending: list[_Pending] = []
        self._poller = zmq.Poller()
        self.error: str | None = None
        self._thread = threading.Thread(target=self._run_safely, name=self.name, daemon=True)
        self._stop = threading.Event()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    # -- the loop -----------------------------------------------------------------------------
    def _run_safely(self) -> None:
        try:
            self._run()
        except Exception as e:  # the soak reports it; it must not pass silently
            log.exception("hostile client %s stopped", self.name)
            self.error = f"{type(e).__name__}: {e}"
        finally:
            for p in self._pending:
                self._close(p)
            self._pending.clear()

    def _run(self) -> None:
        r = self.rng
        now = time.monotonic()
        schedule: list[list[Any]] = []  # [next time, rate, action]
        for t in self.targets:
            schedule.append([now + r.uniform(0, 1 / CONTROL_PER_SECOND), CONTROL_PER_SECOND,
                             lambda t=t: self._send_control(t)])
            schedule.append([now + r.uniform(0, 1 / SNAPSHOT_PER_SECOND), SNAPSHOT_PER_SECOND,
                             lambda t=t: self._send_snapshot(t)])
        schedule.append([now + r.uniform(0, 1 / PROXY_PER_SECOND), PROXY_PER_SECOND,
                         self._send_proxy])
        while not self._stop.is_set():
            now = time.monotonic()
            for item in schedule:
                if item[0] <= now:
                    item[0] = max(item[0] + r.expovariate(item[1]), now - 1.0)
                    if len(self._pending) >= MAX_PENDING:
                        with self.stats.lock:
                            self.stats.skipped += 1
                        continue
                    item[2]()
            wait = min(item[0] for item in schedule) - time.monotonic()
            self._poll(min(0.1, max(0.0, wait)))
            self._expire()

    def _poll(self, seconds: float) -> None:
        zmq_pending = [p for p in self._pending if not p.raw]
        if not zmq_pending:
            time.sleep(seconds)
            return
        ready = dict(self._poller.poll(int(seconds * 1000)))
        if not ready:
            return
        at = time.time()
        for p in zmq_pending:
            if p.sock in ready:
                self._take_reply(p, at)

    def _take_reply(self, p: _Pending, at: float) -> None:
        try:
            frames = p.sock.recv_multipart(zmq.NOBLOCK)
        except zmq.ZMQError:
            return
        if p.target is None:  # a garbage subscription that matched events: drain them
            for _ in range(1000):
                try:
                    p.sock.recv_multipart(zmq.NOBLOCK)
                except zmq.ZMQError:
                    break
            return
        assert p.message is not None
        self.stats.answered(p.target, p.endpoint, at)
        if p.message.oversized:
            self.stats.problem(f"{p.target.table} {p.endpoint}: an oversized message was read "
                               f"and answered: {p.message.describe()}")
        if p.endpoint == "control":
            self._judge_control_reply(p, frames)
        self._done(p)

    def _judge_control_reply(self, p: _Pending, frames: list[bytes]) -> None:
        assert p.target is not None and p.message is not None
        try:
            reply = json.loads(frames[-1])
        except ValueError:
            self.stats.problem(f"{p.target.table} control: a reply that is not JSON "
                               f"({frames[-1][:80]!r}) to {p.message.describe()}")
            return
        if not isinstance(reply, dict):
            self.stats.problem(f"{p.target.table} control: a reply that is not an object "
                               f"({frames[-1][:80]!r}) to {p.message.describe()}")
            return
        # Only a status answer ("state": ...) may say ok: a supervisor op answered ok (its
        # "events") would be a request carried out without the token.
        if reply.get("ok") is True and ("state" not in reply or "events" in reply):
            self.stats.problem(f"{p.target.table} control: a hostile request was accepted "
                               f"({frames[-1][:120]!r}): {p.message.describe()}")
        error = reply.get("error")
        if isinstance(error, str) and error.startswith("internal error"):
            with self.stats.lock:
                self.stats.internal_errors += 1
            self.stats.finding(f"{p.target.table} control: {error[:120]!r} for "
                               f"{p.message.describe()}")

    def _expire(self) -> None:
        now = time.monotonic()
        for p in [p for p in self._pending if p.until <= now]:
            if p.message is not None and p.message.expect_reply and p.target is not None:
                wall = time.time()
                if self._was_up(p, wall):
                    self.stats.unanswered(p.target, p.endpoint, p.message, p.sent, wall)
            self._done(p)

    def _was_up(self, p: _Pending, now: float) -> bool:
        t = p.target
        assert t is not None
        if not (p.alive_at_send and t.alive()):
            return False
        if t.killed_between(p.sent - KILL_MARGIN, now):
            return False
        last_kill = t.last_kill(p.sent)
        if last_kill is None or last_kill < p.sent - KILL_GRACE:
            return True
        return self.stats.heard_since_kill(t, p.endpoint, last_kill, p.sent)

    # -- pending sockets ----------------------------------------------------------------------
    def _add(self, p: _Pending) -> None:
        self._pending.append(p)
        if not p.raw:
            self._poller.register(p.sock, zmq.POLLIN)

    def _done(self, p: _Pending) -> None:
        if p in self._pending:
            self._pending.remove(p)
        self._close(p)

    def _close(self, p: _Pending) -> None:
        try:
            if p.raw:
                p.sock.close()
            else:
                try:
                    self._poller.unregister(p.sock)
                except KeyError:
                    pass
                p.sock.close(linger=0)
        except Exception:  # closing a hostile socket never stops the client
            log.debug("hostile: closing a socket failed", exc_info=True)

    def _zmq_socket(self, kind: int, endpoint: str) -> Any:
        s = self.context.socket(kind)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.RCVTIMEO, int(REPLY_TIMEOUT * 1000))
        s.setsockopt(zmq.SNDTIMEO, 0)
        s.connect(endpoint)
        return s

    def _send_zmq(self, kind: int, target: HostileTarget, endpoint: str, address: str,
                  message: Message, frames: Sequence[bytes], hold: float | None = None) -> None:
        s = self._zmq_socket(kind, address)
        alive = target.alive()
        try:
            s.send_multipart(list(frames), flags=zmq.NOBLOCK, copy=True)
        except zmq.ZMQError:  # no peer yet (a REQ or DEALER before its connection is up)
            s.close(linger=0)
            return
        self.stats.count_sent(endpoint, message)
        until = time.monotonic() + (hold if hold is not None else REPLY_TIMEOUT)
        self._add(_Pending(s, target, endpoint, message, time.time(), until, alive))

    def _send_control(self, target: HostileTarget) -> None:
        """A REQ (fresh each time), sometimes a DEALER with or without the empty delimiter."""
        message = self.payloads.message(CONTROL_MAX_BYTES)
        pick = self.rng.random()
        if pick < 0.85:
            self._send_zmq(zmq.REQ, target, "control", target.control, message, message.frames)
        elif pick < 0.95:
            self._send_zmq(zmq.DEALER, target, "control", target.control, message,
                           (b"", *message.frames))
        else:
            # No delimiter: the REP cannot route a reply, and drops the request.
            dropped = Message("dealer-without-delimiter", message.frames, expect_reply=False,
                              oversized=message.oversized)
            self._send_zmq(zmq.DEALER, target, "control", target.control, dropped, message.frames,
                           hold=0.5)

    def _send_snapshot(self, target: HostileTarget) -> None:
        """A DEALER or a REQ (fresh each time): ROUTER echoes any envelope back."""
        message = self.payloads.message(SNAPSHOT_MAX_BYTES)
        if self.rng.random() < 0.08:
            message = Message("snapshot", (b'{"op":"snapshot"}',), expect_reply=True,
                              may_succeed=True)
        kind = zmq.DEALER if self.rng.random() < 0.6 else zmq.REQ
        hold = 0.5 if message.oversized else None
        self._send_zmq(kind, target, "snapshot", target.snapshot, message, message.frames, hold)

    # -- the proxy ------------------------------------------------------------------------------
    def _send_proxy(self) -> None:
        r = self.rng
        pick = r.random()
        if pick < 0.35:
            self._raw(self.frontend, "proxy-frontend", self._raw_bytes(frontend=True))
        elif pick < 0.7:
            self._raw(self.backend, "proxy-backend", self._raw_bytes(frontend=False))
        elif pick < 0.88:
            self._garbage_subscriber()
        else:
            self._garbage_xsub()

    def _raw_bytes(self, *, frontend: bool) -> bytes:
        """Bytes for a plain TCP connection to the proxy (never a published message)."""
        r = self.rng
        pick = r.randrange(7)
        if pick == 0:
            return r.randbytes(r.randint(1, 16384))
        if pick == 1:  # a greeting, then noise where the READY command belongs
            return _greeting() + r.randbytes(r.randint(1, 4096))
        if pick == 2:  # a greeting with a bad version or mechanism
            return _greeting(r.choice((b"\x01\x00", b"\x09\x09", b"\x03\x07")),
                             r.choice((b"CURVE", b"PLAIN", b"GSSAPI", r.randbytes(20)))) \
                + r.randbytes(r.randint(0, 512))
        if pick == 3:  # half a greeting (the connection is then held open a while)
            return _greeting()[: r.randint(1, 63)]
        hello = _greeting() + _ready(b"PUB" if frontend else b"SUB")
        if pick == 4:  # a whole handshake, then commands nobody knows
            return hello + b"".join(
                _frame(bytes([n]) + r.randbytes(n) + r.randbytes(r.randint(0, 300)), command=True)
                for n in (r.randint(1, 12) for _ in range(r.randint(1, 5)))
            )
        if pick == 5:  # a whole handshake, then a frame that claims to be huge
            size = r.choice((2**20 + 1, 2**31, 2**40, 2**63 - 1, 2**64 - 1))
            flags = 0x06 if frontend else r.choice((0x02, 0x03, 0x06))
            return hello + bytes([flags]) + struct.pack(">Q", size) + r.randbytes(r.randint(0, 2048))
        if frontend:  # a READY for a socket type the XSUB does not take
            return _greeting() + _ready(r.choice((b"REP", b"ROUTER", b"XSUB", b"PAIR", b"???")))
        # The backend (an XPUB): a whole handshake as a SUB, then garbage messages:
        # subscriptions (0x01 ...), cancels (0x00 ...) and plain noise, some multipart.
        frames = []
        for _ in range(r.randint(1, 8)):
            first = r.choice((b"\x01", b"\x00", bytes([r.randint(2, 255)])))
            frames.append(_frame(first + r.randbytes(r.randint(0, 300)), more=r.random() < 0.2))
        return hello + b"".join(frames)

    def _raw(self, endpoint: str, label: str, data: bytes) -> None:
        host, _, port = endpoint[len("tcp://"):].rpartition(":")
        try:
            s = socket.create_connection((host, int(port)), timeout=1.0)
        except OSError:
            return
        try:
            s.sendall(data)
        except OSError:
            pass  # the proxy hung up on the garbage: as it should
        self.stats.count_sent(label)
        hold = self.rng.choice((0.2, 0.5, 1.0, 3.0))
        self._add(_Pending(s, None, label, None, time.time(), time.monotonic() + hold, raw=True))

    def _garbage_subscriber(self) -> None:
        r = self.rng
        s = self._zmq_socket(zmq.SUB, self.backend)
        for _ in range(r.randint(1, 6)):
            size = r.choice((1, 2, 8, 64, 255, 256, 4096)) if r.random() < 0.97 else 65536
            s.setsockopt(zmq.SUBSCRIBE, r.randbytes(r.randint(0, size)))
        self.stats.count_sent("proxy-backend")
        self._add(_Pending(s, None, "proxy-backend", None, time.time(),
                           time.monotonic() + r.uniform(0.5, 3.0)))

    def _garbage_xsub(self) -> None:
        r = self.rng
        s = self._zmq_socket(zmq.XSUB, self.backend)
        for _ in range(r.randint(1, 5)):
            n = r.randint(1, 4)
            frames = [r.choice((b"\x01", b"\x00", b"")) + r.randbytes(r.randint(0, 512))
                      for _ in range(n)]
            try:
                s.send_multipart(frames, flags=zmq.NOBLOCK)
            except zmq.ZMQError:
                break
        self.stats.count_sent("proxy-backend")
        self._add(_Pending(s, None, "proxy-backend", None, time.time(),
                           time.monotonic() + r.uniform(0.5, 2.0)))


# --------------------------------------------------------------------------------- the group
class HostileClients:
    """N hostile clients for a soak: start, stop, counts for the report, the check."""

    def __init__(self, count: int, targets: Sequence[HostileTarget], frontend: str, backend: str,
                 seed: int) -> None:
        self.count = count
        self.stats = HostileStats()
        self.context: zmq.Context[Any] = zmq.Context()
        self.context.setsockopt(zmq.LINGER, 0)
        self.context.set(zmq.MAX_SOCKETS, 4096)
        self.clients = [
            HostileClient(n, targets, frontend, backend, self.context, self.stats,
                          seed * 104729 + n)
            for n in range(1, count + 1)
        ]
        self._stopped = False

    def start(self) -> HostileClients:
        self.stats.started = time.time()
        for c in self.clients:
            c.start()
        return self

    def stop(self) -> None:
        """Stop every client (pending requests are dropped uncounted); idempotent."""
        if self._stopped:
            return
        self._stopped = True
        for c in self.clients:
            c._stop.set()
        for c in self.clients:
            c.stop()
        if all(not c._thread.is_alive() for c in self.clients):
            self.context.term()
        else:  # a client stuck in a call: its sockets go with the context
            self.context.destroy(linger=0)

    def counts(self) -> dict[str, int]:
        return self.stats.counts(self.count)

    def check(self, result: CheckResult, logs: dict[str, Path] | None = None) -> None:
        """Add :data:`HOSTILE_CHECK` to ``result``: its problems fail the run.

        ``logs``: each table's log (controller stderr); a server thread's trouble there fails it.
        """
        result.problems.setdefault(HOSTILE_CHECK, [])
        for text in self.stats.problems:
            result.add(HOSTILE_CHECK, text)
        for table, path in (logs or {}).items():
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError as e:
                result.add(HOSTILE_CHECK, f"{table}: log unreadable: {e}")
                continue
            for line in lines:
                if SERVER_TROUBLE.search(line):
                    result.add(HOSTILE_CHECK, f"{table}: a server thread failed: {line[:200]}")
        for c in self.clients:
            if c.error:
                result.add(HOSTILE_CHECK, f"hostile client {c.name} stopped: {c.error}")
        if self.count and not self.stats.sent:
            result.add(HOSTILE_CHECK, "the hostile clients sent nothing")
