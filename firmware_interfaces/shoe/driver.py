"""The shoe driver: a reader thread that runs :class:`ControllerLink` over a transport.

The driver is handed a function that opens its transport (production:
``lambda: serial.serial_for_url(url)``); it never opens a port by name. When
the transport fails (cable pulled: read error, EOF, port gone) it reports
link-down, closes it and calls the opener again with exponential backoff; the
link state survives, so no card is lost or repeated.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Sequence

import serial

from firmware_interfaces.shoe.codec import Codec, SLP1Codec
from firmware_interfaces.shoe.events import LinkState, ShoeEvent
from firmware_interfaces.shoe.guarantees import SMART_SHOE, ReaderGuarantees
from firmware_interfaces.shoe.link import ControllerLink
from firmware_interfaces.shoe.reader import ReaderEvents, Transport, close_quietly, read_available
from firmware_interfaces.shoe.stats import LinkStats
from firmware_interfaces.shoe.timing import DEFAULT_TIMING, LinkTiming

log = logging.getLogger(__name__)

#: What a failing port raises (pulled cable, vanished device, closed fd).
PORT_ERRORS = (serial.SerialException, OSError, ValueError)
_PORT_ERRORS = PORT_ERRORS


def open_url(url: str, *, baudrate: int = 115200, exclusive: bool = True) -> Callable[[], Transport]:
    """An opener for a shoe driver: a device path or any pyserial URL.

    ``/dev/ttyUSB0``, ``socket://host:port`` (serial-over-Ethernet), ``loop://``,
    or a pseudo-terminal path. 115200 baud 8N1, no flow control. A device is
    opened exclusively by default (a second process gets an error, not half
    the bytes). ``hid:/dev/input/eventN`` is a card reader that is a USB
    keyboard, read through evdev (the ``hid`` extra), grabbed exclusively.
    """
    if url.startswith("hid:"):
        from firmware_interfaces.shoe.hid import open_hid

        return open_hid(url[4:])

    def opener() -> Transport:
        return serial.serial_for_url(url, baudrate=baudrate, timeout=0.05, exclusive=exclusive)

    return opener


class ShoeDriver(ReaderEvents):
    """Controller side of SLP/1: delivers typed events, sends LOCK/UNLOCK/STATUS/RESET.

    Events go to ``listener`` (called on the reader thread: keep it quick) or,
    without one, to a queue read with :meth:`get_event`. With
    ``auto_ack=False`` a frame is acknowledged only when the consumer calls
    :meth:`ack` after durably recording the event, so a crash between delivery
    and commit loses nothing: the shoe retransmits. After a restart pass the
    journal's last link state as ``resume`` and its last dozen shoe events as
    ``recent_events`` (they let the link recognise cards the shoe re-sends
    under new seqs after a RESET).
    """

    guarantees: ReaderGuarantees = SMART_SHOE
    what = "shoe link"

    def __init__(
        self,
        open_transport: Callable[[], Transport],
        *,
        resume: LinkState | None = None,
        listener: Callable[[ShoeEvent], None] | None = None,
        auto_ack: bool = True,
        codec: Codec | None = None,
        clock: Callable[[], float] = time.monotonic,
        timing: LinkTiming = DEFAULT_TIMING,
        name: str = "shoe",
        recent_events: Sequence[ShoeEvent] = (),
    ) -> None:
        super().__init__(listener, name)
        self._open_transport = open_transport
        self._resume = resume
        self._recent_events = list(recent_events)
        self._auto_ack = auto_ack
        self._codec: Codec = codec if codec is not None else SLP1Codec()
        self._clock = clock
        self._timing = timing
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._stats = LinkStats()
        self._link: ControllerLink | None = None
        self._transport: Transport | None = None
        self._thread: threading.Thread | None = None
        self._opened_once = False

    # -- lifecycle ----------------------------------------------------------
    def start(self) -> None:
        """Start the reader thread (it opens the transport)."""
        if self._thread is not None:
            return
        self._link = ControllerLink(
            self._codec, now=self._clock(), resume=self._resume, auto_ack=self._auto_ack,
            timing=self._timing, stats=self._stats, recent_events=self._recent_events,
        )
        self._thread = threading.Thread(target=self._run, name=f"{self._name}-reader", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the reader thread and close the transport."""
        self._stop.set()
        with self._lock:
            transport = self._transport
        if transport is not None:
            cancel = getattr(transport, "cancel_read", None)
            if cancel is not None:
                try:
                    cancel()
                except _PORT_ERRORS:
                    pass
        if self._thread is not None and self._thread.is_alive():  # a stop can come before its start
            self._thread.join(timeout=5)
        with self._lock:
            self._close_transport()

    # -- consumer API -------------------------------------------------------
    def ack(self, event: ShoeEvent) -> None:
        """The consumer durably recorded ``event`` (only meaningful with ``auto_ack=False``)."""
        with self._lock:
            if self._link is not None and self._link.ack(event):
                self._flush()

    def lock(self) -> None:
        """Queue LOCK: no card can be drawn. Non-blocking; retransmitted until ACKed."""
        self._command("LOCK")

    def unlock(self) -> None:
        """Queue UNLOCK: the dealer may draw. Non-blocking; retransmitted until ACKed."""
        self._command("UNLOCK")

    def status(self) -> None:
        """Queue STATUS: the shoe answers with a ShoeStatus event."""
        self._command("STATUS")

    def reset(self) -> None:
        """Re-anchor the session with RESET (lossless: the shoe re-sends what was not ACKed)."""
        self._command("RESET")

    def _command(self, type_: str) -> None:
        with self._lock:
            if self._link is None:
                raise RuntimeError("ShoeDriver.start() must be called before sending commands")
            self._link.command(type_, self._clock())
            self._flush()

    @property
    def is_up(self) -> bool:
        """True while frames from the shoe arrive."""
        with self._lock:
            return self._link is not None and self._link.is_up

    @property
    def link_state(self) -> LinkState | None:
        """(boot id, seq) of the last delivered frame; None before any session."""
        with self._lock:
            return self._link.link_state if self._link is not None else self._resume

    @property
    def stats(self) -> LinkStats:
        """A snapshot of the link counters (decoder counters included)."""
        with self._lock:
            snapshot = dataclasses.replace(self._stats)
            c = self._codec.counters
        for key in ("bad_crc", "bad_syntax", "overlong", "resyncs", "garbage_bytes"):
            setattr(snapshot, key, getattr(c, key))
        return snapshot

    # -- reader thread ------------------------------------------------------
    def _run(self) -> None:
        backoff = self._timing.reopen_min
        last_tick = float("-inf")
        while not self._stop.is_set():
            try:
                if self._transport is None:
                    if not self._open():
                        self._stop.wait(backoff)
                        backoff = min(backoff * 2, self._timing.reopen_max)
                        continue
                    backoff = self._timing.reopen_min
                data = self._read()
                if data is None:
                    self._stop.wait(backoff)
                    continue
                now = self._clock()
                with self._lock:
                    assert self._link is not None
                    events = self._link.receive(self._codec.feed(data), now) if data else []
                    if now - last_tick >= self._timing.tick:
                        last_tick = now
                        events += self._link.tick(now)
                    self._flush()
                self._dispatch(events)
            except Exception:  # the top of a worker thread: log, keep the link alive
                log.exception("%s reader: unexpected error", self._name)
                self._stop.wait(self._timing.tick)

    def _open(self) -> bool:
        try:
            transport = self._open_transport()
            transport.timeout = self._timing.tick
        except _PORT_ERRORS as e:
            now = self._clock()
            with self._lock:
                assert self._link is not None
                events = self._link.transport_lost(f"cannot open the shoe port: {e}", now)
                events += self._link.tick(now)
            self._dispatch(events)
            return False
        with self._lock:
            assert self._link is not None
            self._transport = transport
            if self._opened_once:
                self._stats.reconnects += 1
            self._opened_once = True
            self._link.transport_opened(self._clock())
            self._flush()
        log.info("%s port open", self._name)
        return True

    def _read(self) -> bytes | None:
        """Bytes from the transport (b"" on timeout), or None when it failed."""
        try:
            return read_available(self._transport)
        except _PORT_ERRORS as e:
            self._lost(f"shoe port failed: {e}")
            return None

    def _lost(self, reason: str) -> None:
        now = self._clock()
        with self._lock:
            assert self._link is not None
            self._close_transport()
            events = self._link.transport_lost(reason, now)
        log.warning("%s: %s", self._name, reason)
        self._dispatch(events)

    def _close_transport(self) -> None:
        transport, self._transport = self._transport, None
        close_quietly(transport, _PORT_ERRORS)

    def _flush(self) -> None:
        """Write what the link wants to send (lock held)."""
        assert self._link is not None
        out = self._link.take_output()
        if out and self._transport is not None:
            try:
                self._transport.write(out)
            except _PORT_ERRORS as e:  # the reader notices the failure on its next read
                log.debug("%s write failed: %s", self._name, e)
