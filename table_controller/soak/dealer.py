"""A remote dealer and floor supervisor for one soak table.

It behaves like :mod:`table_controller.sim.dealer` but from outside the
controller process: it presses the mock panel's buttons through the control
socket (``press``), pulls cards through the simulated shoe's stdin, watches
the table through the floor subscriber's events and the control socket's
``status``, and answers pauses with the supervisor token (``resume`` with the
true code of an unread card, ``void``). It injects the dealer-side faults and
records each one with the round it hit. A killed controller only makes its
requests go unanswered for a while; it carries on from whatever the restarted
controller says.

At a line table (a plain line reader: no gate, no count, no new-shoe report)
the dealer deals like :mod:`table_controller.sim.dealer` does with such a
reader: as floor supervisor it tells the table of each new shoe (the control
socket's ``new-shoe``), reloads an eight-deck shoe when it runs low (no cut
card report), deals without waiting for a gate, and when a card does not show
within ``LOST_LINE_SECONDS`` (a lost line, or a controller that died before it
journaled it) presses *card dropped*: the round is voided as a misdeal.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from table_controller.errors import TableError
from table_controller.rules.game import Game
from table_controller.soak.controller_process import ControlClient
from table_controller.soak.options import LINE_TABLE_DEALER_FAULTS, SoakOptions
from table_controller.soak.records import Draw, Fault, TableRecord
from table_controller.soak.shoe_process import ShoeProcess

log = logging.getLogger(__name__)

#: Dealer faults in the order they are tried for each card.
FAULT_ORDER = ("unplug", "dropped", "misdeal", "void", "lid", "noread", "blackout", "mismatch")
CAMERA_FAULTS = ("blackout", "mismatch")
BLACKOUT_SECONDS = 3.0
CARD_WAIT = 20.0  # longest a drawn card may take to show (an unplugged cable: 2.5 s + recovery)
UNPLUG_SECONDS = 2.5
CLEAR_SECONDS = 0.2  # the camera sees a cleared layout (15 fps: three frames)
LOST_LINE_SECONDS = 2.0  # line tables: a card not shown this long is lost; the dealer calls a misdeal
#: Line tables: the least time between two cards. The controller takes the same card again
#: within its repeat window (0.1 s, write_config) for one double read, so a dealer's hand
#: must be slower than that, as any real dealer's is.
LINE_PACE = 0.15
#: Line tables: an eight-deck shoe is changed when this few cards are left (where the cut
#: card would be; a line reader does not report it).
CUT_CARDS_FROM_END = 16


class DealerStuck(TableError, TimeoutError):
    """The table made no progress for longer than the soak allows."""


class RemoteDealer:
    """Deals ``options.rounds`` rounds on one table; run :meth:`run` in its own thread."""

    def __init__(
        self,
        record: TableRecord,
        game: Game,
        shoe: ShoeProcess,
        control: ControlClient,
        events: queue.Queue[dict[str, Any]],
        options: SoakOptions,
        *,
        token: str,
        rng: random.Random,
        on_draw: Callable[[str, str, float], None] | None = None,
        camera: bool = False,
    ) -> None:
        self.record = record
        self.game = game
        self.shoe = shoe
        self.control = control
        self.events = events
        self.options = options
        self.token = token
        self.rng = rng
        self.on_draw = on_draw
        self.camera = camera  # the table has a simulated camera: lay each card under it
        self.line = record.line_reader  # a plain line reader: no gate, no count, no new-shoe report
        self._line_count = 0  # line tables: cards out of the reader's current shoe (its own count)
        self._line_lost = False  # line tables: the reader says the last card's line never went out
        #: What lies on the layout (slot -> code): cards stay there when a controller dies.
        self.layout: dict[str, str] = {}
        self._pulled: list[str] = []  # this round's cards, in the order the dealer pulled them
        self._pulled_in: str | None = None  # ... and that round
        self._layout_lock = threading.Lock()
        self._dark_until: float | None = None
        self.unread: list[str] = []
        self.rounds_seen: set[str] = set()
        self.finished = threading.Event()
        self._fresh_shoe = False
        self._last_progress = time.monotonic()
        self._stop = threading.Event()
        #: The table's state as of the dealer's last look (the killer reports it).
        self.state = "starting"

    # ------------------------------------------------------------------ the loop
    def run(self, stop: threading.Event) -> None:
        """Deal until the rounds are done, ``stop`` is set, or the table is stuck."""
        self._stop = stop
        try:
            self._run(stop)
        except Exception as e:  # recorded: the report fails the run with it
            log.exception("dealer of %s stopped", self.record.table)
            self.record.dealer_error = f"{type(e).__name__}: {e}"
        finally:
            self.control.close()
            self.finished.set()

    def _run(self, stop: threading.Event) -> None:
        target = self.options.rounds
        if self.line:
            # The reader powered on loaded, but it cannot say so: the supervisor tells the table.
            self._load_shoe()
        while not stop.is_set():
            if self._dark_until is not None and time.monotonic() >= self._dark_until:
                if self.control.request({"op": "dark", "on": False}) is not None:
                    self._dark_until = None
            if time.monotonic() - self._last_progress > self.options.table_timeout:
                raise DealerStuck(
                    f"table {self.record.table} made no progress for "
                    f"{self.options.table_timeout:.0f} s"
                )
            status = self.control.request({"op": "status"})
            if status is None or not status.get("ok"):
                self._wait_event(lambda e: True, 1.0)  # the controller is (re)starting
                continue
            state, round_id = status["state"], status["round"]
            self.state = state
            if round_id is not None and round_id not in self.rounds_seen:
                self.rounds_seen.add(round_id)
                self.record.rounds_started = len(self.rounds_seen)
                self._fresh_shoe = False
                self._progress()
            if state in ("idle", "closed") and len(self.rounds_seen) >= target:
                return
            if state == "idle":
                self._start_round()
            elif state == "betting":
                self._close_betting()
            elif state == "dealing":
                self._deal(round_id, status)
            elif state == "paused":
                self._supervise(status)
            elif state == "closed":
                self._load_shoe()
            else:  # result: wait for idle
                self._wait_event(lambda e: e["type"] in ("table.state", "snapshot"), 2.0)

    def _progress(self) -> None:
        self._last_progress = time.monotonic()

    def _wait_event(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float
    ) -> dict[str, Any] | None:
        """The first event of this table matching ``predicate`` within ``timeout``, else None."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                event = self.events.get(timeout=min(left, 0.5))
            except queue.Empty:
                if self._stop.is_set():  # the run is over (or Ctrl-C): stop waiting
                    return None
                continue
            if event["type"] != "heartbeat":
                self._progress()
            if predicate(event):
                return event

    def _press(self, button: str) -> None:
        self.control.request({"op": "press", "button": button})

    def _supervisor(self, op: str, **extra: Any) -> dict[str, Any] | None:
        return self.control.request({"op": op, "token": self.token, "by": "soak", **extra})

    # ------------------------------------------------------------------ states
    def _start_round(self) -> None:
        if self.camera:
            with self._layout_lock:
                self.layout.clear()
            self.control.request({"op": "clear"})  # the dealer clears the layout
            # ... which takes a hand longer than a camera frame: the camera must see the
            # empty layout, or the next round's card on a slot that held the same code
            # would look like the card that never left.
            time.sleep(CLEAR_SECONDS)
        if self.game.shuffle_every_round and not self._fresh_shoe:
            self._load_shoe()
            self._fresh_shoe = True
            return
        if self.line and not self._fresh_shoe and self._line_shoe_low():
            self._load_shoe()  # the dealer sees the cut card come up: a new shoe
            self._fresh_shoe = True
            return
        self._press("start_round")
        self._wait_event(lambda e: e["type"] in ("round.start", "snapshot", "alert"), 3.0)

    def _close_betting(self) -> None:
        if self.rng.random() < 0.5:  # else the countdown closes betting by itself
            self._press("close_betting")
        self._wait_event(
            lambda e: (
                e["type"] in ("betting.closed", "snapshot")
                or (e["type"] == "table.state" and e["state"] != "betting")
            ),
            self.options.betting_seconds + 3.0,
        )

    def _load_shoe(self) -> None:
        """Load a new shoe once, and wait until the table has it.

        The shoe's own link says so: once nothing it sent is unacknowledged, the
        controller has journaled NEWSHOE (it ACKs only what it recorded). Watching
        the event stream instead would miss an event that a controller restart
        folded into a snapshot, and loading again would reload the shoe for real.
        """
        decks = self.game.decks
        if self.line:
            self._load_line_shoe(decks)
            return
        cut = f" {52 * decks - 16}" if decks > 1 else ""
        self._drain()
        self.shoe.command(f"load {decks}{cut}")
        deadline = time.monotonic() + self.options.table_timeout
        while self.shoe.stats().get("unacknowledged", 1) > 0:
            if self._stop.wait(0.1):
                return
            if time.monotonic() > deadline:
                raise DealerStuck(f"table {self.record.table} did not take a new shoe")
        self._progress()

    def _line_shoe_low(self) -> bool:
        """Line tables: a multi-deck shoe is down to where its cut card would be."""
        return self.game.decks > 1 and 52 * self.game.decks - self._line_count <= CUT_CARDS_FROM_END

    def _load_line_shoe(self, decks: int) -> None:
        """A line reader says nothing of a new shoe: load it, then tell the table as its
        supervisor (``new-shoe``), until the table answers (a controller being restarted
        does not). A reply lost to a kill after the table journaled it means one more
        ``shoe new``: harmless between rounds (a baccarat shoe burns again)."""
        self._drain()
        self.shoe.command(f"load {decks}")
        self._line_count = 0
        deadline = time.monotonic() + self.options.table_timeout
        while True:
            reply = self._supervisor("new-shoe")
            if reply is not None and reply.get("ok"):
                break
            if reply is not None:
                raise DealerStuck(f"table {self.record.table} refused new-shoe: {reply.get('error')}")
            if self._stop.wait(0.2):
                return
            if time.monotonic() > deadline:
                raise DealerStuck(f"table {self.record.table} did not take a new shoe")
        self._progress()

    def _drain(self) -> None:
        """Forget events that arrived before an action, so a wait sees only what the action caused."""
        while True:
            try:
                self.events.get_nowait()
            except queue.Empty:
                return

    def _slot(self, status: dict[str, Any]) -> str | None:
        """The layout slot the next card goes to (None for a burn card), as a dealer knows it.

        A dealer lays cards by the dealing plan and the cards already pulled in this
        round, not by what the table has confirmed so far: the camera may still be
        confirming (or be dark for) the last card, so the table's own "next
        position" can be a card behind.
        """
        from calibration.layout import slot_name
        from table_controller.rules.cards import parse_card

        if status.get("next_position") in (None, "burn"):
            return None
        if status.get("round") != self._pulled_in:
            self._pulled_in, self._pulled = status.get("round"), []
        deal = self.game.new_deal()
        for code in self._pulled:
            if deal.next_position is None:
                return None  # more cards pulled than the round takes: the table will void it
            deal.place(parse_card(code))
        position = deal.next_position
        if position is None:
            return None
        return position if position == "first" else slot_name(position, len(deal.hands[position]))

    def _pulled_for(self, slot: str | None, code: str) -> None:
        """Remember a card pulled for the round's layout (burn cards are not laid)."""
        if slot is not None:
            self._pulled.append(code)

    def _lay(self, slot: str | None, code: str) -> None:
        if self.camera and slot is not None:
            with self._layout_lock:
                self.layout[slot] = code
            self.control.request({"op": "lay", "slot": slot, "code": code})

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
            with self._layout_lock:
                layout = dict(self.layout)
                dark = self._dark_until is not None
            for slot, code in layout.items():
                control.request({"op": "lay", "slot": slot, "code": code})
            if dark:
                control.request({"op": "dark", "on": True})
        finally:
            control.close()

    def _deal(self, round_id: str | None, status: dict[str, Any]) -> None:
        if not self.line and not self.shoe.wait_gate_open(2.0):
            return  # the controller has not unlocked it (yet): look again (a line reader has no gate)
        slot = self._slot(status)
        if slot is None and status.get("next_position") not in (None, "burn"):
            # The cards this dealer pulled complete the round; the table is still confirming
            # them (the camera): a dealer does not pull another card, they wait.
            self._wait_event(lambda e: e["type"] in ("round.result", "round.void", "table.state", "snapshot"), 2.0)
            return
        if round_id is not None and self._maybe_fault(round_id, status):
            return
        code = self._pull(round_id)
        if code is None:
            return
        self._pulled_for(slot, code)
        self._lay(slot, code)
        if self.on_draw is not None and not (self.line and self._line_lost):
            # (a line the reader never sent would be matched with a later card of its code)
            self.on_draw(self.record.table, code, time.monotonic())
        if self.line:
            self._wait_line_card(code, round_id)
            time.sleep(max(self.options.pace, LINE_PACE))  # the dealer's hand
            return
        self._wait_card(code)
        if self.options.pace > 0:
            time.sleep(self.options.pace)  # the dealer's hand, not a wait for the table

    def _pull(self, round_id: str | None, *, fault: str | None = None, unread: bool = False) -> str | None:
        """Pull one card (``unread``: it leaves the shoe unread) and record it as the shoe
        printed it, the ground truth; its code, or None when the gate was locked."""
        started = time.time()
        if self.line and not unread:
            line = self.shoe.draw_line()
            if line is None:
                return None
            code, count, line_faults = line
            self._line_count = count
            self._line_lost = "lost" in line_faults or "unplugged" in line_faults
            self.record.add_draw(
                Draw(code, False, round_id, started, fault=fault, count=count, line_faults=line_faults)
            )
            return code
        pulled = self.shoe.noread() if unread else self.shoe.draw()
        if pulled is None:
            return None
        code, count = pulled
        self.record.add_draw(Draw(code, unread, round_id, started, fault=fault, count=count))
        return code

    def _wait_card(self, code: str) -> None:
        """Wait until the table took the card (or reacted to it), so no extra card is pulled.

        A link outage is no reaction: the card arrives when the link is back.
        """
        if self._wait_event(self._taken(code), CARD_WAIT) is None:
            log.warning(
                "table %s: card %s did not show within %.0f s", self.record.table, code, CARD_WAIT
            )

    def _wait_line_card(self, code: str, round_id: str | None) -> None:
        """Line tables: wait for the card; one that does not show is lost, and the dealer
        calls the misdeal (*card dropped*) if its round is still in play.

        A controller that is down (killed) reads a line when it is back, or never (it
        read the line but died before journaling it): the dealer first waits for it to
        answer again, then gives the card ``LOST_LINE_SECONDS`` more.
        """
        taken = self._taken(code)
        if self._wait_event(taken, LOST_LINE_SECONDS) is not None:
            return
        deadline = time.monotonic() + self.options.table_timeout
        was_down = False
        while True:
            status = self.control.request({"op": "status"})
            if status is not None and status.get("ok"):
                break
            was_down = True
            if self._wait_event(taken, 1.0) is not None:
                return
            if self._stop.is_set() or time.monotonic() > deadline:
                return
        if was_down:
            if self._wait_event(taken, LOST_LINE_SECONDS) is not None:
                return
            status = self.control.request({"op": "status"}) or {}
        for _ in range(3):
            if not (
                status.get("state") in ("dealing", "paused")
                and round_id is not None
                and status.get("round") == round_id
                and status.get("next_position") != "burn"
            ):
                return  # its round is over (or it was a burn card): nothing to call
            log.info("table %s: card %s did not show: card dropped", self.record.table, code)
            self.record.add_misdeal_call(Fault("missing-card", self.record.table, round_id, time.time()))
            self._press("card_dropped")
            if self._wait_event(
                lambda e: e["type"] == "snapshot"
                or (e["type"] == "round.void" and e.get("round") == round_id),
                3.0,
            ) is not None:
                return
            status = self.control.request({"op": "status"}) or {}

    def _taken(self, code: str) -> Callable[[dict[str, Any]], bool]:
        """Whether an event shows that the table took (or reacted to) the card ``code``."""

        def taken(e: dict[str, Any]) -> bool:
            kind = e["type"]
            if kind == "card":
                # not a card a supervisor entered by hand: an 8-deck shoe has 8 of each code
                return e["code"] == code and e.get("source") != "manual"
            if kind == "snapshot":
                state = (e.get("state") or {}).get("state")
                return state not in ("dealing", "paused") or any(
                    x["type"] == "card" and x["code"] == code for x in e["round"]
                )
            if kind == "alert":
                return e["kind"] == "wrong-order" and code in e.get("detail", "")
            return kind == "round.void" or (
                kind == "table.state"
                and e["state"] == "paused"
                and e.get("cause") != "shoe-link-down"
            )

        return taken

    # ------------------------------------------------------------------ faults
    def _maybe_fault(self, round_id: str, status: dict[str, Any]) -> bool:
        for kind in FAULT_ORDER:
            if kind in CAMERA_FAULTS and not self.camera:
                continue
            if self.line and kind not in LINE_TABLE_DEALER_FAULTS:
                continue  # no lid sensor, no unread report, no cable pulls at a line table
            rate = self.options.rate(kind)
            if rate > 0 and self.rng.random() < rate:
                self._inject(kind, round_id, status)
                return True
        return False

    def _inject(self, kind: str, round_id: str, status: dict[str, Any]) -> None:
        table = self.record.table
        self.record.add_fault(Fault(kind, table, round_id, time.time()))
        if kind == "blackout":
            self.control.request({"op": "dark", "on": True})
            self._dark_until = time.monotonic() + BLACKOUT_SECONDS  # the loop lights it again
            self._wait_effect(kind)
            return
        if kind == "mismatch":
            slot = self._slot(status)
            code = self._pull(round_id, fault="mismatch")
            if code is None:
                return
            self._pulled_for(slot, code)  # the round takes the shoe's card, whatever was laid
            self._lay(slot, "2C" if code != "2C" else "3D")  # not the card the shoe read
            self._wait_effect(kind)
            return
        if kind == "unplug":
            self.shoe.command(f"unplug {UNPLUG_SECONDS}")
            return
        if kind == "dropped":
            self._press("card_dropped")
        elif kind == "void":
            self._press("void_request")
        elif kind == "lid":
            self.shoe.command("lid open")
            self.shoe.command("lid close")
        elif kind == "misdeal":
            # The lid opens (the table pauses) and the dealer pulls a card before the gate locks.
            self.shoe.command("lid open")
            self._pull(round_id, fault="misdeal")
            self.shoe.command("lid close")
        elif kind == "noread":
            slot = self._slot(status)
            code = self._pull(round_id, fault="noread", unread=True)
            if code is None:
                return
            self.unread.append(code)
            self._pulled_for(slot, code)
            self._lay(slot, code)  # the camera may read what the shoe could not
        self._wait_effect(kind)

    def _wait_effect(self, kind: str) -> None:
        """Wait until the table reacted to the fault (a link outage delays it, never hides it)."""
        cause = {
            "void": "void-request",
            "lid": "lid-open",
            "misdeal": "lid-open",
            "noread": "no-read",
            "blackout": "camera-down",
            "mismatch": "source-mismatch",
        }.get(kind)

        def reacted(e: dict[str, Any]) -> bool:
            if e["type"] in ("round.void", "snapshot"):
                return True
            return cause is not None and e["type"] == "table.state" and e.get("cause") == cause

        if self._wait_event(reacted, CARD_WAIT) is None:
            log.warning(
                "table %s: no reaction to fault %s within %.0f s",
                self.record.table,
                kind,
                CARD_WAIT,
            )

    # ------------------------------------------------------------------ supervisor
    def _supervise(self, status: dict[str, Any]) -> None:
        """What the floor supervisor does (the same policy as the in-process simulated dealer)."""
        cause, awaiting = status.get("cause"), status.get("awaiting")
        if cause == "shoe-link-down":
            self._wait_event(lambda e: e["type"] in ("table.state", "snapshot"), 2.0)
            return
        if awaiting == "card" and cause == "no-read" and self.unread:
            self._supervisor("resume", card=self.unread[-1])
        elif awaiting == "card" and cause == "source-mismatch" and status.get("shoe_card"):
            # the shoe is the truth of which card came out: the supervisor confirms it by hand
            self._supervisor("resume", card=status["shoe_card"])
        elif awaiting == "card" or cause == "void-request":
            self._supervisor("void", reason=f"supervisor voided after {cause}")
        else:
            self._supervisor("resume")
        self._wait_event(lambda e: e["type"] in ("table.state", "snapshot"), 2.0)
