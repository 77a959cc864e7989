"""The display model (snapshot + events -> what the floor sees) and the terminal display."""

from __future__ import annotations

import io
import logging

from fake_table import as_event
from rich.console import Console

from table_controller.client import Snapshot
from table_controller.display.model import TableView, banner_of
from table_controller.display.roads import ShoeResult, bead_plate, scoreboard
from table_controller.display.terminal import render
from table_controller.event_types import Event, TableStatus
from table_controller.events import make_event

T0 = 1_800_000_000.0


class Script:
    """Builds typed baccarat events with increasing seq (no sockets)."""

    def __init__(self) -> None:
        self.seq = 0
        self.round: str | None = None

    def __call__(self, type: str, ts: float = T0, **payload) -> Event:
        self.seq += 1
        return as_event(make_event(table="T01", seq=self.seq, ts=ts, type=type, game="baccarat",
                                          round=self.round, **payload))

    def result(self, winner: str, player: list[str], banker: list[str], p: int, b: int,
               **pairs: bool) -> Event:
        return self("round.result",
                    hands={"player": {"cards": player, "class": str(p), "points": p},
                           "banker": {"cards": banker, "class": str(b), "points": b}},
                    outcome={"winner": winner, "natural": False,
                             "player_pair": pairs.get("pp", False),
                             "banker_pair": pairs.get("bp", False)},
                    payouts={"player": "1" if winner == "player" else "-1"})


def test_round_shows_countdown_cards_and_banner():
    s, view = Script(), TableView("T01")
    s.round = "R1"
    for event in [s("table.state", state="betting", reason=None),
                  s("round.start", ts=T0, variant="baccarat", betting_seconds=15)]:
        view.apply(event)
    assert view.view(T0 + 4.5)["countdown"] == 10.5
    assert view.view(T0 + 20)["countdown"] == 0.0
    view.apply(s("betting.closed"))
    assert view.view(T0 + 5)["countdown"] is None
    view.apply(s("card", position="player", index=0, code="QH", source="shoe"))
    view.apply(s("card", position="banker", index=0, code="8S", source="shoe"))
    view.apply(s("card", position="player", index=1, code="3C", source="shoe"))
    shown = view.view(T0)
    assert shown["positions"] == [{"name": "player", "cards": ["QH", "3C"], "points": 3},
                                  {"name": "banker", "cards": ["8S"], "points": 8}]
    view.apply(s.result("banker", ["QH", "3C"], ["8S", "QD"], 3, 8))
    shown = view.view(T0)
    assert shown["result"]["banner"] == "BANKER WINS  PLAYER 3 – BANKER 8"
    assert shown["positions"][1] == {"name": "banker", "cards": ["8S", "QD"], "points": 8}
    assert [h["label"] for h in shown["history"]] == ["B"]


def test_snapshot_replaces_and_does_not_duplicate_results():
    s, view = Script(), TableView("T01")
    shoe = s("shoe", event="new", count=416)
    s.round = "R1"
    r1 = s.result("player", ["9H", "KD"], ["2C", "3C"], 9, 5, pp=False)
    s.round = "R2"
    start = s("round.start", variant="baccarat", betting_seconds=15)
    card = s("card", position="player", index=0, code="AS", source="shoe")
    view.apply(r1)
    snap = Snapshot(table="T01", seq=card.seq, state=TableStatus(state="dealing", reason=None),
                    round=[start, card], history=[r1], shoe=[shoe])
    assert view.apply(snap)
    assert view.apply(snap)
    shown = view.view(T0)
    assert [h["round"] for h in shown["history"]] == ["R1"]
    assert shown["state"] == "dealing"
    assert shown["positions"] == [{"name": "player", "cards": ["AS"], "points": 1}]
    assert shown["result"] is None
    assert shown["bead_plate"] == [{"col": 0, "row": 0, "winner": "P", "player_pair": False,
                                    "banker_pair": False, "natural": False}]


def test_new_shoe_resets_the_scoreboards():
    s, view = Script(), TableView("T01")
    view.apply(s.result("banker", ["2H", "3H"], ["9C", "KC"], 5, 9))
    assert len(view.view(T0)["bead_plate"]) == 1
    view.apply(s("shoe", event="new", count=416))
    assert view.view(T0)["bead_plate"] == []
    assert view.view(T0)["big_road"] == []
    assert len(view.view(T0)["history"]) == 1


def test_an_item_that_is_no_typed_event_is_logged_and_skipped(caplog):
    s, view = Script(), TableView("T01")
    view.apply(s("table.state", state="betting", reason=None))
    caplog.set_level(logging.WARNING)
    assert view.apply({"type": "table.state", "seq": 3, "state": "closed"}) is False
    assert "display skipped an item that is neither a snapshot nor an event: dict" in caplog.text
    assert view.view(T0)["state"] == "betting"
    assert view.view(T0)["seq"] == 1


def test_a_checkpoint_moves_seq_and_changes_nothing_shown():
    s, view = Script(), TableView("T01")
    view.apply(s("table.state", state="idle", reason=None))
    before = view.view(T0)
    assert view.apply(s("checkpoint", covers=1, hash="ab", sig="cd"))
    assert view.view(T0) == {**before, "seq": 2}


def test_heartbeat_alert_and_shoe_count_are_shown():
    s, view = Script(), TableView("T01")
    view.apply(s("heartbeat", state="paused"))
    view.apply(s("alert", kind="lid-open", severity="critical", detail="lid opened"))
    view.apply(s("shoe", event="cut", count=300))
    shown = view.view(T0)
    assert (shown["state"], shown["shoe_count"]) == ("paused", 300)
    assert shown["alerts"] == [{"kind": "lid-open", "severity": "critical", "detail": "lid opened"}]


def test_big_road_streaks_turn_right_and_count_ties():
    board = scoreboard([ShoeResult(w) for w in "TBBPTTPPPPPPPB"])  # type: ignore[arg-type]
    assert board.leading_ties == 1
    assert [(c.col, c.row, c.value.winner, c.value.ties) for c in board.big_road] == [
        (0, 0, "B", 0), (0, 1, "B", 0),
        (1, 0, "P", 2), (1, 1, "P", 0), (1, 2, "P", 0), (1, 3, "P", 0), (1, 4, "P", 0),
        (1, 5, "P", 0), (2, 5, "P", 0), (3, 5, "P", 0),  # dragon tail
        (2, 0, "B", 0),
    ]


def test_bead_plate_fills_columns_of_six():
    beads = bead_plate([ShoeResult("B")] * 7)
    assert [(b.col, b.row) for b in beads][-2:] == [(0, 5), (1, 0)]


def test_banners_of_other_games_and_void():
    void = as_event(make_event(table="T01", seq=1, ts=T0, type="round.void", game="baccarat",
                                      round="R", reason="shoe fault", refund=True))
    assert banner_of(void) == "ROUND VOID: shoe fault"
    three_face = as_event(make_event(table="T01", seq=2, ts=T0, type="round.result",
                                            game="three-face", round="R", hands={},
                                            outcome={"player1": "win", "player2": "tie"}, payouts={}))
    assert banner_of(three_face) == "PLAYER1 WIN · PLAYER2 TIE"


def test_terminal_render_shows_table_cards_banner_and_last_results():
    s, view = Script(), TableView("T01")
    s.round = "R1"
    view.apply(s("table.state", state="dealing", reason=None))
    view.apply(s("card", position="player", index=0, code="TH", source="shoe"))
    view.apply(s.result("player", ["TH", "9S"], ["2C", "3C"], 9, 5))
    console = Console(file=io.StringIO(), width=80, record=True)
    console.print(render(view.view(T0)))
    text = console.export_text()
    assert "T01" in text
    assert "[10♥] [9♠]" in text
    assert "PLAYER WINS  PLAYER 9 – BANKER 5" in text
    assert "last results:  P" in text


def test_terminal_display_follows_a_table_until_stopped():
    import zmq
    from fake_table import BANKER_ROUND, FakeTable

    from table_controller.client import TableClient
    from table_controller.display.terminal import run_terminal
    from table_controller.publish import EventPublisher

    context = zmq.Context()
    with EventPublisher("T01", "tcp://127.0.0.1:0", "tcp://127.0.0.1:0", context=context) as pub:
        table = FakeTable(pub)
        table.play_round(BANKER_ROUND)
        out = io.StringIO()
        client = TableClient(pub.bound_publish, pub.bound_snapshot, "T01", context=context)
        def stop() -> bool:  # called between items: the table's heartbeats until the snapshot came
            if client.snapshot is not None:
                return True
            table.heartbeat()
            return False

        try:
            run_terminal(client, table="T01", out=out, stop=stop, clock=lambda: T0)
        finally:
            client.close()
    context.destroy(linger=0)
    assert "BANKER WINS  PLAYER 3 – BANKER 8" in out.getvalue()
    assert "[8♠] [Q♦]" in out.getvalue()


def test_terminal_render_shows_the_big_road_and_the_shoe_statistics():
    s, view = Script(), TableView("T01")
    view.apply(s("shoe", event="new", count=0, decks=8))
    for winner in ("banker", "banker", "player", "tie", "player"):
        view.apply(s.result(winner, ["2H", "3H"], ["2C", "3C"], 5, 5))
    console = Console(file=io.StringIO(), width=140, color_system=None)
    console.print(render(view.view(T0)))
    text = console.file.getvalue()
    rows = [line.replace("│", "").strip() for line in text.splitlines()]
    start = rows.index("big road")
    assert rows[start + 1:start + 4] == ["B  P1", "B  P", "·  ·"], text  # the tie counted on the first P
    assert "shoe: B 2  P 2  T 1" in text and "cards left 396" in text
