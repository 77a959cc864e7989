"""The shoe's end of the SLP/1 link, as a pure state machine (no threads, no transport).

It numbers outgoing frames, keeps at most 8 unacknowledged and retransmits
them in order, sends HB when idle, ACKs every good command frame and runs
sessions (HELLO at power-on and on RESET, re-sending what was never
acknowledged under new seqs). The simulated shoe drives it.
"""

from __future__ import annotations

import logging
import secrets
from collections import deque
from dataclasses import asdict, dataclass

from firmware_interfaces.shoe.codec import Codec, Frame
from firmware_interfaces.shoe.events import is_boot_id
from firmware_interfaces.shoe.timing import DEFAULT_TIMING, LinkTiming

log = logging.getLogger(__name__)

WINDOW = 8
_MASK = 0xFFFF
#: Frame types not worth re-sending in a new session (stale by then).
_NOT_RESENT = frozenset({"HB", "HELLO"})


@dataclass(frozen=True)
class ShoeInfo:
    """What the shoe says about itself in HELLO."""

    vendor: str = "OPENTABLE"
    model: str = "SimShoe-8"
    serial: str = "SIM0001"
    firmware: str = "1.0.0"


@dataclass
class DeviceStats:
    """Counters of the shoe's side of the link."""

    frames_sent: int = 0
    retransmissions: int = 0
    acks_received: int = 0
    stale_acks: int = 0
    other_session_acks: int = 0
    commands: int = 0
    duplicate_commands: int = 0
    sessions: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class _Sent:
    seq: int
    type: str
    args: tuple[str, ...]
    wire: bytes
    sent_at: float


def new_boot_id(previous: str | None = None) -> str:
    """8 random hex digits, never equal to ``previous`` (not seeded: unique across runs)."""
    while True:
        boot = f"{secrets.randbits(32):08X}"
        if boot != previous:
            return boot


class DeviceLink:
    """Shoe side of SLP/1. ``receive`` returns the new commands for the device to apply."""

    def __init__(
        self, codec: Codec, *, now: float, info: ShoeInfo = ShoeInfo(),
        timing: LinkTiming = DEFAULT_TIMING,
    ) -> None:
        self.codec = codec
        self.info = info
        self.timing = timing
        self.stats = DeviceStats()
        self.boot_id = ""
        self.nonce = "-"
        self._next_seq = 0
        self._unacked: deque[_Sent] = deque()
        self._pending: deque[tuple[str, tuple[str, ...]]] = deque()
        self._out: list[bytes] = []
        self._last_rx = float("-inf")
        self._last_tx = now
        self._powered_at = now
        self._last_cmd: tuple[int, str] | None = None

    # -- sessions -----------------------------------------------------------
    def power_on(self, now: float) -> None:
        """Boot: unacknowledged frames are lost; new boot id; HELLO with nonce '-'."""
        self._unacked.clear()
        self._pending.clear()
        self._powered_at = now
        self._last_cmd = None
        self._start_session("-", now, resend=[])

    def _start_session(
        self, nonce: str, now: float, resend: list[tuple[str, tuple[str, ...]]]
    ) -> None:
        self.boot_id = new_boot_id(self.boot_id or None)
        self.nonce = nonce
        self.stats.sessions += 1
        self._next_seq = 0
        self._unacked.clear()
        i = self.info
        self._pending = deque(
            [("HELLO", (i.vendor, i.model, i.serial, i.firmware, "SLP1", self.boot_id, nonce))]
        )
        self._pending.extend(resend)
        self._pump(now)

    # -- sending ------------------------------------------------------------
    def send(self, type: str, args: tuple[str, ...], now: float) -> None:
        """Queue a frame; it goes out as soon as the window has room."""
        self._pending.append((type, args))
        self._pump(now)

    def _pump(self, now: float) -> None:
        while self._pending and len(self._unacked) < WINDOW:
            type_, args = self._pending.popleft()
            seq = self._next_seq
            self._next_seq = (seq + 1) & _MASK
            wire = self.codec.encode(seq, type_, args)
            self._unacked.append(_Sent(seq, type_, args, wire, now))
            self._out.append(wire)
            self._last_tx = now
            self.stats.frames_sent += 1

    @property
    def unacknowledged(self) -> int:
        """Frames sent or queued that the controller has not acknowledged."""
        return len(self._unacked) + len(self._pending)

    @property
    def unacked_types(self) -> list[str]:
        return [s.type for s in self._unacked] + [t for t, _ in self._pending]

    def take_output(self) -> list[bytes]:
        """Frames to write now, one bytes object per frame (faults apply per frame)."""
        out, self._out = self._out, []
        return out

    def peer_heard(self, now: float) -> bool:
        """True when the controller sent a frame within the link-down time."""
        return now - self._last_rx < self.timing.link_down

    # -- input --------------------------------------------------------------
    def receive(self, frames: list[Frame], now: float) -> list[Frame]:
        """Apply frames from the controller; returns new commands (not duplicates, not RESET)."""
        commands: list[Frame] = []
        for frame in frames:
            self._last_rx = now
            if frame.type == "ACK":
                self._on_ack(frame, now)
                continue
            self._out.append(self.codec.encode(frame.seq, "ACK"))
            duplicate = self._last_cmd == (frame.seq, frame.type)
            self._last_cmd = (frame.seq, frame.type)
            if frame.type == "RESET":
                self._on_reset(frame, now)
            elif duplicate:
                self.stats.duplicate_commands += 1
            else:
                self.stats.commands += 1
                commands.append(frame)
        return commands

    def _on_ack(self, frame: Frame, now: float) -> None:
        if not frame.args or frame.args[0].upper() != self.boot_id:
            self.stats.other_session_acks += 1
            return
        if not self._unacked:
            self.stats.stale_acks += 1
            return
        offset = (frame.seq - self._unacked[0].seq) & _MASK
        if offset >= len(self._unacked):
            self.stats.stale_acks += 1
            return
        for _ in range(offset + 1):
            self._unacked.popleft()
        self.stats.acks_received += 1
        self._pump(now)

    def _on_reset(self, frame: Frame, now: float) -> None:
        nonce = frame.args[0] if frame.args else ""
        if not is_boot_id(nonce):
            log.warning("ignored RESET with a malformed nonce %r", nonce)
            return
        if nonce == self.nonce:
            self.stats.duplicate_commands += 1  # a retransmitted RESET: same session
            return
        resend = [(s.type, s.args) for s in self._unacked if s.type not in _NOT_RESENT]
        resend += [(t, a) for t, a in self._pending if t not in _NOT_RESENT]
        self._start_session(nonce, now, resend)

    # -- timers -------------------------------------------------------------
    def tick(self, now: float) -> None:
        """Retransmit the window (250 ms; 1 s once the controller went quiet); HB when idle."""
        t = self.timing
        if self._unacked:
            interval = t.retransmit if self.peer_heard(now) else t.slow_retransmit
            if now - self._unacked[0].sent_at >= interval:
                for sent in self._unacked:
                    sent.sent_at = now
                    self._out.append(sent.wire)
                    self.stats.retransmissions += 1
        elif not self._pending and now - self._last_tx >= t.heartbeat:
            self.send("HB", (str(int((now - self._powered_at) * 1000)),), now)
