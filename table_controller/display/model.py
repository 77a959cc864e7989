"""What a floor display shows, computed from the event stream (no sockets, no drawing).

:class:`TableView` folds the items of :class:`~table_controller.client.TableClient`
(a ``snapshot`` then events) into the display's state, and :meth:`TableView.view`
turns it into one JSON-able dict that the terminal display draws with rich and
the web display pushes to the browser. Unknown or odd events are logged and
skipped, never fatal: a display must stay up whatever arrives.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

from table_controller import event_types
from table_controller.display.scoreboard import bead_plate, big_road
from table_controller.event_types import EventError

log = logging.getLogger(__name__)

HISTORY = 100
WINNER_LETTER = {"banker": "B", "player": "P", "tie": "T"}


def parse_ts(ts: str) -> float | None:
    """Epoch seconds of an events.md timestamp, or None if it is not one."""
    try:
        return event_types.parse_ts(ts)
    except EventError:
        return None


def banner_of(event: dict[str, Any]) -> str:
    """The result banner: ``BANKER WINS 8 – 3``, ``TIE 9 – 9``, ``ROUND VOID: shoe error``."""
    if event["type"] == "round.void":
        return f"ROUND VOID: {event.get('reason') or 'no reason given'}"
    outcome = event.get("outcome") or {}
    hands = event.get("hands") or {}
    winner = outcome.get("winner")
    if isinstance(winner, str):
        text = "TIE" if winner == "tie" else f"{winner.upper()} WINS"
        points = [h.get("points") for h in hands.values() if isinstance(h, dict)
                  and h.get("points") is not None and h.get("cards")]
        if event.get("game") == "baccarat" and "player" in hands and "banker" in hands:
            points = [hands["player"].get("points"), hands["banker"].get("points")]
            text += f"  PLAYER {points[0]} – BANKER {points[1]}"
        return text
    parts = [f"{pos.upper()} {str(res).upper()}" for pos, res in outcome.items() if isinstance(res, str)]
    return " · ".join(parts) or "RESULT"


def summary_of(event: dict[str, Any]) -> dict[str, Any]:
    """A history entry: round id, short label (``B``, ``P``, ``T``, ``A``, ``VOID``) and banner."""
    if event["type"] == "round.void":
        label = "VOID"
    else:
        winner = (event.get("outcome") or {}).get("winner")
        label = WINNER_LETTER.get(winner, str(winner)[:1].upper()) if isinstance(winner, str) else "·"
    return {"round": event.get("round"), "seq": event.get("seq"), "label": label,
            "banner": banner_of(event)}


class TableView:
    """The floor display's state of one table, fed by snapshots and events."""

    def __init__(self, table: str | None = None) -> None:
        self.table = table
        self.reset()

    def reset(self) -> None:
        self.game: str | None = None
        self.variant: str | None = None
        self.state: str | None = None
        self.reason: str | None = None
        self.round: str | None = None
        self.betting_ends: float | None = None
        self.cards: dict[str, list[str | None]] = {}
        self.result: dict[str, Any] | None = None
        self.history: deque[dict[str, Any]] = deque(maxlen=HISTORY)
        self.shoe_results: list[tuple[str, bool, bool]] = []
        self.shoe_new_seq: int | None = None
        self.shoe_count: int | None = None
        self.alerts: deque[dict[str, Any]] = deque(maxlen=5)
        self.seq = 0
        self.last_ts: float | None = None

    # -- feeding --------------------------------------------------------------------------------

    def apply(self, item: dict[str, Any]) -> bool:
        """Fold one client item; returns False (after logging) for one it cannot use."""
        try:
            if item.get("type") == "snapshot":
                self._apply_snapshot(item)
            else:
                self._apply_event(item)
            return True
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            log.warning("display skipped an unusable %s item (seq %s): %s",
                        item.get("type") if isinstance(item, dict) else type(item).__name__,
                        item.get("seq") if isinstance(item, dict) else None, e)
            return False

    def _apply_snapshot(self, snap: dict[str, Any]) -> None:
        self.reset()
        self.table = snap.get("table", self.table)
        state = snap.get("state") or {}
        self.state, self.reason = state.get("state"), state.get("reason")
        shoe = snap.get("shoe") or []
        for event in shoe:
            self._apply_event(event)
        for event in snap.get("history") or []:
            self.game = event.get("game", self.game)
            self._record_result(event)
        history = snap.get("history") or []
        if history and not snap.get("round"):
            self.result = self.history[-1]
            for position, hand in (history[-1].get("hands") or {}).items():
                self.cards[position] = list(hand.get("cards") or [])  # the last round's cards
        for event in snap.get("round") or []:
            self._apply_event(event)
        self.seq = int(snap.get("seq") or 0)

    def _apply_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        self.seq = max(self.seq, int(event["seq"]))
        self.game = event.get("game") or self.game
        self.last_ts = parse_ts(event.get("ts", ""))
        if kind == "table.state":
            self.state, self.reason = event["state"], event.get("reason")
            if self.state != "betting":
                self.betting_ends = None
        elif kind == "heartbeat":
            self.state = event.get("state", self.state)
        elif kind == "round.start":
            self.round = event.get("round")
            self.variant = event.get("variant")
            self.cards = {}
            self.result = None
            started = parse_ts(event["ts"])
            seconds = float(event["betting_seconds"])
            self.betting_ends = started + seconds if started is not None else None
        elif kind == "betting.closed":
            self.betting_ends = None
        elif kind == "card":
            if event.get("round") and self.round and event["round"] != self.round:
                log.warning("card %s of round %s arrived during round %s; shown anyway",
                            event.get("code"), event["round"], self.round)
            slots = self.cards.setdefault(str(event["position"]), [])
            index = int(event["index"])
            while len(slots) <= index:
                slots.append(None)
            slots[index] = str(event["code"])
        elif kind in ("round.result", "round.void"):
            self._record_result(event)
            self.result = self.history[-1]
            self.round = None
            self.betting_ends = None
            if kind == "round.result":
                for position, hand in (event.get("hands") or {}).items():
                    self.cards[position] = list(hand.get("cards") or self.cards.get(position, []))
            else:
                self.cards = {}  # a void round's cards do not count: the banner says so
        elif kind == "shoe":
            self.shoe_count = event.get("count")
            if event.get("event") == "new":
                self.shoe_results = []
                self.shoe_new_seq = int(event["seq"])
        elif kind == "alert":
            self.alerts.append({"kind": event["kind"], "severity": event["severity"],
                                "detail": event.get("detail")})

    def _record_result(self, event: dict[str, Any]) -> None:
        summary = summary_of(event)
        if any(h["round"] == summary["round"] and h["seq"] == summary["seq"] for h in self.history):
            return
        self.history.append(summary)
        if event["type"] != "round.result" or event.get("game") != "baccarat":
            return
        if self.shoe_new_seq is not None and int(event["seq"]) < self.shoe_new_seq:
            return
        outcome = event.get("outcome") or {}
        letter = WINNER_LETTER.get(str(outcome.get("winner")))
        if letter:
            self.shoe_results.append((letter, bool(outcome.get("player_pair")),
                                      bool(outcome.get("banker_pair"))))

    # -- showing --------------------------------------------------------------------------------

    def countdown(self, now: float) -> float | None:
        """Seconds of betting left at wall-clock ``now`` (None when betting is not open)."""
        if self.betting_ends is None or self.state not in ("betting", None):
            return None
        return max(0.0, self.betting_ends - now)

    def view(self, now: float) -> dict[str, Any]:
        """Everything a display draws, as plain JSON-able data."""
        road, leading_ties = big_road([w for w, _, _ in self.shoe_results])
        return {
            "table": self.table,
            "game": self.game,
            "variant": self.variant,
            "state": self.state,
            "reason": self.reason,
            "round": self.round,
            "seq": self.seq,
            "countdown": self.countdown(now),
            "positions": [{"name": name, "cards": cards} for name, cards in self.cards.items()],
            "result": self.result,
            "history": list(self.history)[-20:],
            "bead_plate": [vars(b) for b in bead_plate(self.shoe_results)],
            "big_road": [vars(c) for c in road],
            "leading_ties": leading_ties,
            "shoe_count": self.shoe_count,
            "alerts": list(self.alerts),
        }
