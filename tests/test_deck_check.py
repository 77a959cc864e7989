"""The deck check counts the shoe driver's events by their type."""

from __future__ import annotations

from firmware_interfaces.shoe import events as shoe
from table_controller.deck_check import check_deck

LINK = shoe.LinkState("5F3A9C01", 1)


def test_a_deck_check_counts_cards_no_reads_and_foreign_codes_until_the_shoe_is_empty() -> None:
    events = iter([
        shoe.CardDrawn("AS", "RO", 1, LINK), shoe.NoRead(2, LINK), shoe.Lid(False, LINK),
        shoe.CardDrawn("ZZ", "L", 3, None), shoe.ShoeEmpty(3, LINK), shoe.CardDrawn("KD", "RO", 4, LINK),
    ])
    report = check_deck(lambda timeout: next(events, None), 1)
    assert (report.cards, report.no_reads, report.foreign, report.ended_by) == (3, 1, ["ZZ"], "the shoe is empty")
    assert len(report.missing) == 51 and report.extra == {}
