"""The round's state machine as declared in table/states.py: its checks, the machine's obedience, the diagram."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from table_controller.event_types import TableStateChanged, numbered, stamped
from table_controller.rules import load_game
from table_controller.rules.cards import Card
from table_controller.rules.teen_patti import TeenPatti2020
from table_controller.table import IllegalInput, TableMachine
from table_controller.table import inputs as i
from table_controller.table.diagram import BEGIN, END, main, mermaid, with_diagram
from table_controller.table.states import (
    INPUT_TYPES,
    ROUND,
    STAY,
    Declaration,
    DeclarationError,
    Handle,
    On,
    Outcome,
    Refuse,
    State,
    check,
    to,
)

# ---------------------------------------------------------------------- the checks
Change = Callable[[State, type, Outcome], Outcome | None]


def changed(change: Change, declaration: Declaration = ROUND) -> Declaration:
    """The declaration with every (state, input) outcome passed through ``change`` (None drops it)."""
    rules = []
    for (state, kind), outcome in declaration.outcomes().items():
        new = change(state, kind, outcome)
        if new is not None:
            rules.append(On(kind, (state,), new))
    return dataclasses.replace(declaration, rules=tuple(rules))


def without_arrows_to(target: State) -> Change:
    def change(state: State, kind: type, outcome: Outcome) -> Outcome:
        if isinstance(outcome, Handle):
            return dataclasses.replace(outcome, arrows=tuple(a for a in outcome.arrows if a.to != target))
        return outcome
    return change


def test_the_round_declaration_passes_every_check() -> None:
    check(ROUND)
    check(changed(lambda s, k, o: o))  # the same declaration, one line per pair


def test_two_initial_states_are_refused() -> None:
    states = tuple(dataclasses.replace(s, initial=True) if s.state == State.CLOSED else s for s in ROUND.states)
    with pytest.raises(DeclarationError, match=r"exactly one initial state is needed, not 2: \[idle, closed\]$"):
        check(dataclasses.replace(ROUND, states=states))


def test_no_initial_state_is_refused() -> None:
    states = tuple(dataclasses.replace(s, initial=False) for s in ROUND.states)
    with pytest.raises(DeclarationError, match=r"exactly one initial state is needed, not 0: \[\]$"):
        check(dataclasses.replace(ROUND, states=states))


def test_a_state_left_undescribed_is_refused() -> None:
    states = tuple(s for s in ROUND.states if s.state != State.RESULT)
    with pytest.raises(DeclarationError, match=r"every state is described once: missing \[result\], twice \[\]"):
        check(dataclasses.replace(ROUND, states=states))


def test_an_input_with_no_outcome_in_one_state_is_refused() -> None:
    broken = changed(lambda s, k, o: None if (s, k) == (State.BETTING, i.CloseBetting) else o)
    with pytest.raises(DeclarationError, match="no outcome declared for CloseBetting in betting$"):
        check(broken)


def test_an_input_declared_twice_in_one_state_is_refused() -> None:
    broken = dataclasses.replace(ROUND, rules=(*ROUND.rules, On(i.Tick, (State.IDLE,), STAY)))
    with pytest.raises(DeclarationError, match="more than one outcome declared for Tick in idle$"):
        check(broken)


def test_an_outcome_for_an_input_the_table_does_not_take_is_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Sneeze:
        """Not a table input."""

    broken = dataclasses.replace(ROUND, rules=(*ROUND.rules, On(Sneeze, (State.IDLE,), STAY)))
    with pytest.raises(DeclarationError, match=r"inputs the table does not take: \['Sneeze'\]"):
        check(broken)


def test_a_state_no_arrow_leads_to_is_unreachable() -> None:
    with pytest.raises(DeclarationError, match=r"states not reachable from idle: \[result\]$"):
        check(changed(without_arrows_to(State.RESULT)))


def test_a_state_with_no_way_out_is_a_dead_end() -> None:
    def closed_only_stays(state: State, kind: type, outcome: Outcome) -> Outcome:
        return STAY if state == State.CLOSED and isinstance(outcome, Handle) else outcome

    with pytest.raises(DeclarationError, match=r"dead-end states \(no arrow to another state\): \[closed\]$"):
        check(changed(closed_only_stays))


def test_a_state_that_only_leads_to_itself_is_a_dead_end() -> None:
    def closed_loops(state: State, kind: type, outcome: Outcome) -> Outcome:
        if state == State.CLOSED and isinstance(outcome, Handle):
            return Handle((to(State.CLOSED, "again"),), outcome.guard)
        return outcome

    with pytest.raises(DeclarationError, match=r"dead-end states \(no arrow to another state\): \[closed\]$"):
        check(changed(closed_loops))


def test_states_that_lead_only_to_each_other_are_a_trap() -> None:
    """Paused and closed each have a way out, but only to each other: idle is never seen again."""
    def trapped(state: State, kind: type, outcome: Outcome) -> Outcome:
        if state in (State.PAUSED, State.CLOSED) and isinstance(outcome, Handle):
            other = State.CLOSED if state == State.PAUSED else State.PAUSED
            return Handle((to(other, "round and round"),), outcome.guard)
        return outcome

    with pytest.raises(DeclarationError, match=r"states from which idle cannot be reached again: \[paused, closed\]$"):
        check(changed(trapped))


def test_the_declaration_names_every_input_of_the_table() -> None:
    assert {kind for _, kind in ROUND.outcomes()} == set(INPUT_TYPES)
    assert len(ROUND.outcomes()) == len(State) * len(INPUT_TYPES)


def test_the_state_values_are_the_events_spec_strings() -> None:
    assert [s.value for s in State] == ["idle", "betting", "dealing", "result", "paused", "closed"]


# ---------------------------------------------------------------------- the machine obeys it
def reach(state: State) -> TableMachine:
    """A Teen Patti table (no burn) brought to ``state`` through its inputs."""
    machine = TableMachine(load_game("teen-patti-2020"), table="T01", betting_seconds=10, result_seconds=3)
    steps: dict[State, list[i.TableInput]] = {
        State.IDLE: [],
        State.BETTING: [i.StartRound()],
        State.DEALING: [i.StartRound(), i.CloseBetting()],
        State.RESULT: [i.StartRound(), i.CloseBetting(), *map(i.CardPresented, ("AS", "KD", "QH", "2C", "3D", "4S"))],
        State.PAUSED: [i.StartRound(), i.CloseBetting(), i.CameraDown()],
        State.CLOSED: [i.ShoeEmpty(52)],
    }
    for n, step in enumerate(steps[state]):
        machine.handle(step, 100.0 + n)
    assert machine.state == state
    return machine


def an_input_of(kind: type) -> i.TableInput:
    """An instance of each input type, with the fields it needs."""
    needs: dict[type, dict[str, Any]] = {
        i.CardPresented: {"code": "AS"}, i.ExposedCard: {"detail": "x"}, i.CardMisplaced: {"detail": "x"},
        i.ExtraCard: {"detail": "x"}, i.CameraMismatch: {"detail": "x"}, i.ShoeNew: {"decks": 1},
        i.ShoeCut: {"count": 1}, i.ShoeEmpty: {"count": 1}, i.LidChanged: {"is_open": True},
        i.LinkChanged: {"up": False}, i.DeviceFault: {"detail": "x"}, i.DeviceWarning: {"detail": "x"},
        i.SupervisorResume: {"by": "sup"}, i.SupervisorVoid: {"by": "sup"},
    }
    event: i.TableInput = kind(**needs.get(kind, {}))
    return event


REFUSALS = sorted(
    ((state, kind, outcome) for (state, kind), outcome in ROUND.outcomes().items() if isinstance(outcome, Refuse)),
    key=lambda r: (list(State).index(r[0]), r[1].__name__),
)


@pytest.mark.parametrize(("state", "kind", "refusal"), REFUSALS, ids=[f"{k.__name__}-in-{s}" for s, k, _ in REFUSALS])
def test_an_input_the_declaration_refuses_is_refused_with_its_reason_and_changes_nothing(
    state: State, kind: type, refusal: Refuse
) -> None:
    machine = reach(state)
    with pytest.raises(IllegalInput) as refused:
        machine.handle(an_input_of(kind), 200.0)
    assert str(refused.value) == refusal.because(state)
    assert machine.refusal(an_input_of(kind)) == refusal.because(state)
    assert machine.state == state


def test_a_guard_refuses_what_the_state_would_take() -> None:
    machine = reach(State.IDLE)
    machine.handle(i.LidChanged(True), 101.0)
    assert machine.can_start_round() == "cannot start a round: the shoe's lid is open"
    with pytest.raises(IllegalInput, match="^cannot start a round: the shoe's lid is open$"):
        machine.handle(i.StartRound(), 102.0)
    machine.handle(i.LidChanged(False), 103.0)
    assert machine.can_start_round() is None


CODES = [r + s for r in "A23456789TJQK" for s in "SHDC"]
TROUBLE = [i.LidChanged(True), i.LidChanged(False), i.LinkChanged(False, "r"), i.LinkChanged(True), i.CameraDown(),
           i.CameraMismatch("x"), i.ShoeRestarted(), i.DeviceFault("f"), i.DeviceWarning("w"), i.NoRead()]
MISDEALS = [i.CardDropped(), i.ExposedCard("x"), i.ExtraCard("x"), i.CardMisplaced("x"), i.VoidRequest()]


def random_input(rng: random.Random, decks: int) -> i.TableInput:
    """One input of a random table's life: cards most often, then the dealer, devices and supervisors."""
    group = rng.randrange(10)
    if group < 4:
        return i.CardPresented(rng.choice([*CODES, *["JK"] * (group == 0)]), rng.choice(["shoe", "camera"]),
                           rng.choice([None, rng.randrange(1, 420)]))
    if group == 4:
        return rng.choice([i.StartRound(), i.CloseBetting(), i.Tick(), i.Tick()])
    if group == 5:
        return rng.choice(TROUBLE)
    if group == 6:
        return rng.choice(MISDEALS)
    if group == 7:
        return i.SupervisorResume("sup", rng.choice([None, None, rng.choice(CODES), "10X"]))
    if group == 8:
        return rng.choice([i.SupervisorVoid("sup"), i.StartRound(), i.CloseBetting(), i.LidChanged(False),
                           i.LinkChanged(True)])
    return rng.choice([i.ShoeNew(rng.choice([decks, decks, 3]), rng.choice([None, "sup"])), i.ShoeCut(200),
                       i.ShoeEmpty(416)])


TEEN_PATTI_ROUND = [i.StartRound(), i.CloseBetting(), *map(i.CardPresented, ("AS", "KD", "QH", "2C", "3D", "4S"))]
#: Paths too rare for the random walk to take every time: the last round of a shoe, a card confirmed by hand.
SCRIPTS: list[tuple[str, list[i.TableInput]]] = [
    ("teen-patti-2020", [i.ShoeCut(30), *TEEN_PATTI_ROUND, i.Tick(), *TEEN_PATTI_ROUND, i.Tick()]),
    ("teen-patti-2020", [i.ShoeCut(30), *TEEN_PATTI_ROUND, i.Tick(), i.StartRound(), i.CloseBetting(),
                         i.CardMisplaced("x")]),
    ("teen-patti-2020", [i.ShoeCut(30), *TEEN_PATTI_ROUND, i.Tick(), i.StartRound(), i.CloseBetting(),
                         i.LidChanged(True), i.NoRead()]),
    ("teen-patti-2020", [*TEEN_PATTI_ROUND[:-1], i.NoRead(), i.SupervisorResume("sup", "4S")]),
    # A refused shoe, found empty, then accepted: its burn ends the shoe.
    ("baccarat", [i.ShoeNew(3), i.ShoeEmpty(0), i.SupervisorResume("sup"), i.CardPresented("AH"), i.NoRead(),
                  i.SupervisorResume("sup", "3H")]),
]


def test_random_tables_change_state_only_as_declared_take_every_arrow_and_restore_from_their_journal() -> None:
    """Scripts and a seeded random walk through every game; anything but IllegalInput fails the test
    (a change of state the declaration does not allow raises), and so does an arrow never taken."""
    declared = ROUND.outcomes()
    taken: set[tuple[State, type, State]] = set()

    def live(variant: str, inputs: Callable[[TableMachine], i.TableInput | None], rng: random.Random) -> None:
        machine = TableMachine(load_game(variant), table="T01", betting_seconds=5, result_seconds=1)
        now, journal = 1_800_000_000.0, []
        while (event := inputs(machine)) is not None:
            now += rng.choice([0.1, 0.5, 2.0, 6.0])
            before = machine.state
            try:
                drafts = machine.handle(event, now)
            except IllegalInput:
                assert machine.state == before
                continue
            outcome = declared[before, type(event)]
            assert isinstance(outcome, Handle)
            for d in drafts:
                if isinstance(d, TableStateChanged):
                    assert State(d.state) in outcome.targets, (variant, before, event)
                    taken.add((before, type(event), State(d.state)))
            journal += [numbered(stamped(d, table="T01", game=variant, ts=now), len(journal) + n)
                        for n, d in enumerate(drafts, 1)]
        restored = TableMachine(load_game(variant), table="T01", betting_seconds=5, result_seconds=1)
        restored.restore(journal)
        assert (restored.state, restored.round_id, restored.pause, restored.burning, restored.burn_left,
                restored.rounds_left, restored.next_position) == (
            machine.state, machine.round_id, machine.pause, machine.burning, machine.burn_left,
            machine.rounds_left, machine.next_position), variant

    def scripted(script: list[i.TableInput]) -> Callable[[TableMachine], i.TableInput | None]:
        steps = iter(script)
        return lambda _: next(steps, None)

    def walk(rng: random.Random, length: int) -> Callable[[TableMachine], i.TableInput | None]:
        left = iter(range(length))
        return lambda m: random_input(rng, m.game.decks) if next(left, None) is not None else None

    for variant, script in SCRIPTS:
        live(variant, scripted(script), random.Random(0))
    for seed in range(300):
        for variant in ("baccarat", "teen-patti-2020", "three-pictures", "three-face"):
            rng = random.Random(seed)
            live(variant, walk(rng, 300), rng)
    never = sorted(f"{k.__name__} in {s} to {a.to}" for s, k, a in ROUND.arrows() if (s, k, a.to) not in taken)
    assert never == [], f"declared arrows no table took (declare less, or script them): {never}"


# ---------------------------------------------------------------------- the burn is the game's
class BurningTeenPatti(TeenPatti2020):
    """A Teen Patti that burns two cards after a new shoe's shown first card (no such variant exists)."""

    burns_new_shoe = True

    def burn_count(self, first_card: Card) -> int:
        return 2


def test_the_burn_after_a_new_shoe_is_the_games_not_the_machines() -> None:
    machine = TableMachine(BurningTeenPatti(load_game("teen-patti-2020").variant), table="T01")
    machine.handle(i.ShoeNew(1), 1.0)
    assert (machine.state, machine.burning) == (State.DEALING, True)
    drafts = [d for code in ("9S", "2H", "3H") for d in machine.handle(i.CardPresented(code), 2.0)]
    assert [(d.type, getattr(d, "position", None), getattr(d, "index", None)) for d in drafts] == [
        ("card", "burn", 0), ("card", "burn", 1), ("card", "burn", 2), ("table.state", None, None)]
    assert (machine.state, machine.burning) == (State.IDLE, False)


@pytest.mark.parametrize("variant", ["teen-patti-2020", "three-pictures", "three-face"])
def test_a_game_that_does_not_burn_is_idle_after_a_new_shoe(variant: str) -> None:
    game = load_game(variant)
    machine = TableMachine(game, table="T01")
    assert not game.burns_new_shoe
    assert [d.type for d in machine.handle(i.ShoeNew(game.decks), 1.0)] == ["shoe"]
    assert (machine.state, machine.burning) == (State.IDLE, False)


# ---------------------------------------------------------------------- the diagram
DOC = Path(__file__).resolve().parents[1] / "docs" / "controller.md"


def test_the_diagram_in_the_docs_is_the_declarations() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert with_diagram(doc) == doc, "docs/controller.md is stale: run `python -m table_controller.table.diagram`"


def test_the_diagram_draws_every_declared_arrow() -> None:
    drawn = mermaid()
    assert drawn.startswith("```mermaid\nstateDiagram-v2\n    [*] --> idle\n")
    for source, _, arrow in ROUND.arrows():
        assert f"    {source} --> {arrow.to}: " in drawn
    assert "    result --> betting: start round\n" in drawn


def test_a_stale_diagram_is_found_and_redrawn(tmp_path: Path) -> None:
    doc = tmp_path / "controller.md"
    doc.write_text(f"# Table\n\n{BEGIN}\n```mermaid\nstateDiagram-v2\n    idle --> betting\n```\n{END}\nmore\n")
    assert main(["--check", "--doc", str(doc)]) == 1
    assert main(["--doc", str(doc)]) == 0
    assert main(["--check", "--doc", str(doc)]) == 0
    assert doc.read_text() == f"# Table\n\n{BEGIN}\n{mermaid()}\n{END}\nmore\n"


def test_a_changed_declaration_changes_the_diagram() -> None:
    assert mermaid(changed(without_arrows_to(State.RESULT))) != mermaid()


def test_a_doc_without_the_markers_is_refused(tmp_path: Path) -> None:
    doc = tmp_path / "controller.md"
    doc.write_text("# Table\n")
    assert main(["--check", "--doc", str(doc)]) == 2
    with pytest.raises(ValueError, match="markers are missing"):
        with_diagram("# Table\n")
