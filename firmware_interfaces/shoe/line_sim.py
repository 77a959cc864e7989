"""A simulated plain card reader: one line per card, nothing else (the ``lines`` protocol).

It has the simulated shoe's hands (``draw``, ``draw_noread``, ``load``,
``wait_gate``, ``set_lid``, ``unplug``) so the simulated dealer can use either,
but it behaves like the devices it stands for: no gate (``wait_gate`` answers
at once), no count, no NEWSHOE or CUT line, no retransmission (a line written
while the cable is out is lost), and faults of its own kind: a lost line, a
line read twice, garbage between lines.
"""

from __future__ import annotations

import random
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from firmware_interfaces.shoe.errors import FaultPlanError, ShoeError
from firmware_interfaces.shoe.guarantees import LINE_READER
from firmware_interfaces.shoe.ports import ShoePort, as_port
from firmware_interfaces.shoe.sim import Pacer, loaded_cards

_LINE_FAULTS = ("lost", "twice", "garbage")


@dataclass
class LineFaultCounters:
    """How many lines each fault hit."""

    lost: int = 0
    twice: int = 0
    garbage: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class LineFaults:
    """Per-line fault probabilities of a line reader: ``lost`` (the line is not sent),
    ``twice`` (it is sent twice: a double read), ``garbage`` (1..40 bytes of noise and a
    line end before it)."""

    lost: float = 0.0
    twice: float = 0.0
    garbage: float = 0.0
    seed: int | None = None
    counters: LineFaultCounters = field(default_factory=LineFaultCounters)

    def __post_init__(self) -> None:
        for name in _LINE_FAULTS:
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise FaultPlanError(f"line fault {name}={value}: a probability must be in 0..1")
        self._rng = random.Random(self.seed)

    @classmethod
    def parse(cls, text: str, seed: int | None = None) -> LineFaults:
        """Parse ``lost=0.02,twice=0.02,garbage=0.05``; raises FaultPlanError naming the key."""
        values: dict[str, float] = {}
        for item in filter(None, (p.strip() for p in text.split(","))):
            key, sep, raw = item.partition("=")
            key = key.strip().lower()
            if not sep or key not in _LINE_FAULTS:
                raise FaultPlanError(
                    f"line fault {item!r}: expected one of {', '.join(_LINE_FAULTS)} = probability"
                )
            try:
                values[key] = float(raw)
            except ValueError:
                raise FaultPlanError(f"line fault {key}={raw!r}: not a number") from None
        return cls(
            lost=values.get("lost", 0.0), twice=values.get("twice", 0.0),
            garbage=values.get("garbage", 0.0), seed=seed,
        )

    def apply(self, line: bytes) -> bytes:
        """What goes on the wire for one card line."""
        rng, c = self._rng, self.counters
        if self.lost and rng.random() < self.lost:
            c.lost += 1
            return b""
        out = line
        if self.twice and rng.random() < self.twice:
            c.twice += 1
            out = line + line
        if self.garbage and rng.random() < self.garbage:
            c.garbage += 1
            noise = bytes(b for b in rng.randbytes(rng.randint(1, 40)) if b not in b"\r\n")
            # Noise ends in a line end, as a glitch on a line-based link does: it spoils a line
            # of its own, never the card's line.
            out = noise + b"\r\n" + out
        return out


class SimulatedLineReader:
    """A line-per-card reader on ``transport`` (a pty master fd or a ShoePort).

    ``line_format``: how a card goes out (``"{code}\\r\\n"``; ``{rank}`` and ``{suit}``
    too, with the ten as ``10``). ``baudrate`` paces writes like a UART.
    """

    #: The table learns of a new shoe from a supervisor, not from this device.
    announces_new_shoe = False
    guarantees = LINE_READER

    def __init__(
        self,
        transport: Any,
        *,
        decks: int = 8,
        seed: int | None = None,
        cards: Sequence[str] | None = None,
        faults: LineFaults | None = None,
        line_format: str = "{code}\r\n",
        baudrate: int | None = None,
        on_action: Callable[[str], None] | None = None,
        **_shoe_options: object,  # cut_at=, timing=: a line reader has no cut card report
    ) -> None:
        if decks < 1:
            raise ShoeError(f"decks={decks}: a shoe holds at least one deck")
        self.port: ShoePort = as_port(transport)
        self.faults = faults or LineFaults()
        self.line_format = line_format
        self._rng = random.Random(seed)
        self._pacer = Pacer(baudrate) if baudrate else None
        self._on_action = on_action
        self._lock = threading.RLock()
        self._decks = decks
        self._cards: deque[str] = self._new_cards(cards, decks)
        self._plugged = True
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.drawn: list[str] = []
        self.unread: list[str] = []
        self.lines_sent = 0

    def _new_cards(self, cards: Sequence[str] | None, decks: int) -> deque[str]:
        return loaded_cards(cards, decks, self._rng)

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> None:
        """Start reading the port's far side: nothing is ever said to a line reader, but
        reading lets a TCP client connect (a TcpPort accepts in ``read``) and drops input."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._drain, name="line-reader-sim", daemon=True)
            self._thread.start()

    def _drain(self) -> None:
        while not self._stop.is_set():
            try:
                self.port.read(0.2)
            except (OSError, ValueError):
                self._stop.wait(0.2)

    def close(self) -> None:
        """Stop and close the port."""
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():  # a stop can come before its start
            self._thread.join(timeout=2)
        self.port.close()

    def __enter__(self) -> SimulatedLineReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- state ----------------------------------------------------------------
    @property
    def gate_locked(self) -> bool:
        """A line reader has no gate: never locked."""
        return False

    @property
    def count(self) -> int:
        """Cards out of this shoe (the simulator knows; the device does not say)."""
        return len(self.drawn) + len(self.unread)

    @property
    def remaining(self) -> int:
        """Cards still in the shoe."""
        return len(self._cards)

    def stats(self) -> dict[str, int]:
        """Lines sent and faults injected."""
        return {"lines_sent": self.lines_sent, **self.faults.counters.as_dict()}

    def wait_gate(self, locked: bool, timeout: float) -> bool:
        """No gate: True at once for "unlocked", False (after no wait) for "locked"."""
        return not locked

    # -- the dealer's hands -----------------------------------------------------
    def draw(self) -> str | None:
        """Pull a card: its line goes out (faults applied); None when the shoe is empty."""
        with self._lock:
            if not self._cards:
                return None
            code = self._cards.popleft()
            self.drawn.append(code)
            rank, suit = code[0], code[1]
            line = self.line_format.format(
                code=code, rank="10" if rank == "T" else rank, suit=suit
            ).encode("ascii")
            self._write(self.faults.apply(line))
        self._report(f"card {code}")
        return code

    def draw_noread(self) -> bool:
        """A card passes unread: a line reader sends nothing at all."""
        with self._lock:
            if not self._cards:
                return False
            self.unread.append(self._cards.popleft())
        self._report("unread card")
        return True

    def set_lid(self, is_open: bool) -> None:
        """A line reader has no lid sensor."""

    def fault(self, code: str, text: str) -> None:
        """A line reader reports faults as a line of text (not a card)."""
        with self._lock:
            self._write(f"ERR {code} {text}\r\n".encode("ascii", "replace"))

    def load(
        self, cards: Sequence[str] | None = None, decks: int | None = None, cut_at: int | None = None
    ) -> None:
        """A new shoe (the reader says nothing: the table is told by a supervisor)."""
        with self._lock:
            if decks is not None:
                self._decks = decks
            self._cards = self._new_cards(cards, self._decks)
            self.drawn.clear()
            self.unread.clear()
        self._report(f"new shoe of {self._decks} decks")

    def unplug(self, seconds: float) -> None:
        """Pull the cable for ``seconds``: lines written meanwhile are lost."""
        with self._lock:
            self._plugged = False
            self.port.unplug()
        timer = threading.Timer(seconds, self.replug)
        timer.daemon = True
        timer.start()

    def replug(self) -> None:
        """Plug the cable back in."""
        with self._lock:
            if not self._plugged:
                self.port.replug()
                self._plugged = True

    def _write(self, data: bytes) -> None:
        if not data or not self._plugged:
            return
        if self._pacer is not None:
            self._pacer.wait(len(data))
        self.port.write(data)
        self.lines_sent += 1

    def _report(self, text: str) -> None:
        if self._on_action is not None:
            self._on_action(text)
