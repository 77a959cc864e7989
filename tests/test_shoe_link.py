"""The controller's side of SLP/1 as a pure state machine: sessions, delivery, ACKs, commands."""

from __future__ import annotations

import random

import pytest

from firmware_interfaces.shoe import (
    CardDrawn,
    ControllerLink,
    Fault,
    Frame,
    Gate,
    Hello,
    LinkDown,
    LinkState,
    LinkUp,
    SLP1Codec,
)

BOOT = "5F3A9C01"
INFO = ("ACME", "SmartShoe-8", "SN0042", "2.1.0", "SLP1")


def hello(boot: str = BOOT, nonce: str = "-") -> Frame:
    return Frame(0, "HELLO", (*INFO, boot, nonce))


def card(seq: int, code: str = "TS", count: int | None = None) -> Frame:
    return Frame(seq, "CARD", (code, "RO", str(count if count is not None else seq)))


def sent(link: ControllerLink) -> list[Frame]:
    """Frames the link wrote since the last call."""
    return SLP1Codec().feed(link.take_output())


def reset_frame(link: ControllerLink) -> Frame:
    resets = [f for f in sent(link) if f.type == "RESET"]
    assert len(resets) == 1
    return resets[0]


def reset_nonce(link: ControllerLink) -> str:
    return reset_frame(link).args[0]


def anchored(auto_ack: bool = True) -> ControllerLink:
    """A link without state that has anchored on a HELLO answering its RESET."""
    link = ControllerLink(SLP1Codec(), now=0.0, auto_ack=auto_ack, rng=random.Random(7))
    reset = reset_frame(link)
    link.receive([Frame(reset.seq, "ACK")], 0.0)
    events = link.receive([hello(nonce=reset.args[0])], 0.0)
    assert [type(e) for e in events] == [LinkUp, Hello]
    if not auto_ack:
        link.ack(events[1])
    sent(link)
    return link


# -- sessions ----------------------------------------------------------------

def test_without_state_the_link_sends_reset_and_delivers_nothing_before_its_hello() -> None:
    link = ControllerLink(SLP1Codec(), now=0.0, rng=random.Random(1))
    nonce = reset_nonce(link)
    assert len(nonce) == 8
    events = link.receive([card(3), hello(nonce="-"), card(4)], 0.1)
    assert events == []  # not up: frames arrive, but no session is anchored
    assert not link.is_up
    assert sent(link) == []  # nothing ACKed
    assert link.stats.undelivered == 2
    assert link.stats.stale_hellos == 1


def test_hello_echoing_the_nonce_anchors_the_stream_at_seq_1() -> None:
    link = ControllerLink(SLP1Codec(), now=0.0, rng=random.Random(1))
    nonce = reset_nonce(link)
    events = link.receive([hello(nonce=nonce), card(1, "AH"), card(2, "KD")], 0.1)
    assert events[1] == Hello(*INFO[:4], BOOT, nonce, False, LinkState(BOOT, 0), False)
    assert events[2:] == [CardDrawn("AH", "RO", 1, LinkState(BOOT, 1)),
                          CardDrawn("KD", "RO", 2, LinkState(BOOT, 2))]
    assert sent(link) == [Frame(2, "ACK", (BOOT,))]
    assert link.link_state == LinkState(BOOT, 2)


def test_reset_is_repeated_once_a_second_with_a_new_nonce_and_old_answers_are_ignored() -> None:
    link = ControllerLink(SLP1Codec(), now=0.0, rng=random.Random(2))
    first = reset_nonce(link)
    link.receive([Frame(0, "ACK")], 0.05)  # stale ACK: no command with seq 0 in flight
    link.tick(1.0)
    second = reset_nonce(link)
    assert second != first
    assert link.receive([hello(nonce=first)], 1.1) == []
    assert link.stats.stale_hellos == 1
    events = link.receive([hello("77AB0102", nonce=second)], 1.2)
    assert [type(e) for e in events] == [LinkUp, Hello]


def test_reset_is_retransmitted_every_250_ms_until_acked() -> None:
    link = ControllerLink(SLP1Codec(), now=0.0, rng=random.Random(3))
    reset = [f for f in sent(link) if f.type == "RESET"][0]
    link.receive([Frame(9, "HB", ("1",))], 0.0)  # the shoe is up
    link.tick(0.2)
    assert sent(link) == []
    link.tick(0.25)
    assert sent(link) == [reset]
    link.receive([Frame(reset.seq, "ACK")], 0.3)
    link.tick(0.6)
    assert sent(link) == []


def test_hello_with_the_current_boot_id_is_a_retransmission() -> None:
    link = anchored()
    assert link.receive([hello()], 1.0) == []
    assert sent(link) == [Frame(0, "ACK", (BOOT,))]
    assert link.stats.duplicates == 1


def test_hello_with_another_boot_id_starts_a_new_session_at_seq_1() -> None:
    link = anchored()
    link.receive([card(1), card(2)], 0.1)
    sent(link)
    events = link.receive([hello("77AB0102"), card(1, "QC")], 0.2)
    assert events[0] == Hello(*INFO[:4], "77AB0102", "-", True, LinkState("77AB0102", 0), False)
    assert events[1] == CardDrawn("QC", "RO", 1, LinkState("77AB0102", 1))
    assert sent(link) == [Frame(1, "ACK", ("77AB0102",))]


def test_malformed_hello_is_ignored_and_counted() -> None:
    link = ControllerLink(SLP1Codec(), now=0.0, rng=random.Random(1))
    nonce = reset_nonce(link)
    bad = Frame(0, "HELLO", ("ACME", "X", "SN", "1", "SLP2", BOOT, nonce))
    assert link.receive([bad], 0.1) == []
    assert link.stats.protocol_errors == 1


# -- delivery ------------------------------------------------------------------

def test_duplicate_is_acked_again_and_not_delivered() -> None:
    link = anchored()
    link.receive([card(1), card(2)], 0.1)
    sent(link)
    assert link.receive([card(1), card(2)], 0.2) == []
    assert sent(link) == [Frame(2, "ACK", (BOOT,))]
    assert link.stats.duplicates == 2


def test_frame_ahead_of_the_expected_seq_is_dropped_and_not_acked() -> None:
    link = anchored()
    assert link.receive([card(2)], 0.1) == []
    assert sent(link) == []
    assert link.stats.out_of_order == 1
    assert [e.code for e in link.receive([card(1, "2C"), card(2, "3C")], 0.2)] == ["2C", "3C"]


def test_seq_wraps_after_65535() -> None:
    link = ControllerLink(SLP1Codec(), now=0.0, resume=LinkState(BOOT, 65534))
    events = link.receive([card(65535, "AS", 1), card(0, "2S", 2), card(1, "3S", 3)], 0.1)
    assert [(e.code, e.link.seq) for e in events[1:]] == [("AS", 65535), ("2S", 0), ("3S", 1)]
    assert sent(link) == [Frame(1, "ACK", (BOOT,))]


def test_heartbeat_is_acked_but_not_an_event() -> None:
    link = anchored()
    assert link.receive([Frame(1, "HB", ("5000",))], 0.1) == []
    assert sent(link) == [Frame(1, "ACK", (BOOT,))]
    assert link.stats.heartbeats == 1


def test_unknown_type_is_acked_and_never_a_card() -> None:
    link = anchored()
    assert link.receive([Frame(1, "TEMP", ("41C",))], 0.1) == []
    assert sent(link) == [Frame(1, "ACK", (BOOT,))]
    assert link.stats.unknown_frames == 1


@pytest.mark.parametrize("args,detail", [
    (("XS", "RO", "1"), "card code 'XS'"),
    (("TS", "Q", "1"), "reader 'Q'"),
    (("TS", "RO", "x1"), "count 'x1'"),
    (("TS",), "expected 3 argument"),
])
def test_malformed_card_is_acked_and_reported_as_a_fault(
    args: tuple[str, ...], detail: str
) -> None:
    link = anchored()
    events = link.receive([Frame(1, "CARD", args)], 0.1)
    assert len(events) == 1 and isinstance(events[0], Fault)
    assert events[0].code == "BADFRAME" and detail in events[0].text
    assert sent(link) == [Frame(1, "ACK", (BOOT,))]
    assert link.stats.protocol_errors == 1


def test_every_shoe_message_becomes_its_event() -> None:
    link = anchored()
    frames = [Frame(1, "NOREAD", ("7",)), Frame(2, "CUT", ("8",)), Frame(3, "NEWSHOE", ("8",)),
              Frame(4, "EMPTY", ("416",)), Frame(5, "LID", ("OPEN",)),
              Frame(6, "GATE", ("UNLOCKED",)), Frame(7, "STATE", ("LOCKED", "CLOSED", "12")),
              Frame(8, "FAULT", ("JAM", "gate jammed"))]
    names = [(type(e).__name__, {k: getattr(e, k) for k in e.__slots__ if k != "link"})
             for e in link.receive(frames, 0.1)]
    assert names == [
        ("NoRead", {"count": 7}), ("CutCard", {"count": 8}), ("NewShoe", {"decks": 8}),
        ("ShoeEmpty", {"count": 416}), ("Lid", {"is_open": True}), ("Gate", {"is_locked": False}),
        ("ShoeStatus", {"gate_locked": True, "lid_open": False, "count": 12}),
        ("Fault", {"code": "JAM", "text": "gate jammed"}),
    ]


# -- resume and consumer ACKs ------------------------------------------------

def test_resumed_state_recognises_retransmissions_as_duplicates() -> None:
    link = ControllerLink(SLP1Codec(), now=0.0, resume=LinkState(BOOT, 17))
    assert sent(link) == []  # no RESET: the state anchors the stream
    events = link.receive([card(16), card(17), card(18, "9H")], 0.1)
    assert events[1:] == [CardDrawn("9H", "RO", 18, LinkState(BOOT, 18))]
    assert sent(link) == [Frame(18, "ACK", (BOOT,))]


def test_manual_ack_names_only_what_the_consumer_acked() -> None:
    link = anchored(auto_ack=False)
    events = link.receive([card(1, "AS"), card(2, "2S")], 0.1)
    assert sent(link) == [Frame(0, "ACK", (BOOT,))]  # re-ACK of the HELLO the consumer acked
    assert link.receive([card(1)], 0.2) == []         # shoe retransmits: still not acked
    assert sent(link) == [Frame(0, "ACK", (BOOT,))]
    link.ack(events[0])
    assert sent(link) == [Frame(1, "ACK", (BOOT,))]
    link.ack(events[1])
    assert sent(link) == [Frame(2, "ACK", (BOOT,))]


def test_manual_ack_out_of_order_waits_for_the_earlier_event() -> None:
    link = anchored(auto_ack=False)
    events = link.receive([card(1), card(2)], 0.1)
    sent(link)
    link.ack(events[1])
    assert sent(link) == []
    link.ack(events[0])
    assert sent(link) == [Frame(2, "ACK", (BOOT,))]


def test_manual_ack_covers_heartbeats_after_an_acked_event() -> None:
    link = anchored(auto_ack=False)
    events = link.receive([card(1), Frame(2, "HB", ("1",))], 0.1)
    sent(link)
    link.ack(events[0])
    assert sent(link) == [Frame(2, "ACK", (BOOT,))]


def test_first_hello_needs_the_consumer_ack_in_manual_mode() -> None:
    link = ControllerLink(SLP1Codec(), now=0.0, auto_ack=False, rng=random.Random(4))
    nonce = reset_nonce(link)
    events = link.receive([hello(nonce=nonce), Frame(1, "HB", ("1",))], 0.1)
    assert sent(link) == []
    link.ack(events[1])
    assert sent(link) == [Frame(1, "ACK", (BOOT,))]


def test_stale_command_acks_are_ignored() -> None:
    link = anchored()
    link.command("LOCK", 0.1)
    lock = sent(link)[0]
    link.command("UNLOCK", 0.1)
    assert sent(link) == []  # one command at a time
    link.receive([Frame((lock.seq - 1) & 0xFFFF, "ACK")], 0.15)
    assert sent(link) == [] and link.stats.stale_acks == 1
    link.receive([Frame(lock.seq, "ACK")], 0.2)
    assert sent(link) == [Frame((lock.seq + 1) & 0xFFFF, "UNLOCK")]


def test_commands_retransmit_every_250_ms_and_once_a_second_when_down() -> None:
    link = anchored()  # last frame from the shoe at t=0
    link.command("LOCK", 0.0)
    lock = sent(link)
    assert [f.type for f in lock] == ["LOCK"]
    link.tick(0.24)
    assert sent(link) == []
    link.tick(0.25)
    assert sent(link) == lock
    link.tick(0.5)
    assert sent(link) == lock
    assert link.tick(2.0) == [LinkDown("no frame from the shoe for 2.0 s")]
    assert sent(link) == lock
    link.tick(2.5)
    assert sent(link) == []  # down: once a second
    link.tick(3.0)
    assert sent(link) == lock
    assert link.stats.retransmissions == 4


def test_link_down_after_2_s_of_silence_and_up_again_on_the_next_frame() -> None:
    link = anchored()
    assert link.tick(1.99) == []
    assert link.tick(2.0) == [LinkDown("no frame from the shoe for 2.0 s")]
    assert link.tick(5.0) == []
    events = link.receive([Frame(1, "HB", ("1",))], 5.1)
    assert events == [LinkUp()]
    assert link.is_up


def test_stalled_stream_resynchronises_with_reset() -> None:
    """Only frames ahead of the expected seq for 1 s (a gap nobody will fill): RESET."""
    link = ControllerLink(SLP1Codec(), now=0.0, resume=LinkState(BOOT, 17), rng=random.Random(5))
    for now in (0.0, 0.25, 0.5, 0.75):
        assert link.receive([card(19)], now) in ([LinkUp()], [])
    assert sent(link) == []
    link.receive([card(19)], 1.0)
    assert sent(link) == [Frame(17, "ACK", (BOOT,))]  # first make sure the shoe drops <= 17
    link.tick(2.4)
    assert sent(link) == []
    # We had sent nothing for 2 s, so the shoe may retransmit only once a second:
    # 1.5 of those intervals without a retransmission of <= 17.
    link.tick(2.5)
    nonce = reset_nonce(link)
    events = link.receive([hello("77AB0102", nonce), card(1, "JD")], 2.6)
    assert events[0].new_session is False and events[0].resynced is True
    assert events[1] == CardDrawn("JD", "RO", 1, LinkState("77AB0102", 1))


def test_gate_answer_is_delivered_with_its_link_state() -> None:
    link = anchored()
    assert link.receive([Frame(1, "GATE", ("LOCKED",))], 0.1) == [Gate(True, LinkState(BOOT, 1))]


def test_queued_gate_commands_are_superseded_by_the_newest() -> None:
    link = anchored()
    link.command("LOCK", 0.0)
    lock = sent(link)[0]
    for cmd in ("UNLOCK", "STATUS", "LOCK", "STATUS", "UNLOCK"):
        link.command(cmd, 0.0)
    assert link.commands_waiting == 3  # LOCK in flight, then STATUS, UNLOCK
    link.receive([Frame(lock.seq, "ACK")], 0.1)
    status = sent(link)
    assert [f.type for f in status] == ["STATUS"]
    link.receive([Frame(status[0].seq, "ACK")], 0.1)
    assert [f.type for f in sent(link)] == ["UNLOCK"]


def test_after_our_reset_frames_we_already_delivered_are_not_delivered_again() -> None:
    """Our ACK of card 2 was lost; after RESET the shoe re-sends it under a new seq."""
    link = anchored()
    link.receive([card(1, "AS", 1), card(2, "KS", 2)], 0.1)
    sent(link)
    link.command("RESET", 0.2)
    link.tick(0.6)
    nonce = reset_nonce(link)
    events = link.receive([hello("77AB0102", nonce), card(1, "KS", 2), card(2, "QS", 3)], 0.3)
    assert [type(e) for e in events] == [Hello, CardDrawn]
    assert events[0].resynced is True and events[0].new_session is False
    assert events[1] == CardDrawn("QS", "RO", 3, LinkState("77AB0102", 2))
    assert sent(link) == [Frame(2, "ACK", ("77AB0102",))]


def test_after_a_power_cycle_nothing_is_skipped() -> None:
    link = anchored()
    link.receive([card(1, "AS", 1)], 0.1)
    events = link.receive([hello("77AB0102", "-"), card(1, "AS", 1)], 0.3)
    assert [type(e) for e in events] == [Hello, CardDrawn]
    assert events[0].new_session is True and events[0].resynced is False


def test_reset_waits_while_the_shoe_still_retransmits_acked_frames() -> None:
    link = anchored()
    link.receive([card(1, "AS", 1)], 0.0)
    sent(link)
    link.command("RESET", 0.1)
    assert sent(link) == [Frame(1, "ACK", (BOOT,))]
    link.receive([card(1, "AS", 1)], 0.35)  # our ACK did not arrive: the shoe retransmits
    sent(link)
    link.tick(0.6)
    assert sent(link) == []                  # not yet: card 1 would come back under a new seq
    link.tick(0.75)
    assert [f.type for f in sent(link)] == ["RESET"]


def test_reset_waits_for_the_consumer_in_manual_ack_mode() -> None:
    link = anchored(auto_ack=False)
    events = link.receive([card(1, "AS", 1)], 0.0)
    sent(link)
    link.command("RESET", 0.1)
    link.tick(1.0)
    assert [f.type for f in sent(link)] == ["ACK"]   # the RESET waits for the consumer
    link.ack(events[0])
    sent(link)
    link.tick(1.1)
    assert [f.type for f in sent(link)] == ["RESET"]


def test_after_a_reset_a_new_shoes_card_is_not_taken_for_an_old_shoes_card() -> None:
    """Regression (soak, one-deck shoe reloaded every round): 6H was card 1 of the last
    shoe and is card 1 of this one; after a RESET the re-sent new 6H was dropped as a
    duplicate, and the card was lost."""
    link = anchored()
    link.receive([card(1, "6H", 1), card(2, "KS", 2), Frame(3, "NEWSHOE", ("1",))], 0.1)
    sent(link)
    link.command("RESET", 0.2)
    link.tick(0.6)
    nonce = reset_nonce(link)
    events = link.receive([hello("77AB0102", nonce), card(1, "6H", 1), card(2, "KH", 2)], 0.3)
    assert [type(e) for e in events] == [Hello, CardDrawn, CardDrawn]
    assert [(e.code, e.count) for e in events[1:]] == [("6H", 1), ("KH", 2)]


# -- liveness: no well-formed frame stalls the link ------------------------------

def test_earlier_sessions_hellos_resent_after_reset_are_acked_and_the_stream_moves_on() -> None:
    """A shoe powered on before we listened re-sends its unACKed HELLOs with new seqs."""
    link = ControllerLink(SLP1Codec(), now=0.0, rng=random.Random(11))
    nonce = reset_nonce(link)
    old_power_on = Frame(1, "HELLO", (*INFO, "0000AAAA", "-"))
    old_reset_answer = Frame(2, "HELLO", (*INFO, "0000BBBB", "12345678"))
    events = link.receive(
        [hello(nonce=nonce), old_power_on, old_reset_answer, Frame(3, "NEWSHOE", ("8",)),
         card(4, "AH", 1)], 0.1,
    )
    assert [type(e).__name__ for e in events] == ["LinkUp", "Hello", "NewShoe", "CardDrawn"]
    assert events[3] == CardDrawn("AH", "RO", 1, LinkState(BOOT, 4))
    assert sent(link) == [Frame(4, "ACK", (BOOT,))]
    assert link.stats.stale_hellos == 2
    assert link.link_state == LinkState(BOOT, 4)


def test_an_old_hello_at_the_expected_seq_is_acked_in_manual_mode_once_earlier_events_are() -> None:
    link = anchored(auto_ack=False)
    events = link.receive([card(1, "AH"), Frame(2, "HELLO", (*INFO, "0000AAAA", "-")), card(3, "KD", 2)], 0.1)
    assert [type(e) for e in events] == [CardDrawn, CardDrawn]
    assert {f.seq for f in sent(link)} <= {0}  # nothing beyond the HELLO we ACKed
    link.ack(events[0])
    assert sent(link) == [Frame(2, "ACK", (BOOT,))]  # the old HELLO needs no consumer ACK
    link.ack(events[1])
    assert sent(link) == [Frame(3, "ACK", (BOOT,))]


def test_malformed_hello_at_the_expected_seq_does_not_stall_the_stream() -> None:
    link = anchored()
    bad = Frame(1, "HELLO", ("ACME", "X"))
    events = link.receive([bad, card(2, "QS")], 0.1)
    assert events == [CardDrawn("QS", "RO", 2, LinkState(BOOT, 2))]
    assert sent(link) == [Frame(2, "ACK", (BOOT,))]


def test_hello_at_a_later_seq_that_echoes_our_nonce_anchors_there() -> None:
    link = ControllerLink(SLP1Codec(), now=0.0, rng=random.Random(12))
    nonce = reset_nonce(link)
    events = link.receive([Frame(5, "HELLO", (*INFO, BOOT, nonce)), card(6, "2C")], 0.1)
    assert [type(e) for e in events] == [LinkUp, Hello, CardDrawn]
    assert events[2].link == LinkState(BOOT, 6)
    assert link.stats.protocol_errors == 1


def test_reset_that_never_anchors_reports_link_down_with_the_reason() -> None:
    link = ControllerLink(SLP1Codec(), now=0.0, rng=random.Random(13))
    downs: list[object] = []
    now = 0.0
    for step in range(1, 80):
        now = step * 0.1
        link.receive([Frame(step, "HB", ("1",))], now)  # the shoe talks, never answers RESET
        downs += [e for e in link.tick(now) if isinstance(e, LinkDown)]
    nonces = list(dict.fromkeys(f.args[0] for f in sent(link) if f.type == "RESET"))
    assert len(nonces) > 6
    assert len(downs) == 1
    assert isinstance(downs[0], LinkDown)
    assert downs[0].reason == f"no HELLO answers RESET {nonces[4]} after 5 tries"
    assert not link.is_up
    # It goes on trying: a HELLO answering the latest RESET brings the link up.
    events = link.receive([hello(nonce=nonces[-1])], now + 0.01)
    assert [type(e) for e in events] == [LinkUp, Hello]


def test_a_late_reply_at_the_expected_seq_is_delivered_and_acked() -> None:
    link = anchored()
    events = link.receive([Frame(1, "STATE", ("LOCKED", "CLOSED", "0")), card(2, "9H")], 0.1)
    assert [type(e).__name__ for e in events] == ["ShoeStatus", "CardDrawn"]
    assert sent(link) == [Frame(2, "ACK", (BOOT,))]


# -- counts: a card is never delivered on a count that lies --------------------------

def test_a_card_far_from_the_last_count_is_another_frame_under_a_wrapped_seq_and_refused() -> None:
    """A shoe far outside its window wraps the seq: a much later card arrived at the expected
    seq and was taken for the one due (found by benchmarks/flood.py)."""
    link = anchored()
    events = link.receive([card(1, "AH", 1), card(2, "KD", 2), card(3, "QS", 65538)], 0.1)
    assert [type(e).__name__ for e in events] == ["CardDrawn", "CardDrawn"]
    assert link.link_state == LinkState(BOOT, 2)  # not ACKed, not delivered: still due
    assert link.receive([card(3, "9H", 3)], 0.2)[0] == CardDrawn("9H", "RO", 3, LinkState(BOOT, 3))


def test_a_count_that_jumps_a_little_within_a_shoe_is_a_fault_told_before_the_card() -> None:
    link = anchored()
    events = link.receive([card(1, "AH", 1), card(2, "KD", 2), card(3, "QS", 5)], 0.1)
    assert [type(e).__name__ for e in events] == ["CardDrawn", "CardDrawn", "Fault", "CardDrawn"]
    fault = events[2]
    assert isinstance(fault, Fault) and fault.code == "COUNT"
    assert fault.text.startswith("the shoe's count went from 2 to 5 (card QS)")


def test_counts_that_follow_give_no_fault_cut_and_empty_repeat_or_add_one() -> None:
    link = anchored()
    frames = [card(1, "AH", 1), Frame(2, "NOREAD", ("2",)), Frame(3, "CUT", ("2",)), card(4, "9C", 3),
              Frame(5, "CUT", ("4",)), card(6, "8D", 5), Frame(7, "EMPTY", ("5",)),
              Frame(8, "NEWSHOE", ("8",)), card(9, "2S", 1)]
    assert not [e for e in link.receive(frames, 0.1) if isinstance(e, Fault)]


def test_a_power_cycled_shoe_may_jump_its_count() -> None:
    link = anchored()
    link.receive([card(1, "AH", 1)], 0.1)
    events = link.receive([hello("77AB0102"), card(1, "QC", 9)], 0.2)  # frames 2..8 lost with power
    assert not [e for e in events if isinstance(e, Fault)]


def test_a_stall_that_clears_by_itself_sends_no_reset() -> None:
    link = ControllerLink(SLP1Codec(), now=0.0, resume=LinkState(BOOT, 17), rng=random.Random(5))
    for now in (0.0, 0.5, 1.0):
        link.receive([card(19, count=19)], now)  # only a frame ahead: the link wants a RESET
    sent(link)
    link.receive([card(18, count=18), card(19, count=19)], 1.1)  # the gap fills itself
    for now in (2.0, 4.0, 6.0):
        link.tick(now)
    assert not [f for f in sent(link) if f.type == "RESET"]
    assert link.link_state == LinkState(BOOT, 19)
