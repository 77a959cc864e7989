"""The table's states, and what every input does in each of them: one declaration.

:data:`ROUND` is read top to bottom like a studio's procedure sheet: for every
input and every state it says whether the input is refused (with the reason the
sender gets), or handled, and to which states handling it may lead. A handled
input may also leave the state as it is (an alert, a card placed, a countdown
not yet over). :class:`~table_controller.table.machine.TableMachine` dispatches
by this declaration (a refusal never reaches a handler, a guard is asked first)
and checks every change of state its handlers make against it.

The declaration is checked when this module is imported (:func:`check`): one
initial state, every state reachable from it, no dead end, the initial state
reachable again from every state, and every (state, input) pair declared once.
The diagram in ``docs/controller.md`` is generated from it
(:mod:`table_controller.table.diagram`).
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, get_args

from table_controller.errors import TableError
from table_controller.table import inputs as i


class State(enum.StrEnum):
    """A ``table.state`` value of events.md; the value is the string journaled and published."""

    IDLE = "idle"
    BETTING = "betting"
    DEALING = "dealing"
    RESULT = "result"
    PAUSED = "paused"
    CLOSED = "closed"


IDLE, BETTING, DEALING, RESULT, PAUSED, CLOSED = State
EVERY_STATE = tuple(State)
IN_ROUND = (BETTING, DEALING, PAUSED)
"""The states a round can be in play in (``result`` is settled, no longer in play)."""

#: Every input type the table accepts (the members of :data:`~table_controller.table.inputs.TableInput`).
INPUT_TYPES: tuple[type, ...] = get_args(i.TableInput)


class TableView(Protocol):
    """What a guard may look at: the table's state and its devices' condition, read-only."""

    @property
    def state(self) -> State: ...
    @property
    def in_round(self) -> bool: ...
    @property
    def burning(self) -> bool: ...
    @property
    def link_up(self) -> bool: ...
    @property
    def lid_open(self) -> bool: ...
    @property
    def shoe_refused(self) -> bool: ...
    @property
    def pause_cause(self) -> str | None: ...


Guard = Callable[[TableView], "str | None"]
"""Asked before an input is handled: the reason to refuse it, or None to go ahead."""


@dataclass(frozen=True)
class Arrow:
    """A change of state an input may make, and when (in words, for the diagram)."""

    to: State
    when: str


@dataclass(frozen=True)
class Handle:
    """The input is handled; it may lead to any of ``arrows`` or leave the state as it is."""

    arrows: tuple[Arrow, ...] = ()
    guard: Guard | None = None

    @property
    def targets(self) -> frozenset[State]:
        return frozenset(a.to for a in self.arrows)


@dataclass(frozen=True)
class Refuse:
    """The input is refused in this state; ``reason`` may name ``{state}``."""

    reason: str

    def because(self, state: State) -> str:
        return self.reason.format(state=state.value)


Outcome = Handle | Refuse


@dataclass(frozen=True)
class On:
    """One line of the declaration: what ``input`` does in each of ``states``."""

    input: type
    states: tuple[State, ...]
    outcome: Outcome


@dataclass(frozen=True)
class StateInfo:
    """A state, what it means at the table, and whether the table starts in it."""

    state: State
    meaning: str
    initial: bool = False


class DeclarationError(TableError, AssertionError):
    """The state machine's declaration breaks one of its checks (a programming error)."""


@dataclass(frozen=True)
class Declaration:
    """States and, for every state and input, the outcome; see :func:`check`."""

    states: tuple[StateInfo, ...]
    rules: tuple[On, ...]

    @property
    def initial(self) -> State:
        (first,) = (s.state for s in self.states if s.initial)
        return first

    def outcomes(self) -> dict[tuple[State, type], Outcome]:
        """Every declared (state, input type) pair and its outcome."""
        return {(state, rule.input): rule.outcome for rule in self.rules for state in rule.states}

    def arrows(self) -> Iterable[tuple[State, type, Arrow]]:
        """Every declared change of state: (from, input type, arrow), in declaration order."""
        for rule in self.rules:
            if isinstance(rule.outcome, Handle):
                for state in rule.states:
                    for arrow in rule.outcome.arrows:
                        yield state, rule.input, arrow


def to(state: State, when: str) -> Arrow:
    return Arrow(state, when)


def handle(*arrows: Arrow, guard: Guard | None = None) -> Handle:
    return Handle(arrows, guard)


STAY = Handle()
"""Handled without a change of state (an alert, a counted card, a shoe event)."""

# ---------------------------------------------------------------------- guards
def shoe_is_ready(table: TableView) -> str | None:
    if table.burning:
        return "cannot start a round: the burn of the new shoe is not finished"
    if not table.link_up:
        return "cannot start a round: the shoe link is down"
    if table.lid_open:
        return "cannot start a round: the shoe's lid is open"
    return None


def a_round_is_in_play(table: TableView) -> str | None:
    return None if table.in_round else "no round to void"


def the_shoe_was_refused(table: TableView) -> str | None:
    return None if table.shoe_refused else f"nothing to resume: the table is {table.state.value}"


def the_trouble_is_over(table: TableView) -> str | None:
    if table.pause_cause == "shoe-link-down" and not table.link_up:
        return "cannot resume: the shoe link is still down"
    if table.lid_open:
        return "cannot resume: the shoe's lid is open"
    return None


# ---------------------------------------------------------------------- arrows used by many inputs
MISDEAL = (to(IDLE, "misdeal, void"), to(CLOSED, "misdeal, void (shoe ended)"))
TROUBLE = (to(PAUSED, "device trouble"),)
NEW_SHOE = (to(CLOSED, "new shoe refused"), to(DEALING, "new shoe, burn"))
OUTSIDE_A_ROUND = (IDLE, RESULT, CLOSED)
DEVICE_TROUBLE = (i.CameraDown, i.ShoeRestarted, i.DeviceFault)
MISDEALS = (i.CardDropped, i.ExposedCard, i.ExtraCard, i.CardMisplaced)

# ---------------------------------------------------------------------- the declaration
ROUND = Declaration(
    states=(
        StateInfo(IDLE, "no round, the dealer may start one", initial=True),
        StateInfo(BETTING, "a round is open for bets until the countdown ends or the dealer closes it"),
        StateInfo(DEALING, "the shoe's gate is open for the round's cards, or for the new shoe's burn"),
        StateInfo(RESULT, "the round is settled and shown for result_seconds"),
        StateInfo(PAUSED, "device trouble or a void request, waits for the device or a supervisor"),
        StateInfo(CLOSED, "the shoe ended or was refused, a new shoe (or a supervisor) reopens the table"),
    ),
    rules=(
        # input              in state(s)                       what happens
        On(i.StartRound,     (IDLE, RESULT),                   handle(to(BETTING, "start round"), guard=shoe_is_ready)),
        On(i.StartRound,     (BETTING, DEALING, PAUSED, CLOSED), Refuse("cannot start a round: the table is {state}")),

        On(i.CloseBetting,   (BETTING,),                       handle(to(DEALING, "close betting"))),
        On(i.CloseBetting,   (IDLE, DEALING, RESULT, PAUSED, CLOSED),
                                                               Refuse("cannot close betting: the table is {state}")),

        On(i.Tick,           (BETTING,),                       handle(to(DEALING, "countdown over"))),
        On(i.Tick,           (RESULT,),                        handle(to(IDLE, "result shown"),
                                                                      to(CLOSED, "result shown (shoe ended)"))),
        On(i.Tick,           (IDLE, DEALING, PAUSED, CLOSED),  STAY),

        # A card outside a round is counted in the deck audit and alerted.
        On(i.CardPresented,      OUTSIDE_A_ROUND,                  STAY),
        On(i.CardPresented,      (BETTING,),                       handle(*MISDEAL, to(PAUSED, "foreign card"))),
        On(i.CardPresented,      (DEALING,),                       handle(to(RESULT, "last card"),
                                                                      to(PAUSED, "foreign or duplicate card"),
                                                                      to(IDLE, "burn done"),
                                                                      to(CLOSED, "burn done (shoe ended)"))),
        # Paused for a link outage, a card drawn before the outage still counts; else a misdeal.
        On(i.CardPresented,      (PAUSED,),                        handle(*MISDEAL,
                                                                      to(RESULT, "last card"),
                                                                      to(PAUSED, "awaiting a card"),
                                                                      to(IDLE, "burn done"),
                                                                      to(CLOSED, "burn done (shoe ended)"))),

        On(i.NoRead,         OUTSIDE_A_ROUND,                  STAY),
        On(i.NoRead,         (BETTING,),                       handle(*MISDEAL)),
        On(i.NoRead,         (DEALING,),                       handle(to(PAUSED, "no read"))),
        On(i.NoRead,         (PAUSED,),                        handle(*MISDEAL, to(PAUSED, "awaiting a card"))),

        # An ExtraCard is also what a card becomes that would end the round while a later card
        # already left the shoe (TableMachine.handle_step).
        *(On(kind,           OUTSIDE_A_ROUND,                  STAY) for kind in MISDEALS),
        *(On(kind,           (BETTING, DEALING, PAUSED),       handle(*MISDEAL)) for kind in MISDEALS),

        On(i.CameraMismatch, OUTSIDE_A_ROUND,                  STAY),
        On(i.CameraMismatch, (BETTING, DEALING),               handle(*TROUBLE)),
        On(i.CameraMismatch, (PAUSED,),                        handle(to(PAUSED, "awaiting a card"))),
        *(On(kind,           (IDLE, RESULT, PAUSED, CLOSED),   STAY) for kind in DEVICE_TROUBLE),
        *(On(kind,           (BETTING, DEALING),               handle(*TROUBLE)) for kind in DEVICE_TROUBLE),
        On(i.DeviceWarning,  EVERY_STATE,                      STAY),

        On(i.LidChanged,     (IDLE, RESULT, PAUSED, CLOSED),   STAY),
        On(i.LidChanged,     (BETTING, DEALING),               handle(to(PAUSED, "lid opened"))),

        On(i.LinkChanged,    OUTSIDE_A_ROUND,                  STAY),
        On(i.LinkChanged,    (BETTING, DEALING),               handle(to(PAUSED, "shoe link down"))),
        # The link's go-back-N delivery loses no card: its outage ends by itself.
        On(i.LinkChanged,    (PAUSED,),                        handle(to(BETTING, "shoe link back"),
                                                                      to(DEALING, "shoe link back"))),

        On(i.VoidRequest,    OUTSIDE_A_ROUND,                  Refuse("no round to void")),
        On(i.VoidRequest,    (BETTING, DEALING),               handle(to(PAUSED, "void requested"),
                                                                      guard=a_round_is_in_play)),
        On(i.VoidRequest,    (PAUSED,),                        handle(guard=a_round_is_in_play)),

        On(i.SupervisorVoid, OUTSIDE_A_ROUND,                  Refuse("no round to void")),
        On(i.SupervisorVoid, (BETTING, DEALING, PAUSED),       handle(to(IDLE, "supervisor voids"),
                                                                      to(CLOSED, "supervisor voids (shoe ended)"),
                                                                      guard=a_round_is_in_play)),

        On(i.SupervisorResume, (IDLE, BETTING, DEALING, RESULT), Refuse("nothing to resume: the table is {state}")),
        On(i.SupervisorResume, (PAUSED,),                      handle(to(BETTING, "supervisor resumes"),
                                                                      to(DEALING, "supervisor resumes"),
                                                                      to(RESULT, "the confirmed card is the last"),
                                                                      to(IDLE, "the confirmed card ends the burn"),
                                                                      to(CLOSED, "burn done (shoe ended)"),
                                                                      guard=the_trouble_is_over)),
        On(i.SupervisorResume, (CLOSED,),                      handle(to(IDLE, "supervisor accepts the shoe"),
                                                                      to(DEALING, "supervisor accepts the shoe, burn"),
                                                                      guard=the_shoe_was_refused)),

        # A new shoe during a round voids it first; a game that burns then deals the burn.
        On(i.ShoeNew,        (IDLE, RESULT),                   handle(*NEW_SHOE)),
        On(i.ShoeNew,        (BETTING, DEALING, PAUSED),       handle(to(IDLE, "shoe reloaded mid-round, void"),
                                                                      *NEW_SHOE)),
        On(i.ShoeNew,        (CLOSED,),                        handle(to(IDLE, "new shoe"), *NEW_SHOE)),
        On(i.ShoeCut,        EVERY_STATE,                      STAY),
        # a dealer may sign in or out at any moment: the rounds started after it carry the dealer
        On(i.DealerSignIn,   EVERY_STATE,                      STAY),
        On(i.ShoeEmpty,      (IDLE, RESULT),                   handle(to(CLOSED, "shoe empty"))),
        On(i.ShoeEmpty,      (BETTING, CLOSED),                STAY),
        On(i.ShoeEmpty,      (DEALING,),                       handle(to(PAUSED, "shoe empty mid-round"),
                                                                      to(CLOSED, "shoe empty during the burn"))),
        On(i.ShoeEmpty,      (PAUSED,),                        handle(to(CLOSED, "shoe empty during the burn"))),
    ),
)


# ---------------------------------------------------------------------- checks
def check(declaration: Declaration, inputs: Iterable[type] = INPUT_TYPES) -> None:
    """Raise :class:`DeclarationError` unless the declaration is a sound state machine.

    Exactly one initial state; every :class:`State` described once; every (state,
    input) pair declared exactly once; every state reachable from the initial one;
    no dead end (every state has an arrow to another); the initial state reachable
    again from every state.
    """
    described = [s.state for s in declaration.states]
    initial = [s.state for s in declaration.states if s.initial]
    if len(initial) != 1:
        raise DeclarationError(f"exactly one initial state is needed, not {len(initial)}: [{_names(initial)}]")
    if sorted(described) != sorted(State):
        missing = _names(set(State) - set(described))
        twice = _names({s for s in described if described.count(s) > 1})
        raise DeclarationError(f"every state is described once: missing [{missing}], twice [{twice}]")

    seen: dict[tuple[State, type], int] = {}
    for rule in declaration.rules:
        for state in rule.states:
            seen[state, rule.input] = seen.get((state, rule.input), 0) + 1
    kinds = tuple(inputs)
    missing_pairs = [f"{k.__name__} in {s}" for s in State for k in kinds if (s, k) not in seen]
    if missing_pairs:
        raise DeclarationError(f"no outcome declared for {', '.join(missing_pairs)}")
    repeated = [f"{k.__name__} in {s}" for (s, k), n in seen.items() if n > 1]
    if repeated:
        raise DeclarationError(f"more than one outcome declared for {', '.join(repeated)}")
    unknown = sorted({k.__name__ for _, k in seen} - {k.__name__ for k in kinds})
    if unknown:
        raise DeclarationError(f"outcomes declared for inputs the table does not take: {unknown}")

    leads_to: dict[State, set[State]] = {s: set() for s in State}
    for source, _, arrow in declaration.arrows():
        leads_to[source].add(arrow.to)
    start = initial[0]
    unreachable = set(State) - _reachable(start, leads_to)
    if unreachable:
        raise DeclarationError(f"states not reachable from {start}: [{_names(unreachable)}]")
    dead_ends = [s for s in State if not leads_to[s] - {s}]
    if dead_ends:
        raise DeclarationError(f"dead-end states (no arrow to another state): [{_names(dead_ends)}]")
    traps = [s for s in State if start not in _reachable(s, leads_to)]
    if traps:
        raise DeclarationError(f"states from which {start} cannot be reached again: [{_names(traps)}]")


def _names(states: Iterable[State]) -> str:
    """The states' values in the order of :class:`State`."""
    return ", ".join(s.value for s in State if s in set(states))


def _reachable(start: State, leads_to: dict[State, set[State]]) -> set[State]:
    seen, todo = {start}, deque([start])
    while todo:
        for nxt in leads_to[todo.popleft()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


check(ROUND)
