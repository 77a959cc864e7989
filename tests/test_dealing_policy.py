"""The one dealing policy of the simulated and the soak's dealers, against a fake table link.

No controller, no threads: the fake link answers ``status`` with what the test says and
hands out the events the test queued; the fake shoe gives cards from a list.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from table_controller.client import Snapshot
from table_controller.event_types import (
    Alert,
    CardDealt,
    Heartbeat,
    RoundStarted,
    RoundVoided,
    ShoeChanged,
    TableStateChanged,
)
from table_controller.event_types import TableStatus as SnapshotState
from table_controller.rules.registry import load_game
from table_controller.sim.dealing import (
    DealerTimeout,
    DealingPolicy,
    TableItem,
    TableStatus,
)
from table_controller.sim.table import SimOptions, SimulatedTable, dealer_betting_seconds
from table_controller.soak.dealer import ControlLink


class FakeLink:
    """A table that answers with ``self.table`` and yields the events queued in ``self.events``."""

    def __init__(self, table: TableStatus | None, *, new_shoe_answers: list[bool | None] | None = None) -> None:
        self.table = table
        self.events: list[TableItem] = []
        self.calls: list[tuple[Any, ...]] = []
        self.waits: list[float] = []
        self.new_shoe_answers = new_shoe_answers or [True]
        self.resume_answers: list[bool] = []

    def status(self) -> TableStatus | None:
        return self.table

    def press(self, button: str) -> None:
        self.calls.append(("press", button))

    def resume(self, card: str | None = None) -> bool | None:
        self.calls.append(("resume", card))
        return self.resume_answers.pop(0) if self.resume_answers else True

    def void(self, reason: str) -> bool | None:
        self.calls.append(("void", reason))
        return True

    def new_shoe(self) -> bool | None:
        self.calls.append(("new-shoe",))
        return self.new_shoe_answers.pop(0)

    def lay(self, slot: str | None, code: str) -> None:
        self.calls.append(("lay", slot, code))

    def clear(self) -> None:
        self.calls.append(("clear",))

    def dark(self, on: bool) -> bool:
        self.calls.append(("dark", on))
        return True

    def wait_for(self, predicate: Callable[[TableItem], bool], timeout: float) -> TableItem | None:
        self.waits.append(timeout)
        while self.events:
            item = self.events.pop(0)
            if predicate(item):
                return item
        return None

    def drain(self) -> None:
        """The queued events are what the next action causes: kept."""


class FakeShoe:
    """A shoe that gives ``cards`` in order while its gate is open."""

    def __init__(self, cards: list[str] | None = None, *, smart: bool = True, left: int | None = None) -> None:
        self.cards = list(cards or [])
        self.smart = smart
        self.left = left
        self.gate_open = True
        self.unread: list[str] = []
        self.loads: list[tuple[int, int | None]] = []
        self.drawn: list[str] = []
        self.lid: list[bool] = []

    @property
    def announces_new_shoe(self) -> bool:
        return self.smart

    @property
    def exactly_once(self) -> bool:
        return self.smart

    def wait_gate_open(self, timeout: float) -> bool:
        return self.gate_open

    def draw(self, round_id: str | None, fault: str | None = None) -> str | None:
        if not self.gate_open or not self.cards:
            return None
        self.drawn.append(self.cards.pop(0))
        return self.drawn[-1]

    def draw_unread(self, round_id: str | None) -> str | None:
        code = self.draw(round_id)
        if code is not None:
            self.unread.append(code)
        return code

    def last_unread(self) -> str | None:
        return self.unread[-1] if self.unread else None

    def set_lid(self, is_open: bool) -> None:
        self.lid.append(is_open)

    def unplug(self, seconds: float) -> None:
        """Not used here."""

    def load(self, decks: int, cut_at: int | None) -> bool:
        self.loads.append((decks, cut_at))
        return self.smart is False  # a smart shoe's table says so with its ``shoe`` event

    def cards_left(self) -> int | None:
        return None if self.smart else self.left


def policy(variant: str, link: FakeLink, shoe: FakeShoe, **options: Any) -> DealingPolicy:
    return DealingPolicy(load_game(variant), link, shoe, rng=random.Random(1), **options)


def paused(cause: str, *, awaiting: bool = False, shoe_card: str | None = None) -> TableStatus:
    return TableStatus(state="paused", round="T01-000001", next_position="player", cause=cause,
                       awaiting="card" if awaiting else None, shoe_card=shoe_card)


# ---------------------------------------------------------------------- pauses
def test_a_no_read_pause_is_resumed_with_the_unread_card() -> None:
    shoe = FakeShoe()
    shoe.unread.append("9H")
    link = FakeLink(paused("no-read", awaiting=True))
    policy("baccarat", link, shoe).step()
    assert link.calls == [("resume", "9H")]


def test_a_no_read_pause_without_the_unread_card_in_hand_is_voided() -> None:
    link = FakeLink(paused("no-read", awaiting=True))
    policy("baccarat", link, FakeShoe()).step()
    assert link.calls == [("void", "supervisor voided after no-read")]


def test_a_source_mismatch_is_resumed_with_the_shoes_card() -> None:
    link = FakeLink(paused("source-mismatch", awaiting=True, shoe_card="QS"))
    policy("baccarat", link, FakeShoe()).step()
    assert link.calls == [("resume", "QS")]


def test_a_pause_awaiting_a_card_the_supervisor_cannot_name_is_voided() -> None:
    link = FakeLink(paused("wrong-order", awaiting=True))
    policy("baccarat", link, FakeShoe()).step()
    assert link.calls == [("void", "supervisor voided after wrong-order")]


def test_a_void_request_is_voided() -> None:
    link = FakeLink(paused("void-request"))
    policy("baccarat", link, FakeShoe()).step()
    assert link.calls == [("void", "supervisor voided after void-request")]


def test_a_lid_open_pause_is_resumed_again_until_the_table_takes_it() -> None:
    link = FakeLink(paused("lid-open"))
    link.resume_answers = [False]  # the table still sees the lid open
    dealer = policy("baccarat", link, FakeShoe())
    dealer.step()
    dealer.step()
    assert link.calls == [("resume", None), ("resume", None)]


def test_a_shoe_link_outage_is_waited_out() -> None:
    link = FakeLink(paused("shoe-link-down", awaiting=True))
    policy("baccarat", link, FakeShoe()).step()
    assert link.calls == []
    assert link.waits == [2.0]


def test_a_table_that_does_not_answer_is_waited_for() -> None:
    link = FakeLink(None)
    policy("baccarat", link, FakeShoe()).step()
    assert (link.calls, link.waits) == ([], [1.0])


# ---------------------------------------------------------------------- shoes
def test_a_closed_table_gets_a_new_shoe_with_its_cut_card() -> None:
    link = FakeLink(TableStatus(state="closed"))
    link.events = [ShoeChanged(event="new", count=0)]
    shoe = FakeShoe()
    policy("baccarat", link, shoe).step()
    assert shoe.loads == [(8, 52 * 8 - 16)]
    assert link.calls == []


def test_a_smart_shoe_the_table_never_reports_is_a_dealer_timeout() -> None:
    link = FakeLink(TableStatus(state="closed"))
    with pytest.raises(DealerTimeout, match="new shoe"):
        policy("baccarat", link, FakeShoe(), timeout=3.0).step()


def test_a_single_deck_game_deals_its_first_round_from_the_shoe_that_powered_on_loaded() -> None:
    link = FakeLink(TableStatus(state="idle"))  # a link that cannot tell whether the shoe is fresh
    shoe = FakeShoe()
    policy("teen-patti-2020", link, shoe).step()
    assert shoe.loads == []
    assert link.calls == [("press", "start_round")]


def test_a_single_deck_game_is_not_reshuffled_while_the_table_says_its_shoe_is_fresh() -> None:
    link = FakeLink(TableStatus(state="idle", round="T01-000001", fresh_shoe=True))
    shoe = FakeShoe()
    policy("teen-patti-2020", link, shoe).step()
    assert shoe.loads == []
    assert link.calls == [("press", "start_round")]


def test_a_single_deck_game_gets_a_new_shoe_after_a_round_was_dealt_from_it() -> None:
    link = FakeLink(TableStatus(state="idle", round="T01-000001"))
    link.events = [ShoeChanged(event="new", count=0)]
    shoe = FakeShoe()
    dealer = policy("teen-patti-2020", link, shoe)
    dealer.step()
    assert shoe.loads == [(1, None)]
    assert link.calls == []  # the round starts on the next look
    link.table = TableStatus(state="idle", round="T01-000001")
    dealer.step()
    assert shoe.loads == [(1, None)]  # the new shoe is fresh: not loaded again
    assert link.calls == [("press", "start_round")]


def test_a_line_readers_eight_deck_shoe_is_changed_where_the_cut_card_would_be() -> None:
    link = FakeLink(TableStatus(state="idle", round="T01-000020"), new_shoe_answers=[None, True])
    shoe = FakeShoe(smart=False, left=16)
    policy("baccarat", link, shoe).step()
    assert shoe.loads == [(8, 52 * 8 - 16)]
    assert link.calls == [("new-shoe",), ("new-shoe",)]  # the supervisor tells the table, until it answers


def test_a_line_readers_shoe_with_cards_left_is_dealt_on() -> None:
    link = FakeLink(TableStatus(state="idle", round="T01-000020"))
    shoe = FakeShoe(smart=False, left=17)
    policy("baccarat", link, shoe).step()
    assert shoe.loads == []
    assert link.calls == [("press", "start_round")]


def test_a_table_that_refuses_the_supervisors_new_shoe_is_a_dealer_timeout() -> None:
    link = FakeLink(TableStatus(state="closed"), new_shoe_answers=[False])
    with pytest.raises(DealerTimeout, match="refused"):
        policy("baccarat", link, FakeShoe(smart=False, left=0)).step()


# ---------------------------------------------------------------------- betting and dealing
def test_the_dealer_closes_betting_after_its_betting_time() -> None:
    link = FakeLink(TableStatus(state="betting", round="T01-000001"))
    policy("baccarat", link, FakeShoe(), betting_seconds=1.5).step()
    assert link.calls == [("press", "close_betting")]
    assert link.waits[0] == 1.5


def test_the_tables_move_to_idle_still_on_its_way_is_not_taken_for_the_start_of_the_round() -> None:
    # The dealer saw idle in the machine before the move to idle reached the listeners:
    # taking that event for the answer made it press *start round* a second time.
    link = FakeLink(TableStatus(state="idle", fresh_shoe=False))
    started = RoundStarted(round="T01-000002", variant="baccarat", betting_seconds=0)
    link.events = [TableStateChanged(round="T01-000001", state="idle", reason=None), started]
    policy("baccarat", link, FakeShoe()).step()
    assert link.calls == [("press", "start_round")]
    assert link.events == []  # it waited for the round's start


def test_a_simulated_dealer_makes_no_press_the_table_refuses(tmp_path: Path) -> None:
    # At speed 0 the table's countdown (0 s) closes betting: a dealer pressing *close
    # betting* too raced it, and the table refused and buzzed.
    sim = SimulatedTable(SimOptions(variant="baccarat", speed=0, seed=7, journal=tmp_path / "T01.sqlite"))
    dealer = sim.start()
    try:
        outcomes = [dealer.play_round(sim.live.stopped) for _ in range(8)]
        assert outcomes.count("result") == 8
        assert sim.live.controller.stats.rejected == 0
    finally:
        sim.close()


def test_the_simulated_table_announces_the_betting_time_its_dealer_waits(tmp_path: Path) -> None:
    options = SimOptions(speed=3, betting_seconds=15)
    announced = SimulatedTable(options).config("/dev/null", tmp_path / "T01.sqlite").betting_seconds
    assert announced == dealer_betting_seconds(options) == pytest.approx(5 / 3)


def test_a_card_is_drawn_and_laid_where_the_rules_call_it_and_the_dealer_waits_for_it() -> None:
    status = TableStatus(state="dealing", round="T01-000001", next_position="player", next_index=0)
    link = FakeLink(status)
    link.events = [CardDealt(position="player", index=0, code="4H", source="shoe+camera")]
    shoe = FakeShoe(["4H", "KS"])
    dealer = policy("baccarat", link, shoe, camera=True)
    dealer.step()
    assert shoe.drawn == ["4H"]
    assert link.calls == [("lay", "player1", "4H")]
    dealer.step()  # the table has not confirmed the first card yet: the dealer lays by its own count
    assert link.calls[-1] == ("lay", "banker1", "KS")


def test_no_card_is_drawn_while_the_gate_is_locked() -> None:
    link = FakeLink(TableStatus(state="dealing", round="T01-000001", next_position="player"))
    shoe = FakeShoe(["4H"])
    shoe.gate_open = False
    policy("baccarat", link, shoe).step()
    assert shoe.drawn == [] and link.calls == []


def test_a_line_readers_card_that_does_not_show_is_called_a_misdeal() -> None:
    status = TableStatus(state="dealing", round="T01-000001", next_position="player")
    link = FakeLink(status)
    shoe = FakeShoe(["4H"], smart=False, left=300)
    dealer = policy("baccarat", link, shoe)
    dealer.step()
    assert link.calls == [("press", "card_dropped")] * 3  # no void came: called again, at most 3 times
    assert dealer.stats.misdeal_calls == 3


def test_a_line_readers_card_that_shows_is_no_misdeal() -> None:
    link = FakeLink(TableStatus(state="dealing", round="T01-000001", next_position="player"))
    link.events = [CardDealt(position="player", index=0, code="4H", source="shoe")]
    dealer = policy("baccarat", link, FakeShoe(["4H"], smart=False, left=300))
    dealer.step()
    assert link.calls == [] and dealer.stats.misdeal_calls == 0


class ScriptedLink(FakeLink):
    """A fake table whose status answers follow ``statuses`` (the last one stays)."""

    def __init__(self, statuses: list[TableStatus]) -> None:
        super().__init__(statuses[0])
        self.statuses = list(statuses)

    def status(self) -> TableStatus | None:
        self.table = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        return self.table


def test_a_lost_line_is_called_a_misdeal_even_when_a_restarted_controller_paused_meanwhile() -> None:
    """The soak's hang: the line of the dealer's third card (6S) was lost while the killed
    controller restarted; the restarted table paused (device-fault: "a card the reader sent
    meanwhile is lost"). The dealer took that pause for the table's reaction to its card,
    called no misdeal, and counted four cards where the table had three: its round was
    complete, the table's never was, and both waited for ever."""
    dealing = TableStatus(state="dealing", round="T01-000001", next_position="player", next_index=1)
    restarted = TableStatus(state="paused", round="T01-000001", next_position="player", next_index=1,
                            cause="device-fault")
    link = ScriptedLink([dealing, restarted, TableStatus(state="idle")])
    link.events = [TableStateChanged(
        state="paused", reason="the controller restarted while dealing: a card the reader sent meanwhile is lost",
        cause="device-fault", resume_to="dealing", awaiting=None,
    )]
    dealer = policy("baccarat", link, FakeShoe(["6S"], smart=False, left=300))
    dealer.step()
    assert link.calls == [("press", "card_dropped")] and dealer.stats.misdeal_calls == 1


def test_a_line_table_that_wants_a_card_the_dealers_cards_already_complete_gets_a_misdeal() -> None:
    """A lost line taken for another card of its code (an eight-deck shoe has eight): the
    dealer's cards 9S JS 9S TD complete the round (player 8, a natural) but the table got
    9S JS TD and waits for the banker's second card, which no dealer will pull. The dealer
    calls the misdeal instead of waiting with it for ever."""
    round_id = "T01-000001"

    def dealing(position: str, index: int) -> TableStatus:
        return TableStatus(state="dealing", round=round_id, next_position=position, next_index=index)

    first = CardDealt(round=round_id, position="player", index=0, code="9S", source="shoe")
    second = CardDealt(round=round_id, position="banker", index=0, code="JS", source="shoe")
    link = FakeLink(dealing("player", 0))
    dealer = policy("baccarat", link, FakeShoe(["9S", "JS", "9S", "TD"], smart=False, left=300))
    link.events = [first]
    dealer.step()
    link.table, link.events = dealing("banker", 0), [second]
    dealer.step()
    # The second 9S's line is lost; a snapshot (a restarted controller) shows the first one.
    link.table = dealing("player", 1)
    link.events = [Snapshot(table="T01", seq=9, state=SnapshotState(state="dealing", reason=None),
                            round=[first, second], history=[])]
    dealer.step()
    link.table = dealing("player", 1)
    link.events = [CardDealt(round=round_id, position="player", index=1, code="TD", source="shoe")]
    dealer.step()
    assert link.calls == []
    link.table = dealing("banker", 1)  # ... for ever: the dealer's round is complete
    dealer.step()
    assert link.calls == [("press", "card_dropped")] * 3 and dealer.stats.misdeal_calls == 3


def test_a_lost_burn_card_is_no_misdeal() -> None:
    link = FakeLink(TableStatus(state="dealing", next_position="burn"))
    dealer = policy("baccarat", link, FakeShoe(["4H"], smart=False, left=300))
    dealer.step()
    assert link.calls == []


def test_a_requested_void_is_pressed_and_then_voided_by_the_supervisor() -> None:
    status = TableStatus(state="dealing", round="T01-000001", next_position="player")
    link = FakeLink(status)
    link.events = [TableStateChanged(state="paused", reason="void requested", cause="void-request")]
    shoe = FakeShoe(["4H"])
    dealer = policy("baccarat", link, shoe, fault_rates={"void": 1.0})
    dealer.step()
    assert link.calls == [("press", "void_request")] and shoe.drawn == []
    link.table = paused("void-request")
    link.events = [RoundVoided(reason="supervisor voided after void-request", refund=True)]
    dealer.step()
    assert link.calls[-1] == ("void", "supervisor voided after void-request")


# ---------------------------------------------------------------------- the remote link
class ScriptedControl:
    """A control client with one scripted reply."""

    endpoint = "tcp://127.0.0.1:1"

    def __init__(self, reply: dict[str, Any] | None) -> None:
        self.reply = reply

    def request(self, body: dict[str, Any]) -> dict[str, Any] | None:
        return self.reply


def test_the_remote_link_reads_the_control_sockets_status_as_a_typed_status() -> None:
    import queue
    import threading

    reply = {"ok": True, "state": "paused", "reason": "camera disagrees", "round": "T01-000004",
             "next_position": "banker", "next_index": 1, "awaiting": "card", "cause": "source-mismatch",
             "shoe_card": "7D"}
    link = ControlLink(ScriptedControl(reply), queue.Queue(), token="t", stop=threading.Event())  # type: ignore[arg-type]
    assert link.status() == TableStatus(
        state="paused", reason="camera disagrees", round="T01-000004", next_position="banker", next_index=1,
        awaiting="card", cause="source-mismatch", shoe_card="7D",
    )
    silent = ControlLink(ScriptedControl(None), queue.Queue(), token="t", stop=threading.Event())  # type: ignore[arg-type]
    assert silent.status() is None


def test_only_a_table_moving_on_is_progress_not_the_pauses_and_snapshots_of_restarts() -> None:
    """A table killed and restarted every few seconds sends a snapshot, a pause and a resume
    each time while dealing nothing; the soak's stuck-table check must not take that for
    progress (it did, and a stuck line table hung the soak instead of failing it)."""
    import queue
    import threading

    events: queue.Queue[TableItem] = queue.Queue()
    link = ControlLink(ScriptedControl(None), events, token="t", stop=threading.Event())  # type: ignore[arg-type]
    link.last_progress = before = 0.0
    restart: list[TableItem] = [
        Snapshot(table="T01", seq=9, state=SnapshotState(state="dealing", reason=None), round=[], history=[]),
        Alert(kind="device-fault", severity="critical", detail="the controller restarted while dealing"),
        TableStateChanged(state="paused", reason="the controller restarted while dealing", cause="device-fault"),
        TableStateChanged(state="dealing", reason="resumed by supervisor soak (token)"),
        Heartbeat(state="dealing"),
    ]
    for item in restart:
        events.put(item)
    assert link.wait_for(lambda e: False, 0.05) is None
    assert link.last_progress == before
    events.put(CardDealt(position="banker", index=1, code="4D", source="shoe"))
    assert link.wait_for(lambda e: isinstance(e, CardDealt), 1.0) is not None
    assert link.last_progress > before
