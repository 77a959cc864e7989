"""Teen Patti 20-20 (games.md §4): class order, tie-breaks, a/b/tie, pair plus, six-card bonus."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from table_controller.errors import DealError
from table_controller.rules import load_game, parse_cards
from table_controller.rules.cards import CODES
from table_controller.rules.hands import TEEN_PATTI_CLASSES, teen_patti_class

#: Straights high to low as games.md lists them.
STRAIGHTS_HIGH_TO_LOW = ["AKQ", "A23", "KQJ", "QJT", "JT9", "T98", "987", "876", "765", "654",
                         "543", "432"]
VALUE = {r: v for v, r in enumerate("23456789TJQKA", start=2)}


def c(codes: str) -> list[int]:
    return parse_cards(codes.split())


def strength(hand: str) -> int:
    return teen_patti_class(c(hand))[1]


def cls(hand: str) -> str:
    return teen_patti_class(c(hand))[0]


def judge(a: str, b: str) -> dict:
    aa, bb = c(a), c(b)
    shoe = [aa[0], bb[0], aa[1], bb[1], aa[2], bb[2]]
    deal, used = load_game("teen-patti-2020").deal(shoe + c("2C"))
    assert used == 6
    return deal.result().to_dict()


def reference_key(codes: tuple[str, ...]) -> tuple[int, tuple[int, ...]]:
    """games.md §4 read literally, independent of the code's tables."""
    values = sorted((VALUE[x[0]] for x in codes), reverse=True)
    suited = len({x[1] for x in codes}) == 1
    ranks = {x[0] for x in codes}
    straight = next(
        (i for i, s in enumerate(STRAIGHTS_HIGH_TO_LOW) if set(s) == ranks), None
    )
    if len(ranks) == 1:
        return (6 if values[0] == 14 else 5, (values[0],))
    if straight is not None:
        return (4 if suited else 3, (-straight,))
    if suited:
        return (2, tuple(values))
    if len(ranks) == 2:
        pair = values[1]
        kicker = values[2] if values[0] == values[1] else values[0]
        return (1, (pair, kicker))
    return (0, tuple(values))


# ------------------------------------------------------------------- ordering


def test_classes_high_to_low() -> None:
    assert TEEN_PATTI_CLASSES == (
        "trail-aces", "trail", "straight-flush", "straight", "flush", "pair", "high-card",
    )
    hands = ["AS AH AD", "2S 2H 2D", "4S 3S 2S", "AS KH QD", "AS KS 9S", "AS AH KD", "AS KH JD"]
    assert [cls(h) for h in hands] == list(TEEN_PATTI_CLASSES)
    got = [strength(h) for h in hands]
    assert got == sorted(got, reverse=True) and len(set(got)) == 7


def test_trail_of_aces_beats_trail_of_kings_beats_trail_of_twos() -> None:
    assert strength("AS AH AD") > strength("KS KH KD") > strength("2S 2H 2D")
    assert cls("KS KH KD") == "trail"


def test_straights_rank_a_k_q_then_a_2_3_then_k_q_j_down_to_4_3_2() -> None:
    hands = [" ".join(r + s for r, s in zip(straight, "SHD", strict=True)) for straight in STRAIGHTS_HIGH_TO_LOW]
    got = [strength(h) for h in hands]
    assert all(cls(h) == "straight" for h in hands)
    assert got == sorted(got, reverse=True)
    assert len(set(got)) == len(got)


def test_a_2_3_beats_k_q_j_and_loses_to_a_k_q() -> None:
    assert strength("AS 2H 3D") > strength("KS QH JD")
    assert strength("AS 2H 3D") < strength("AS KH QD")
    assert strength("AS 2S 3S") > strength("KH QH JH")
    assert cls("AS 2S 3S") == "straight-flush"


def test_k_a_2_is_not_a_straight() -> None:
    assert cls("KS AH 2D") == "high-card"
    assert cls("KS AS 2S") == "flush"


def test_flush_compares_cards_high_to_low() -> None:
    assert strength("AS KS 2S") > strength("AH QH JH")  # second card decides
    assert strength("KS 9S 5S") > strength("KH 9H 4H")  # third card decides
    assert strength("KS 9S 5S") == strength("KH 9H 5H")


def test_high_card_compares_cards_high_to_low() -> None:
    assert strength("AS 5H 3D") > strength("KS QH 9D")
    assert strength("AS JH 3D") > strength("AS TH 9D")
    assert strength("QS 9H 7D") > strength("QS 9H 6D")


def test_pair_compares_the_pair_then_the_odd_card() -> None:
    assert strength("KS KH 2D") > strength("QS QH AD")
    assert strength("KS KH 3D") > strength("KS KH 2D")
    assert strength("AS AH KD") > strength("AS AH QD")
    assert strength("2S 2H AD") > strength("AS KH JD")  # any pair beats high card


def test_suited_beats_the_same_ranks_unsuited() -> None:
    assert strength("AS KS 9S") > strength("AH KD 9C")
    assert cls("AS KS 9S") == "flush"
    assert cls("AH KD 9C") == "high-card"


def test_every_hand_orders_like_the_definition() -> None:
    # Exhaustive: all 22,100 hands sorted by games.md's reading give the same order and
    # the same ties as the code's strength.
    by_key: dict[tuple, set[int]] = {}
    for hand in combinations(range(52), 3):
        codes = tuple(CODES[x] for x in hand)
        by_key.setdefault(reference_key(codes), set()).add(teen_patti_class(list(hand))[1])
    ordered = sorted(by_key)
    strengths = []
    for key in ordered:
        assert len(by_key[key]) == 1, key  # equal by definition -> equal strength
        strengths.append(by_key[key].pop())
    assert strengths == sorted(strengths)
    assert len(set(strengths)) == len(strengths)  # different by definition -> different


def test_class_counts_over_every_hand() -> None:
    counts = Counter(teen_patti_class(list(h))[0] for h in combinations(range(52), 3))
    assert counts == {
        "trail-aces": 4, "trail": 48, "straight-flush": 48, "straight": 720, "flush": 1096,
        "pair": 3744, "high-card": 16440,
    }


def test_classify_refuses_four_cards() -> None:
    with pytest.raises(DealError, match="3 cards, not 4"):
        load_game("teen-patti-2020").classify(c("AS KS QS JS"))


# ---------------------------------------------------------------- the round


def test_deal_alternates_a_and_b() -> None:
    deal = load_game("teen-patti-2020").new_deal()
    assert [deal.place(card)[0] for card in range(6)] == ["a", "b"] * 3
    assert deal.is_complete


def test_a_wins_pays_0_95() -> None:
    r = judge("AS AH 2D", "KS KH QD")
    assert r["outcome"]["winner"] == "a"
    assert r["payouts"]["a"] == "0.95"
    assert r["payouts"]["b"] == "-1"
    assert r["payouts"]["tie"] == "-1"
    assert r["hands"]["a"] == {"cards": ["AS", "AH", "2D"], "class": "pair", "points": None}


def test_b_wins_pays_0_95() -> None:
    r = judge("AS KH 9C", "AD KD 9D")
    assert r["outcome"]["winner"] == "b"
    assert r["payouts"]["b"] == "0.95"
    assert r["payouts"]["a"] == "-1"


def test_equal_hands_tie_push_a_and_b_and_pay_the_tie_50() -> None:
    r = judge("AS KH 9D", "AH KD 9C")
    assert r["outcome"]["winner"] == "tie"
    assert (r["payouts"]["a"], r["payouts"]["b"], r["payouts"]["tie"]) == ("0", "0", "50")


def test_equal_straight_flushes_tie() -> None:
    r = judge("4S 3S 2S", "4H 3H 2H")
    assert r["outcome"]["winner"] == "tie"


@pytest.mark.parametrize(
    ("hand", "pays"),
    [
        ("AS AH AD", "50"), ("7S 7H 7D", "40"), ("QS KS AS", "30"), ("AS 2S 3S", "30"),
        ("AS 2H 3D", "6"), ("2S 7S JS", "3"), ("JS JH 2D", "1"), ("AS KH 9D", "-1"),
    ],
)
def test_pair_plus_pays_on_the_hands_class_win_or_lose(hand: str, pays: str) -> None:
    other = "4C 5C 8D" if "8D" not in hand else "4C 5C 9C"
    r = judge(hand, other)
    assert r["payouts"]["a.pair_plus"] == pays
    r = judge(other, hand)
    assert r["payouts"]["b.pair_plus"] == pays


def test_result_outcome_names_the_six_card_category() -> None:
    r = judge("AS KS QS", "JS TS 2D")
    assert r["outcome"] == {"winner": "a", "six_card_bonus": "royal-flush"}
    assert list(r["payouts"]) == ["a", "b", "tie", "a.pair_plus", "b.pair_plus", "six_card_bonus"]
