"""Bytes <-> frames: the SLP/1 frame codec and the :class:`Codec` protocol.

A codec knows framing, checksums and field syntax, nothing else: no ACKs, no
sessions, no timers. :meth:`Codec.feed` takes whatever bytes arrived (any
chunking, any line noise) and returns the complete, checked frames; it never
raises on bad input, it counts it. A vendor protocol plugs in as another codec
that maps its bytes onto the same :class:`Frame` vocabulary (see docs/shoe.md).
"""

from __future__ import annotations

import binascii
import re
from dataclasses import asdict, dataclass
from typing import Protocol, runtime_checkable

from firmware_interfaces.shoe.errors import ShoeProtocolError

#: Longest frame, ``$`` to ``\n`` inclusive.
MAX_FRAME = 96
#: Sequence numbers wrap after this value.
SEQ_MODULO = 65536

_TYPE_RE = re.compile(r"[A-Z]+\Z")
_ARG_RE = re.compile(r"[\x20-\x7e]*\Z")
_HEX4 = frozenset(b"0123456789ABCDEF")


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded frame: sequence number, message type and arguments (all text)."""

    seq: int
    type: str
    args: tuple[str, ...] = ()


@dataclass(slots=True)
class CodecCounters:
    """What the decoder threw away, by reason (monotonic counters)."""

    frames: int = 0
    bad_crc: int = 0
    bad_syntax: int = 0
    overlong: int = 0
    resyncs: int = 0
    garbage_bytes: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, xorout 0)."""
    return binascii.crc_hqx(data, 0xFFFF)


@runtime_checkable
class Codec(Protocol):
    """Turns frames into bytes and bytes into frames for one wire protocol.

    ``feed`` must never raise on line noise: bad frames are dropped and counted
    in ``counters``. ``reset`` forgets a partial frame (after a reconnect).
    """

    name: str
    counters: CodecCounters

    def encode(self, seq: int, type: str, args: tuple[str, ...] | list[str] = ()) -> bytes: ...

    def feed(self, data: bytes) -> list[Frame]: ...

    def reset(self) -> None: ...


def check_field(kind: str, value: str) -> None:
    """Raise :class:`ShoeProtocolError` if ``value`` cannot be sent as an SLP/1 field."""
    if kind == "type":
        if not _TYPE_RE.match(value):
            raise ShoeProtocolError(f"frame type {value!r}: expected upper-case letters A-Z")
        return
    if not isinstance(value, str) or not _ARG_RE.match(value) or any(c in value for c in "$*,"):
        raise ShoeProtocolError(
            f"frame argument {value!r}: expected printable ASCII without '$', '*' or ','"
        )


class SLP1Codec:
    """The SLP/1 codec: ``$<seq>,<type>[,<arg>...]*<CRC16 hex>\\r\\n``.

    Decoding resynchronises on every ``$``, drops frames longer than
    :data:`MAX_FRAME` bytes, with a wrong CRC or with bad syntax, and counts
    each in :attr:`counters`.
    """

    name = "slp1"

    def __init__(self) -> None:
        self.counters = CodecCounters()
        self._buf = b""
        self._dropping = False  # inside an over-long frame: skip to the next '$'

    @property
    def buffered(self) -> int:
        """Bytes held back for a frame not yet complete (bounded: an over-long one is dropped)."""
        return len(self._buf)

    # -- encoding -----------------------------------------------------------
    def encode(self, seq: int, type: str, args: tuple[str, ...] | list[str] = ()) -> bytes:
        """The wire bytes of one frame; raises ShoeProtocolError for an unsendable field."""
        if not 0 <= seq < SEQ_MODULO:
            raise ShoeProtocolError(f"sequence number {seq}: expected 0..65535")
        check_field("type", type)
        for arg in args:
            check_field("arg", arg)
        body = ",".join((str(seq), type, *args)).encode("ascii")
        frame = b"$%s*%04X\r\n" % (body, crc16(body))
        if len(frame) > MAX_FRAME:
            raise ShoeProtocolError(
                f"{type} frame is {len(frame)} bytes; SLP/1 allows at most {MAX_FRAME}"
            )
        return frame

    # -- decoding -----------------------------------------------------------
    def reset(self) -> None:
        """Forget any partial frame (call after the transport was reopened)."""
        self._buf = b""
        self._dropping = False

    def feed(self, data: bytes) -> list[Frame]:
        """Frames completed by ``data``; never raises, whatever the bytes."""
        buf = self._buf + bytes(data) if self._buf else bytes(data)
        frames: list[Frame] = []
        counters = self.counters
        pos = 0
        n = len(buf)
        while pos < n:
            start = buf.find(b"$", pos)
            if start < 0:
                if not self._dropping:
                    counters.garbage_bytes += n - pos
                pos = n
                break
            if start > pos and not self._dropping:
                counters.garbage_bytes += start - pos
            self._dropping = False
            end = buf.find(b"\n", start + 1)
            if end < 0:
                # Partial frame: a later '$' restarts it; too long means drop it.
                last = buf.rfind(b"$", start + 1)
                if last > 0:
                    counters.resyncs += 1
                    start = last
                if n - start > MAX_FRAME:
                    counters.overlong += 1
                    self._dropping = True
                    pos = n
                else:
                    pos = start
                break
            inner = buf.rfind(b"$", start + 1, end)
            if inner > 0:
                counters.resyncs += 1
                start = inner
            pos = end + 1
            if pos - start > MAX_FRAME:
                counters.overlong += 1
                continue
            frame = self._parse(buf[start:pos])
            if frame is not None:
                frames.append(frame)
        self._buf = buf[pos:] if pos < n else b""
        return frames

    def _parse(self, raw: bytes) -> Frame | None:
        counters = self.counters
        # raw = b"$" body b"*" crc(4) b"\r\n"
        if len(raw) < 10 or raw[-2:] != b"\r\n" or raw[-7] != 0x2A:  # '*'
            counters.bad_syntax += 1
            return None
        crc_text = raw[-6:-2]
        body = raw[1:-7]
        if not _HEX4.issuperset(crc_text) or b"*" in body:
            counters.bad_syntax += 1
            return None
        if int(crc_text, 16) != binascii.crc_hqx(body, 0xFFFF):
            counters.bad_crc += 1
            return None
        try:
            text = body.decode("ascii")
        except UnicodeDecodeError:
            counters.bad_syntax += 1
            return None
        if not text.isprintable():
            counters.bad_syntax += 1
            return None
        fields = text.split(",")
        if len(fields) < 2:
            counters.bad_syntax += 1
            return None
        seq_text, type_ = fields[0], fields[1]
        if not (0 < len(seq_text) <= 5 and seq_text.isdigit() and seq_text.isascii()):
            counters.bad_syntax += 1
            return None
        seq = int(seq_text)
        if seq >= SEQ_MODULO or not _TYPE_RE.match(type_):
            counters.bad_syntax += 1
            return None
        counters.frames += 1
        return Frame(seq, type_, tuple(fields[2:]))


#: Codecs by name; a vendor codec registers here (``CODECS["acme"] = "pkg.mod:AcmeCodec"``).
CODECS: dict[str, str] = {"slp1": "firmware_interfaces.shoe.codec:SLP1Codec"}


def codec_by_name(name: str) -> Codec:
    """A new codec instance for a registered protocol name (imported lazily)."""
    import importlib

    try:
        target = CODECS[name]
    except KeyError:
        raise ShoeProtocolError(
            f"unknown shoe protocol {name!r}: known are {', '.join(sorted(CODECS))}"
        ) from None
    module_name, _, class_name = target.partition(":")
    codec: Codec = getattr(importlib.import_module(module_name), class_name)()
    return codec


__all__ = [
    "CODECS",
    "Codec",
    "CodecCounters",
    "Frame",
    "MAX_FRAME",
    "SEQ_MODULO",
    "SLP1Codec",
    "check_field",
    "codec_by_name",
    "crc16",
]
