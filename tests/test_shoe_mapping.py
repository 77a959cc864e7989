"""Driver events become table inputs by their type, in one table, and every one has an entry."""

from __future__ import annotations

import threading
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest
from shoe_doubles import RecordingShoe

from firmware_interfaces.shoe import events as shoe
from table_controller.controller import TableController
from table_controller.journal import Journal
from table_controller.rules import load_game
from table_controller.shoe_mapping import (
    SHOE_EVENT_MAPPING,
    BecomesInput,
    NotATableInput,
    UnmappedShoeEvent,
    table_input_for,
)
from table_controller.table import inputs as i

LINK = shoe.LinkState("5F3A9C01", 7)


def test_every_member_of_the_drivers_event_union_has_an_entry() -> None:
    unmapped = [t.__name__ for t in typing.get_args(shoe.ShoeEvent) if t not in SHOE_EVENT_MAPPING]
    assert unmapped == []


def test_the_mapping_names_no_class_outside_the_drivers_event_union() -> None:
    assert set(SHOE_EVENT_MAPPING) == set(typing.get_args(shoe.ShoeEvent))


def test_every_event_that_is_no_table_input_says_why() -> None:
    reasons = {t.__name__: r.reason for t, r in SHOE_EVENT_MAPPING.items() if isinstance(r, NotATableInput)}
    assert sorted(reasons) == ["Gate", "ShoeStatus"]
    assert all("handshake" in reason for reason in reasons.values())
    assert all(isinstance(r, (BecomesInput, NotATableInput)) for r in SHOE_EVENT_MAPPING.values())


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (shoe.CardDrawn("TS", "RO", 143, LINK), i.CardPresented("TS", "shoe", 143)),
        (shoe.CardDrawn("TS", "L", 3, None), i.CardPresented("TS", "shoe", None)),  # a line reader's own count
        (shoe.NoRead(12, LINK), i.NoRead("the shoe could not read card 12")),
        (shoe.CutCard(300, LINK), i.ShoeCut(300)),
        (shoe.NewShoe(8, LINK), i.ShoeNew(8)),
        (shoe.ShoeEmpty(416, LINK), i.ShoeEmpty(416)),
        (shoe.Lid(True, LINK), i.LidChanged(True)),
        (shoe.Fault("JAM", "card stuck", LINK), i.DeviceFault("shoe fault JAM: card stuck")),
        (shoe.ReaderNotice("gap", "port down 3 s"), i.DeviceFault("port down 3 s")),
        (shoe.ReaderNotice("unreadable", "two cards in a line"), i.NoRead("two cards in a line")),
        (shoe.ReaderNotice("burst", "too fast"), i.DeviceWarning("card reader: too fast")),
        (shoe.LinkUp(), i.LinkChanged(True)),
        (shoe.LinkDown("no frame for 2 s"), i.LinkChanged(False, "shoe link down: no frame for 2 s")),
        (shoe.Hello("ACME", "S8", "SN1", "2.1", "77AB0102", "-", True, LINK),
         i.ShoeRestarted("the shoe started a new session (boot id 77AB0102)")),
        (shoe.Hello("ACME", "S8", "SN1", "2.1", "77AB0102", "-", False, LINK), None),
        (shoe.Gate(True, LINK), None),
        (shoe.ShoeStatus(True, False, 0, LINK), None),
    ],
)
def test_each_driver_event_becomes_its_table_input(event: object, expected: i.TableInput | None) -> None:
    assert table_input_for(event) == expected


@dataclass(frozen=True)
class CardDrawn:
    """A look-alike of the driver's card event: the name alone must not be enough."""

    code: str
    reader: str
    count: int
    link: shoe.LinkState


def test_a_driver_event_of_an_unmapped_class_is_refused_even_under_a_known_name() -> None:
    event = CardDrawn("AS", "RO", 1, LINK)
    with pytest.raises(UnmappedShoeEvent) as refused:
        table_input_for(event)
    assert str(refused.value) == (
        f"shoe event class {__name__}.CardDrawn has no table mapping (table_controller/shoe_mapping.py): "
        f"{event!r} refused, not acknowledged"
    )


# -- what the controller does with one ---------------------------------------------


@dataclass(frozen=True)
class CardWithdrawn:
    """A driver event the mapping has never heard of (a new or renamed one)."""

    code: str
    link: shoe.LinkState


def _table(tmp_path: Path, **kw: object) -> TableController:
    game = load_game("baccarat")
    journal = Journal(tmp_path / "T01.sqlite", table="T01", game=game.game_id, variant="baccarat")
    c = TableController(game, journal, table="T01", **kw)  # type: ignore[arg-type]
    c.restore()
    return c


def test_an_unmapped_driver_event_is_not_acknowledged_and_raises_a_device_fault(tmp_path: Path) -> None:
    recording = RecordingShoe()
    c = _table(tmp_path, shoe=recording)
    c.on_shoe_event(shoe.LinkUp())
    c.on_shoe_event(shoe.Gate(True, shoe.LinkState("5F3A9C01", 1)))
    c.on_shoe_event(CardWithdrawn("AS", shoe.LinkState("5F3A9C01", 2)))
    c.on_shoe_event(shoe.CutCard(300, shoe.LinkState("5F3A9C01", 3)))
    c.apply_queued()
    assert recording.acked == [1, 3]  # 2 is not: the shoe keeps it
    assert c.stats.rejected == 1 and "CardWithdrawn" in c.stats.errors[-1]
    alerts = list(c.journal.events(types=["alert"]))
    assert [a.kind for a in alerts] == ["device-fault"]
    assert alerts[0].detail == (
        f"shoe event class {__name__}.CardWithdrawn has no table mapping "
        "(table_controller/shoe_mapping.py): CardWithdrawn(code='AS', "
        "link=LinkState(boot_id='5F3A9C01', seq=2)) refused, not acknowledged"
    )
    cut = list(c.journal.events(types=["shoe"]))
    assert [(e.event, e.count) for e in cut] == [("cut", 300)]  # the frame after it was applied


def test_an_unmapped_driver_event_does_not_end_the_loop(tmp_path: Path) -> None:
    c = _table(tmp_path, has_shoe=False)
    stop = threading.Event()
    loop = threading.Thread(target=c.run, args=(stop,), daemon=True)
    loop.start()
    try:
        c.on_shoe_event(CardWithdrawn("AS", shoe.LinkState("5F3A9C01", 1)))
        events = c.request(i.StartRound(by="dealer"))  # answered: the loop runs on
        assert [e.type for e in events] == ["round.start", "table.state"]
        assert loop.is_alive() and c.stats.rejected == 1
    finally:
        stop.set()
        loop.join(5)
