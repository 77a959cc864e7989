"""The protocol's timers in one place, so tests can run them scaled down."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class LinkTiming:
    """SLP/1 timers in seconds; the defaults are the protocol's.

    ``tick`` is how often the reader loop wakes up to run timers when no byte
    arrives; ``stall`` is how long only out-of-sequence frames may arrive
    before the controller resynchronises the session with RESET.
    """

    retransmit: float = 0.25
    link_down: float = 2.0
    slow_retransmit: float = 1.0
    heartbeat: float = 1.0
    reset_interval: float = 1.0
    stall: float = 1.0
    tick: float = 0.05
    reopen_min: float = 0.1
    reopen_max: float = 2.0

    def scaled(self, factor: float) -> LinkTiming:
        """Every timer multiplied by ``factor`` (tests: ``LinkTiming().scaled(0.05)``)."""
        return replace(self, **{f.name: getattr(self, f.name) * factor for f in fields(self)})


DEFAULT_TIMING = LinkTiming()
