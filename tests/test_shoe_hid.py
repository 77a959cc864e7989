"""Keyboard-wedge (HID) card readers: key events become the bytes a line reader sends."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

from firmware_interfaces.shoe.hid import KEYMAP, HidKeyboardTransport, KeyDecoder
from firmware_interfaces.shoe.lines import LineCardParser

SHIFT = 42


@dataclass
class Key:
    code: int
    value: int
    type: int = 1


def typed(text: str) -> list[Key]:
    """The key events a keyboard-wedge reader sends to type ``text``."""
    by_char = {}
    for code, (plain, shifted) in KEYMAP.items():
        by_char.setdefault(plain, (code, False))
        by_char.setdefault(shifted, (code, True))
    events: list[Key] = []
    for ch in text:
        code, shift = by_char[ch]
        if shift:
            events.append(Key(SHIFT, 1))
        events += [Key(code, 1), Key(code, 2), Key(code, 0)]  # down, auto-repeat, up
        if shift:
            events.append(Key(SHIFT, 0))
    return events


def test_typed_card_lines_decode_to_the_same_text() -> None:
    assert KeyDecoder().feed(typed("CARD:10h\nqd\nKS\n")) == "CARD:10h\nqd\nKS\n"


def test_the_key_map_is_the_kernels() -> None:
    ecodes = pytest.importorskip("evdev.ecodes")
    names = {"KEY_A": "a", "KEY_Q": "q", "KEY_Z": "z", "KEY_1": "1", "KEY_0": "0", "KEY_ENTER": "\n",
             "KEY_KPENTER": "\n", "KEY_SEMICOLON": ";", "KEY_SPACE": " ", "KEY_KP7": "7", "KEY_MINUS": "-"}
    for name, char in names.items():
        assert KEYMAP[ecodes.ecodes[name]][0] == char, name
    assert ecodes.ecodes["KEY_LEFTSHIFT"] == SHIFT


class FakeKeyboard:
    """Stands in for an evdev InputDevice: a pipe to select on, events to read."""

    def __init__(self, events: list[Key]) -> None:
        self._r, self._w = os.pipe()
        self._events = events
        os.write(self._w, b"x")
        self.grabbed = False
        self.closed = False

    def fileno(self) -> int:
        return self._r

    def read(self) -> list[Key]:
        os.read(self._r, 1)
        events, self._events = self._events, []
        return events

    def grab(self) -> None:
        self.grabbed = True

    def ungrab(self) -> None:
        self.grabbed = False

    def close(self) -> None:
        self.closed = True
        os.close(self._r)
        os.close(self._w)


def test_a_hid_reader_is_grabbed_and_read_like_a_serial_line_reader() -> None:
    device = FakeKeyboard(typed("AS\n10H\nHB\n"))
    port = HidKeyboardTransport(device)
    assert device.grabbed
    data = port.read(port.in_waiting or 1)
    assert [r.code for r in LineCardParser().feed(data) if r.code] == ["AS", "TH"]
    assert port.read(1) == b""  # nothing more: a read times out empty
    port.close()
    assert device.closed and not device.grabbed
