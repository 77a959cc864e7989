"""The simulated dealer of ``table-controller sim``: the dealing policy on the table in this process.

The dealer does what a person at the table does: loads the shoe, presses the
panel's buttons (gpiozero mock pins), draws a card when the gate is open and
waits until the controller has taken it before drawing the next; as floor
supervisor it answers pauses through the controller's requests. What it does
when is :class:`~table_controller.sim.dealing.DealingPolicy`, the same policy as
the soak's remote dealer; here it sees the table through an :class:`InProcessLink`
(the controller's machine and listeners) and handles the simulated shoe through
:class:`SimulatedShoeHands`.
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
from table_controller.event_types import Event, RoundResult, RoundVoided, ShoeChanged, TableStateChanged
from table_controller.rules.cards import CODES, shuffled_shoe
from table_controller.rules.game import Game
from table_controller.sim.dealing import (
    DealerTimeout,
    DealingPolicy,
    TableItem,
    TableStatus,
)
from table_controller.table import inputs as i

__all__ = ["DealerFaults", "DealerStats", "DealerTimeout", "EventWatch", "InProcessLink",
           "SimulatedDealer", "SimulatedShoeHands"]

log = logging.getLogger(__name__)


@dataclass
class DealerFaults:
    """Mistakes the simulated dealer makes on purpose (probabilities per card)."""

    dropped: float = 0.0  # presses "card dropped" after a card
    void_request: float = 0.0  # asks for a void during a round
    lid: float = 0.0  # opens the shoe's lid mid-round (per card)
    noread: float = 0.0  # a card leaves the gate unread (per card)
    misplace: float = 0.0  # lays a card at the wrong position (camera tables)
    exposed: float = 0.0  # lays a card off every position (camera tables)
    blackout: float = 0.0  # the camera goes dark for a few seconds (camera tables)

    KEYS = ("dropped", "void_request", "lid", "noread", "misplace", "exposed", "blackout")
    CAMERA_KEYS = ("misplace", "exposed", "blackout")

    def rates(self) -> dict[str, float]:
        """The dealing policy's fault rates (its kind ``void`` is this ``void_request``)."""
        return {("void" if k == "void_request" else k): float(getattr(self, k)) for k in self.KEYS}


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

    def wait_for(self, predicate: Callable[[TableItem], bool], timeout: float) -> Event | None:
        """The first event matching ``predicate`` within ``timeout``, else None."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                event = self._queue.get(timeout=left)
            except queue.Empty:
                continue
            if isinstance(event, TableStateChanged):
                self.state = event.state
            if predicate(event):
                return event

    def wait(self, predicate: Callable[[Event], bool], timeout: float, what: str) -> Event:
        """The first event matching ``predicate``; raises DealerTimeout naming ``what``."""
        event = self.wait_for(lambda e: isinstance(e, Event) and predicate(e), timeout)
        if event is None:
            raise DealerTimeout(f"simulated dealer waited {timeout:.0f} s for {what}; table is {self.state}")
        return event

    def drain(self) -> None:
        while True:
            try:
                event = self._queue.get_nowait()
            except queue.Empty:
                return
            if isinstance(event, TableStateChanged):
                self.state = event.state


class InProcessLink:
    """The table in this process: its machine's status, the mock panel, the controller's
    requests for the supervisor, the simulated camera, its events through a listener."""

    def __init__(self, controller: Any, press: Callable[[str], None], camera: Any = None) -> None:
        self.controller = controller
        self._press = press
        self.camera = camera
        self.watch = EventWatch()
        controller.listeners.append(self.watch)

    def status(self) -> TableStatus:
        m = self.controller.machine
        position = m.next_position
        return TableStatus(
            state=m.state, reason=m.reason, round=m.round_id, next_position=position,
            next_index=len(m.deal.hands[position]) if m.deal is not None and position in m.deal.hands else None,
            awaiting="card" if m.pause and m.pause.awaiting_card else None,
            cause=m.pause.cause if m.pause else None,
            shoe_card=m.pause.shoe_card if m.pause else None,
            fresh_shoe=bool(m.fresh_shoe),
        )

    def press(self, button: str) -> None:
        self._press(button)

    def _request(self, table_input: Any) -> bool:
        try:
            self.controller.request(table_input)
        except TableError as e:
            log.info("sim supervisor: %s", e)
            return False
        return True

    def resume(self, card: str | None = None) -> bool:
        return self._request(i.SupervisorResume(by="sim supervisor", card=card))

    def void(self, reason: str) -> bool:
        return self._request(i.SupervisorVoid(by="sim supervisor", reason=reason))

    def new_shoe(self) -> bool:
        return self._request(i.ShoeNew(self.controller.machine.game.decks, announced_by="sim supervisor"))

    def lay(self, slot: str | None, code: str) -> None:
        if self.camera is not None:
            self.camera.place(slot, code)

    def clear(self) -> None:
        if self.camera is not None:
            self.camera.clear()

    def dark(self, on: bool) -> bool:
        if self.camera is not None:
            self.camera.blackout(on)
        return True

    def wait_for(self, predicate: Callable[[TableItem], bool], timeout: float) -> TableItem | None:
        return self.watch.wait_for(predicate, timeout)

    def drain(self) -> None:
        self.watch.drain()


class SimulatedShoeHands:
    """The dealer's hands on a simulated shoe (or a test rig's shoe with the same hands)."""

    def __init__(self, shoe: Any, rng: random.Random) -> None:
        self.shoe = shoe
        self.rng = rng

    @property
    def announces_new_shoe(self) -> bool:
        return bool(getattr(self.shoe, "announces_new_shoe", True))

    @property
    def exactly_once(self) -> bool:
        return bool(getattr(self.shoe, "guarantees", SMART_SHOE).exactly_once)

    def wait_gate_open(self, timeout: float) -> bool:
        return bool(self.shoe.wait_gate(False, timeout))

    def draw(self, round_id: str | None, fault: str | None = None) -> str | None:
        code: str | None = self.shoe.draw()
        return code

    def draw_unread(self, round_id: str | None) -> str | None:
        return self.shoe.unread[-1] if self.shoe.draw_noread() else None

    def last_unread(self) -> str | None:
        unread: list[str] = self.shoe.unread
        return unread[-1] if unread else None

    def set_lid(self, is_open: bool) -> None:
        self.shoe.set_lid(is_open)

    def unplug(self, seconds: float) -> None:
        self.shoe.unplug(seconds)

    def load(self, decks: int, cut_at: int | None) -> bool:
        cards = [CODES[c] for c in shuffled_shoe(decks, self.rng)]
        self.shoe.load(cards, decks=decks, cut_at=cut_at)
        return False  # the table says so with its ``shoe`` event

    def cards_left(self) -> int | None:
        if self.announces_new_shoe:
            return None  # a smart shoe reports its cut card
        return int(self.shoe.remaining)


class SimulatedDealer:
    """Deals rounds on a simulated table through the mock panel and the simulated shoe."""

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
        """``shoe``: the simulated shoe (may be set later, before dealing); ``betting_seconds``:
        how long the dealer leaves betting open (what the table should announce)."""
        self.game = game
        self.controller = controller
        self.press = press
        self.camera = camera  # a SimulatedCamera: the dealer lays each card where it goes
        self.cut_cards_from_end = cut_cards_from_end
        self.rng = random.Random(seed)
        self.link = InProcessLink(controller, press, camera)
        self.watch = self.link.watch
        self.hands = SimulatedShoeHands(shoe, self.rng)
        self.stats = DealerStats()
        self._outcomes: dict[str, str] = {}
        controller.listeners.append(self._settled)
        # A table whose countdown ends before the dealer would press closes betting itself;
        # a press then races the countdown and is refused (a buzz, a warning).
        countdown = float(getattr(getattr(controller, "machine", None), "betting_seconds", betting_seconds + 1))
        self.policy = DealingPolicy(
            game, self.link, self.hands, rng=self.rng, betting_seconds=betting_seconds,
            countdown_share=1.0 if countdown <= betting_seconds else 0.0, countdown_seconds=countdown,
            fault_rates=(faults or DealerFaults()).rates(), pace=pace, camera=camera is not None,
            cut_cards_from_end=cut_cards_from_end, timeout=timeout,
        )

    @property
    def shoe(self) -> Any:
        return self.hands.shoe

    @shoe.setter
    def shoe(self, shoe: Any) -> None:
        self.hands.shoe = shoe

    def _settled(self, event: Event) -> None:
        if isinstance(event, RoundResult | RoundVoided) and event.round is not None:
            self._outcomes[event.round] = "result" if isinstance(event, RoundResult) else "void"

    def cut_position(self) -> int | None:
        """Where the dealer places the cut card (multi-deck shoes only)."""
        return 52 * self.game.decks - self.cut_cards_from_end if self.game.decks > 1 else None

    def load_shoe(self) -> None:
        """Shuffle and load a new shoe, and wait until the table took it (for baccarat, burnt)."""
        self.policy.load_shoe()

    def take_loaded_shoe(self) -> None:
        """Wait for the table to see the shoe that powered on loaded; for baccarat, burn.

        A reader that does not report a new shoe (a line reader) has the supervisor tell
        the table, as ``supervise new-shoe`` does at a real table.
        """
        if not self.hands.announces_new_shoe:
            self.policy.announce_new_shoe()
        self.watch.wait(lambda e: isinstance(e, ShoeChanged) and e.event == "new", self.policy.timeout,
                        "the new shoe")
        self.policy.fresh_shoe = True
        deadline = time.monotonic() + self.policy.timeout
        while (status := self.policy.look()) is not None and status.state == "dealing":  # the burn
            if time.monotonic() > deadline:
                raise DealerTimeout(f"simulated dealer waited {self.policy.timeout:.0f} s for the burn")
            self.policy.act(status)

    def play_round(self, stop: threading.Event) -> str:
        """Deal one round; returns ``result`` or ``void``."""
        self.policy.stop = stop
        seen = len(self.policy.rounds_seen)
        try:
            while not stop.is_set():
                status = self.policy.look()
                started = self.policy.rounds_seen[seen:]
                if started and status is not None and status.state in ("idle", "closed"):
                    break
                self.policy.act(status)
        finally:
            self.stats.cards = self.policy.stats.cards
            self.stats.faults = dict(self.policy.stats.faults)
            if self.policy.stats.misdeal_calls:
                self.stats.faults["lost-line"] = self.policy.stats.misdeal_calls
        started = self.policy.rounds_seen[seen:]
        if not started:
            return "void"
        self.stats.rounds += len(started)
        outcome = self._outcomes.get(started[-1], "void")
        if outcome == "result":
            self.stats.results += 1
        else:
            self.stats.voids += 1
        return outcome
