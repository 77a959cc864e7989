"""A simulated dealer and floor supervisor.

The dealer does what a person at the table does: loads the shoe, presses the
panel's buttons (gpiozero mock pins), draws a card when the gate is open and
waits until the controller has taken it before drawing the next. The
supervisor answers pauses the way a floor supervisor would: confirms the card
that the shoe could not read, resumes after device trouble, voids otherwise.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from firmware_interfaces.shoe.guarantees import SMART_SHOE
from table_controller.errors import TableError
from table_controller.event_types import (
    Alert,
    CardDealt,
    Event,
    Heartbeat,
    RoundResult,
    RoundVoided,
    ShoeChanged,
    TableStateChanged,
)
from table_controller.rules.cards import CODES, shuffled_shoe
from table_controller.rules.game import Game
from table_controller.table import inputs as i
from table_controller.table.machine import IllegalInput

log = logging.getLogger(__name__)


def _entered(event: Event, *states: str) -> bool:
    """``event`` says the table entered one of ``states``."""
    return isinstance(event, TableStateChanged) and event.state in states


class DealerTimeout(TableError, TimeoutError):
    """The table did not do what the simulated dealer waited for."""


@dataclass
class DealerFaults:
    """Mistakes the simulated dealer makes on purpose (probabilities per card or round)."""

    dropped: float = 0.0  # presses "card dropped" after a card
    void_request: float = 0.0  # asks for a void during a round
    lid: float = 0.0  # opens the shoe's lid mid-round (per card)
    noread: float = 0.0  # a card leaves the gate unread (per card)
    misplace: float = 0.0  # lays a card at the wrong position (camera tables)
    exposed: float = 0.0  # lays a card off every position (camera tables)
    blackout: float = 0.0  # the camera goes dark for a few seconds (camera tables)

    KEYS = ("dropped", "void_request", "lid", "noread", "misplace", "exposed", "blackout")
    CAMERA_KEYS = ("misplace", "exposed", "blackout")


@dataclass
class DealerStats:
    """What the dealer did, for the simulated table's report."""

    rounds: int = 0
    results: int = 0
    voids: int = 0
    cards: int = 0
    faults: dict[str, int] = field(default_factory=dict)


class EventWatch:
    """The controller's events as the dealer sees them (a display's view)."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Event] = queue.Queue()
        self.state = "idle"

    def __call__(self, event: Event) -> None:
        self._queue.put(event)

    def wait(self, predicate: Callable[[Event], bool], timeout: float, what: str) -> Event:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DealerTimeout(f"simulated dealer waited {timeout:.0f} s for {what}; table is {self.state}")
            try:
                event = self._queue.get(timeout=left)
            except queue.Empty:
                continue
            if isinstance(event, TableStateChanged):
                self.state = event.state
            if predicate(event):
                return event


class SimulatedDealer:
    """Deals rounds on a simulated table through the mock panel and the simulated shoe."""

    #: How long the dealer waits for a line reader's card to show before calling a misdeal.
    LOST_LINE_SECONDS = 2.0

    def __init__(
        self,
        game: Game,
        shoe: Any,
        controller: Any,
        press: Callable[[str], None],
        *,
        pace: float = 0.5,
        betting_seconds: float = 1.0,
        seed: int | None = None,
        faults: DealerFaults | None = None,
        cut_cards_from_end: int = 16,
        timeout: float = 30.0,
        camera: Any = None,
    ) -> None:
        self.game = game
        self.shoe = shoe
        self.controller = controller
        self.press = press
        self.pace = pace
        self.betting_seconds = betting_seconds
        self.rng = random.Random(seed)
        self.faults = faults or DealerFaults()
        self.cut_cards_from_end = cut_cards_from_end
        self.timeout = timeout
        self.camera = camera  # a SimulatedCamera: the dealer lays each card where it goes
        self.watch = EventWatch()
        self.stats = DealerStats()
        controller.listeners.append(self.watch)

    # ------------------------------------------------------------------ the shoe
    def load_shoe(self) -> None:
        """Shuffle and load a new shoe; for baccarat, draw the burn cards."""
        cards = [CODES[c] for c in shuffled_shoe(self.game.decks, self.rng)]
        self.shoe.load(cards, decks=self.game.decks, cut_at=self.cut_position())
        self.take_loaded_shoe()

    def cut_position(self) -> int | None:
        """Where the dealer places the cut card (multi-deck shoes only)."""
        return 52 * self.game.decks - self.cut_cards_from_end if self.game.decks > 1 else None

    def take_loaded_shoe(self) -> None:
        """Wait for the table to see the shoe that was just loaded; for baccarat, burn.

        A reader that does not report a new shoe (a line reader) has the supervisor tell
        the table, as ``supervise new-shoe`` does at a real table.
        """
        if not getattr(self.shoe, "announces_new_shoe", True):
            self.controller.request(i.ShoeNew(self.game.decks, announced_by="sim supervisor"))
        self.watch.wait(lambda e: isinstance(e, ShoeChanged) and e.event == "new", self.timeout, "the new shoe")
        if self.controller.machine.burns:
            while self.controller.machine.burning:
                self._draw_one()
                if self.controller.machine.burning:
                    time.sleep(self.pace)
            self.watch.wait(
                lambda e: _entered(e, "idle", "closed"),
                self.timeout, "the end of the burn",
            )

    # ------------------------------------------------------------------ a round
    def play_round(self, stop: threading.Event) -> str:
        """Deal one round; returns ``result`` or ``void``."""
        m = self.controller.machine
        # A reader without a cut card report: the dealer sees the cut card and changes the shoe.
        silent_cut = not getattr(self.shoe, "announces_new_shoe", True) and self.game.decks > 1 \
            and self.shoe.remaining <= self.cut_cards_from_end
        if m.state == "closed" or self.game.shuffle_every_round or silent_cut:
            self.load_shoe()
        self._start_betting()
        self.stats.rounds += 1
        self._sleep(self.betting_seconds, stop)
        if m.state == "betting":
            self.press("close_betting")
        end = self._deal(stop)
        if self.camera is not None:
            self.camera.clear()  # the dealer clears the layout
        if end == "result":
            self.stats.results += 1
        else:
            self.stats.voids += 1
        self.watch.wait(
            lambda e: _entered(e, "idle", "closed"), self.timeout,
            "the table to go idle",
        )
        return end

    def _start_betting(self) -> None:
        """Press start until betting opens: a press while the shoe link is down (a pulled
        cable) is refused with a buzz, and a dealer presses again once the table is ready."""
        deadline = time.monotonic() + self.timeout
        while True:
            self.controller.link_ready.wait(max(0.0, deadline - time.monotonic()))
            self.press("start_round")
            try:
                self.watch.wait(lambda e: _entered(e, "betting"),
                                min(5.0, max(0.1, deadline - time.monotonic())), "betting")
                return
            except DealerTimeout:
                if time.monotonic() >= deadline:
                    raise

    def _deal(self, stop: threading.Event) -> str:
        while not stop.is_set():
            event = self.watch.wait(
                lambda e: isinstance(e, RoundResult | RoundVoided) or _entered(e, "dealing", "paused"),
                self.timeout, "dealing",
            )
            if isinstance(event, RoundResult):
                return "result"
            if isinstance(event, RoundVoided):
                return "void"
            if isinstance(event, TableStateChanged) and event.state == "paused":
                self._supervise(event)
                continue
            while self.controller.machine.state == "dealing" and not stop.is_set():
                if not self._gate_open_while_dealing(stop):
                    break  # a card already on its way ended the round: the gate stays locked
                if self._maybe_fault():
                    break
                self._draw_one()
                self._sleep(self.pace, stop)
        return "void"

    def _gate_open_while_dealing(self, stop: threading.Event) -> bool:
        """Wait for the gate to open; False as soon as the table stops dealing (a card drawn
        before a cable pull can arrive late and end the round, and then the gate rightly
        stays locked). Raises DealerTimeout when the table deals and the gate stays shut."""
        deadline = time.monotonic() + self.timeout
        while not self.shoe.wait_gate(False, 0.1):
            if self.controller.machine.state != "dealing" or stop.is_set():
                return False
            if time.monotonic() > deadline:
                raise DealerTimeout("the shoe's gate did not open for dealing")
        return True

    def _draw_one(self) -> None:
        if not self._gate_open_while_dealing(threading.Event()):
            return
        slot = self._next_slot()
        code = self.shoe.draw()
        if code is None:
            return
        if self.camera is not None and slot is not None:
            self._lay(slot, code)
        self.stats.cards += 1
        def taken(e: Event) -> bool:
            return (
                (isinstance(e, CardDealt) and e.code == code and e.source != "manual")
                or isinstance(e, Alert | RoundVoided) or _entered(e, "paused")
            )

        if getattr(self.shoe, "guarantees", SMART_SHOE).exactly_once:
            self.watch.wait(taken, self.timeout, f"the table to take card {code}")
            return
        # A line reader may lose the line: the dealer sees the display did not take the card
        # and calls the misdeal (card dropped), as at a real table.
        try:
            self.watch.wait(taken, self.LOST_LINE_SECONDS, f"the table to take card {code}")
        except DealerTimeout:
            self.stats.faults["lost-line"] = self.stats.faults.get("lost-line", 0) + 1
            self.press("card_dropped")

    def _next_slot(self) -> tuple[str, int] | None:
        """Where the rules call the next card (the dealer reads it off the display)."""
        m = self.controller.machine
        position = m.next_position
        if position is None or position == "burn" or m.deal is None:
            return None
        return position, len(m.deal.hands[position])

    def _lay(self, slot: tuple[str, int], code: str) -> None:
        """Lay a card on the layout slot of (position, index)."""
        from table_controller.sim.camera import slot_for

        self.camera.place(slot_for(self.camera, *slot), code)

    def _camera_fault(self, kind: str) -> bool:
        slot = self._next_slot()
        if slot is None:
            return False
        code = self.shoe.draw()
        if code is None:
            return False
        self.stats.cards += 1
        if kind == "misplace":
            others = [p for p in self.game.positions if p not in (slot[0], "first")]
            self._lay((self.rng.choice(others), 0), code)
        else:
            self.camera.place(None, code)
        return True

    def _maybe_fault(self) -> bool:
        for kind in DealerFaults.KEYS:
            if kind in DealerFaults.CAMERA_KEYS and self.camera is None:
                continue
            if self.rng.random() < getattr(self.faults, kind):
                self.stats.faults[kind] = self.stats.faults.get(kind, 0) + 1
                if kind == "dropped":
                    self.press("card_dropped")
                elif kind == "void_request":
                    self.press("void_request")
                elif kind == "lid":
                    self.shoe.set_lid(True)
                    self.shoe.set_lid(False)
                elif kind == "noread" and not self.shoe.draw_noread():
                    return False  # the gate closed under the dealer's hand: nothing happened
                elif kind in ("misplace", "exposed") and not self._camera_fault(kind):
                    return False
                elif kind == "blackout":
                    self.camera.blackout(True)
                    threading.Timer(3.0, self.camera.blackout, args=(False,)).start()
                return True
        return False

    # ------------------------------------------------------------------ supervisor
    def _supervise(self, paused: TableStateChanged) -> None:
        """What the floor supervisor does with a paused round."""
        cause = paused.cause
        try:
            if cause == "shoe-link-down":
                return  # resumes by itself when the link is back
            if paused.awaiting == "card" and cause == "no-read":
                card = self.shoe.unread[-1]  # the supervisor turns the unread card over
                self.controller.request(i.SupervisorResume(by="sim supervisor", card=card))
            elif paused.awaiting == "card" and cause == "source-mismatch" and isinstance(paused.shoe_card, str):
                # the shoe is the truth of which card came out: the supervisor confirms it by hand
                self.controller.request(i.SupervisorResume(by="sim supervisor", card=paused.shoe_card))
            elif paused.awaiting == "card" or cause == "void-request":
                reason = f"supervisor voided after {cause}"
                self.controller.request(i.SupervisorVoid(by="sim supervisor", reason=reason))
            else:
                self._resume_once_lid_closed()
        except TableError as e:
            log.warning("sim supervisor: %s", e)

    def _resume_once_lid_closed(self) -> None:
        """Resume; while the table still sees the lid open (LID CLOSED on its way), retry after a heartbeat."""
        for _ in range(10):
            try:
                self.controller.request(i.SupervisorResume(by="sim supervisor"))
                return
            except IllegalInput as e:
                if "lid is open" not in str(e):
                    raise
                self.watch.wait(lambda e: isinstance(e, Heartbeat), self.timeout, "a heartbeat")

    def _sleep(self, seconds: float, stop: threading.Event) -> None:
        if seconds > 0:
            stop.wait(seconds)
