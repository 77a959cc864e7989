"""Exact PAR sheets: published figures, textbook hand counts, and data-driven paytables."""

from __future__ import annotations

import json
from fractions import Fraction
from functools import cache
from math import comb
from pathlib import Path

import pytest

from table_controller.analysis.exact import par_sheet
from table_controller.analysis.sheet import ParSheet, outcome_label
from table_controller.analysis.three_cards import single_hand_classes
from table_controller.cli import main
from table_controller.rules import load_game
from table_controller.rules.hands import poker3_category
from table_controller.rules.registry import builtin_variants_dir, variant_files


@cache
def sheet(variant: str) -> ParSheet:
    return par_sheet(load_game(variant))


def probability(s: ParSheet, bet: str, label: str) -> Fraction:
    [outcome] = [o for o in s.bets[bet].outcomes if o.label == label]
    return outcome.probability


def write_variant(folder: Path, name: str, text: str) -> Path:
    """A studio variant file: a shipped one with some lines replaced."""
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


def shipped(variant: str) -> str:
    return (builtin_variants_dir() / f"{variant}.toml").read_text()


# ------------------------------------------------------------------ baccarat
def test_baccarat_eight_decks_matches_published_win_probabilities() -> None:
    s = sheet("baccarat")
    assert round(float(probability(s, "banker", "win")), 6) == 0.458597
    assert round(float(probability(s, "player", "win")), 6) == 0.446247
    assert round(float(probability(s, "tie", "win")), 6) == 0.095156


def test_baccarat_eight_decks_matches_published_rtps() -> None:
    s = sheet("baccarat")
    assert round(float(s.bets["banker"].rtp), 6) == 0.989421
    assert round(float(s.bets["player"].rtp), 6) == 0.987649
    assert round(float(s.bets["tie"].rtp), 6) == 0.856404
    assert round(float(s.bets["player_pair"].rtp), 6) == 0.896386
    assert round(float(s.bets["banker_pair"].rtp), 6) == 0.896386


def test_no_commission_banker_rtp_and_its_half_paid_six() -> None:
    s = sheet("baccarat-no-commission")
    assert round(float(s.bets["banker"].rtp), 6) == 0.985419
    nets = {o.label: str(o.net) for o in s.bets["banker"].outcomes}
    assert nets == {"win": "1", "win on 6 points": "0.5", "push": "0", "loss": "-1"}
    # the player bet does not depend on the banker's paytable
    assert s.bets["player"].rtp == sheet("baccarat").bets["player"].rtp


@pytest.mark.parametrize("decks", [1, 6])
def test_pair_probability_is_exact_for_any_deck_count(tmp_path: Path, decks: int) -> None:
    text = shipped("baccarat").replace('id = "baccarat"', 'id = "bac-test"')
    write_variant(tmp_path, "bac-test", text.replace("decks = 8", f"decks = {decks}"))
    s = par_sheet(load_game("bac-test", tmp_path))
    # second card of a hand matches the first's rank: (4d - 1) of the other 52d - 1 cards
    assert probability(s, "player_pair", "win") == Fraction(4 * decks - 1, 52 * decks - 1)
    assert probability(s, "banker_pair", "win") == Fraction(4 * decks - 1, 52 * decks - 1)
    assert s.bets["player"].rtp != sheet("baccarat").bets["player"].rtp


def test_baccarat_probabilities_are_exact_fractions_that_sum_to_one() -> None:
    s = sheet("baccarat")
    for bet in s.bets.values():
        assert sum(o.probability for o in bet.outcomes) == 1
    assert probability(s, "player_pair", "win") == Fraction(31, 415)


# ------------------------------------------------------------- three cards
def test_three_card_poker_counts_of_all_22100_hands() -> None:
    counts: dict[str, int] = {}
    for ways, cards in single_hand_classes():
        category = poker3_category(cards)
        counts[category] = counts.get(category, 0) + ways
    assert counts == {
        "straight-flush": 48,
        "three-of-a-kind": 52,
        "straight": 720,
        "flush": 1_096,
        "pair": 3_744,
        "high-card": 16_440,
    }


def test_three_face_pair_plus_is_settled_on_those_counts() -> None:
    s = sheet("three-face")
    for bet in ("player1.pair_plus", "player3.pair_plus", "banker.pair_plus"):
        got = {o.label: o.probability * 22_100 for o in s.bets[bet].outcomes}
        assert got == {
            "straight-flush": 48,
            "three-of-a-kind": 52,
            "straight": 720,
            "flush": 1_096,
            "pair": 3_744,
            "loss": 16_440,
        }
        assert s.bets[bet].rtp == Fraction(
            48 * 41 + 52 * 31 + 720 * 7 + 1096 * 4 + 3744 * 2, 22_100
        )


def test_three_pictures_long_shot_returns_seventeen_times_the_3p_chance() -> None:
    s = sheet("three-pictures")
    # C(12,3) = 220 three-picture hands of 22,100
    assert probability(s, "box1.three_pictures", "win") == Fraction(220, 22_100)
    assert s.bets["box2.three_pictures"].rtp == Fraction(17 * 220, 22_100)


def test_three_pictures_main_and_tie_figures() -> None:
    s = sheet("three-pictures")
    main_bet = s.bets["box1.main"]
    assert probability(s, "box1.main", "win") == probability(s, "box1.main", "loss")
    assert round(float(main_bet.rtp), 6) == 0.975944
    assert round(float(s.bets["box1.tie"].rtp), 6) == 0.899912
    assert not s.bets["box1.tie"].below_floor
    assert s.bets["box1.three_pictures"].below_floor


def test_three_face_tie_on_class_returns_about_a_third_and_is_below_floor() -> None:
    s = sheet("three-face")
    assert round(float(s.bets["player1.tie"].rtp), 6) == 0.339822
    assert s.bets["player1.tie"].below_floor
    assert round(float(s.bets["player1.win"].rtp), 6) == 0.969440
    assert s.bets["player1.win"].outcomes == s.bets["player1.lose"].outcomes


def test_per_position_bets_are_listed_for_every_position_with_equal_figures() -> None:
    for variant in ("three-pictures", "three-face-3p"):
        game = load_game(variant)
        s = sheet(variant)
        assert tuple(s.bets) == game.bet_names
    s = sheet("three-face-3p")
    assert s.bets["player1.three_pictures"].outcomes == s.bets["player3.three_pictures"].outcomes
    assert s.bets["player2.win"].rtp == sheet("three-face").bets["player2.win"].rtp


def test_more_boxes_change_no_per_bet_figure(tmp_path: Path) -> None:
    text = shipped("three-pictures").replace('id = "three-pictures"', 'id = "tp7"')
    write_variant(tmp_path, "tp7", text.replace("boxes = 3", "boxes = 7"))
    s = par_sheet(load_game("tp7", tmp_path))
    assert [b for b in s.bets if b.endswith(".main")] == [f"box{k}.main" for k in range(1, 8)]
    assert s.bets["box7.main"].outcomes == sheet("three-pictures").bets["box1.main"].outcomes


def test_tie_settled_on_class_instead_of_points_drops_to_about_34_percent(tmp_path: Path) -> None:
    text = shipped("three-pictures").replace('id = "three-pictures"', 'id = "tp-class"')
    write_variant(tmp_path, "tp-class", text.replace('tie_basis = "points"', 'tie_basis = "class"'))
    s = par_sheet(load_game("tp-class", tmp_path))
    assert s.bets["box1.tie"].rtp == sheet("three-face").bets["player1.tie"].rtp


# ---------------------------------------------------------------- teen patti
def test_teen_patti_maximum_rtp_is_the_a_and_b_bets_at_97_50() -> None:
    s = sheet("teen-patti-2020")
    assert s.max_rtp_bets() == ["a", "b"]
    assert f"{float(s.bets['a'].rtp) * 100:.2f}" == "97.50"
    assert probability(s, "a", "win") == probability(s, "b", "win")


def test_teen_patti_tie_at_fifty_to_one_returns_about_six_percent() -> None:
    s = sheet("teen-patti-2020")
    p_tie = probability(s, "tie", "win")
    assert probability(s, "a", "push") == p_tie
    assert s.bets["tie"].rtp == 51 * p_tie
    assert round(float(s.bets["tie"].rtp), 6) == 0.056431
    assert s.bets["tie"].below_floor


def test_teen_patti_pair_plus_counts() -> None:
    s = sheet("teen-patti-2020")
    got = {o.label: o.probability * 22_100 for o in s.bets["b.pair_plus"].outcomes}
    assert got == {
        "trail-aces": 4,
        "trail": 48,
        "straight-flush": 48,
        "straight": 720,
        "flush": 1_096,
        "pair": 3_744,
        "loss": 16_440,
    }


def test_six_card_bonus_counts_over_all_six_card_sets() -> None:
    s = sheet("teen-patti-2020")
    sets = comb(52, 6)
    assert probability(s, "six_card_bonus", "royal-flush") * sets == 4 * 47
    # nine straight flushes per suit; the sixth card must not extend it one higher
    assert probability(s, "six_card_bonus", "straight-flush") * sets == 4 * 9 * 46
    assert probability(s, "six_card_bonus", "four-of-a-kind") * sets == 13 * comb(48, 2)
    assert round(float(s.bets["six_card_bonus"].rtp), 6) == 0.914386


# ------------------------------------------------------- following the data
def test_changing_a_payout_in_the_variant_file_changes_the_sheet(tmp_path: Path) -> None:
    text = shipped("teen-patti-2020").replace('id = "teen-patti-2020"', 'id = "tp-800"')
    write_variant(tmp_path, "tp-800", text.replace('win = "50"', 'win = "800"'))
    s = par_sheet(load_game("tp-800", tmp_path))
    p_tie = probability(sheet("teen-patti-2020"), "tie", "win")
    assert s.bets["tie"].rtp == 801 * p_tie
    assert not s.bets["tie"].below_floor
    assert s.bets["a"].rtp == sheet("teen-patti-2020").bets["a"].rtp


def test_a_bet_left_out_of_the_variant_is_left_out_of_the_sheet(tmp_path: Path) -> None:
    text = shipped("baccarat").replace('id = "baccarat"', 'id = "bac-plain"')
    text = text[: text.index("[bets.player_pair]")]
    write_variant(tmp_path, "bac-plain", text)
    s = par_sheet(load_game("bac-plain", tmp_path))
    assert list(s.bets) == ["player", "banker", "tie"]


def test_outcome_labels_name_the_paytable_line() -> None:
    game = load_game("three-face")
    from decimal import Decimal

    assert outcome_label(game.terms("pair_plus"), Decimal(3)) == "flush"
    assert outcome_label(game.terms("win"), Decimal("0.5")) == "win on 6 points"
    assert outcome_label(game.terms("win"), Decimal(0)) == "push"
    assert outcome_label(game.terms("win"), Decimal(-1)) == "loss"


# ---------------------------------------------------------------------- CLI
def test_par_json_has_every_bet_with_exact_and_float_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["par", "--game", "three-face", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["variant"] == "three-face"
    assert list(answer["bets"]) == list(load_game("three-face").bet_names)
    tie = answer["bets"]["player2.tie"]
    assert tie["rtp"] == "864783/2544815"
    assert tie["house_edge"] == "1680032/2544815"
    assert tie["rtp_float"] == pytest.approx(0.339822, abs=5e-7)
    assert tie["below_floor"] is True
    assert tie["outcomes"] == [
        {
            "net": "8",
            "label": "win",
            "probability": "96087/2544815",
            "probability_float": 96087 / 2544815,
        },
        {
            "net": "-1",
            "label": "loss",
            "probability": "2448728/2544815",
            "probability_float": 2448728 / 2544815,
        },
    ]
    assert isinstance(answer["seconds"], float)


def test_min_rtp_moves_the_floor(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par", "--game", "teen-patti-2020", "--json", "--min-rtp", "0.93"]) == 0
    bets = json.loads(capsys.readouterr().out)["bets"]
    below = [name for name, b in bets.items() if b["below_floor"]]
    assert below == ["tie", "six_card_bonus"]


def test_human_sheet_marks_bets_below_the_floor(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par", "--game", "three-pictures"]) == 0
    out = capsys.readouterr().out
    assert "box{1,2,3}.three_pictures │ 16.9231% │   83.0769% │ BELOW 75.00% FLOOR" in out
    assert "box{1,2,3}.main           │ 97.5944% │    2.4056% │ ok" in out
    assert "Highest RTP: box{1,2,3}.main at 97.5944%" in out
    assert "3 bet(s) below the 75.00% floor: box1.three_pictures, box2.three_pictures" in out


def test_unknown_variant_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par", "--game", "roulette"]) == 2
    assert "unknown game variant 'roulette'" in capsys.readouterr().err


def test_every_shipped_variant_has_a_sheet() -> None:
    for variant in variant_files():
        s = sheet(variant)
        assert tuple(s.bets) == load_game(variant).bet_names
        assert all(0 < b.rtp < 1 for b in s.bets.values())
