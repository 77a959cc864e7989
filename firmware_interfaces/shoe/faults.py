"""Fault injection on a transmit side: drop, corrupt, duplicate, garbage, unplug.

The simulated shoe applies a :class:`FaultPlan` to every frame it sends;
tests wrap the driver's transport in :class:`FaultyTransport` to fault the
other direction too.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

from firmware_interfaces.shoe.errors import FaultPlanError

_PROBABILITIES = ("drop", "corrupt", "dup", "garbage")
_DURATIONS = ("unplug-every", "unplug-for")


@dataclass
class FaultCounters:
    """How many frames each fault hit."""

    dropped: int = 0
    corrupted: int = 0
    duplicated: int = 0
    garbage: int = 0
    unplugs: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class FaultPlan:
    """Per-frame fault probabilities and a periodic unplug, with a seeded RNG.

    ``drop``: the frame is not sent; ``corrupt``: one bit of it is flipped;
    ``dup``: it is sent twice; ``garbage``: 1..40 random bytes go out before
    it. ``unplug_every`` seconds the simulated shoe's cable is pulled for
    ``unplug_for`` seconds.
    """

    drop: float = 0.0
    corrupt: float = 0.0
    dup: float = 0.0
    garbage: float = 0.0
    unplug_every: float | None = None
    unplug_for: float = 3.0
    seed: int | None = None
    counters: FaultCounters = field(default_factory=FaultCounters)

    def __post_init__(self) -> None:
        for name in _PROBABILITIES:
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise FaultPlanError(f"fault {name}={value}: a probability must be in 0..1")
        if self.unplug_every is not None and self.unplug_every <= 0:
            raise FaultPlanError(f"fault unplug-every={self.unplug_every}: must be > 0 seconds")
        if self.unplug_for <= 0:
            raise FaultPlanError(f"fault unplug-for={self.unplug_for}: must be > 0 seconds")
        self._rng = random.Random(self.seed)

    @classmethod
    def parse(cls, text: str, seed: int | None = None) -> FaultPlan:
        """Parse ``drop=0.05,corrupt=0.05,dup=0.05,garbage=0.01,unplug-every=30``.

        Raises :class:`FaultPlanError` naming the bad key or value.
        """
        values: dict[str, Any] = {}
        for item in (part.strip() for part in text.split(",")):
            if not item:
                continue
            key, sep, raw = item.partition("=")
            key = key.strip().lower()
            if not sep:
                raise FaultPlanError(f"fault {item!r}: expected key=value, e.g. drop=0.05")
            if key not in _PROBABILITIES + _DURATIONS:
                known = ", ".join(_PROBABILITIES + _DURATIONS)
                raise FaultPlanError(f"unknown fault {key!r}: known faults are {known}")
            try:
                number = float(raw)
            except ValueError:
                raise FaultPlanError(f"fault {key}={raw!r}: not a number") from None
            if number != number or number in (float("inf"), float("-inf")):
                raise FaultPlanError(f"fault {key}={raw!r}: not a finite number")
            values[key.replace("-", "_")] = number
        return cls(**values, seed=seed)

    @property
    def is_clean(self) -> bool:
        """True when the plan injects nothing."""
        return not any(getattr(self, n) for n in _PROBABILITIES) and self.unplug_every is None

    def apply(self, frame: bytes) -> bytes:
        """The bytes to put on the wire instead of ``frame`` (may be empty)."""
        rng = self._rng
        c = self.counters
        if self.drop and rng.random() < self.drop:
            c.dropped += 1
            return b""
        out = frame
        if self.corrupt and rng.random() < self.corrupt:
            c.corrupted += 1
            data = bytearray(frame)
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
            out = bytes(data)
        if self.dup and rng.random() < self.dup:
            c.duplicated += 1
            out = out + out
        if self.garbage and rng.random() < self.garbage:
            c.garbage += 1
            out = rng.randbytes(rng.randint(1, 40)) + out
        return out

    def describe(self) -> str:
        parts = [f"{n}={getattr(self, n):g}" for n in _PROBABILITIES if getattr(self, n)]
        if self.unplug_every is not None:
            parts.append(f"unplug-every={self.unplug_every:g}")
            parts.append(f"unplug-for={self.unplug_for:g}")
        return ",".join(parts) or "none"


class FaultyTransport:
    """Wraps a pyserial-like transport and applies a FaultPlan to every frame written."""

    def __init__(self, inner: Any, plan: FaultPlan) -> None:
        self._inner = inner
        self.plan = plan

    def write(self, data: bytes) -> int:
        out = b"".join(self.plan.apply(frame) for frame in data.splitlines(keepends=True))
        if out:
            self._inner.write(out)
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("_inner", "plan"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._inner, name, value)
