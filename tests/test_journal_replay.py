"""The one replayer and re-judger of journaled rounds (table_controller.journal.replay)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
from journal_helpers import TickingClock, round_drafts

from table_controller.event_types import CardDealt, Event, RoundResult, numbered
from table_controller.journal.replay import (
    AfterComplete,
    CardAfterSettlement,
    LooseCard,
    Misplaced,
    RoundReplayer,
    RoundSettled,
    RoundStartedAgain,
    SeqCard,
    SettledAgain,
    rejudge,
)
from table_controller.rules import load_game
from table_controller.rules.cards import parse_cards

BACCARAT = load_game("baccarat")
#: Player 4H 3D (7) against banker KS 2C 9H (1): player wins.
PLAYER_WINS = parse_cards(["4H", "KS", "3D", "2C", "9H", "5S"])


def typed(drafts: list[dict[str, Any]], first_seq: int = 1) -> list[Event]:
    return [numbered(d, first_seq + n) for n, d in enumerate(drafts)]


def one_round(round_id: str = "R1", clock: TickingClock | None = None) -> list[dict[str, Any]]:
    drafts, _ = round_drafts(BACCARAT, PLAYER_WINS, round_id, clock=clock or TickingClock())
    return drafts


def cards_and_result(events: list[Event]) -> tuple[list[SeqCard], RoundResult]:
    cards = [SeqCard(e.seq, e) for e in events if isinstance(e, CardDealt)]
    [result] = [e for e in events if isinstance(e, RoundResult)]
    return cards, result


def test_a_round_is_gathered_and_settled_once_with_its_cards() -> None:
    events = typed(one_round())
    replayer = RoundReplayer()
    found = [f for e in events for f in replayer.add(e.seq, e)]
    [settled] = found
    assert isinstance(settled, RoundSettled) and settled.seq == 10
    assert [(c.seq, c.card.code) for c in settled.round.cards] == [
        (5, "4H"), (6, "KS"), (7, "3D"), (8, "2C"), (9, "9H")]
    assert (settled.round.start_seq, replayer.rounds, replayer.unsettled()) == (1, 1, [])


def test_a_sound_round_rejudges_without_a_difference() -> None:
    cards, result = cards_and_result(typed(one_round()))
    found = rejudge(BACCARAT, cards, result)
    assert (found.plan, found.is_complete, found.hand_problems, found.differences) == ((), True, (), ())
    assert found.computed == found.journaled
    assert found.computed is not None and found.computed["outcome"]["winner"] == "player"


def test_a_changed_payout_is_named_as_the_difference() -> None:
    drafts = one_round()
    drafts[-2].payouts["player"] = "2"
    cards, result = cards_and_result(typed(drafts))
    assert rejudge(BACCARAT, cards, result).differences == (
        'payouts.player is "2" in the journal, the rules core computes "1"',)


def test_cards_off_the_plan_and_after_the_deal_are_plan_problems() -> None:
    drafts = one_round()
    swap = msgspec.structs.replace
    drafts[4], drafts[5] = swap(drafts[4], position="banker"), swap(drafts[5], position="player")
    extra = msgspec.structs.replace(drafts[8], code="5S", index=3)
    cards, _ = cards_and_result(typed(drafts[:9] + [extra] + drafts[9:]))
    found = rejudge(BACCARAT, cards)
    assert found.plan == (
        Misplaced(cards[0], ("player", 0)), Misplaced(cards[1], ("banker", 0)), AfterComplete(cards[5]))
    assert (found.is_complete, found.computed) == (True, None)


def test_an_incomplete_deal_says_where_the_next_card_goes() -> None:
    cards, _ = cards_and_result(typed(one_round()))
    found = rejudge(BACCARAT, cards[:3])
    assert (found.plan, found.dealt, found.next_position, found.is_complete) == ((), 3, "banker", False)


def test_hands_with_a_hole_are_not_judged() -> None:
    drafts = one_round()
    del drafts[4]  # 4H, player[0]
    cards, result = cards_and_result(typed(drafts))
    found = rejudge(BACCARAT, cards, result)
    assert found.hand_problems == ("player has cards at indices [1], not 0..0",)
    assert (found.hands, found.computed) == (None, None)


def test_a_second_start_a_second_settlement_and_late_and_loose_cards_are_found() -> None:
    clock = TickingClock()
    r1 = one_round("R1", clock)
    loose = msgspec.structs.replace(r1[4], round=None)
    events = typed(r1 + [r1[0], r1[4], r1[-2], loose, msgspec.structs.replace(loose, position="burn")])
    replayer = RoundReplayer()
    found = [f for e in events for f in replayer.add(e.seq, e)]
    assert [type(f) for f in found] == [
        RoundSettled, RoundStartedAgain, CardAfterSettlement, SettledAgain, LooseCard]
    again, late, twice, loose = found[1:]
    assert isinstance(again, RoundStartedAgain) and (again.round_id, again.seq) == ("R1", 12)
    assert isinstance(late, CardAfterSettlement) and (late.card.seq, late.settled_seq) == (13, 10)
    assert isinstance(twice, SettledAgain) and (twice.first_seq, twice.seq) == (10, 14)
    assert isinstance(loose, LooseCard) and loose.card.seq == 15


def test_an_unsettled_round_is_left_open_and_the_last_named() -> None:
    clock = TickingClock()
    events = typed(one_round("R1", clock)[:6] + one_round("R2", clock)[:2])
    replayer = RoundReplayer()
    assert [f for e in events for f in replayer.add(e.seq, e)] == []
    assert [r.round_id for r in replayer.unsettled()] == ["R1", "R2"]
    assert replayer.last_round == "R2"


def test_a_round_started_twice_before_its_settlement_is_found() -> None:
    r1 = one_round()
    events = typed(r1[:5] + [r1[0]])
    replayer = RoundReplayer()
    assert [f for e in events for f in replayer.add(e.seq, e)] == [RoundStartedAgain("R1", 6)]


def test_a_card_code_that_is_no_card_is_a_finding_not_an_error() -> None:
    import msgspec

    cards, result = cards_and_result(typed(one_round()))
    cards[0] = SeqCard(cards[0].seq, msgspec.structs.replace(cards[0].card, code="ZZ"))  # built, not decoded
    found = rejudge(BACCARAT, cards, result)
    assert found.hand_problems == (
        "card event at seq 5 has unknown code 'ZZ'", "player has cards at indices [1], not 0..0")
    assert (found.hands, found.dealt) == (None, 4)


def test_chained_rounds_are_what_a_journal_holds_for_the_same_rounds(tmp_path: Path) -> None:
    """The benchmarks' journal-less studio makes exactly the rows a table's journal would."""
    from journal_helpers import write_rounds

    from table_controller.journal import Journal
    from table_controller.sim.journal_rounds import chained_rounds

    with Journal(tmp_path / "j.sqlite", table="T01", game="baccarat", variant="baccarat") as journal:
        write_rounds(journal, rounds=4, seed=11)
        stored = [(r.seq, r.body, r.hash) for r in journal.records()]
    assert list(chained_rounds("T01", 4, seed=11)) == stored
