"""An independent SLP/1 smart card shoe (device side), written from the spec alone.

Source: ``/work/shared/specs/shoe-protocol.md`` (Shoe Link Protocol, version 1).
Nothing of the project's own shoe, codec or driver was read or imported; the
point of this module is to be a *second reading* of the spec, so that the
controller's driver can be tested against a shoe that shares none of its
interpretation.  Every place where the spec left a choice open is listed in
``README.md`` next to this file.

Layers
------
* Framing helpers: :func:`crc16`, :class:`Frame`, :func:`encode_frame`,
  :func:`decode_frame`, :class:`FrameReader`.
* :class:`ConformanceShoe`: the pure protocol core.  No threads, no I/O, time
  is always passed in, randomness comes from a seeded RNG.
* Runners that put the core on a real byte stream: :class:`PtyShoe` (a
  pseudo-terminal) and :class:`TcpShoe` (a serial-over-Ethernet adapter).
* :func:`deal_until`: a tiny auto-dealer.

Only the Python 3.11 standard library is used.
"""

from __future__ import annotations

import binascii
import errno
import fcntl
import logging
import os
import random
import re
import select
import socket
import threading
import time
import tty
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "MAX_FRAME",
    "CARD_RE",
    "FrameError",
    "Frame",
    "crc16",
    "encode_frame",
    "decode_frame",
    "FrameReader",
    "ShoeBehaviour",
    "ConformanceShoe",
    "PtyShoe",
    "TcpShoe",
    "deal_until",
]

log = logging.getLogger("conformance.slp1_shoe")

T = TypeVar("T")

# --------------------------------------------------------------------------
# Framing
# --------------------------------------------------------------------------

#: A frame is at most 96 bytes from ``$`` to ``\n`` inclusive.
MAX_FRAME = 96
#: Card code: rank ``A23456789TJQK`` followed by suit ``SHDC``.
CARD_RE = re.compile(r"\A[A23456789TJQK][SHDC]\Z")
_SEQ_RE = re.compile(rb"\A(0|[1-9][0-9]{0,4})\Z")  # canonical decimal, no leading zeros
_TYPE_RE = re.compile(rb"\A[A-Z]+\Z")
_CRC_RE = re.compile(rb"\A[0-9A-F]{4}\Z")
_NONCE_RE = re.compile(r"\A[0-9A-Fa-f]{8}\Z")
_FORBIDDEN_ARG_CHARS = frozenset("$*,")


class FrameError(ValueError):
    """A received frame is not acceptable; ``reason`` is ``crc``, ``syntax`` or ``length``."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


def crc16(body: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, xorout 0)."""
    return binascii.crc_hqx(body, 0xFFFF)


def _valid_arg(arg: str) -> bool:
    return all(0x20 <= ord(c) <= 0x7E and c not in _FORBIDDEN_ARG_CHARS for c in arg)


@dataclass(frozen=True)
class Frame:
    """One SLP/1 frame: ``$<seq>,<type>[,<arg>...]*<crc>\\r\\n``."""

    seq: int
    type: str
    args: tuple[str, ...] = ()

    @property
    def body(self) -> bytes:
        """The bytes between ``$`` and ``*`` (what the CRC covers)."""
        return ",".join((str(self.seq), self.type, *self.args)).encode("ascii")

    def encode(self) -> bytes:
        """The frame as it goes on the wire; raises ValueError if it is not valid SLP/1."""
        return encode_frame(self.seq, self.type, *self.args)


def encode_frame(seq: int, type_: str, *args: str) -> bytes:
    """Encode a frame, validating every field against the spec."""
    if not 0 <= seq <= 65535:
        raise ValueError(f"seq out of range: {seq}")
    if not _TYPE_RE.match(type_.encode("ascii", "replace")):
        raise ValueError(f"type must be upper-case letters: {type_!r}")
    for a in args:
        if not _valid_arg(a):
            raise ValueError(f"invalid argument {a!r}")
    body = ",".join((str(seq), type_, *args)).encode("ascii")
    wire = b"$" + body + b"*" + b"%04X" % crc16(body) + b"\r\n"
    if len(wire) > MAX_FRAME:
        raise ValueError(f"frame is {len(wire)} bytes, more than {MAX_FRAME}")
    return wire


def decode_frame(raw: bytes) -> Frame:
    """Decode one complete frame (``$`` .. ``\\n`` inclusive).

    Strict: raises :class:`FrameError` for anything that is not exactly the
    spec's syntax (see README for the strictness choices).
    """
    if len(raw) > MAX_FRAME:
        raise FrameError("length", f"{len(raw)} bytes")
    if not raw.startswith(b"$") or not raw.endswith(b"\r\n"):
        raise FrameError("syntax", "missing $ or CRLF")
    inner = raw[1:-2]
    star = inner.rfind(b"*")
    if star < 0:
        raise FrameError("syntax", "missing *")
    body, crc_text = inner[:star], inner[star + 1 :]
    if not _CRC_RE.match(crc_text):
        raise FrameError("syntax", f"bad CRC field {crc_text!r}")
    if any(b < 0x20 or b > 0x7E or b in b"$*" for b in body):
        raise FrameError("syntax", "forbidden byte in body")
    if int(crc_text, 16) != crc16(body):
        raise FrameError("crc", f"got {crc_text.decode()} want {crc16(body):04X}")
    fields = body.split(b",")
    if len(fields) < 2:
        raise FrameError("syntax", "need <seq>,<type>")
    if not _SEQ_RE.match(fields[0]) or int(fields[0]) > 65535:
        raise FrameError("syntax", f"bad seq {fields[0]!r}")
    if not _TYPE_RE.match(fields[1]):
        raise FrameError("syntax", f"bad type {fields[1]!r}")
    return Frame(int(fields[0]), fields[1].decode("ascii"), tuple(f.decode("ascii") for f in fields[2:]))


class FrameReader:
    """Incremental receiver: bytes in any chunking -> candidate frames.

    Discards bytes until ``$``; a ``$`` inside a partial frame restarts the
    frame; a frame that reaches 96 bytes without its ``\\n`` is discarded
    (over-length).  Returned candidates still have to pass :func:`decode_frame`.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._in_frame = False
        self.noise_bytes = 0  #: bytes discarded outside any frame
        self.restarts = 0  #: partial frames abandoned because a new ``$`` arrived
        self.overlong = 0  #: frames discarded for exceeding 96 bytes

    def reset(self) -> None:
        self._buf.clear()
        self._in_frame = False

    def feed(self, data: bytes) -> list[bytes]:
        out: list[bytes] = []
        for b in data:
            if b == 0x24:  # '$'
                if self._in_frame and self._buf:
                    self.restarts += 1
                self._buf = bytearray(b"$")
                self._in_frame = True
                continue
            if not self._in_frame:
                self.noise_bytes += 1
                continue
            self._buf.append(b)
            if b == 0x0A:  # '\n' ends every candidate frame
                out.append(bytes(self._buf))
                self.reset()
            elif len(self._buf) >= MAX_FRAME:
                self.overlong += 1
                self.reset()
        return out


# --------------------------------------------------------------------------
# Behaviour knobs
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ShoeBehaviour:
    """Knobs of the conformance shoe.  Defaults are the spec's values and a fault-free link.

    ``window``: max unacknowledged frames on the wire.
    ``retransmit``: seconds between retransmissions of the whole window.
    ``resend_after_reset``: on RESET re-send every never-acknowledged frame with
    new seqs (spec).  False = non-conforming shoe that drops them.
    ``resend_old_hellos``: when re-sending after RESET, include never-acknowledged
    HELLO frames of earlier sessions (spec, literally).  False = re-send only the
    non-HELLO frames (NEWSHOE and everything else are still re-sent).
    ``command_ack_delay``: handle the controller's commands (apply, ACK, GATE/STATE
    reply) this many seconds after they arrived.
    ``drop``/``corrupt``/``duplicate``: per-frame fault probabilities on every frame
    the shoe writes (first transmissions, retransmissions and its ACKs alike).
    ``rx_drop``: probability of ignoring a received controller frame.
    ``heartbeat``: seconds of idleness before an HB; ``<= 0`` disables HB.
    ``link_down_after``: seconds of silence from the controller before the link is
    considered down; then the window is retransmitted every ``down_retransmit``
    seconds (spec: once a second).
    ``baud``: runners pace their writes like a UART at this rate (10 bits per byte).
    """

    window: int = 8
    retransmit: float = 0.25
    resend_after_reset: bool = True
    resend_old_hellos: bool = True
    command_ack_delay: float = 0.0
    drop: float = 0.0
    corrupt: float = 0.0
    duplicate: float = 0.0
    rx_drop: float = 0.0
    heartbeat: float = 1.0
    link_down_after: float = 2.0
    vendor: str = "INDEP"
    model: str = "Conf-1"
    serial: str = "SN0001"
    firmware: str = "0.9"
    baud: int | None = None
    # Extra knob (not in the brief): the spec's "once a second" while the link is down.
    down_retransmit: float = 1.0

    def __post_init__(self) -> None:
        if not 1 <= self.window <= 32767:
            raise ValueError("window must be 1..32767 (go-back-N over a 16-bit seq space)")
        if self.retransmit <= 0 or self.down_retransmit <= 0:
            raise ValueError("retransmission intervals must be positive")
        for name in ("drop", "corrupt", "duplicate", "rx_drop"):
            p = getattr(self, name)
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name} must be a probability")
        for name in ("vendor", "model", "serial", "firmware"):
            if not _valid_arg(getattr(self, name)):
                raise ValueError(f"{name} contains characters SLP/1 forbids in an argument")
        if self.baud is not None and self.baud <= 0:
            raise ValueError("baud must be positive")
        # The longest HELLO (with an 8-hex nonce) must fit into 96 bytes.
        nonce = "FFFFFFFF"
        encode_frame(65535, "HELLO", self.vendor, self.model, self.serial, self.firmware, "SLP1", nonce, nonce)


# --------------------------------------------------------------------------
# Boot ids
# --------------------------------------------------------------------------

_boot_ids_lock = threading.Lock()
_boot_ids_used: set[str] = set()


def _new_boot_id(rng: random.Random) -> str:
    """8 upper-case hex digits, never repeated within this process."""
    with _boot_ids_lock:
        while True:
            bid = f"{rng.getrandbits(32):08X}"
            if bid not in _boot_ids_used:
                _boot_ids_used.add(bid)
                return bid


# --------------------------------------------------------------------------
# The protocol core
# --------------------------------------------------------------------------


@dataclass
class _Out:
    """A frame of the shoe's stream (never an ACK)."""

    seq: int
    type: str
    args: tuple[str, ...]
    wire: bytes = b""

    def __post_init__(self) -> None:
        self.wire = encode_frame(self.seq, self.type, *self.args)


@dataclass
class _Delayed:
    due: float
    frame: Frame
    order: int = 0


class ConformanceShoe:
    """Pure SLP/1 shoe core: no threads, no I/O; time is passed in.

    Powers on at ``now``: starts a session (HELLO seq 0, nonce ``-``), then
    queues ``NEWSHOE,<decks>``.  The gate starts LOCKED, the lid CLOSED.

    Introspection (read-only by convention):

    * ``drawn``: ``(code, count)`` of every card drawn and reported as CARD, in
      order - the ground truth.  Cards drawn with :meth:`draw_noread` are in
      ``noread_drawn`` instead (their count is the count in the NOREAD frame).
    * ``gate_locked``, ``lid_open``, ``boot_id``, ``nonce`` (of the current
      session's HELLO), ``count``, ``remaining``.
    * ``sent_frames``: distinct shoe frames (not ACKs) transmitted for the first time.
    * ``retransmissions``: repeated transmissions of such frames.
    * ``acks_sent``: ACK frames sent for the controller's commands.
    * ``resets_seen``: RESET commands that started a new session.
    * ``lost_on_reboot``: never-acknowledged frames lost by :meth:`reboot`.
    * ``unacked``: frames never acknowledged (on the wire *and* queued behind
      the window); ``in_flight``: those on the wire (at most ``window``).
    * ``commands``: ``(type, args)`` of every command applied, in order.
    * ``rx_errors``: dict of discarded received frames by reason.
    * ``faults``: dict of injected send faults (``drop``, ``corrupt``, ``duplicate``, ``rx_drop``).
    """

    def __init__(
        self,
        behaviour: ShoeBehaviour,
        *,
        cards: list[str],
        decks: int = 8,
        seed: int = 0,
        now: float,
    ) -> None:
        self.behaviour = behaviour
        self._rng = random.Random(f"slp1-faults:{seed}")
        self._boot_rng = random.Random(f"slp1-boot:{seed}")
        self._reader = FrameReader()
        self._out = bytearray()

        self._window: deque[_Out] = deque()  # sent, not yet acknowledged
        self._backlog: deque[_Out] = deque()  # queued behind the full window
        self._next_seq = 0
        self._rtx_due: float | None = None
        self._last_window_tx = now
        self._last_new_tx = now
        self._last_rx = now  # power-on counts as "heard from" (README, finding 9)
        self._delayed: list[_Delayed] = []
        self._delayed_order = 0
        self._last_command: tuple[int, bytes] | None = None

        self._cards: deque[str] = deque()
        self._power_on = now
        self.gate_locked = True
        self.lid_open = False
        self.count = 0
        self.decks = decks
        self.boot_id = ""
        self.nonce = "-"

        self.drawn: list[tuple[str, int]] = []
        self.noread_drawn: list[tuple[str, int]] = []
        self.commands: list[tuple[str, tuple[str, ...]]] = []
        self.sent_frames = 0
        self.retransmissions = 0
        self.acks_sent = 0
        self.resets_seen = 0
        self.lost_on_reboot = 0
        self.reboots = 0
        self.rx_frames = 0
        self.rx_errors: dict[str, int] = {"crc": 0, "syntax": 0, "length": 0, "restart": 0}
        self.acks_ignored = 0
        self.unknown_commands = 0
        self.bad_commands = 0
        self.faults: dict[str, int] = {"drop": 0, "corrupt": 0, "duplicate": 0, "rx_drop": 0}

        self._set_cards(cards)
        self._start_session("-", now)
        self._queue("NEWSHOE", (str(decks),), now)

    # ---- introspection ---------------------------------------------------

    @property
    def unacked(self) -> int:
        """Frames never acknowledged: in flight plus queued behind the window."""
        return len(self._window) + len(self._backlog)

    @property
    def in_flight(self) -> int:
        """Frames transmitted and not yet acknowledged (bounded by ``window``)."""
        return len(self._window)

    @property
    def remaining(self) -> int:
        """Cards still in the shoe."""
        return len(self._cards)

    @property
    def next_seq(self) -> int:
        return self._next_seq

    def pending_frames(self) -> list[Frame]:
        """Every never-acknowledged frame, in stream order (for tests)."""
        return [Frame(o.seq, o.type, o.args) for o in (*self._window, *self._backlog)]

    def link_up(self, now: float) -> bool:
        """Whether the shoe has heard a good frame from the controller recently."""
        return now - self._last_rx < self.behaviour.link_down_after

    # ---- dealer / device events -------------------------------------------

    def draw(self, now: float) -> str | None:
        """The dealer pulls a card.  None if the gate is locked or the shoe is empty;
        else the card's code, and ``CARD,<code>,RO,<count>`` is queued (plus
        ``EMPTY,<count>`` if that was the last card)."""
        if self.gate_locked or not self._cards:
            return None
        code = self._cards.popleft()
        self.count += 1
        self.drawn.append((code, self.count))
        self._queue("CARD", (code, "RO", str(self.count)), now)
        self._maybe_empty(now)
        return code

    def draw_noread(self, now: float) -> bool:
        """A card leaves the gate unidentified: ``NOREAD,<count>``.  False if none could leave."""
        if self.gate_locked or not self._cards:
            return False
        code = self._cards.popleft()
        self.count += 1
        self.noread_drawn.append((code, self.count))
        self._queue("NOREAD", (str(self.count),), now)
        self._maybe_empty(now)
        return True

    def cut(self, now: float) -> None:
        """The cut card comes out: ``CUT,<count>`` (the cut card is not counted)."""
        self._queue("CUT", (str(self.count),), now)

    def fault(self, code: str, text: str, now: float) -> None:
        """Report a device fault; characters SLP/1 forbids in arguments are replaced by ``_``."""
        clean = lambda s: "".join(c if _valid_arg(c) else "_" for c in s)  # noqa: E731
        self._queue("FAULT", (clean(code), clean(text)), now)

    def set_lid(self, is_open: bool, now: float) -> None:
        """Open or close the lid; ``LID,OPEN``/``LID,CLOSED`` when it changes."""
        if is_open != self.lid_open:
            self.lid_open = is_open
            self._queue("LID", ("OPEN" if is_open else "CLOSED",), now)

    def load(self, cards: list[str], decks: int, now: float) -> None:
        """A new shoe: cards loaded and lid closed.  ``LID,CLOSED`` first if the lid
        was open, then ``NEWSHOE,<decks>``; the count restarts at 0."""
        self._set_cards(cards)
        self.decks = decks
        self.count = 0
        if self.lid_open:
            self.lid_open = False
            self._queue("LID", ("CLOSED",), now)
        self._queue("NEWSHOE", (str(decks),), now)

    def reboot(self, now: float) -> None:
        """The shoe loses power on its own and comes back.

        New boot id, HELLO with nonce ``-``; never-acknowledged frames are lost
        (counted in ``lost_on_reboot``), as are delayed commands, bytes not yet
        written and a partial received frame.  The gate comes back LOCKED; cards,
        lid and count are physical and survive; no NEWSHOE (nothing was loaded).
        """
        self.lost_on_reboot += self.unacked
        self.reboots += 1
        self._window.clear()
        self._backlog.clear()
        self._delayed.clear()
        self._out.clear()
        self._reader.reset()
        self._last_command = None
        self._power_on = now
        self._last_rx = now
        self.gate_locked = True
        self._start_session("-", now)

    # ---- byte stream -------------------------------------------------------

    def receive(self, data: bytes, now: float) -> None:
        """Bytes from the controller, in any chunking; noise is tolerated."""
        for raw in self._reader.feed(data):
            if self.behaviour.rx_drop and self._rng.random() < self.behaviour.rx_drop:
                self.faults["rx_drop"] += 1
                continue
            try:
                frame = decode_frame(raw)
            except FrameError as e:
                self.rx_errors[e.reason] += 1
                log.debug("discarded frame %r: %s", raw, e)
                continue
            self.rx_frames += 1
            self._heard(now)
            if frame.type == "ACK":
                self._on_ack(frame, now)
            elif self.behaviour.command_ack_delay > 0:
                self._delayed_order += 1
                self._delayed.append(_Delayed(now + self.behaviour.command_ack_delay, frame, self._delayed_order))
            else:
                self._on_command(frame, now)
        self.rx_errors["length"] = self._reader.overlong
        self.rx_errors["restart"] = self._reader.restarts

    def tick(self, now: float) -> None:
        """Run the timers: delayed command handling, heartbeat, retransmission."""
        if self._delayed:
            due = sorted((d for d in self._delayed if d.due <= now), key=lambda d: (d.due, d.order))
            if due:
                self._delayed = [d for d in self._delayed if d.due > now]
                for d in due:
                    self._on_command(d.frame, now)
        hb = self.behaviour.heartbeat
        if hb > 0 and not self._window and not self._backlog and now - self._last_new_tx >= hb:
            self._queue("HB", (str(max(0, int((now - self._power_on) * 1000))),), now)
        self._pump(now)
        if self._window and self._rtx_due is not None and now >= self._rtx_due:
            for o in self._window:
                self.retransmissions += 1
                self._emit(o.wire)
            self._last_window_tx = now
            self._rtx_due = now + self._interval(now)

    def take_output(self) -> bytes:
        """Bytes to write to the controller now (faults already applied)."""
        data = bytes(self._out)
        self._out.clear()
        return data

    # ---- internals -----------------------------------------------------------

    def _set_cards(self, cards: Iterable[str]) -> None:
        cards = list(cards)
        for c in cards:
            if not CARD_RE.match(c):
                raise ValueError(f"not an SLP/1 card code: {c!r}")
        self._cards = deque(cards)

    def _maybe_empty(self, now: float) -> None:
        if not self._cards:
            self._queue("EMPTY", (str(self.count),), now)

    def _interval(self, now: float) -> float:
        b = self.behaviour
        return b.retransmit if self.link_up(now) else b.down_retransmit

    def _heard(self, now: float) -> None:
        was_down = not self.link_up(now)
        self._last_rx = now
        if was_down and self._rtx_due is not None:
            # The peer answers: back to the normal retransmission schedule.
            self._rtx_due = min(self._rtx_due, self._last_window_tx + self.behaviour.retransmit)

    def _start_session(self, nonce: str, now: float) -> None:
        self.boot_id = _new_boot_id(self._boot_rng)
        self.nonce = nonce
        self._next_seq = 0
        b = self.behaviour
        self._queue("HELLO", (b.vendor, b.model, b.serial, b.firmware, "SLP1", self.boot_id, nonce), now)

    def _queue(self, type_: str, args: tuple[str, ...], now: float) -> None:
        self._backlog.append(_Out(self._next_seq, type_, args))
        self._next_seq = (self._next_seq + 1) % 65536
        self._pump(now)

    def _pump(self, now: float) -> None:
        """Move frames from the backlog onto the wire while the window has room."""
        while self._backlog and len(self._window) < self.behaviour.window:
            o = self._backlog.popleft()
            if not self._window:
                self._rtx_due = now + self._interval(now)
                self._last_window_tx = now
            self._window.append(o)
            self.sent_frames += 1
            self._last_new_tx = now
            self._emit(o.wire)

    def _emit(self, wire: bytes) -> None:
        """Put one frame on the wire, applying the send faults."""
        b = self.behaviour
        if b.drop and self._rng.random() < b.drop:
            self.faults["drop"] += 1
            return
        if b.corrupt and self._rng.random() < b.corrupt:
            self.faults["corrupt"] += 1
            wire = self._corrupt(wire)
        self._out += wire
        if b.duplicate and self._rng.random() < b.duplicate:
            self.faults["duplicate"] += 1
            self._out += wire

    def _corrupt(self, wire: bytes) -> bytes:
        """Change one byte of the body or CRC; the result still looks like a frame."""
        star = wire.rindex(b"*")
        positions = [i for i in range(1, len(wire) - 2) if i != star]
        i = self._rng.choice(positions)
        alphabet = b"0123456789ABCDEF" if i > star else b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        choices = [c for c in alphabet if c != wire[i]]
        out = bytearray(wire)
        out[i] = self._rng.choice(choices)
        return bytes(out)

    def _on_ack(self, frame: Frame, now: float) -> None:
        if len(frame.args) != 1 or frame.args[0] != self.boot_id:
            self.acks_ignored += 1  # another session, or no session named
            return
        for i, o in enumerate(self._window):
            if o.seq == frame.seq:
                for _ in range(i + 1):  # an ACK covers every earlier frame
                    self._window.popleft()
                self._rtx_due = None
                if self._window:
                    self._rtx_due = now + self._interval(now)
                    self._last_window_tx = now
                self._pump(now)
                return
        self.acks_ignored += 1  # already acknowledged, or never sent

    def _send_ack(self, seq: int) -> None:
        self.acks_sent += 1
        self._emit(encode_frame(seq, "ACK"))

    def _on_command(self, frame: Frame, now: float) -> None:
        """Apply and ACK one command (every good non-ACK frame from the controller)."""
        key = (frame.seq, frame.body)
        repeat = key == self._last_command  # a retransmission of the last command
        self._last_command = key
        self._send_ack(frame.seq)
        t = frame.type
        if t in ("LOCK", "UNLOCK"):
            self.gate_locked = t == "LOCK"
            self.commands.append((t, frame.args))
            if not repeat:
                self._queue("GATE", ("LOCKED" if self.gate_locked else "UNLOCKED",), now)
        elif t == "STATUS":
            self.commands.append((t, frame.args))
            if not repeat:
                state = (
                    "LOCKED" if self.gate_locked else "UNLOCKED",
                    "OPEN" if self.lid_open else "CLOSED",
                    str(self.count),
                )
                self._queue("STATE", state, now)
        elif t == "RESET":
            if len(frame.args) != 1 or not _NONCE_RE.match(frame.args[0]):
                self.bad_commands += 1
                log.warning("RESET with a malformed nonce ACKed and ignored: %r", frame)
                return
            self.commands.append((t, frame.args))
            if frame.args[0] == self.nonce:
                return  # this session already answers that nonce (idempotent)
            self._reset(frame.args[0], now)
        else:
            self.unknown_commands += 1
            log.info("unknown command ACKed and ignored: %r", frame)

    def _reset(self, nonce: str, now: float) -> None:
        self.resets_seen += 1
        pending = [*self._window, *self._backlog]
        self._window.clear()
        self._backlog.clear()
        self._rtx_due = None
        if not self.behaviour.resend_after_reset:
            pending = []
        elif not self.behaviour.resend_old_hellos:
            pending = [o for o in pending if o.type != "HELLO"]
        self._start_session(nonce, now)
        for o in pending:
            self._queue(o.type, o.args, now)


# --------------------------------------------------------------------------
# Runners
# --------------------------------------------------------------------------


class _Pacer:
    """Token bucket: at most baud/10 bytes per second (None = unpaced)."""

    def __init__(self, baud: int | None) -> None:
        self.rate = None if baud is None else baud / 10.0
        self.credit = 0.0
        self.last = time.monotonic()

    def allowance(self, pending: int) -> int:
        if self.rate is None:
            return pending
        t = time.monotonic()
        self.credit = min(self.credit + (t - self.last) * self.rate, max(1.0, self.rate * 0.02))
        self.last = t
        n = min(pending, int(self.credit))
        self.credit -= n
        return n


class _Runner:
    """Common thread loop: receive, tick, write; never dies on an exception."""

    def __init__(self, shoe: ConformanceShoe, *, behaviour: ShoeBehaviour, clock: Callable[[], float]) -> None:
        self.shoe = shoe
        self.behaviour = behaviour
        self.clock = clock
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._tick = min(0.005, behaviour.retransmit / 8)
        self._pacer = _Pacer(behaviour.baud)
        self._txq = bytearray()  # bytes waiting for the (paced) line
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._closed = False
        self.errors = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.bytes_lost = 0

    def call(self, fn: Callable[[ConformanceShoe, float], T]) -> T:
        """Run ``fn(shoe, now)`` under the runner's lock and return its result."""
        with self._lock:
            result = fn(self.shoe, self.clock())
        self._wake()
        return result

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name=type(self).__name__, daemon=True)
        self._thread.start()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._close_io()
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self):  # type: ignore[no-untyped-def]
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def _drain_wake(self) -> None:
        try:
            while os.read(self._wake_r, 512):
                pass
        except OSError:
            pass

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._poll(self._tick)
                self._drain_wake()
                with self._lock:
                    now = self.clock()
                    if data:
                        self.bytes_in += len(data)
                        self.shoe.receive(data, now)
                    self.shoe.tick(now)
                    self._txq += self.shoe.take_output()
                self._flush()
            except Exception:  # the runner must never die
                self.errors += 1
                log.exception("%s loop error (continuing)", type(self).__name__)
                time.sleep(self._tick)

    def _flush(self) -> None:
        if not self._txq:
            return
        n = self._pacer.allowance(len(self._txq))
        if n <= 0:
            return
        chunk = bytes(self._txq[:n])
        del self._txq[:n]
        written = self._write(chunk)
        self.bytes_out += written
        self.bytes_lost += len(chunk) - written

    # subclass hooks
    def _poll(self, timeout: float) -> bytes:
        raise NotImplementedError

    def _write(self, data: bytes) -> int:
        raise NotImplementedError

    def _close_io(self) -> None:
        raise NotImplementedError


class PtyShoe(_Runner):
    """The shoe on a pseudo-terminal; the controller opens :attr:`path`.

    Both ends are raw; the master is non-blocking.  The runner does not keep the
    slave open, so while nobody has it open the master reports EIO and the
    shoe's bytes are dropped (lost on the wire), never blocking.
    """

    def __init__(
        self, shoe: ConformanceShoe, *, behaviour: ShoeBehaviour, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(shoe, behaviour=behaviour, clock=clock)
        self._master, slave = os.openpty()
        try:
            tty.setraw(self._master)
            tty.setraw(slave)
            self.path: str = os.ttyname(slave)
        finally:
            os.close(slave)
        fl = fcntl.fcntl(self._master, fcntl.F_GETFL)
        fcntl.fcntl(self._master, fcntl.F_SETFL, fl | os.O_NONBLOCK)
        self._listener = False

    def _poll(self, timeout: float) -> bytes:
        fds = [self._wake_r, self._master] if self._listener else [self._wake_r]
        r, _, _ = select.select(fds, [], [], timeout)
        try:
            data = os.read(self._master, 4096)
            self._listener = True
            return data
        except BlockingIOError:
            self._listener = True  # slave open, nothing to read
        except OSError as e:
            if e.errno != errno.EIO:
                raise
            self._listener = False  # nobody has the slave open
        return b""

    def _write(self, data: bytes) -> int:
        if not self._listener:
            return 0
        try:
            return os.write(self._master, data)
        except BlockingIOError:
            return 0
        except OSError as e:
            if e.errno == errno.EIO:
                self._listener = False
                return 0
            raise

    def _close_io(self) -> None:
        try:
            os.close(self._master)
        except OSError:
            pass


class TcpShoe(_Runner):
    """The shoe behind a serial-over-Ethernet adapter on 127.0.0.1:<free port>.

    :attr:`url` is ``socket://127.0.0.1:PORT``.  One client at a time: a new
    connection replaces the old one.  Bytes written while no client is connected
    are lost on the wire.
    """

    def __init__(
        self, shoe: ConformanceShoe, *, behaviour: ShoeBehaviour, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(shoe, behaviour=behaviour, clock=clock)
        self._srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._srv.bind(("127.0.0.1", 0))
        self._srv.listen(4)
        self._srv.setblocking(False)
        self.port: int = self._srv.getsockname()[1]
        self.url: str = f"socket://127.0.0.1:{self.port}"
        self._client: socket.socket | None = None
        self._refuse_until = 0.0  # time.monotonic() based, real time
        self.connections = 0
        self.refused = 0

    @property
    def connected(self) -> bool:
        return self._client is not None

    def pull_cable(self, seconds: float) -> None:
        """Close the client connection now and refuse new ones for ``seconds``.
        The shoe core keeps running; what it sends meanwhile is lost."""
        with self._lock:
            self._refuse_until = time.monotonic() + seconds
            self._drop_client()

    def _drop_client(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            except OSError:
                pass
            self._client = None

    def _poll(self, timeout: float) -> bytes:
        fds: list[object] = [self._wake_r, self._srv]
        client = self._client
        if client is not None:
            fds.append(client)
        try:
            r, _, _ = select.select(fds, [], [], timeout)
        except (OSError, ValueError):  # the client was closed by pull_cable meanwhile
            return b""
        if self._srv in r:
            self._accept()
        if client is not None and client is self._client and client in r:
            try:
                data = client.recv(4096)
            except (BlockingIOError, InterruptedError):
                return b""
            except OSError:
                data = b""
            if not data:  # peer closed
                with self._lock:
                    if client is self._client:
                        self._drop_client()
                return b""
            return data
        return b""

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._srv.accept()
            except (BlockingIOError, InterruptedError):
                return
            with self._lock:
                if time.monotonic() < self._refuse_until:
                    self.refused += 1
                    conn.close()
                    continue
                conn.setblocking(False)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._drop_client()
                self._client = conn
                self.connections += 1

    def _write(self, data: bytes) -> int:
        client = self._client
        if client is None:
            return 0
        try:
            return client.send(data)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError:
            with self._lock:
                if client is self._client:
                    self._drop_client()
            return 0

    def _close_io(self) -> None:
        self._drop_client()
        try:
            self._srv.close()
        except OSError:
            pass


# --------------------------------------------------------------------------
# Auto-dealer
# --------------------------------------------------------------------------


def deal_until(runner: PtyShoe | TcpShoe, n_cards: int, *, every: float = 0.0, timeout: float = 30) -> list[str]:
    """Draw whenever the gate is unlocked until ``n_cards`` have been drawn.

    Returns the codes drawn.  Raises :class:`TimeoutError` after ``timeout``
    seconds (the partial list is in the exception's ``drawn`` attribute) and
    :class:`RuntimeError` if the shoe runs out of cards first.
    """
    drawn: list[str] = []
    deadline = time.monotonic() + timeout
    while len(drawn) < n_cards:
        code, remaining = runner.call(lambda s, now: (s.draw(now), s.remaining))
        if code is not None:
            drawn.append(code)
            if every > 0 and len(drawn) < n_cards:
                time.sleep(every)
            continue
        if remaining == 0:
            raise RuntimeError(f"shoe empty after {len(drawn)} of {n_cards} cards")
        if time.monotonic() >= deadline:
            err = TimeoutError(f"only {len(drawn)} of {n_cards} cards drawn in {timeout}s (gate locked?)")
            err.drawn = drawn  # type: ignore[attr-defined]
            raise err
        time.sleep(0.005)
    return drawn
