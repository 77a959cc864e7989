"""The exact analysis is tied to the live rules: simulation agreement and class equivalence.

The exact sheets judge one real round per class of deals. These tests check
the two things that makes sound: every class's representative settles exactly
like any real round of the class (property tests over random deals), and the
RTP measured by dealing rounds through ``game.deal``/``deal.result()`` agrees
with every exact figure.
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.analysis import baccarat as bac
from table_controller.analysis import teen_patti as tp
from table_controller.analysis import three_pictures as tpi
from table_controller.analysis.exact import par_sheet
from table_controller.analysis.sheet import ParSheet
from table_controller.analysis.simulate import simulate
from table_controller.analysis.three_cards import fill_round, single_hand_classes
from table_controller.cli import main
from table_controller.rules import load_game
from table_controller.rules.baccarat import total
from table_controller.rules.cards import new_shoe
from table_controller.rules.hands import teen_patti_class, three_pictures_class
from table_controller.rules.registry import builtin_variants_dir, variant_files

ROUNDS = 20_000
SEED = 2026


@cache
def sheet(variant: str) -> ParSheet:
    return par_sheet(load_game(variant))


@pytest.mark.parametrize("variant", sorted(variant_files()))
def test_every_exact_rtp_lies_in_the_simulated_99_percent_interval(variant: str) -> None:
    game = load_game(variant)
    measured = simulate(game, ROUNDS, SEED)
    outside = {
        bet: (float(figures.rtp), measured[bet].low, measured[bet].high)
        for bet, figures in sheet(variant).bets.items()
        if not measured[bet].contains(float(figures.rtp))
    }
    assert outside == {}


def test_simulation_detects_a_paytable_the_exact_sheet_does_not_describe(tmp_path: Path) -> None:
    text = (builtin_variants_dir() / "baccarat.toml").read_text()
    text = text.replace('id = "baccarat"', 'id = "bac-tie-9"').replace('win = "8"', 'win = "9"')
    (tmp_path / "bac-tie-9.toml").write_text(text)
    measured = simulate(load_game("bac-tie-9", tmp_path), ROUNDS, SEED)
    assert not measured["tie"].contains(float(sheet("baccarat").bets["tie"].rtp))
    assert measured["player"].contains(float(sheet("baccarat").bets["player"].rtp))


def test_simulation_is_reproducible_from_its_seed() -> None:
    game = load_game("teen-patti-2020")
    assert simulate(game, 500, 7) == simulate(game, 500, 7)
    assert simulate(game, 500, 7) != simulate(game, 500, 8)


def test_simulation_needs_two_rounds() -> None:
    with pytest.raises(ValueError, match="at least 2 rounds"):
        simulate(load_game("baccarat"), 1, SEED)


def test_par_simulate_json_reports_intervals_beside_exact(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    assert main(["par", "--game", "baccarat", "--json", "--simulate", "2000", "--seed", "5"]) == 0
    answer = json.loads(capsys.readouterr().out)
    sim = answer["simulation"]
    assert (sim["rounds"], sim["seed"], sim["confidence"]) == (2000, 5, 0.99)
    banker = sim["bets"]["banker"]
    assert banker["ci99"][0] < banker["rtp_measured"] < banker["ci99"][1]
    assert banker["exact_inside"] is (
        banker["ci99"][0] <= answer["bets"]["banker"]["rtp_float"] <= banker["ci99"][1]
    )
    assert set(sim["bets"]) == set(answer["bets"])


# ------------------------------------------- representatives settle like their class
@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_baccarat_round_settles_like_its_class_representative(rng: random.Random) -> None:
    game = load_game("baccarat-no-commission")
    deal, _ = game.deal(rng.sample(new_shoe(8), 6))
    p, b = deal.hands["player"], deal.hands["banker"]
    key = (total(p), total(b), p[0] >> 2 == p[1] >> 2, b[0] >> 2 == b[1] >> 2, len(p), len(b))
    _, rep_p, rep_b = bac.first_round_classes(8, game=game)[key]
    assert game.judge({"player": rep_p, "banker": rep_b}).payouts == deal.result().payouts


@settings(max_examples=300, deadline=None)
@given(st.permutations(range(52)))
def test_three_face_box_settles_like_its_class_representative(deck: list[int]) -> None:
    game = load_game("three-face-3p")
    deal, _ = game.deal(deck)
    payouts = deal.result().payouts
    duel = tpi.duel_classes()
    sizes = {p: 1 if p == "first" else 3 for p in game.positions}
    banker = deal.hands["banker"]
    for player in ("player1", "player2", "player3"):
        key = (three_pictures_class(deal.hands[player])[0], three_pictures_class(banker)[0])
        _, rep_box, rep_banker = duel[key]
        rep = game.judge(fill_round(game.positions, {player: rep_box, "banker": rep_banker}, sizes))
        for kind in ("win", "lose", "tie", "three_pictures"):
            assert rep.payouts[f"{player}.{kind}"] == payouts[f"{player}.{kind}"]


def _single_hand_key(cards: list[int]) -> tuple[tuple[int, ...], bool]:
    return tuple(sorted(c >> 2 for c in cards)), len({c & 3 for c in cards}) == 1


@settings(max_examples=300, deadline=None)
@given(st.permutations(range(52)))
def test_teen_patti_round_settles_like_its_class_representatives(deck: list[int]) -> None:
    game = load_game("teen-patti-2020")
    deal, _ = game.deal(deck)
    payouts = deal.result().payouts
    a, b = deal.hands["a"], deal.hands["b"]
    (a_cls, a_str), (b_cls, b_str) = teen_patti_class(a), teen_patti_class(b)
    _, rep_a, rep_b = tp.duel_classes()[(a_cls, b_cls, (a_str > b_str) - (a_str < b_str))]
    rep = game.judge({"a": rep_a, "b": rep_b}).payouts
    assert [rep[x] for x in ("a", "b", "tie")] == [payouts[x] for x in ("a", "b", "tie")]
    singles = {_single_hand_key(list(cards)): cards for _, cards in single_hand_classes()}
    rep_hand = singles[_single_hand_key(a)]
    rep = game.judge(fill_round(game.positions, {"a": rep_hand}, {"a": 3, "b": 3})).payouts
    assert rep["a.pair_plus"] == payouts["a.pair_plus"]


def _six_card_key(cards: list[int]) -> tuple[tuple[int, ...], frozenset[int]]:
    by_suit: dict[int, set[int]] = {}
    for c in cards:
        by_suit.setdefault(c & 3, set()).add(c >> 2)
    flush = next((ranks for ranks in by_suit.values() if len(ranks) >= 5), set())
    return tuple(sorted(c >> 2 for c in cards)), frozenset(flush)


@cache
def _six_card_representatives() -> dict[tuple[tuple[int, ...], frozenset[int]], list[int]]:
    return {_six_card_key(cards): cards for ways, cards in tp.six_card_classes() if ways}


@settings(max_examples=300, deadline=None)
@given(st.permutations(range(52)))
def test_six_card_set_settles_like_its_class_representative(deck: list[int]) -> None:
    game = load_game("teen-patti-2020")
    deal, _ = game.deal(deck)
    six = deal.hands["a"] + deal.hands["b"]
    rep = _six_card_representatives()[_six_card_key(six)]
    rep_payouts = game.judge({"a": rep[:3], "b": rep[3:]}).payouts
    assert rep_payouts["six_card_bonus"] == deal.result().payouts["six_card_bonus"]


def test_every_flush_class_of_six_cards_is_counted() -> None:
    """Flush sets: the weights of the flush classes add up to the textbook count."""
    flush_sets = sum(ways for ways, cards in tp.six_card_classes() if _six_card_key(cards)[1])
    # 5 of one suit + 1 other card, or 6 of one suit
    assert flush_sets == 4 * (13 * 12 * 11 * 10 * 9 // 120) * 39 + 4 * (
        13 * 12 * 11 * 10 * 9 * 8 // 720
    )
