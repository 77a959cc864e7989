"""Helpers for tests and benchmarks of the shoe stack (also handy in the controller's tests)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from firmware_interfaces.shoe.events import CardDrawn, ShoeEvent
from firmware_interfaces.shoe.timing import LinkTiming

#: The protocol's timers 25 times faster: retransmit 10 ms, link-down 80 ms, tick 2 ms.
FAST_TIMING = LinkTiming().scaled(0.04)


class EventRecorder:
    """A driver listener that records events and lets a test wait for a condition."""

    def __init__(self, on_event: Callable[[ShoeEvent], None] | None = None) -> None:
        self.events: list[ShoeEvent] = []
        self._changed = threading.Condition()
        self._on_event = on_event

    def __call__(self, event: ShoeEvent) -> None:
        if self._on_event is not None:
            self._on_event(event)
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def wait_for(self, predicate: Callable[[list[ShoeEvent]], bool], timeout: float) -> bool:
        """Block until ``predicate(events)`` holds; False after ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self.events), timeout)

    def wait_for_type(self, kind: type, timeout: float, count: int = 1) -> bool:
        return self.wait_for(lambda ev: sum(isinstance(e, kind) for e in ev) >= count, timeout)

    def of_type(self, kind: type) -> list[ShoeEvent]:
        with self._changed:
            return [e for e in self.events if isinstance(e, kind)]

    @property
    def drawn(self) -> list[tuple[str, int]]:
        """(code, count) of the CardDrawn events, in delivery order."""
        with self._changed:
            return [(e.code, e.count) for e in self.events if isinstance(e, CardDrawn)]

    @property
    def cards(self) -> list[str]:
        """Codes of the CardDrawn events, in delivery order."""
        with self._changed:
            return [e.code for e in self.events if isinstance(e, CardDrawn)]
