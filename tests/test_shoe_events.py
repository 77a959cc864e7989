"""Event records: JSON form (as `shoe monitor --json` prints it) and link-state text."""

from __future__ import annotations

import pytest

from firmware_interfaces.shoe import (
    CardDrawn,
    Hello,
    LinkDown,
    LinkState,
    LinkUp,
    ShoeStatus,
    event_to_dict,
)
from firmware_interfaces.shoe.errors import MalformedFrame

LINK = LinkState("5F3A9C01", 17)


def test_card_json_matches_the_issue_example_plus_the_boot_id() -> None:
    assert event_to_dict(CardDrawn("TS", "RO", 143, LINK)) == {
        "event": "card", "code": "TS", "reader": "RO", "count": 143, "seq": 17, "boot": "5F3A9C01",
    }


def test_hello_json_names_the_boot_id_boot() -> None:
    hello = Hello("ACME", "SmartShoe-8", "SN0042", "2.1.0", "5F3A9C01", "-", True,
                  LinkState("5F3A9C01", 0))
    assert event_to_dict(hello) == {
        "event": "hello", "vendor": "ACME", "model": "SmartShoe-8", "serial": "SN0042",
        "firmware": "2.1.0", "nonce": "-", "new_session": True, "resynced": False, "seq": 0,
        "boot": "5F3A9C01",
    }


def test_link_events_and_status_json() -> None:
    assert event_to_dict(LinkUp()) == {"event": "link-up"}
    assert event_to_dict(LinkDown("no frame from the shoe for 2.0 s")) == {
        "event": "link-down", "reason": "no frame from the shoe for 2.0 s"}
    assert event_to_dict(ShoeStatus(True, False, 12, LINK)) == {
        "event": "state", "gate_locked": True, "lid_open": False, "count": 12, "seq": 17,
        "boot": "5F3A9C01"}


def test_link_state_text_round_trips() -> None:
    assert str(LINK) == "5F3A9C01:17"
    assert LinkState.parse("5f3a9c01:17") == LINK


@pytest.mark.parametrize("text", ["5F3A9C01", "5F3A9C01:x", "5F3A9C:1", "5F3A9C01:70000"])
def test_bad_link_state_text_is_a_clear_error(text: str) -> None:
    with pytest.raises(MalformedFrame, match="expected BOOTID:SEQ"):
        LinkState.parse(text)


def test_events_are_frozen() -> None:
    card = CardDrawn("TS", "RO", 143, LINK)
    with pytest.raises(AttributeError):
        card.code = "AS"  # type: ignore[misc]
