"""The studio's forwarder: ZeroMQ's own XSUB/XPUB proxy, so many tables meet many displays.

Tables connect their PUB sockets to the frontend (``connect:tcp://studio:5559``);
displays subscribe at the backend. Subscriptions travel upstream, so a table
only sends what some display wants. Snapshots do not go through the proxy: a
display asks each table's own snapshot endpoint.
"""

from __future__ import annotations

import logging
import threading
import uuid
from types import TracebackType
from typing import Any

import zmq

from table_controller.publish.publisher import attach

log = logging.getLogger(__name__)

DEFAULT_FRONTEND = "tcp://127.0.0.1:5559"  # name the studio address to serve a network
DEFAULT_BACKEND = "tcp://127.0.0.1:5560"


class StudioProxy:
    """An XSUB (frontend, tables connect) / XPUB (backend, displays connect) forwarder in a thread.

    Runs :func:`zmq.proxy_steerable`, so :meth:`close` stops it cleanly. High-water
    marks on both sides make a stuck display lose messages rather than hold up
    the proxy or the tables.
    """

    def __init__(self, frontend: str = DEFAULT_FRONTEND, backend: str = DEFAULT_BACKEND, *,
                 context: zmq.Context[Any] | None = None, hwm: int = 100_000) -> None:
        self.frontend = frontend
        self.backend = backend
        self.hwm = hwm
        self._own_context = context is None
        self.context: zmq.Context[Any] = context or zmq.Context()
        self._control_endpoint = f"inproc://proxy-control-{uuid.uuid4().hex}"
        self._control: zmq.Socket[Any] | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.bound_frontend: str | None = None
        self.bound_backend: str | None = None

    def start(self) -> StudioProxy:
        """Bind both sides and start forwarding; raises OSError naming an endpoint that failed."""
        self._thread = threading.Thread(target=self._run, daemon=True, name="studio-proxy")
        self._thread.start()
        self._ready.wait(timeout=10)
        if self._error is not None:
            self._thread.join(timeout=5)
            raise OSError(str(self._error)) from self._error
        control = self.context.socket(zmq.PAIR)
        control.setsockopt(zmq.LINGER, 0)
        control.connect(self._control_endpoint)
        self._control = control
        return self

    def _run(self) -> None:
        xsub = self.context.socket(zmq.XSUB)
        xpub = self.context.socket(zmq.XPUB)
        control = self.context.socket(zmq.PAIR)
        for socket in (xsub, xpub, control):
            socket.setsockopt(zmq.LINGER, 0)
        xsub.setsockopt(zmq.RCVHWM, self.hwm)
        xpub.setsockopt(zmq.SNDHWM, self.hwm)
        for socket in (xsub, xpub):
            # A ZAP domain makes libzmq refuse old-protocol (ZMTP/1.0) peers, which would
            # otherwise get raw TCP bytes forwarded to every display as messages.
            socket.setsockopt(zmq.ZAP_DOMAIN, b"studio-proxy")
            socket.setsockopt(zmq.MAXMSGSIZE, 1 << 20)  # an event is a few hundred bytes
        try:
            control.bind(self._control_endpoint)
            for socket, endpoint, side in ((xsub, self.frontend, "frontend"),
                                           (xpub, self.backend, "backend")):
                try:
                    bound = attach(socket, endpoint)
                except zmq.ZMQError as e:
                    raise OSError(f"cannot open the proxy {side} at {endpoint}: {e}") from e
                setattr(self, f"bound_{side}", bound)
        except OSError as e:
            self._error = e
            self._ready.set()
            for socket in (xsub, xpub, control):
                socket.close(linger=0)
            return
        self._ready.set()
        try:
            zmq.proxy_steerable(xsub, xpub, None, control)
        except zmq.ContextTerminated:
            pass
        except Exception:  # top of a worker thread
            log.exception("studio proxy stopped")
        finally:
            for socket in (xsub, xpub, control):
                socket.close(linger=0)

    def close(self) -> None:
        """Stop forwarding and close the sockets (and the context if it is ours)."""
        if self._control is not None:
            self._control.send(b"TERMINATE")
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._control.close(linger=0)
            self._control = None
        if self._own_context:
            self.context.term()

    def __enter__(self) -> StudioProxy:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
