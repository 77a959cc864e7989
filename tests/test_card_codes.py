"""The drivers' card codes (``firmware_interfaces.cards``) and the rules' (``table_controller.rules.cards``)
are the same 52 codes in the same order, and both call the same texts a card code."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_interfaces.cards import CODES, parse_code
from firmware_interfaces.errors import DeviceConfigError, UnknownCardCode
from firmware_interfaces.shoe.events import CARD_CODES
from table_controller.errors import UnknownCard
from table_controller.rules.cards import CODES as RULES_CODES
from table_controller.rules.cards import card_code, parse_card

#: What a card code is made of, and what is near it: "10", a lower-case suit, a space, a stray letter.
NEAR_A_CODE = "A23456789TJQK10SHDCshdcatqXZ "


def rules_reading(text: object) -> str | None:
    try:
        return card_code(parse_card(text))  # type: ignore[arg-type]
    except UnknownCard:
        return None


def drivers_reading(text: object) -> str | None:
    try:
        return parse_code(text)  # type: ignore[arg-type]
    except UnknownCardCode:
        return None


def test_the_drivers_and_the_rules_have_the_same_52_codes_in_the_same_order() -> None:
    assert len(CODES) == len(set(CODES)) == 52
    assert CODES == RULES_CODES
    assert frozenset(CODES) == CARD_CODES


def test_every_short_text_near_a_code_is_read_alike_by_the_drivers_and_the_rules() -> None:
    texts = ["".join(t) for n in range(4) for t in itertools.product(NEAR_A_CODE, repeat=n)]
    texts += [pad + t + pad for t in texts if len(t) == 3 for pad in (" ", "\t", "\n")]
    disagreements = [t for t in texts if drivers_reading(t) != rules_reading(t)]
    assert disagreements == []
    assert {drivers_reading(t) for t in texts} == set(CODES) | {None}


@given(st.one_of(st.text(max_size=8), st.text(alphabet=NEAR_A_CODE, max_size=6)))
def test_any_text_is_read_alike_by_the_drivers_and_the_rules(text: str) -> None:
    assert drivers_reading(text) == rules_reading(text)


@pytest.mark.parametrize(("text", "code"), [("TS", "TS"), ("10s", "TS"), (" ah ", "AH"), ("kc", "KC")])
def test_a_code_reads_as_its_canonical_code(text: str, code: str) -> None:
    assert parse_code(text) == code


@pytest.mark.parametrize("text", ["", "1S", "T", "TSX", "10", "ZZ", None, 7])
def test_a_text_that_is_no_card_is_an_unknown_card_code_naming_it(text: object) -> None:
    with pytest.raises(UnknownCardCode, match=re.escape(repr(text))) as err:
        parse_code(text)  # type: ignore[arg-type]
    assert isinstance(err.value, DeviceConfigError) and isinstance(err.value, ValueError)
    with pytest.raises(UnknownCard) as rules_err:
        parse_card(text)  # type: ignore[arg-type]
    assert str(err.value) == str(rules_err.value)
