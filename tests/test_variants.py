"""Variant files: the shipped ones load, every kind of mistake is a clear VariantError,
and a studio's own file in ``--variants-dir`` changes what a round pays."""

from __future__ import annotations

import io
import json
from argparse import Namespace
from decimal import Decimal
from pathlib import Path

import pytest

from table_controller.cli import main
from table_controller.cli.rules_cmd import run_judge
from table_controller.errors import ConfigError, VariantError
from table_controller.rules import GAMES, load_game, load_variant, parse_cards
from table_controller.rules.registry import builtin_variants_dir, load_variant_file, variant_files

SHIPPED = [
    "baccarat", "baccarat-no-commission", "three-pictures", "three-pictures-no-commission",
    "three-face", "three-face-3p", "teen-patti-2020",
]

BACCARAT = """\
id = "{id}"
game = "baccarat"
title = "Studio baccarat"

[options]
decks = 6

[bets.player]
win = "1"

[bets.banker]
win = "0.95"

[bets.tie]
win = "9"
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


def baccarat_with(tmp_path: Path, old: str, new: str, name: str = "studio") -> Path:
    text = BACCARAT.format(id=name)
    assert old in text
    return write(tmp_path, name, text.replace(old, new))


def error_of(path: Path) -> str:
    with pytest.raises(VariantError) as info:
        load_variant_file(path)
    return str(info.value)


# ------------------------------------------------------------------- shipped files


def test_every_variant_of_games_md_is_shipped() -> None:
    assert sorted(variant_files()) == sorted(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_variant_loads_and_its_id_is_its_file_name(name: str) -> None:
    variant = load_variant(name)
    assert variant.id == name
    assert variant.game in GAMES
    assert Path(variant.source) == builtin_variants_dir() / f"{name}.toml"
    for terms in variant.bets.values():
        for amount in [terms.win, *terms.win_on_points.values(), *terms.pays.values()]:
            assert amount is None or type(amount) is Decimal


def test_shipped_paytables_are_those_of_games_md() -> None:
    bets = load_variant("baccarat").bets
    assert {k: v.win for k, v in bets.items()} == {
        "player": Decimal(1), "banker": Decimal("0.95"), "tie": Decimal(8),
        "player_pair": Decimal(11), "banker_pair": Decimal(11),
    }
    assert load_variant("baccarat-no-commission").bets["banker"].win_on_points == {6: Decimal("0.5")}
    assert load_variant("baccarat").options == {"decks": 8}
    tp = load_variant("three-pictures")
    assert tp.options == {"boxes": 3, "tie_basis": "points"}
    assert {k: v.win for k, v in tp.bets.items()} == {
        "main": Decimal("0.95"), "tie": Decimal(8), "three_pictures": Decimal(16),
    }
    assert load_variant("three-pictures-no-commission").bets["main"].win_on_points == {
        6: Decimal("0.5"),
    }
    tf = load_variant("three-face")
    assert tf.options == {"tie_basis": "class"}
    assert tf.bets["pair_plus"].pays == {
        "straight-flush": Decimal(40), "three-of-a-kind": Decimal(30), "straight": Decimal(6),
        "flush": Decimal(3), "pair": Decimal(1),
    }
    assert tf.bets["win"].win_on_points == tf.bets["lose"].win_on_points == {6: Decimal("0.5")}
    assert load_variant("three-face-3p").bets["three_pictures"].win == Decimal(16)
    tpt = load_variant("teen-patti-2020")
    assert tpt.bets["tie"].win == Decimal(50)
    assert tpt.bets["pair_plus"].pays == {
        "trail-aces": Decimal(50), "trail": Decimal(40), "straight-flush": Decimal(30),
        "straight": Decimal(6), "flush": Decimal(3), "pair": Decimal(1),
    }
    assert tpt.bets["six_card_bonus"].pays == {
        "royal-flush": Decimal(1000), "straight-flush": Decimal(200),
        "four-of-a-kind": Decimal(100), "full-house": Decimal(20), "flush": Decimal(15),
        "straight": Decimal(10), "three-of-a-kind": Decimal(7),
    }


# ------------------------------------------------------------------------ mistakes


def test_a_good_studio_file_loads(tmp_path: Path) -> None:
    variant = load_variant_file(write(tmp_path, "studio", BACCARAT.format(id="studio")))
    assert variant.options == {"decks": 6}
    assert variant.bets["tie"].win == Decimal(9)
    assert variant.title == "Studio baccarat"


def test_unknown_top_level_key(tmp_path: Path) -> None:
    msg = error_of(baccarat_with(tmp_path, 'title =', 'colour = "red"\ntitle ='))
    assert "studio.toml" in msg
    assert "unknown key 'colour'" in msg


def test_unknown_option(tmp_path: Path) -> None:
    msg = error_of(baccarat_with(tmp_path, "decks = 6", "decks = 6\nboxes = 3"))
    assert "studio.toml" in msg and "[options]" in msg and "unknown key 'boxes'" in msg


@pytest.mark.parametrize(
    ("value", "problem"),
    [("0", "must be at least 1, not 0"), ("9", "must be at most 8, not 9"),
     ('"8"', "must be an integer, not '8'"), ("true", "must be an integer, not True"),
     ("6.0", "must be an integer, not 6.0")],
)
def test_option_out_of_range_or_of_the_wrong_type(tmp_path: Path, value: str, problem: str) -> None:
    msg = error_of(baccarat_with(tmp_path, "decks = 6", f"decks = {value}"))
    assert "studio.toml" in msg and f"options.decks {problem}" in msg


def test_option_not_among_the_choices(tmp_path: Path) -> None:
    path = write(tmp_path, "tp", (builtin_variants_dir() / "three-pictures.toml").read_text()
                 .replace('id = "three-pictures"', 'id = "tp"')
                 .replace('tie_basis = "points"', 'tie_basis = "cards"'))
    msg = error_of(path)
    assert "tp.toml" in msg and "options.tie_basis must be one of 'points', 'class', not 'cards'" in msg


def test_boxes_out_of_range(tmp_path: Path) -> None:
    path = write(tmp_path, "tp", (builtin_variants_dir() / "three-pictures.toml").read_text()
                 .replace('id = "three-pictures"', 'id = "tp"').replace("boxes = 3", "boxes = 8"))
    assert "options.boxes must be at most 7, not 8" in error_of(path)


def test_unknown_bet(tmp_path: Path) -> None:
    msg = error_of(baccarat_with(tmp_path, "[bets.tie]", '[bets.dragon]\nwin = "1"\n[bets.tie]'))
    assert "studio.toml" in msg and "[bets]" in msg and "unknown key 'dragon'" in msg


def test_float_money_is_refused(tmp_path: Path) -> None:
    msg = error_of(baccarat_with(tmp_path, 'win = "0.95"', "win = 0.95"))
    assert "studio.toml" in msg and "bets.banker.win" in msg
    assert 'write money as a string such as "0.5"' in msg


def test_negative_money_is_refused(tmp_path: Path) -> None:
    msg = error_of(baccarat_with(tmp_path, 'win = "9"', 'win = "-9"'))
    assert "studio.toml" in msg and "bets.tie.win" in msg and ">= 0" in msg


@pytest.mark.parametrize("value", ['"abc"', '"NaN"', '"Infinity"', "[1]"])
def test_money_that_is_not_a_finite_decimal_is_refused(tmp_path: Path, value: str) -> None:
    msg = error_of(baccarat_with(tmp_path, 'win = "9"', f"win = {value}"))
    assert "studio.toml" in msg and "bets.tie.win" in msg


def test_integer_money_is_accepted(tmp_path: Path) -> None:
    variant = load_variant_file(baccarat_with(tmp_path, 'win = "9"', "win = 9"))
    assert variant.bets["tie"].win == Decimal(9)


def test_missing_required_bet(tmp_path: Path) -> None:
    msg = error_of(baccarat_with(tmp_path, '[bets.banker]\nwin = "0.95"\n', ""))
    assert "studio.toml" in msg and "bets.banker is required by game 'baccarat'" in msg


def test_missing_win(tmp_path: Path) -> None:
    msg = error_of(baccarat_with(tmp_path, '[bets.tie]\nwin = "9"', "[bets.tie]\npays = 9"))
    assert "bets.tie" in msg and "unknown key 'pays'" in msg
    msg = error_of(baccarat_with(tmp_path, '[bets.tie]\nwin = "9"', "[bets.tie]"))
    assert "bets.tie.win is missing" in msg


def test_bets_missing_altogether(tmp_path: Path) -> None:
    path = write(tmp_path, "bare", 'id = "bare"\ngame = "baccarat"\n')
    assert "bare.toml: [bets] is missing or empty" in error_of(path)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [("{ six = \"0.5\" }", "win_on_points: 'six' is not a points total"),
     ("{ 10 = \"0.5\" }", "win_on_points: points 10 is not in 0..9"),
     ("{ 6 = 0.5 }", "win_on_points.6: write money as a string")],
)
def test_bad_win_on_points(tmp_path: Path, entry: str, problem: str) -> None:
    msg = error_of(baccarat_with(tmp_path, 'win = "0.95"', f'win = "1"\nwin_on_points = {entry}'))
    assert "studio.toml" in msg and f"bets.banker.{problem}" in msg


def test_win_on_points_where_the_bet_has_none(tmp_path: Path) -> None:
    msg = error_of(baccarat_with(tmp_path, 'win = "9"', 'win = "9"\nwin_on_points = { 6 = "1" }'))
    assert "bets.tie" in msg and "unknown key 'win_on_points'" in msg


def test_win_on_points_that_is_not_a_table(tmp_path: Path) -> None:
    msg = error_of(baccarat_with(tmp_path, 'win = "0.95"', 'win = "1"\nwin_on_points = "6"'))
    assert "studio.toml" in msg and "bets.banker.win_on_points" in msg and "table" in msg


def test_unknown_pays_category(tmp_path: Path) -> None:
    text = (builtin_variants_dir() / "three-face.toml").read_text().replace(
        'id = "three-face"', 'id = "tf"').replace('pair = "1"', 'pair = "1"\nhigh-card = "1"')
    msg = error_of(write(tmp_path, "tf", text))
    assert "tf.toml" in msg and "bets.pair_plus.pays" in msg and "unknown key 'high-card'" in msg


def test_six_card_bonus_refuses_two_pair(tmp_path: Path) -> None:
    text = (builtin_variants_dir() / "teen-patti-2020.toml").read_text().replace(
        'id = "teen-patti-2020"', 'id = "tpt"').replace(
        'three-of-a-kind = "7"', 'three-of-a-kind = "7"\ntwo-pair = "2"')
    msg = error_of(write(tmp_path, "tpt", text))
    assert "bets.six_card_bonus.pays" in msg and "unknown key 'two-pair'" in msg


def test_pays_bet_without_pays(tmp_path: Path) -> None:
    text = (builtin_variants_dir() / "three-face.toml").read_text().replace(
        'id = "three-face"', 'id = "tf"').replace("[bets.pair_plus.pays]", "[bets.pair_plus.odds]")
    msg = error_of(write(tmp_path, "tf", text))
    assert "bets.pair_plus" in msg and "unknown key 'odds'" in msg


def test_id_must_match_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path, "studio", BACCARAT.format(id="other"))
    msg = error_of(path)
    assert "studio.toml" in msg and "id 'other' must match the file name 'studio'" in msg


def test_missing_id(tmp_path: Path) -> None:
    path = write(tmp_path, "studio", BACCARAT.format(id="x").replace('id = "x"\n', ""))
    assert "studio.toml: key 'id' is missing or not a string" in error_of(path)


def test_invalid_toml(tmp_path: Path) -> None:
    msg = error_of(write(tmp_path, "broken", 'id = "broken"\ngame = baccarat\n'))
    assert "broken.toml: not valid TOML" in msg
    assert "line 2" in msg


def test_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin.toml"
    path.write_bytes(BACCARAT.format(id="latin").replace("Studio", "Caf\xe9").encode("latin-1"))
    msg = error_of(path)
    assert "latin.toml" in msg and "UTF-8" in msg


def test_unknown_game(tmp_path: Path) -> None:
    path = write(tmp_path, "pai", BACCARAT.format(id="pai").replace('game = "baccarat"', 'game = "pai-gow"'))
    msg = error_of(path)
    assert "pai.toml" in msg and "key 'game' names unknown game 'pai-gow'" in msg


def test_game_that_is_not_a_string(tmp_path: Path) -> None:
    path = write(tmp_path, "odd", BACCARAT.format(id="odd").replace('game = "baccarat"',
                                                                    'game = ["baccarat"]'))
    msg = error_of(path)
    assert "odd.toml" in msg and "'game'" in msg


def test_variant_error_is_a_config_error_and_a_value_error(tmp_path: Path) -> None:
    assert issubclass(VariantError, ConfigError) and issubclass(VariantError, ValueError)


def test_unknown_variant_name_lists_the_known_ones() -> None:
    with pytest.raises(VariantError, match="unknown game variant 'pai-gow' \\(known: baccarat, "):
        load_variant("pai-gow")


def test_variants_dir_that_is_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(VariantError, match="--variants-dir .*missing: not a folder"):
        load_variant("baccarat", tmp_path / "missing")


# ------------------------------------------------------------- a studio's variant


def test_studio_variant_changes_the_judged_payout(tmp_path: Path) -> None:
    write(tmp_path, "baccarat-tie9", BACCARAT.format(id="baccarat-tie9"))
    game = load_game("baccarat-tie9", tmp_path)
    assert game.decks == 6
    assert game.bet_names == ("player", "banker", "tie")  # no pair bets offered
    result = game.deal(parse_cards("8S 5H KD 3C".split()))[0].result()
    assert result.to_dict()["payouts"] == {"player": "0", "banker": "0", "tie": "9"}


def test_studio_file_of_a_shipped_name_overrides_it(tmp_path: Path) -> None:
    write(tmp_path, "baccarat", BACCARAT.format(id="baccarat"))
    assert load_variant("baccarat", tmp_path).bets["tie"].win == Decimal(9)
    assert load_variant("baccarat").bets["tie"].win == Decimal(8)
    assert load_variant("three-face", tmp_path).id == "three-face"  # others still there


def test_studio_variant_through_the_cli_judge(tmp_path: Path) -> None:
    write(tmp_path, "baccarat-tie9", BACCARAT.format(id="baccarat-tie9"))
    out = io.StringIO()
    rc = run_judge(
        Namespace(game="baccarat-tie9", variants_dir=tmp_path),
        io.StringIO('{"cards": ["8S","5H","KD","3C"]}\n'),
        out,
    )
    assert rc == 0
    answer = json.loads(out.getvalue())
    assert answer["payouts"] == {"player": "0", "banker": "0", "tie": "9"}
    assert answer["used"] == 4


def test_cli_judge_reads_the_variants_dir_option(tmp_path: Path, monkeypatch, capsys) -> None:
    write(tmp_path, "baccarat-tie9", BACCARAT.format(id="baccarat-tie9"))
    monkeypatch.setattr("sys.stdin", io.StringIO('{"cards": ["8S","5H","KD","3C"]}\n'))
    assert main(["rules", "judge", "--game", "baccarat-tie9", "--variants-dir", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["payouts"]["tie"] == "9"


def test_cli_reports_a_broken_studio_file_without_a_traceback(tmp_path: Path, capsys) -> None:
    baccarat_with(tmp_path, 'win = "0.95"', "win = 0.95")
    assert main(["rules", "classify", "--game", "studio", "--variants-dir", str(tmp_path),
                 "AS", "KS"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("table-controller: error: ")
    assert "studio.toml: bets.banker.win: write money as a string" in err
    assert "Traceback" not in err


def test_cli_variants_lists_the_studio_files(tmp_path: Path, capsys) -> None:
    write(tmp_path, "baccarat-tie9", BACCARAT.format(id="baccarat-tie9"))
    assert main(["rules", "variants", "--variants-dir", str(tmp_path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["variants"]
    assert sorted(r["id"] for r in rows) == sorted(SHIPPED + ["baccarat-tie9"])
    studio = next(r for r in rows if r["id"] == "baccarat-tie9")
    assert studio == {"id": "baccarat-tie9", "game": "baccarat", "title": "Studio baccarat",
                      "file": str(tmp_path / "baccarat-tie9.toml")}


def test_a_zero_win_written_minus_zero_settles_as_0_not_minus_0(tmp_path: Path) -> None:
    baccarat_with(tmp_path, 'win = "9"', 'win = "-0"')
    result = load_game("studio", tmp_path).deal(parse_cards("8S 5H KD 3C".split()))[0].result()
    assert result.to_dict()["payouts"]["tie"] == "0"


def test_title_that_is_not_a_string(tmp_path: Path) -> None:
    msg = error_of(baccarat_with(tmp_path, 'title = "Studio baccarat"', "title = 5"))
    assert "studio.toml" in msg and "key 'title'" in msg and "string" in msg


def test_option_for_a_game_that_has_none_says_so(tmp_path: Path) -> None:
    text = (builtin_variants_dir() / "teen-patti-2020.toml").read_text().replace(
        'id = "teen-patti-2020"', 'id = "tpt"').replace("[bets.a]", "[options]\ndecks = 1\n\n[bets.a]")
    msg = error_of(write(tmp_path, "tpt", text))
    assert msg.endswith("tpt.toml: [options]: unknown key 'decks' (game 'teen-patti-2020' has no options)")
