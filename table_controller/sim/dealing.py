"""The dealing policy: what a dealer and floor supervisor do next, from what they see of the table.

One policy for both simulated dealers: the in-process one of ``table-controller sim``
(:mod:`table_controller.sim.dealer`) and the soak's remote one
(:mod:`table_controller.soak.dealer`). The policy sees the table through a
:class:`TableLink` (its status, its typed events, the panel's buttons, the supervisor's
resume and void, the camera's layout) and handles cards through :class:`ShoeHands`;
each dealer supplies the two for its transport. What the policy does:

* **idle**: clears the layout, loads a new shoe when one is due (:func:`shoe_is_due`),
  else presses *start round*;
* **betting**: waits the dealer's betting time, then presses *close betting* (or,
  now and then, lets the countdown close it);
* **dealing**: once the gate is open, draws the next card (or makes one of its
  :data:`FAULT_ORDER` mistakes), lays it on the layout, and waits until the table took
  it; a line reader's card that does not show is a misdeal, and the dealer calls it;
* **paused**: answers as the floor supervisor does (:func:`supervisor_answer`);
* **closed**: loads a new shoe (the cut card came out, or the shoe is empty).

A look at the table that gets no answer (a controller being restarted) is waited out.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

import msgspec

from table_controller.client import ClientItem, Snapshot
from table_controller.errors import TableError
from table_controller.event_types import (
    Alert,
    BettingClosed,
    CardDealt,
    Heartbeat,
    RoundResult,
    RoundStarted,
    RoundVoided,
    ShoeChanged,
    TableStateChanged,
)
from table_controller.rules.cards import parse_card
from table_controller.rules.game import Game

log = logging.getLogger(__name__)

#: Dealer faults, in the order they are tried for each card.
FAULT_ORDER = (
    "unplug", "dropped", "misdeal", "void", "lid", "noread", "blackout", "mismatch", "misplace", "exposed",
)
#: Faults that need a camera over the layout.
CAMERA_FAULTS = frozenset({"blackout", "mismatch", "misplace", "exposed"})
#: The pause each fault causes (what the dealer waits to see after making it).
FAULT_CAUSES = {
    "void": "void-request", "lid": "lid-open", "misdeal": "lid-open", "noread": "no-read",
    "blackout": "camera-down", "mismatch": "source-mismatch",
}
BLACKOUT_SECONDS = 3.0
UNPLUG_SECONDS = 2.5
CARD_WAIT = 20.0  # longest a drawn card may take to show (an unplugged cable: 2.5 s + recovery)
LOST_LINE_SECONDS = 2.0  # line readers: a card not shown this long is lost; the dealer calls a misdeal
CLEAR_SECONDS = 0.2  # the camera sees a cleared layout (15 fps: three frames)
#: A line reader's eight-deck shoe is changed when this few cards are left (where the cut
#: card would be; a line reader does not report it).
CUT_CARDS_FROM_END = 16

TableItem = ClientItem  # a typed event, or a snapshot that replaces what the dealer knew


class DealerTimeout(TableError, TimeoutError):
    """The table did not do what the dealer waited for."""


class TableStatus(msgspec.Struct, frozen=True, kw_only=True):
    """The table as the dealer looks at it: the control socket's ``status`` reply, typed.

    ``fresh_shoe``: no card has left the current shoe yet; None when the link cannot
    tell (the control socket does not say), and the dealer goes by what it did itself.
    """

    state: str
    reason: str | None = None
    round: str | None = None
    next_position: str | None = None
    next_index: int | None = None
    awaiting: Literal["card"] | None = None
    cause: str | None = None
    shoe_card: str | None = None
    fresh_shoe: bool | None = None


class TableLink(Protocol):
    """The dealer's and supervisor's way to one table, whatever carries it."""

    def status(self) -> TableStatus | None:
        """The table's status; None when it does not answer (it is being restarted)."""

    def press(self, button: str) -> None:
        """Press a panel button (``start_round``, ``close_betting``, ``card_dropped``, ``void_request``)."""

    def resume(self, card: str | None = None) -> bool | None:
        """The supervisor resumes (with ``card``: confirms that card by hand); False when
        refused, None when unanswered."""

    def void(self, reason: str) -> bool | None:
        """The supervisor voids the round; False when refused, None when unanswered."""

    def new_shoe(self) -> bool | None:
        """The supervisor tells the table of a new shoe (a reader that cannot say so);
        False when refused, None when unanswered."""

    def lay(self, slot: str | None, code: str) -> None:
        """Lay a card on a layout slot (None: off every position) under the camera."""

    def clear(self) -> None:
        """Clear the layout."""

    def dark(self, on: bool) -> bool:
        """Cover (``on``) or uncover the camera's lens; False when the table did not answer."""

    def wait_for(self, predicate: Callable[[TableItem], bool], timeout: float) -> TableItem | None:
        """The first event (or snapshot) matching ``predicate`` within ``timeout``, else None."""

    def drain(self) -> None:
        """Forget what arrived so far, so that a wait sees only what the next action causes."""


class ShoeHands(Protocol):
    """The dealer's hands on the shoe."""

    @property
    def announces_new_shoe(self) -> bool:
        """The shoe tells the table of a new shoe itself (a line reader does not)."""

    @property
    def exactly_once(self) -> bool:
        """Every card the shoe gives reaches the table (a line reader may lose a line)."""

    def wait_gate_open(self, timeout: float) -> bool:
        """True once the gate is open (a reader without a gate: at once)."""

    def draw(self, round_id: str | None, fault: str | None = None) -> str | None:
        """Pull a card (``fault``: the mistake it is part of); its code, or None (gate locked, empty)."""

    def draw_unread(self, round_id: str | None) -> str | None:
        """Pull a card that leaves the shoe unread; its true code, or None."""

    def last_unread(self) -> str | None:
        """The true code of the last card that left unread (what the supervisor turns over)."""

    def set_lid(self, is_open: bool) -> None:
        """Open or close the shoe's lid."""

    def unplug(self, seconds: float) -> None:
        """Pull the shoe's cable for ``seconds``."""

    def load(self, decks: int, cut_at: int | None) -> bool:
        """Load a freshly shuffled shoe; True when the hands know the table has taken it
        (else the dealer waits for the table's ``shoe`` event)."""

    def cards_left(self) -> int | None:
        """Cards left in the shoe, for a dealer who watches for where the cut card would be;
        None when the shoe reports the cut card itself."""


# ---------------------------------------------------------------------- the decisions
@dataclass(frozen=True)
class Resume:
    """The supervisor resumes the round (``card``: enters that card by hand)."""

    card: str | None = None


@dataclass(frozen=True)
class Void:
    """The supervisor voids the round."""

    reason: str


@dataclass(frozen=True)
class WaitForLink:
    """The supervisor waits: the table resumes by itself once the shoe link is back."""


SupervisorAnswer = Resume | Void | WaitForLink


def supervisor_answer(status: TableStatus, unread: str | None) -> SupervisorAnswer:
    """What the floor supervisor does with a paused round; ``unread``: the true code of
    the card that left the shoe unread, if the supervisor has it."""
    cause = status.cause
    if cause == "shoe-link-down":
        return WaitForLink()
    if status.awaiting == "card" and cause == "no-read" and unread is not None:
        return Resume(card=unread)  # the supervisor turns the unread card over
    if status.awaiting == "card" and cause == "source-mismatch" and status.shoe_card:
        # the shoe is the truth of which card came out: the supervisor confirms it by hand
        return Resume(card=status.shoe_card)
    if status.awaiting == "card" or cause == "void-request":
        return Void(reason=f"supervisor voided after {cause}")
    return Resume()  # lid closed again, camera back: the round goes on


def shoe_is_due(
    status: TableStatus, game: Game, *, fresh: bool, cards_left: int | None,
    cut_cards_from_end: int = CUT_CARDS_FROM_END,
) -> bool:
    """Whether the dealer loads a new shoe between rounds (a closed table always wants one).

    A single-deck game is shuffled every round, and a reader that reports no cut card is
    changed where the cut card would be — but never a shoe nothing was dealt from
    (``fresh``).
    """
    if status.state != "idle" or fresh:
        return False
    if game.shuffle_every_round:
        return True
    return cards_left is not None and game.decks > 1 and cards_left <= cut_cards_from_end


def card_taken(code: str, *, line: bool = False) -> Callable[[TableItem], bool]:
    """Whether an event shows that the table took (or reacted to) the card ``code``.

    A shoe-link outage is no reaction: the card arrives when the link is back. With
    ``line`` (a plain line reader's card) a ``device-fault`` pause is no reaction either:
    it is the table saying that a card may be lost (a restarted controller, a reader port
    opened again), not that it read this one; the dealer must still look for the card.
    """

    def taken(item: TableItem) -> bool:
        match item:
            case CardDealt():
                # not a card a supervisor entered by hand: an 8-deck shoe has 8 of each code
                return item.code == code and item.source != "manual"
            case Snapshot():
                state = item.state.state if item.state is not None else None
                return state not in ("dealing", "paused") or any(
                    isinstance(e, CardDealt) and e.code == code for e in item.round
                )
            case Alert():
                return item.kind == "wrong-order" and code in item.detail
            case RoundVoided():
                return True
            case TableStateChanged():
                return item.state == "paused" and item.cause not in (
                    ("shoe-link-down", "device-fault") if line else ("shoe-link-down",)
                )
        return False

    return taken


def _table_moved(item: TableItem) -> bool:
    return isinstance(item, TableStateChanged | Snapshot)


@dataclass
class DealerStats:
    """What the dealer did."""

    cards: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    misdeal_calls: int = 0


class DealerNotes:
    """Where the dealer reports what it did (the soak keeps a record for its checker)."""

    def round_started(self, round_id: str) -> None:
        """The table started a round the dealer had not seen."""

    def fault(self, kind: str, round_id: str) -> None:
        """The dealer made mistake ``kind`` in ``round_id``."""

    def misdeal_called(self, round_id: str) -> None:
        """The dealer called a misdeal for a card that did not show."""


class DealingPolicy:
    """One dealer and floor supervisor at one table: :meth:`look`, then :meth:`act` on it.

    ``betting_seconds``: how long the dealer leaves betting open before pressing *close
    betting* (a table announces this time); ``countdown_share``: the share of rounds in
    which the dealer does not press but lets the table's countdown close betting;
    ``fault_rates``: kind -> probability per card (kinds of :data:`FAULT_ORDER`);
    ``pace``: seconds between two cards (the dealer's hand).
    """

    def __init__(
        self,
        game: Game,
        link: TableLink,
        shoe: ShoeHands,
        *,
        rng: random.Random,
        betting_seconds: float = 0.0,
        countdown_share: float = 0.0,
        countdown_seconds: float = 0.0,
        fault_rates: Mapping[str, float] | None = None,
        pace: float = 0.0,
        camera: bool = False,
        cut_cards_from_end: int = CUT_CARDS_FROM_END,
        timeout: float = 30.0,
        notes: DealerNotes | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        self.game = game
        self.link = link
        self.shoe = shoe
        self.rng = rng
        self.betting_seconds = betting_seconds
        self.countdown_share = countdown_share
        self.countdown_seconds = countdown_seconds
        self.fault_rates = dict(fault_rates or {})
        self.pace = pace
        self.camera = camera
        self.cut_cards_from_end = cut_cards_from_end
        self.timeout = timeout
        self.notes = notes or DealerNotes()
        self.stop = stop or threading.Event()
        self.stats = DealerStats()
        self.rounds_seen: list[str] = []
        #: what the dealer knows of the shoe when the link cannot say: it powered on loaded
        self.fresh_shoe = True
        self._pulled: list[str] = []  # this round's cards, in the order the dealer pulled them
        self._pulled_in: str | None = None  # ... and that round
        self._dark_until: float | None = None

    # ------------------------------------------------------------------ the loop
    def look(self) -> TableStatus | None:
        """The table's status (None: no answer); notes a round the dealer had not seen."""
        if self._dark_until is not None and time.monotonic() >= self._dark_until:
            if self.link.dark(False):
                self._dark_until = None
        status = self.link.status()
        if status is not None and status.round is not None and status.round not in self.rounds_seen:
            self.rounds_seen.append(status.round)
            self.fresh_shoe = False
            self.notes.round_started(status.round)
        return status

    def act(self, status: TableStatus | None) -> None:
        """Do the one thing the dealer does next at a table in ``status``."""
        if status is None:
            self.link.wait_for(lambda e: True, 1.0)  # the controller is (re)starting
        elif status.state == "idle":
            self.start_round(status)
        elif status.state == "betting":
            self.close_betting()
        elif status.state == "dealing":
            self.deal(status)
        elif status.state == "paused":
            self.supervise(status)
        elif status.state == "closed":
            self.load_shoe()  # the cut card came out, or the shoe is empty
        else:  # result: wait for idle
            self.link.wait_for(_table_moved, 2.0)

    def step(self) -> TableStatus | None:
        """Look, then act; returns what the dealer saw."""
        status = self.look()
        self.act(status)
        return status

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.stop.wait(seconds)

    # ------------------------------------------------------------------ states
    def start_round(self, status: TableStatus) -> None:
        """Clear the layout; load a shoe that is due, else press *start round*."""
        if self.camera:
            self.link.clear()
            # ... which takes a hand longer than a camera frame: the camera must see the
            # empty layout, or the next round's card on a slot that held the same code
            # would look like the card that never left.
            self._sleep(CLEAR_SECONDS)
        fresh = status.fresh_shoe if status.fresh_shoe is not None else self.fresh_shoe
        if shoe_is_due(status, self.game, fresh=fresh, cards_left=self.shoe.cards_left(),
                       cut_cards_from_end=self.cut_cards_from_end):
            self.load_shoe()
            return
        self.link.drain()
        self.link.press("start_round")
        self.link.wait_for(_round_opened, 3.0)

    def close_betting(self) -> None:
        """Leave betting open for the dealer's betting time, then close it (or let the countdown)."""
        if self.countdown_share > 0 and self.rng.random() < self.countdown_share:
            wait = self.countdown_seconds + 3.0
        else:
            if self.link.wait_for(lambda e: _betting_over(e), self.betting_seconds) is not None:
                return
            self.link.press("close_betting")
            wait = 3.0
        self.link.wait_for(_betting_over, wait)

    def load_shoe(self) -> None:
        """Load a new shoe and wait until the table has it; a reader that cannot say so
        has the supervisor tell the table (``new-shoe``) until it answers."""
        decks = self.game.decks
        cut_at = 52 * decks - self.cut_cards_from_end if decks > 1 else None
        self.link.drain()
        taken = self.shoe.load(decks, cut_at)
        if not self.shoe.announces_new_shoe:
            self.announce_new_shoe()
        elif not taken and self.link.wait_for(_new_shoe, self.timeout) is None:
            raise DealerTimeout(f"the table did not take the new shoe within {self.timeout:.0f} s")
        self.fresh_shoe = True

    def announce_new_shoe(self) -> None:
        """As floor supervisor, tell the table of a new shoe until it answers (a controller
        being restarted does not). Raises DealerTimeout when it refuses or never answers."""
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self.link.new_shoe()
            if answer:
                return
            if answer is False:
                raise DealerTimeout("the table refused the supervisor's new shoe")
            if self.stop.wait(0.2):
                return
            if time.monotonic() > deadline:
                raise DealerTimeout(f"the table did not take a new shoe within {self.timeout:.0f} s")

    # ------------------------------------------------------------------ dealing
    def deal(self, status: TableStatus) -> None:
        """Draw the next card (or make a mistake) and wait until the table took it."""
        if not self.shoe.wait_gate_open(2.0):
            return  # the controller has not unlocked it (yet): look again
        slot = self.next_slot(status)
        if slot is None and status.next_position not in (None, "burn"):
            # The cards this dealer pulled complete the round; the table is still confirming
            # them (the camera): a dealer does not pull another card, they wait.
            moved = self.link.wait_for(
                lambda e: isinstance(e, RoundResult | RoundVoided | TableStateChanged | Snapshot),
                LOST_LINE_SECONDS if self._line_only else 2.0,
            )
            if moved is None and self._line_only:
                # A line reader's table has nothing to confirm: it still wants a card because
                # one the dealer pulled never reached it (a lost line taken for another card of
                # its code). It would wait for that card for ever: the dealer calls the misdeal.
                self._call_missing_card(status.round, self.link.status())
            return
        if status.round is not None and self._maybe_fault(status):
            return
        code = self.shoe.draw(status.round)
        if code is None:
            return
        self.stats.cards += 1
        self._pulled_for(slot, code)
        self._lay(slot, code)
        if self.shoe.exactly_once:
            if self.link.wait_for(card_taken(code), CARD_WAIT) is None:
                log.warning("card %s did not show within %.0f s", code, CARD_WAIT)
        else:
            self._wait_line_card(code, status.round)
        self._sleep(self.pace)  # the dealer's hand, not a wait for the table

    def next_slot(self, status: TableStatus) -> tuple[str, int] | None:
        """Where the next card goes (None for a burn card, or when the cards the dealer
        pulled complete the round), as a dealer knows it.

        A dealer lays cards by the dealing plan and the cards already pulled in this
        round, not by what the table has confirmed so far: the camera may still be
        confirming (or be dark for) the last card, so the table's own "next position"
        can be a card behind.
        """
        if status.next_position in (None, "burn"):
            return None
        if status.round != self._pulled_in:
            self._pulled_in, self._pulled = status.round, []
        deal = self.game.new_deal()
        for code in self._pulled:
            if deal.next_position is None:
                return None  # more cards pulled than the round takes: the table will void it
            deal.place(parse_card(code))
        position = deal.next_position
        if position is None:
            return None
        return position, len(deal.hands[position])

    def _pulled_for(self, slot: tuple[str, int] | None, code: str) -> None:
        """Remember a card pulled for the round's layout (burn cards are not laid)."""
        if slot is not None:
            self._pulled.append(code)

    def _lay(self, slot: tuple[str, int] | None, code: str) -> None:
        if self.camera and slot is not None:
            self.link.lay(slot_name(*slot), code)

    def _wait_line_card(self, code: str, round_id: str | None) -> None:
        """A line reader's card: one that does not show is lost, and the dealer calls the
        misdeal (*card dropped*) if its round is still in play.

        A controller that is down (killed) reads a line when it is back, or never (it
        read the line but died before journaling it): the dealer first waits for it to
        answer again, then gives the card ``LOST_LINE_SECONDS`` more.
        """
        taken = card_taken(code, line=True)
        if self.link.wait_for(taken, LOST_LINE_SECONDS) is not None:
            return
        deadline = time.monotonic() + self.timeout
        was_down = False
        while (status := self.link.status()) is None:
            was_down = True
            if self.link.wait_for(taken, 1.0) is not None:
                return
            if self.stop.is_set() or time.monotonic() > deadline:
                return
        if was_down:
            if self.link.wait_for(taken, LOST_LINE_SECONDS) is not None:
                return
            status = self.link.status()
        self._call_missing_card(round_id, status)

    @property
    def _line_only(self) -> bool:
        """The table's only card source is a line reader (no camera confirms its cards)."""
        return not self.shoe.exactly_once and not self.camera

    def _call_missing_card(self, round_id: str | None, status: TableStatus | None) -> None:
        """Press *card dropped* for a card of ``round_id`` that the table did not get, while
        that round is in play (``status``), until the table voids it (at most 3 times)."""
        for _ in range(3):
            if not (
                status is not None
                and status.state in ("dealing", "paused")
                and round_id is not None
                and status.round == round_id
                and status.next_position != "burn"
            ):
                return  # its round is over (or it was a burn card): nothing to call
            log.info("round %s: a card the dealer pulled did not show: card dropped", round_id)
            self.stats.misdeal_calls += 1
            self.notes.misdeal_called(round_id)
            self.link.press("card_dropped")
            if self.link.wait_for(
                lambda e: isinstance(e, Snapshot) or (isinstance(e, RoundVoided) and e.round == round_id), 3.0
            ) is not None:
                return
            status = self.link.status()

    # ------------------------------------------------------------------ faults
    def _maybe_fault(self, status: TableStatus) -> bool:
        for kind in FAULT_ORDER:
            if kind in CAMERA_FAULTS and not self.camera:
                continue
            rate = self.fault_rates.get(kind, 0.0)
            if rate > 0 and self.rng.random() < rate:
                return self._inject(kind, status)
        return False

    def _inject(self, kind: str, status: TableStatus) -> bool:
        """Make mistake ``kind``; False when it could not be made (the gate closed)."""
        round_id = status.round
        assert round_id is not None
        if kind in ("noread", "mismatch", "misplace", "exposed"):
            slot = self.next_slot(status)
            code = (
                self.shoe.draw_unread(round_id) if kind == "noread" else self.shoe.draw(round_id, fault=kind)
            )
            if code is None:
                return False  # the gate closed under the dealer's hand: nothing happened
            self.stats.cards += 1
            self._note_fault(kind, round_id)
            self._pulled_for(slot, code)  # the round takes the shoe's card, whatever was laid
            if kind == "noread":
                self._lay(slot, code)  # the camera may read what the shoe could not
            elif kind == "mismatch":
                self._lay(slot, "2C" if code != "2C" else "3D")  # not the card the shoe read
            elif kind == "misplace" and slot is not None:
                others = [p for p in self.game.positions if p not in (slot[0], "first")]
                self._lay((self.rng.choice(others), 0), code)
            else:
                self.link.lay(None, code)  # off every position: an exposed card
            self._wait_effect(kind, code)
            return True
        self._note_fault(kind, round_id)
        if kind == "unplug":
            self.shoe.unplug(UNPLUG_SECONDS)
            return True  # the dealer keeps dealing: cards drawn meanwhile arrive later
        if kind == "blackout":
            self.link.dark(True)
            self._dark_until = time.monotonic() + BLACKOUT_SECONDS  # the next look lights it again
        elif kind == "dropped":
            self.link.press("card_dropped")
        elif kind == "void":
            self.link.press("void_request")
        elif kind == "lid":
            self.shoe.set_lid(True)
            self.shoe.set_lid(False)
        elif kind == "misdeal":
            # The lid opens (the table pauses) and the dealer pulls a card before the gate locks.
            self.shoe.set_lid(True)
            if self.shoe.draw(round_id, fault="misdeal") is not None:
                self.stats.cards += 1
            self.shoe.set_lid(False)
        self._wait_effect(kind, None)
        return True

    def _note_fault(self, kind: str, round_id: str) -> None:
        self.stats.faults[kind] = self.stats.faults.get(kind, 0) + 1
        self.notes.fault(kind, round_id)

    def _wait_effect(self, kind: str, code: str | None) -> None:
        """Wait until the table reacted to the fault (a link outage delays it, never hides it)."""
        cause = FAULT_CAUSES.get(kind)

        def reacted(item: TableItem) -> bool:
            if isinstance(item, RoundVoided | Snapshot):
                return True
            if isinstance(item, TableStateChanged) and cause is not None:
                return item.cause == cause
            # a misplaced or exposed card: the table takes it, or says what is wrong
            return cause is None and code is not None and (
                isinstance(item, Alert) or card_taken(code)(item)
            )

        if self.link.wait_for(reacted, CARD_WAIT) is None:
            log.warning("no reaction to fault %s within %.0f s", kind, CARD_WAIT)

    # ------------------------------------------------------------------ supervisor
    def supervise(self, status: TableStatus) -> None:
        """What the floor supervisor does with a paused round (:func:`supervisor_answer`)."""
        answer = supervisor_answer(status, self.shoe.last_unread())
        if isinstance(answer, Resume):
            self.link.resume(answer.card)
        elif isinstance(answer, Void):
            self.link.void(answer.reason)
        # A refused resume (the table still sees the lid open): look again after a heartbeat.
        self.link.wait_for(lambda e: isinstance(e, TableStateChanged | Snapshot | Heartbeat), 2.0)


def _round_opened(item: TableItem) -> bool:
    # Not any state change: the table's move to idle may still be on its way to the
    # listeners when the dealer, who saw idle, presses; it would look like the answer.
    return isinstance(item, RoundStarted | Snapshot | Alert) or (
        isinstance(item, TableStateChanged) and item.state != "idle"
    )


def _betting_over(item: TableItem) -> bool:
    return isinstance(item, BettingClosed | Snapshot) or (
        isinstance(item, TableStateChanged) and item.state != "betting"
    )


def _new_shoe(item: TableItem) -> bool:
    return isinstance(item, ShoeChanged) and item.event == "new"


def slot_name(position: str, index: int) -> str:
    """The layout slot of (position, index); ``first`` has a single slot of that name."""
    from calibration.layout import slot_name as layout_slot

    return position if position == "first" else layout_slot(position, index)
