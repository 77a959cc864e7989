"""Punto Banco (games.md §1): the whole tableau, naturals, deal order, classes, settlement."""

from __future__ import annotations

from decimal import Decimal

import pytest

from table_controller.errors import DealError, NotEnoughCards, RoundComplete
from table_controller.rules import load_game, parse_cards
from table_controller.rules.baccarat import burn_count, next_baccarat_position
from table_controller.rules.cards import parse_card

#: A card of each point value 0..9 (0 is a ten), all in one suit so pairs never appear by accident.
CARD_WORTH = {t: ("T" if t == 0 else "A" if t == 1 else str(t)) for t in range(10)}


def c(codes: str) -> list[int]:
    return parse_cards(codes.split())


def two_cards_totalling(total: int, suit: str) -> list[int]:
    """Two cards of different ranks whose points add up to ``total`` (a king plus the rest)."""
    second = CARD_WORTH[total]
    first = "K" if second != "K" else "Q"
    return [parse_card(first + suit), parse_card(second + suit)]


def banker_should_draw(banker: int, third: int | None) -> bool:
    """games.md §1 written out independently of the code's table."""
    if third is None:  # the player stood
        return banker <= 5
    if banker <= 2:
        return True
    if banker == 3:
        return third != 8
    if banker == 4:
        return 2 <= third <= 7
    if banker == 5:
        return 4 <= third <= 7
    if banker == 6:
        return third in (6, 7)
    return False


# ------------------------------------------------------------------- the tableau


@pytest.mark.parametrize("player_total", range(10))
@pytest.mark.parametrize("banker_total", range(10))
def test_player_draws_on_0_to_5_and_stands_on_6_to_9_unless_a_natural(
    player_total: int, banker_total: int
) -> None:
    player = two_cards_totalling(player_total, "S")
    banker = two_cards_totalling(banker_total, "H")
    natural = player_total >= 8 or banker_total >= 8
    got = next_baccarat_position(player, banker)
    if natural:
        assert got is None
    elif player_total <= 5:
        assert got == "player"
    else:  # the player stands; the banker acts on its own total
        assert got == ("banker" if banker_total <= 5 else None)


@pytest.mark.parametrize("banker_total", range(8))
@pytest.mark.parametrize("player_total", (6, 7))
def test_banker_draws_on_0_to_5_when_the_player_stood(banker_total: int, player_total: int) -> None:
    player = two_cards_totalling(player_total, "S")
    banker = two_cards_totalling(banker_total, "H")
    expected = "banker" if banker_should_draw(banker_total, None) else None
    assert next_baccarat_position(player, banker) == expected
    assert (banker_total <= 5) == (expected == "banker")


@pytest.mark.parametrize("third", range(10))
@pytest.mark.parametrize("banker_total", range(8))
def test_banker_action_after_the_players_third_card(banker_total: int, third: int) -> None:
    player = two_cards_totalling(0, "S") + [parse_card(CARD_WORTH[third] + "D")]
    banker = two_cards_totalling(banker_total, "H")
    expected = "banker" if banker_should_draw(banker_total, third) else None
    assert next_baccarat_position(player, banker) == expected


def test_tableau_cells_spelled_out_in_games_md() -> None:
    # A few cells written literally, so a bug in banker_should_draw cannot hide one in the code.
    assert next_baccarat_position(c("KS 2S 8D"), c("KH 3H")) is None  # 3 stands on an 8
    assert next_baccarat_position(c("KS 2S 9D"), c("KH 3H")) == "banker"  # 3 draws on a 9
    assert next_baccarat_position(c("KS 2S AD"), c("KH 4H")) is None  # 4 stands on an ace
    assert next_baccarat_position(c("KS 2S 2D"), c("KH 4H")) == "banker"
    assert next_baccarat_position(c("KS 2S 7D"), c("KH 4H")) == "banker"
    assert next_baccarat_position(c("KS 2S 8D"), c("KH 4H")) is None
    assert next_baccarat_position(c("KS 2S 3D"), c("KH 5H")) is None
    assert next_baccarat_position(c("KS 2S 4D"), c("KH 5H")) == "banker"
    assert next_baccarat_position(c("KS 2S 5D"), c("KH 6H")) is None
    assert next_baccarat_position(c("KS 2S 6D"), c("KH 6H")) == "banker"
    assert next_baccarat_position(c("KS 2S 7D"), c("KH 6H")) == "banker"
    assert next_baccarat_position(c("KS 2S 8D"), c("KH 6H")) is None
    assert next_baccarat_position(c("KS 2S 7D"), c("KH 7H")) is None
    assert next_baccarat_position(c("KS 2S TD"), c("KH 2H")) == "banker"  # 0..2 always draws
    assert next_baccarat_position(c("KS 2S 8D"), c("KH 2H")) == "banker"


def test_three_cards_each_ends_the_round() -> None:
    assert next_baccarat_position(c("KS 2S 3D"), c("KH AH 4C")) is None


def test_deal_order_is_player_banker_player_banker() -> None:
    assert next_baccarat_position([], []) == "player"
    assert next_baccarat_position(c("2S"), []) == "banker"
    assert next_baccarat_position(c("2S"), c("3H")) == "player"
    assert next_baccarat_position(c("2S 4S"), c("3H")) == "banker"


def test_players_third_card_comes_before_the_bankers() -> None:
    game = load_game("baccarat")
    deal, used = game.deal(c("2S 3H 2D 2C 4S 5H 9D"))
    assert used == 6
    assert deal.placed == [
        ("player", 0, parse_card("2S")),
        ("banker", 0, parse_card("3H")),
        ("player", 1, parse_card("2D")),
        ("banker", 1, parse_card("2C")),
        ("player", 2, parse_card("4S")),
        ("banker", 2, parse_card("5H")),
    ]


# ---------------------------------------------------------------------- naturals


@pytest.mark.parametrize(
    ("shoe", "player_class", "banker_class", "winner"),
    [
        ("4S KH 4D 2C", "natural8", "2", "player"),
        ("2S 5H 3D 4C", "5", "natural9", "banker"),
        ("9S 4H KD 4C", "natural9", "natural8", "player"),
        ("8S 4H KD 4C", "natural8", "natural8", "tie"),
        ("6S 9H 3D KC", "natural9", "natural9", "tie"),
    ],
)
def test_a_natural_on_either_side_ends_the_round_after_four_cards(
    shoe: str, player_class: str, banker_class: str, winner: str
) -> None:
    game = load_game("baccarat")
    deal, used = game.deal(c(shoe + " 2D 3D"))
    assert used == 4
    result = deal.result()
    assert result.hands["player"].cls == player_class
    assert result.hands["banker"].cls == banker_class
    assert result.outcome["winner"] == winner
    assert result.outcome["natural"] is True


def test_three_card_eight_is_class_8_not_a_natural() -> None:
    game = load_game("baccarat")
    assert game.classify(c("AS 2H 5D")) == "8"
    assert game.classify(c("4S 4H")) == "natural8"
    assert game.classify(c("KS 9H")) == "natural9"
    assert game.classify(c("5S 5H")) == "0"
    assert game.classify(c("KS QH 7D")) == "7"


def test_classify_refuses_one_or_four_cards() -> None:
    game = load_game("baccarat")
    with pytest.raises(DealError, match="2 or 3 cards, not 1"):
        game.classify(c("AS"))
    with pytest.raises(DealError, match="2 or 3 cards, not 4"):
        game.classify(c("AS 2S 3S 4S"))


def test_points_count_tens_and_pictures_as_zero_and_wrap_mod_10() -> None:
    game = load_game("baccarat")
    result = game.deal(c("TS JH QD KC 7S 9D"))[0].result()
    assert result.hands["player"].points == 7  # T Q 7
    assert result.hands["banker"].points == 9  # J K 9
    assert result.hands["player"].cards == ("TS", "QD", "7S")
    assert result.outcome == {
        "winner": "banker", "natural": False, "player_pair": False, "banker_pair": False,
    }


# -------------------------------------------------------------------- settlement


def payouts(variant: str, shoe: str) -> dict[str, str]:
    return load_game(variant).deal(c(shoe))[0].result().to_dict()["payouts"]


def test_player_win_pays_1_and_loses_the_rest() -> None:
    # player 4H 3D = 7 stands; banker KS 2C = 2 draws 9H -> 1
    assert payouts("baccarat", "4H KS 3D 2C 9H") == {
        "player": "1", "banker": "-1", "tie": "-1", "player_pair": "-1", "banker_pair": "-1",
    }


def test_banker_win_pays_0_95_with_commission() -> None:
    # player 2S 4D = 6 stands; banker 3H 4C = 7 stands
    assert payouts("baccarat", "2S 3H 4D 4C")["banker"] == "0.95"
    assert payouts("baccarat", "2S 3H 4D 4C")["player"] == "-1"


def test_commission_banker_pays_0_95_on_a_six_point_win_too() -> None:
    # player 2S 3D = 5 draws KD -> 5; banker 3H 3C = 6 stands on a 0 -> banker wins with 6
    assert payouts("baccarat", "2S 3H 3D 3C KD")["banker"] == "0.95"


def test_no_commission_banker_pays_half_on_a_six_point_win() -> None:
    p = payouts("baccarat-no-commission", "2S 3H 3D 3C KD")
    assert p["banker"] == "0.5"
    assert p["player"] == "-1"


def test_no_commission_banker_pays_1_on_other_wins() -> None:
    assert payouts("baccarat-no-commission", "2S 3H 4D 4C")["banker"] == "1"  # 7 over 6
    assert payouts("baccarat-no-commission", "2S 5H 3D 4C")["banker"] == "1"  # natural 9


def test_no_commission_six_point_player_win_pays_1() -> None:
    # player 2S 4D = 6, banker KH 5C = 5 draws 9D -> 4: player wins with 6 at 1:1
    assert payouts("baccarat-no-commission", "2S KH 4D 5C 9D")["player"] == "1"


@pytest.mark.parametrize("variant", ["baccarat", "baccarat-no-commission"])
def test_a_tie_pushes_player_and_banker_and_pays_the_tie_8(variant: str) -> None:
    assert payouts(variant, "8S 5H KD 3C") == {
        "player": "0", "banker": "0", "tie": "8", "player_pair": "-1", "banker_pair": "-1",
    }


def test_player_pair_and_banker_pair_look_at_the_first_two_cards_only() -> None:
    # player 4S 4D = 8 natural (a pair); banker 2H 2C = 4 (a pair)
    p = payouts("baccarat", "4S 2H 4D 2C")
    assert (p["player_pair"], p["banker_pair"]) == ("11", "11")
    # player 2S 3D 2D: the third card matching the first is not a pair
    p = payouts("baccarat", "2S KH 3D QC 2D 5H")
    assert (p["player_pair"], p["banker_pair"]) == ("-1", "-1")


def test_pairs_need_the_same_rank_not_the_same_points() -> None:
    # KS QD are both worth 0 but are not a pair
    result = load_game("baccarat").deal(c("KS 9H QD 9C"))[0].result()
    assert result.outcome["player_pair"] is False
    assert result.outcome["banker_pair"] is True
    assert result.payouts["banker_pair"] == Decimal(11)


def test_payouts_are_decimals() -> None:
    result = load_game("baccarat").deal(c("2S 3H 4D 4C"))[0].result()
    assert all(type(v) is Decimal for v in result.payouts.values())
    assert result.payouts["banker"] == Decimal("0.95")


# ----------------------------------------------------------------- the Deal object


def test_a_card_after_the_round_is_complete_is_refused() -> None:
    game = load_game("baccarat")
    deal = game.deal(c("8S 4H KD 4C"))[0]
    with pytest.raises(RoundComplete, match="card 2D arrived after the round was complete"):
        deal.place(parse_card("2D"))


def test_too_few_cards_is_an_error_naming_the_next_position() -> None:
    game = load_game("baccarat")
    with pytest.raises(NotEnoughCards, match="next card goes to 'player'"):
        game.deal(c("2S 3H 3D 3C"))


def test_an_unfinished_deal_cannot_be_judged() -> None:
    deal = load_game("baccarat").new_deal()
    deal.place(parse_card("2S"))
    assert deal.next_position == "banker"
    assert not deal.is_complete
    with pytest.raises(NotEnoughCards, match="round is not complete"):
        deal.result()


def test_eight_decks_by_default() -> None:
    game = load_game("baccarat")
    assert game.decks == 8
    assert game.shuffle_every_round is False
    assert game.positions == ("player", "banker")
    assert game.bet_names == ("player", "banker", "tie", "player_pair", "banker_pair")


@pytest.mark.parametrize(
    ("first", "burned"), [("AS", 1), ("5H", 5), ("9D", 9), ("TC", 10), ("JS", 10), ("KH", 10)]
)
def test_burn_count_is_the_first_cards_points_or_ten(first: str, burned: int) -> None:
    assert burn_count(parse_card(first)) == burned
