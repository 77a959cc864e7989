"""SLP/1 framing: CRC vectors, round trips, resynchronisation, discards, fuzzing."""

from __future__ import annotations

import binascii

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_interfaces.shoe import Frame, SLP1Codec, codec_by_name, crc16
from firmware_interfaces.shoe.errors import ShoeProtocolError

SPEC_EXAMPLES = [
    (b"$0,HELLO,ACME,SmartShoe-8,SN0042,2.1.0,SLP1,5F3A9C01,-*523C\r\n",
     Frame(0, "HELLO", ("ACME", "SmartShoe-8", "SN0042", "2.1.0", "SLP1", "5F3A9C01", "-"))),
    (b"$17,CARD,TS,RO,143*2252\r\n", Frame(17, "CARD", ("TS", "RO", "143"))),
    (b"$17,ACK,5F3A9C01*D212\r\n", Frame(17, "ACK", ("5F3A9C01",))),
    (b"$5,LOCK*5000\r\n", Frame(5, "LOCK")),
    (b"$3,RESET,0C1D2E3F*42C7\r\n", Frame(3, "RESET", ("0C1D2E3F",))),
    (b"$0,HELLO,ACME,SmartShoe-8,SN0042,2.1.0,SLP1,77AB0102,0C1D2E3F*5968\r\n",
     Frame(0, "HELLO", ("ACME", "SmartShoe-8", "SN0042", "2.1.0", "SLP1", "77AB0102", "0C1D2E3F"))),
]

#: One frame of every SLP/1 message, both directions.
EVERY_MESSAGE = [
    Frame(0, "HELLO", ("ACME", "SmartShoe-8", "SN0042", "2.1.0", "SLP1", "5F3A9C01", "-")),
    Frame(17, "CARD", ("TS", "RO", "143")),
    Frame(18, "NOREAD", ("144",)),
    Frame(19, "CUT", ("300",)),
    Frame(20, "NEWSHOE", ("8",)),
    Frame(21, "EMPTY", ("416",)),
    Frame(22, "LID", ("OPEN",)),
    Frame(23, "GATE", ("LOCKED",)),
    Frame(24, "STATE", ("UNLOCKED", "CLOSED", "12")),
    Frame(25, "HB", ("123456",)),
    Frame(26, "FAULT", ("JAM", "card jammed in the gate")),
    Frame(65535, "ACK", ()),
    Frame(4, "ACK", ("5F3A9C01",)),
    Frame(5, "LOCK"),
    Frame(6, "UNLOCK"),
    Frame(7, "STATUS"),
    Frame(8, "RESET", ("0C1D2E3F",)),
]


def test_crc_check_value_is_29B1() -> None:
    assert crc16(b"123456789") == 0x29B1
    assert binascii.crc_hqx(b"123456789", 0xFFFF) == 0x29B1


@pytest.mark.parametrize("wire,frame", SPEC_EXAMPLES)
def test_spec_examples_encode_byte_for_byte(wire: bytes, frame: Frame) -> None:
    assert SLP1Codec().encode(frame.seq, frame.type, frame.args) == wire


@pytest.mark.parametrize("wire,frame", SPEC_EXAMPLES)
def test_spec_examples_decode(wire: bytes, frame: Frame) -> None:
    codec = SLP1Codec()
    assert codec.feed(wire) == [frame]
    assert codec.counters.frames == 1


@pytest.mark.parametrize("frame", EVERY_MESSAGE, ids=lambda f: f.type)
def test_every_message_round_trips(frame: Frame) -> None:
    codec = SLP1Codec()
    assert codec.feed(codec.encode(frame.seq, frame.type, frame.args)) == [frame]


def test_frames_split_across_reads_byte_by_byte() -> None:
    codec = SLP1Codec()
    wire = b"".join(w for w, _ in SPEC_EXAMPLES)
    got = [f for i in range(len(wire)) for f in codec.feed(wire[i:i + 1])]
    assert got == [f for _, f in SPEC_EXAMPLES]


def test_dollar_inside_a_partial_frame_restarts_it() -> None:
    codec = SLP1Codec()
    assert codec.feed(b"$17,CARD,T$5,LOCK*5000\r\n") == [Frame(5, "LOCK")]
    assert codec.counters.resyncs == 1


def test_dollar_restart_across_reads() -> None:
    codec = SLP1Codec()
    assert codec.feed(b"$17,CARD,T") == []
    assert codec.feed(b"S,R$5,LO") == []
    assert codec.feed(b"CK*5000\r\n") == [Frame(5, "LOCK")]
    assert codec.counters.resyncs == 1


def test_bytes_before_a_frame_are_garbage() -> None:
    codec = SLP1Codec()
    assert codec.feed(b"\x00\xffnoise\r\n$5,LOCK*5000\r\n") == [Frame(5, "LOCK")]
    assert codec.counters.garbage_bytes == 9


def test_bad_crc_is_discarded_and_counted() -> None:
    codec = SLP1Codec()
    assert codec.feed(b"$17,CARD,TS,RO,143*2253\r\n$5,LOCK*5000\r\n") == [Frame(5, "LOCK")]
    assert codec.counters.bad_crc == 1


def test_lower_case_crc_is_bad_syntax() -> None:
    codec = SLP1Codec()
    assert codec.feed(b"$0,HELLO,ACME,SmartShoe-8,SN0042,2.1.0,SLP1,5F3A9C01,-*523c\r\n") == []
    assert codec.counters.bad_syntax == 1


@pytest.mark.parametrize("body", [b"17", b"x,CARD", b"17,card", b"-1,LOCK", b"123456,LOCK",
                                  b"65536,LOCK", b"1,LO CK", b",LOCK", b"1,"])
def test_bad_syntax_with_a_good_crc_is_discarded(body: bytes) -> None:
    codec = SLP1Codec()
    wire = b"$%s*%04X\r\n" % (body, crc16(body))
    assert codec.feed(wire) == []
    assert codec.counters.bad_syntax == 1


def test_frame_without_cr_is_bad_syntax() -> None:
    codec = SLP1Codec()
    assert codec.feed(b"$5,LOCK*5000\n") == []
    assert codec.counters.bad_syntax == 1


def test_overlong_frame_is_discarded_and_counted() -> None:
    codec = SLP1Codec()
    body = b"1,FAULT,X," + b"A" * 90
    wire = b"$%s*%04X\r\n" % (body, crc16(body))
    assert codec.feed(wire + b"$5,LOCK*5000\r\n") == [Frame(5, "LOCK")]
    assert codec.counters.overlong == 1


def test_overlong_partial_frame_is_dropped_without_growing_the_buffer() -> None:
    codec = SLP1Codec()
    assert codec.feed(b"$" + b"A" * 200) == []
    assert codec.counters.overlong == 1
    assert codec.feed(b"A" * 5000 + b"\r\n$5,LOCK*5000\r\n") == [Frame(5, "LOCK")]
    assert codec.buffered == 0


def test_96_byte_frame_is_accepted() -> None:
    codec = SLP1Codec()
    body = b"1,FAULT,X," + b"A" * (96 - 8 - 10)
    wire = b"$%s*%04X\r\n" % (body, crc16(body))
    assert len(wire) == 96
    assert len(codec.feed(wire)) == 1


def test_encode_rejects_unsendable_fields() -> None:
    codec = SLP1Codec()
    with pytest.raises(ShoeProtocolError, match="'a,b'"):
        codec.encode(1, "FAULT", ("JAM", "a,b"))
    with pytest.raises(ShoeProtocolError, match="'card'"):
        codec.encode(1, "card")
    with pytest.raises(ShoeProtocolError, match="65536"):
        codec.encode(65536, "HB")
    with pytest.raises(ShoeProtocolError, match="at most 96"):
        codec.encode(1, "FAULT", ("JAM", "x" * 90))


def test_codec_registry_names_known_protocols() -> None:
    assert isinstance(codec_by_name("slp1"), SLP1Codec)
    with pytest.raises(ShoeProtocolError, match="unknown shoe protocol 'acme'.*slp1"):
        codec_by_name("acme")


# -- property tests ---------------------------------------------------------

@settings(max_examples=600, deadline=None)
@given(st.lists(st.binary(max_size=200), max_size=8))
def test_any_bytes_never_raise_and_only_yield_good_frames(chunks: list[bytes]) -> None:
    codec = SLP1Codec()
    for chunk in chunks:
        for frame in codec.feed(chunk):
            wire = codec.encode(frame.seq, frame.type, frame.args)
            body = wire[1:-7]
            assert int(wire[-6:-2], 16) == crc16(body)


_arg = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E,
                                      blacklist_characters="$*,"), max_size=12)
_frames = st.builds(
    Frame,
    st.integers(0, 65535),
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=8),
    st.lists(_arg, max_size=4).map(tuple),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_frames, min_size=1, max_size=10), st.data())
def test_structured_frames_survive_any_chunking(frames: list[Frame], data: st.DataObject) -> None:
    codec = SLP1Codec()
    wire = b"".join(codec.encode(f.seq, f.type, f.args) for f in frames)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=6)))
    pieces = [wire[a:b] for a, b in zip([0, *cuts], [*cuts, len(wire)], strict=True)]
    assert [f for p in pieces for f in codec.feed(p)] == frames


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_frames, st.binary(max_size=30), st.booleans()), min_size=1, max_size=10))
def test_noise_between_frames_loses_only_the_damaged_ones(
    items: list[tuple[Frame, bytes, bool]]
) -> None:
    """Garbage between frames costs nothing; a flipped bit costs its own frame only."""
    codec = SLP1Codec()
    wire = b""
    survivors = []
    for frame, noise, corrupt in items:
        encoded = codec.encode(frame.seq, frame.type, frame.args)
        if corrupt:
            encoded = encoded[:3] + bytes([encoded[3] ^ 0x01]) + encoded[4:]
        # Noise ends in a newline, so it cannot swallow the next frame's '$'.
        wire += noise.replace(b"$", b"") + b"\n" + encoded
        if not corrupt:
            survivors.append(frame)
    got = codec.feed(wire)
    assert got == survivors
