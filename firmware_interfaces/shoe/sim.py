"""A simulated smart shoe that speaks SLP/1 like the real device.

Real CRCs, real retransmissions, sessions, heartbeats, a gate that starts
locked and honours LOCK/UNLOCK, and faults injected on its transmit side.
One thread receives commands and runs the timers; the dealer's actions
(:meth:`SimulatedShoe.draw` and friends) come from the caller's thread.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from firmware_interfaces.shoe.codec import Codec, Frame, SLP1Codec
from firmware_interfaces.shoe.device_link import DeviceLink, ShoeInfo
from firmware_interfaces.shoe.errors import ShoeError
from firmware_interfaces.shoe.events import CARD_CODES, RANKS, SUITS
from firmware_interfaces.shoe.faults import FaultPlan
from firmware_interfaces.shoe.guarantees import SMART_SHOE
from firmware_interfaces.shoe.ports import ShoePort, as_port
from firmware_interfaces.shoe.timing import DEFAULT_TIMING, LinkTiming

log = logging.getLogger(__name__)


def shuffled_codes(decks: int, rng: random.Random) -> list[str]:
    """``decks`` full decks of card codes, shuffled."""
    cards = [r + s for _ in range(decks) for r in RANKS for s in SUITS]
    rng.shuffle(cards)
    return cards


def loaded_cards(cards: Sequence[str] | None, decks: int, rng: random.Random) -> deque[str]:
    """The cards a simulated reader deals: ``cards`` as scripted (checked), or shuffled decks."""
    if cards is None:
        return deque(shuffled_codes(decks, rng))
    bad = [c for c in cards if c not in CARD_CODES]
    if bad:
        raise ShoeError(f"card code {bad[0]!r} is not rank A23456789TJQK + suit SHDC")
    return deque(cards)


class Pacer:
    """Holds writes back to a baud rate (8N1: 10 bits a byte), like a UART."""

    def __init__(self, baudrate: int, clock: Callable[[], float] = time.perf_counter) -> None:
        self.byte_time = 10.0 / baudrate
        self._clock = clock
        self._free_at = 0.0

    def wait(self, nbytes: int) -> float:
        """Block until ``nbytes`` queued now would have left the wire; returns their start time."""
        now = self._clock()
        start = max(now, self._free_at)
        self._free_at = end = start + nbytes * self.byte_time
        if end > now:
            time.sleep(end - now)
        return start


class SimulatedShoe:
    """The device side of SLP/1 with a dealer's hands attached.

    ``transport``: a pty master fd, a :class:`~firmware_interfaces.shoe.ports.ShoePort`
    (PtyPort, TcpPort) or any pyserial-like object. ``cards``: a scripted
    order of codes instead of a shuffled ``decks``-deck shoe; ``cut_at``: the
    cut card comes out after that many cards. ``baudrate`` paces the shoe's
    transmit side (a pty itself has no speed). ``on_transmit(frame, started)``
    is called after each frame is written (as encoded, before faults) with the
    ``time.perf_counter()`` at which it started onto the (paced) wire:
    benchmarks measure latency from it.
    """

    announces_new_shoe = True
    guarantees = SMART_SHOE

    def __init__(
        self,
        transport: Any,
        *,
        decks: int = 8,
        seed: int | None = None,
        cards: Sequence[str] | None = None,
        cut_at: int | None = None,
        faults: FaultPlan | None = None,
        info: ShoeInfo | None = None,
        clock: Callable[[], float] = time.monotonic,
        timing: LinkTiming = DEFAULT_TIMING,
        baudrate: int | None = None,
        codec: Codec | None = None,
        on_action: Callable[[str], None] | None = None,
        on_transmit: Callable[[bytes, float], None] | None = None,
    ) -> None:
        if decks < 1:
            raise ShoeError(f"decks={decks}: a shoe holds at least one deck")
        self.port: ShoePort = as_port(transport)
        self.faults = faults or FaultPlan()
        self.timing = timing
        self._clock = clock
        self._rng = random.Random(seed)
        self._codec = codec or SLP1Codec()
        self._pacer = Pacer(baudrate) if baudrate else None
        self._on_action = on_action
        self._on_transmit = on_transmit
        self._lock = threading.RLock()
        self._gate_changed = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.link = DeviceLink(self._codec, now=clock(), info=info or ShoeInfo(), timing=timing)
        self._gate_locked = True
        self._lid_open = False
        self._count = 0
        self._cut_at = cut_at
        self._cut_done = False
        self.drawn: list[str] = []
        self.unread: list[str] = []
        self._decks = decks
        self._cards: deque[str] = self._new_cards(cards, decks)
        self._replug_at: float | None = None
        self._next_unplug: float | None = None

    def _new_cards(self, cards: Sequence[str] | None, decks: int) -> deque[str]:
        return loaded_cards(cards, decks, self._rng)

    # -- lifecycle ----------------------------------------------------------
    def start(self) -> None:
        """Power on (HELLO, then NEWSHOE for the loaded cards); start the receive/timer thread."""
        with self._lock:
            now = self._clock()
            self.link.power_on(now)
            self.link.send("NEWSHOE", (str(self._decks),), now)
            if self.faults.unplug_every:
                self._next_unplug = now + self.faults.unplug_every
            self._flush()
        self._thread = threading.Thread(target=self._run, name="sim-shoe", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the thread and close the port."""
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():  # a stop can come before its start
            self._thread.join(timeout=5)
        self.port.close()

    def __enter__(self) -> SimulatedShoe:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- state --------------------------------------------------------------
    @property
    def gate_locked(self) -> bool:
        return self._gate_locked

    @property
    def lid_open(self) -> bool:
        return self._lid_open

    @property
    def count(self) -> int:
        """Cards out of this shoe since it was loaded."""
        return self._count

    @property
    def remaining(self) -> int:
        return len(self._cards)

    @property
    def cards_left(self) -> tuple[str, ...]:
        """The cards still in the shoe, the next one first (a seeded shoe's order is reproducible)."""
        with self._lock:
            return tuple(self._cards)

    @property
    def boot_id(self) -> str:
        return self.link.boot_id

    @property
    def description(self) -> str:
        """The device path or URL a driver opens."""
        return self.port.description

    def stats(self) -> dict[str, int]:
        """Link counters of the shoe side plus fault counters."""
        with self._lock:
            return {**self.link.stats.as_dict(), **self.faults.counters.as_dict(),
                    "unacknowledged": self.link.unacknowledged}

    def wait_gate(self, locked: bool, timeout: float) -> bool:
        """Block until the gate is locked (or unlocked); False after ``timeout`` seconds."""
        with self._gate_changed:
            return self._gate_changed.wait_for(lambda: self._gate_locked == locked, timeout)

    # -- the dealer's hands ---------------------------------------------------
    def draw(self) -> str | None:
        """Pull a card: the code sent in CARD, or None if the gate is locked or the shoe empty."""
        with self._lock:
            if self._gate_locked or not self._cards:
                return None
            now = self._clock()
            if self._cut_at is not None and not self._cut_done and self._count >= self._cut_at:
                self._cut_done = True
                self.link.send("CUT", (str(self._count),), now)
            code = self._cards.popleft()
            self._count += 1
            self.drawn.append(code)
            self.link.send("CARD", (code, "RO", str(self._count)), now)
            if not self._cards:
                self.link.send("EMPTY", (str(self._count),), now)
            self._flush()
        self._report(f"card {code} count {self._count}")
        return code

    def draw_noread(self) -> bool:
        """A card leaves the gate unidentified (NOREAD); False if locked or empty."""
        with self._lock:
            if self._gate_locked or not self._cards:
                return False
            now = self._clock()
            self.unread.append(self._cards.popleft())
            self._count += 1
            self.link.send("NOREAD", (str(self._count),), now)
            if not self._cards:
                self.link.send("EMPTY", (str(self._count),), now)
            self._flush()
        self._report(f"noread count {self._count}")
        return True

    def set_lid(self, is_open: bool) -> None:
        """Open or close the lid (LID frame)."""
        def apply() -> None:
            self._lid_open = is_open

        self._send_now("LID", ("OPEN" if is_open else "CLOSED",), apply)

    def fault(self, code: str, text: str) -> None:
        """Report a device fault (FAULT frame)."""
        self._send_now("FAULT", (code, text))

    def load(
        self, cards: Sequence[str] | None = None, decks: int | None = None, cut_at: int | None = None
    ) -> None:
        """A new shoe: cards loaded, lid closed, NEWSHOE; the count restarts at 0.

        ``cut_at``: the cut card comes out after that many cards of the new shoe.
        """
        with self._lock:
            if decks is not None:
                self._decks = decks
            self._cut_at = cut_at
            self._cards = self._new_cards(cards, self._decks)
            self._count = 0
            self._cut_done = False
            self._lid_open = False
            self.link.send("NEWSHOE", (str(self._decks),), self._clock())
            self._flush()
        self._report(f"new shoe of {self._decks} decks")

    def _send_now(
        self, type_: str, args: tuple[str, ...], apply: Callable[[], None] | None = None
    ) -> None:
        with self._lock:
            if apply is not None:
                apply()
            self.link.send(type_, args, self._clock())
            self._flush()
        self._report(f"{type_.lower()} {' '.join(args)}")

    def unplug(self, seconds: float) -> None:
        """Pull the cable for ``seconds``: the link goes silent (a PtyPort really closes)."""
        with self._lock:
            self.port.unplug()
            self.faults.counters.unplugs += 1
            self._replug_at = self._clock() + seconds
        self._report(f"unplugged for {seconds:g} s")

    def replug(self) -> None:
        """Plug the cable back in now."""
        with self._lock:
            self._replug_at = None
            self.port.replug()
        self._report("plugged in")

    def power_cycle(self) -> None:
        """Lose power: unacknowledged frames are gone; new boot id; HELLO with nonce '-'."""
        with self._lock:
            self._gate_locked = True
            self.link.power_on(self._clock())
            self._gate_changed.notify_all()
            self._flush()
        self._report(f"power cycled, boot {self.boot_id}")

    # -- thread -------------------------------------------------------------
    def _run(self) -> None:
        tick = self.timing.tick
        last_tick = float("-inf")
        while not self._stop.is_set():
            try:
                data = self.port.read(tick)
                now = self._clock()
                with self._lock:
                    if data:
                        for command in self.link.receive(self._codec.feed(data), now):
                            self._apply(command)
                    if now - last_tick >= tick:
                        last_tick = now
                        self.link.tick(now)
                        self._timers(now)
                    self._flush()
            except Exception:  # top of a worker thread: log and go on
                log.exception("simulated shoe: unexpected error")
                self._stop.wait(tick)

    def _timers(self, now: float) -> None:
        if self._replug_at is not None and now >= self._replug_at:
            self._replug_at = None
            self.port.replug()
            self._report("plugged in")
        if self._next_unplug is not None and now >= self._next_unplug and self._replug_at is None:
            self._next_unplug = now + (self.faults.unplug_every or 0)
            self.port.unplug()
            self.faults.counters.unplugs += 1
            self._replug_at = now + self.faults.unplug_for
            self._report(f"unplugged for {self.faults.unplug_for:g} s")

    def _apply(self, command: Frame) -> None:
        now = self._clock()
        if command.type in ("LOCK", "UNLOCK"):
            self._gate_locked = command.type == "LOCK"
            self._gate_changed.notify_all()
            self.link.send("GATE", ("LOCKED" if self._gate_locked else "UNLOCKED",), now)
            self._report("gate locked" if self._gate_locked else "gate unlocked")
        elif command.type == "STATUS":
            self.link.send(
                "STATE",
                ("LOCKED" if self._gate_locked else "UNLOCKED",
                 "OPEN" if self._lid_open else "CLOSED", str(self._count)),
                now,
            )
        else:
            log.info("simulated shoe ignores command %s", command.type)

    def _flush(self) -> None:
        """Write queued frames through the fault plan and the pacer (lock held)."""
        for frame in self.link.take_output():
            wire = self.faults.apply(frame)
            if not wire:
                continue
            started = self._pacer.wait(len(wire)) if self._pacer else time.perf_counter()
            self.port.write(wire)
            if self._on_transmit is not None:
                try:
                    self._on_transmit(frame, started)
                except Exception:
                    log.exception("simulated shoe: on_transmit hook failed")

    def _report(self, text: str) -> None:
        if self._on_action is not None:
            self._on_action(text)
