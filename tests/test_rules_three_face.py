"""3 Face (games.md §3): First Card, deal order, win/lose/tie, pair plus, three-face-3p."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from table_controller.rules import Game, load_game, parse_cards
from table_controller.rules.cards import parse_card
from table_controller.rules.hands import poker3_category
from table_controller.rules.three_face import first_seat

SEATS = ["banker", "player1", "player2", "player3"]
FIRST_CARD_GROUPS = {
    "banker": "A59K", "player1": "26T", "player2": "37J", "player3": "48Q",
}


def c(codes: str) -> list[int]:
    return parse_cards(codes.split())


def shoe_for(first: str, **hands: str) -> list[int]:
    """First card, then the 12 cards in the order the First Card sets."""
    start = SEATS.index(first_seat(parse_card(first)))
    order = SEATS[start:] + SEATS[:start]
    cards = {seat: c(codes) for seat, codes in hands.items()}
    return [parse_card(first)] + [cards[s][i] for i in range(3) for s in order]


def judge(variant: str, first: str = "AS", **hands: str) -> dict:
    game = load_game(variant)
    deal, used = game.deal(shoe_for(first, **hands))
    assert used == 13
    return deal.result().to_dict()


# -------------------------------------------------------------- the First Card


@pytest.mark.parametrize(
    ("rank", "seat"), [(r, s) for s, ranks in FIRST_CARD_GROUPS.items() for r in ranks]
)
def test_first_card_groups(rank: str, seat: str) -> None:
    for suit in "SHDC":
        assert first_seat(parse_card(rank + suit)) == seat


@pytest.mark.parametrize(
    ("first", "order"),
    [
        ("AS", ["banker", "player1", "player2", "player3"]),
        ("6H", ["player1", "player2", "player3", "banker"]),
        ("JD", ["player2", "player3", "banker", "player1"]),
        ("4C", ["player3", "banker", "player1", "player2"]),
    ],
)
def test_first_card_then_twelve_cards_round_and_round(first: str, order: list[str]) -> None:
    game = load_game("three-face")
    deal = game.new_deal()
    assert deal.next_position == "first"
    assert deal.place(parse_card(first)) == ("first", 0)
    seen = [deal.place(card)[0] for card in range(28, 40)]
    assert seen == order * 3
    assert deal.is_complete


def test_first_card_hand_has_no_class_or_points() -> None:
    r = judge("three-face", "7S", banker="2S 3S 4S", player1="2H 3H 4H", player2="2D 3D 4D",
              player3="2C 3C 4C")
    assert r["hands"]["first"] == {"cards": ["7S"], "class": None, "points": None}
    assert list(r["hands"]) == ["first", "banker", "player1", "player2", "player3"]


# ---------------------------------------------------------------- win/lose/tie


def test_banker_win_pays_the_lose_bet_1_and_loses_the_win_bet() -> None:
    r = judge("three-face", banker="2S 3S 4S", player1="KH QH 7H", player2="AD AH AC",
              player3="TC 9C 9D")
    # banker 9; 2P7 ranks below 9 (points first, then pictures)
    assert r["outcome"] == {"player1": "lose", "player2": "lose", "player3": "lose"}
    assert r["payouts"]["player1.win"] == "-1"
    assert r["payouts"]["player1.lose"] == "1"


def test_player_beating_the_banker() -> None:
    r = judge("three-face", banker="2S 3S 5S", player1="KH QH 7H", player2="AD AH AC",
              player3="TC 9C 9D")
    # banker 0 points, no picture: the lowest class "0"
    assert r["hands"]["banker"]["class"] == "0"
    assert r["outcome"] == {"player1": "win", "player2": "win", "player3": "win"}
    assert r["payouts"]["player1.win"] == "1"
    assert r["payouts"]["player1.lose"] == "-1"
    assert r["payouts"]["player1.tie"] == "-1"


@pytest.mark.parametrize("hand", ["KH QH 6H", "JD AD 5D", "AC 2C 3C"])
def test_player_win_with_six_points_pays_half(hand: str) -> None:
    r = judge("three-face", banker="2S 3S TS", player1=hand, player2="KD 7D TD",
              player3="9H 9D 9C")
    assert r["hands"]["banker"]["class"] == "5"
    assert r["payouts"]["player1.win"] == "0.5"
    assert r["payouts"]["player2.win"] == "1"  # P7
    assert r["payouts"]["player3.win"] == "1"  # 7


@pytest.mark.parametrize("banker", ["KS QS 6S", "JS AS 5S", "AS 2S 3S"])
def test_lose_bet_pays_half_when_the_banker_wins_with_six(banker: str) -> None:
    r = judge("three-face", "4D", banker=banker, player1="TH 2H 3H", player2="4H 4C 7C",
              player3="9H 9D 5C")
    assert r["payouts"]["player1.lose"] == "0.5"  # banker 6-point hand beats 5
    assert r["payouts"]["player1.win"] == "-1"
    assert r["payouts"]["player2.lose"] == "0.5"
    assert r["payouts"]["player3.lose"] == "0.5"


def test_win_and_lose_push_on_equal_class_and_tie_pays_8() -> None:
    r = judge("three-face", banker="KS QS 9S", player1="JH QH 9H", player2="KD 5D 4D",
              player3="2C 3C 4C")
    assert r["outcome"]["player1"] == "tie"
    assert r["payouts"]["player1.win"] == "0"
    assert r["payouts"]["player1.lose"] == "0"
    assert r["payouts"]["player1.tie"] == "8"


def test_tie_is_on_class_so_equal_points_with_fewer_pictures_is_no_tie() -> None:
    r = judge("three-face", banker="KS QS 9S", player1="JH QH 9H", player2="KD 5D 4D",
              player3="2C 3C 4C")
    # player2 P9 and player3 9 have the banker's 9 points but fewer pictures
    assert r["payouts"]["player2.tie"] == "-1"
    assert r["payouts"]["player3.tie"] == "-1"
    assert r["outcome"]["player2"] == "lose"
    assert r["payouts"]["player2.lose"] == "1"


def test_six_point_tie_pushes_win_and_lose() -> None:
    r = judge("three-face", banker="KS QS 6S", player1="JH KH 6H", player2="2D 3D 4D",
              player3="2C 3C 4C")
    assert r["payouts"]["player1.win"] == "0"
    assert r["payouts"]["player1.lose"] == "0"
    assert r["payouts"]["player2.win"] == "1"  # 9 beats 2P6


# --------------------------------------------------------------------- pair plus


@pytest.mark.parametrize(
    ("hand", "category", "pays"),
    [
        ("QS KS AS", "straight-flush", "40"),  # the highest straight
        ("AH 2H 3H", "straight-flush", "40"),  # the lowest straight
        ("7D 7C 7H", "three-of-a-kind", "30"),
        ("QS KH AD", "straight", "6"),
        ("AS 2H 3D", "straight", "6"),
        ("9S TH JD", "straight", "6"),
        ("KS AH 2D", "high-card", "-1"),  # K-A-2 is not a straight
        ("KS AS 2S", "flush", "3"),  # ... nor a straight flush
        ("2S 7S JS", "flush", "3"),
        ("JS JH 2D", "pair", "1"),
        ("AS KH 9D", "high-card", "-1"),
    ],
)
def test_pair_plus_categories(hand: str, category: str, pays: str) -> None:
    assert poker3_category(c(hand)) == category
    r = judge("three-face", "2D" if "2D" not in hand else "2C", **_others(hand))
    assert r["payouts"]["player1.pair_plus"] == pays


def _others(player1: str) -> dict[str, str]:
    """A round with ``player1`` holding ``player1`` and the rest from unused cards."""
    used = set(player1.split()) | {"2D", "2C"}
    rest = [r + s for s in "CDHS" for r in "3456789T" if r + s not in used]
    return {"player1": player1, "banker": " ".join(rest[0:3]), "player2": " ".join(rest[3:6]),
            "player3": " ".join(rest[6:9])}


def test_pair_plus_counts_over_every_three_card_hand() -> None:
    # Standard three-card poker frequencies (A-2-3 and Q-K-A straights, no K-A-2).
    counts = Counter(poker3_category(list(h)) for h in combinations(range(52), 3))
    assert counts == {
        "straight-flush": 48, "three-of-a-kind": 52, "straight": 720, "flush": 1096,
        "pair": 3744, "high-card": 16440,
    }


def test_banker_pair_plus_is_settled_on_the_bankers_hand() -> None:
    r = judge("three-face", "2S", banker="QS KS AS", player1="2H 3H 5H", player2="4D 4C 9D",
              player3="6C 7C 9C")
    assert r["payouts"]["banker.pair_plus"] == "40"
    assert r["payouts"]["player1.pair_plus"] == "3"
    assert r["payouts"]["player2.pair_plus"] == "1"
    assert r["payouts"]["player3.pair_plus"] == "3"


# ---------------------------------------------------------------- three-face-3p


def test_three_face_3p_adds_the_three_pictures_bet() -> None:
    plain, with_3p = load_game("three-face"), load_game("three-face-3p")
    assert "player1.three_pictures" not in plain.bet_names
    assert with_3p.bet_names == tuple(
        f"player{k}.{bet}" for k in (1, 2, 3)
        for bet in ("win", "lose", "tie", "pair_plus", "three_pictures")
    ) + ("banker.pair_plus",)
    r = judge("three-face-3p", banker="2S 3S 5S", player1="KH QH JD", player2="KD QD 9D",
              player3="JC JH 9C")
    assert r["payouts"]["player1.three_pictures"] == "16"
    assert r["payouts"]["player2.three_pictures"] == "-1"
    assert r["payouts"]["player3.three_pictures"] == "-1"
    assert r["payouts"]["player1.win"] == "1"


def test_bet_names_of_three_face(game_of) -> None:
    game: Game = game_of("three-face")
    assert game.positions == ("first", "banker", "player1", "player2", "player3")
    assert game.bet_names == tuple(
        f"player{k}.{bet}" for k in (1, 2, 3) for bet in ("win", "lose", "tie", "pair_plus")
    ) + ("banker.pair_plus",)
