"""The controller's end of the SLP/1 link, as a pure state machine.

No threads, no transport, no clock: the caller passes decoded frames and the
time in, and takes events and bytes to send out. This is where the protocol's
rules live (go-back-N delivery, ACKs, one command at a time, RESET/HELLO
sessions, link-down). :class:`~firmware_interfaces.shoe.driver.ShoeDriver`
runs it on a reader thread.
"""

from __future__ import annotations

import logging
import random
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from firmware_interfaces.shoe.codec import Codec, Frame
from firmware_interfaces.shoe.errors import MalformedFrame
from firmware_interfaces.shoe.events import (
    LINK_ONLY_TYPES,
    CardDrawn,
    CutCard,
    Fault,
    Hello,
    LinkDown,
    LinkState,
    LinkUp,
    NewShoe,
    NoRead,
    ShoeEmpty,
    ShoeEvent,
    event_from_frame,
    parse_hello,
)
from firmware_interfaces.shoe.stats import LinkStats
from firmware_interfaces.shoe.timing import DEFAULT_TIMING, LinkTiming

log = logging.getLogger(__name__)

COMMANDS = frozenset({"LOCK", "UNLOCK", "STATUS", "RESET"})
WINDOW = 8
#: RESETs without an answering HELLO (while the shoe talks) before the link is reported down.
RESET_TRIES = 5
#: A counted frame this far from the shoe's last count is another frame under a wrapped seq.
SEQ_REUSE_GAP = 4 * WINDOW

CountedKey = tuple[str, str, int]


def counted_key(event: object) -> CountedKey | None:
    """What identifies a counted event (a card, no-read, cut, empty) within one shoe."""
    if isinstance(event, CardDrawn):
        return ("card", event.code, event.count)
    if isinstance(event, NoRead):
        return ("noread", "", event.count)
    if isinstance(event, CutCard):
        return ("cut", "", event.count)
    if isinstance(event, ShoeEmpty):
        return ("empty", "", event.count)
    return None
_HALF = 0x8000
_MASK = 0xFFFF


@dataclass
class _Command:
    seq: int
    type: str
    args: tuple[str, ...]
    wire: bytes
    sent_at: float


class ControllerLink:
    """Controller side of SLP/1, driven by :meth:`receive`, :meth:`tick` and commands.

    ``resume`` is the link state persisted with the last event (``None`` on a
    first start: the link then anchors a session with RESET/HELLO before it
    delivers anything). With ``auto_ack=False`` frames are ACKed only after
    :meth:`ack`; every ACK names the highest seq the consumer acknowledged.
    ``recent_events``: the last events the consumer recorded before a restart
    (a dozen is plenty); if the shoe re-sends one of those cards in a new
    session, it is recognised and not delivered twice.
    """

    def __init__(
        self,
        codec: Codec,
        *,
        now: float,
        resume: LinkState | None = None,
        auto_ack: bool = True,
        timing: LinkTiming = DEFAULT_TIMING,
        rng: random.Random | None = None,
        stats: LinkStats | None = None,
        recent_events: Iterable[ShoeEvent] = (),
    ) -> None:
        self.codec = codec
        self.timing = timing
        self.auto_ack = auto_ack
        self.stats = stats if stats is not None else LinkStats()
        self._rng = rng or random.SystemRandom()
        self._out: list[bytes] = []
        # session
        self._boot: str | None = resume.boot_id if resume else None
        self._expected: int | None = (resume.seq + 1) & _MASK if resume else None
        self._acked: int | None = resume.seq if resume else None
        self._awaiting_nonce: str | None = None
        self._last_reset_at = float("-inf")
        self._reset_tries = 0  # RESETs sent since the link was last anchored
        self._logged_once: set[str] = set()
        self._resync_wanted = False
        self._resync_for_stall = False  # the wanted RESET is only for a stall (cancelled if it clears)
        self._resync_since = self._resync_quiet_from = now
        self._tx_before_request_at = self._last_tx = float("-inf")
        self._now = now  # the latest time passed in (stamps what take_output hands out)
        self._pending: deque[list[int | bool]] = deque()  # [seq, acked_or_link_only]
        self._oos_since: float | None = None
        # Counted frames (unique within a shoe) delivered lately, and after a RESET the
        # ones the shoe may re-send under new seqs.
        self._recent: deque[CountedKey] = deque(maxlen=2 * WINDOW)
        for event in recent_events:
            key = counted_key(event)
            if key is not None and key not in self._recent:
                self._recent.append(key)
        self._last_count: int | None = None  # after a restart the first counted frame sets it
        # A controller that crashed during a RESET handshake may have recorded cards
        # that the shoe now re-sends under new seqs: skip those right after a resume.
        self._overlap: set[CountedKey] | None = (
            set(self._recent) if resume and self._recent else None
        )
        # liveness
        self._up: bool | None = None
        self._last_rx = now
        # commands
        self._cmd_seq = self._rng.randrange(65536)
        self._queue: deque[tuple[str, tuple[str, ...]]] = deque()
        self._inflight: _Command | None = None
        if resume is None:
            self._send_reset(now)

    # -- properties ---------------------------------------------------------
    @property
    def is_up(self) -> bool:
        """True while frames from the shoe arrive."""
        return bool(self._up)

    @property
    def link_state(self) -> LinkState | None:
        """The last delivered frame's (boot id, seq); None before any session."""
        if self._boot is None or self._expected is None:
            return None
        return LinkState(self._boot, (self._expected - 1) & _MASK)

    @property
    def expected_seq(self) -> int | None:
        """The seq the next delivered frame must carry; None before a session is anchored."""
        return self._expected

    @property
    def awaiting_nonce(self) -> str | None:
        """The nonce of a RESET sent and not yet answered by a HELLO, or None."""
        return self._awaiting_nonce

    @property
    def is_anchored(self) -> bool:
        """True when a session is anchored and frames are being delivered."""
        return self._awaiting_nonce is None and self._expected is not None

    @property
    def commands_waiting(self) -> int:
        """Commands queued or in flight (not yet acknowledged by the shoe)."""
        return len(self._queue) + (self._inflight is not None)

    def take_output(self) -> bytes:
        """Bytes to write to the shoe now (ACKs, commands, retransmissions)."""
        if not self._out:
            return b""
        self._last_tx = self._now
        out = b"".join(self._out)
        self._out.clear()
        return out

    # -- input --------------------------------------------------------------
    def receive(self, frames: list[Frame], now: float) -> list[ShoeEvent]:
        """Apply decoded frames from the shoe; returns the events they deliver."""
        events: list[ShoeEvent] = []
        if not frames:
            return events
        self._now = self._last_rx = now
        send_ack = False
        for frame in frames:
            self.stats.frames += 1
            t = frame.type
            if t == "ACK":
                self._on_command_ack(frame, now)
            elif t == "HELLO" and (frame.seq == 0 or self._answers_our_reset(frame)):
                send_ack |= self._on_hello(frame, now, events)
            elif not self.is_anchored:
                self.stats.undelivered += 1
            else:
                send_ack |= self._on_stream_frame(frame, now, events)
        if not self._up and self.is_anchored:
            # Up means usable: frames arrive and a session is anchored.
            self._up = True
            events.insert(0, LinkUp())
        if send_ack:
            self._send_ack()
        return events

    def _answers_our_reset(self, frame: Frame) -> bool:
        """A HELLO at seq > 0 that echoes the nonce we wait for (a shoe that numbers it wrongly)."""
        return (
            self._awaiting_nonce is not None and len(frame.args) >= 7
            and frame.args[6] == self._awaiting_nonce
        )

    def _log_once(self, key: str, message: str, *args: object) -> None:
        """Log a liveness event the first time it happens (they can repeat many times a second)."""
        if key in self._logged_once:
            log.debug(message, *args)
            return
        self._logged_once.add(key)
        log.warning(message, *args)

    def tick(self, now: float) -> list[ShoeEvent]:
        """Run the timers: link-down, RESET once a second, command retransmission."""
        events: list[ShoeEvent] = []
        t = self.timing
        self._now = now
        if self._up is not False and now - self._last_rx >= t.link_down:
            self._up = False
            self.stats.link_downs += 1
            events.append(LinkDown(f"no frame from the shoe for {now - self._last_rx:.1f} s"))
        if self._resync_wanted:
            self._maybe_resync(now)
        elif self._awaiting_nonce is not None and now - self._last_reset_at >= t.reset_interval:
            if self._reset_tries == RESET_TRIES and self._last_rx > self._last_reset_at:
                # The shoe talks but no HELLO anchors a session: say so (once per streak)
                # instead of looping silently.
                self._up = False
                self.stats.link_downs += 1
                events.append(LinkDown(
                    f"no HELLO answers RESET {self._awaiting_nonce} after {self._reset_tries} tries"
                ))
            self._send_reset(now)
        cmd = self._inflight
        if cmd is not None:
            # The spec's "link down" for retransmission is silence, anchored or not.
            hearing = now - self._last_rx < t.link_down
            interval = t.retransmit if hearing else t.slow_retransmit
            if now - cmd.sent_at >= interval:
                cmd.sent_at = now
                self._out.append(cmd.wire)
                self.stats.retransmissions += 1
        return events

    def transport_lost(self, reason: str, now: float) -> list[ShoeEvent]:
        """The transport failed (cable pulled): report link-down once, drop unsent bytes."""
        self._out.clear()
        self.codec.reset()
        if self._up is False:
            return []
        self._up = False
        self.stats.link_downs += 1
        return [LinkDown(reason)]

    def transport_opened(self, now: float) -> None:
        """The transport is back: send the command in flight again at once."""
        self.codec.reset()
        self._out.clear()
        if self._inflight is not None:
            self._inflight.sent_at = now
            self._out.append(self._inflight.wire)

    # -- commands -----------------------------------------------------------
    def command(self, type: str, now: float, args: tuple[str, ...] = ()) -> None:
        """Queue LOCK, UNLOCK or STATUS (sent one at a time); RESET resynchronises."""
        self._now = now
        if type == "RESET":
            self._request_resync(now)
            self._resync_for_stall = False  # asked for: goes out whatever the stream does
            return
        if type not in COMMANDS:
            raise ValueError(f"unknown shoe command {type!r}: expected one of {sorted(COMMANDS)}")
        # Commands are absolute: a queued LOCK/UNLOCK is superseded by a newer one, and a
        # queued STATUS is not asked twice (the queue stays short while the shoe is away).
        if type in ("LOCK", "UNLOCK"):
            self._queue = deque(c for c in self._queue if c[0] not in ("LOCK", "UNLOCK"))
        elif any(c[0] == type for c in self._queue):
            return
        self._queue.append((type, args))
        self._pump(now)

    def _pump(self, now: float) -> None:
        if self._inflight is None and self._queue:
            type_, args = self._queue.popleft()
            self._cmd_seq = (self._cmd_seq + 1) & _MASK
            wire = self.codec.encode(self._cmd_seq, type_, args)
            self._inflight = _Command(self._cmd_seq, type_, args, wire, now)
            self._out.append(wire)
            self.stats.commands_sent += 1

    def _on_command_ack(self, frame: Frame, now: float) -> None:
        cmd = self._inflight
        if cmd is None or frame.seq != cmd.seq:
            self.stats.stale_acks += 1
            return
        self._inflight = None
        self._pump(now)

    def _request_resync(self, now: float) -> None:
        """Ask for a RESET; it goes out once it cannot make the shoe re-send delivered frames.

        After a RESET the shoe re-sends, under new seqs, every frame it has not
        seen ACKed. So the RESET waits (a) until the consumer has ACKed every
        delivered event and (b) until our ACK has visibly reached the shoe: no
        retransmission of an ACKed frame for 1.5 retransmission intervals (or
        4 stall times at most, for a shoe that ignores our ACKs).
        """
        if self._awaiting_nonce is not None:
            return
        if not self._resync_wanted:
            self._resync_wanted = True
            self._resync_since = now
            self._tx_before_request_at = self._last_tx
        self._resync_quiet_from = now
        self._send_ack()
        self._maybe_resync(now)

    def _maybe_resync(self, now: float) -> None:
        if not self._resync_wanted or self._pending:
            return
        if self._acked is not None:
            # A shoe that heard nothing from us for link_down retransmits only once a second.
            t = self.timing
            interval = t.retransmit if self._tx_before_request_at > now - t.link_down \
                else t.slow_retransmit
            quiet = now - self._resync_quiet_from >= 1.5 * interval
            forced = now - self._resync_since >= 4 * self.timing.stall
            if not (quiet or forced):
                return
        self._send_reset(now)

    def _send_reset(self, now: float) -> None:
        """Send RESET with a fresh nonce; deliver nothing until its HELLO arrives."""
        self._resync_wanted = False
        nonce = f"{self._rng.randrange(1 << 32):08X}"
        self._awaiting_nonce = nonce
        self._reset_tries += 1
        self._last_reset_at = now
        self.stats.session_resyncs += 1
        # RESET pre-empts: a command in flight goes back to the head of the queue.
        cmd = self._inflight
        self._inflight = None
        if cmd is not None and cmd.type != "RESET":
            self._queue.appendleft((cmd.type, cmd.args))
        self._queue = deque(c for c in self._queue if c[0] != "RESET")
        self._queue.appendleft(("RESET", (nonce,)))
        self._pump(now)

    # -- shoe frames --------------------------------------------------------
    def _on_hello(self, frame: Frame, now: float, events: list[ShoeEvent]) -> bool:
        try:
            info = parse_hello(frame)
        except MalformedFrame as e:
            self.stats.protocol_errors += 1
            if self.is_anchored and frame.seq == self._expected:
                return self._on_stream_frame(frame, now, events)  # liveness: never stall on it
            self._log_once("bad-hello", "ignored %s", e)
            return False
        boot = info.boot_id.upper()
        if self._awaiting_nonce is not None:
            if info.nonce != self._awaiting_nonce:
                self.stats.stale_hellos += 1
                return False
            self._awaiting_nonce = None
            self._reset_tries = 0
            if frame.seq != 0:
                self.stats.protocol_errors += 1
                self._log_once("hello-seq", "shoe answered RESET with HELLO at seq %d (expected 0): "
                               "anchored there", frame.seq)
            had_session, power_on = self._boot is not None and self._boot != boot, False
        elif boot == self._boot:
            self.stats.duplicates += 1  # retransmission of the HELLO we delivered
            return self._acked is not None
        else:
            had_session, power_on = True, info.nonce == "-"
            log.warning("shoe started session %s (nonce %s) while we were in session %s",
                        boot, info.nonce, self._boot)
        # After a RESET the shoe re-sends every frame it had not seen ACKed, which can
        # include frames we delivered whose ACK was lost: remember them to skip them.
        overlap = set(self._recent) if had_session and not power_on else None
        self._start_session(boot)
        self._overlap = overlap or None
        if had_session and power_on:
            self._last_count = None  # its unACKed frames are lost: counts may jump
        new_session, resynced = had_session and power_on, had_session and not power_on
        link = LinkState(boot, frame.seq)
        self._expected = (frame.seq + 1) & _MASK
        events.append(
            Hello(info.vendor, info.model, info.serial, info.firmware, boot, info.nonce,
                  new_session, link, resynced)
        )
        return self._delivered(frame.seq, False)

    def _start_session(self, boot: str) -> None:
        # _recent is kept: after two RESETs in a row the shoe may re-send a frame we
        # delivered two sessions ago.
        self._boot = boot
        self._overlap = None
        self._pending.clear()
        self._acked = None
        self._oos_since = None
        self._resync_wanted = False

    def _on_stream_frame(self, frame: Frame, now: float, events: list[ShoeEvent]) -> bool:
        assert self._expected is not None and self._boot is not None
        diff = (frame.seq - self._expected) & _MASK
        if diff != 0:
            if diff < _HALF:
                self.stats.out_of_order += 1
                self._note_out_of_sequence(now)
                return False
            self.stats.duplicates += 1
            if self._acked is not None and ((self._acked - frame.seq) & _MASK) < _HALF:
                # We ACKed it already: that ACK was lost, or the shoe ignores our ACKs.
                self._resync_quiet_from = now
                self._note_out_of_sequence(now)
            return self._acked is not None
        if self._seq_reused(frame):
            # Not the frame due but one ~65536 frames later under the same seq (a shoe far
            # outside its window): refused like a frame out of sequence, so the link
            # resynchronises and the shoe numbers its frames again. Never delivered.
            self.stats.out_of_order += 1
            self._log_once("seq-reused", "shoe frame seq %d carries count %s, far from the "
                           "shoe's last count %s: not the frame due (the seq wrapped)",
                           frame.seq, frame.args[-1] if frame.args else "?", self._last_count)
            self._note_out_of_sequence(now)
            return False
        link = LinkState(self._boot, frame.seq)
        self._expected = (frame.seq + 1) & _MASK
        self._oos_since = None
        if self._resync_wanted and self._resync_for_stall:
            # The stall cleared by itself (in-order frames again): a RESET now would only
            # open a needless session once the stream goes quiet.
            self._resync_wanted = self._resync_for_stall = False
        if frame.type == "HELLO":
            # An earlier session's HELLO, re-sent after a RESET because it was never ACKed
            # (a shoe powered on before we listened). Liveness: ACK it and move on.
            self.stats.stale_hellos += 1
            self._log_once("old-hello", "ACKed an earlier session's HELLO re-sent at seq %d "
                           "(boot id %s); not a new session", frame.seq,
                           frame.args[5] if len(frame.args) > 5 else "?")
            return self._delivered(frame.seq, True)
        try:
            event = event_from_frame(frame, link)
        except MalformedFrame as e:
            self.stats.protocol_errors += 1
            log.warning("shoe frame not usable: %s", e)
            event = Fault("BADFRAME", str(e), link)
        key = counted_key(event)
        if key is not None:
            if self._overlap is not None:
                if key in self._overlap:
                    self.stats.duplicates += 1  # delivered in an earlier session
                    return self._delivered(frame.seq, True, count=False)
                self._overlap = None
            jump = self._count_jump(key)
            if jump is not None:
                # Told before the card, so a round in progress pauses first and the card is
                # then a card drawn while paused (a misdeal), never dealt on a count that lies.
                self.stats.protocol_errors += 1
                log.warning("shoe frame seq %d: %s", frame.seq, jump)
                events.append(Fault("COUNT", jump, link))
            if key not in self._recent:
                self._recent.append(key)
        elif isinstance(event, NewShoe):
            # Counts restart with a new shoe: a card of an earlier shoe with the same code
            # and count is another card. Keys are unique only within one shoe.
            self._recent.clear()
            self._overlap = None
            self._last_count = None
        if event is None:
            if frame.type in LINK_ONLY_TYPES:
                self.stats.heartbeats += 1
            else:
                self.stats.unknown_frames += 1
                self._log_once("unknown-" + frame.type, "ACKed a shoe frame of unknown type %s "
                               "(seq %d); further ones are counted in unknown_frames",
                               frame.type, frame.seq)
        else:
            events.append(event)
        return self._delivered(frame.seq, event is None)

    def _seq_reused(self, frame: Frame) -> bool:
        """A counted frame whose count is further from the last than any conforming shoe gets
        (more than a window's worth): the seq wrapped and this is another frame."""
        if self._last_count is None or frame.type not in ("CARD", "NOREAD", "CUT", "EMPTY"):
            return False
        text = frame.args[2] if frame.type == "CARD" and len(frame.args) > 2 else (
            frame.args[0] if frame.args and frame.type != "CARD" else "")
        if not (text.isdigit() and len(text) <= 9):
            return False  # malformed: delivered as a BADFRAME fault as before
        return abs(int(text) - self._last_count) > SEQ_REUSE_GAP

    def _count_jump(self, key: CountedKey) -> str | None:
        """Why a counted frame's count does not follow the last one of this shoe, or None.

        Within one shoe a card or no-read is the last count + 1; a cut card or an empty
        shoe repeats the last count (or is + 1, for shoes that count the cut card). Anything
        else means frames were lost or one was taken for another (a shoe far outside its
        window wraps the 16-bit seq). A new session started by the shoe itself (power-on:
        its unACKed frames are gone) or a new shoe restarts the check.
        """
        last = self._last_count
        kind, _, count = key
        self._last_count = count
        if last is None:
            return None
        allowed = (last + 1,) if kind in ("card", "noread") else (last, last + 1)
        if count in allowed:
            return None
        what = f"card {key[1]}" if kind == "card" else kind
        return (f"the shoe's count went from {last} to {count} ({what}): "
                "frames were lost or one was taken for another")

    def _note_out_of_sequence(self, now: float) -> None:
        """Only out-of-sequence frames for ``stall`` seconds: re-anchor with RESET."""
        if self._oos_since is None:
            self._oos_since = now
        elif now - self._oos_since >= self.timing.stall and self._awaiting_nonce is None:
            log.warning("shoe link stalled at expected seq %s: resynchronising", self._expected)
            self._oos_since = None
            fresh = not self._resync_wanted
            self._request_resync(now)
            if fresh:
                self._resync_for_stall = True

    def _delivered(self, seq: int, link_only: bool, count: bool = True) -> bool:
        """Record a delivered frame; True when an ACK should go out."""
        if count:
            self.stats.delivered += 1
        if self.auto_ack or (link_only and not self._pending):
            self._acked = seq
            return True
        self._pending.append([seq, link_only])
        return self._acked is not None

    def ack(self, event: ShoeEvent) -> bool:
        """The consumer durably recorded ``event``: ACK up to it. True if an ACK went out."""
        link = event.link
        if link is None or link.boot_id != self._boot or not self._pending:
            return False
        for entry in self._pending:
            if entry[0] == link.seq:
                entry[1] = True
                break
        else:
            return False
        advanced = False
        while self._pending and self._pending[0][1]:
            self._acked = int(self._pending.popleft()[0])
            advanced = True
        if advanced:
            self._send_ack()
        return advanced

    def _send_ack(self) -> None:
        if self._acked is None or self._boot is None:
            return
        self._out.append(self.codec.encode(self._acked, "ACK", (self._boot,)))
        self.stats.acks_sent += 1
