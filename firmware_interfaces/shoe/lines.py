"""Plain card readers: one card per line, no frame, no sequence number, no acknowledgement.

Many table readers (barcode, RFID, optical) send ``AS\\r\\n``, ``10H\\n`` or
``qd\\r\\n``, sometimes wrapped in STX/ETX, behind a label (``CARD:``), a
serial number or a timestamp. :class:`LineCardParser` finds the card code in
such a line whatever the common framing; :class:`LineReaderDriver` runs it on a
reader thread over any transport, behind the same interface as the SLP/1
:class:`~firmware_interfaces.shoe.driver.ShoeDriver`.

What such a reader cannot do (docs/shoe.md): it does not retransmit (a card
sent while the cable is out is lost), it does not count, it has no gate and
no sessions. The driver reports what it can see instead: a reconnect after an
outage is a ``ReaderNotice("gap")``, the same card twice within
``repeat_window`` seconds is a ``ReaderNotice("repeat")`` (a line read twice), not a
second card, and two cards closer together than ``burst_window`` is a
``ReaderNotice("burst")`` after the second card.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from firmware_interfaces.shoe.driver import PORT_ERRORS
from firmware_interfaces.shoe.errors import ShoeProtocolError
from firmware_interfaces.shoe.events import (
    RANKS,
    SUITS,
    CardDrawn,
    LinkDown,
    LinkState,
    LinkUp,
    ReaderNotice,
    ShoeEvent,
)
from firmware_interfaces.shoe.guarantees import LINE_READER, ReaderGuarantees
from firmware_interfaces.shoe.reader import ReaderEvents, Transport, close_quietly, read_available
from firmware_interfaces.shoe.timing import DEFAULT_TIMING, LinkTiming

log = logging.getLogger(__name__)

#: Longest line kept; a longer one is dropped up to its end (a reader never sends one).
MAX_LINE = 128
#: ``reader`` of a :class:`CardDrawn` that came from a line reader.
LINE_READER_MARK = "L"

_CARD_TOKEN = re.compile(r"(10|[A2-9TJQK])([SHDC])\Z")
_SEPARATORS = re.compile(r"[^0-9A-Z]+")
# Printable ASCII, tab, STX and ETX: anything else in a line is line noise, not a reader.
_LINE_BYTES = frozenset(range(0x20, 0x7F)) | {0x09, 0x02, 0x03}


@dataclass(frozen=True, slots=True)
class LineRead:
    """One line from the reader: the card it names (``TS``), or None and why not."""

    text: str
    code: str | None
    reason: str = ""


@dataclass(slots=True)
class LineCounters:
    """What the parser saw, by kind (monotonic counters)."""

    lines: int = 0
    cards: int = 0
    not_cards: int = 0  # keep-alives, status lines, labels without a card
    ambiguous: int = 0  # two or more card-like tokens: refused
    garbage_lines: int = 0  # bytes no reader sends (line noise)
    overlong: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def normalise_card(rank: str | None, suit: str | None) -> str | None:
    """``("10", "h")`` -> ``"TH"``; None when it is no card (a pattern group that matched
    nothing is None)."""
    if rank is None or suit is None:
        return None
    rank, suit = rank.upper(), suit.upper()
    if rank == "10":
        rank = "T"
    if len(rank) != 1 or rank not in RANKS or len(suit) != 1 or suit not in SUITS:
        return None
    return rank + suit


class LineCardParser:
    """Bytes from a line reader -> :class:`LineRead` per line; never raises on line noise.

    Lines end with CR LF, LF or CR. Without ``pattern`` the card is the one
    token of the line (split at anything but letters and digits, either case)
    that is a rank ``A 2-9 10 T J Q K`` followed by a suit ``S H D C``:
    ``\\x02KH\\x03``, ``CARD:10h``, ``0007 KH``, ``12:03:44.120 QD`` all read.
    A line with no such token (``HB``, ``READY``, ``SHOE EMPTY``) is not a
    card; a line with two (``KH 7C``) is refused as ambiguous rather than
    guessed. A line with bytes no reader sends (binary noise) is dropped.

    ``pattern``: a regular expression (searched, case-insensitive) with named
    groups ``rank`` and ``suit``, for readers the default does not fit (e.g.
    suit first: ``(?P<suit>[SHDC])(?P<rank>10|[A2-9TJQK])``).
    """

    def __init__(self, pattern: str | None = None, *, max_line: int = MAX_LINE) -> None:
        self.counters = LineCounters()
        self.max_line = max_line
        self._pattern: re.Pattern[str] | None = None
        if pattern is not None:
            self._pattern = compile_pattern(pattern)
        self._buf = bytearray()
        self._dropping = False

    def reset(self) -> None:
        """Forget a partial line (after a reconnect)."""
        self._buf.clear()
        self._dropping = False

    def feed(self, data: bytes) -> list[LineRead]:
        """The lines completed by ``data``, each read."""
        out: list[LineRead] = []
        for byte in data:
            if byte in (0x0A, 0x0D):
                line, dropping = bytes(self._buf), self._dropping
                self._buf.clear()  # first: a line that cannot be read never holds up the next
                self._dropping = False
                if line and not dropping:
                    out.append(self.read_line(line))
                continue
            if self._dropping:
                continue
            if len(self._buf) >= self.max_line:
                self.counters.overlong += 1
                self._buf.clear()
                self._dropping = True
                continue
            self._buf.append(byte)
        return out

    def read_line(self, raw: bytes) -> LineRead:
        """Read one line (without its line end)."""
        c = self.counters
        c.lines += 1
        text = raw.decode("latin-1")
        if not _LINE_BYTES.issuperset(raw):
            c.garbage_lines += 1
            return LineRead(text, None, "line noise")
        if self._pattern is not None:
            match = self._pattern.search(text)
            code = normalise_card(match["rank"], match["suit"]) if match else None
            if code is None:
                c.not_cards += 1
                return LineRead(text, None, "no card matches the pattern")
            c.cards += 1
            return LineRead(text, code)
        found = [
            m for m in (_CARD_TOKEN.match(t) for t in _SEPARATORS.split(text.upper())) if m
        ]
        if not found:
            if text.strip(" \t\x02\x03"):
                c.not_cards += 1
            else:
                c.lines -= 1  # only spaces or STX/ETX: nothing was said
            return LineRead(text, None, "no card code in the line")
        if len(found) > 1:
            c.ambiguous += 1
            return LineRead(text, None, f"{len(found)} card codes in one line")
        code = normalise_card(found[0][1], found[0][2])
        assert code is not None
        c.cards += 1
        return LineRead(text, code)


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Check a reader pattern; raises ShoeProtocolError naming what is wrong."""
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except (re.error, OverflowError, RecursionError, ValueError) as e:
        raise ShoeProtocolError(f"line reader pattern {pattern[:60]!r}: {e or type(e).__name__}") from None
    missing = {"rank", "suit"} - set(compiled.groupindex)
    if missing:
        raise ShoeProtocolError(
            f"line reader pattern {pattern!r}: needs the named group(s) "
            f"{', '.join(sorted(missing))}, e.g. (?P<rank>10|[A2-9TJQK])(?P<suit>[SHDC])"
        )
    return compiled


@dataclass
class LineReaderStats:
    """Counters of one line-reader driver since it started (monotonic)."""

    lines: int = 0
    cards: int = 0
    not_cards: int = 0
    ambiguous: int = 0
    garbage_lines: int = 0
    overlong: int = 0
    delivered: int = 0
    repeats: int = 0
    bursts: int = 0
    gaps: int = 0
    link_downs: int = 0
    reconnects: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class LineReaderDriver(ReaderEvents):
    """A plain line reader behind the shoe driver's interface.

    Events: ``LinkUp`` when the port opens, ``LinkDown`` when it fails,
    ``CardDrawn(code, "L", count, link=None)`` per card line (``count`` is the
    driver's own count since it started: the reader gives none), and
    ``ReaderNotice`` for what the driver can tell went wrong (``gap``,
    ``repeat``, ``burst``, ``unreadable``); ``repeat_window`` or
    ``burst_window`` 0 turns that check off. ``lock``/``unlock``/``status``/``reset`` do
    nothing (no gate, no sessions) and ``ack`` has nothing to acknowledge;
    :attr:`guarantees` says so to the controller.
    """

    guarantees: ReaderGuarantees = LINE_READER
    what = "card reader"

    def __init__(
        self,
        open_transport: Callable[[], Transport],
        *,
        listener: Callable[[ShoeEvent], None] | None = None,
        pattern: str | None = None,
        repeat_window: float = 0.5,
        burst_window: float = 0.15,
        clock: Callable[[], float] = time.monotonic,
        timing: LinkTiming = DEFAULT_TIMING,
        name: str = "reader",
        **_slp1_options: object,  # resume=, auto_ack=, recent_events= mean nothing here
    ) -> None:
        super().__init__(listener, name)
        self._down_reason = "the reader's port has not opened yet"
        self._open_transport = open_transport
        self.parser = LineCardParser(pattern)
        self.repeat_window = repeat_window
        self.burst_window = burst_window
        self._clock = clock
        self._timing = timing
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._stats = LineReaderStats()
        self._transport: Transport | None = None
        self._thread: threading.Thread | None = None
        self._count = 0
        self._last_card: tuple[str, float] | None = None
        self._down_since: float | None = None
        self._reported_down = False
        self._opened_once = False

    # -- lifecycle ----------------------------------------------------------
    def start(self) -> None:
        """Start the reader thread (it opens the transport)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"{self._name}-reader", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop the reader thread and close the transport."""
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():  # a stop can come before its start
            self._thread.join(timeout=5)
        self._close_transport()

    # -- the shoe driver's interface ------------------------------------------
    def ack(self, event: ShoeEvent) -> None:
        """Nothing to acknowledge: a line reader never hears back."""

    def lock(self) -> None:
        """No gate: nothing to lock."""

    def unlock(self) -> None:
        """No gate: nothing to unlock."""

    def status(self) -> None:
        """A line reader cannot be asked for its state."""

    def reset(self) -> None:
        """No sessions: nothing to reset."""

    @property
    def is_up(self) -> bool:
        """True while the reader's port is open (silence is normal for a line reader)."""
        return self._up.is_set()

    @property
    def link_state(self) -> LinkState | None:
        """A line reader has no link state to persist."""
        return None

    @property
    def stats(self) -> LineReaderStats:
        """A snapshot of the counters (the parser's included)."""
        with self._lock:
            snapshot = LineReaderStats(**self._stats.as_dict())
        for key, value in self.parser.counters.as_dict().items():
            setattr(snapshot, key, value)
        return snapshot

    def events_from(self, data: bytes, now: float) -> list[ShoeEvent]:
        """The events that bytes read from the reader at ``now`` amount to, in order (what the
        reader thread does with each chunk it reads, before it dispatches them). A partial
        line is kept until its end arrives."""
        events: list[ShoeEvent] = []
        for line in self.parser.feed(data):
            events += self._on_line(line, now)
        return events

    # -- reader thread --------------------------------------------------------
    def _run(self) -> None:
        backoff = self._timing.reopen_min
        while not self._stop.is_set():
            try:
                if self._transport is None:
                    if not self._open():
                        self._stop.wait(backoff)
                        backoff = min(backoff * 2, self._timing.reopen_max)
                    else:
                        backoff = self._timing.reopen_min
                    continue
                data = self._read()
                if data:
                    self._dispatch(self.events_from(data, self._clock()))
            except Exception:  # the top of a worker thread: log, keep reading
                log.exception("%s reader: unexpected error", self._name)
                self._stop.wait(self._timing.tick)

    def _on_line(self, line: LineRead, now: float) -> list[ShoeEvent]:
        if line.code is None:
            if line.reason.endswith("in one line"):
                return [ReaderNotice("unreadable", f"reader line {line.text!r}: {line.reason}")]
            log.debug("%s: not a card: %r (%s)", self._name, line.text, line.reason)
            return []
        last, self._last_card = self._last_card, (line.code, now)
        if last is not None and last[0] == line.code and now - last[1] < self.repeat_window:
            with self._lock:
                self._stats.repeats += 1
            self._last_card = last  # a third copy is still within the window of the first
            return [ReaderNotice(
                "repeat", f"card {line.code} read twice within {now - last[1]:.2f} s: taken once"
            )]
        self._count += 1
        with self._lock:
            self._stats.delivered += 1
        events: list[ShoeEvent] = [CardDrawn(line.code, LINE_READER_MARK, self._count, None)]
        if last is not None and now - last[1] < self.burst_window:
            with self._lock:
                self._stats.bursts += 1
            events.append(ReaderNotice(
                "burst", f"cards {last[0]} and {line.code} {now - last[1]:.3f} s apart: "
                "faster than a dealer draws",
            ))
        return events

    def _open(self) -> bool:
        try:
            transport = self._open_transport()
            transport.timeout = self._timing.tick
        except PORT_ERRORS as e:
            self._went_down(f"cannot open the card reader's port: {e}")
            return False
        self._transport = transport
        self._reported_down = False
        self.parser.reset()
        now = self._clock()
        events: list[ShoeEvent] = [LinkUp()]
        with self._lock:
            if self._opened_once:
                self._stats.reconnects += 1
            self._opened_once = True
        if self._down_since is not None:
            with self._lock:
                self._stats.gaps += 1
            events.append(ReaderNotice(
                "gap", f"the card reader was disconnected for {now - self._down_since:.1f} s: "
                "a card drawn meanwhile is lost (a line reader does not re-send)",
            ))
            self._down_since = None
        log.info("%s port open", self._name)
        self._dispatch(events)
        return True

    def _read(self) -> bytes | None:
        try:
            return read_available(self._transport)
        except PORT_ERRORS as e:
            self._close_transport()
            self._went_down(f"card reader's port failed: {e}")
            return None

    def _went_down(self, reason: str) -> None:
        """Report the port down once per outage (the first failed open included)."""
        self._down_reason = reason
        if self._up.is_set():
            self._down_since = self._clock()
        elif self._reported_down:
            return
        self._reported_down = True
        with self._lock:
            self._stats.link_downs += 1
        log.warning("%s: %s", self._name, reason)
        self._dispatch([LinkDown(reason)])

    def _close_transport(self) -> None:
        transport, self._transport = self._transport, None
        close_quietly(transport, PORT_ERRORS)
