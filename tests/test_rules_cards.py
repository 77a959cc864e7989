"""Card codes, decks, seeded shoes, and money as events.md writes it."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.errors import CardError, UnknownCard
from table_controller.rules import card_code, money_text, parse_card, parse_cards
from table_controller.rules.cards import (
    CODES,
    IS_PICTURE,
    POINTS,
    new_deck,
    new_shoe,
    rank_index,
    shuffled_shoe,
    suit_index,
)


def test_card_numbering_is_rank_times_four_plus_suit() -> None:
    assert parse_card("AS") == 0
    assert parse_card("AH") == 1
    assert parse_card("2S") == 4
    assert parse_card("KC") == 51
    assert (rank_index(parse_card("TD")), suit_index(parse_card("TD"))) == (9, 2)


def test_every_code_round_trips() -> None:
    assert len(CODES) == 52 == len(set(CODES))
    for card in range(52):
        assert parse_card(card_code(card)) == card


@pytest.mark.parametrize("code", ["10S", "10s", "ts", " TS ", "T s".replace(" ", "")])
def test_ten_may_be_written_10_and_case_and_spaces_do_not_matter(code: str) -> None:
    assert parse_card(code) == parse_card("TS")
    assert card_code(parse_card(code)) == "TS"


@pytest.mark.parametrize("code", ["ZZ", "1S", "11S", "AX", "", "A", "ASS", "10"])
def test_unknown_codes_are_refused_with_the_code_in_the_message(code: str) -> None:
    with pytest.raises(UnknownCard) as info:
        parse_card(code)
    assert repr(code) in str(info.value)
    assert isinstance(info.value, CardError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("value", [0, None, b"AS", ["AS"]])
def test_non_strings_are_refused(value: object) -> None:
    with pytest.raises(UnknownCard, match="card code must be a string"):
        parse_card(value)  # type: ignore[arg-type]


def test_parse_cards_names_the_bad_one() -> None:
    assert parse_cards(["AS", "10H", "kd"]) == [0, 37, 50]
    with pytest.raises(UnknownCard, match="'QQ'"):
        parse_cards(["AS", "QQ"])


def test_points_and_pictures() -> None:
    assert [POINTS[parse_card(r + "S")] for r in "A23456789TJQK"] == [
        1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0,
    ]
    assert [r for r in "A23456789TJQK" if IS_PICTURE[parse_card(r + "H")]] == ["J", "Q", "K"]


def test_decks_and_shoes() -> None:
    assert new_deck() == list(range(52))
    shoe = new_shoe(8)
    assert len(shoe) == 416
    assert all(shoe.count(card) == 8 for card in range(52))
    for bad in (0, 9):
        with pytest.raises(ValueError, match=f"a shoe holds 1..8 decks, not {bad}"):
            new_shoe(bad)


def test_seeded_shuffle_is_reproducible_and_complete() -> None:
    one = shuffled_shoe(8, random.Random(7))
    two = shuffled_shoe(8, random.Random(7))
    three = shuffled_shoe(8, random.Random(8))
    assert one == two
    assert one != three
    assert sorted(one) == sorted(new_shoe(8))
    assert one != new_shoe(8)


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (Decimal("0.95"), "0.95"), (Decimal(-1), "-1"), (Decimal(0), "0"), (Decimal(8), "8"),
        (Decimal(1000), "1000"), (Decimal("0.5"), "0.5"), (Decimal("1E+3"), "1000"),
    ],
)
def test_money_text_is_a_plain_decimal_string(amount: Decimal, text: str) -> None:
    assert money_text(amount) == text


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=5) | st.sampled_from(["10S", "10h", " kc", "T", "10", "1OS", "AS\n"]))
def test_any_text_is_a_card_or_an_unknown_card_error(text: str) -> None:
    try:
        card = parse_card(text)
    except UnknownCard as e:
        assert repr(text) in str(e)
    else:
        assert 0 <= card < 52
        normal = text.strip().upper().replace("10", "T", 1)
        assert card_code(card) == normal
