"""verify_journal: chain, seqs, and every result re-judged by the rules core."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import msgspec
import pytest
from journal_helpers import TickingClock, round_drafts, smuggle, tamper, write_rounds

from table_controller.event_types import as_dict
from table_controller.journal import GENESIS, Journal, NotAJournal, verify_journal
from table_controller.journal import verify as verify_module
from table_controller.rules import load_game
from table_controller.rules.cards import parse_cards

TRIGGERS_GONE = [
    "the file no longer refuses UPDATE of events: an append-only trigger was removed",
    "the file no longer refuses DELETE from events: an append-only trigger was removed",
]
#: Player 4H 3D (7) against banker KS 2C 9H (1): player wins (see test_cli_rules).
PLAYER_WINS = parse_cards(["4H", "KS", "3D", "2C", "9H", "5S"])


def chain_broken(seq: int) -> str:
    return (
        f"seq {seq}: hash chain broken: the stored hash is not sha256(previous hash + stored "
        "text) (this event or its hash was changed, or the events before it were removed or "
        "reordered)"
    )


def new_journal(path: Path, variant: str = "baccarat") -> Journal:
    return Journal(path, table="T01", game=load_game(variant).variant.game, variant=variant)


@pytest.fixture
def three_rounds(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path / "t01.sqlite"
    with new_journal(path) as journal:
        events = write_rounds(journal, rounds=3)
    return path, events


def journal_of(tmp_path: Path, drafts: list[dict[str, Any]]) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path / "t01.sqlite"
    with new_journal(path) as journal:
        return path, journal.append(drafts)


def player_wins_drafts() -> list[dict[str, Any]]:
    drafts, used = round_drafts(load_game("baccarat"), PLAYER_WINS, "R1", clock=TickingClock())
    assert used == 5
    return drafts


def test_an_intact_journal_verifies(three_rounds: tuple[Path, list[dict[str, Any]]]) -> None:
    path, events = three_rounds
    report = verify_journal(path)
    assert report.problems == []
    assert report.ok is True
    assert (report.events, report.rounds, report.results_checked) == (len(events), 3, 3)
    assert report.last_seq == events[-1].seq == len(events)
    with Journal.open_readonly(path) as reader:
        assert report.last_hash == reader.last_hash
    assert report.as_dict()["results_checked"] == 3


def test_an_empty_journal_verifies(tmp_path: Path) -> None:
    new_journal(tmp_path / "j.sqlite").close()
    report = verify_journal(tmp_path / "j.sqlite")
    assert (report.ok, report.events, report.last_seq, report.last_hash) == (True, 0, 0, GENESIS)


def test_a_changed_event_text_breaks_the_chain_at_its_seq(three_rounds: tuple[Path, list]) -> None:
    path, events = three_rounds
    seq = next(e.seq for e in events if e.round == "R2" and getattr(e, "state", None) == "betting")
    tamper(path, "UPDATE events SET body = replace(body, '\"betting\"', '\"paused\"') WHERE seq = ?",
           (seq,))
    assert verify_journal(path).problems == TRIGGERS_GONE + [chain_broken(seq)]


def test_a_deleted_event_is_reported_as_a_gap(three_rounds: tuple[Path, list]) -> None:
    path, _ = three_rounds
    tamper(path, "DELETE FROM events WHERE seq = 3")
    report = verify_journal(path)
    assert report.problems == TRIGGERS_GONE + [
        "seq gap before seq 4: seq 3 missing (1 event)", chain_broken(4),
    ]
    assert report.ok is False


def test_several_deleted_events_are_one_gap(three_rounds: tuple[Path, list]) -> None:
    path, _ = three_rounds
    tamper(path, "DELETE FROM events WHERE seq BETWEEN 2 AND 4")
    assert verify_journal(path).problems == TRIGGERS_GONE + [
        "seq gap before seq 5: seqs 2..4 missing (3 events)", chain_broken(5),
    ]


def test_a_changed_hash_breaks_the_chain_at_it_and_after_it(three_rounds: tuple[Path, list]) -> None:
    path, _ = three_rounds
    tamper(path, "UPDATE events SET hash = ? WHERE seq = 5", ("ab" * 32,))
    assert verify_journal(path).problems == TRIGGERS_GONE + [chain_broken(5), chain_broken(6)]


def test_swapped_events_are_reported(three_rounds: tuple[Path, list]) -> None:
    path, _ = three_rounds
    conn = sqlite3.connect(path)
    rows = {r[0]: r[1:] for r in conn.execute(
        "SELECT seq, ts, type, round, body, hash FROM events WHERE seq IN (2, 3)")}
    conn.close()
    for seq, other in ((2, 3), (3, 2)):
        tamper(path, "UPDATE events SET ts = ?, type = ?, round = ?, body = ?, hash = ? WHERE seq = ?",
               (*rows[other], seq))
    assert verify_journal(path).problems == TRIGGERS_GONE + [
        chain_broken(2), "seq 2: the row's seq is 2 but its stored text says 3",
        chain_broken(3), "seq 3: the row's seq is 3 but its stored text says 2",
        chain_broken(4),
    ]


def test_a_wrong_payout_is_reported(tmp_path: Path) -> None:
    drafts = player_wins_drafts()
    assert drafts[-2].payouts["player"] == "1"
    drafts[-2].payouts["player"] = "2"
    path, events = journal_of(tmp_path, drafts)
    report = verify_journal(path)
    assert report.problems == [
        f"round 'R1': round.result at seq {events[-2].seq} differs from the rules core "
        '(baccarat): payouts.player is "2" in the journal, the rules core computes "1"'
    ]
    assert (report.ok, report.results_checked) == (False, 1)


def test_a_wrong_winner_is_reported(tmp_path: Path) -> None:
    drafts = player_wins_drafts()
    drafts[-2].outcome["winner"] = "banker"
    path, events = journal_of(tmp_path, drafts)
    assert verify_journal(path).problems == [
        f"round 'R1': round.result at seq {events[-2].seq} differs from the rules core "
        '(baccarat): outcome.winner is "banker" in the journal, the rules core computes "player"'
    ]


def test_a_card_at_a_wrong_position_is_reported(tmp_path: Path) -> None:
    drafts = player_wins_drafts()
    first, second = drafts[4], drafts[5]
    assert (first.code, first.position, second.code, second.position) == (
        "4H", "player", "KS", "banker")
    move = msgspec.structs.replace
    drafts[4], drafts[5] = move(first, position="banker"), move(second, position="player")
    path, events = journal_of(tmp_path, drafts)
    problems = verify_journal(path).problems
    assert problems[0] == (
        f"round 'R1': round.result at seq {events[-2].seq}: card 4H at seq {events[4].seq} "
        "is journaled at banker[0] but the dealing plan puts it at player[0]"
    )
    assert len(problems) > 1  # the hands judged from the journaled positions differ too


def test_an_incomplete_deal_with_a_result_is_reported(tmp_path: Path) -> None:
    drafts = player_wins_drafts()
    assert drafts[8].code == "9H"
    del drafts[8]
    path, events = journal_of(tmp_path, drafts)
    problems = verify_journal(path).problems
    assert problems[0] == (
        f"round 'R1': round.result at seq {events[-2].seq} but the deal is incomplete: "
        "4 cards, the next card would go to banker"
    )


def test_burn_cards_and_cards_outside_rounds_are_not_part_of_the_deal(tmp_path: Path) -> None:
    drafts = player_wins_drafts()
    burn = msgspec.structs.replace(drafts[4], position="burn", index=0, code="QC")
    loose = msgspec.structs.replace(drafts[4], round=None, code="7C")
    path, _ = journal_of(tmp_path, [loose] + drafts[:4] + [burn] + drafts[4:])
    assert verify_journal(path).problems == []


def test_a_double_settlement_is_reported(tmp_path: Path) -> None:
    path, events = journal_of(tmp_path, player_wins_drafts())
    result = events[-2]
    smuggle(path, as_dict(result) | {"seq": events[-1].seq + 1})
    report = verify_journal(path)
    assert report.problems == [
        f"round 'R1' settled twice: round.result at seq {result.seq} and round.result at seq "
        f"{events[-1].seq + 1} (a round is settled exactly once)"
    ]
    assert report.results_checked == 2


def test_a_result_and_a_void_of_one_round_are_reported(tmp_path: Path) -> None:
    path, events = journal_of(tmp_path, player_wins_drafts())
    void = as_dict(events[-1]) | {"seq": events[-1].seq + 1, "type": "round.void"}
    del void["state"], void["reason"]
    void.update(reason="operator", refund=True)
    smuggle(path, void)
    assert verify_journal(path).problems == [
        f"round 'R1' has both round.result and round.void: round.result at seq {events[-2].seq}"
        f" and round.void at seq {void['seq']} (a round is settled exactly once)"
    ]


def test_a_round_abandoned_before_the_next_one_is_reported(tmp_path: Path) -> None:
    clock = TickingClock()
    game = load_game("baccarat")
    r1, _ = round_drafts(game, PLAYER_WINS, "R1", clock=clock)
    r2, _ = round_drafts(game, PLAYER_WINS, "R2", clock=clock)
    r3, _ = round_drafts(game, PLAYER_WINS, "R3", clock=clock)
    path, _ = journal_of(tmp_path, r1[:6] + r2 + r3[:6])  # R3 is still in progress: fine
    assert verify_journal(path).problems == [
        "round 'R1' (started at seq 1) was never settled: no round.result or round.void, yet "
        "later rounds were played"
    ]


@pytest.mark.parametrize(
    "variant",
    ["baccarat", "baccarat-no-commission", "three-pictures", "three-pictures-no-commission",
     "three-face", "three-face-3p", "teen-patti-2020"],
)
def test_journals_of_every_shipped_variant_verify(tmp_path: Path, variant: str) -> None:
    path = tmp_path / "j.sqlite"
    with new_journal(path, variant) as journal:
        write_rounds(journal, variant, rounds=4)
    report = verify_journal(path)
    assert (report.problems, report.rounds, report.results_checked) == ([], 4, 4)


def test_a_studio_variant_is_read_from_the_variants_dir(tmp_path: Path) -> None:
    studio = tmp_path / "variants"
    studio.mkdir()
    shipped = (Path(load_game("baccarat").variant.source)).read_text()
    (studio / "baccarat-house.toml").write_text(
        shipped.replace('id = "baccarat"', 'id = "baccarat-house"').replace('"0.95"', '"0.9"'))
    game = load_game("baccarat-house", studio)
    drafts, _ = round_drafts(game, PLAYER_WINS, "R1", clock=TickingClock())
    path, events = journal_of(tmp_path, drafts)
    assert verify_journal(path, variants_dir=studio).problems == []
    [problem] = verify_journal(path).problems
    assert problem.startswith(
        f"round 'R1': round.result at seq {events[-2].seq} cannot be checked: unknown game "
        "variant 'baccarat-house'"
    )


def test_progress_is_reported_while_reading(
    three_rounds: tuple[Path, list], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, events = three_rounds
    monkeypatch.setattr(verify_module, "PROGRESS_EVERY", 10)
    calls: list[tuple[int, int]] = []
    verify_journal(path, progress=lambda done, total: calls.append((done, total)))
    n = len(events)
    assert calls == [(k, n) for k in range(10, n + 1, 10)] + [(n, n)]


def test_verifying_a_file_that_is_not_a_journal_raises(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    path.write_bytes(b"\x00garbage" * 500)
    with pytest.raises(NotAJournal, match=f"journal {path}: not a table-controller journal"):
        verify_journal(path)


def test_a_row_whose_text_is_not_a_typed_event_is_reported_and_reading_goes_on(tmp_path: Path) -> None:
    drafts = player_wins_drafts()
    drafts[-2].payouts["player"] = "2"
    path, events = journal_of(tmp_path, drafts)
    not_json, bad_card = events[1].seq, events[4].seq
    tamper(path, "UPDATE events SET body = '{\"v\": 1, \"type\": ' WHERE seq = ?", (not_json,))
    tamper(path, "UPDATE events SET body = replace(body, '\"4H\"', '\"4X\"') WHERE seq = ?", (bad_card,))
    problems = verify_journal(path).problems
    assert problems[2:4] == [chain_broken(not_json), f"seq {not_json}: stored text is not a valid event: "
                             "event body is not JSON: Input data was truncated"]
    assert problems[4:6] == [chain_broken(bad_card), f"seq {bad_card}: stored text is not a valid event: "
                             "card event: Expected `str` matching regex '^[2-9TJQKA][SHDC]$' - at `$.code`"]
    # the round is re-judged without the unreadable card: a hole where it was
    assert problems[6:] == [
        f"round 'R1': round.result at seq {events[-2].seq}: player has cards at indices [1], not 0..0"
    ]
