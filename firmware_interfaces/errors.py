"""The drivers' own error tree, rooted in :class:`DeviceError`.

Drivers import nothing from the controller: the controller catches these at
its edges (the command line, the control socket, start-up) and says which
configuration key or device they concern. Each leaf also inherits the
built-in it most resembles, so ``except ValueError`` still catches a bad
setting.
"""

from __future__ import annotations


class DeviceError(Exception):
    """Root of every error a driver, device simulator or backend registry raises on purpose."""


class DeviceConfigError(DeviceError, ValueError):
    """A device's setting, data file or name is wrong; the message names it."""


class UnknownCardCode(DeviceConfigError):
    """A card code (from a device, a file name, an operator) that is not one of the 52 cards."""


class UnknownBackend(DeviceConfigError):
    """A backend name that its registry does not know; the message lists the known names."""


class BackendUnavailable(DeviceError, ImportError):
    """A registered backend whose module (or one of its dependencies) cannot be imported."""
