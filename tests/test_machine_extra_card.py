"""The pure machine decides itself that a card beyond the round's last is an extra card.

One step's inputs (what one device event amounted to: several cards the camera
confirmed at once, or a card confirmed while later shoe cards wait for the
camera) go to :meth:`TableMachine.handle_step`. A card that would end the round
while another card already left the shoe after it voids the round (games.md: a
misdeal) instead of settling it.
"""

from __future__ import annotations

from table_controller.event_types import Alert, BettingClosed, CardDealt, RoundResult, RoundVoided, TableStateChanged
from table_controller.rules import load_game
from table_controller.table import IllegalInput, StepOutcome, TableMachine
from table_controller.table import inputs as i

FIRST_FIVE = ("AS", "KD", "QH", "2C", "3D")  # teen patti deals a, b, a, b, a, b: the sixth card ends the round


def dealing_five_cards() -> TableMachine:
    machine = TableMachine(load_game("teen-patti-2020"), table="T01", betting_seconds=10)
    machine.handle(i.StartRound(), 1.0)
    machine.handle(i.CloseBetting(), 2.0)
    for code in FIRST_FIVE:
        machine.handle(i.CardPresented(code, "shoe+camera"), 3.0)
    assert machine.state == "dealing" and machine.next_position == "b"
    return machine


def voided_by_extra_card(detail: str) -> list[object]:
    return [
        Alert(round="T01-000001", kind="wrong-order", severity="critical", detail=detail),
        RoundVoided(round="T01-000001", reason=f"misdeal: {detail}", refund=True),
        TableStateChanged(round=None, state="idle", reason=None),
    ]


def test_the_last_card_with_a_later_card_in_the_same_step_voids_the_round() -> None:
    machine = dealing_five_cards()
    outcome = machine.handle_step(
        [i.CardPresented("4S", "shoe+camera"), i.CardPresented("9H", "shoe+camera")], 4.0
    )
    assert outcome == StepOutcome(voided_by_extra_card("card 9H left the shoe after the round's last card 4S"))
    assert machine.state == "idle" and machine.round_id is None


def test_the_last_card_while_a_card_waits_for_the_camera_voids_the_round() -> None:
    machine = dealing_five_cards()
    outcome = machine.handle_step([i.CardPresented("4S", "shoe+camera")], 4.0, cards_waiting=["9H", "TC"])
    assert outcome.events == voided_by_extra_card("card 9H left the shoe after the round's last card 4S")
    assert outcome.refused is None


def test_the_last_card_with_nothing_after_it_settles_the_round() -> None:
    machine = dealing_five_cards()
    outcome = machine.handle_step([i.CardPresented("4S", "shoe+camera")], 4.0)
    assert [type(e) for e in outcome.events] == [CardDealt, RoundResult, TableStateChanged]
    assert machine.state == "result"


def test_cards_before_the_last_one_in_a_step_are_dealt_before_the_round_is_voided() -> None:
    machine = TableMachine(load_game("teen-patti-2020"), table="T01", betting_seconds=10)
    machine.handle(i.StartRound(), 1.0)
    machine.handle(i.CloseBetting(), 2.0)
    cards = [i.CardPresented(code, "shoe+camera") for code in (*FIRST_FIVE, "4S")]
    outcome = machine.handle_step(cards, 3.0, cards_waiting=["9H"])
    dealt = [(e.position, e.index, e.code) for e in outcome.events if isinstance(e, CardDealt)]
    assert dealt == [("a", 0, "AS"), ("b", 0, "KD"), ("a", 1, "QH"), ("b", 1, "2C"), ("a", 2, "3D")]
    assert outcome.events[len(dealt):] == voided_by_extra_card("card 9H left the shoe after the round's last card 4S")


def test_a_confirmed_card_that_ends_the_round_while_a_card_waits_voids_it() -> None:
    machine = dealing_five_cards()
    machine.handle(i.CameraMismatch("the camera did not see card 4S within 3 s", shoe_card="4S"), 4.0)
    assert machine.state == "paused"
    outcome = machine.handle_step([i.SupervisorResume(by="supervisor", card="4S")], 5.0, cards_waiting=["9H"])
    assert outcome.events == voided_by_extra_card("card 9H left the shoe after the round's last card 4S")


def test_a_card_that_does_not_end_the_round_is_dealt_though_cards_wait() -> None:
    machine = dealing_five_cards()
    machine.handle(i.SupervisorVoid(by="supervisor", reason="test"), 4.0)
    machine.handle(i.StartRound(), 5.0)
    machine.handle(i.CloseBetting(), 6.0)
    outcome = machine.handle_step([i.CardPresented("AS", "shoe+camera")], 7.0, cards_waiting=["KD", "QH"])
    assert outcome.events == [CardDealt(round="T01-000002", position="a", index=0, code="AS", source="shoe+camera")]


def test_a_refused_input_ends_the_step_and_keeps_the_events_before_it() -> None:
    machine = TableMachine(load_game("teen-patti-2020"), table="T01", betting_seconds=10)
    machine.handle(i.StartRound(), 1.0)
    outcome = machine.handle_step([i.CloseBetting(), i.CloseBetting(), i.Tick()], 2.0)
    assert outcome.events == [
        BettingClosed(round="T01-000001"), TableStateChanged(round="T01-000001", state="dealing", reason=None)
    ]
    assert isinstance(outcome.refused, IllegalInput)
    assert str(outcome.refused) == "cannot close betting: the table is dealing"
