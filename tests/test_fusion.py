"""Shoe and camera cross-check: a card counts when both agree."""

from __future__ import annotations

from table_controller.fusion import CardFusion
from table_controller.rules import load_game
from table_controller.rules.cards import parse_card
from table_controller.table import inputs as i


def deal_with(variant: str, *codes: str):
    game = load_game(variant)
    deal = game.new_deal()
    for code in codes:
        deal.place(parse_card(code))
    return deal


def test_shoe_card_waits_for_the_camera_then_counts_as_both() -> None:
    f = CardFusion("shoe+camera")
    deal = deal_with("baccarat")
    assert f.shoe_card("4H", deal, True, 0.0) == []
    assert f.camera_card("player", 0, "4H", deal, True, 0.2) == [i.CardPresented("4H", "shoe+camera")]
    assert not f.pending


def test_camera_reading_another_card_is_a_source_mismatch() -> None:
    f = CardFusion("shoe+camera")
    deal = deal_with("baccarat")
    f.shoe_card("4H", deal, True, 0.0)
    assert f.camera_card("player", 0, "4D", deal, True, 0.2) == [
        i.CameraMismatch("the shoe read 4H, the camera read 4D at player[0]", shoe_card="4H")
    ]


def test_card_laid_at_the_wrong_position_is_wrong_position() -> None:
    f = CardFusion("shoe+camera")
    deal = deal_with("baccarat")
    f.shoe_card("4H", deal, True, 0.0)
    assert f.camera_card("banker", 0, "4H", deal, True, 0.2) == [
        i.CardMisplaced("card 4H laid at banker[0], the rules called for player[0]")
    ]


def test_unconfirmed_shoe_card_times_out_as_a_mismatch() -> None:
    f = CardFusion("shoe+camera", confirm_seconds=3)
    deal = deal_with("baccarat")
    f.shoe_card("4H", deal, True, 0.0)
    assert f.tick(2.9) == []
    assert f.tick(3.0) == [i.CameraMismatch("the camera did not see card 4H within 3 s", shoe_card="4H")]


def test_camera_card_without_a_shoe_card_is_a_mismatch_after_the_wait() -> None:
    f = CardFusion("shoe+camera", confirm_seconds=3)
    deal = deal_with("baccarat")
    assert f.camera_card("player", 0, "9S", deal, True, 0.0) == []
    assert f.tick(8.9) == []  # the shoe's frame may still be on its way (re-sent by the link)
    assert f.tick(9.0) == [
        i.CameraMismatch("the camera saw 9S at player[0] but the shoe gave no such card")
    ]


def test_camera_first_then_shoe_still_agrees() -> None:
    f = CardFusion("shoe+camera")
    deal = deal_with("baccarat")
    f.camera_card("player", 0, "9S", deal, True, 0.0)
    assert f.shoe_card("9S", deal, True, 0.1) == [i.CardPresented("9S", "shoe+camera")]


def test_two_pending_cards_follow_the_dealing_plan() -> None:
    f = CardFusion("shoe+camera")
    deal = deal_with("baccarat")
    f.shoe_card("4H", deal, True, 0.0)
    f.shoe_card("KS", deal, True, 0.0)
    assert f.expected_slot(deal, extra=1) == ("banker", 0)
    assert f.camera_card("player", 0, "4H", deal, True, 0.1) == [i.CardPresented("4H", "shoe+camera")]


def test_card_off_every_position_is_exposed() -> None:
    f = CardFusion("shoe+camera")
    assert f.camera_card(None, None, "QS", deal_with("baccarat"), True, 0.0) == [
        i.ExposedCard("card QS seen off every position")
    ]


def test_cards_on_the_layout_between_rounds_are_ignored() -> None:
    f = CardFusion("camera")
    assert f.camera_card("player", 0, "QS", None, False, 0.0) == []


def test_camera_only_table_takes_cards_from_the_camera() -> None:
    f = CardFusion("camera")
    deal = deal_with("teen-patti-2020", "AS")
    assert f.camera_card("b", 0, "KD", deal, True, 0.0) == [i.CardPresented("KD", "camera")]
    assert f.camera_card("a", 0, "AS", deal, True, 0.0) == []  # already placed
    assert f.camera_card("a", 1, "2C", deal, True, 0.0) == [
        i.CardMisplaced("2C laid at a[1], the rules called for b[0]")
    ]
    assert f.camera_card("b", 0, None, deal, True, 0.0) == [
        i.NoRead("the camera cannot read the card at b[0]")
    ]


def test_shoe_only_passes_cards_straight_through() -> None:
    assert CardFusion("shoe").shoe_card("AS", deal_with("baccarat"), True, 0.0) == [i.CardPresented("AS", "shoe")]


def test_two_unconfirmed_cards_pause_one_at_a_time_and_none_is_dropped() -> None:
    f = CardFusion("shoe+camera", confirm_seconds=3)
    deal = deal_with("baccarat")
    f.shoe_card("8C", deal, True, 0.0)
    f.shoe_card("6D", deal, True, 0.0)
    assert f.tick(3.0) == [i.CameraMismatch("the camera did not see card 8C within 3 s", shoe_card="8C")]
    assert f.tick(3.5, dealing=False) == []  # paused: the supervisor settles 8C first
    assert [p.code for p in f.pending] == ["6D"]
    deal.place(parse_card("8C"))  # confirmed by hand
    assert f.tick(5.9) == []
    assert f.tick(6.0) == [i.CameraMismatch("the camera did not see card 6D within 3 s", shoe_card="6D")]


def test_cards_still_waiting_when_the_round_ends_are_handed_back_not_dropped() -> None:
    f = CardFusion("shoe+camera")
    deal = deal_with("baccarat")
    f.shoe_card("7S", deal, True, 0.0, shoe_count=41)
    assert f.reset() == [i.CardPresented("7S", "shoe", 41)]
    assert f.pending == [] and f.reset() == []


def test_a_later_card_seen_first_waits_for_the_earlier_one_and_both_count_in_order() -> None:
    """Regression (soak, camera table): after a blackout or a restart the camera sees the
    whole layout in one frame, in any order; a later card seen first is no wrong position."""
    f = CardFusion("shoe+camera")
    deal = deal_with("baccarat", "5H")
    assert f.shoe_card("7D", deal, True, 0.0) == []
    assert f.shoe_card("JS", deal, True, 0.1) == []
    assert f.camera_card("player", 1, "JS", deal, True, 0.2) == []  # waits: 7D comes first
    assert f.camera_card("banker", 0, "7D", deal, True, 0.2) == [
        i.CardPresented("7D", "shoe+camera"),
        i.CardPresented("JS", "shoe+camera"),
    ]
    assert not f.pending and not f.unmatched


def test_a_card_seen_while_the_round_is_paused_is_settled_when_it_deals_again() -> None:
    f = CardFusion("shoe+camera")
    deal = deal_with("baccarat")
    f.shoe_card("4H", deal, True, 0.0)
    assert f.camera_card("player", 0, "4H", deal, False, 0.5, held=True) == []
    assert f.tick(1.0, dealing=False, deal=deal) == []
    assert f.tick(1.1, dealing=True, deal=deal) == [i.CardPresented("4H", "shoe+camera")]


def test_a_shoe_card_the_camera_saw_first_still_waits_behind_an_earlier_one() -> None:
    f = CardFusion("shoe+camera")
    deal = deal_with("baccarat")
    f.shoe_card("4H", deal, True, 0.0)
    assert f.camera_card("banker", 0, "9C", deal, True, 0.1) == []  # ahead of its shoe frame
    assert f.shoe_card("9C", deal, True, 0.2) == []  # not before 4H
    assert [p.code for p in f.pending] == ["4H", "9C"]
    assert f.camera_card("player", 0, "4H", deal, True, 0.3) == [
        i.CardPresented("4H", "shoe+camera"),
        i.CardPresented("9C", "shoe+camera"),
    ]


def test_a_card_waiting_its_turn_does_not_time_out_as_unknown_to_the_shoe() -> None:
    f = CardFusion("shoe+camera", confirm_seconds=1.0)
    deal = deal_with("baccarat")
    f.shoe_card("4H", deal, True, 0.0)
    f.shoe_card("9C", deal, True, 0.0)
    f.camera_card("banker", 0, "9C", deal, True, 0.0)
    out = f.tick(1.5, dealing=True, deal=deal)
    assert out == [i.CameraMismatch("the camera did not see card 4H within 1 s", shoe_card="4H")]
    assert f.tick(5.0, dealing=False, deal=deal) == []  # paused: 9C's sighting waits
    deal.place(parse_card("4H"))  # the supervisor confirmed 4H by hand
    assert f.tick(60.0, dealing=True, deal=deal) == [i.CardPresented("9C", "shoe+camera")]
