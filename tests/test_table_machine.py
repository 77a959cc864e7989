"""The pure table state machine: rounds, every integrity rule, the shoe procedure, restore."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from table_controller.event_types import CardDealt, Event, as_dict, numbered, stamped
from table_controller.events import COMMON_FIELDS
from table_controller.rules import load_game
from table_controller.table import IllegalInput, TableMachine
from table_controller.table import inputs as i


def payload(event: Event) -> dict[str, Any]:
    """An event's own fields as JSON values (what events.md lists per type)."""
    return {k: v for k, v in as_dict(event).items() if k not in COMMON_FIELDS}


class Table:
    """Drives a machine with a fake clock and records every event; steps read as (type, payload)."""

    def __init__(self, variant: str = "baccarat", **kw: Any) -> None:
        self.machine = TableMachine(load_game(variant), table="T01", betting_seconds=10, **kw)
        self.now = 1_800_000_000.0
        self.log: list[Event] = []

    def do(self, event: i.TableInput, advance: float = 0.1) -> list[tuple[str, dict[str, Any]]]:
        self.now += advance
        events = self.machine.handle(event, self.now)
        self.log.extend(stamped(e, table="T01", game="x", ts=self.now) for e in events)
        return [(e.type, payload(e)) for e in events]

    def cards(self, *codes: str) -> list[tuple[str, dict[str, Any]]]:
        out = []
        for code in codes:
            out += self.do(i.CardPresented(code))
        return out

    def start_dealing(self) -> None:
        self.do(i.StartRound())
        self.do(i.CloseBetting())
        assert self.machine.state == "dealing"

    def journal(self) -> list[Event]:
        """The log as journal events (for restore)."""
        return [numbered(e, n) for n, e in enumerate(self.log, 1)]


def types(steps: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [t for t, _ in steps]


def test_a_baccarat_round_goes_betting_dealing_result_idle() -> None:
    t = Table(result_seconds=3)
    assert types(t.do(i.StartRound())) == ["round.start", "table.state"]
    assert t.machine.state == "betting" and t.machine.round_id == "T01-000001"
    assert types(t.do(i.CloseBetting())) == ["betting.closed", "table.state"]
    assert t.machine.gate_should_be_open
    steps = t.cards("4H", "KS", "3D", "2C", "9H")
    cards = [(p["position"], p["index"], p["code"]) for k, p in steps if k == "card"]
    assert cards == [("player", 0, "4H"), ("banker", 0, "KS"), ("player", 1, "3D"),
                     ("banker", 1, "2C"), ("banker", 2, "9H")]
    result = dict(steps)["round.result"]
    assert result["outcome"]["winner"] == "player" and result["payouts"]["player"] == "1"
    assert t.machine.state == "result" and not t.machine.gate_should_be_open
    assert t.do(i.Tick(), advance=1) == []
    assert t.do(i.Tick(), advance=3) == [("table.state", {"state": "idle", "reason": None})]


def test_betting_closes_by_itself_when_the_countdown_ends() -> None:
    t = Table()
    t.do(i.StartRound())
    assert t.do(i.Tick(), advance=9) == []
    assert types(t.do(i.Tick(), advance=1.5)) == ["betting.closed", "table.state"]


def test_start_round_is_rejected_while_dealing() -> None:
    t = Table()
    t.start_dealing()
    with pytest.raises(IllegalInput, match="table is dealing"):
        t.do(i.StartRound())


def test_card_before_betting_closed_is_an_exposed_card_and_voids() -> None:
    t = Table()
    t.do(i.StartRound())
    steps = t.do(i.CardPresented("AS"))
    assert types(steps) == ["alert", "round.void", "table.state"]
    assert steps[0][1]["kind"] == "exposed-card" and steps[1][1]["refund"] is True
    assert t.machine.state == "idle"


def test_dropped_card_voids_the_round_with_refund() -> None:
    t = Table("teen-patti-2020")
    t.start_dealing()
    t.cards("AS", "KD")
    steps = t.do(i.CardDropped())
    assert [p.get("kind") for _, p in steps] == ["dropped-card", None, None]
    assert steps[1] == ("round.void", {"reason": "misdeal: dealer pressed card dropped", "refund": True})


def test_card_outside_a_round_is_an_alert_not_a_void() -> None:
    t = Table()
    steps = t.do(i.CardPresented("AS"))
    assert steps == [("alert", {"kind": "wrong-order", "severity": "warning",
                                "detail": "card AS drawn outside a round"})]


def test_no_read_pauses_and_supervisor_confirms_the_card_by_hand() -> None:
    t = Table("teen-patti-2020")
    t.start_dealing()
    t.cards("AS")
    steps = t.do(i.NoRead())
    assert steps[0][1]["kind"] == "no-read"
    assert steps[1][1]["state"] == "paused" and steps[1][1]["awaiting"] == "card"
    assert not t.machine.gate_should_be_open
    with pytest.raises(IllegalInput, match="needs the confirmed card"):
        t.do(i.SupervisorResume(by="sup1"))
    steps = t.do(i.SupervisorResume(by="sup1", card="KD"))
    assert steps[0] == ("table.state", {"state": "dealing", "reason": "resumed by sup1", "by": "sup1"})
    assert steps[1] == ("card", {"position": "b", "index": 0, "code": "KD", "source": "manual"})


def test_duplicate_card_in_single_deck_round_pauses_and_is_not_placed() -> None:
    t = Table("three-pictures")
    t.start_dealing()
    t.cards("AS")
    steps = t.do(i.CardPresented("AS"))
    assert types(steps) == ["alert", "table.state"]
    assert steps[0][1]["kind"] == "duplicate-card"
    assert t.machine.deal is not None and t.machine.deal.dealt == 1
    with pytest.raises(IllegalInput, match="already been dealt"):
        t.do(i.SupervisorResume(by="sup", card="AS"))
    assert types(t.do(i.SupervisorVoid(by="sup"))) == ["round.void", "table.state"]


def test_foreign_card_pauses() -> None:
    t = Table()
    t.start_dealing()
    steps = t.do(i.CardPresented("JK"))
    assert steps[0][1] == {"kind": "foreign-card", "severity": "critical",
                           "detail": "card 'JK' is not in the deck"}
    assert t.machine.state == "paused"


def test_ninth_copy_of_a_card_in_an_eight_deck_shoe_is_a_duplicate() -> None:
    t = Table()
    t.start_dealing()
    for _ in range(8):
        t.machine.audit.add(0)  # eight aces of spades already out of this shoe
    assert t.do(i.CardPresented("AS"))[0][1]["kind"] == "duplicate-card"


def test_card_while_paused_for_lid_is_a_misdeal() -> None:
    t = Table()
    t.start_dealing()
    t.do(i.LidChanged(True))
    assert t.machine.pause is not None and t.machine.pause.cause == "lid-open"
    steps = t.do(i.CardPresented("5C"))
    assert types(steps) == ["alert", "round.void", "table.state"]
    assert steps[0][1]["kind"] == "wrong-order"


def test_link_down_pauses_and_link_back_resumes_without_losing_cards() -> None:
    t = Table()
    t.start_dealing()
    t.cards("4H")
    steps = t.do(i.LinkChanged(False, "no frame for 2 s"))
    assert [p.get("kind") for _, p in steps] == ["shoe-link-down", None]
    t.cards("KS")  # drawn before the outage was noticed: still in order
    assert t.do(i.LinkChanged(True)) == [
        ("table.state", {"state": "dealing", "reason": "shoe link restored"})
    ]
    assert t.machine.deal is not None and t.machine.deal.hands["banker"] == [48]


def test_shoe_restart_mid_round_pauses_and_supervisor_resumes() -> None:
    t = Table()
    t.start_dealing()
    assert t.do(i.ShoeRestarted())[0][1]["kind"] == "device-fault"
    assert t.do(i.SupervisorResume(by="sup"))[0][1]["state"] == "dealing"


def test_void_request_waits_for_the_supervisor() -> None:
    t = Table()
    t.start_dealing()
    steps = t.do(i.VoidRequest())
    assert steps == [("table.state", {"state": "paused", "reason": "void requested by dealer",
                                      "cause": "void-request", "resume_to": "dealing", "awaiting": None})]
    assert t.do(i.SupervisorVoid(by="sup", reason="dealer asked"))[0] == (
        "round.void", {"reason": "dealer asked", "refund": True, "by": "sup"}
    )


def test_new_shoe_burns_the_shown_cards_value() -> None:
    t = Table()
    t.do(i.ShoeNew(8))
    assert t.machine.state == "dealing" and t.machine.burning
    steps = t.cards("3H", "KC", "2D", "9S")
    burns = [(p["position"], p["index"], p["code"]) for k, p in steps if k == "card"]
    assert burns == [("burn", 0, "3H"), ("burn", 1, "KC"), ("burn", 2, "2D"), ("burn", 3, "9S")]
    assert t.machine.state == "idle" and not t.machine.burning


def test_a_picture_burns_ten() -> None:
    t = Table()
    t.do(i.ShoeNew(8))
    t.cards("QH", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC")
    assert t.machine.burning
    t.cards("JC")
    assert not t.machine.burning


def test_cut_card_finishes_the_round_plays_one_more_then_closes() -> None:
    t = Table(result_seconds=0)
    t.start_dealing()
    t.cards("4H", "KS")
    t.do(i.ShoeCut(400))
    t.cards("3D", "2C", "9H")
    t.do(i.Tick())
    assert t.machine.state == "idle"
    t.start_dealing()
    t.cards("9H", "9D", "KH", "KD")  # natural 9
    t.do(i.Tick())
    assert t.machine.state == "closed"
    with pytest.raises(IllegalInput, match="closed"):
        t.do(i.StartRound())
    t.do(i.ShoeNew(8))
    assert t.machine.burning


def test_three_face_first_card_then_deal_from_the_named_seat() -> None:
    t = Table("three-face")
    t.start_dealing()
    steps = t.cards("7S", "AS", "2S", "3S", "4S")
    positions = [p["position"] for k, p in steps if k == "card"]
    assert positions == ["first", "player2", "player3", "banker", "player1"]


def test_restore_from_journal_rebuilds_a_round_in_progress() -> None:
    t = Table("teen-patti-2020")
    t.start_dealing()
    t.cards("AS", "KD", "QH")
    restored = TableMachine(load_game("teen-patti-2020"), table="T01", betting_seconds=10)
    restored.restore(t.journal())
    assert restored.state == "dealing" and restored.round_id == "T01-000001"
    assert restored.next_position == "b"
    drafts = restored.handle(i.CardPresented("2C"), t.now)
    assert isinstance(drafts[0], CardDealt) and (drafts[0].position, drafts[0].index) == ("b", 1)


def test_restore_rejects_a_journal_that_breaks_the_dealing_plan() -> None:
    t = Table("teen-patti-2020")
    t.start_dealing()
    t.cards("AS")
    events = t.journal()
    events[-1] = msgspec.structs.replace(events[-1], position="b")
    restored = TableMachine(load_game("teen-patti-2020"), table="T01")
    with pytest.raises(Exception, match="does not follow the dealing plan"):
        restored.restore(events)


def test_result_is_settled_once_and_round_numbers_continue_after_restore() -> None:
    t = Table("teen-patti-2020", result_seconds=0)
    t.start_dealing()
    t.cards("AS", "KD", "QH", "2C", "3D", "4S")
    assert [e.type for e in t.log].count("round.result") == 1
    restored = TableMachine(load_game("teen-patti-2020"), table="T01", result_seconds=0)
    restored.restore(t.journal())
    assert restored.state == "result" and restored.round_no == 1
    with pytest.raises(IllegalInput):
        restored.handle(i.SupervisorVoid(by="x"), t.now)  # nothing left to settle or void
    restored.handle(i.Tick(), t.now + 1)
    drafts = restored.handle(i.StartRound(), t.now + 2)
    assert drafts[0].round == "T01-000002"


def test_a_shoe_claiming_another_deck_count_is_refused_until_a_supervisor_accepts_it() -> None:
    t = Table()
    steps = t.do(i.ShoeNew(999999999))
    shoe = [p for k, p in steps if k == "shoe"][0]
    assert shoe["decks"] == 8 and shoe["claimed_decks"] == 999999999 and shoe["refused"] is True
    alerts = [p for k, p in steps if k == "alert"]
    assert alerts[0]["kind"] == "device-fault" and alerts[0]["severity"] == "critical"
    assert "reports 999999999 decks but baccarat plays 8" in alerts[0]["detail"]
    assert t.machine.state == "closed" and t.machine.shoe_refused
    with pytest.raises(IllegalInput, match="table is closed"):
        t.do(i.StartRound())
    # A restarted controller is still refused.
    again = TableMachine(load_game("baccarat"), table="T01")
    again.restore(t.journal())
    assert again.state == "closed" and again.shoe_refused
    t.do(i.SupervisorResume("sup1"))
    assert t.machine.state == "dealing" and t.machine.burning and not t.machine.shoe_refused
    assert t.machine.audit.decks == 8  # the variant's count, whatever the device said


def test_a_refused_shoe_is_cleared_by_loading_a_shoe_of_the_right_size() -> None:
    t = Table("three-pictures")
    t.do(i.ShoeNew(2))
    assert t.machine.state == "closed"
    t.do(i.ShoeNew(t.machine.game.decks))
    assert t.machine.state == "idle" and not t.machine.shoe_refused


def test_a_card_count_that_goes_backwards_within_one_shoe_is_an_alert() -> None:
    t = Table()
    t.start_dealing()
    t.do(i.CardPresented("4H", shoe_count=17))
    steps = t.do(i.CardPresented("KS", shoe_count=12))
    alerts = [p for k, p in steps if k == "alert"]
    assert alerts == [{"kind": "device-fault", "severity": "critical",
                       "detail": "the shoe's count went from 17 to 12 (card KS) within one shoe"}]
    assert [k for k, _ in steps].count("card") == 1  # the card itself is still dealt
    t.do(i.ShoeNew(8))  # a new shoe: its count restarts
    assert t.machine.burning
    assert [k for k, _ in t.do(i.CardPresented("4H", shoe_count=1))] == ["card"]


def test_a_supervisors_repeated_new_shoe_with_no_card_since_is_the_same_shoe() -> None:
    """`supervise new-shoe` retried after a lost reply must not be a second shoe (issue 12)."""
    t = Table("three-pictures")
    decks = t.machine.game.decks
    assert [k for k, _ in t.do(i.ShoeNew(decks, announced_by="sup"))] == ["shoe"]
    assert t.do(i.ShoeNew(decks, announced_by="sup")) == []  # the retry: nothing
    restored = TableMachine(load_game("three-pictures"), table="T01")
    restored.restore(t.journal())
    assert restored.fresh_shoe
    t.start_dealing()
    t.do(i.CardPresented("4H"))
    t.do(i.SupervisorVoid("sup"))
    assert "shoe" in [k for k, _ in t.do(i.ShoeNew(decks, announced_by="sup"))]  # a new shoe now
    assert "shoe" in [k for k, _ in t.do(i.ShoeNew(decks))]  # the device's own NEWSHOE always counts
