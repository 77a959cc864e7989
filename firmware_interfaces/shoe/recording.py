"""Record a card reader's byte stream (both directions, with times) and replay it under the real driver.

A recording is JSON lines: a header ``{"format": "shoe-recording/1", "protocol", "device",
"started", "note"}``, then one ``{"t": seconds since start, "dir": "in"|"out", "data": text}``
per read or write, ``data`` being the bytes as latin-1 text (JSON escapes the control bytes,
so a recording stays readable: ``"$17,CARD,TS,RO,143*2252\\r\\n"``).

:class:`RecordingTransport` wraps any transport a driver reads; :class:`ReplayTransport` is a
transport that plays a recording's ``in`` bytes back (python-kasa's device fixtures are the
model). Replaying SLP/1 needs one adjustment: the recorded shoe echoed the recorded
controller's RESET nonces, and a fresh driver picks new ones, so a replayed HELLO that
answers a recorded RESET is rewritten (with its CRC) to answer the driver's latest RESET,
which is what the device would have done.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from firmware_interfaces.shoe.codec import SLP1Codec
from firmware_interfaces.shoe.errors import ShoeError

FORMAT = "shoe-recording/1"


class RecordingError(ShoeError, ValueError):
    """A recording file that cannot be read (names the file and line)."""


@dataclass(frozen=True)
class Chunk:
    """One read (``in``) or write (``out``) of a recording."""

    t: float
    dir: str
    data: bytes


@dataclass(frozen=True)
class Recording:
    """A whole recording: what device, which protocol, and every chunk in order."""

    protocol: str
    device: str
    note: str
    chunks: tuple[Chunk, ...]

    @classmethod
    def load(cls, path: Path) -> Recording:
        """Read a recording; raises RecordingError naming the line."""
        chunks: list[Chunk] = []
        header: dict[str, Any] | None = None
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise RecordingError(f"{path}: cannot read: {e}") from e
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                if header is None:
                    if item.get("format") != FORMAT:
                        raise ValueError(f"not a {FORMAT} file")
                    header = item
                    continue
                if item["dir"] not in ("in", "out"):
                    raise ValueError(f"dir {item['dir']!r}")
                chunks.append(Chunk(float(item["t"]), item["dir"], item["data"].encode("latin-1")))
            except (ValueError, KeyError, TypeError, AttributeError, UnicodeEncodeError) as e:
                raise RecordingError(f"{path}:{number}: {e}") from None
        if header is None:
            raise RecordingError(f"{path}: empty, expected a {FORMAT} header")
        return cls(str(header.get("protocol", "slp1")), str(header.get("device", "")),
                   str(header.get("note", "")), tuple(chunks))

    @property
    def received(self) -> bytes:
        """Every byte the device sent, in order."""
        return b"".join(c.data for c in self.chunks if c.dir == "in")


class RecordingWriter:
    """Appends chunks to a recording file (thread-safe; flushed per chunk)."""

    def __init__(self, stream: IO[str], *, protocol: str, device: str, note: str = "") -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        header = {"format": FORMAT, "protocol": protocol, "device": device, "note": note,
                  "started": datetime.now(UTC).isoformat(timespec="seconds")}
        self._write(header)

    def _write(self, item: dict[str, Any]) -> None:
        with self._lock:
            self._stream.write(json.dumps(item) + "\n")
            self._stream.flush()

    def chunk(self, direction: str, data: bytes) -> None:
        if data:
            self._write({"t": round(time.monotonic() - self._t0, 6), "dir": direction,
                         "data": data.decode("latin-1")})


class RecordingTransport:
    """Wraps a transport and records every byte read from and written to it."""

    def __init__(self, inner: Any, writer: RecordingWriter) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_writer", writer)

    def read(self, size: int = 1) -> bytes:
        data = self._inner.read(size)
        self._writer.chunk("in", bytes(data))
        return bytes(data)

    def write(self, data: bytes) -> Any:
        self._writer.chunk("out", bytes(data))
        return self._inner.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._inner, name, value)


def recording_opener(opener: Callable[[], Any], writer: RecordingWriter) -> Callable[[], Any]:
    """An opener whose transports are recorded."""
    return lambda: RecordingTransport(opener(), writer)


class ReplayTransport:
    """A transport that plays back a recording's received bytes (``speed`` 0: at once).

    Writes are taken and, for SLP/1, watched for RESET nonces so that a replayed
    HELLO answers the driver's RESET (module docstring). After the last chunk
    reads time out empty, like a silent device.
    """

    def __init__(self, recording: Recording, *, speed: float = 0.0) -> None:
        self.recording = recording
        self.speed = speed
        self.timeout: float | None = 0.05
        self._slp1 = recording.protocol == "slp1"
        self._recorded_nonces = self._nonces_in(c.data for c in recording.chunks if c.dir == "out")
        self._driver_nonce: str | None = None
        self._out_codec = SLP1Codec()
        self._pending = self._segments(recording) if self._slp1 else [
            Chunk(c.t, c.dir, c.data) for c in recording.chunks if c.dir == "in"
        ]
        self._buf = bytearray()
        self._t0 = time.monotonic()
        self.written = bytearray()
        self.rewritten_hellos = 0

    @staticmethod
    def _nonces_in(datas: Any) -> set[str]:
        codec = SLP1Codec()
        return {f.args[0] for d in datas for f in codec.feed(d) if f.type == "RESET" and f.args}

    def _release(self) -> None:
        now = time.monotonic() - self._t0
        while self._pending and (self.speed <= 0 or self._pending[0].t / self.speed <= now):
            self._buf += self._adjust(self._pending.pop(0).data)

    @staticmethod
    def _segments(recording: Recording) -> list[Chunk]:
        """The received bytes cut before every ``$``, each piece timed by the read it began in,
        so that a frame split over two reads is still one piece."""
        pieces: list[Chunk] = []
        current = bytearray()
        started = 0.0
        for chunk in (c for c in recording.chunks if c.dir == "in"):
            for byte in chunk.data:
                if byte == 0x24 and current:  # '$'
                    pieces.append(Chunk(started, "in", bytes(current)))
                    current.clear()
                if not current:
                    started = chunk.t
                current.append(byte)
        if current:
            pieces.append(Chunk(started, "in", bytes(current)))
        return pieces

    def _adjust(self, piece: bytes) -> bytes:
        """A replayed HELLO answering a recorded RESET answers the driver's latest one instead."""
        if not self._slp1 or self._driver_nonce is None or b"HELLO" not in piece:
            return piece
        frames = SLP1Codec().feed(piece)
        if not frames or frames[0].type != "HELLO" or frames[0].args[-1:] == ("-",):
            return piece
        frame = frames[0]
        if frame.args[-1] not in self._recorded_nonces:
            return piece
        end = piece.index(b"\n") + 1
        self.rewritten_hellos += 1
        args = (*frame.args[:-1], self._driver_nonce)
        return SLP1Codec().encode(frame.seq, frame.type, args) + piece[end:]

    @property
    def in_waiting(self) -> int:
        self._release()
        return len(self._buf)

    @property
    def exhausted(self) -> bool:
        """True when every recorded byte has been read."""
        return not self._pending and not self._buf

    def read(self, size: int = 1) -> bytes:
        self._release()
        if not self._buf:
            time.sleep(self.timeout or 0)
            self._release()
        data = bytes(self._buf[:size])
        del self._buf[:size]
        return data

    def write(self, data: bytes) -> int:
        self.written += data
        if self._slp1:
            for frame in self._out_codec.feed(data):
                if frame.type == "RESET" and frame.args:
                    self._driver_nonce = frame.args[0]
        return len(data)

    def close(self) -> None:
        """Nothing to close."""
