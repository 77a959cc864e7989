"""What each shoe driver event means to the table: the one place that maps them.

The drivers (:mod:`firmware_interfaces.shoe`) know nothing of games; the table
knows nothing of frames. This module is the seam: :data:`SHOE_EVENT_MAPPING`
has one entry for every member of the drivers' ``ShoeEvent`` union, keyed by the
event's class, saying either which table input it becomes
(:class:`BecomesInput`) or that it is none, and why (:class:`NotATableInput`).

It lives beside the controller rather than in ``table/inputs.py`` because it
imports the drivers' types, and the table package (machine, inputs) does not
depend on any driver.

A driver event whose class has no entry is refused by :func:`table_input_for`
with :class:`UnmappedShoeEvent`: the controller then raises an alert and does
not acknowledge the frame, so a new or renamed driver event cannot make a card
disappear silently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from firmware_interfaces.shoe import events as shoe
from table_controller.errors import TableError
from table_controller.table import inputs as i

__all__ = [
    "SHOE_EVENT_MAPPING",
    "BecomesInput",
    "NotATableInput",
    "UnmappedShoeEvent",
    "table_input_for",
]


class UnmappedShoeEvent(TableError, LookupError):
    """A shoe driver event of a class :data:`SHOE_EVENT_MAPPING` has no entry for."""


@dataclass(frozen=True)
class BecomesInput:
    """The driver event becomes the table input ``make`` builds (or, where ``make`` answers
    None, nothing this time: a HELLO that is no restart)."""

    make: Callable[[Any], i.TableInput | None]


@dataclass(frozen=True)
class NotATableInput:
    """The driver event is no table input; ``reason`` says why, and who reads it instead."""

    reason: str


ShoeEventRole = BecomesInput | NotATableInput


def _card(e: shoe.CardDrawn) -> i.TableInput:
    # A line reader's count is the driver's own, not the device's: not a shoe count.
    return i.CardPresented(e.code, "shoe", e.count if e.link is not None else None)


def _reader_notice(e: shoe.ReaderNotice) -> i.TableInput:
    if e.kind == "gap":
        return i.DeviceFault(e.text)  # a card may be lost: a round in progress pauses
    if e.kind == "unreadable":
        return i.NoRead(e.text)
    return i.DeviceWarning(f"card reader: {e.text}")


def _hello(e: shoe.Hello) -> i.TableInput | None:
    # ``new_session``: the driver had another session (its own or the journal's, given as
    # ``resume``), and the shoe started this one by itself: its unacknowledged frames are gone.
    if e.new_session:
        return i.ShoeRestarted(f"the shoe started a new session (boot id {e.boot_id})")
    return None


#: Every driver event class, with what it is to the table.
SHOE_EVENT_MAPPING: Mapping[type[Any], ShoeEventRole] = {
    shoe.CardDrawn: BecomesInput(_card),
    shoe.NoRead: BecomesInput(lambda e: i.NoRead(f"the shoe could not read card {e.count}")),
    shoe.CutCard: BecomesInput(lambda e: i.ShoeCut(e.count)),
    shoe.NewShoe: BecomesInput(lambda e: i.ShoeNew(e.decks)),
    shoe.ShoeEmpty: BecomesInput(lambda e: i.ShoeEmpty(e.count)),
    shoe.Lid: BecomesInput(lambda e: i.LidChanged(e.is_open)),
    shoe.Fault: BecomesInput(lambda e: i.DeviceFault(f"shoe fault {e.code}: {e.text}")),
    shoe.ReaderNotice: BecomesInput(_reader_notice),
    shoe.LinkUp: BecomesInput(lambda e: i.LinkChanged(True)),
    shoe.LinkDown: BecomesInput(lambda e: i.LinkChanged(False, f"shoe link down: {e.reason}")),
    shoe.Hello: BecomesInput(_hello),
    shoe.Gate: NotATableInput(
        "the gate's answer to LOCK/UNLOCK: the shoe handshake reads it to confirm a lock; "
        "the table decides what the gate must be, it does not follow the device"
    ),
    shoe.ShoeStatus: NotATableInput(
        "the answer to STATUS: the shoe handshake reads its gate to confirm a lock; its lid and "
        "count repeat what LID and CARD frames already told the table"
    ),
}


def table_input_for(event: object) -> i.TableInput | None:
    """The table input a shoe driver event becomes (None: it is no table input).

    Looked up by the event's class, never by its name. Raises
    :class:`UnmappedShoeEvent` for a class that has no entry.
    """
    role = SHOE_EVENT_MAPPING.get(type(event))
    if role is None:
        kind = type(event)
        raise UnmappedShoeEvent(
            f"shoe event class {kind.__module__}.{kind.__qualname__} has no table mapping "
            f"(table_controller/shoe_mapping.py): {event!r} refused, not acknowledged"
        )
    if isinstance(role, NotATableInput):
        return None
    return role.make(event)
