"""Clone consistency: a display that joins late (snapshot, then the rest) shows exactly what a
display that saw every event shows, wherever the snapshot is taken."""

from __future__ import annotations

import msgspec
from fake_table import as_event
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.client import Snapshot
from table_controller.display.model import TableView
from table_controller.event_types import decode_snapshot_reply
from table_controller.events import make_event
from table_controller.publish import SnapshotState
from table_controller.rules import load_game
from table_controller.rules.cards import parse_cards

T0 = 1_800_000_000.0
BACCARAT = load_game("baccarat")
DECK = [r + s for r in "A23456789TJQK" for s in "SHDC"]


class Script:
    """Builds the events of a scripted baccarat table, in the controller's order."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.round: str | None = None
        self.state = "idle"
        self.rounds = 0

    def emit(self, type: str, **payload) -> None:
        if type == "table.state":
            self.state = payload["state"]
        if type == "heartbeat":
            payload["state"] = self.state
        self.events.append(make_event(table="T01", seq=len(self.events) + 1,
                                      ts=T0 + len(self.events), type=type, game="baccarat",
                                      round=self.round, **payload))

    def play(self, shoe_order: list[str], void_after: int | None) -> None:
        self.rounds += 1
        self.round = f"R{self.rounds}"
        self.emit("table.state", state="betting", reason=None)
        self.emit("round.start", variant="baccarat", betting_seconds=15)
        self.emit("betting.closed")
        self.emit("table.state", state="dealing", reason=None)
        deal, used = BACCARAT.deal(parse_cards(shoe_order))
        result = deal.result().to_dict()
        hands = result["hands"]
        order = [("player", 0), ("banker", 0), ("player", 1), ("banker", 1)]
        order += [("player", 2)] if len(hands["player"]["cards"]) == 3 else []
        order += [("banker", 2)] if len(hands["banker"]["cards"]) == 3 else []
        for n, (position, index) in enumerate(order):
            if void_after is not None and n == void_after:
                self.emit("round.void", reason="card dropped", refund=True)
                break
            self.emit("card", position=position, index=index, code=hands[position]["cards"][index],
                      source="shoe")
        else:
            self.emit("table.state", state="result", reason=None)
            self.emit("round.result", hands=hands, outcome=result["outcome"],
                      payouts=result["payouts"])
        self.round = None
        self.emit("table.state", state="idle", reason=None)


actions = st.lists(
    st.one_of(
        st.tuples(st.just("round"), st.permutations(DECK).map(lambda d: d[:6]),
                  st.one_of(st.none(), st.integers(0, 5))),
        st.tuples(st.just("shoe"), st.integers(1, 416)),
        st.tuples(st.just("heartbeat")),
        st.tuples(st.just("pause"), st.sampled_from(["dealer change", "shuffle", None])),
    ),
    min_size=1, max_size=25,
)


@settings(max_examples=80, deadline=None)
@given(actions=actions, data=st.data())
def test_late_joiner_sees_what_a_full_viewer_sees(actions, data):
    script = Script()
    for action in actions:
        if action[0] == "round":
            script.play(list(action[1]), action[2])
        elif action[0] == "shoe":
            script.emit("shoe", event="new", count=action[1])
        elif action[0] == "pause":
            script.emit("table.state", state="paused", reason=action[1])
            script.emit("table.state", state="idle", reason=None)
        else:
            script.emit("heartbeat")
    script.emit("heartbeat")  # the controller's heartbeat: something always follows a snapshot
    events = script.events
    k = data.draw(st.integers(0, len(events) - 1), label="snapshot after this many events")
    snapshot = SnapshotState()
    snapshot.prime(events[:k])
    late, full = TableView("T01"), TableView("T01")
    assert late.apply(Snapshot.of("T01", decode_snapshot_reply(msgspec.json.encode(snapshot.reply()))))
    typed = [as_event(e) for e in events]
    for event in typed[k:]:
        assert late.apply(event)
    for event in typed:
        assert full.apply(event)
    now = T0 + 3
    shown_late, shown_full = late.view(now), full.view(now)
    for field in ("variant", "payouts", "alerts"):  # not in a snapshot between rounds (payouts: the variant's)
        shown_late.pop(field), shown_full.pop(field)
    assert shown_late == shown_full
