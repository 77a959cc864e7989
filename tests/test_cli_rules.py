"""`table-controller rules ...` end to end through main()."""

from __future__ import annotations

import io
import json
from argparse import Namespace

from table_controller.cli import main
from table_controller.cli.rules_cmd import run_judge


def judge(variant: str, lines: list[str]) -> tuple[int, list[dict]]:
    out = io.StringIO()
    rc = run_judge(Namespace(game=variant, variants_dir=None), io.StringIO("\n".join(lines)), out)
    return rc, [json.loads(x) for x in out.getvalue().splitlines()]


def test_judge_baccarat_round_reports_hands_payouts_and_used() -> None:
    rc, [answer] = judge("baccarat", ['{"cards": ["4H","KS","3D","2C","9H","5S"]}'])
    assert rc == 0
    assert answer["hands"]["player"] == {"cards": ["4H", "3D"], "class": "7", "points": 7}
    assert answer["hands"]["banker"] == {"cards": ["KS", "2C", "9H"], "class": "1", "points": 1}
    assert answer["outcome"]["winner"] == "player"
    assert answer["payouts"] == {
        "player": "1", "banker": "-1", "tie": "-1", "player_pair": "-1", "banker_pair": "-1",
    }
    assert answer["used"] == 5


def test_bad_lines_get_errors_and_good_lines_are_still_judged() -> None:
    rc, answers = judge(
        "teen-patti-2020",
        [
            "not json",
            '{"cards": ["AS","KS","QS","JS","TS","9S"]}',
            '{"cards": ["AS","AS","2S","3S","4S","5S"]}',
            '{"cards": ["ZZ"]}',
            '{"cards": ["AS","KS"]}',
        ],
    )
    assert rc == 1
    assert "not JSON" in answers[0]["error"]
    assert answers[1]["hands"]["a"]["class"] == "flush"  # AS QS TS
    assert answers[1]["payouts"]["six_card_bonus"] == "1000"
    assert "AS appears 2 times" in answers[2]["error"]
    assert "unknown card code 'ZZ'" in answers[3]["error"]
    assert "needs more cards" in answers[4]["error"]


def test_classify_prints_class(capsys) -> None:
    assert main(["rules", "classify", "--game", "three-pictures", "KS", "QH", "JD"]) == 0
    assert capsys.readouterr().out.strip() == "3P"


def test_unknown_variant_is_a_clear_error(capsys) -> None:
    assert main(["rules", "classify", "--game", "pai-gow", "KS", "QH", "JD"]) == 2
    assert "unknown game variant 'pai-gow'" in capsys.readouterr().err


def test_judge_accepts_ten_written_as_10(capsys) -> None:
    _, [answer] = judge("teen-patti-2020", ['{"cards": ["10S","9S","8S","2H","3D","5C"]}'])
    assert answer["hands"]["a"]["cards"] == ["TS", "8S", "3D"]
