"""Card-reader protocols by name: the one place a configuration's ``shoe.protocol`` is looked up.

Like python-can's ``BACKENDS``: a name maps to ``"module:Class"``, imported
only when used, so an optional protocol's dependencies are needed only by
tables that use it. Every backend has the shoe driver's interface
(:class:`ShoeBackend`) and says in ``guarantees`` what it can promise.

A vendor protocol registers here: ``SHOE_PROTOCOLS["acme"] =
"mypackage.acme:AcmeDriver"`` (e.g. a subclass of ``ShoeDriver`` that passes
its own codec), and tables name it with ``shoe.protocol = "acme"``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol

from firmware_interfaces.shoe.errors import ShoeProtocolError
from firmware_interfaces.shoe.events import LinkState, ShoeEvent
from firmware_interfaces.shoe.guarantees import ReaderGuarantees

#: Protocol name -> "module:Class" of its driver (imported lazily).
SHOE_PROTOCOLS: dict[str, str] = {
    "slp1": "firmware_interfaces.shoe.driver:ShoeDriver",
    "lines": "firmware_interfaces.shoe.lines:LineReaderDriver",
}


#: Protocol name -> ("module:Simulator", "module:FaultPlan"): the device simulator of each
#: protocol, behind the same hands (draw, load, wait_gate, ...), and its fault syntax.
SIMULATORS: dict[str, tuple[str, str]] = {
    "slp1": ("firmware_interfaces.shoe.sim:SimulatedShoe", "firmware_interfaces.shoe.faults:FaultPlan"),
    "lines": (
        "firmware_interfaces.shoe.line_sim:SimulatedLineReader",
        "firmware_interfaces.shoe.line_sim:LineFaults",
    ),
}


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


def _load(name: str, target: str) -> Any:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ShoeProtocolError(f"card reader protocol {name!r} cannot be loaded: {e}") from e
    return getattr(module, attr)


def _known(name: str, registry: dict[str, Any]) -> Any:
    try:
        return registry[name]
    except KeyError:
        raise ShoeProtocolError(
            f"unknown card reader protocol {name!r}: known are {', '.join(sorted(registry))}"
        ) from None


def protocol_class(name: str) -> Callable[..., ShoeBackend]:
    """The driver class of a registered protocol; raises ShoeProtocolError naming the known ones."""
    cls: Callable[..., ShoeBackend] = _load(name, _known(name, SHOE_PROTOCOLS))
    return cls


def simulator_for(name: str) -> tuple[Callable[..., Any], Any]:
    """The simulator class of a protocol and its fault plan class (``.parse(text, seed)``)."""
    simulator, faults = _known(name, SIMULATORS)
    return _load(name, simulator), _load(name, faults)


def open_shoe(name: str, open_transport: Callable[[], Any], **options: Any) -> ShoeBackend:
    """A (not yet started) driver of protocol ``name`` over ``open_transport``.

    ``options`` are the driver's keyword arguments (``listener``, ``resume``,
    ``auto_ack``, ``pattern``, ...); a line reader ignores the SLP/1 ones.
    """
    return protocol_class(name)(open_transport, **options)


__all__ = ["SHOE_PROTOCOLS", "SIMULATORS", "ShoeBackend", "open_shoe", "protocol_class", "simulator_for"]
