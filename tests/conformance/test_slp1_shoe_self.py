"""Self-tests of the independent conformance shoe (and nothing else)."""

from __future__ import annotations

import os
import select
import socket
import threading
import time

import pytest

from tests.conformance.slp1_shoe import (
    ConformanceShoe,
    Frame,
    FrameReader,
    PtyShoe,
    ShoeBehaviour,
    TcpShoe,
    crc16,
    deal_until,
    decode_frame,
    encode_frame,
)

CARDS = ["AS", "TS", "KH", "2D", "9C", "QS", "JH", "3D", "4C", "5S", "6H", "7D", "8C", "AH", "TD", "KC"] * 3

SPEC_EXAMPLES = [
    b"$0,HELLO,ACME,SmartShoe-8,SN0042,2.1.0,SLP1,5F3A9C01,-*523C\r\n",
    b"$17,CARD,TS,RO,143*2252\r\n",
    b"$17,ACK,5F3A9C01*D212\r\n",
    b"$5,LOCK*5000\r\n",
    b"$3,RESET,0C1D2E3F*42C7\r\n",
    b"$0,HELLO,ACME,SmartShoe-8,SN0042,2.1.0,SLP1,77AB0102,0C1D2E3F*5968\r\n",
]


def frames(data: bytes) -> list[Frame]:
    """Decode every good frame in ``data`` (a strict mini-controller)."""
    return [decode_frame(raw) for raw in FrameReader().feed(data)]


def new_shoe(b: ShoeBehaviour | None = None, now: float = 0.0, **kw) -> ConformanceShoe:
    return ConformanceShoe(b or ShoeBehaviour(), cards=list(CARDS), now=now, **kw)


def ack(shoe: ConformanceShoe, seq: int, now: float) -> None:
    shoe.receive(encode_frame(seq, "ACK", shoe.boot_id), now)


def unlock(shoe: ConformanceShoe, now: float, seq: int = 100) -> None:
    shoe.receive(encode_frame(seq, "UNLOCK"), now)


# ---- framing ---------------------------------------------------------------


def test_crc_check_value() -> None:
    assert f"{crc16(b'123456789'):04X}" == "29B1"


@pytest.mark.parametrize("wire", SPEC_EXAMPLES)
def test_spec_examples_round_trip(wire: bytes) -> None:
    (f,) = frames(wire)
    assert f.encode() == wire
    assert encode_frame(f.seq, f.type, *f.args) == wire


def test_reader_resyncs_and_rejects() -> None:
    r = FrameReader()
    noisy = b"garbage$12,LO" + SPEC_EXAMPLES[3] + b"\x00\xff" + SPEC_EXAMPLES[1]
    got = [decode_frame(x) for x in r.feed(noisy[:7]) + r.feed(noisy[7:])]
    assert [f.type for f in got] == ["LOCK", "CARD"] and r.restarts == 1
    shoe = new_shoe()
    shoe.receive(b"$5,LOCK*5001\r\n", 0.0)  # bad CRC
    shoe.receive(b"$5,LOCK*5000\n", 0.0)  # no CR
    shoe.receive(b"$" + b"9" * 100 + b"\r\n", 0.0)  # over-length
    assert shoe.rx_errors["crc"] == 1 and shoe.rx_errors["syntax"] == 1 and shoe.rx_errors["length"] == 1
    assert shoe.acks_sent == 0


def test_power_on_sequence() -> None:
    shoe = new_shoe(decks=6)
    out = frames(shoe.take_output())
    assert [(f.seq, f.type) for f in out] == [(0, "HELLO"), (1, "NEWSHOE")]
    assert out[0].args == ("INDEP", "Conf-1", "SN0001", "0.9", "SLP1", shoe.boot_id, "-")
    assert out[1].args == ("6",)
    assert shoe.gate_locked and shoe.draw(0.0) is None
    assert len(shoe.boot_id) == 8 and shoe.boot_id == shoe.boot_id.upper()


# ---- window and retransmission ------------------------------------------------


def test_window_limit_respected() -> None:
    shoe = new_shoe(ShoeBehaviour(window=8))
    ack(shoe, 1, 0.0)
    shoe.take_output()
    unlock(shoe, 0.0)  # -> GATE seq 2
    for _ in range(20):
        assert shoe.draw(0.01) is not None
    sent = [f for f in frames(shoe.take_output()) if f.type != "ACK"]
    assert [f.seq for f in sent] == list(range(2, 10))  # GATE + 7 CARDs
    assert shoe.in_flight == 8 and shoe.unacked == 21
    shoe.tick(0.3)  # retransmission repeats the same 8 frames, no new ones
    assert [f.seq for f in frames(shoe.take_output())] == list(range(2, 10))
    ack(shoe, 5, 0.31)  # cumulative: covers 2..5, so 4 new frames may go
    assert [f.seq for f in frames(shoe.take_output())] == [10, 11, 12, 13]
    assert shoe.in_flight == 8


def test_retransmission_timing_with_injected_clock() -> None:
    shoe = new_shoe(now=100.0)
    assert [f.seq for f in frames(shoe.take_output())] == [0, 1]
    shoe.tick(100.249)
    assert shoe.take_output() == b""
    shoe.tick(100.25)
    assert [f.seq for f in frames(shoe.take_output())] == [0, 1]
    shoe.tick(100.45)
    assert shoe.take_output() == b""
    shoe.tick(100.5)
    assert [f.seq for f in frames(shoe.take_output())] == [0, 1]
    assert shoe.retransmissions == 4
    # 2 s of controller silence: link down, retransmission once a second
    t, times = 100.5, []
    while t < 106.0:
        t = round(t + 0.01, 3)
        shoe.tick(t)
        if shoe.take_output():
            times.append(t)
    gaps = [round(b - a, 3) for a, b in zip(times, times[1:], strict=False)]
    assert gaps[-3:] == [1.0, 1.0, 1.0] and all(g <= 1.0 for g in gaps)
    # the peer answers: back to 250 ms
    shoe.receive(encode_frame(7, "STATUS"), 106.0)
    shoe.take_output()
    shoe.tick(106.3)
    assert shoe.take_output() != b""
    # acknowledged: no more retransmission, heartbeat once a second when idle
    ack(shoe, shoe.next_seq - 1, 106.3)
    shoe.tick(106.8)
    assert shoe.take_output() == b""
    shoe.tick(107.31)
    (hb,) = frames(shoe.take_output())
    assert hb.type == "HB" and int(hb.args[0]) == 7310


def test_ack_of_other_session_ignored() -> None:
    shoe = new_shoe()
    shoe.take_output()
    shoe.receive(encode_frame(1, "ACK", "DEADBEEF" if shoe.boot_id != "DEADBEEF" else "0BADF00D"), 0.1)
    shoe.receive(encode_frame(1, "ACK"), 0.1)
    assert shoe.unacked == 2 and shoe.acks_ignored == 2
    ack(shoe, 1, 0.1)
    assert shoe.unacked == 0


# ---- commands -------------------------------------------------------------------


def test_commands_acked_and_answered() -> None:
    shoe = new_shoe()
    ack(shoe, 1, 0.0)
    shoe.take_output()
    shoe.receive(encode_frame(40000, "UNLOCK"), 0.1)
    out = frames(shoe.take_output())
    assert [(f.seq, f.type, f.args) for f in out] == [(40000, "ACK", ()), (2, "GATE", ("UNLOCKED",))]
    shoe.receive(encode_frame(40000, "UNLOCK"), 0.2)  # retransmitted command: ACK again only
    assert [(f.seq, f.type) for f in frames(shoe.take_output())] == [(40000, "ACK")]
    shoe.receive(encode_frame(40001, "STATUS"), 0.3)
    out = frames(shoe.take_output())
    assert out[-1].type == "STATE" and out[-1].args == ("UNLOCKED", "CLOSED", "0")
    shoe.receive(encode_frame(40002, "FROB", "x"), 0.4)  # unknown: ACKed, ignored
    assert [f.type for f in frames(shoe.take_output())] == ["ACK"] and shoe.unknown_commands == 1


def test_command_ack_delay() -> None:
    shoe = new_shoe(ShoeBehaviour(command_ack_delay=0.4, heartbeat=0))
    ack(shoe, 1, 0.0)
    shoe.take_output()
    shoe.receive(encode_frame(9, "UNLOCK"), 1.0)
    assert shoe.take_output() == b"" and shoe.gate_locked
    shoe.tick(1.39)
    assert shoe.take_output() == b""
    shoe.tick(1.4)
    assert [f.type for f in frames(shoe.take_output())] == ["ACK", "GATE"] and not shoe.gate_locked


def test_card_and_empty() -> None:
    shoe = ConformanceShoe(ShoeBehaviour(), cards=["TS", "AH"], now=0.0)
    ack(shoe, 1, 0.0)
    unlock(shoe, 0.0)
    ack(shoe, 2, 0.0)
    shoe.take_output()
    assert shoe.draw(0.1) == "TS" and shoe.draw_noread(0.2) and shoe.draw(0.3) is None
    out = frames(shoe.take_output())
    assert [(f.type, f.args) for f in out] == [("CARD", ("TS", "RO", "1")), ("NOREAD", ("2",)), ("EMPTY", ("2",))]
    assert shoe.drawn == [("TS", 1)] and shoe.noread_drawn == [("AH", 2)]
    with pytest.raises(ValueError):
        ConformanceShoe(ShoeBehaviour(), cards=["10S"], now=0.0)


# ---- sessions ---------------------------------------------------------------------


def test_reset_answered_by_hello_echoing_nonce() -> None:
    shoe = new_shoe()
    old_boot = shoe.boot_id
    ack(shoe, 1, 0.0)
    shoe.take_output()
    shoe.receive(encode_frame(777, "RESET", "0C1D2E3F"), 0.5)
    out = frames(shoe.take_output())
    assert (out[0].seq, out[0].type) == (777, "ACK")
    hello = out[1]
    assert (hello.seq, hello.type) == (0, "HELLO")
    assert hello.args[4:] == ("SLP1", shoe.boot_id, "0C1D2E3F") and shoe.boot_id != old_boot
    assert shoe.resets_seen == 1
    shoe.receive(encode_frame(777, "RESET", "0C1D2E3F"), 0.6)  # retransmitted RESET: idempotent
    assert [f.type for f in frames(shoe.take_output())] == ["ACK"] and shoe.resets_seen == 1


def _shoe_with_unacked_history(b: ShoeBehaviour) -> tuple[ConformanceShoe, str]:
    """Powered on with nobody listening; then an UNLOCK arrives and two cards are drawn."""
    shoe = new_shoe(b)
    first_boot = shoe.boot_id
    unlock(shoe, 0.1, seq=50)
    shoe.draw(0.2)
    shoe.draw(0.3)
    shoe.take_output()
    return shoe, first_boot


def test_resend_unacked_with_new_seqs_after_reset() -> None:
    shoe, first_boot = _shoe_with_unacked_history(ShoeBehaviour())
    shoe.receive(encode_frame(51, "RESET", "AABBCCDD"), 1.0)
    out = [f for f in frames(shoe.take_output()) if f.type != "ACK"]
    assert [(f.seq, f.type) for f in out] == [
        (0, "HELLO"), (1, "HELLO"), (2, "NEWSHOE"), (3, "GATE"), (4, "CARD"), (5, "CARD")
    ]
    assert out[0].args[5:] == (shoe.boot_id, "AABBCCDD")
    assert out[1].args[5:] == (first_boot, "-")  # the old session's HELLO, literally re-sent
    assert [f.args[0] for f in out[4:]] == ["AS", "TS"]
    assert [f.args[2] for f in out[4:]] == ["1", "2"]


def test_resend_variants() -> None:
    shoe, _ = _shoe_with_unacked_history(ShoeBehaviour(resend_old_hellos=False))
    shoe.receive(encode_frame(51, "RESET", "AABBCCDD"), 1.0)
    out = [f for f in frames(shoe.take_output()) if f.type != "ACK"]
    assert [(f.seq, f.type) for f in out] == [(0, "HELLO"), (1, "NEWSHOE"), (2, "GATE"), (3, "CARD"), (4, "CARD")]
    shoe, _ = _shoe_with_unacked_history(ShoeBehaviour(resend_after_reset=False))
    shoe.receive(encode_frame(51, "RESET", "AABBCCDD"), 1.0)
    out = [f for f in frames(shoe.take_output()) if f.type != "ACK"]
    assert [(f.seq, f.type) for f in out] == [(0, "HELLO")] and shoe.unacked == 1


def test_reboot_loses_unacked() -> None:
    shoe, first_boot = _shoe_with_unacked_history(ShoeBehaviour())
    shoe.reboot(2.0)
    out = frames(shoe.take_output())
    assert [(f.seq, f.type) for f in out] == [(0, "HELLO")]
    assert out[0].args[5:] == (shoe.boot_id, "-") and shoe.boot_id != first_boot
    assert shoe.lost_on_reboot == 5 and shoe.gate_locked and shoe.count == 2


def test_boot_ids_never_repeat() -> None:
    ids = {ConformanceShoe(ShoeBehaviour(), cards=[], seed=1, now=0.0).boot_id for _ in range(200)}
    assert len(ids) == 200


def test_faults_still_look_like_frames() -> None:
    shoe = new_shoe(ShoeBehaviour(corrupt=1.0), seed=3)
    data = shoe.take_output()
    r = FrameReader()
    raws = r.feed(data)
    assert len(raws) == 2 and r.noise_bytes == 0
    for raw in raws:
        with pytest.raises(ValueError):
            decode_frame(raw)
    dup = new_shoe(ShoeBehaviour(duplicate=1.0))
    assert [f.seq for f in frames(dup.take_output())] == [0, 0, 1, 1]
    dropped = new_shoe(ShoeBehaviour(drop=1.0))
    assert dropped.take_output() == b"" and dropped.sent_frames == 2


# ---- runners ----------------------------------------------------------------------------


def _read_frames(read: callable, until: callable, timeout: float = 3.0) -> list[Frame]:
    r, got, deadline = FrameReader(), [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        data = read()
        for raw in r.feed(data):
            try:
                got.append(decode_frame(raw))
            except ValueError:
                pass
        if until(got):
            return got
    raise AssertionError(f"timed out; got {got}")


def test_pty_runner_smoke() -> None:
    b = ShoeBehaviour(baud=115200)
    shoe = new_shoe(b, now=time.monotonic())
    before = threading.active_count()
    runner = PtyShoe(shoe, behaviour=b)
    runner.start()
    try:
        time.sleep(0.1)  # nobody has the pty open: writes are dropped, nothing blocks
        fd = os.open(runner.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        try:
            def read() -> bytes:
                select.select([fd], [], [], 0.05)
                try:
                    return os.read(fd, 4096)
                except BlockingIOError:
                    return b""

            got = _read_frames(read, lambda g: any(f.type == "NEWSHOE" for f in g))
            boot = runner.call(lambda s, now: s.boot_id)
            os.write(fd, encode_frame(1, "ACK", boot) + encode_frame(300, "UNLOCK"))
            got = _read_frames(read, lambda g: any(f.type == "GATE" for f in g))
            gate = next(f for f in got if f.type == "GATE")
            assert deal_until(runner, 3, timeout=5) == CARDS[:3]
            os.write(fd, encode_frame(gate.seq, "ACK", boot))
            got = _read_frames(read, lambda g: sum(f.type == "CARD" for f in g) >= 3)
            assert [f.args[0] for f in got if f.type == "CARD"][:3] == CARDS[:3]
        finally:
            os.close(fd)
    finally:
        runner.close()
    assert runner.errors == 0
    assert threading.active_count() == before


def test_tcp_runner_pull_cable() -> None:
    b = ShoeBehaviour(retransmit=0.04)
    shoe = new_shoe(b, now=time.monotonic())
    runner = TcpShoe(shoe, behaviour=b)
    runner.start()
    try:
        host, port = runner.url.removeprefix("socket://").split(":")
        c = socket.create_connection((host, int(port)), timeout=2)
        c.settimeout(0.05)

        def read_from(sock: socket.socket):
            def read() -> bytes:
                try:
                    return sock.recv(4096)
                except (TimeoutError, OSError):
                    return b""
            return read

        _read_frames(read_from(c), lambda g: any(f.type == "NEWSHOE" for f in g))
        runner.pull_cable(0.5)
        assert c.recv(10) == b""  # closed on us
        c.close()
        c2 = socket.create_connection((host, int(port)), timeout=2)
        c2.settimeout(0.2)
        assert c2.recv(10) == b""  # refused while the cable is out
        c2.close()
        time.sleep(0.6)
        c3 = socket.create_connection((host, int(port)), timeout=2)
        c3.settimeout(0.05)
        _read_frames(read_from(c3), lambda g: [f.seq for f in g][:2] == [0, 1])  # still unacked
        assert runner.call(lambda s, now: s.unacked) == 2
        c3.close()
    finally:
        runner.close()
    assert runner.errors == 0


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_lossy_link_converges_with_a_minimal_controller(seed: int) -> None:
    """A ten-line go-back-N receiver gets exactly the drawn cards through 20 % faults each way."""
    b = ShoeBehaviour(drop=0.2, corrupt=0.2, duplicate=0.2, rx_drop=0.2)
    shoe = new_shoe(b, seed=seed)
    reader, boot, expected, cards, nonce = FrameReader(), None, 0, [], ""
    unlock(shoe, 0.0)  # may be lost; re-sent below until the gate opens
    t = 0.0
    while t < 60 and (len(cards) < 30 or shoe.unacked):
        t = round(t + 0.01, 3)
        if int(t * 100) % 100 == 0 and boot is None:  # RESET with a new nonce once a second
            nonce = f"{int(t):08X}"
            shoe.receive(encode_frame(int(t), "RESET", nonce), t)
        if shoe.gate_locked and int(t * 100) % 25 == 0:
            unlock(shoe, t, seq=1000 + int(t * 100))
        if len(shoe.drawn) < 30:
            shoe.draw(t)
        shoe.tick(t)
        for raw in reader.feed(shoe.take_output()):
            try:
                f = decode_frame(raw)
            except ValueError:
                continue
            if f.type == "ACK":
                continue
            if f.type == "HELLO" and f.seq == 0 and f.args[6] == nonce and f.args[5] != boot:
                boot, expected = f.args[5], 1
                shoe.receive(encode_frame(0, "ACK", boot), t)
            elif boot is not None and f.seq == expected:
                expected += 1
                if f.type == "CARD":
                    cards.append(f.args[0])
                shoe.receive(encode_frame(f.seq, "ACK", boot), t)
            elif boot is not None and f.seq < expected:
                shoe.receive(encode_frame(f.seq, "ACK", boot), t)
    assert cards == [c for c, _ in shoe.drawn] and len(cards) == 30
