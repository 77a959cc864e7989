"""The soak's remote dealer and floor supervisor for one table.

What it does when is the one dealing policy,
:class:`~table_controller.sim.dealing.DealingPolicy`, that the in-process simulated
dealer follows too; here it reaches a controller in another process. A
:class:`ControlLink` is its view of the table (the control socket's ``status``,
``press``, ``lay``, ``clear``, ``dark``, and with the supervisor token ``resume``,
``void`` and ``new-shoe``; the floor subscriber's typed events), and
:class:`ShoeProcessHands` are its hands on the simulated shoe process (``draw``,
``noread``, ``lid``, ``unplug``, ``load``), which record every card as the shoe printed
it, the ground truth for the checker. A killed controller only makes its requests go
unanswered for a while; the dealer carries on from whatever the restarted controller
says.

At a line table (a plain line reader: no gate, no count, no new-shoe report) the
supervisor tells the table of each new shoe (``new-shoe``), the dealer reloads an
eight-deck shoe when it runs low (no cut card report), deals without waiting for a
gate, and when a card does not show within ``LOST_LINE_SECONDS`` (a lost line, or a
controller that died before it journaled it) presses *card dropped*: the round is
voided as a misdeal.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import msgspec

from table_controller.errors import TableError
from table_controller.event_types import (
    BettingClosed,
    CardDealt,
    RoundResult,
    RoundStarted,
    RoundVoided,
    ShoeChanged,
)
from table_controller.rules.game import Game
from table_controller.sim.dealing import (
    FAULT_ORDER,
    DealerNotes,
    DealingPolicy,
    TableItem,
    TableStatus,
)
from table_controller.soak.controller_process import ControlClient
from table_controller.soak.options import LINE_TABLE_DEALER_FAULTS, SoakOptions
from table_controller.soak.records import Draw, Fault, TableRecord
from table_controller.soak.shoe_process import ShoeProcess

log = logging.getLogger(__name__)

#: Line tables: the least time between two cards. The controller takes the same card again
#: within its repeat window (0.1 s, write_config) for one double read, so a dealer's hand
#: must be slower than that, as any real dealer's is.
LINE_PACE = 0.15
#: The soak's own dealer faults (the policy knows a few more, for ``table-controller sim``).
SOAK_DEALER_FAULTS = ("unplug", "dropped", "misdeal", "void", "lid", "noread", "blackout", "mismatch")


#: Events that show a table moving on. Not heartbeats, pauses, resumes, alerts or
#: snapshots: a table that a killer restarts every few seconds sends those for ever (a
#: snapshot and a pause each time, and the supervisor's resume) while dealing nothing.
_PROGRESS = (RoundStarted, BettingClosed, CardDealt, RoundResult, RoundVoided, ShoeChanged)


class DealerStuck(TableError, TimeoutError):
    """The table made no progress for longer than the soak allows."""


class ControlLink:
    """One soak table through its control socket and the floor subscriber's events."""

    def __init__(
        self, control: ControlClient, events: queue.Queue[TableItem], *, token: str, stop: threading.Event,
    ) -> None:
        self.control = control
        self.events = events
        self.token = token
        self.stop = stop
        self.last_progress = time.monotonic()
        #: What lies on the layout (slot -> code): cards stay there when a controller dies.
        self.layout: dict[str, str] = {}
        self.covered = False  # the camera's lens is covered
        self.lock = threading.Lock()

    def progress(self) -> None:
        self.last_progress = time.monotonic()

    def status(self) -> TableStatus | None:
        reply = self.control.request({"op": "status"})
        if reply is None or not reply.get("ok"):
            return None
        try:
            return msgspec.convert(reply, TableStatus)
        except msgspec.ValidationError as e:
            log.warning("table %s: a status reply the dealer cannot read: %s", self.control.endpoint, e)
            return None

    def press(self, button: str) -> None:
        self.control.request({"op": "press", "button": button})

    def _supervisor(self, op: str, **extra: Any) -> bool | None:
        reply = self.control.request({"op": op, "token": self.token, "by": "soak", **extra})
        return None if reply is None else bool(reply.get("ok"))

    def resume(self, card: str | None = None) -> bool | None:
        return self._supervisor("resume", card=card) if card is not None else self._supervisor("resume")

    def void(self, reason: str) -> bool | None:
        return self._supervisor("void", reason=reason)

    def new_shoe(self) -> bool | None:
        return self._supervisor("new-shoe")

    def lay(self, slot: str | None, code: str) -> None:
        if slot is not None:
            with self.lock:
                self.layout[slot] = code
        self.control.request({"op": "lay", "slot": slot, "code": code})

    def clear(self) -> None:
        with self.lock:
            self.layout.clear()
        self.control.request({"op": "clear"})

    def dark(self, on: bool) -> bool:
        with self.lock:
            self.covered = on
        return self.control.request({"op": "dark", "on": on}) is not None

    def wait_for(self, predicate: Callable[[TableItem], bool], timeout: float) -> TableItem | None:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                item = self.events.get(timeout=min(left, 0.5))
            except queue.Empty:
                if self.stop.is_set():  # the run is over (or Ctrl-C): stop waiting
                    return None
                continue
            if isinstance(item, _PROGRESS):
                self.progress()
            if predicate(item):
                return item

    def drain(self) -> None:
        while True:
            try:
                self.events.get_nowait()
            except queue.Empty:
                return


class ShoeProcessHands:
    """The dealer's hands on a soak table's shoe process; every card pulled is recorded
    as the shoe printed it (``card TS count 17``)."""

    def __init__(
        self, shoe: ShoeProcess, record: TableRecord, *, decks: int, table_timeout: float,
        stop: threading.Event, progress: Callable[[], None],
        on_draw: Callable[[str, str, float], None] | None = None,
    ) -> None:
        self.shoe = shoe
        self.record = record
        self.decks = decks
        self.table_timeout = table_timeout
        self.stop = stop
        self.progress = progress
        self.on_draw = on_draw
        self.line = record.line_reader  # a plain line reader: no gate, no count, no new-shoe report
        self.line_count = 0  # line tables: cards out of the reader's current shoe (its own count)
        self.unread: list[str] = []

    @property
    def announces_new_shoe(self) -> bool:
        return not self.line

    @property
    def exactly_once(self) -> bool:
        return not self.line

    def wait_gate_open(self, timeout: float) -> bool:
        return self.line or self.shoe.wait_gate_open(timeout)

    def draw(self, round_id: str | None, fault: str | None = None) -> str | None:
        started = time.time()
        lost = False
        if self.line:
            line = self.shoe.draw_line()
            if line is None:
                return None
            code, count, line_faults = line
            self.line_count = count
            lost = "lost" in line_faults or "unplugged" in line_faults
            self.record.add_draw(
                Draw(code, False, round_id, started, fault=fault, count=count, line_faults=line_faults)
            )
        else:
            pulled = self.shoe.draw()
            if pulled is None:
                return None
            code, count = pulled
            self.record.add_draw(Draw(code, False, round_id, started, fault=fault, count=count))
        if self.on_draw is not None and fault is None and not lost:
            # (a line the reader never sent would be matched with a later card of its code)
            self.on_draw(self.record.table, code, time.monotonic())
        return code

    def draw_unread(self, round_id: str | None) -> str | None:
        started = time.time()
        pulled = self.shoe.noread()
        if pulled is None:
            return None
        code, count = pulled
        self.record.add_draw(Draw(code, True, round_id, started, fault="noread", count=count))
        self.unread.append(code)
        return code

    def last_unread(self) -> str | None:
        return self.unread[-1] if self.unread else None

    def set_lid(self, is_open: bool) -> None:
        self.shoe.command("lid open" if is_open else "lid close")

    def unplug(self, seconds: float) -> None:
        self.shoe.command(f"unplug {seconds}")

    def load(self, decks: int, cut_at: int | None) -> bool:
        """Load a new shoe; a smart shoe's own link says when the table has it.

        Once nothing it sent is unacknowledged, the controller has journaled NEWSHOE (it
        ACKs only what it recorded). Watching the event stream instead would miss an event
        that a controller restart folded into a snapshot, and loading again would reload
        the shoe for real.
        """
        if self.line:
            self.shoe.command(f"load {decks}")
            self.line_count = 0
            return True  # the supervisor tells the table
        self.shoe.command(f"load {decks}" + (f" {cut_at}" if cut_at is not None else ""))
        deadline = time.monotonic() + self.table_timeout
        while self.shoe.stats().get("unacknowledged", 1) > 0:
            if self.stop.wait(0.1):
                return True
            if time.monotonic() > deadline:
                raise DealerStuck(f"table {self.record.table} did not take a new shoe")
        self.progress()
        return True

    def cards_left(self) -> int | None:
        return 52 * self.decks - self.line_count if self.line else None


class SoakNotes(DealerNotes):
    """The dealer's doings, in the table's record for the checker."""

    def __init__(self, record: TableRecord, progress: Callable[[], None]) -> None:
        self.record = record
        self.progress = progress

    def round_started(self, round_id: str) -> None:
        self.record.rounds_started += 1
        self.progress()

    def fault(self, kind: str, round_id: str) -> None:
        self.record.add_fault(Fault(kind, self.record.table, round_id, time.time()))

    def misdeal_called(self, round_id: str) -> None:
        self.record.add_misdeal_call(Fault("missing-card", self.record.table, round_id, time.time()))


class RemoteDealer:
    """Deals ``options.rounds`` rounds on one table; run :meth:`run` in its own thread."""

    def __init__(
        self,
        record: TableRecord,
        game: Game,
        shoe: ShoeProcess,
        control: ControlClient,
        events: queue.Queue[TableItem],
        options: SoakOptions,
        *,
        token: str,
        rng: random.Random,
        on_draw: Callable[[str, str, float], None] | None = None,
        camera: bool = False,
    ) -> None:
        self.record = record
        self.options = options
        self.camera = camera  # the table has a simulated camera: lay each card under it
        self.finished = threading.Event()
        self._stop = threading.Event()
        self.link = ControlLink(control, events, token=token, stop=self._stop)
        self.hands = ShoeProcessHands(
            shoe, record, decks=game.decks, table_timeout=options.table_timeout, stop=self._stop,
            progress=self.link.progress, on_draw=on_draw,
        )
        kinds = LINE_TABLE_DEALER_FAULTS if record.line_reader else SOAK_DEALER_FAULTS
        self.policy = DealingPolicy(
            game, self.link, self.hands, rng=rng, countdown_share=0.5,
            countdown_seconds=options.betting_seconds,
            fault_rates={k: options.rate(k) for k in FAULT_ORDER if k in kinds},
            pace=max(options.pace, LINE_PACE) if record.line_reader else options.pace,
            camera=camera, timeout=options.table_timeout,
            notes=SoakNotes(record, self.link.progress), stop=self._stop,
        )
        #: The table's state as of the dealer's last look (the killer reports it).
        self.state = "starting"

    @property
    def layout(self) -> dict[str, str]:
        """What lies on the layout (slot -> code)."""
        return self.link.layout

    # ------------------------------------------------------------------ the loop
    def run(self, stop: threading.Event) -> None:
        """Deal until the rounds are done, ``stop`` is set, or the table is stuck."""
        self._stop = stop
        self.link.stop = self.hands.stop = self.policy.stop = stop
        try:
            self._run(stop)
        except Exception as e:  # recorded: the report fails the run with it
            log.exception("dealer of %s stopped", self.record.table)
            self.record.dealer_error = f"{type(e).__name__}: {e}"
        finally:
            self.link.control.close()
            self.finished.set()

    def _run(self, stop: threading.Event) -> None:
        target = self.options.rounds
        if self.record.line_reader:
            # The reader powered on loaded, but it cannot say so: the supervisor tells the table.
            self.policy.load_shoe()
        while not stop.is_set():
            if time.monotonic() - self.link.last_progress > self.options.table_timeout:
                raise DealerStuck(
                    f"table {self.record.table} made no progress for "
                    f"{self.options.table_timeout:.0f} s"
                )
            status = self.policy.look()
            if status is not None:
                self.state = status.state
                if status.state in ("idle", "closed") and len(self.policy.rounds_seen) >= target:
                    return
            self.policy.act(status)

    def restore_camera(self, control: ControlClient, stop: threading.Event, timeout: float = 20.0) -> None:
        """After a controller restart, show its new camera what is physically there.

        The simulated camera lives in the controller process, so a kill loses
        what was laid; on a real table the cards stay under the camera (and a
        covered lens stays covered). Runs in the restarting thread with its own
        ``control`` client, which it closes.
        """
        if not self.camera:
            control.close()
            return
        deadline = time.monotonic() + timeout
        try:
            while True:
                status = control.request({"op": "status"})
                if status is not None and status.get("ok"):
                    break
                if stop.wait(0.05) or time.monotonic() > deadline:
                    return
            with self.link.lock:
                layout = dict(self.link.layout)
                dark = self.link.covered
            for slot, code in layout.items():
                control.request({"op": "lay", "slot": slot, "code": code})
            if dark:
                control.request({"op": "dark", "on": True})
        finally:
            control.close()
