"""What a floor display shows, computed from the event stream (no sockets, no drawing).

:class:`TableView` folds the items of :class:`~table_controller.client.TableClient`
(a :class:`~table_controller.client.Snapshot`, then typed events) into the display's state, and :meth:`TableView.view`
turns it into one JSON-able dict that the terminal display draws with rich and
the web display pushes to the browser. Unknown or odd events are logged and
skipped, never fatal: a display must stay up whatever arrives.
"""

from __future__ import annotations

import functools
import logging
from collections import deque
from decimal import Decimal
from typing import Any

import msgspec

from table_controller import event_types
from table_controller.client import ClientItem, Snapshot
from table_controller.display.boards import MAX_ROUNDS, game_board
from table_controller.display.roads import ShoeResult, scoreboard
from table_controller.event_types import (
    Alert,
    BettingClosed,
    CardDealt,
    CheckpointSigned,
    DealerChanged,
    Event,
    EventError,
    Heartbeat,
    RoundResult,
    RoundStarted,
    RoundVoided,
    ShoeChanged,
    TableStateChanged,
)

log = logging.getLogger(__name__)

HISTORY = 100
#: Every event class of the contract (a new type is folded for seq and time even if not shown).
EVENT_CLASSES = tuple(event_types.EVENT_CLASSES.values())
WINNER_LETTER = {"banker": "B", "player": "P", "tie": "T"}


def parse_ts(ts: str) -> float | None:
    """Epoch seconds of an events.md timestamp, or None if it is not one."""
    try:
        return event_types.parse_ts(ts)
    except EventError:
        return None


def banner_of(event: RoundResult | RoundVoided) -> str:
    """The result banner: ``BANKER WINS 8 – 3``, ``TIE 9 – 9``, ``ROUND VOID: shoe error``."""
    if isinstance(event, RoundVoided):
        return f"ROUND VOID: {event.reason or 'no reason given'}"
    hands = event.hands
    winner = event.outcome.get("winner")
    if isinstance(winner, str):
        text = "TIE" if winner == "tie" else f"{winner.upper()} WINS"
        if event.game == "baccarat" and "player" in hands and "banker" in hands:
            text += f"  PLAYER {hands['player'].points} – BANKER {hands['banker'].points}"
        return text
    parts = [f"{pos.upper()} {res.upper()}" for pos, res in event.outcome.items() if isinstance(res, str)]
    return " · ".join(parts) or "RESULT"


def summary_of(event: RoundResult | RoundVoided) -> dict[str, Any]:
    """A history entry: round id, short label (``B``, ``P``, ``T``, ``A``, ``VOID``) and banner."""
    if isinstance(event, RoundVoided):
        label = "VOID"
    else:
        winner = event.outcome.get("winner")
        if isinstance(winner, str):
            label = WINNER_LETTER.get(winner, winner[:1].upper())
        else:  # a result per box against the banker (Three Pictures, 3 Face): boxes won / boxes
            verdicts = [v for v in event.outcome.values() if isinstance(v, str)]
            label = f"{sum(v == 'win' for v in verdicts)}/{len(verdicts)}" if verdicts else "·"
    return {"round": event.round, "seq": event.seq, "label": label, "banner": banner_of(event),
            "at": parse_ts(event.ts)}


#: Games whose hands count points (A = 1, 2-9 face value, tens and pictures 0, modulo 10).
POINT_GAMES = ("baccarat", "three-pictures", "three-face")
CARD_POINTS = {**{str(n): n for n in range(2, 10)}, "A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}


def hand_points(game: str | None, cards: list[str | None]) -> int | None:
    """The points of the cards seen so far of a hand (None for games without points, or no card)."""
    seen = [c for c in cards if c]
    if game not in POINT_GAMES or not seen:
        return None
    return sum(CARD_POINTS.get(c[:-1], 0) for c in seen) % 10


def _odds(value: Decimal) -> str:
    return f"{value.normalize():f}:1"


@functools.cache
def payout_table(variant_id: str) -> list[dict[str, str]]:
    """What each bet of the variant pays, as the floor shows it (``[{bet, pays}]``); empty for a
    variant this machine does not have."""
    from table_controller.errors import VariantError
    from table_controller.rules.registry import load_variant

    try:
        variant = load_variant(variant_id)
    except (VariantError, OSError):
        return []
    rows = []
    for bet, terms in variant.bets.items():
        parts = [_odds(terms.win)] if terms.win is not None else []
        parts += [f"{_odds(v)} on {points} points" for points, v in sorted(terms.win_on_points.items())]
        parts += [f"{name} {_odds(v)}" for name, v in terms.pays.items()]
        rows.append({"bet": bet, "pays": " · ".join(parts)})
    return rows


class TableView:
    """The floor display's state of one table, fed by the client's snapshots and events."""

    def __init__(self, table: str | None = None, limits: str | None = None) -> None:
        self.table = table
        self.limits = limits  # the table's limits as the studio writes them (display --limits), shown as given
        self.reset()

    def reset(self) -> None:
        """Forget everything known of the table (a snapshot replaces it)."""
        self.game: str | None = None
        self.variant: str | None = None
        self.state: str | None = None
        self.reason: str | None = None
        self.round: str | None = None
        self.betting_ends: float | None = None
        self.cards: dict[str, list[str | None]] = {}
        self.result: dict[str, Any] | None = None
        self.history: deque[dict[str, Any]] = deque(maxlen=HISTORY)
        self.shoe_results: list[ShoeResult] = []
        self.shoe_new_seq: int | None = None
        self.shoe_count: int | None = None
        self.shoe_decks: int | None = None
        self.shoe_count_seq = 0  # the seq of the shoe event that gave shoe_count
        self.cards_since_count = 0  # cards of the results after it
        self.board_results: deque[tuple[str | None, dict[str, Any]]] = deque(maxlen=MAX_ROUNDS)
        self.dealer: str | None = None

        self.alerts: deque[dict[str, Any]] = deque(maxlen=5)
        self.seq = 0
        self.last_ts: float | None = None

    # -- feeding --------------------------------------------------------------------------------

    def apply(self, item: ClientItem) -> bool:
        """Fold one client item; returns False (after logging) for one it cannot use."""
        try:
            if isinstance(item, Snapshot):
                self._apply_snapshot(item)
            elif isinstance(item, EVENT_CLASSES):
                self._apply_event(item)
            else:
                log.warning("display skipped an item that is neither a snapshot nor an event: %s",
                            type(item).__name__)
                return False
            return True
        except (KeyError, TypeError, ValueError, AttributeError) as e:  # a display stays up
            log.warning("display skipped an unusable %s item (seq %s): %s",
                        type(item).__name__, getattr(item, "seq", None), e)
            return False

    def _apply_snapshot(self, snap: Snapshot) -> None:
        self.reset()
        self.table = snap.table
        if snap.state is not None:
            self.state, self.reason = snap.state.state, snap.state.reason
        for shoe_event in snap.shoe:
            self._apply_event(shoe_event)
        for ended in snap.history:
            self.game = ended.game
            self._record_result(ended)
        if snap.history and not snap.round:
            self.result = self.history[-1]
            last = snap.history[-1]
            if isinstance(last, RoundResult):
                for position, hand in last.hands.items():
                    self.cards[position] = list(hand.cards)  # the last round's cards
        for event in snap.round:
            self._apply_event(event)
        self.seq = snap.seq

    def _apply_event(self, event: Event) -> None:
        self.seq = max(self.seq, event.seq)
        self.game = event.game or self.game
        self.last_ts = parse_ts(event.ts)
        match event:
            case TableStateChanged(state=state, reason=reason):
                self.state, self.reason = state, reason
                if state != "betting":
                    self.betting_ends = None
            case Heartbeat(state=state):
                self.state = state
            case RoundStarted():
                self.round = event.round
                if isinstance(event.dealer, str):
                    self.dealer = event.dealer
                self.variant = event.variant
                self.cards = {}
                self.result = None
                started = parse_ts(event.ts)
                self.betting_ends = started + float(event.betting_seconds) if started is not None else None
            case BettingClosed():
                self.betting_ends = None
            case CardDealt(position=position, index=index, code=code):
                if event.round and self.round and event.round != self.round:
                    log.warning("card %s of round %s arrived during round %s; shown anyway",
                                code, event.round, self.round)
                slots = self.cards.setdefault(position, [])
                while len(slots) <= index:
                    slots.append(None)
                slots[index] = code
            case RoundResult() | RoundVoided():
                self._record_result(event)
                self.result = self.history[-1]
                self.round = None
                self.betting_ends = None
                if isinstance(event, RoundResult):
                    for position, hand in event.hands.items():
                        self.cards[position] = list(hand.cards or self.cards.get(position, []))
                else:
                    self.cards = {}  # a void round's cards do not count: the banner says so
            case ShoeChanged(count=count):
                self.shoe_count = count
                self.shoe_count_seq, self.cards_since_count = event.seq, 0
                if event.event == "new":
                    self.shoe_results = []
                    self.shoe_new_seq = event.seq
                    self.shoe_decks = event.decks if isinstance(event.decks, int) else self.shoe_decks
            case Alert(kind=kind, severity=severity, detail=detail):
                self.alerts.append({"kind": kind, "severity": severity, "detail": detail})
            case DealerChanged(dealer=dealer):
                self.dealer = dealer
            case CheckpointSigned():
                pass  # the journal's signatures: nothing to show

    def _record_result(self, event: RoundResult | RoundVoided) -> None:
        summary = summary_of(event)
        if any(h["round"] == summary["round"] and h["seq"] == summary["seq"] for h in self.history):
            return
        self.history.append(summary)
        if isinstance(event, RoundResult) and event.game != "baccarat":
            self.board_results.append((event.round, msgspec.to_builtins(event)))
        if not isinstance(event, RoundResult) or event.game != "baccarat":
            return
        if self.shoe_new_seq is not None and event.seq < self.shoe_new_seq:
            return
        if event.seq > self.shoe_count_seq:
            self.cards_since_count += sum(len(h.cards) for h in event.hands.values())
        letter = WINNER_LETTER.get(str(event.outcome.get("winner")))
        if letter:
            self.shoe_results.append(ShoeResult(letter, bool(event.outcome.get("player_pair")),  # type: ignore[arg-type]
                                                bool(event.outcome.get("banker_pair")),
                                                bool(event.outcome.get("natural"))))

    # -- showing --------------------------------------------------------------------------------

    def rounds_this_hour(self, now: float) -> int:
        """Rounds settled (a result or a void) since the top of the current hour (UTC) at ``now``,
        of the last :data:`HISTORY` (a late joiner's snapshot brings the same)."""
        hour = now - now % 3600
        return sum(1 for h in self.history if (h.get("at") or 0) >= hour)

    def _cards_left(self) -> dict[str, int | None]:
        """Cards dealt from the shoe and left in it: the shoe's last count, plus the cards of the
        results since and of the round on the table (burns and void rounds' cards between two shoe
        reports are not seen here: the figure is the shoe's own at each cut card)."""
        if self.shoe_count is None:
            return {"cards_dealt": None, "cards_left": None}
        in_round = sum(1 for cards in self.cards.values() for c in cards if c) if self.result is None else 0
        dealt = self.shoe_count + self.cards_since_count + in_round
        return {"cards_dealt": dealt, "cards_left": self.shoe_decks * 52 - dealt if self.shoe_decks else None}

    def countdown(self, now: float) -> float | None:
        """Seconds of betting left at wall-clock ``now`` (None when betting is not open)."""
        if self.betting_ends is None or self.state not in ("betting", None):
            return None
        return max(0.0, self.betting_ends - now)

    def view(self, now: float) -> dict[str, Any]:
        """Everything a display draws, as plain JSON-able data."""
        board = scoreboard(self.shoe_results)
        return {
            "table": self.table,
            "game": self.game,
            "variant": self.variant,
            "state": self.state,
            "reason": self.reason,
            "round": self.round,
            "seq": self.seq,
            "countdown": self.countdown(now),
            "positions": [{"name": name, "cards": cards, "points": hand_points(self.game, cards)}
                          for name, cards in self.cards.items()],
            "result": self.result,
            "history": list(self.history)[-20:],
            "bead_plate": [vars(b) for b in board.bead_plate],
            "big_road": [{"col": c.col, "row": c.row, "winner": c.value.winner, "ties": c.value.ties,
                          "player_pair": c.value.player_pair, "banker_pair": c.value.banker_pair,
                          "natural": c.value.natural} for c in board.big_road],
            "leading_ties": board.leading_ties,
            "derived_roads": {name: [{"col": c.col, "row": c.row, "colour": c.value} for c in cells]
                              for name, cells in board.derived.items()},
            "ask_roads": board.ask,
            "shoe_stats": {**board.stats, **self._cards_left()},
            "shoe_count": self.shoe_count,
            "board": game_board(list(self.board_results)) if self.game not in (None, "baccarat") else None,
            "payouts": payout_table(self.variant) if self.variant else [],
            "limits": self.limits,
            "dealer": self.dealer,
            "rounds_this_hour": self.rounds_this_hour(now),
            "last_ts": self.last_ts,
            "alerts": list(self.alerts),
        }
