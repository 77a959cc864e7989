"""A test rig's hands through the control socket: press a panel button, lay cards under a simulated camera.

Only a simulated table or a test rig (``rig.control_ops``) registers these with its
:class:`~table_controller.control.ControlServer`; a production table's socket does not
know them, so ``press`` cannot deal or void there without a token.
"""

from __future__ import annotations

from typing import Any

from table_controller.panel import BUTTONS, DealerPanel

RIG_OPS = frozenset({"press", "lay", "clear", "dark"})


class RigControlOps:
    """``press`` (a button of a panel on gpiozero's mock pins), ``lay``, ``clear`` and ``dark``
    (a simulated camera: lay a card on a slot, clear the layout, cover the lens)."""

    ops = RIG_OPS

    def __init__(self, panel: DealerPanel | None, camera: Any = None) -> None:
        """``camera``: the simulated camera (``place``, ``clear``, ``blackout``), or None."""
        self.panel = panel
        self.camera = camera

    def answer(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        """Do ``op``; raises ValueError for an unknown button, a bad card code or slot."""
        if op == "press":
            return self._press(request)
        if self.camera is None:
            return {"ok": False, "error": f"{op} is only for a simulated camera (camera.kind = \"sim\")"}
        if op == "lay":
            self.camera.place(request.get("slot"), str(request.get("code")))
        elif op == "clear":
            self.camera.clear()
        else:
            self.camera.blackout(bool(request.get("on")))
        return {"ok": True}

    def _press(self, request: dict[str, Any]) -> dict[str, Any]:
        from gpiozero.pins.mock import MockFactory

        panel = self.panel
        if panel is None or not isinstance(panel.pin_factory, MockFactory):
            return {"ok": False, "error": "press is only for a panel on mock pins (panel.gpio = \"mock\")"}
        button = request.get("button")
        if button not in BUTTONS:
            raise ValueError(f"unknown button {button!r} ({', '.join(BUTTONS)})")
        pin = panel.pin_factory.pin(panel.pins[button])
        pin.drive_low()
        pin.drive_high()
        return {"ok": True}
