"""The shoe handshake on its own: lock confirmation, held starts, held ACKs (no controller, no threads)."""

from __future__ import annotations

from shoe_doubles import LineReader, RecordingShoe

from firmware_interfaces.shoe import events as shoe
from table_controller.shoe_handshake import HeldStarts, ShoeHandshake


def link(seq: int) -> shoe.LinkState:
    return shoe.LinkState("5F3A9C01", seq)


def locked_handshake() -> tuple[ShoeHandshake[str], RecordingShoe]:
    recording = RecordingShoe()
    handshake: ShoeHandshake[str] = ShoeHandshake(recording, confirm_seconds=2.0)
    handshake.drive_gate(False)
    return handshake, recording


# -- the gate ------------------------------------------------------------------------


def test_locking_sends_lock_then_status_and_unlocking_sends_unlock() -> None:
    handshake, recording = locked_handshake()
    handshake.drive_gate(True)
    assert recording.commands == ["LOCK", "STATUS", "UNLOCK"]


def test_the_gate_is_commanded_only_when_it_must_change() -> None:
    handshake, recording = locked_handshake()
    handshake.drive_gate(False)
    assert recording.commands == ["LOCK", "STATUS"]


def test_a_new_shoe_session_is_told_again_what_the_gate_must_be() -> None:
    handshake, recording = locked_handshake()
    handshake.observe(shoe.Hello("ACME", "S8", "SN1", "2.1", "77AB0102", "-", True, link(0)))
    handshake.drive_gate(False)
    handshake.observe(shoe.LinkUp())
    handshake.drive_gate(False)
    assert recording.commands == ["LOCK", "STATUS"] * 3


def test_without_a_shoe_nothing_is_commanded_and_nothing_waits() -> None:
    handshake: ShoeHandshake[str] = ShoeHandshake(None)
    handshake.drive_gate(False)
    assert not handshake.hold_start("start", 0.0, link_up=True)


# -- lock confirmation and held starts ------------------------------------------------


def test_a_start_is_held_until_the_shoe_says_its_gate_is_locked() -> None:
    handshake, _ = locked_handshake()
    assert handshake.hold_start("start", 10.0, link_up=True)
    handshake.observe(shoe.CardDrawn("8C", "RO", 22, link(1)))  # drawn before the lock: still waiting
    assert handshake.release_starts(10.5, link_up=True) == HeldStarts([], [])
    handshake.observe(shoe.Gate(True, link(2)))
    assert handshake.release_starts(10.6, link_up=True) == HeldStarts(["start"], [])
    assert not handshake.holding_starts


def test_a_status_answer_with_the_gate_locked_confirms_the_lock() -> None:
    handshake, _ = locked_handshake()
    handshake.observe(shoe.ShoeStatus(True, False, 22, link(1)))
    assert not handshake.hold_start("start", 0.0, link_up=True)


def test_a_status_answer_with_the_gate_unlocked_confirms_nothing() -> None:
    handshake, _ = locked_handshake()
    handshake.observe(shoe.ShoeStatus(False, False, 22, link(1)))
    handshake.observe(shoe.Gate(False, link(2)))
    assert handshake.must_wait_for_lock(link_up=True)


def test_a_lock_answer_to_an_earlier_lock_does_not_confirm_a_later_one() -> None:
    handshake, _ = locked_handshake()
    handshake.observe(shoe.Gate(True, link(1)))
    handshake.drive_gate(True)
    handshake.observe(shoe.Gate(True, link(2)))  # late: the shoe had not unlocked yet
    handshake.drive_gate(False)
    assert handshake.must_wait_for_lock(link_up=True)
    handshake.observe(shoe.Gate(True, link(3)))
    assert not handshake.must_wait_for_lock(link_up=True)


def test_a_lock_answer_while_the_gate_should_be_open_confirms_nothing() -> None:
    recording = RecordingShoe()
    handshake: ShoeHandshake[str] = ShoeHandshake(recording)
    handshake.drive_gate(True)
    handshake.observe(shoe.Gate(True, link(1)))
    assert handshake.must_wait_for_lock(link_up=True)


def test_a_start_the_shoe_never_confirms_expires_after_the_confirm_time() -> None:
    handshake, _ = locked_handshake()
    handshake.hold_start("first", 10.0, link_up=True)
    handshake.hold_start("second", 11.0, link_up=True)
    assert handshake.release_starts(11.9, link_up=True) == HeldStarts([], [])
    assert handshake.release_starts(12.0, link_up=True) == HeldStarts([], ["first"])
    assert handshake.holding_starts
    assert handshake.refusal() == (
        "cannot start a round: the shoe did not confirm within 2 s that its gate is locked"
    )


def test_a_reader_without_a_gate_never_holds_a_start() -> None:
    handshake: ShoeHandshake[str] = ShoeHandshake(LineReader())
    handshake.drive_gate(False)
    assert not handshake.hold_start("start", 0.0, link_up=True)


def test_with_the_link_down_a_start_is_not_held() -> None:
    handshake, _ = locked_handshake()
    assert not handshake.hold_start("start", 0.0, link_up=False)


# -- held ACKs ------------------------------------------------------------------------


def test_frames_are_acknowledged_one_step_at_a_time_when_nothing_holds_them() -> None:
    handshake, recording = locked_handshake()
    frame = shoe.Lid(True, link(1))
    assert handshake.frames_to_ack(frame, hold=False) == [frame]
    handshake.acknowledge([frame])
    assert recording.acked == [1]


def test_every_frame_held_is_released_oldest_first() -> None:
    handshake, recording = locked_handshake()
    card = shoe.CardDrawn("9H", "RO", 1, link(4))
    gate = shoe.Gate(False, link(5))
    assert handshake.frames_to_ack(card, hold=True) == []
    assert handshake.frames_to_ack(gate, hold=True) == []
    assert handshake.frames_to_ack(None, hold=True) == []
    released = handshake.frames_to_ack(None, hold=False)
    assert released == [card, gate]
    handshake.acknowledge(released)
    assert recording.acked == [4, 5]
    assert handshake.frames_to_ack(None, hold=False) == []


def test_an_event_without_a_link_state_is_not_acknowledged() -> None:
    handshake, _ = locked_handshake()
    assert handshake.frames_to_ack(shoe.LinkUp(), hold=False) == []
    assert handshake.frames_to_ack(shoe.CardDrawn("9H", "L", 1, None), hold=False) == []
