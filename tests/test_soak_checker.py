"""The soak's independent checker: each check passes on a sound run and fails on its own fault."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from journal_helpers import TickingClock, draft, tamper, write_rounds  # noqa: E402

from table_controller.client import Snapshot  # noqa: E402
from table_controller.errors import ConfigError  # noqa: E402
from table_controller.event_types import Event, parse_ts  # noqa: E402
from table_controller.journal import Journal  # noqa: E402
from table_controller.soak.checker import CHECKS, check_run  # noqa: E402
from table_controller.soak.options import parse_faults  # noqa: E402
from table_controller.soak.records import Draw, Fault, StreamRecord, TableRecord  # noqa: E402


def _ts(event: dict[str, Any]) -> float:
    return parse_ts(event.ts)


def _snapshot(seq: int) -> Snapshot:
    return Snapshot(table="T01", seq=seq, state=None, round=[], history=[], shoe=[])


def _drawn(card: dict[str, Any], **kw: Any) -> Draw:
    """The shoe's record of a journaled card: drawn just before the controller journaled it."""
    return Draw(card.code, False, card.round, _ts(card) - 0.01, count=getattr(card, "shoe_count", None), **kw)


def _four_cards(round_id: str, first: str, clock: TickingClock, first_count: int | None = None) -> list[dict[str, Any]]:
    """Card drafts of a two-card baccarat deal: ``first``, 2H, KD, 3C (shoe counts from
    ``first_count`` when given)."""
    counts = range(first_count, first_count + 4) if first_count is not None else [None] * 4
    return [
        draft("card", round_id, clock=clock, position=p, index=i, code=c, source="shoe",
              **({"shoe_count": n} if n is not None else {}))
        for (p, i, c), n in zip(
            (("player", 0, first), ("banker", 0, "2H"), ("player", 1, "KD"), ("banker", 1, "3C")),
            counts, strict=True,
        )
    ]


def _table(tmp_path: Path, rounds: int = 2) -> tuple[TableRecord, list[dict[str, Any]]]:
    path = tmp_path / "T01.sqlite"
    with Journal(path, table="T01", game="baccarat", variant="baccarat") as journal:
        events = write_rounds(journal, "baccarat", rounds)
    record = TableRecord("T01", "baccarat", str(path))
    for e in events:
        if e.type == "card":
            record.draws.append(_drawn(e))
    return record, events


def _stream(events: list[Event]) -> dict[str, dict[str, StreamRecord]]:
    """What a subscriber recorded: a snapshot, then the events."""
    return {"floor": {"T01": StreamRecord([_snapshot(0), *events])}}


def _failed(result: Any) -> set[str]:
    return {name for name, ok in result.checks.items() if not ok}


def test_a_sound_run_passes_every_check(tmp_path: Path) -> None:
    record, events = _table(tmp_path)
    result = check_run([record], _stream(events), {}, [])
    assert result.checks == {name: True for name in CHECKS}
    assert (result.counts["rounds"], result.counts["results"], result.counts["voided"]) == (2, 2, 0)
    assert result.counts["events_seen"] == len(events)


def test_a_card_the_shoe_drew_but_the_journal_lacks_fails_cards_accounted(tmp_path: Path) -> None:
    record, events = _table(tmp_path)
    record.draws.insert(3, Draw("AS", False, None, record.draws[3].at))
    assert _failed(check_run([record], _stream(events), {}, [])) == {"cards_accounted"}


def test_a_journal_card_no_shoe_drew_fails_cards_accounted(tmp_path: Path) -> None:
    record, events = _table(tmp_path)
    del record.draws[-1]
    assert _failed(check_run([record], _stream(events), {}, [])) == {"cards_accounted"}


def test_a_changed_event_breaks_the_hash_chain(tmp_path: Path) -> None:
    record, events = _table(tmp_path)
    tamper(
        Path(record.journal),
        "UPDATE events SET body = replace(body, '\"betting_seconds\":15', "
        "'\"betting_seconds\":16') WHERE seq = 1",
    )
    failed = _failed(check_run([record], _stream(events), {}, []))
    assert "journals_verify" in failed


def test_a_wrong_result_fails_the_rejudging(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    clock = TickingClock()
    with Journal(path, table="T01", game="baccarat", variant="baccarat") as journal:
        events = journal.append(
            [
                draft("round.start", "R1", clock=clock, variant="baccarat", betting_seconds=15),
                draft("table.state", "R1", clock=clock, state="dealing", reason=None),
                *_four_cards("R1", "9S", clock),
                draft(
                    "round.result",
                    "R1",
                    clock=clock,
                    hands={},
                    outcome={"winner": "banker"},
                    payouts={},
                ),
            ]
        )
    draws = [_drawn(e) for e in events if e.type == "card"]
    record = TableRecord("T01", "baccarat", str(path), draws=draws)
    result = check_run([record], _stream(events), {}, [])
    # The project's verify_journal sees it too; the soak's own re-judging must say why.
    assert _failed(result) == {"journals_verify", "results_rejudged"}
    assert result.problems["results_rejudged"] == [
        "T01: round R1: journal says {'hands': {}, 'outcome': {'winner': 'banker'}, 'payouts': {}}, rules say "
        "{'hands': {'player': {'cards': ['9S', 'KD'], 'class': 'natural9', 'points': 9}, 'banker': {'cards': ['2H', "
        "'3C'], 'class': '5', 'points': 5}}, 'outcome': {'winner': 'player', 'natural': True, 'player_pair': "
        "False, 'banker_pair': False}, 'payouts': {'player': '1', 'banker': '-1', 'tie': '-1', 'player_pair': "
        "'-1', 'banker_pair': '-1'}}"
    ]


def test_a_void_without_an_injected_cause_fails_and_with_one_passes(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    clock = TickingClock()
    with Journal(path, table="T01", game="baccarat", variant="baccarat") as journal:
        events = journal.append(
            [
                draft("round.start", "R1", clock=clock, variant="baccarat", betting_seconds=15),
                draft("table.state", "R1", clock=clock, state="dealing", reason=None),
                draft(
                    "alert",
                    "R1",
                    clock=clock,
                    kind="dropped-card",
                    severity="critical",
                    detail="dropped",
                ),
                draft(
                    "round.void",
                    "R1",
                    clock=clock,
                    reason="misdeal: dealer pressed card dropped",
                    refund=True,
                ),
                draft("table.state", None, clock=clock, state="idle", reason=None),
            ]
        )
    record = TableRecord("T01", "baccarat", str(path))
    assert _failed(check_run([record], _stream(events), {}, [])) == {"voids_and_pauses_explained"}
    record.faults.append(Fault("dropped", "T01", "R1", _ts(events[1])))
    assert _failed(check_run([record], _stream(events), {}, [])) == set()


def test_a_subscriber_that_missed_an_event_fails(tmp_path: Path) -> None:
    record, events = _table(tmp_path)
    streams = _stream(events[:5] + events[6:])
    assert _failed(check_run([record], streams, {}, [])) == {"subscribers_match_journals"}


def test_a_subscriber_that_saw_an_event_twice_fails(tmp_path: Path) -> None:
    record, events = _table(tmp_path)
    streams = _stream(events[:6] + events[5:])
    assert _failed(check_run([record], streams, {}, [])) == {"subscribers_match_journals"}


def test_a_resnapshot_is_fine_after_a_restart_but_not_without_one(tmp_path: Path) -> None:
    record, events = _table(tmp_path)
    streams = {
        "floor": {"T01": StreamRecord([_snapshot(0), *events[:5], _snapshot(8), *events[8:]])}
    }
    assert _failed(check_run([record], streams, {"T01": [1.0]}, [])) == set()
    assert _failed(check_run([record], streams, {}, [])) == {"subscribers_match_journals"}


def test_errors_of_the_run_fail_dealers_finished(tmp_path: Path) -> None:
    record, events = _table(tmp_path)
    record.dealer_error = "DealerStuck: no progress"
    assert _failed(check_run([record], _stream(events), {}, [])) == {"dealers_finished"}


def test_fault_specs() -> None:
    assert parse_faults("none") == {}
    assert parse_faults("drop=0.1,slow=3") == {"drop": 0.1, "slow": 3.0}
    assert set(parse_faults("all")) == {
        "corrupt",
        "drop",
        "dup",
        "garbage",
        "unplug",
        "dropped",
        "misdeal",
        "void",
        "lid",
        "blackout",
        "mismatch",
        "noread",
        "slow",
        "lost",
        "twice",
    }
    with pytest.raises(ConfigError, match="unknown fault 'fire'"):
        parse_faults("fire")
    with pytest.raises(ConfigError, match=r"drop=2: must be in 0\.\.1"):
        parse_faults("drop=2")


def test_a_misdealt_card_is_not_confused_with_the_same_code_in_the_next_round(
    tmp_path: Path,
) -> None:
    """Regression: eight decks hold eight 8S; the misdealt one must not take the next round's place."""
    from table_controller.rules import load_game
    from table_controller.rules.cards import parse_card

    path = tmp_path / "T01.sqlite"
    clock = TickingClock()
    deal, _ = load_game("baccarat").deal([parse_card(c) for c in ("8S", "2H", "KD", "3C")])
    with Journal(path, table="T01", game="baccarat", variant="baccarat") as journal:
        events = journal.append(
            [
                draft("round.start", "R1", clock=clock, variant="baccarat", betting_seconds=15),
                draft("table.state", "R1", clock=clock, state="dealing", reason=None),
                draft(
                    "card", "R1", clock=clock, position="player", index=0, code="9S", source="shoe"
                ),
                draft(
                    "alert", "R1", clock=clock, kind="lid-open", severity="critical", detail="lid"
                ),
                draft(
                    "table.state",
                    "R1",
                    clock=clock,
                    state="paused",
                    reason="lid",
                    cause="lid-open",
                    resume_to="dealing",
                    awaiting=None,
                ),
                draft(
                    "alert",
                    "R1",
                    clock=clock,
                    kind="wrong-order",
                    severity="critical",
                    detail="card 8S",
                ),
                draft(
                    "round.void",
                    "R1",
                    clock=clock,
                    reason="misdeal: card 8S drawn while the table was paused",
                    refund=True,
                ),
                draft("table.state", None, clock=clock, state="idle", reason=None),
                draft("round.start", "R2", clock=clock, variant="baccarat", betting_seconds=15),
                draft("table.state", "R2", clock=clock, state="dealing", reason=None),
                *_four_cards("R2", "8S", clock),
                draft("round.result", "R2", clock=clock, **deal.result().to_dict()),
            ]
        )
    cards = [e for e in events if e.type == "card"]
    wrong_order = next(e for e in events if e.type == "alert" and e.kind == "wrong-order")
    draws = [
        _drawn(cards[0]),
        Draw("8S", False, "R1", _ts(wrong_order) - 0.01, fault="misdeal"),
        *[_drawn(c) for c in cards[1:]],
    ]
    record = TableRecord(
        "T01", "baccarat", str(path), draws=draws,
        faults=[Fault("misdeal", "T01", "R1", _ts(wrong_order) - 0.02)],
    )
    result = check_run([record], _stream(events), {}, [])
    assert _failed(result) == set()
    assert result.counts["cards_in_voided_rounds"] == 1


def _late_card_journal(path: Path) -> list[dict[str, Any]]:
    """R1 voided before its 8C (count 22) arrived; R2 then dealt four cards (a natural)."""
    from table_controller.rules import load_game
    from table_controller.rules.cards import parse_card

    clock = TickingClock()
    deal, _ = load_game("baccarat").deal([parse_card(c) for c in ("9S", "2H", "KD", "3C")])
    with Journal(path, table="T01", game="baccarat", variant="baccarat") as journal:
        return journal.append(
            [
                draft("round.start", "R1", clock=clock, variant="baccarat", betting_seconds=15),
                draft("table.state", "R1", clock=clock, state="dealing", reason=None),
                draft("round.void", "R1", clock=clock, reason="supervisor voided after source-mismatch",
                      refund=True),
                draft("table.state", None, clock=clock, state="idle", reason=None),
                draft("round.start", "R2", clock=clock, variant="baccarat", betting_seconds=15),
                draft("table.state", "R2", clock=clock, state="dealing", reason=None),
                *_four_cards("R2", "9S", clock, first_count=23),
                draft("round.result", "R2", clock=clock, **deal.result().to_dict()),
            ]
        )


def test_cards_are_matched_by_the_shoes_count_and_the_round_by_time_not_by_the_dealers_label(
    tmp_path: Path,
) -> None:
    """Regression: the remote dealer labels a draw with the round it last saw, which under
    camera delays can be the previous one; the checker goes by count and journal times."""
    path = tmp_path / "T01.sqlite"
    events = _late_card_journal(path)
    r1_dealing = _ts(events[1])
    draws = [
        Draw("8C", False, "R1", r1_dealing + 0.01, fault="mismatch", count=22),
        *[
            Draw(e.code, False, "R1", _ts(e) - 0.01, count=e.shoe_count)  # stale label
            for e in events if e.type == "card"
        ],
    ]
    record = TableRecord(
        "T01", "baccarat", str(path), draws=draws,
        faults=[Fault("mismatch", "T01", "R1", r1_dealing + 0.01)],
    )
    result = check_run([record], _stream(events), {}, [])
    assert _failed(result) == set()
    assert result.counts["cards_in_voided_rounds"] == 1


def test_a_card_drawn_in_a_voided_round_but_dealt_into_the_next_one_fails(tmp_path: Path) -> None:
    """Regression: 8C left the shoe in R1 (voided before its frame came); the controller
    must not deal it into R2. Here the journal says it did: the checker must catch it."""
    path = tmp_path / "T01.sqlite"
    events = _late_card_journal(path)
    first = next(e for e in events if e.type == "card")
    draws = [Draw("9S", False, "R2", _ts(events[1]) + 0.01, count=23)]  # drawn during R1
    draws += [_drawn(e) for e in events if e.type == "card" and e is not first]
    record = TableRecord(
        "T01", "baccarat", str(path), draws=draws,
        faults=[Fault("mismatch", "T01", "R1", _ts(events[1]) + 0.01)],
    )
    result = check_run([record], _stream(events), {}, [])
    assert _failed(result) == {"cards_accounted"}
    assert result.problems["cards_accounted"] == [
        f"T01: card 9S drawn in round R1 is journaled in round R2 (seq {first.seq})"
    ]


def test_one_shoe_count_journaled_twice_fails(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    events = _late_card_journal(path)
    tamper(path, "UPDATE events SET body = replace(body, '\"shoe_count\":24', '\"shoe_count\":23')")
    events = [msgspec.structs.replace(e, shoe_count=23) if getattr(e, "shoe_count", None) == 24 else e
              for e in events]
    record = TableRecord("T01", "baccarat", str(path),
                         draws=[_drawn(e) for e in events if e.type == "card"])
    result = check_run([record], _stream(events), {}, [])
    assert "cards_accounted" in _failed(result)
    assert any("card 23 journaled 2 times" in p for p in result.problems["cards_accounted"])


# ---------------------------------------------------------------- line tables (a plain line reader)


def _dealt_round(round_id: str, codes: list[str], clock: TickingClock) -> list[dict[str, Any]]:
    """Drafts of one baccarat round dealt from ``codes`` as a line table journals it: no
    ``shoe_count`` (a line reader counts nothing), positions and result by the rules core."""
    from table_controller.rules import load_game
    from table_controller.rules.cards import CODES, parse_card

    deal, used = load_game("baccarat").deal([parse_card(c) for c in codes])
    assert used == len(codes), "the round takes every card given"
    return [
        draft("round.start", round_id, clock=clock, variant="baccarat", betting_seconds=15),
        draft("table.state", round_id, clock=clock, state="dealing", reason=None),
        *[
            draft("card", round_id, clock=clock, position=p, index=i, code=CODES[c], source="shoe")
            for p, i, c in deal.placed
        ],
        draft("round.result", round_id, clock=clock, **deal.result().to_dict()),
        draft("table.state", round_id, clock=clock, state="result", reason=None),
    ]


def _new_shoe(clock: TickingClock) -> dict[str, Any]:
    return draft("shoe", None, clock=clock, event="new", count=0, decks=8)


def _dropped_void(round_id: str, clock: TickingClock, first: str = "8S") -> list[dict[str, Any]]:
    """A round the dealer voided with *card dropped* after its first card (``first``)."""
    return [
        draft("round.start", round_id, clock=clock, variant="baccarat", betting_seconds=15),
        draft("table.state", round_id, clock=clock, state="dealing", reason=None),
        draft("card", round_id, clock=clock, position="player", index=0, code=first, source="shoe"),
        draft("alert", round_id, clock=clock, kind="dropped-card", severity="critical",
              detail="dealer pressed card dropped"),
        draft("round.void", round_id, clock=clock, reason="misdeal: dealer pressed card dropped",
              refund=True),
        draft("table.state", None, clock=clock, state="idle", reason=None),
    ]


def _line_record(path: Path, drafts: list[dict[str, Any]]) -> tuple[TableRecord, list[dict[str, Any]]]:
    """A line table's journal of ``drafts``, and the reader's record of every journaled card
    (each drawn just before it was journaled, counted from 1)."""
    with Journal(path, table="T01", game="baccarat", variant="baccarat") as journal:
        events = journal.append(drafts)
    record = TableRecord("T01", "baccarat", str(path), protocol="lines")
    n = 0
    for e in events:
        if e.type == "card":
            n += 1
            record.draws.append(Draw(e.code, False, e.round, _ts(e) - 0.01, count=n))
    record.device_stats = {"lines_sent": n, "lost": 0, "twice": 0, "garbage": 0}
    return record, events


def _with_faults(record: TableRecord, index: int, *faults: str) -> None:
    """The reader's simulator says these faults hit draw ``index``'s line."""
    from dataclasses import replace

    draw = record.draws[index]
    record.draws[index] = replace(draw, line_faults=faults)
    assert record.device_stats is not None
    for kind in faults:
        if kind in record.device_stats:
            record.device_stats[kind] += 1


def _lost_draw(record: TableRecord, code: str, at: float) -> None:
    record.draws.append(Draw(code, False, None, at, count=len(record.draws) + 1, line_faults=("lost",)))
    record.draws.sort(key=lambda d: d.at)
    assert record.device_stats is not None
    record.device_stats["lost"] += 1


def test_a_sound_line_table_passes_with_a_line_read_twice_and_a_lost_line_its_dealer_voided(
    tmp_path: Path,
) -> None:
    clock = TickingClock()
    record, events = _line_record(
        tmp_path / "T01.sqlite",
        [_new_shoe(clock), *_dealt_round("R1", ["9S", "2H", "KD", "3C"], clock), *_dropped_void("R2", clock)],
    )
    _with_faults(record, 1, "twice", "garbage")  # 2H sent twice after noise: taken once
    dropped = next(e for e in events if e.type == "alert")
    _lost_draw(record, "QD", _ts(dropped) - 0.2)  # its line never went out
    record.misdeal_calls.append(Fault("missing-card", "T01", "R2", _ts(dropped) - 0.05))
    result = check_run([record], _stream(events), {}, [])
    assert result.checks == {name: True for name in CHECKS}
    assert (result.counts["lost_lines"], result.counts["lines_read_twice"]) == (1, 1)
    assert result.counts["misdeals_called_for_missing_cards"] == 1
    # The same void without the dealer's call for the missing card has no cause.
    record.misdeal_calls.clear()
    assert _failed(check_run([record], _stream(events), {}, [])) == {"voids_and_pauses_explained"}


def test_a_line_read_twice_and_journaled_twice_fails(tmp_path: Path) -> None:
    clock = TickingClock()
    record, events = _line_record(
        tmp_path / "T01.sqlite", [_new_shoe(clock), *_dealt_round("R1", ["9S", "9S", "2H", "KD"], clock)]
    )
    del record.draws[1]  # the reader drew one 9S; its line went out twice
    _with_faults(record, 0, "twice")
    record.device_stats = {"lines_sent": 3, "lost": 0, "twice": 1, "garbage": 0}
    result = check_run([record], _stream(events), {}, [])
    assert _failed(result) == {"cards_accounted"}
    seqs = [e.seq for e in events if e.type == "card"][:2]
    assert result.problems["cards_accounted"] == [
        f"T01: card 9S read twice by the reader (one draw) is journaled twice (seq {seqs[0]}, {seqs[1]})"
    ]


def test_a_journaled_card_the_line_reader_never_drew_fails(tmp_path: Path) -> None:
    clock = TickingClock()
    record, events = _line_record(
        tmp_path / "T01.sqlite", [_new_shoe(clock), *_dealt_round("R1", ["9S", "2H", "KD", "3C"], clock)]
    )
    del record.draws[2]
    result = check_run([record], _stream(events), {}, [])
    assert _failed(result) == {"cards_accounted"}
    kd = next(e for e in events if getattr(e, "code", None) == "KD")
    assert result.problems["cards_accounted"] == [
        f"T01: journal card KD (seq {kd.seq}) was not drawn by the reader in round R1"
    ]


def test_line_cards_are_matched_in_the_order_the_reader_drew_them(tmp_path: Path) -> None:
    clock = TickingClock()
    record, events = _line_record(
        tmp_path / "T01.sqlite", [_new_shoe(clock), *_dealt_round("R1", ["9S", "2H", "KD", "3C"], clock)]
    )
    first, second = record.draws[0], record.draws[1]
    record.draws[0] = Draw(second.code, False, "R1", first.at, count=1)  # 2H came out first ...
    record.draws[1] = Draw(first.code, False, "R1", second.at, count=2)  # ... the journal says 9S
    assert _failed(check_run([record], _stream(events), {}, [])) == {"cards_accounted"}


def test_a_card_the_line_reader_sent_that_no_journal_has_fails_unless_its_line_was_lost(
    tmp_path: Path,
) -> None:
    clock = TickingClock()
    record, events = _line_record(
        tmp_path / "T01.sqlite", [_new_shoe(clock), *_dealt_round("R1", ["9S", "2H", "KD", "3C"], clock)]
    )
    at = record.draws[1].at + 0.05
    record.draws.insert(2, Draw("QD", False, None, at, count=99))
    result = check_run([record], _stream(events), {}, [])
    assert _failed(result) == {"cards_accounted"}
    assert result.problems["cards_accounted"] == [
        (
            "T01: card QD (count 99, round R1) left the reader (line sent) and is not in the "
            "journal; its round was not voided"
        )
    ]
    _with_faults(record, 2, "lost")  # the reader's simulator says it never sent the line
    assert _failed(check_run([record], _stream(events), {}, [])) == set()


def test_a_line_card_missing_from_a_voided_round_needs_a_kill_that_lost_it(tmp_path: Path) -> None:
    """Without retransmission a card is lost with a killed controller (read but not journaled,
    or sent while it was down); the dealer then voids the round. Without a kill the
    controller lost a card it was sent: that fails, voided round or not."""
    clock = TickingClock()
    record, events = _line_record(tmp_path / "T01.sqlite", [_new_shoe(clock), *_dropped_void("R1", clock)])
    dropped = next(e for e in events if e.type == "alert")
    record.draws.append(Draw("QD", False, "R1", _ts(dropped) - 0.2, count=2))
    record.misdeal_calls.append(Fault("missing-card", "T01", "R1", _ts(dropped) - 0.05))
    result = check_run([record], _stream(events), {}, [])
    assert _failed(result) == {"cards_accounted"}
    assert "no kill or journaled sighting explains the loss" in result.problems["cards_accounted"][0]
    kill = _ts(dropped) - 0.5
    result = check_run([record], _stream(events), {"T01": [kill]}, [])
    assert _failed(result) == set()
    assert result.counts["cards_in_voided_rounds"] == 1


def test_a_line_table_card_with_a_shoe_count_fails(tmp_path: Path) -> None:
    clock = TickingClock()
    record, events = _line_record(
        tmp_path / "T01.sqlite", [_new_shoe(clock), *_dealt_round("R1", ["9S", "2H", "KD", "3C"], clock)]
    )
    tamper(Path(record.journal), "UPDATE events SET body = replace(body, '\"source\":\"shoe\"', "
           "'\"source\":\"shoe\",\"shoe_count\":3') WHERE body LIKE '%\"code\":\"KD\"%'")
    events = [msgspec.structs.replace(e, shoe_count=3) if getattr(e, "code", None) == "KD" else e
              for e in events]
    result = check_run([record], _stream(events), {}, [])
    assert "cards_accounted" in _failed(result)
    assert any("a line reader counts nothing" in p for p in result.problems["cards_accounted"])


def test_the_line_readers_fault_counters_must_match_the_faults_its_replies_named(tmp_path: Path) -> None:
    clock = TickingClock()
    record, events = _line_record(
        tmp_path / "T01.sqlite", [_new_shoe(clock), *_dealt_round("R1", ["9S", "2H", "KD", "3C"], clock)]
    )
    assert record.device_stats is not None
    record.device_stats["twice"] = 1  # a double read the replies did not name
    result = check_run([record], _stream(events), {}, [])
    assert _failed(result) == {"cards_accounted"}
    assert "the reader counted line faults" in result.problems["cards_accounted"][0]


def test_a_card_read_from_line_noise_is_told_apart_only_right_before_a_noisy_line(tmp_path: Path) -> None:
    """Noise before a card's line can read as a card (a line reader cannot tell): the round
    then completes a card early and the dealer's last card is not called for."""
    clock = TickingClock()
    record, events = _line_record(
        tmp_path / "T01.sqlite", [_new_shoe(clock), *_dealt_round("R1", ["9S", "5D", "2H", "4C"], clock)]
    )
    del record.draws[1]  # 5D came from the noise before 2H's line
    record.device_stats = {"lines_sent": 3, "lost": 0, "twice": 0, "garbage": 0}
    last = record.draws[-1].at
    record.draws.append(Draw("3C", False, "R1", last + 0.3, count=4))  # not called for: not journaled
    assert _failed(check_run([record], _stream(events), {}, [])) == {"cards_accounted"}
    _with_faults(record, 1, "garbage")
    result = check_run([record], _stream(events), {}, [])
    assert _failed(result) == set()
    assert result.counts["cards_from_line_noise"] == 1


def test_a_row_that_is_not_a_typed_event_fails_journals_verify_and_the_check_goes_on(tmp_path: Path) -> None:
    record, events = _table(tmp_path)
    seq = next(e.seq for e in events if e.type == "card")
    tamper(Path(record.journal), "UPDATE events SET body = replace(body, '\"source\":\"shoe\"', "
           "'\"source\":\"elsewhere\"') WHERE seq = ?", (seq,))
    result = check_run([record], _stream(events), {}, [])
    assert result.problems["journals_verify"][:2] == [
        f"T01: seq {seq}: hash chain broken",
        f"T01: seq {seq}: the stored text is not a valid event: card event: Invalid enum value "
        "'elsewhere' - at `$.source`",
    ]
    # the card is left out of the journal the other checks see: the round lacks it
    assert result.counts["rounds"] == 2
    assert "results_rejudged" in _failed(result)


def test_a_card_where_the_rules_did_not_call_for_it_fails_positions_follow_rules(tmp_path: Path) -> None:
    from table_controller.rules import load_game
    from table_controller.rules.cards import parse_card

    path = tmp_path / "T01.sqlite"
    clock = TickingClock()
    deal, _ = load_game("baccarat").deal([parse_card(c) for c in ("9S", "2H", "KD", "3C")])
    cards = _four_cards("R1", "9S", clock)
    move = msgspec.structs.replace
    cards[1] = move(cards[1], index=0, position="banker")
    cards[2], cards[3] = move(cards[2], position="banker"), move(cards[3], position="player")  # KD, 3C swapped
    with Journal(path, table="T01", game="baccarat", variant="baccarat") as journal:
        events = journal.append(
            [
                draft("round.start", "R1", clock=clock, variant="baccarat", betting_seconds=15),
                draft("table.state", "R1", clock=clock, state="dealing", reason=None),
                *cards,
                draft("round.result", "R1", clock=clock, **deal.result().to_dict()),
            ]
        )
    record = TableRecord("T01", "baccarat", str(path), draws=[_drawn(e) for e in events if e.type == "card"])
    result = check_run([record], _stream(events), {}, [])
    assert result.problems["positions_follow_rules"] == [
        f"T01: seq {events[4].seq}: card KD at banker[1], rules say player[1]",
        f"T01: seq {events[5].seq}: card 3C at player[1], rules say banker[1]",
    ]


def test_a_wrong_position_void_is_explained_only_by_a_kill_shortly_before_it(tmp_path: Path) -> None:
    """A killed controller's simulated camera is shown the layout again by the rig, which can put
    back a card a no-read or a blackout left behind: a wrong-position void within the link
    window after a kill is the kill's; without a kill it is a finding."""
    path = tmp_path / "T01.sqlite"
    clock = TickingClock()
    with Journal(path, table="T01", game="baccarat", variant="baccarat") as journal:
        events = journal.append([
            draft("round.start", "R1", clock=clock, variant="baccarat", betting_seconds=15),
            draft("table.state", "R1", clock=clock, state="dealing", reason=None),
            draft("alert", "R1", clock=clock, kind="wrong-position", severity="critical",
                  detail="card 2C laid at player[1], the rules called for banker[0]"),
            draft("round.void", "R1", clock=clock,
                  reason="misdeal: card 2C laid at player[1], the rules called for banker[0]", refund=True),
            draft("table.state", None, clock=clock, state="idle", reason=None),
        ])
    record = TableRecord("T01", "baccarat", str(path))
    assert _failed(check_run([record], _stream(events), {}, [])) == {"voids_and_pauses_explained"}
    long_before = _ts(events[3]) - 120
    assert _failed(check_run([record], _stream(events), {"T01": [long_before]}, [])) == {"voids_and_pauses_explained"}
    assert _failed(check_run([record], _stream(events), {"T01": [_ts(events[3]) - 3]}, [])) == set()
