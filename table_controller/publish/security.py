"""CURVE keys for the event stream: generating them, loading them, and who may listen.

A table's publisher and snapshot endpoints are CURVE servers: they hold the
server's secret key and accept only clients whose public key is in a folder of
authorised keys (ZeroMQ's ZAP, through :class:`zmq.auth.thread.ThreadAuthenticator`).
A client without an authorised key receives nothing and sees no error, so the
server logs every failed handshake from a socket monitor.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq
import zmq.auth
from zmq.utils.monitor import recv_monitor_message

from table_controller.errors import ConfigError

log = logging.getLogger(__name__)

#: Socket-monitor events that mean a peer failed the handshake.
HANDSHAKE_FAILURES = (
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)


class KeyFileError(ConfigError):
    """A CURVE key file or folder is missing or malformed; the message names the file."""


def load_keypair(path: Path, *, need_secret: bool) -> tuple[bytes, bytes | None]:
    """The (public, secret) keys of a ZeroMQ certificate file; raises :class:`KeyFileError`."""
    path = Path(path)
    if not path.is_file():
        raise KeyFileError(f"CURVE key file {path} does not exist")
    try:
        public, secret = zmq.auth.load_certificate(path)
    except (ValueError, OSError, UnicodeDecodeError) as e:
        raise KeyFileError(f"CURVE key file {path} is not a ZeroMQ certificate: {e}") from e
    if need_secret and not secret:
        raise KeyFileError(
            f"CURVE key file {path} holds no secret key (use the .key_secret file, not the .key file)"
        )
    return public, secret


def generate_keys(directory: Path, name: str) -> tuple[Path, Path]:
    """Write ``<name>.key`` (public) and ``<name>.key_secret`` into ``directory``.

    Refuses to overwrite existing files (a studio's keys are not replaced by accident).
    """
    directory = Path(directory)
    if not name or "/" in name or name.startswith("."):
        raise KeyFileError(f"key name {name!r} must be a plain file name such as 'table-T01'")
    public = directory / f"{name}.key"
    secret = directory / f"{name}.key_secret"
    for existing in (public, secret):
        if existing.exists():
            raise KeyFileError(f"{existing} already exists; remove it first or choose another --name")
    directory.mkdir(parents=True, exist_ok=True)
    public_file, secret_file = zmq.auth.create_certificates(directory, name)
    Path(secret_file).chmod(0o600)
    return Path(public_file), Path(secret_file)


@dataclass(frozen=True)
class CurveConfig:
    """Server-side CURVE settings of a table: its secret key file and the authorised clients' keys.

    ``server_secret_file`` is the ``.key_secret`` file made by ``table-controller keys
    generate``; ``authorized_clients_dir`` holds one ``.key`` file per authorised client.
    """

    server_secret_file: Path
    authorized_clients_dir: Path

    def load(self) -> tuple[bytes, bytes]:
        """The server's (public, secret) keys, after checking the client folder."""
        public, secret = load_keypair(self.server_secret_file, need_secret=True)
        folder = Path(self.authorized_clients_dir)
        if not folder.is_dir():
            raise KeyFileError(f"authorised client key folder {folder} does not exist")
        for key_file in sorted(folder.glob("*.key")):
            load_keypair(key_file, need_secret=False)  # a clear error now, not a silent denial later
        assert secret is not None
        return public, secret

    @classmethod
    def from_mapping(cls, data: dict[str, Any], base: Path, where: str = "[events.curve]") -> CurveConfig:
        """Build from a configuration table ``{server_secret_file, authorized_clients_dir}``.

        Relative paths are taken from ``base`` (the configuration file's folder).
        """
        try:
            secret = Path(data["server_secret_file"])
            clients = Path(data["authorized_clients_dir"])
        except KeyError as e:
            raise ConfigError(f"{where} lacks key {e.args[0]!r}") from None
        return cls(base / secret, base / clients)


@dataclass(frozen=True)
class ClientCurve:
    """Client-side CURVE settings: the client's own key pair and the server's public key."""

    client_secret_file: Path
    server_public_file: Path

    def apply(self, socket: zmq.Socket[Any]) -> None:
        """Make ``socket`` a CURVE client of the server (before it connects)."""
        public, secret = load_keypair(self.client_secret_file, need_secret=True)
        server_public, _ = load_keypair(self.server_public_file, need_secret=False)
        socket.curve_publickey = public
        socket.curve_secretkey = secret
        socket.curve_serverkey = server_public


def make_server(socket: zmq.Socket[Any], public: bytes, secret: bytes) -> None:
    """Make ``socket`` a CURVE server (before it binds)."""
    socket.curve_secretkey = secret
    socket.curve_publickey = public
    socket.curve_server = True


def start_authenticator(context: zmq.Context[Any], config: CurveConfig) -> Any:
    """Start ZAP on ``context``, allowing only the client keys in ``config``'s folder."""
    from zmq.auth.thread import ThreadAuthenticator

    auth = ThreadAuthenticator(context, log=logging.getLogger("table_controller.publish.auth"))
    auth.start()
    auth.configure_curve(domain="*", location=str(config.authorized_clients_dir))
    return auth


@dataclass
class HandshakeWatch:
    """Logs and counts failed handshakes on the sockets it watches (a thread per watch).

    ``failures`` holds ``(endpoint, event name)`` pairs; ``failed`` is set at the first
    one, so tests can wait on it instead of sleeping.
    """

    failures: list[tuple[str, str]] = field(default_factory=list)
    failed: threading.Event = field(default_factory=threading.Event)
    _threads: dict[int, threading.Thread] = field(default_factory=dict)

    def watch(self, socket: zmq.Socket[Any], name: str) -> None:
        """Watch ``socket`` (called in the thread that owns it, before it binds)."""
        monitor = socket.get_monitor_socket(HANDSHAKE_FAILURES | zmq.EVENT_MONITOR_STOPPED)
        thread = threading.Thread(target=self._run, args=(monitor, name), daemon=True,
                                  name=f"curve-monitor-{name}")
        self._threads[id(socket)] = thread
        thread.start()

    def _run(self, monitor: zmq.Socket[Any], name: str) -> None:
        try:
            while True:
                try:
                    message = recv_monitor_message(monitor)
                except zmq.ZMQError:
                    return
                event = message["event"]
                if event == zmq.EVENT_MONITOR_STOPPED:
                    return
                label = zmq.Event(event).name if event in zmq.Event.__members__.values() else str(event)
                log.warning("CURVE handshake refused on the %s socket (%s, error %s): "
                            "a client without an authorised key tried to connect",
                            name, label, message.get("value"))
                self.failures.append((name, label or str(event)))
                self.failed.set()
        finally:
            monitor.close(linger=0)

    def stop(self, sockets: list[zmq.Socket[Any]]) -> None:
        """Stop monitoring ``sockets`` and wait for the watch threads."""
        for socket in sockets:
            try:
                socket.disable_monitor()
            except zmq.ZMQError:
                pass
            thread = self._threads.pop(id(socket), None)
            if thread is not None and thread.is_alive():  # a stop can come before its start
                thread.join(timeout=2)
