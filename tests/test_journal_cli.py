"""`table-controller journal verify|show|export` end to end through main()."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from journal_helpers import TickingClock, tamper, write_rounds

from table_controller.cli import journal_cmd, main
from table_controller.journal import Journal


@pytest.fixture
def journal_file(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path / "t01.sqlite"
    with Journal(path, table="T01", game="baccarat", variant="baccarat") as journal:
        events = write_rounds(journal, rounds=3)
    return path, events


def stored_lines(path: Path) -> list[str]:
    with Journal.open_readonly(path) as reader:
        return [r.body for r in reader.records()]


def test_verify_ok_exits_0_with_a_summary(journal_file: tuple[Path, list], capsys) -> None:
    path, events = journal_file
    assert main(["journal", "verify", "--journal", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    n = len(events)
    assert out[:2] == [
        f"journal {path} (table T01, baccarat): OK",
        f"  {n} events (seq 1..{n}), 3 rounds, 3 results re-judged by the rules core",
    ]
    assert out[2].startswith("  last hash ") and len(out[2]) == len("  last hash ") + 64


def test_verify_lists_problems_and_exits_1(journal_file: tuple[Path, list], capsys) -> None:
    path, _ = journal_file
    tamper(path, "DELETE FROM events WHERE seq = 3")
    assert main(["journal", "verify", "--journal", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"journal {path} (table T01, baccarat): FAILED, 4 problems"
    assert out[3] == "  - seq gap before seq 4: seq 3 missing (1 event)"
    assert out[4].startswith("  - seq 4: hash chain broken")


def test_verify_json_is_the_report(journal_file: tuple[Path, list], capsys) -> None:
    path, events = journal_file
    assert main(["journal", "verify", "--journal", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["ok"], report["events"], report["rounds"], report["results_checked"]) == (
        True, len(events), 3, 3)
    assert report["problems"] == []


def test_verify_shows_progress_on_stderr(
    journal_file: tuple[Path, list], capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, events = journal_file
    monkeypatch.setattr(journal_cmd, "PROGRESS_FROM", 10)
    monkeypatch.setattr("table_controller.journal.verify.PROGRESS_EVERY", 10)
    main(["journal", "verify", "--journal", str(path)])
    err = capsys.readouterr().err.splitlines()
    n = len(events)
    assert err == [f"verify: {k}/{n} events" for k in (10, 20, 30)] + [f"verify: {n}/{n} events"]


def test_verify_of_a_garbage_file_is_a_clear_error(tmp_path: Path, capsys) -> None:
    path = tmp_path / "x.sqlite"
    path.write_text("not a journal at all\n" * 100)
    assert main(["journal", "verify", "--journal", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"table-controller: error: journal {path}: not a table-controller journal "
        "(file is not a database)\n"
    )


def test_show_round_prints_readable_lines(journal_file: tuple[Path, list], capsys) -> None:
    path, events = journal_file
    assert main(["journal", "show", "--journal", str(path), "--round", "R1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    r1 = [e for e in events if e.round == "R1"]
    assert len(lines) == len(r1)
    assert lines[0] == (
        "      1  2026-11-29T18:40:00.000Z  round.start    R1           variant baccarat, betting 15 s"
    )
    card = r1[4]
    assert lines[4] == (
        f"      5  {card.ts}  card           R1           "
        f"{card.position}[{card.index}] {card.code} (shoe)"
    )
    result = r1[-2]
    wins = [f"{b} +{v}" for b, v in result.payouts.items() if not v.startswith("-") and v != "0"]
    assert lines[-2].endswith("wins: " + ", ".join(wins))


def test_show_json_prints_the_stored_text(journal_file: tuple[Path, list], capsys) -> None:
    path, _ = journal_file
    assert main(["journal", "show", "--journal", str(path), "--json", "--type", "round.result"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [s for s in stored_lines(path) if '"type":"round.result"' in s]
    assert len(lines) == 3


def test_show_tail(journal_file: tuple[Path, list], capsys) -> None:
    path, _ = journal_file
    assert main(["journal", "show", "--journal", str(path), "--json", "--tail", "2"]) == 0
    assert capsys.readouterr().out.splitlines() == stored_lines(path)[-2:]


def test_show_of_an_unknown_round_exits_1(journal_file: tuple[Path, list], capsys) -> None:
    path, _ = journal_file
    assert main(["journal", "show", "--journal", str(path), "--round", "R99"]) == 1
    assert capsys.readouterr().err == f"table-controller: no events of round 'R99' in {path}\n"


def test_export_writes_the_stored_events_exactly(journal_file: tuple[Path, list], capsys) -> None:
    path, _ = journal_file
    assert main(["journal", "export", "--journal", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == stored_lines(path)


def test_export_since_and_until_a_seq(journal_file: tuple[Path, list], capsys) -> None:
    path, _ = journal_file
    assert main(["journal", "export", "--journal", str(path), "--since", "10", "--until", "12"]) == 0
    assert capsys.readouterr().out.splitlines() == stored_lines(path)[10:12]


def test_export_since_and_until_a_time(journal_file: tuple[Path, list], capsys) -> None:
    path, events = journal_file
    # TickingClock: event n is at 18:40:00 + (n - 1) * 0.25 s
    argv = ["journal", "export", "--journal", str(path),
            "--since", "2026-11-29T19:40:01+01:00", "--until", "2026-11-29T18:40:02.500"]
    assert main(argv) == 0
    assert events[4].ts == "2026-11-29T18:40:01.000Z"
    assert capsys.readouterr().out.splitlines() == stored_lines(path)[4:10]


def test_export_refuses_a_bound_that_is_neither_seq_nor_time(
    journal_file: tuple[Path, list], capsys
) -> None:
    path, _ = journal_file
    with pytest.raises(SystemExit) as caught:
        main(["journal", "export", "--journal", str(path), "--since", "yesterday"])
    assert caught.value.code == 2
    assert "'yesterday' is neither a seq number nor an RFC 3339 time" in capsys.readouterr().err


def test_the_tools_read_while_a_controller_writes(tmp_path: Path, capsys) -> None:
    path = tmp_path / "t01.sqlite"
    clock = TickingClock()
    with Journal(path, table="T01", game="baccarat") as live:
        write_rounds(live, rounds=1, clock=clock)
        assert main(["journal", "verify", "--journal", str(path), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["rounds"] == 1
        write_rounds(live, rounds=1, clock=clock, first_round=2)
        assert main(["journal", "export", "--journal", str(path)]) == 0
        assert len(capsys.readouterr().out.splitlines()) == live.last_seq
        assert main(["journal", "show", "--journal", str(path), "--round", "R2"]) == 0


def test_every_journal_command_has_help(capsys) -> None:
    for action in ("verify", "show", "export"):
        with pytest.raises(SystemExit) as caught:
            main(["journal", action, "--help"])
        assert caught.value.code == 0
        assert "--journal PATH" in capsys.readouterr().out


def test_show_prints_a_row_that_is_not_a_typed_event_from_its_columns_and_goes_on(
    journal_file: tuple[Path, list], capsys
) -> None:
    path, events = journal_file
    card = next(e for e in events if e.type == "card")
    tamper(path, "UPDATE events SET body = replace(body, '\"index\":0', '\"index\":-1') WHERE seq = ?",
           (card.seq,))
    assert main(["journal", "show", "--journal", str(path), "--round", "R1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len([e for e in events if e.round == "R1"])
    assert lines[card.seq - 1] == (
        f"      {card.seq}  {card.ts}  card           R1           (stored text is not a valid "
        "event: card event: Expected `int` >= 0 - at `$.index`)"
    )
    assert lines[card.seq].startswith(f"      {card.seq + 1}  ")


def test_verify_reports_a_row_that_is_not_a_typed_event_and_reads_on(
    journal_file: tuple[Path, list], capsys
) -> None:
    path, events = journal_file
    tamper(path, "UPDATE events SET body = replace(body, '\"v\":1', '\"v\":2') WHERE seq = 3")
    assert main(["journal", "verify", "--journal", str(path)]) == 1
    out = capsys.readouterr().out
    assert "  - seq 3: stored text is not a valid event: event: Invalid enum value 2 - at `$.v`\n" in out
    assert f"  {len(events)} events (seq 1..{len(events)}), 3 rounds, 3 results re-judged" in out
