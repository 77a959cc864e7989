"""Card readers that are USB keyboards ("keyboard wedge"): key presses as a byte stream.

:class:`HidKeyboardTransport` turns a Linux input device's key events into the
bytes a serial line reader would send (``K``, ``H``, Enter -> ``\\n``), so the
``lines`` protocol reads either. The device is grabbed exclusively, so the
keystrokes never reach a desktop or a login prompt. Opening a real device
needs the ``hid`` extra (``pip install table-controller[hid]``: evdev); the
key map itself is the kernel's stable key codes (``linux/input-event-codes.h``)
and needs nothing.

Configuration: ``shoe.protocol = "lines"``, ``shoe.port = "hid:/dev/input/by-id/...-event-kbd"``.
"""

from __future__ import annotations

import select
from collections.abc import Callable, Iterable
from typing import Any, Protocol

EV_KEY = 1
KEY_LEFTSHIFT, KEY_RIGHTSHIFT = 42, 54
_SHIFTS = (KEY_LEFTSHIFT, KEY_RIGHTSHIFT)

# Kernel key code -> (character, character with shift). Only what card readers type.
_LETTERS = {
    16: "q", 17: "w", 18: "e", 19: "r", 20: "t", 21: "y", 22: "u", 23: "i", 24: "o", 25: "p",
    30: "a", 31: "s", 32: "d", 33: "f", 34: "g", 35: "h", 36: "j", 37: "k", 38: "l",
    44: "z", 45: "x", 46: "c", 47: "v", 48: "b", 49: "n", 50: "m",
}
KEYMAP: dict[int, tuple[str, str]] = {code: (ch, ch.upper()) for code, ch in _LETTERS.items()}
KEYMAP.update({2 + i: (str((i + 1) % 10), "!@#$%^&*()"[i]) for i in range(10)})  # KEY_1..KEY_0
KEYMAP.update({
    12: ("-", "_"), 13: ("=", "+"), 15: ("\t", "\t"), 28: ("\n", "\n"), 39: (";", ":"),
    51: (",", "<"), 52: (".", ">"), 53: ("/", "?"), 57: (" ", " "), 55: ("*", "*"),
    71: ("7", "7"), 72: ("8", "8"), 73: ("9", "9"), 74: ("-", "-"), 75: ("4", "4"),
    76: ("5", "5"), 77: ("6", "6"), 78: ("+", "+"), 79: ("1", "1"), 80: ("2", "2"),
    81: ("3", "3"), 82: ("0", "0"), 83: (".", "."), 96: ("\n", "\n"),
})


class KeyEvent(Protocol):
    """What an evdev ``InputEvent`` has that we use."""

    type: int
    code: int
    value: int  # 1 down, 0 up, 2 auto-repeat


class KeyDevice(Protocol):
    """What an evdev ``InputDevice`` has that we use."""

    def fileno(self) -> int: ...
    def read(self) -> Iterable[KeyEvent]: ...
    def grab(self) -> None: ...
    def ungrab(self) -> None: ...
    def close(self) -> None: ...


class KeyDecoder:
    """Key events -> text, tracking the shift keys. Unknown keys and auto-repeats are dropped."""

    def __init__(self) -> None:
        self._shift: set[int] = set()

    def feed(self, events: Iterable[KeyEvent]) -> str:
        out: list[str] = []
        for event in events:
            if event.type != EV_KEY:
                continue
            if event.code in _SHIFTS:
                if event.value:
                    self._shift.add(event.code)
                else:
                    self._shift.discard(event.code)
                continue
            if event.value != 1:
                continue
            chars = KEYMAP.get(event.code)
            if chars is not None:
                out.append(chars[1] if self._shift else chars[0])
        return "".join(out)


class HidKeyboardTransport:
    """A keyboard-wedge reader with the read side of a pyserial port (``read``, ``in_waiting``).

    ``write`` goes nowhere: a keyboard has no back channel.
    """

    def __init__(self, device: KeyDevice, *, grab: bool = True) -> None:
        self.device = device
        self.timeout: float | None = 0.05
        self._decoder = KeyDecoder()
        self._buf = bytearray()
        self._grabbed = False
        if grab:
            device.grab()  # keystrokes go to us only, never to a desktop
            self._grabbed = True

    def _pump(self, wait: float | None) -> None:
        ready, _, _ = select.select([self.device.fileno()], [], [], wait)
        if ready:
            text = self._decoder.feed(self.device.read())
            self._buf += text.encode("ascii")

    @property
    def in_waiting(self) -> int:
        if not self._buf:
            self._pump(0)
        return len(self._buf)

    def read(self, size: int = 1) -> bytes:
        if not self._buf:
            self._pump(self.timeout)
        data = bytes(self._buf[:size])
        del self._buf[:size]
        return data

    def write(self, data: bytes) -> int:
        return len(data)

    def close(self) -> None:
        try:
            if self._grabbed:
                self.device.ungrab()
        except OSError:
            pass
        finally:
            self.device.close()


def open_hid(path: str, *, grab: bool = True) -> Callable[[], Any]:
    """An opener for a keyboard-wedge reader at ``path`` (``/dev/input/eventN``), via evdev."""

    def opener() -> HidKeyboardTransport:
        try:
            import evdev
        except ImportError as e:
            raise OSError(
                "a HID card reader needs evdev: pip install 'table-controller[hid]'"
            ) from e
        return HidKeyboardTransport(evdev.InputDevice(path), grab=grab)

    return opener
