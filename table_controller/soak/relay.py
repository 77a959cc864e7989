"""A TCP relay the soak can cut: one table's snapshot endpoint as the archive reaches it.

Cutting it closes every open connection and refuses new ones (accepted and closed at
once), as a pulled network cable looks to a ZeroMQ peer that keeps reconnecting;
restoring it lets connections through again. Bytes pass unchanged both ways.
"""

from __future__ import annotations

import socket
import threading


class CuttableRelay:
    """Listens on a free loopback port and relays each connection to ``host:port``."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = int(self._listener.getsockname()[1])
        self._cut = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self.cuts = 0
        self._thread = threading.Thread(target=self._accept, name="relay", daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def cut(self) -> None:
        self._cut.set()
        self.cuts += 1
        with self._lock:
            for s in self._open:
                _close(s)
            self._open.clear()

    def restore(self) -> None:
        self._cut.clear()

    @property
    def is_cut(self) -> bool:
        return self._cut.is_set()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._cut.is_set():
                _close(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=2)
            except OSError:
                _close(client)
                continue
            upstream.settimeout(None)
            with self._lock:
                self._open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            _close(source)
            _close(sink)
            with self._lock:
                for s in (source, sink):
                    if s in self._open:
                        self._open.remove(s)

    def close(self) -> None:
        self._closed.set()
        self.cut()
        _close(self._listener)
        self._thread.join(timeout=2)


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
