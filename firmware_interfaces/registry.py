"""Small lazy registries of backends: a name maps to ``"module:attribute"``, imported on first use.

Like python-can's ``BACKENDS`` and gpiozero's pin factories: the configuration
names a backend, the registry imports only that one, so a table that does not
use an optional backend does not need its dependencies. One registry per kind
of device (card reader protocol, camera source, panel pin factory).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

from firmware_interfaces.errors import BackendUnavailable, DeviceError, UnknownBackend

T = TypeVar("T")


class BackendRegistry(Generic[T]):
    """The backends of one kind of device, by name.

    ``kind`` names the kind in messages ("camera source"); ``unknown`` and
    ``unavailable`` are the error classes raised for a name that is not
    registered and for one whose module cannot be imported (a driver may
    pass its own subclasses of :class:`DeviceError`).
    """

    def __init__(
        self, kind: str, targets: Mapping[str, str], *,
        unknown: type[DeviceError] = UnknownBackend, unavailable: type[DeviceError] = BackendUnavailable,
    ) -> None:
        self.kind = kind
        self._targets: dict[str, str] = {}
        self._loaded: dict[str, T] = {}
        self._unknown = unknown
        self._unavailable = unavailable
        for name, target in targets.items():
            self.register(name, target)

    def register(self, name: str, target: str) -> None:
        """Add (or replace) backend ``name`` as ``"module:attribute"``; nothing is imported yet."""
        module, sep, attribute = target.partition(":")
        if not (module and sep and attribute):
            raise ValueError(f"{self.kind} {name!r}: target {target!r} is not 'module:attribute'")
        self._targets[name] = target
        self._loaded.pop(name, None)

    def names(self) -> tuple[str, ...]:
        """The registered names, sorted."""
        return tuple(sorted(self._targets))

    def __contains__(self, name: object) -> bool:
        return name in self._targets

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def target(self, name: str) -> str:
        """The ``"module:attribute"`` of ``name``; raises the registry's unknown-name error."""
        try:
            return self._targets[name]
        except (KeyError, TypeError):
            raise self._unknown(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}") from None

    def load(self, name: str) -> T:
        """The backend ``name`` (its class or factory), importing its module the first time.

        Raises the registry's unknown-name error (listing the known names) or, when the
        module or attribute cannot be imported, its unavailable error naming the cause.
        """
        if name in self._loaded:
            return self._loaded[name]
        module_name, _, attribute = self.target(name).partition(":")
        try:
            module = importlib.import_module(module_name)
            backend: T = getattr(module, attribute)
        except (ImportError, AttributeError) as e:
            raise self._unavailable(f"{self.kind} {name!r} cannot be loaded: {e}") from e
        self._loaded[name] = backend
        return backend


__all__ = ["BackendRegistry"]
