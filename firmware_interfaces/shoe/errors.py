"""Errors of the shoe stack, rooted in :class:`firmware_interfaces.errors.DeviceError`."""

from __future__ import annotations

from firmware_interfaces.errors import DeviceError


class ShoeError(DeviceError):
    """Root of every error the shoe driver, link or simulator raises on purpose."""


class ShoeLinkDown(ShoeError, ConnectionError):
    """The shoe's transport could not be opened or the link is down."""


class ShoeProtocolError(ShoeError, ValueError):
    """A frame or field does not follow SLP/1 (the message names the field and value)."""


class MalformedFrame(ShoeProtocolError):
    """A well-framed, CRC-correct frame whose arguments do not fit its type."""


class FaultPlanError(ShoeError, ValueError):
    """A fault-injection plan (``drop=0.05,...``) is malformed; the message names the key."""


class ShoeScriptError(ShoeError, ValueError):
    """A card script for the simulated shoe is malformed; the message names the file and line."""
