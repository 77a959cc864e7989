"""Three Pictures (games.md §2): 31 classes, deal order, main / tie / three_pictures bets."""

from __future__ import annotations

from decimal import Decimal
from itertools import combinations
from pathlib import Path

import pytest

from table_controller.errors import DealError
from table_controller.rules import Game, load_game, parse_cards
from table_controller.rules.cards import RANKS, SUITS
from table_controller.rules.hands import THREE_PICTURES_CLASSES, three_pictures_class

ALL_31_HIGH_TO_LOW = [
    "3P",
    "2P9", "P9", "9", "2P8", "P8", "8", "2P7", "P7", "7", "2P6", "P6", "6", "2P5", "P5", "5",
    "2P4", "P4", "4", "2P3", "P3", "3", "2P2", "P2", "2", "2P1", "P1", "1", "2P0", "P0", "0",
]


def c(codes: str) -> list[int]:
    return parse_cards(codes.split())


def shoe_for(game: Game, **hands: str) -> list[int]:
    """The shoe that deals ``hands`` (position -> three codes) in the game's deal order."""
    cards = {pos: c(codes) for pos, codes in hands.items()}
    order = [p for p in game.positions if p in cards]
    return [cards[p][i] for i in range(3) for p in order]


def judge(game: Game, **hands: str) -> dict:
    return game.deal(shoe_for(game, **hands))[0].result().to_dict()


def variant_dir(tmp_path: Path, boxes: int = 3, tie_basis: str = "points") -> Path:
    (tmp_path / "tp-test.toml").write_text(
        f'id = "tp-test"\ngame = "three-pictures"\n'
        f'[options]\nboxes = {boxes}\ntie_basis = "{tie_basis}"\n'
        '[bets.main]\nwin = "0.95"\n[bets.tie]\nwin = "8"\n[bets.three_pictures]\nwin = "16"\n'
    )
    return tmp_path


# ------------------------------------------------------------------------ classes


def test_the_31_classes_in_order() -> None:
    assert list(THREE_PICTURES_CLASSES) == ALL_31_HIGH_TO_LOW


@pytest.mark.parametrize(
    ("hand", "cls"),
    [
        ("KS QH JD", "3P"),
        ("KS KH KD", "3P"),
        ("KS QH 9D", "2P9"),
        ("JS 4H 5D", "P9"),
        ("2S 3H 4D", "9"),
        ("KS JH TD", "2P0"),  # a ten is not a picture
        ("TS TH TD", "0"),
        ("KS TH TD", "P0"),
        ("KS 5H 5D", "P0"),
        ("QS AH 5D", "P6"),
        ("AS AH 4D", "6"),
        ("KS QH AD", "2P1"),
        ("9S 9H 9D", "7"),
    ],
)
def test_class_of_hand(hand: str, cls: str) -> None:
    assert load_game("three-pictures").classify(c(hand)) == cls


def test_classes_rank_high_to_low_by_strength() -> None:
    strengths = [three_pictures_class(c(h))[1] for h in ("KS QH JD", "KS QH 9D", "JS 4H 5D", "2S 3H 4D", "KS QH 8D")]
    assert strengths == sorted(strengths, reverse=True)
    assert len(set(strengths)) == 5


def test_every_three_card_hand_gets_its_class_from_pictures_and_points() -> None:
    # Exhaustive over the 22,100 hands, against the definition written out here.
    deck = [r + s for r in RANKS for s in SUITS]
    counts: dict[str, int] = {}
    for hand in combinations(deck, 3):
        pictures = sum(code[0] in "JQK" for code in hand)
        points = sum("A23456789".find(code[0]) + 1 for code in hand) % 10
        expected = "3P" if pictures == 3 else ("2P", "P", "")[2 - pictures] + str(points)
        cls, _, pts = three_pictures_class(parse_cards(hand))
        assert (cls, pts) == (expected, 0 if pictures == 3 else points), hand
        counts[cls] = counts.get(cls, 0) + 1
    assert counts["3P"] == 220  # C(12, 3)
    assert sum(counts.values()) == 22100


def test_classify_refuses_two_cards() -> None:
    with pytest.raises(DealError, match="3 cards, not 2"):
        load_game("three-pictures").classify(c("KS QH"))


# ----------------------------------------------------------------------- dealing


def test_deal_order_is_box1_to_box3_then_banker_three_times() -> None:
    game = load_game("three-pictures")
    deal = game.new_deal()
    order = []
    for card in range(12):
        order.append(deal.place(card)[0])
    assert order == ["box1", "box2", "box3", "banker"] * 3
    assert deal.is_complete


@pytest.mark.parametrize("boxes", range(1, 8))
def test_the_boxes_option_sets_the_positions_and_the_deal(tmp_path: Path, boxes: int) -> None:
    game = load_game("tp-test", variant_dir(tmp_path, boxes=boxes))
    boxes_names = [f"box{k}" for k in range(1, boxes + 1)]
    assert game.positions == (*boxes_names, "banker")
    deal, used = game.deal(list(range(52)))
    assert used == 3 * (boxes + 1)
    assert [p for p, _, _ in deal.placed] == (boxes_names + ["banker"]) * 3
    assert game.bet_names == tuple(
        f"{box}.{bet}" for box in boxes_names for bet in ("main", "tie", "three_pictures")
    )
    assert sorted(deal.result().payouts) == sorted(game.bet_names)


# -------------------------------------------------------------------- settlement


def test_box_win_pays_0_95_and_loss_loses() -> None:
    game = load_game("three-pictures")
    r = judge(game, box1="KS QH 9D", box2="2S 3H 4D", box3="AS 2H 3D", banker="JS 4H 5C")
    # box1 2P9 > P9; box2 9 < P9; box3 6 < P9
    assert r["outcome"] == {"box1": "win", "box2": "lose", "box3": "lose"}
    assert r["payouts"]["box1.main"] == "0.95"
    assert r["payouts"]["box2.main"] == "-1"
    assert r["payouts"]["box3.main"] == "-1"


def test_equal_class_pushes_main_whatever_the_cards_and_suits() -> None:
    game = load_game("three-pictures")
    r = judge(game, box1="KC QC 9C", box2="QD 5H 4H", box3="3C 3D 3H", banker="KS JH 9D")
    assert r["hands"]["box1"]["class"] == r["hands"]["banker"]["class"] == "2P9"
    assert r["outcome"]["box1"] == "tie"
    assert r["payouts"]["box1.main"] == "0"
    assert r["payouts"]["box1.tie"] == "8"


def test_tie_bet_on_points_ignores_pictures() -> None:
    game = load_game("three-pictures")
    # box1 P9 vs banker 9: main wins (more pictures), tie bet wins (same points)
    r = judge(game, box1="JS 4H 5D", box2="AS AH AD", box3="2C 2D 2H", banker="2S 3H 4D")
    assert r["hands"]["box1"]["class"] == "P9"
    assert r["hands"]["banker"]["class"] == "9"
    assert r["payouts"]["box1.main"] == "0.95"
    assert r["payouts"]["box1.tie"] == "8"
    assert r["payouts"]["box2.tie"] == "-1"  # 3 points


def test_tie_bet_on_points_counts_three_pictures_as_zero() -> None:
    game = load_game("three-pictures")
    r = judge(game, box1="KS QH JD", box2="TS TH 5D", box3="KC TC TD", banker="5S 5H QC")
    assert r["hands"]["box1"]["points"] == 0
    assert r["hands"]["banker"]["class"] == "P0"
    assert r["payouts"]["box1.main"] == "0.95"  # 3P beats P0
    assert r["payouts"]["box1.tie"] == "8"  # 0 points each
    assert r["payouts"]["box1.three_pictures"] == "16"
    assert r["payouts"]["box2.tie"] == "-1"  # 5 points against 0
    assert r["payouts"]["box3.tie"] == "8"  # P0 vs P0 (and main pushes)
    assert r["payouts"]["box3.main"] == "0"


def test_tie_bet_on_class_when_tie_basis_is_class(tmp_path: Path) -> None:
    game = load_game("tp-test", variant_dir(tmp_path, tie_basis="class"))
    r = judge(game, box1="JS 4H 5D", box2="KS QH JD", box3="KC 5C 4D", banker="2S 3H 4C")
    assert r["payouts"]["box1.tie"] == "-1"  # P9 vs 9: same points, not the same class
    assert r["payouts"]["box2.tie"] == "-1"
    assert r["payouts"]["box3.tie"] == "-1"
    r = judge(game, box1="JS 4H 5D", box2="KS QH JD", box3="2C 3D 4D", banker="QC 4S 5C")
    assert r["payouts"]["box1.tie"] == "8"  # P9 vs P9
    assert r["payouts"]["box3.tie"] == "-1"


def test_three_pictures_bet_pays_16_only_on_3p() -> None:
    game = load_game("three-pictures")
    r = judge(game, box1="KS QH JD", box2="KC QC 9D", box3="AS 2S 3S", banker="2H 3H 4H")
    assert r["payouts"]["box1.three_pictures"] == "16"
    assert r["payouts"]["box2.three_pictures"] == "-1"
    assert r["payouts"]["box3.three_pictures"] == "-1"


@pytest.mark.parametrize("box", ["KS QH 6D", "JS AH 5D", "AS 3H 2S"])
def test_no_commission_box_win_with_six_points_pays_half(box: str) -> None:
    game = load_game("three-pictures-no-commission")
    r = judge(game, box1=box, box2="KC QC 7C", box3="9C 9H 9S", banker="2D 2H AD")
    assert r["hands"]["banker"]["class"] == "5"
    assert r["hands"]["box1"]["points"] == 6
    assert r["outcome"]["box1"] == "win"
    assert r["payouts"]["box1.main"] == "0.5"
    assert r["payouts"]["box2.main"] == "1"  # 2P7
    assert r["payouts"]["box3.main"] == "1"  # 7


def test_no_commission_six_point_tie_pushes() -> None:
    game = load_game("three-pictures-no-commission")
    r = judge(game, box1="AS 2H 3D", box2="KC QC 7C", box3="AC 2C 3C", banker="4S 4H 8D")
    assert r["payouts"]["box1.main"] == "0"
    assert r["payouts"]["box1.tie"] == "8"


def test_no_commission_loss_with_six_points_loses_one() -> None:
    game = load_game("three-pictures-no-commission")
    r = judge(game, box1="AS 2H 3D", box2="KC QC 7C", box3="AC 2C 4C", banker="KS QH 9D")
    assert r["payouts"]["box1.main"] == "-1"


def test_commission_game_pays_0_95_on_a_six_point_win() -> None:
    game = load_game("three-pictures")
    r = judge(game, box1="KS QH 6D", box2="KC QC 7C", box3="AC 2C 3C", banker="4S 4H 8D")
    assert r["payouts"]["box1.main"] == "0.95"


def test_result_lists_hands_in_position_order_with_points() -> None:
    game = load_game("three-pictures")
    r = judge(game, box1="KS QH JD", box2="KC QC 9D", box3="AS 2S 3S", banker="2H 3H 4H")
    assert list(r["hands"]) == ["box1", "box2", "box3", "banker"]
    assert r["hands"]["box2"] == {"cards": ["KC", "QC", "9D"], "class": "2P9", "points": 9}
    assert list(r["payouts"]) == list(game.bet_names)
    assert all(type(v) is Decimal for v in game.deal(shoe_for(
        game, box1="KS QH JD", box2="KC QC 9D", box3="AS 2S 3S", banker="2H 3H 4H"
    ))[0].result().payouts.values())


def test_single_deck_shuffled_every_round() -> None:
    game = load_game("three-pictures")
    assert game.decks == 1
    assert game.shuffle_every_round is True
