"""The table controller: the one place that composes devices, rules, journal and publisher.

Device threads (the shoe's reader, gpiozero's button callbacks, the camera
watcher, the control socket) only *post* on one queue: a table input, a raw shoe
driver event or a panel press; they read and write no controller or machine
state. One loop takes them in order, turns driver events and presses into table
inputs (:mod:`table_controller.shoe_mapping`, :func:`~table_controller.panel.panel_input`),
asks the pure :class:`~table_controller.table.TableMachine` what happened,
commits the resulting events to the journal (with the shoe's link state, in one
transaction), and only then publishes them, acknowledges the shoe frames and
drives the gate (:class:`~table_controller.shoe_handshake.ShoeHandshake`), lamps
and buzzer.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from firmware_interfaces.shoe.guarantees import SMART_SHOE
from table_controller.event_types import (
    EVENT_CLASSES,
    Alert,
    AlertKind,
    CardDealt,
    CheckpointSigned,
    Event,
    EvidenceRecorded,
    Heartbeat,
    RoundResult,
    RoundVoided,
    TableStateChanged,
    stamped,
)
from table_controller.evidence.keeper import EvidenceKept, EvidenceLost, EvidenceRequest
from table_controller.fusion import CameraSaw, CardFusion
from table_controller.journal.errors import JournalError
from table_controller.panel import PanelPress, panel_input
from table_controller.rules.game import Game
from table_controller.shoe_handshake import GATE_CONFIRM_SECONDS, ShoeHandshake
from table_controller.shoe_mapping import UnmappedShoeEvent, table_input_for
from table_controller.table import inputs as i
from table_controller.table.machine import IllegalInput, TableMachine

log = logging.getLogger(__name__)

__all__ = ["GATE_CONFIRM_SECONDS", "SHOE_BACKLOG", "ControllerStats", "Posted", "TableController"]

#: Shoe events waiting for the loop at most. More, and the driver's reader thread waits:
#: it reads no further, nothing more is ACKed, and the shoe's window holds the cards.
SHOE_BACKLOG = 256
#: Alerts of one kind journaled per ALERT_WINDOW seconds at most; the rest are counted and
#: summarised in one alert when the window ends (a flood cannot fill the journal).
ALERTS_PER_WINDOW = 20
ALERT_WINDOW = 10.0

EventListener = Callable[[Event], None]


@dataclass
class Posted:
    """One item on the controller's queue: an input, the device event behind it, a reply slot.

    ``input`` None with a ``shoe_event``: a driver event as the reader thread delivered it,
    mapped to its table input in the loop. A :class:`~table_controller.panel.PanelPress`
    becomes its table input in the loop too (it depends on the table's state).
    """

    input: i.TableInput | CameraSaw | PanelPress | EvidenceKept | EvidenceLost | None
    shoe_event: Any = None
    reply: queue.Queue[Any] | None = None
    backlog: bool = False  # holds a place of the shoe backlog until applied
    posted_at: float = field(default_factory=time.monotonic)  # for the card latency metrics


@dataclass
class ControllerStats:
    """Counters a test rig or the status command reads."""

    inputs: int = 0
    events: int = 0
    rejected: int = 0
    errors: list[str] = field(default_factory=list)


class TableController:
    """Runs one table: feed it inputs with :meth:`post`, run :meth:`run` in one thread."""

    def __init__(
        self,
        game: Game,
        journal: Any,
        *,
        table: str,
        betting_seconds: float = 15,
        result_seconds: float = 3,
        interrupted_round: str = "resume",
        has_shoe: bool = True,
        shoe: Any = None,
        panel: Any = None,
        publisher: Any = None,
        clock: Callable[[], float] = time.time,
        heartbeat_seconds: float = 1.0,
        card_sources: tuple[str, ...] = ("shoe",),
        camera_confirm_seconds: float = 3.0,
        checkpoints: Any = None,
    ) -> None:
        """``checkpoints``: a CheckpointSigner; every round end is then signed (journal/checkpoints.py)."""
        self.game = game
        self.journal = journal
        self.table = table
        #: The gate-lock handshake and held ACKs with the shoe (``shoe`` is its driver).
        self.handshake: ShoeHandshake[Posted] = ShoeHandshake(shoe)
        self.panel = panel
        self.publisher = publisher
        self.clock = clock
        self.heartbeat_seconds = heartbeat_seconds
        self.interrupted_round = interrupted_round
        self.checkpoints = checkpoints
        self.machine = TableMachine(
            game, table=table, betting_seconds=betting_seconds, result_seconds=result_seconds
        )
        self.machine.link_up = not has_shoe
        mode = "shoe+camera" if set(card_sources) == {"shoe", "camera"} else card_sources[0]
        self.fusion = CardFusion(mode, camera_confirm_seconds)
        self.listeners: list[EventListener] = []
        self.stats = ControllerStats()
        self._queue: queue.Queue[Posted] = queue.Queue()
        self._shoe_backlog = threading.BoundedSemaphore(SHOE_BACKLOG)
        self._alerts = AlertLimiter(ALERTS_PER_WINDOW, ALERT_WINDOW)
        self._last_sent = 0.0
        #: Set while the shoe link is up (or the table has no shoe).
        self.link_ready = threading.Event()
        #: The camera's pictures (docs/evidence.md): the keeper, and where the latest frame comes
        #: from (the camera watcher); set both before the loop starts, or leave them None.
        self.evidence: Any = None
        self.latest_frame: Callable[[], Any] | None = None
        #: When the loop last turned (time.monotonic(); 0 before it runs): at least every
        #: quarter second while it is well (see _wait_time).
        self.last_turn = 0.0
        #: Told (seconds to journal, seconds to publish) for each input that journaled a card:
        #: the metrics' card latencies (service/metrics.py).
        self.on_card_latency: Callable[[float, float], None] | None = None
        self._journaled_at = self._published_at = 0.0
        #: The journal's last seq as this loop committed it (0 before its first commit here).
        self.last_seq = 0
        self._cards_journaled: dict[tuple[str, int, str], tuple[int, str | None]] = {}
        self._last_round: str | None = None

    @property
    def shoe(self) -> Any:
        """The shoe driver (None: no shoe). Set it before the loop starts."""
        return self.handshake.shoe

    @shoe.setter
    def shoe(self, driver: Any) -> None:
        self.handshake.shoe = driver

    # ------------------------------------------------------------------ start-up
    def restore(self) -> None:
        """Rebuild the table from its journal and apply the interrupted-round policy."""
        # Heartbeats change nothing: skip them (they are most of an idle table's journal).
        events = self.journal.restore_events(types=_REPLAYED_TYPES)
        self.machine.restore(events)
        if self.publisher is not None:
            self.publisher.prime(events)
        if self.machine.in_round and self.interrupted_round == "void":
            self.step(i.SupervisorVoid(by="controller", reason="controller restarted during the round"))
        elif (self.machine.state == "dealing" and self.shoe is not None
              and not getattr(self.shoe, "guarantees", SMART_SHOE).exactly_once):
            # A line reader does not re-send: a card it sent while no controller ran is gone.
            self.step(i.DeviceFault(
                "the controller restarted while dealing: a card the reader sent meanwhile is lost"
            ))
        self._drive_devices([])

    # ------------------------------------------------------------------ inputs
    def post(self, event: i.TableInput | CameraSaw | EvidenceKept | EvidenceLost, shoe_event: Any = None) -> None:
        """Queue an input (thread-safe); the loop applies it in order."""
        self._queue.put(Posted(event, shoe_event))

    def request(self, event: i.TableInput, timeout: float = 5.0) -> list[Event]:
        """Apply an input through the loop and wait for its events; raises what the machine raised."""
        reply: queue.Queue[Any] = queue.Queue(maxsize=1)
        self._queue.put(Posted(event, None, reply))
        answer = reply.get(timeout=timeout)
        if isinstance(answer, Exception):
            raise answer
        events: list[Event] = answer
        return events

    def on_shoe_event(self, event: Any) -> None:
        """The shoe driver's listener (called in its reader thread).

        Blocks while :data:`SHOE_BACKLOG` shoe events wait for the loop: backpressure,
        so a flood from a device keeps memory bounded and loses nothing (a frame not yet
        applied is not ACKed, so the shoe keeps it).
        """
        while not self._shoe_backlog.acquire(timeout=1.0):
            log.warning("table %s: %d shoe events wait for the loop; the reader waits",
                        self.table, SHOE_BACKLOG)
        self._queue.put(Posted(None, event, backlog=True))  # mapped in the loop

    def on_button(self, name: str) -> None:
        """The panel's listener: a button was pressed (gpiozero's thread or the caller's).

        Only the key switch is read here, as it is at the press; what the press means
        depends on the table's state, which only the loop reads.
        """
        key_on = self.panel is not None and self.panel.supervisor_key_on
        self._queue.put(Posted(PanelPress(name, supervisor_key=key_on)))

    @property
    def queue_depth(self) -> int:
        """Inputs waiting for the loop (approximate: the queue's own count)."""
        return self._queue.qsize()

    def wait_until_idle(self, timeout: float) -> bool:
        """Wait (from another thread, while the loop runs) until nothing waits on the queue."""
        deadline = time.monotonic() + timeout
        while not self._queue.empty():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def apply_queued(self) -> None:
        """Apply everything queued now, in the caller's thread, then the held starts that are due.

        For a caller that drives the loop itself (tests, tools); never while :meth:`run` runs.
        """
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            self._apply(item)
        self._release_held_starts()

    # ------------------------------------------------------------------ the loop
    def run(self, stop: threading.Event) -> None:
        """Apply inputs until ``stop`` is set; ticks countdowns and sends heartbeats."""
        while not stop.is_set():
            self.last_turn = time.monotonic()  # the watchdog's sign of life (service/notify.py)
            try:
                item = self._queue.get(timeout=self._wait_time())
            except queue.Empty:
                item = None
            try:
                if item is not None:
                    self._apply(item)
                self._release_held_starts()
                self._tick()
                if self.clock() - self._last_sent >= self.heartbeat_seconds:
                    self._commit([Heartbeat(round=self.machine.round_id, state=self.machine.state.value)])
            except JournalError as e:
                # A journal that cannot commit must stop the table: nothing may be acted on unrecorded.
                log.critical("table %s stopped: %s", self.table, e)
                self.stats.errors.append(str(e))
                raise

    def _tick(self) -> None:
        try:
            self.step(i.Tick())
        except (JournalError, IllegalInput):
            raise
        except Exception as e:
            self._recover(Posted(i.Tick()), e)

    def _wait_time(self) -> float:
        now = self.clock()
        deadlines = [self._last_sent + self.heartbeat_seconds]
        m = self.machine
        if m.state == "betting" and m.betting_ends is not None:
            deadlines.append(m.betting_ends)
        if m.state == "result":
            deadlines.append(m.state_since + m.result_seconds)
        if self.fusion.pending or self.fusion.unmatched or self.handshake.holding_starts:
            deadlines.append(now + 0.05 if self.handshake.holding_starts else now + 0.1)
        # Capped so that a stop request is noticed within a quarter second.
        return max(0.0, min(min(deadlines) - now, 0.25))

    def _apply(self, item: Posted) -> None:
        if item.backlog:
            item.backlog = False
            self._shoe_backlog.release()
        if isinstance(item.input, PanelPress):
            pressed = panel_input(item.input, self.machine.state)
            if pressed is None:
                return
            item = replace(item, input=pressed)
        elif item.input is None and item.shoe_event is not None:
            try:
                item = replace(item, input=table_input_for(item.shoe_event))
            except UnmappedShoeEvent as e:
                self._refuse_shoe_event(item, e)
                return
        if isinstance(item.input, i.StartRound) and self.handshake.hold_start(
            item, self.clock(), link_up=self.machine.link_up
        ):
            return
        self.stats.inputs += 1
        try:
            events = self.step(item.input, item.shoe_event)
        except IllegalInput as e:
            self._reject(item, e)
            return
        except JournalError:
            raise
        except Exception as e:  # an input the code did not foresee: refuse it, stay consistent
            self._recover(item, e)
            return
        if item.reply is not None:
            item.reply.put(events)
        if self.on_card_latency is not None and any(isinstance(e, CardDealt) for e in events):
            try:
                self.on_card_latency(self._journaled_at - item.posted_at, self._published_at - item.posted_at)
            except Exception:  # a metrics fault must never touch the table
                log.exception("card latency metrics failed")

    def _recover(self, item: Posted, error: Exception) -> None:
        """An input raised what no rule expected: nothing of it was journaled, so rebuild the
        machine from the journal (the truth), keep the device state, and say so."""
        log.exception("table %s: input %r could not be applied", self.table, item.input)
        self.stats.errors.append(f"{type(error).__name__}: {error}")
        old = self.machine
        machine = TableMachine(
            self.game, table=self.table, betting_seconds=old.betting_seconds,
            result_seconds=old.result_seconds,
        )
        machine.restore(self.journal.restore_events(types=_REPLAYED_TYPES))
        machine.link_up, machine.lid_open = old.link_up, old.lid_open
        self.machine = machine
        detail = (f"an input could not be applied ({type(error).__name__}: {error}); "
                  "the table was rebuilt from its journal")
        self._commit([Alert(round=machine.round_id, kind="device-fault", severity="critical", detail=detail[:500])])
        if item.reply is not None:
            item.reply.put(IllegalInput(detail))

    def _reject(self, item: Posted, error: IllegalInput) -> None:
        self.stats.rejected += 1
        log.warning("table %s: %s", self.table, error)
        if self.panel is not None:
            self.panel.buzz()
        if item.reply is not None:
            item.reply.put(error)

    def _refuse_shoe_event(self, item: Posted, error: UnmappedShoeEvent) -> None:
        """A driver event the mapping does not know: not applied, not acknowledged (the shoe
        keeps the frame, and ACKs are cumulative: the link holds there), and a device fault
        says so (a round in progress pauses: a card may be in it)."""
        log.error("table %s: %s", self.table, error)
        self.stats.rejected += 1
        self.stats.errors.append(str(error))
        self._apply(Posted(i.DeviceFault(str(error)[:500])))

    def _release_held_starts(self) -> None:
        if not self.handshake.holding_starts:
            return
        due = self.handshake.release_starts(self.clock(), link_up=self.machine.link_up)
        for item in due.ready:
            self._apply(item)
        for item in due.expired:
            self._reject(item, IllegalInput(self.handshake.refusal()))

    def step(self, event: Any, shoe_event: Any = None) -> list[Event]:
        """Apply one input now (in the loop's thread): journal, publish, act.

        Whatever the machine decided before an input was rejected is still
        committed (and the shoe frame recorded) before the rejection is raised.
        """
        if isinstance(event, EvidenceKept | EvidenceLost):
            return self._commit([self._evidence_event(event)])
        now = self.clock()
        self.handshake.observe(shoe_event)
        fused = self._fuse(event, now) if event is not None else []
        outcome = self.machine.handle_step(fused, now, cards_waiting=[p.code for p in self.fusion.pending])
        drafts, rejected = list(outcome.events), outcome.refused
        if any(isinstance(d, RoundResult | RoundVoided) for d in drafts):
            for leftover in self.fusion.reset():
                drafts += self.machine.handle(leftover, now)
        acks = self.handshake.frames_to_ack(shoe_event, hold=bool(self.fusion.pending))
        events = self._commit(drafts, link=acks[-1].link if acks else None)
        if self.checkpoints is not None and any(isinstance(e, RoundResult | RoundVoided) for e in events):
            events += self._checkpoint()
        self.handshake.acknowledge(acks)
        self._drive_devices(events)
        if rejected is not None:
            raise rejected
        return events

    def _fuse(self, event: Any, now: float) -> list[i.TableInput]:
        """Cards go through the shoe/camera cross-check before the table sees them."""
        m = self.machine
        dealing = m.state == "dealing" and not m.burning
        if isinstance(event, (i.CardPresented, CameraSaw, i.CameraDown)):
            log.debug("table %s: %s while %s (waiting for the camera: %s)", self.table, event,
                      m.state, [p.code for p in self.fusion.pending])
        if isinstance(event, i.CardPresented) and event.source == "shoe" and self.fusion.mode != "shoe":
            return self.fusion.shoe_card(event.code, m.deal, dealing, now, event.shoe_count)
        if isinstance(event, CameraSaw):
            held = m.state == "paused" and m.in_round
            return self.fusion.camera_card(
                event.position, event.index, event.code, m.deal, dealing, now, held=held
            )
        if isinstance(event, i.Tick):
            return [event, *self.fusion.tick(now, dealing, m.deal)]
        return [event]

    def _commit(self, drafts: list[Event], link: Any = None) -> list[Event]:
        """Stamp the machine's events (table, game, time), journal them (which numbers them),
        then publish them and tell the listeners."""
        now = self.clock()
        drafts = self._alerts.admit(drafts, now)
        if not drafts and link is None:
            return []
        made = [stamped(d, table=self.table, game=self.game.game_id, ts=now) for d in drafts]
        events: list[Event] = self.journal.append(
            made, link=(link.boot_id, link.seq) if link is not None else None
        )
        self._journaled_at = time.monotonic()
        if events:
            self.last_seq = events[-1].seq
            self._last_sent = now
            self.stats.events += len(events)
        if self.evidence is not None:
            self._ask_for_evidence(events)
        for event in events:
            if self.publisher is not None:
                self.publisher.publish(event)
            self._published_at = time.monotonic()
            for listener in self.listeners:
                try:
                    listener(event)
                except Exception:  # a broken listener must never stop the table
                    log.exception("event listener failed")
        return events

    def _evidence_event(self, kept: EvidenceKept | EvidenceLost) -> Event:
        """The ``evidence`` event of pictures the keeper kept (a card's: with its card event's seq
        when that is journaled), or the alert of pictures it could not keep."""
        if isinstance(kept, EvidenceLost):
            return Alert(round=self.machine.round_id, kind="device-fault", severity="warning", detail=kept.detail[:500])
        # the round of what the picture shows: the event's (a result's, a void's), the card's, or the
        # round on the table (the last one, just after it ended: a card seen as the round was voided)
        round_id, for_seq = kept.round or self.machine.round_id or self._last_round, kept.for_seq
        if kept.of == "card" and kept.position is not None and kept.index is not None and kept.code is not None:
            known = self._cards_journaled.get((kept.position, kept.index, kept.code))
            if known is not None:
                for_seq, round_id = known
        return EvidenceRecorded(round=round_id, of=kept.of, for_seq=for_seq,  # type: ignore[arg-type]
                                position=kept.position, index=kept.index, code=kept.code, card=kept.card,
                                frame=kept.frame, bytes=kept.bytes,
                                corners=[(x, y) for x, y in kept.corners] if kept.corners else None)

    def _ask_for_evidence(self, events: list[Event]) -> None:
        """The table's picture at a pause, a void, a result and a supervisor's action (the latest
        frame, kept off the loop); and which card events the camera's card pictures belong to."""
        for event in events:
            if isinstance(event, CardDealt):
                self._cards_journaled[(event.position, event.index, event.code)] = (event.seq, event.round)
                if len(self._cards_journaled) > 64:
                    self._cards_journaled.pop(next(iter(self._cards_journaled)))
                continue
            if event.round is not None:
                self._last_round = event.round
            if isinstance(event, TableStateChanged) and event.state == "paused":
                of = "pause"
            elif isinstance(event, RoundVoided):
                of = "void"
            elif isinstance(event, RoundResult):
                of = "result"
            elif isinstance(event, TableStateChanged) and isinstance(event.by, str):
                of = "supervisor"
            else:
                continue
            frame = self.latest_frame() if self.latest_frame is not None else None
            if frame is not None:
                self.evidence.submit(EvidenceRequest(of, frame, for_seq=event.seq, round=event.round))

    def _checkpoint(self) -> list[Event]:
        """Sign the journal's position at a round end, keep it outside the journal, publish it."""
        from table_controller.events import format_ts
        from table_controller.journal.checkpoints import Checkpoint, link_text, meta_digest

        j = self.journal
        checkpoint = self.checkpoints.sign(Checkpoint(
            table=self.table, seq=j.last_seq, hash=j.last_hash, link=link_text(j.link_state),
            meta=meta_digest(j.meta), ts=format_ts(self.clock()),
        ))
        try:
            self.checkpoints.append(checkpoint)
        except OSError as e:  # the checkpoint file is a second record: its failure is an alert
            return self._commit([Alert(
                round=None, kind="device-fault", severity="critical",
                detail=f"checkpoint of seq {checkpoint.seq} not written to "
                       f"{self.checkpoints.path}: {e.strerror or e}",
            )])
        return self._commit([CheckpointSigned(
            round=None, covers=checkpoint.seq, hash=checkpoint.hash, sig=checkpoint.sig,
        )])

    def _round_fully_drawn(self) -> bool:
        """The shoe has given every card the round needs, some still waiting for the camera:
        the gate locks now, so the dealer cannot pull a card too many meanwhile."""
        m = self.machine
        if not self.fusion.pending or m.deal is None or m.state != "dealing" or m.burning:
            return False
        return self.fusion.expected_slot(m.deal, extra=len(self.fusion.pending)) is None

    def _drive_devices(self, events: list[Event]) -> None:
        m = self.machine
        if m.link_up:
            self.link_ready.set()
        else:
            self.link_ready.clear()
        self.handshake.drive_gate(m.gate_should_be_open and not self._round_fully_drawn())
        if self.panel is not None:
            self.panel.show(m.state)
            if any(isinstance(e, Alert) and e.severity != "info" for e in events):
                self.panel.buzz()


class AlertLimiter:
    """At most ``limit`` alerts of one kind per ``window`` seconds; the rest are counted
    and reported in one summary alert when the window ends. Alerts change no table
    state, so leaving some out keeps the journal and the machine consistent."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit, self.window = limit, window
        self._since: dict[AlertKind, float] = {}
        self._count: dict[AlertKind, int] = {}
        self._suppressed: dict[AlertKind, int] = {}

    def admit(self, drafts: list[Event], now: float) -> list[Event]:
        out = self._summaries(now)
        for draft in drafts:
            if not isinstance(draft, Alert):
                out.append(draft)
                continue
            kind = draft.kind
            if now - self._since.get(kind, float("-inf")) >= self.window:
                self._since[kind], self._count[kind] = now, 0
            self._count[kind] += 1
            if self._count[kind] <= self.limit:
                out.append(draft)
            else:
                self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
        return out

    def _summaries(self, now: float) -> list[Event]:
        out: list[Event] = []
        for kind, n in list(self._suppressed.items()):
            if now - self._since[kind] >= self.window:
                del self._suppressed[kind]
                out.append(Alert(
                    round=None, kind=kind, severity="warning",
                    detail=f"{n} more {kind} alerts in {self.window:g} s were not journaled "
                           f"one by one (more than {self.limit})",
                ))
        return out


#: What a restart replays: every type but heartbeats (they change nothing, and are most of
#: an idle table's journal).
_REPLAYED_TYPES = tuple(t for t in EVENT_CLASSES if t != "heartbeat")
