"""The dealer's panel through gpiozero: buttons, supervisor key switch, lamps and buzzer.

Pins come from the configuration. ``gpio = "mock"`` runs the panel on
gpiozero's own :class:`~gpiozero.pins.mock.MockFactory` (no hardware), which is
also what the tests and the simulated dealer press.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from table_controller.errors import TableError
from table_controller.table import inputs as i

log = logging.getLogger(__name__)

BUTTONS = ("start_round", "close_betting", "card_dropped", "void_request")


class PanelError(TableError, OSError):
    """The dealer's panel cannot be opened (no GPIO, pin busy, wrong backend)."""


@dataclass(frozen=True)
class PanelPress:
    """A button was pressed: its name (one of :data:`BUTTONS`) and the key switch at the press."""

    button: str
    supervisor_key: bool = False


def panel_input(press: PanelPress, state: str) -> i.TableInput | None:
    """The table input a press is in table state ``state`` (None: a button the table has not).

    With the supervisor's key on, *start round* resumes a paused round and *void request* voids.
    """
    if press.button == "start_round":
        if press.supervisor_key and state == "paused":
            return i.SupervisorResume(by="panel key switch")
        return i.StartRound(by="dealer")
    if press.button == "close_betting":
        return i.CloseBetting(by="dealer")
    if press.button == "card_dropped":
        return i.CardDropped()
    if press.button == "void_request":
        if press.supervisor_key:
            return i.SupervisorVoid(by="panel key switch", reason="voided at the panel")
        return i.VoidRequest(by="dealer")
    return None


def make_pin_factory(gpio: str) -> Any:
    """The gpiozero pin factory for ``gpio``: ``mock`` or ``native`` (gpiozero's default)."""
    if gpio == "mock":
        from gpiozero.pins.mock import MockFactory

        return MockFactory()
    import warnings

    from gpiozero import Device

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # one PinFactoryFallback per backend tried
            return Device._default_pin_factory()
    except Exception as e:  # gpiozero raises BadPinFactory after trying every backend
        raise PanelError(
            f"cannot open the dealer panel: no GPIO pin factory on this machine ({e}); "
            "install lgpio on a Raspberry Pi, or set panel.gpio = \"mock\""
        ) from e


class DealerPanel:
    """Buttons report presses to ``on_press(name)``; lamps follow the table's state."""

    def __init__(self, pins: dict[str, int], pin_factory: Any, on_press: Callable[[str], None]) -> None:
        from gpiozero import LED, Button, Buzzer

        self.pin_factory = pin_factory
        self.pins = dict(pins)
        self._devices: list[Any] = []
        try:
            self.buttons = {name: self._add(Button(pins[name], pin_factory=pin_factory)) for name in BUTTONS}
            self.key = self._add(Button(pins["supervisor_key"], pin_factory=pin_factory))
            self.lamps = {
                "betting": self._add(LED(pins["lamp_betting"], pin_factory=pin_factory)),
                "dealing": self._add(LED(pins["lamp_dealing"], pin_factory=pin_factory)),
                "alarm": self._add(LED(pins["lamp_alarm"], pin_factory=pin_factory)),
            }
            self.buzzer = self._add(Buzzer(pins["buzzer"], pin_factory=pin_factory))
        except Exception as e:
            self.close()
            raise PanelError(f"cannot open the dealer panel: {e}") from e
        for name, button in self.buttons.items():
            button.when_pressed = _presser(on_press, name)

    def _add(self, device: Any) -> Any:
        self._devices.append(device)
        return device

    @property
    def supervisor_key_on(self) -> bool:
        """True while the supervisor's key switch is turned on."""
        return bool(self.key.is_pressed)

    def show(self, state: str) -> None:
        """Lamps for a table state: green while betting, amber while dealing, red when paused."""
        wanted = {"betting": state == "betting", "dealing": state == "dealing", "alarm": state == "paused"}
        for name, on in wanted.items():
            lamp = self.lamps[name]
            if bool(lamp.value) != on:
                lamp.on() if on else lamp.off()

    def buzz(self) -> None:
        """Two short beeps, in the background."""
        self.buzzer.beep(on_time=0.15, off_time=0.1, n=2, background=True)

    def close(self) -> None:
        for device in reversed(self._devices):
            try:
                device.close()
            except Exception:  # closing must not mask the error that got us here
                log.exception("closing a panel device")
        self._devices.clear()


def _presser(on_press: Callable[[str], None], name: str) -> Callable[[], None]:
    return lambda: on_press(name)
