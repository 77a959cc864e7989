"""Property tests of the rules core, for every shipped variant.

The ordering of hands is total and consistent, swapping two hands swaps the
outcome, a tie pushes the main bets, relabelling suits changes nothing where
suits do not matter, and every settled payout is a value of the paytable.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.rules import Game, RoundResult, load_game, parse_cards
from table_controller.rules.baccarat import total
from table_controller.rules.variant import Variant

SHIPPED = [
    "baccarat", "baccarat-no-commission", "three-pictures", "three-pictures-no-commission",
    "three-face", "three-face-3p", "teen-patti-2020",
]
GAMES: dict[str, Game] = {name: load_game(name) for name in SHIPPED}

#: A shuffled single deck.
decks = st.permutations(range(52))
#: Cards from an 8-deck shoe: any card may repeat.
shoe_cards = st.lists(st.integers(0, 51), min_size=6, max_size=6)
suit_maps = st.permutations(range(4))


def paytable_values(variant: Variant) -> set[Decimal]:
    """Every amount a bet of this variant can settle at: its figures, a loss and a push."""
    values = {Decimal(-1), Decimal(0)}
    for terms in variant.bets.values():
        if terms.win is not None:
            values.add(terms.win)
        values.update(terms.win_on_points.values())
        values.update(terms.pays.values())
    return values


def relabel(cards: Sequence[int], suits: Sequence[int]) -> list[int]:
    return [(c & ~3) | suits[c & 3] for c in cards]


def deal_from(game: Game, cards: Sequence[int]) -> RoundResult:
    deal, used = game.deal(list(cards))
    assert used == sum(len(h) for h in deal.hands.values())
    return deal.result()


# --------------------------------------------------------- every variant, any deal


@pytest.mark.parametrize("name", SHIPPED)
@settings(max_examples=300, deadline=None)
@given(deck=decks, shoe=shoe_cards)
def test_every_payout_is_a_paytable_value_and_every_bet_is_settled(
    name: str, deck: list[int], shoe: list[int]
) -> None:
    game = GAMES[name]
    cards = shoe if game.decks > 1 else deck
    result = deal_from(game, cards)
    assert list(result.payouts) == list(game.bet_names)
    allowed = paytable_values(game.variant)
    for bet, amount in result.payouts.items():
        assert type(amount) is Decimal, bet
        assert amount in allowed, (bet, amount)
    as_json = json.loads(json.dumps(result.to_dict()))
    assert {k: Decimal(v) for k, v in as_json["payouts"].items()} == result.payouts
    assert list(result.hands) == list(game.positions)
    for position, hand in result.hands.items():
        if hand.cls is not None:
            assert hand.cls == game.classify(parse_cards(hand.cards)), position


@pytest.mark.parametrize("name", SHIPPED)
@settings(max_examples=150, deadline=None)
@given(deck=decks, shoe=shoe_cards, suits=suit_maps)
def test_relabelling_suits_changes_nothing(
    name: str, deck: list[int], shoe: list[int], suits: list[int]
) -> None:
    game = GAMES[name]
    cards = shoe if game.decks > 1 else deck
    a = deal_from(game, cards)
    b = deal_from(game, relabel(cards, suits))
    assert a.payouts == b.payouts
    assert a.outcome == b.outcome
    assert {p: h.cls for p, h in a.hands.items()} == {p: h.cls for p, h in b.hands.items()}


# --------------------------------------------------------------- the comparisons


def compare_teen_patti(x: Sequence[int], y: Sequence[int]) -> int:
    winner = GAMES["teen-patti-2020"].judge({"a": x, "b": y}).outcome["winner"]
    return {"a": 1, "b": -1, "tie": 0}[winner]


def compare_baccarat(x: Sequence[int], y: Sequence[int]) -> int:
    winner = GAMES["baccarat"].judge({"player": x, "banker": y}).outcome["winner"]
    return {"player": 1, "banker": -1, "tie": 0}[winner]


def compare_three_pictures(x: Sequence[int], y: Sequence[int]) -> int:
    filler = [c for c in range(52) if c not in x and c not in y]
    hands = {"box1": x, "box2": filler[:3], "box3": filler[3:6], "banker": y}
    return {"win": 1, "lose": -1, "tie": 0}[GAMES["three-pictures"].judge(hands).outcome["box1"]]


def compare_three_face(x: Sequence[int], y: Sequence[int]) -> int:
    filler = [c for c in range(52) if c not in x and c not in y]
    hands = {"first": filler[:1], "player1": x, "player2": filler[1:4], "player3": filler[4:7],
             "banker": y}
    return {"win": 1, "lose": -1, "tie": 0}[GAMES["three-face"].judge(hands).outcome["player1"]]


COMPARISONS: dict[str, tuple[Callable[[Sequence[int], Sequence[int]], int], int]] = {
    "teen-patti": (compare_teen_patti, 3),
    "three-pictures": (compare_three_pictures, 3),
    "three-face": (compare_three_face, 3),
    "baccarat": (compare_baccarat, 2),
}


@pytest.mark.parametrize("kind", COMPARISONS)
@settings(max_examples=400, deadline=None)
@given(deck=decks)
def test_ordering_is_total_antisymmetric_and_transitive(kind: str, deck: list[int]) -> None:
    compare, size = COMPARISONS[kind]
    x, y, z = deck[:size], deck[size:2 * size], deck[2 * size:3 * size]
    xy, yz, xz = compare(x, y), compare(y, z), compare(x, z)
    assert xy in (-1, 0, 1)
    assert compare(y, x) == -xy  # swapping the hands swaps the outcome
    assert compare(x, x) == 0
    if xy >= 0 and yz >= 0:
        assert xz >= 0
        if xy > 0 or yz > 0:
            assert xz > 0
    if xy == 0 and yz == 0:
        assert xz == 0


@settings(max_examples=300, deadline=None)
@given(deck=decks)
def test_swapping_a_and_b_swaps_every_teen_patti_bet(deck: list[int]) -> None:
    game = GAMES["teen-patti-2020"]
    x, y = deck[:3], deck[3:6]
    one = game.judge({"a": x, "b": y}).payouts
    two = game.judge({"a": y, "b": x}).payouts
    assert (one["a"], one["b"], one["a.pair_plus"], one["b.pair_plus"]) == (
        two["b"], two["a"], two["b.pair_plus"], two["a.pair_plus"]
    )
    assert one["tie"] == two["tie"]
    assert one["six_card_bonus"] == two["six_card_bonus"]


@settings(max_examples=300, deadline=None)
@given(shoe=st.lists(st.integers(0, 51), min_size=5, max_size=5))
def test_swapping_player_and_banker_swaps_the_baccarat_winner_and_pairs(shoe: list[int]) -> None:
    game = GAMES["baccarat"]
    player, banker = shoe[:2] + shoe[4:], shoe[2:4]
    one = game.judge({"player": player, "banker": banker}).outcome
    two = game.judge({"player": banker, "banker": player}).outcome
    swapped = {"player": "banker", "banker": "player", "tie": "tie"}
    assert two["winner"] == swapped[one["winner"]]
    assert (one["player_pair"], one["banker_pair"]) == (two["banker_pair"], two["player_pair"])


# ------------------------------------------------------------------ ties push


@pytest.mark.parametrize("name", SHIPPED)
@settings(max_examples=200, deadline=None)
@given(deck=decks, suits=suit_maps)
def test_a_tie_pushes_the_main_bets(name: str, deck: list[int], suits: list[int]) -> None:
    game = GAMES[name]
    if game.variant.game == "teen-patti-2020":
        # b holds a's ranks with the suits relabelled: always a tie
        a = deck[:3]
        b = relabel(a, suits)
        if set(a) & set(b):
            return
        result = game.judge({"a": a, "b": b})
        assert result.outcome["winner"] == "tie"
        assert (result.payouts["a"], result.payouts["b"]) == (Decimal(0), Decimal(0))
        assert result.payouts["tie"] == game.variant.bets["tie"].win
        return
    result = deal_from(game, deck if game.decks == 1 else deck[:6])
    if game.variant.game == "baccarat":
        if result.outcome["winner"] == "tie":
            assert result.payouts["player"] == result.payouts["banker"] == Decimal(0)
            assert result.payouts["tie"] == Decimal(8)
        return
    main = ("main",) if game.variant.game == "three-pictures" else ("win", "lose")
    for position, verdict in result.outcome.items():
        for bet in main:
            amount = result.payouts[f"{position}.{bet}"]
            assert (amount == 0) == (verdict == "tie"), (position, bet)


# ------------------------------------------------------------ the dealing plans


@settings(max_examples=500, deadline=None)
@given(shoe=st.lists(st.integers(0, 51), min_size=6, max_size=6))
def test_baccarat_hands_follow_the_tableau(shoe: list[int]) -> None:
    deal, used = GAMES["baccarat"].deal(shoe)
    player, banker = deal.hands["player"], deal.hands["banker"]
    assert player[:2] == [shoe[0], shoe[2]] and banker[:2] == [shoe[1], shoe[3]]
    p2, b2 = total(player[:2]), total(banker[:2])
    natural = p2 >= 8 or b2 >= 8
    assert len(player) == (2 if natural or p2 >= 6 else 3)
    if natural:
        assert len(banker) == 2
    elif len(player) == 2:
        assert len(banker) == (3 if b2 <= 5 else 2)
    if len(player) == 3:
        assert player[2] == shoe[4]
        if len(banker) == 3:
            assert banker[2] == shoe[5]
    elif len(banker) == 3:
        assert banker[2] == shoe[4]
    assert used == len(player) + len(banker)


@settings(max_examples=200, deadline=None)
@given(deck=decks)
def test_three_face_every_hand_gets_three_cards_from_the_first_cards_seat(deck: list[int]) -> None:
    deal, used = GAMES["three-face"].deal(deck)
    assert used == 13
    assert deal.hands["first"] == [deck[0]]
    seats = ["banker", "player1", "player2", "player3"]
    start = (deck[0] >> 2) % 4  # A,5,9,K -> 0; 2,6,T -> 1; 3,7,J -> 2; 4,8,Q -> 3
    assert deal.placed[1][0] == seats[start]
    assert all(len(deal.hands[s]) == 3 for s in seats)


@pytest.mark.parametrize("name", SHIPPED)
@settings(max_examples=100, deadline=None)
@given(deck=decks, shoe=shoe_cards)
def test_dealing_a_whole_round_places_cards_as_one_at_a_time(
    name: str, deck: list[int], shoe: list[int]
) -> None:
    game = GAMES[name]
    cards = shoe if game.decks > 1 else deck
    whole, used = game.deal(cards)
    one_by_one = game.new_deal()
    for card in cards:
        if one_by_one.is_complete:
            break
        one_by_one.place(card)
    assert whole.placed == one_by_one.placed
    assert whole.hands == one_by_one.hands
    assert whole.is_complete and whole.next_position is None and whole.dealt == used
    assert whole.result() == one_by_one.result()
