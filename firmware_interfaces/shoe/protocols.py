"""Card-reader protocols by name: the one place a configuration's ``shoe.protocol`` is looked up.

Like python-can's ``BACKENDS``: a name maps to ``"module:Class"``, imported
only when used, so an optional protocol's dependencies are needed only by
tables that use it. Every backend has the shoe driver's interface
(:class:`ShoeBackend`) and says in ``guarantees`` what it can promise.

A vendor protocol registers here: ``SHOE_PROTOCOLS.register("acme",
"mypackage.acme:AcmeDriver")`` (e.g. a subclass of ``ShoeDriver`` that passes
its own codec), and tables name it with ``shoe.protocol = "acme"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from firmware_interfaces.registry import BackendRegistry
from firmware_interfaces.shoe.errors import ShoeProtocolError
from firmware_interfaces.shoe.events import LinkState, ShoeEvent
from firmware_interfaces.shoe.guarantees import ReaderGuarantees

#: Protocol name -> "module:Class" of its driver (imported lazily).
SHOE_PROTOCOLS: BackendRegistry[Callable[..., ShoeBackend]] = BackendRegistry(
    "card reader protocol",
    {"slp1": "firmware_interfaces.shoe.driver:ShoeDriver", "lines": "firmware_interfaces.shoe.lines:LineReaderDriver"},
    unknown=ShoeProtocolError, unavailable=ShoeProtocolError,
)

#: Protocol name -> the device simulator of that protocol, behind the same hands (draw, load,
#: wait_gate, ...), and (SHOE_FAULT_PLANS) its fault syntax (``.parse(text, seed)``).
SIMULATORS: BackendRegistry[Callable[..., Any]] = BackendRegistry(
    "card reader simulator",
    {
        "slp1": "firmware_interfaces.shoe.sim:SimulatedShoe",
        "lines": "firmware_interfaces.shoe.line_sim:SimulatedLineReader",
    },
    unknown=ShoeProtocolError, unavailable=ShoeProtocolError,
)
SHOE_FAULT_PLANS: BackendRegistry[Any] = BackendRegistry(
    "card reader fault plan",
    {"slp1": "firmware_interfaces.shoe.faults:FaultPlan", "lines": "firmware_interfaces.shoe.line_sim:LineFaults"},
    unknown=ShoeProtocolError, unavailable=ShoeProtocolError,
)


class ShoeBackend(Protocol):
    """What the controller needs of a card reader, whatever its protocol."""

    guarantees: ReaderGuarantees

    def start(self) -> None: ...
    def close(self) -> None: ...
    def ack(self, event: ShoeEvent) -> None: ...
    def lock(self) -> None: ...
    def unlock(self) -> None: ...
    def status(self) -> None: ...
    def reset(self) -> None: ...
    def wait_up(self, timeout: float) -> None: ...
    def get_event(self, timeout: float | None = None) -> ShoeEvent | None: ...

    @property
    def is_up(self) -> bool: ...

    @property
    def link_state(self) -> LinkState | None: ...

    @property
    def stats(self) -> Any: ...


def protocol_class(name: str) -> Callable[..., ShoeBackend]:
    """The driver class of a registered protocol; raises ShoeProtocolError naming the known ones."""
    return SHOE_PROTOCOLS.load(name)


def simulator_for(name: str) -> tuple[Callable[..., Any], Any]:
    """The simulator class of a protocol and its fault plan class (``.parse(text, seed)``)."""
    return SIMULATORS.load(name), SHOE_FAULT_PLANS.load(name)


def open_shoe(name: str, open_transport: Callable[[], Any], **options: Any) -> ShoeBackend:
    """A (not yet started) driver of protocol ``name`` over ``open_transport``.

    ``options`` are the driver's keyword arguments (``listener``, ``resume``,
    ``auto_ack``, ``pattern``, ...); a line reader ignores the SLP/1 ones.
    """
    return protocol_class(name)(open_transport, **options)


__all__ = [
    "SHOE_FAULT_PLANS", "SHOE_PROTOCOLS", "SIMULATORS", "ShoeBackend", "open_shoe", "protocol_class", "simulator_for",
]
