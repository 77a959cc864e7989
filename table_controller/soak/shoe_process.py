"""One simulated shoe in its own process (``table-controller shoe sim``), driven through stdin.

The shoe process outlives controller kills: its pseudo-terminal is reached
through a stable symlink that the restarted controller opens again. Every
command gets exactly one reply line (``card TS count 17``, ``unread 9H count
18``, ``no card: ...``, ``lid OPEN``, ``new shoe of 8 decks``, ...); gate
changes arrive on their own and are tracked here. A line reader
(``--protocol lines``) says ``gate unlocked`` once at the start (it has no gate)
and adds the faults that hit a card's line to its reply (``card TS count 17 lost``).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from table_controller.errors import TableError

#: First words of the lines that answer a command.
_REPLIES = ("card", "unread", "no", "lid", "new", "unplugged", "error:", "stats")


def _card_reply(reply: str, word: str) -> tuple[str, int] | None:
    """``card TS count 17`` -> ("TS", 17); any other reply -> None."""
    parsed = _card_reply_with_faults(reply, word)
    return None if parsed is None else parsed[:2]


def _card_reply_with_faults(reply: str, word: str) -> tuple[str, int, tuple[str, ...]] | None:
    """``card TS count 17`` -> ("TS", 17, ()); a line reader's ``card TS count 17 lost,garbage``
    -> ("TS", 17, ("lost", "garbage")); any other reply -> None."""
    parts = reply.split()
    if (
        len(parts) in (4, 5)
        and parts[0] == word
        and parts[2] == "count"
        and parts[3].isdigit()
    ):
        faults = tuple(f for f in parts[4].split(",") if f) if len(parts) == 5 else ()
        return parts[1], int(parts[3]), faults
    return None


class ShoeProcessError(TableError, RuntimeError):
    """The simulated shoe process did not start or stopped answering."""


class ShoeProcess:
    """``table-controller shoe sim --link pty --device-link PATH`` as a child process."""

    def __init__(self, argv: list[str], device_link: Path, log: IO[str]) -> None:
        self.device_link = device_link
        self._log = log
        self._replies: queue.Queue[str] = queue.Queue()
        self._command_lock = threading.Lock()
        self._gate = threading.Condition()
        self.gate_locked = True
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            bufsize=1,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if not first.startswith("device: "):
            self.stop()
            raise ShoeProcessError(
                f"simulated shoe for {device_link} did not start: {first.strip()!r}"
            )
        self._reader = threading.Thread(
            target=self._read, name=f"shoe-{device_link.stem}", daemon=True
        )
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.strip()
            self._log.write(f"shoe: {line}\n")
            if line in ("gate locked", "gate unlocked"):
                with self._gate:
                    self.gate_locked = line == "gate locked"
                    self._gate.notify_all()
            elif line.split(" ", 1)[0] in _REPLIES:
                self._replies.put(line)
        self._replies.put("error: the shoe process ended")

    def wait_gate_open(self, timeout: float) -> bool:
        """True once the controller has unlocked the gate (False after ``timeout``)."""
        with self._gate:
            return self._gate.wait_for(lambda: not self.gate_locked, timeout)

    def command(self, text: str, timeout: float = 10.0) -> str:
        """Send one command and return its reply line."""
        with self._command_lock:
            while not self._replies.empty():  # a late reply of a timed-out command
                self._replies.get_nowait()
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(text + "\n")
                self.proc.stdin.flush()
            except OSError as e:
                raise ShoeProcessError(f"simulated shoe {self.device_link}: {e}") from e
            try:
                return self._replies.get(timeout=timeout)
            except queue.Empty:
                raise ShoeProcessError(
                    f"simulated shoe {self.device_link} did not answer {text!r}"
                ) from None

    def draw(self) -> tuple[str, int] | None:
        """Pull a card: its code and the shoe's count, or None when the gate was locked
        (or the shoe empty)."""
        return _card_reply(self.command("draw"), "card")

    def draw_line(self) -> tuple[str, int, tuple[str, ...]] | None:
        """A line reader's draw: code, the simulator's count, and the faults that hit its line
        (``lost``, ``twice``, ``garbage``, ``unplugged``); None when the shoe is empty."""
        return _card_reply_with_faults(self.command("draw"), "card")

    def noread(self) -> tuple[str, int] | None:
        """A card leaves unread: its true code (what the supervisor will see) and count, or None."""
        return _card_reply(self.command("noread"), "unread")

    def stats(self) -> dict[str, Any]:
        reply = self.command("stats")
        return json.loads(reply[len("stats ") :]) if reply.startswith("stats ") else {}

    def stop(self) -> None:
        """Ask it to quit; kill it if it does not."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
