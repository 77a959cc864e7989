"""The calibration's errors, rooted in the drivers' tree (:class:`DeviceConfigError`).

``calibration`` is used by the camera drivers, so it imports nothing from the
controller either: the command line catches :class:`DeviceError` beside the
controller's own errors, and start-up turns these into a ``ConfigError``
naming the configuration key. Every class is also a ``ValueError``.
"""

from __future__ import annotations

from firmware_interfaces.errors import DeviceConfigError


class CalibrationError(DeviceConfigError):
    """Root of the calibration's errors: a layout, table plane, template set or calibration
    folder that cannot be made or used; the message names the file, key, marker or card."""


class LayoutError(CalibrationError):
    """A layout name, layout file or slot name is wrong; the message names the file and key."""


class CalibrationFileError(CalibrationError):
    """A calibration folder or one of its parts (``table.json``, the templates, a folder of card
    images) is missing, malformed or lacks cards; the message names the file or the cards."""


class TablePlaneError(CalibrationError):
    """The table plane cannot be found from this image (markers missing) or these points."""


class CaptureError(CalibrationError):
    """A live template capture cannot use a frame (not exactly one card) or is incomplete."""
