"""The table's state machine: rounds, dealing enforcement, shoe procedure and pauses.

Pure: it is handed inputs and the time, and answers with events (of
:mod:`table_controller.event_types`, unstamped: the controller adds table, game and
time, the journal the seq). It never touches a device, a file or a clock. Every
change of state happens by *applying* an event, both live (each event is applied
as it is emitted) and at start-up (the journal's events are replayed through
:meth:`TableMachine.restore`), so a restarted controller is in exactly the state
its journal describes.

Which inputs each state takes, refuses, and where they may lead is declared in
one place, :data:`table_controller.table.states.ROUND`; the machine dispatches by
it and checks every change of state against it. A game that burns after a new
shoe (:attr:`Game.burns_new_shoe <table_controller.rules.game.Game.burns_new_shoe>`,
baccarat) is ``dealing`` with no round while it burns (cards to position ``burn``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from table_controller import event_types as ev
from table_controller.errors import CardError, TableError
from table_controller.event_types import parse_ts
from table_controller.rules.cards import CODES, Card, parse_card
from table_controller.rules.game import Deal, Game, money_text
from table_controller.table import inputs as i
from table_controller.table.audit import DeckAudit
from table_controller.table.states import (
    BETTING,
    CLOSED,
    DEALING,
    IDLE,
    IN_ROUND,
    PAUSED,
    RESULT,
    ROUND,
    DeclarationError,
    Handle,
    Refuse,
    State,
)

_OUTCOMES = ROUND.outcomes()


class IllegalInput(TableError, ValueError):
    """An input that has no transition from the table's current state."""


class UndeclaredTransition(TableError, AssertionError):
    """A handler tried a change of state that :data:`~table_controller.table.states.ROUND` does not declare.

    A programming error, never caused by the input alone: the controller refuses the
    input and rebuilds the machine from the journal.
    """


@dataclass(frozen=True)
class Pause:
    """Why the table is paused and what resuming needs."""

    cause: str
    resume_to: State
    awaiting_card: bool
    #: the card the shoe gave and the pause awaits confirmation of (source-mismatch)
    shoe_card: str | None = None


@dataclass(frozen=True)
class StepOutcome:
    """What the inputs of one :meth:`TableMachine.handle_step` did.

    ``events``: the events they caused, already applied. ``refused``: the refusal that
    ended the step early, or None; the inputs before it stay applied, so their events
    must be journaled all the same.
    """

    events: list[ev.Event]
    refused: IllegalInput | None = None


class TableMachine:
    """One table's rounds, from the first card of a shoe to the last settled bet."""

    def __init__(
        self,
        game: Game,
        *,
        table: str,
        betting_seconds: float = 15,
        result_seconds: float = 3,
        burns: bool | None = None,
    ) -> None:
        self.game = game
        self.table = table
        self.betting_seconds = betting_seconds
        self.result_seconds = result_seconds
        self.burns = game.burns_new_shoe if burns is None else burns
        self.state: State = ROUND.initial
        self.reason: str | None = None
        self.round_id: str | None = None
        #: the dealer signed in (``dealer`` events), or None
        self.dealer: str | None = None
        self.round_no = 0
        self.deal: Deal | None = None
        self.pause: Pause | None = None
        self.state_since = 0.0
        self.betting_ends: float | None = None
        self.audit = DeckAudit(game.decks)
        self.rounds_left: int | None = None  # set by the cut card / an empty shoe
        self.burning = False
        self.burn_left: int | None = None
        self.burn_total: int | None = None
        self.link_up = True
        self.lid_open = False
        #: The loaded shoe claimed another deck count than the variant's: no round until a
        #: supervisor accepts it or a right shoe is loaded.
        self.shoe_refused = False
        self.last_shoe_count: int | None = None  # the shoe's count of its latest card
        self.fresh_shoe = False  # a new shoe was announced and no card has left it yet
        self._out: list[ev.Event] = []
        self._now = 0.0
        self._input: i.TableInput | None = None
        self._may_lead_to: frozenset[State] = frozenset()

    # ------------------------------------------------------------------ queries
    @property
    def in_round(self) -> bool:
        """True from betting to the last card; a settled round (``result``) is no longer in play."""
        return self.round_id is not None and self.state in IN_ROUND

    @property
    def next_position(self) -> str | None:
        """Where the next card must go: a game position, ``burn``, or None."""
        if self.burning:
            return "burn"
        if self.deal is not None and self.state in (DEALING, PAUSED):
            return self.deal.next_position
        return None

    @property
    def gate_should_be_open(self) -> bool:
        """The shoe's gate opens only while cards are called for."""
        return self.state == DEALING

    @property
    def pause_cause(self) -> str | None:
        """Why the table is paused (an alert kind, or ``void-request``), or None."""
        return self.pause.cause if self.pause is not None else None

    def refusal(self, event: i.TableInput) -> str | None:
        """Why ``event`` would be refused now (by the declaration or its guard), or None."""
        outcome = _OUTCOMES.get((self.state, type(event)))
        if outcome is None:
            return f"the table does not understand {type(event).__name__}"
        if isinstance(outcome, Refuse):
            return outcome.because(self.state)
        return outcome.guard(self) if outcome.guard is not None else None

    def can_start_round(self) -> str | None:
        """Why a round cannot start now (the refusal a StartRound would get), or None when it can."""
        return self.refusal(i.StartRound())

    # ------------------------------------------------------------------ driving
    def handle(self, event: i.TableInput, now: float) -> list[ev.Event]:
        """Apply one input at time ``now``; returns the events it caused (already applied).

        Raises :class:`IllegalInput` when the declaration refuses the input in this state
        (or its guard does, or the input itself is malformed, e.g. a mistyped card).
        """
        why_not = self.refusal(event)
        if why_not is not None:
            raise IllegalInput(why_not)
        outcome = _OUTCOMES[self.state, type(event)]
        assert isinstance(outcome, Handle)
        self._out, self._now = [], now
        self._input, self._may_lead_to = event, outcome.targets
        try:
            _HANDLERS[type(event)](self, event)
        finally:
            self._input, self._may_lead_to = None, frozenset()
        out, self._out = self._out, []
        return out

    def handle_step(
        self, inputs: Sequence[i.TableInput], now: float, *, cards_waiting: Sequence[str] = ()
    ) -> StepOutcome:
        """Apply the inputs of one step (what one device event amounted to), in order, at ``now``.

        ``cards_waiting``: cards that left the shoe after every card of ``inputs`` and are
        not inputs yet (shoe cards waiting for the camera). A card that would be the
        round's last while a card already left the shoe after it (a later card of
        ``inputs`` or one of ``cards_waiting``) is handled as an
        :class:`~table_controller.table.inputs.ExtraCard` instead, naming both cards
        (games.md: a misdeal, the round is voided, not settled), and ends the step: the
        inputs after it are not applied.

        Stops at the first input refused (:meth:`handle` would raise
        :class:`IllegalInput`) and returns the refusal with the events before it.
        """
        events: list[ev.Event] = []
        for k, table_input in enumerate(inputs):
            later = [x.code for x in inputs[k + 1:] if isinstance(x, i.CardPresented)]
            extra = self._as_extra_card(table_input, [*later, *cards_waiting])
            try:
                events += self.handle(extra or table_input, now)
            except IllegalInput as refused:
                return StepOutcome(events, refused)
            if extra is not None:
                break
        return StepOutcome(events)

    def _as_extra_card(self, table_input: i.TableInput, later: Sequence[str]) -> i.ExtraCard | None:
        """The extra card ``table_input`` amounts to: its card would end the round while
        ``later`` cards already left the shoe. None when it does not."""
        if isinstance(table_input, i.CardPresented):
            code: str | None = table_input.code
        elif isinstance(table_input, i.SupervisorResume):
            code = table_input.card
        else:
            code = None
        if code is None or not later or self.deal is None:
            return None
        try:
            card = parse_card(code)
        except CardError:
            return None  # not a card of the deck: its own handler says so
        if not self.deal.is_completed_by(card):
            return None
        return i.ExtraCard(f"card {later[0]} left the shoe after the round's last card {code}")

    def restore(self, events: Iterable[ev.Event]) -> None:
        """Rebuild the state from journaled events, in seq order."""
        for event in events:
            try:
                self._apply(event, parse_ts(event.ts))
            except (AssertionError, KeyError, TypeError, ValueError, TableError) as e:
                raise TableError(
                    f"journal event seq {event.seq} ({event.type}) cannot be replayed: "
                    f"{e or type(e).__name__}; inspect it with `table-controller journal verify`"
                ) from e

    # ------------------------------------------------------------------ emitting
    def _emit(self, event: ev.Event) -> None:
        self._apply(event, self._now)
        self._out.append(event)

    def _set_state(
        self, state: State, reason: str | None = None, *, by: str | ev.UnsetType = ev.UNSET
    ) -> None:
        self._enter(ev.TableStateChanged(round=self._round_of(state), state=state.value, reason=reason, by=by))

    def _enter(self, event: ev.TableStateChanged) -> None:
        state = State(event.state)
        if state not in self._may_lead_to:
            name = type(self._input).__name__
            raise UndeclaredTransition(f"{name} may not lead the table to {state} (see states.ROUND)")
        self._emit(event)

    def _round_of(self, state: State) -> str | None:
        return self.round_id if state in IN_ROUND or state == RESULT else None

    def _alert(self, kind: ev.AlertKind, severity: ev.Severity, detail: str) -> None:
        self._emit(ev.Alert(round=self.round_id, kind=kind, severity=severity, detail=detail))

    def _pause(
        self, cause: str, detail: str, *, awaiting_card: bool, alert: bool = True,
        shoe_card: str | None = None,
    ) -> None:
        if alert:
            self._alert(cast(ev.AlertKind, cause), "critical", detail)
        if self.state == PAUSED:
            assert self.pause is not None
            if awaiting_card and not self.pause.awaiting_card:
                self._enter(self._paused(cause, detail, self.pause.resume_to, awaiting_card, shoe_card))
            return
        self._enter(self._paused(cause, detail, self.state, awaiting_card, shoe_card))

    def _paused(
        self, cause: str, detail: str, resume_to: State, awaiting_card: bool, shoe_card: str | None
    ) -> ev.TableStateChanged:
        return ev.TableStateChanged(
            round=self._round_of(PAUSED), state=PAUSED.value, reason=detail, cause=cause,
            resume_to=resume_to.value, awaiting="card" if awaiting_card else None,
            shoe_card=shoe_card if shoe_card is not None else ev.UNSET,
        )

    def _void(self, reason: str, by: str | None = None) -> None:
        self._emit(ev.RoundVoided(round=self.round_id, reason=reason, refund=True, by=by or ev.UNSET))
        self._set_state(*self._after_round())

    def _after_round(self) -> tuple[State, str | None]:
        if self.rounds_left == 0:
            return CLOSED, "end of shoe: load a new shoe"
        return IDLE, None

    def _trouble(self, kind: ev.AlertKind, detail: str, *, awaiting_card: bool, shoe_card: str | None = None) -> None:
        """Device trouble: pause a round in progress, else just tell."""
        if self.in_round or self.burning:
            self._pause(kind, detail, awaiting_card=awaiting_card, shoe_card=shoe_card)
        else:
            self._alert(kind, "warning", detail)

    def _misdeal(self, kind: ev.AlertKind, detail: str) -> None:
        """A misdeal voids the round and refunds every bet."""
        if self.in_round:
            self._alert(kind, "critical", detail)
            self._void(f"misdeal: {detail}")
        else:
            self._alert(kind, "warning", detail)

    # ------------------------------------------------------------------ inputs
    def _on_StartRound(self, e: i.StartRound) -> None:
        round_id = f"{self.table}-{self.round_no + 1:06d}"
        self._emit(ev.RoundStarted(
            round=round_id, variant=self.game.variant.id, betting_seconds=self.betting_seconds, by=e.by,
            dealer=self.dealer if self.dealer is not None else ev.UNSET,
        ))
        self._set_state(BETTING)

    def _on_CloseBetting(self, e: i.CloseBetting) -> None:
        self._close_betting()

    def _close_betting(self) -> None:
        self._emit(ev.BettingClosed(round=self.round_id))
        self._set_state(DEALING)

    def _on_Tick(self, e: i.Tick) -> None:
        if self.state == BETTING and self.betting_ends is not None and self._now >= self.betting_ends:
            self._close_betting()
        elif self.state == RESULT and self._now >= self.state_since + self.result_seconds:
            self._set_state(*self._after_round())

    def _on_CardPresented(self, e: i.CardPresented) -> None:
        try:
            card = parse_card(e.code)
        except CardError:
            self._trouble("foreign-card", f"card {e.code!r} is not in the deck", awaiting_card=True)
            return
        last = self.last_shoe_count
        if e.shoe_count is not None and last is not None and e.shoe_count <= last:
            self._alert(
                "device-fault", "critical",
                f"the shoe's count went from {last} to {e.shoe_count} (card {e.code}) within one shoe",
            )
        if self.state == PAUSED:
            assert self.pause is not None
            if self.pause.cause == "shoe-link-down":
                self._place(card, e.source, e.shoe_count)  # drawn before the outage was noticed: in order
            else:
                self._misdeal("wrong-order", f"card {e.code} drawn while the table was paused")
            return
        if self.state == BETTING:
            self._misdeal("exposed-card", f"card {e.code} drawn before betting closed")
            return
        if self.state != DEALING:
            self.audit.add(card)
            self._alert("wrong-order", "warning", f"card {e.code} drawn outside a round")
            return
        self._place(card, e.source, e.shoe_count)

    def _place(self, card: Card, source: str, shoe_count: int | None = None) -> None:
        code = CODES[card]
        if not self.audit.can_add(card):
            shoe = "this round's deck" if self.game.decks == 1 else f"{self.game.decks} decks"
            self._pause(
                "duplicate-card", f"card {code} seen more often than {shoe} hold", awaiting_card=True
            )
            return
        count = shoe_count if shoe_count is not None else ev.UNSET
        if self.burning:
            index = 0 if self.burn_left is None else self._burned
            self._emit(ev.CardDealt(
                round=None, position="burn", index=index, code=code, source=cast(ev.CardSource, source),
                shoe_count=count,
            ))
            if self.burn_left == 0:
                self._set_state(*self._after_burn())
            return
        assert self.deal is not None
        position = self.deal.next_position
        if position is None:
            self._alert("wrong-order", "warning", f"card {code} was not called for")
            return
        index = len(self.deal.hands[position])
        self._emit(ev.CardDealt(
            round=self.round_id, position=position, index=index, code=code,
            source=cast(ev.CardSource, source), shoe_count=count,
        ))
        if self.deal.is_complete:
            result = self.deal.result()
            self._emit(ev.RoundResult(
                round=self.round_id,
                hands={p: ev.HandSummary(cards=list(h.cards), cls=h.cls, points=h.points)
                       for p, h in result.hands.items()},
                outcome=result.outcome,
                payouts={bet: money_text(amount) for bet, amount in result.payouts.items()},
            ))
            self._set_state(RESULT)

    def _after_burn(self) -> tuple[State, str | None]:
        # A shoe accepted by a supervisor after it was found empty has ended before its burn.
        return (CLOSED, "end of shoe: load a new shoe") if self.rounds_left == 0 else (IDLE, None)

    def _on_NoRead(self, e: i.NoRead) -> None:
        if self.state == PAUSED and self.pause and self.pause.cause != "shoe-link-down":
            self._misdeal("wrong-order", "a card was drawn while the table was paused")
        elif self.state == BETTING:
            self._misdeal("exposed-card", "a card was drawn before betting closed")
        elif self.in_round or self.burning:
            self._pause("no-read", e.detail, awaiting_card=True)
        else:
            self._alert("no-read", "warning", e.detail + " (outside a round)")

    def _on_CardDropped(self, e: i.CardDropped) -> None:
        self._misdeal("dropped-card", e.detail)

    def _on_ExposedCard(self, e: i.ExposedCard) -> None:
        self._misdeal("exposed-card", e.detail)

    def _on_ExtraCard(self, e: i.ExtraCard) -> None:
        self._misdeal("wrong-order", e.detail)

    def _on_CardMisplaced(self, e: i.CardMisplaced) -> None:
        self._misdeal("wrong-position", e.detail)

    def _on_CameraMismatch(self, e: i.CameraMismatch) -> None:
        self._trouble("source-mismatch", e.detail, awaiting_card=True, shoe_card=e.shoe_card)

    def _on_CameraDown(self, e: i.CameraDown) -> None:
        self._trouble("camera-down", e.detail, awaiting_card=False)

    def _on_VoidRequest(self, e: i.VoidRequest) -> None:
        self._pause("void-request", f"void requested by {e.by}", awaiting_card=False, alert=False)

    def _on_ShoeNew(self, e: i.ShoeNew) -> None:
        if e.announced_by is not None and self.fresh_shoe:
            return  # a supervisor's repeat (a reply lost, a retry): the same shoe, nothing to do
        if self.in_round:
            self._alert("device-fault", "critical", "the shoe was reloaded during a round")
            self._void("misdeal: the shoe was reloaded during a round")
        decks = self.game.decks  # the variant decides how many decks there are, not the device
        refused = e.decks != decks
        self._emit(ev.ShoeChanged(
            round=None, event="new", count=0, decks=decks,
            previous_audit=self._audit() if self.audit.seen else ev.UNSET,
            claimed_decks=e.decks if refused else ev.UNSET, refused=True if refused else ev.UNSET,
        ))
        if e.decks != decks:
            detail = (
                f"the shoe reports {e.decks} decks but {self.game.variant.id} plays {decks}: "
                "shoe refused until a supervisor accepts it (supervise resume) or a "
                f"{decks}-deck shoe is loaded"
            )
            self._alert("device-fault", "critical", detail)
            self._set_state(CLOSED, detail)
            return
        if self.burns:
            self._set_state(DEALING, "burn")
        elif self.state == CLOSED:
            self._set_state(IDLE)

    def _on_ShoeCut(self, e: i.ShoeCut) -> None:
        self._emit(ev.ShoeChanged(round=self.round_id, event="cut", count=e.count))

    def _on_ShoeEmpty(self, e: i.ShoeEmpty) -> None:
        report = self._audit()
        self._emit(ev.ShoeChanged(round=self.round_id, event="empty", count=e.count, audit=report))
        if report.extra:
            self._alert("duplicate-card", "critical", f"deck audit: extra cards {report.extra}")
        if self.state == DEALING and self.in_round:
            self._pause("device-fault", "the shoe is empty in the middle of a round", awaiting_card=True)
        elif not self.in_round and self.state != CLOSED:
            self._set_state(CLOSED, "the shoe is empty: load a new shoe")

    def _on_LidChanged(self, e: i.LidChanged) -> None:
        self.lid_open = e.is_open
        if e.is_open:
            self._trouble("lid-open", "the shoe's lid was opened", awaiting_card=False)

    def _on_LinkChanged(self, e: i.LinkChanged) -> None:
        self.link_up = e.up
        if not e.up:
            self._trouble("shoe-link-down", e.reason or "no frame from the shoe for 2 s", awaiting_card=False)
        elif self.state == PAUSED and self.pause and self.pause.cause == "shoe-link-down":
            # The link's go-back-N delivery guarantees no card was lost while it was down.
            self._set_state(self.pause.resume_to, "shoe link restored")

    def _on_ShoeRestarted(self, e: i.ShoeRestarted) -> None:
        self._trouble("device-fault", e.detail, awaiting_card=False)

    def _on_DeviceFault(self, e: i.DeviceFault) -> None:
        self._trouble("device-fault", e.detail, awaiting_card=False)

    def _on_DeviceWarning(self, e: i.DeviceWarning) -> None:
        self._alert("device-fault", "warning", e.detail)

    def _on_SupervisorResume(self, e: i.SupervisorResume) -> None:
        if self.state == CLOSED:  # the declaration's guard: the shoe was refused
            if e.card is not None:
                raise IllegalInput("no card is awaited: accept the shoe without a card")
            self._accept_shoe(e.by)
            return
        assert self.pause is not None
        card: Card | None = None
        if self.pause.awaiting_card:
            if e.card is None:
                raise IllegalInput("resuming needs the confirmed card (e.g. --card TS)")
            try:
                card = parse_card(e.card)
            except CardError as error:  # a supervisor's typo is refused, never fatal
                raise IllegalInput(f"cannot resume: {error} (a card is e.g. TS, AH, 9D)") from error
            if not self.audit.can_add(card):
                raise IllegalInput(f"card {CODES[card]} has already been dealt from this shoe")
        elif e.card is not None:
            raise IllegalInput("no card is awaited: resume without a card")
        self._set_state(self.pause.resume_to, f"resumed by {e.by}", by=e.by)
        if card is not None:
            self._place(card, "manual")

    def _accept_shoe(self, by: str) -> None:
        """A supervisor accepts a shoe whose deck count was refused (the variant's count holds)."""
        self._alert("device-fault", "info", f"shoe accepted by {by} as {self.game.decks} decks")
        if self.burns:
            self._set_state(DEALING, "burn", by=by)
        else:
            self._set_state(IDLE, f"shoe accepted by {by}", by=by)

    def _on_DealerSignIn(self, e: i.DealerSignIn) -> None:
        self._emit(ev.DealerChanged(dealer=e.dealer, by=e.by))

    def _on_SupervisorVoid(self, e: i.SupervisorVoid) -> None:
        self._void(e.reason, by=e.by)

    # ------------------------------------------------------------------ applying
    @property
    def _burned(self) -> int:
        assert self.burn_total is not None and self.burn_left is not None
        return self.burn_total - self.burn_left + 1

    def _audit(self) -> ev.DeckAudit:
        report = self.audit.report()
        return ev.DeckAudit(
            decks=report["decks"], seen=report["seen"], missing=report["missing"], extra=report["extra"],
            complete=report["complete"],
        )

    def _apply(self, event: ev.Event, ts: float) -> None:
        match event:
            case ev.RoundStarted(round=round_id, betting_seconds=betting_seconds):
                self.round_id = round_id
                self.round_no = int(str(round_id).rsplit("-", 1)[-1])
                self.deal = self.game.new_deal()
                self.betting_seconds = betting_seconds
                if self.game.shuffle_every_round:
                    self.audit.reset()
            case ev.TableStateChanged():
                self._apply_state(event, ts)
            case ev.BettingClosed():
                self.betting_ends = None
            case ev.DealerChanged(dealer=dealer):
                self.dealer = dealer
            case ev.CardDealt():
                self._apply_card(event)
            case ev.RoundResult() | ev.RoundVoided():
                if self.rounds_left is not None:
                    self.rounds_left = max(0, self.rounds_left - 1)
            case ev.ShoeChanged(event="new"):
                self.audit.reset(event.decks if isinstance(event.decks, int) else self.game.decks)
                self.rounds_left = None
                self.shoe_refused = event.refused is True
                self.last_shoe_count = None
                self.fresh_shoe = True
            case ev.ShoeChanged(event="cut"):
                self.rounds_left = 2 if self.in_round else 1
            case ev.ShoeChanged(event="empty"):
                self.rounds_left = 1 if self.in_round else 0

    def _apply_state(self, event: ev.TableStateChanged, ts: float) -> None:
        self.state, self.reason, self.state_since = State(event.state), event.reason, ts
        if self.state == PAUSED:
            if not isinstance(event.cause, str) or not isinstance(event.resume_to, str):
                raise TableError("a pause without its cause and the state to resume to")
            shoe_card = event.shoe_card if isinstance(event.shoe_card, str) else None
            self.pause = Pause(event.cause, State(event.resume_to), event.awaiting == "card", shoe_card)
        else:
            self.pause = None
        if self.state == BETTING:
            self.betting_ends = ts + self.betting_seconds
        if self.state in (IDLE, CLOSED):
            self.round_id, self.deal, self.burning = None, None, False
        if self.state != CLOSED:
            self.shoe_refused = False
        if self.state == DEALING and event.reason == "burn":
            self.burning, self.burn_left, self.burn_total = True, None, None

    def _apply_card(self, event: ev.CardDealt) -> None:
        card = parse_card(event.code)
        self.audit.add(card)
        self.fresh_shoe = False
        if isinstance(event.shoe_count, int):
            self.last_shoe_count = event.shoe_count
        if event.position == "burn":
            if event.index == 0:
                self.burn_total = self.burn_left = self.game.burn_count(card)
            else:
                assert self.burn_left is not None
                self.burn_left -= 1
            return
        assert self.deal is not None, "card event outside a round"
        position, index = self.deal.place(card)
        if (position, index) != (event.position, event.index):
            raise TableError(
                f"journal card {event.code} at {event.position}[{event.index}] does not follow "
                f"the dealing plan ({position}[{index}])"
            )



_HANDLERS: dict[type, Callable[[TableMachine, Any], None]] = {
    i.StartRound: TableMachine._on_StartRound,
    i.CloseBetting: TableMachine._on_CloseBetting,
    i.Tick: TableMachine._on_Tick,
    i.CardPresented: TableMachine._on_CardPresented,
    i.NoRead: TableMachine._on_NoRead,
    i.CardDropped: TableMachine._on_CardDropped,
    i.ExposedCard: TableMachine._on_ExposedCard,
    i.ExtraCard: TableMachine._on_ExtraCard,
    i.CardMisplaced: TableMachine._on_CardMisplaced,
    i.CameraMismatch: TableMachine._on_CameraMismatch,
    i.CameraDown: TableMachine._on_CameraDown,
    i.VoidRequest: TableMachine._on_VoidRequest,
    i.ShoeNew: TableMachine._on_ShoeNew,
    i.ShoeCut: TableMachine._on_ShoeCut,
    i.ShoeEmpty: TableMachine._on_ShoeEmpty,
    i.LidChanged: TableMachine._on_LidChanged,
    i.LinkChanged: TableMachine._on_LinkChanged,
    i.ShoeRestarted: TableMachine._on_ShoeRestarted,
    i.DeviceFault: TableMachine._on_DeviceFault,
    i.DeviceWarning: TableMachine._on_DeviceWarning,
    i.SupervisorResume: TableMachine._on_SupervisorResume,
    i.SupervisorVoid: TableMachine._on_SupervisorVoid,
    i.DealerSignIn: TableMachine._on_DealerSignIn,
}
"""The handler of every input the declaration does not refuse (one per input type)."""
if set(_HANDLERS) != {kind for _, kind in _OUTCOMES}:
    raise DeclarationError("every input the declaration names needs one handler in _HANDLERS, and no other")
