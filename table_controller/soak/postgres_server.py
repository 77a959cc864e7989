"""A throw-away PostgreSQL server for the archive soak and the tests: Debian's own server
binaries, a fresh cluster in a temporary folder, loopback only, killed and restarted at will.

PostgreSQL refuses to run as root, so when this process is root the cluster belongs to
the ``postgres`` account (made by Debian's package) and the server runs as it. The server
is started in a session of its own: :meth:`PostgresServer.kill` sends SIGKILL to the
postmaster and every backend at once (a crash; the next start recovers from the WAL),
:meth:`PostgresServer.stop` shuts it down cleanly.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from table_controller.errors import TableError


class PostgresUnavailable(TableError):
    """No PostgreSQL server binaries here, or the server would not start."""


def find_bindir() -> Path:
    """The folder of ``initdb`` and ``postgres``: ``$TC_PG_BINDIR``, else Debian's newest
    ``/usr/lib/postgresql/N/bin``, else wherever ``initdb`` is on the PATH."""
    if os.environ.get("TC_PG_BINDIR"):
        return Path(os.environ["TC_PG_BINDIR"])
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"),
                      key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0)
    if versions:
        return Path(versions[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise PostgresUnavailable("no PostgreSQL server here: apt-get install postgresql (or set TC_PG_BINDIR)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """One cluster on 127.0.0.1:``port``, user ``postgres``, trust authentication (loopback
    only: a test and soak server, not a studio's)."""

    def __init__(self, port: int | None = None, datadir: Path | None = None) -> None:
        self.bindir = find_bindir()
        self.port = port or free_port()
        self.root = Path(tempfile.mkdtemp(prefix="tc-postgres-")) if datadir is None else datadir
        self.datadir = self.root / "data"
        self._owned = datadir is None
        self._user: str | None = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                raise PostgresUnavailable("running as root, and there is no postgres account to run the server as "
                                          "(Debian's postgresql package makes it)") from None
            self._user = "postgres"
            shutil.chown(self.root, "postgres", "postgres")
        self._process: subprocess.Popen[bytes] | None = None
        self._log = self.root / "server.log"

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def _run(self, *argv: str) -> None:
        done = subprocess.run([str(self.bindir / argv[0]), *argv[1:]], user=self._user, capture_output=True,
                              cwd=self.root, check=False)
        if done.returncode != 0:
            raise PostgresUnavailable(f"{argv[0]} failed: {done.stderr.decode(errors='replace').strip()}")

    def start(self, timeout: float = 30.0) -> PostgresServer:
        if not (self.datadir / "PG_VERSION").exists():
            self._run("initdb", "-D", str(self.datadir), "-A", "trust", "-U", "postgres", "--no-sync",
                      "--encoding", "UTF8", "--locale", "C")
        log = open(self._log, "ab")  # noqa: SIM115 - the server's, closed with it
        if self._user:
            shutil.chown(self._log, self._user, self._user)
        self._process = subprocess.Popen(
            [str(self.bindir / "postgres"), "-D", str(self.datadir), "-p", str(self.port), "-k", str(self.root),
             "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"],
            user=self._user, stdout=log, stderr=log, cwd=self.root, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise PostgresUnavailable(f"the server exited: {self._log.read_text(errors='replace')[-800:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0 and self._accepts():
                    return self
            time.sleep(0.05)
        raise PostgresUnavailable(f"the server did not accept connections in {timeout:.0f} s")

    def _accepts(self) -> bool:
        done = subprocess.run([str(self.bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
                              capture_output=True, check=False)
        return done.returncode == 0

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def kill(self) -> None:
        """SIGKILL the postmaster and every backend: a crash."""
        if self._process is None:
            return
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._process.wait()
        self._process = None

    def stop(self, timeout: float = 20.0) -> None:
        """A fast shutdown (SIGINT: roll back open transactions, checkpoint, exit)."""
        if self._process is None:
            return
        self._process.send_signal(signal.SIGINT)
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        self._process = None

    def close(self) -> None:
        """Stop the server and remove the cluster (when this object made its folder)."""
        self.stop()
        if self._owned:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start() if not self.running else self

    def __exit__(self, *exc: object) -> None:
        self.close()
