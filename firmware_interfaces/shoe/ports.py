"""The simulated shoe's side of a byte stream: pty master, TCP server, or any serial object.

Every port can be unplugged and plugged back: a file descriptor or a serial
object goes silent (reads are discarded, writes go nowhere); a
:class:`PtyPort` really closes its pseudo-terminal, so the driver's reads
fail, and comes back under the same stable path (a symlink); a
:class:`TcpPort` drops the connection and refuses new ones meanwhile.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import socket
import tempfile
import threading
import time
import tty
from pathlib import Path
from typing import Any, Protocol

from firmware_interfaces.shoe.errors import ShoeError

_RETRY_ERRNOS = (errno.EAGAIN, errno.EWOULDBLOCK, errno.EINTR)


def open_pty_pair() -> tuple[int, str]:
    """A raw-mode pseudo-terminal: (master fd for the simulated shoe, slave path for the driver).

    The slave end is closed again here; the driver opens it by path.
    """
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    path = os.ttyname(slave)
    os.close(slave)
    flags = fcntl.fcntl(master, fcntl.F_GETFL)
    fcntl.fcntl(master, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    return master, path


class ShoePort(Protocol):
    """What the simulated shoe needs from its byte stream."""

    description: str

    def read(self, timeout: float) -> bytes: ...

    def write(self, data: bytes) -> None: ...

    def unplug(self) -> None: ...

    def replug(self) -> None: ...

    def close(self) -> None: ...


class FdPort:
    """A file descriptor (a pty master): writes never block; unplug = silence.

    Bytes written while nobody listens are lost, like on a real cable.
    """

    def __init__(self, fd: int, description: str = "") -> None:
        self._fd: int | None = fd
        self.description = description or f"fd {fd}"
        self._plugged = True
        self._idle = threading.Event()  # never set: an interruptible wait
        self.dropped_bytes = 0
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)

    def read(self, timeout: float) -> bytes:
        fd = self._fd
        if fd is None:
            self._idle.wait(timeout)
            return b""
        try:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                return b""
            data = os.read(fd, 4096)
        except OSError as e:
            if e.errno in _RETRY_ERRNOS:
                return b""
            # EIO: no one has the other end open (driver not connected yet / closed).
            self._idle.wait(timeout)
            return b""
        return data if self._plugged else b""

    def write(self, data: bytes) -> None:
        fd = self._fd
        if fd is None or not self._plugged:
            self.dropped_bytes += len(data)
            return
        view = memoryview(data)
        while view:
            try:
                n = os.write(fd, view)
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                self.dropped_bytes += len(view)  # buffer full or nobody listening
                return
            view = view[n:]

    def unplug(self) -> None:
        self._plugged = False

    def replug(self) -> None:
        self._plugged = True

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


class PtyPort(FdPort):
    """A pseudo-terminal reached through a stable symlink.

    ``unplug`` closes the master (the driver's reads fail) and removes the
    symlink (reopening fails); ``replug`` makes a new pty and points the same
    symlink at it. ``description`` is the symlink path.
    """

    def __init__(self, link_path: str | os.PathLike[str] | None = None) -> None:
        if link_path is None:
            self._tmpdir: str | None = tempfile.mkdtemp(prefix="shoe-")
            link_path = os.path.join(self._tmpdir, "shoe")
        else:
            self._tmpdir = None
        self.link_path = Path(link_path)
        if self.link_path.exists() and not self.link_path.is_symlink():
            raise ShoeError(f"device link {self.link_path}: exists and is not a symlink; "
                            "choose another path")
        master, slave = open_pty_pair()
        super().__init__(master, str(self.link_path))
        self.slave_path = slave
        self._point_link(slave)

    def _point_link(self, target: str) -> None:
        tmp = self.link_path.with_name(f".{self.link_path.name}.{os.getpid()}.tmp")
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(target, tmp)
        os.replace(tmp, self.link_path)

    def unplug(self) -> None:
        self._plugged = False
        try:
            self.link_path.unlink()
        except FileNotFoundError:
            pass
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def replug(self) -> None:
        if self._fd is None:
            master, slave = open_pty_pair()
            self._fd = master
            self.slave_path = slave
            self._point_link(slave)
        self._plugged = True

    def close(self) -> None:
        super().close()
        try:
            self.link_path.unlink()
        except FileNotFoundError:
            pass
        if self._tmpdir is not None:
            try:
                os.rmdir(self._tmpdir)
            except OSError:
                pass


class SerialPort:
    """Any pyserial-like object (``loop://``, a real port): unplug = silence."""

    def __init__(self, ser: Any, description: str = "") -> None:
        self._ser = ser
        self.description = description or str(getattr(ser, "port", "") or "serial")
        self._plugged = True

    def read(self, timeout: float) -> bytes:
        self._ser.timeout = timeout
        data = self._ser.read(self._ser.in_waiting or 1)
        if len(data) == 1 and self._ser.in_waiting:
            data += self._ser.read(self._ser.in_waiting)
        return bytes(data) if self._plugged else b""

    def write(self, data: bytes) -> None:
        if self._plugged:
            self._ser.write(data)

    def unplug(self) -> None:
        self._plugged = False

    def replug(self) -> None:
        self._plugged = True

    def close(self) -> None:
        self._ser.close()


class TcpPort:
    """A serial-over-Ethernet adapter: a TCP server on 127.0.0.1 with one client at a time.

    ``unplug`` drops the client and stops listening (connects are refused);
    ``replug`` listens again on the same port. ``description`` is the
    ``socket://`` URL the driver opens.
    """

    def __init__(self, port: int = 0, host: str = "127.0.0.1") -> None:
        self._host = host
        self._server: socket.socket | None = None
        self._client: socket.socket | None = None
        self._lock = threading.Lock()
        self._listen(port)
        assert self._server is not None
        self.port: int = self._server.getsockname()[1]
        self.description = f"socket://{host}:{self.port}"

    def _listen(self, port: int) -> None:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((self._host, port))
        server.listen(1)
        server.setblocking(False)
        self._server = server

    def read(self, timeout: float) -> bytes:
        with self._lock:
            server, client = self._server, self._client
        watch = [s for s in (server, client) if s is not None]
        if not watch:
            time.sleep(timeout)  # unplugged: nothing to wait on
            return b""
        try:
            ready, _, _ = select.select(watch, [], [], timeout)
        except (OSError, ValueError):
            return b""
        data = b""
        for sock in ready:
            if sock is server:
                try:
                    conn, _ = server.accept()
                except OSError:
                    continue
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn.settimeout(1.0)
                with self._lock:
                    old, self._client = self._client, conn
                if old is not None:
                    old.close()
            else:
                try:
                    data = sock.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    self._drop_client(sock)
        return data

    def _drop_client(self, sock: socket.socket) -> None:
        with self._lock:
            if self._client is sock:
                self._client = None
        sock.close()

    def write(self, data: bytes) -> None:
        with self._lock:
            client = self._client
        if client is None:
            return
        try:
            client.sendall(data)
        except OSError:
            self._drop_client(client)

    def unplug(self) -> None:
        with self._lock:
            server, client = self._server, self._client
            self._server = self._client = None
        for sock in (client, server):
            if sock is not None:
                sock.close()

    def replug(self) -> None:
        with self._lock:
            if self._server is None:
                self._listen(self.port)

    def close(self) -> None:
        self.unplug()


def as_port(transport: Any) -> ShoePort:
    """A ShoePort for a file descriptor, a ShoePort, or a pyserial-like object."""
    if isinstance(transport, int):
        return FdPort(transport)
    if all(hasattr(transport, m) for m in ("read", "write", "unplug", "replug", "description")):
        return transport  # type: ignore[no-any-return]
    return SerialPort(transport)
