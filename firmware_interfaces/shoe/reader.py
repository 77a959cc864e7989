"""What every card-reader driver shares: events to a listener or a queue, up/down, port reads.

:class:`~firmware_interfaces.shoe.driver.ShoeDriver` (SLP/1) and
:class:`~firmware_interfaces.shoe.lines.LineReaderDriver` differ in their
protocol, not in how they hand events out or read a port.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, Self

from firmware_interfaces.shoe.errors import ShoeLinkDown
from firmware_interfaces.shoe.events import LinkDown, LinkUp, ShoeEvent

log = logging.getLogger(__name__)

Transport = Any  # a pyserial SerialBase or anything with read/write/in_waiting/close/timeout


def read_available(transport: Transport) -> bytes:
    """Whatever the port has: waits up to its timeout for one byte, then takes the rest."""
    data = transport.read(transport.in_waiting or 1)
    if len(data) == 1:
        more = transport.in_waiting
        if more:
            data += transport.read(more)
    return bytes(data)


def close_quietly(transport: Transport | None, errors: tuple[type[BaseException], ...]) -> None:
    """Close a port that may already be gone (a pulled cable): its errors are expected."""
    if transport is not None:
        try:
            transport.close()
        except errors:
            pass


class ReaderEvents:
    """The event side of a reader driver: a listener (on the reader thread) or a queue.

    Tracks ``LinkUp``/``LinkDown`` for :meth:`wait_up`. Subclasses call
    :meth:`_dispatch` with the events they produced.
    """

    #: How the reader is named in messages ("shoe link", "card reader").
    what = "reader"

    def __init__(self, listener: Callable[[ShoeEvent], None] | None, name: str) -> None:
        self._listener = listener
        self._name = name
        self._events: queue.Queue[ShoeEvent] = queue.Queue()
        self._up = threading.Event()
        self._down_reason = "the link has not come up yet"

    def start(self) -> None:
        """Start the reader thread (each driver its own)."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop the reader thread and close the transport (each driver its own)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_event(self, timeout: float | None = None) -> ShoeEvent | None:
        """The next event (without a listener), or None after ``timeout`` seconds."""
        try:
            return self._events.get(timeout=timeout)
        except queue.Empty:
            return None

    def wait_up(self, timeout: float) -> None:
        """Block until the reader is up; raises ShoeLinkDown after ``timeout`` seconds."""
        if not self._up.wait(timeout):
            raise ShoeLinkDown(f"{self.what} not up after {timeout:g} s: {self._down_reason}")

    def _dispatch(self, events: list[ShoeEvent]) -> None:
        listener = self._listener
        for event in events:
            if isinstance(event, LinkUp):
                self._up.set()
            elif isinstance(event, LinkDown):
                self._up.clear()
                self._down_reason = event.reason
            if listener is None:
                self._events.put(event)
                continue
            try:
                listener(event)
            except Exception:
                log.exception("%s listener failed on %r", self._name, event)
