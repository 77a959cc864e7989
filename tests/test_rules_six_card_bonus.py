"""Teen Patti's six-card bonus: the best 5-card poker hand of both hands' six cards."""

from __future__ import annotations

import random

import pytest

from table_controller.rules import load_game, parse_cards
from table_controller.rules.cards import CODES
from table_controller.rules.hands import best_five_category

phevaluator = pytest.importorskip("phevaluator")


def c(codes: str) -> list[int]:
    return parse_cards(codes.split())


@pytest.mark.parametrize(
    ("six", "category", "pays"),
    [
        ("AS KS QS JS TS 2H", "royal-flush", "1000"),
        ("TH JH QH KH AH AS", "royal-flush", "1000"),
        ("9S KS QS JS TS AH", "straight-flush", "200"),  # K-high, not royal
        ("AD 2D 3D 4D 5D KC", "straight-flush", "200"),  # the wheel, suited
        ("AD 2D 3D 4D 5D 6D", "straight-flush", "200"),  # 6-high straight flush
        ("7S 7H 7D 7C 2S 3H", "four-of-a-kind", "100"),
        ("7S 7H 7D 2C 2S 3H", "full-house", "20"),
        ("7S 7H 7D 2C 2S 2H", "full-house", "20"),  # two trips
        ("AS 9S 7S 4S 2S 2H", "flush", "15"),
        ("AC 3C 5C 7C 9C JC", "flush", "15"),  # six suited, no straight
        ("AS 2H 3D 4C 5S KH", "straight", "10"),  # the wheel
        ("TS JH QD KC AS 2H", "straight", "10"),  # broadway
        ("4S 5H 6D 7C 8S 8H", "straight", "10"),
        ("QS KH AD 2C 3S 9H", "high-card", "-1"),  # Q-K-A-2-3 does not wrap round
        ("KS AH 2D 3C 4S 9H", "high-card", "-1"),  # nor K-A-2-3-4
        ("7S 7H 7D 2C 9S 3H", "three-of-a-kind", "7"),
        ("7S 7H 2D 2C 9S 3H", "two-pair", "-1"),
        ("7S 7H 2D 2C 9S 9H", "two-pair", "-1"),
        ("7S 7H 2D KC 9S 3H", "pair", "-1"),
        ("7S JH 2D KC 9S 3H", "high-card", "-1"),
    ],
)
def test_six_card_bonus_category_and_payout(six: str, category: str, pays: str) -> None:
    cards = c(six)
    assert best_five_category(cards) == category
    a, b = cards[0::2], cards[1::2]  # dealt a, b, a, b, a, b
    result = load_game("teen-patti-2020").deal(cards)[0].result()
    assert result.outcome["six_card_bonus"] == category
    assert result.to_dict()["payouts"]["six_card_bonus"] == pays
    assert sorted(result.hands["a"].cards + result.hands["b"].cards) == sorted(CODES[x] for x in a + b)


#: phevaluator rank bounds (smaller is stronger), 7,462 equivalence classes.
PH_CATEGORY_BOUNDS = [
    (1, "royal-flush"), (10, "straight-flush"), (166, "four-of-a-kind"), (322, "full-house"),
    (1599, "flush"), (1609, "straight"), (2467, "three-of-a-kind"), (3325, "two-pair"),
    (6185, "pair"), (7462, "high-card"),
]


def ph_category(rank: int) -> str:
    for bound, name in PH_CATEGORY_BOUNDS:
        if rank <= bound:
            return name
    raise AssertionError(rank)


def to_ph(card: int) -> int:
    """Our card (rank A..K *4 + suit SHDC) as phevaluator's id (rank 2..A *4 + suit CDHS)."""
    code = CODES[card]
    return phevaluator.Card(code[0] + code[1].lower()).id_


def test_phevaluator_mapping_sanity() -> None:
    evaluate = phevaluator.evaluate_cards
    assert evaluate(*(to_ph(x) for x in c("AS KS QS JS TS 2H"))) == 1
    assert ph_category(evaluate(*(to_ph(x) for x in c("AD 2D 3D 4D 5D KC")))) == "straight-flush"
    assert ph_category(evaluate(*(to_ph(x) for x in c("AS 2H 3D 4C 5S KH")))) == "straight"


def test_best_five_category_agrees_with_phevaluator_on_200000_random_six_card_sets() -> None:
    from phevaluator.evaluator import evaluate_6cards

    ph_id = [to_ph(x) for x in range(52)]
    rng = random.Random(20261129)
    seen: dict[str, int] = {}
    for _ in range(200_000):
        six = rng.sample(range(52), 6)
        expected = ph_category(evaluate_6cards(*(ph_id[x] for x in six)))
        assert best_five_category(six) == expected, [CODES[x] for x in six]
        seen[expected] = seen.get(expected, 0) + 1
    # the sample reaches every category but the royal flush (about 1 in 108,000 six-card sets)
    assert set(seen) >= {
        "straight-flush", "four-of-a-kind", "full-house", "flush", "straight",
        "three-of-a-kind", "two-pair", "pair", "high-card",
    }


def test_best_five_category_agrees_with_phevaluator_on_every_royal_and_straight_flush() -> None:
    from phevaluator.evaluator import evaluate_6cards

    ph_id = [to_ph(x) for x in range(52)]
    for suit in range(4):
        for low in range(10):  # A-2-3-4-5 .. T-J-Q-K-A
            five = [((low + k) % 13) * 4 + suit for k in range(5)]
            for extra in range(52):
                if extra in five:
                    continue
                six = five + [extra]
                expected = ph_category(evaluate_6cards(*(ph_id[x] for x in six)))
                assert best_five_category(six) == expected, [CODES[x] for x in six]
