"""The supervisor's control socket: resume or void a paused round from the command line.

A ZeroMQ REP socket (loopback by default, ``publish.control``) takes JSON
requests. Supervisor actions need a token whose SHA-256 is listed in the
table's configuration; every action is journaled with who authorised it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from typing import Any, Protocol

from firmware_interfaces.errors import DeviceError
from table_controller.errors import TableError
from table_controller.event_types import as_dict
from table_controller.table import inputs as i
from table_controller.tokens import matches, sha256_form

log = logging.getLogger(__name__)

#: The largest control request accepted; a real one is well under 1 KiB.
MAX_REQUEST_BYTES = 16384
#: How long close() waits for the serving thread: longer than one request can take (a
#: supervisor op waits up to 5 s for the controller's loop).
CLOSE_SECONDS = 7.0


def token_digest(token: str) -> str:
    """The legacy SHA-256 form of a supervisor token (see :mod:`table_controller.tokens`)."""
    return sha256_form(token)


class ControlOps(Protocol):
    """More operations for a control socket, beside its own (status, resume, void, new-shoe).

    A test rig registers its hands this way (``table_controller.sim.control.RigControlOps``:
    press a mock button, lay a card under a simulated camera); a production table registers
    none, so its socket refuses them as unknown.
    """

    @property
    def ops(self) -> frozenset[str]:
        """The operation names this handler answers."""
        ...

    def answer(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``request`` (whose ``"op"`` is ``op``); may raise ValueError or TableError."""
        ...


#: The operations every control socket serves.
OWN_OPS = ("status", "resume", "void", "new-shoe", "dealer")


class ControlServer:
    """Answers ``status``, ``resume``, ``void`` and ``new-shoe`` requests for one controller,
    and the operations of any registered :class:`ControlOps`."""

    def __init__(
        self, controller: Any, endpoint: str, token_digests: Sequence[str], context: Any = None,
        security: Any = None, extra_ops: Sequence[ControlOps] = (),
    ) -> None:
        """``security``: a CurveConfig: only authorised client keys reach the socket at all (the
        supervisor token is still needed for resume and void). ``extra_ops``: more operations
        (a test rig's); one may not take an operation of the socket's own or of another."""
        import zmq

        self.controller = controller
        self.security = security
        self._keys = security.load() if security is not None else None
        self._extra: dict[str, ControlOps] = {}
        for handler in extra_ops:
            for op in handler.ops:
                if op in OWN_OPS or op in self._extra:
                    raise ValueError(f"control op {op!r} is already served")
                self._extra[op] = handler
        self.token_digests = tuple(token_digests)
        self._own_context = security is not None and context is None
        # CURVE needs a ZAP handler on the socket's context: with security, one of its own.
        self._context = context or (zmq.Context() if security is not None else zmq.Context.instance())
        self._auth: Any = None
        if security is not None:
            from table_controller.publish.security import start_authenticator

            self._auth = start_authenticator(self._context, security)
        self._socket = self._open(endpoint)
        self.endpoint = self._socket.getsockopt_string(zmq.LAST_ENDPOINT)
        self.restarts = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="control", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        """Stop serving and close the socket; waits up to :data:`CLOSE_SECONDS` for the thread.

        Once started, the socket belongs to the serving thread, which closes it itself: a
        ZeroMQ socket closed while another thread waits in it makes libzmq abort the process.
        A thread that does not stop in time (logged) keeps its socket, and its context is not
        terminated (that would wait for the socket for ever).
        """
        self._stop.set()
        if self._thread.ident is None:  # never started: the socket is still this thread's
            self._socket.close()
        else:
            self._thread.join(timeout=CLOSE_SECONDS)
            if self._thread.is_alive():
                log.error("control socket %s: its thread did not stop within %.0f s; "
                          "left open", self.endpoint, CLOSE_SECONDS)
                return
        if self._auth is not None:
            self._auth.stop()
        if self._own_context:
            self._context.term()

    def _open(self, endpoint: str) -> Any:
        import zmq

        sock = self._context.socket(zmq.REP)
        sock.setsockopt(zmq.LINGER, 0)
        if self._keys is not None:
            from table_controller.publish.security import make_server

            make_server(sock, *self._keys)
        sock.setsockopt(zmq.MAXMSGSIZE, MAX_REQUEST_BYTES)  # bigger: dropped unread
        sock.bind(endpoint)
        return sock

    def _serve(self) -> None:
        """Serve until closed; a socket that fails anyway is replaced and an alert says so."""
        try:
            while not self._stop.is_set():
                try:
                    self._serve_socket()
                except Exception as e:  # supervised: a new socket on the same endpoint
                    log.exception("control socket failed: reopening %s", self.endpoint)
                    self.restarts += 1
                    self._socket.close(linger=0)
                    if self._stop.wait(0.5):
                        return
                    self._socket = self._open(self.endpoint)
                    self.controller.post(i.DeviceWarning(
                        f"the control socket failed ({type(e).__name__}: {e}) and was reopened"))
        finally:
            self._socket.close(linger=0)  # here, in the one thread that uses it (see close)

    def _serve_socket(self) -> None:
        import zmq

        poller = zmq.Poller()
        poller.register(self._socket, zmq.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(200):
                continue
            # The whole message, however many frames: a REP socket must answer each
            # request exactly once, or it refuses every later one. Never a blocking recv:
            # a readable REP may still have nothing to give (it drops a message without the
            # empty delimiter, e.g. from a DEALER), and a blocking recv would then wait for
            # the next request, deaf to close().
            try:
                frames = self._socket.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                continue
            answer = self._answer_frames(frames)  # never raises
            self._socket.send(json.dumps(answer, default=str).encode())

    def _answer_frames(self, frames: list[bytes]) -> dict[str, Any]:
        """The answer to one received message (never raises)."""
        if len(frames) != 1:
            return {"ok": False, "error": f"a request is one frame, not {len(frames)}"}
        try:
            return self.answer(json.loads(frames[0]))
        except RecursionError:
            return {"ok": False, "error": "a request is a JSON object, not nested that deep"}
        except (ValueError, TableError, DeviceError) as e:
            return {"ok": False, "error": str(e)}
        except Exception as e:  # the control socket must always answer
            log.exception("control request failed")
            return {"ok": False, "error": f"internal error: {e}"}

    def _authorised(self, request: dict[str, Any]) -> bool:
        token = request.get("token")
        if not isinstance(token, str):
            return False
        if len(token) > 256:
            return False
        return any(matches(token, stored) for stored in self.token_digests)

    def answer(self, request: Any) -> dict[str, Any]:
        """Handle one decoded request."""
        if not isinstance(request, dict) or "op" not in request:
            raise ValueError('a request is a JSON object with "op"')
        op = request["op"]
        m = self.controller.machine
        if op == "status":
            return {
                "ok": True, "state": m.state, "reason": m.reason, "round": m.round_id,
                "next_position": m.next_position,
                "next_index": (
                    len(m.deal.hands[m.next_position])
                    if m.deal is not None and m.next_position in m.deal.hands else None
                ),
                "awaiting": "card" if m.pause and m.pause.awaiting_card else None,
                "cause": m.pause.cause if m.pause else None,
                "shoe_card": m.pause.shoe_card if m.pause else None,
            }
        if isinstance(op, str) and op in self._extra:
            return self._extra[op].answer(op, request)
        if op not in OWN_OPS:
            served = ", ".join([*OWN_OPS, *sorted(self._extra)])
            raise ValueError(f"unknown op {op!r}: this control socket serves {served} "
                             "(a test rig's ops only with rig.control_ops)")
        if not self._authorised(request):
            return {"ok": False, "error": "not authorised: a valid supervisor token is required"}
        for key in ("by", "card", "reason"):
            if request.get(key) is not None and not isinstance(request[key], str):
                raise ValueError(f"{key}: expected a string, got {type(request[key]).__name__}")
        who = f"supervisor {request.get('by') or 'token'} (token)"
        if op == "resume":
            events = self.controller.request(i.SupervisorResume(by=who, card=request.get("card")))
        elif op == "dealer":
            # {"op": "dealer", "dealer": "D042"} signs a dealer in; "dealer": null signs out
            dealer = request.get("dealer")
            if dealer is not None and (not isinstance(dealer, str) or not 1 <= len(dealer) <= 64
                                       or not dealer.isprintable()):
                raise ValueError("dealer: a dealer's id of 1 to 64 printable characters, or null to sign out")
            events = self.controller.request(i.DealerSignIn(dealer=dealer, by=who))
        elif op == "new-shoe":
            # A line reader cannot report a new shoe: the supervisor does (the variant's decks).
            events = self.controller.request(i.ShoeNew(m.game.decks, announced_by=who))
        else:
            reason = request.get("reason") or "voided by supervisor"
            events = self.controller.request(i.SupervisorVoid(by=who, reason=reason))
        return {"ok": True, "events": [as_dict(e) for e in events]}
