"""Self-tests of the plain-card-reader emulator (not of any parser).

Two small reference parsers written here (one strict and dialect-aware, one
lenient and generic) are used only to check that the ground truth is
self-consistent: both must be accepted by ``Emitted.accepts`` under heavy
faults, while a naive substring parser must be caught.
"""

from __future__ import annotations

import os
import re
import select
import time
import unicodedata

import pytest

from .emulator import (
    DIALECTS,
    GARBAGE_POOL,
    OVERLONG_POOL,
    RANKS,
    SUITS,
    Dialect,
    Emitted,
    Faults,
    LineReaderPty,
    canonical_card,
    emit,
    random_deck,
)

HEAVY = Faults(lost=0.1, duplicate=0.1, truncated=0.15, garbage=0.3, overlong=0.1, keepalive=0.3)
RANK_FIRST = [d for d in DIALECTS.values() if not d.suit_first]
_LINE_SPLIT = re.compile(rb"\r\n|\r|\n")


# ---------------------------------------------------------------- reference parsers

def _strict_regex(d: Dialect) -> re.Pattern[bytes]:
    """Whole-line regex for one dialect, built from its knobs."""
    p = [rb"[ \t]*"]
    if d.stx_etx:
        p.append(rb"\x02")
    if d.timestamp:
        p.append(rb"\d\d:\d\d:\d\d\.\d\d\d ")
    p.append(re.escape(d.prefix.encode()))
    head_card = re.escape(d.label.encode())
    seq = rb"\d{%d}" % d.seq_width
    if d.seq == "prefix":
        head_card += seq + re.escape(d.seq_sep.encode())
    if d.suit_first:
        code = rb"(?P<suit>[SHDCshdc])(?P<rank>10|[2-9AaTtJjQqKk])"
    else:
        code = rb"(?P<rank>10|[2-9AaTtJjQqKk])(?P<suit>[SHDCshdc])"
    tail = b""
    if d.seq == "suffix":
        tail += re.escape(d.seq_sep.encode()) + seq
    tail += re.escape(d.suffix.encode())
    if d.stx_etx:
        tail += rb"\x03"
        if d.checksum:
            tail += rb"[\x20-\x7e]"
    return re.compile(b"".join(p) + head_card + code + tail + rb"[ \t]*")


def strict_parse(data: bytes, d: Dialect) -> list[str]:
    rx = _strict_regex(d)
    out = []
    for line in _LINE_SPLIT.split(data):
        m = rx.fullmatch(line)
        if m:
            out.append(canonical_card((m["rank"] + m["suit"]).decode()))
    return out


_TOKEN_CARD = re.compile(r"(10|[2-9AaTtJjQqKk])([SHDCshdc])")


def lenient_parse(data: bytes) -> list[str]:
    """Generic: a line is a card iff exactly one alnum token is a card code."""
    out = []
    for line in _LINE_SPLIT.split(data):
        toks = re.findall(r"[A-Za-z0-9]+", line.decode("latin-1"))
        cards = [t for t in toks if _TOKEN_CARD.fullmatch(t)]
        if len(cards) == 1:
            out.append(canonical_card(cards[0]))
    return out


def pattern_parse(data: bytes, pattern: str) -> list[str]:
    rx = re.compile(pattern)
    out = []
    for line in _LINE_SPLIT.split(data):
        m = rx.search(line.decode("latin-1"))
        if m:
            out.append(canonical_card(m["rank"] + m["suit"]))
    return out


def naive_parse(data: bytes) -> list[str]:
    """Wrong on purpose: first card-looking substring anywhere in a line."""
    out = []
    rx = re.compile(r"(10|[2-9ATJQK])([SHDC])", re.I)
    for line in _LINE_SPLIT.split(data):
        m = rx.search(line.decode("latin-1"))
        if m:
            out.append(canonical_card(m[0]))
    return out


# ---------------------------------------------------------------- dialects

def test_dialect_catalogue():
    assert len(DIALECTS) >= 14
    assert all(k == d.name for k, d in DIALECTS.items())
    eols = {d.eol for d in DIALECTS.values()}
    assert eols == {b"\r\n", b"\n", b"\r"}
    assert {d.ten for d in DIALECTS.values()} == {"T", "t", "10"}
    needs = [d for d in DIALECTS.values() if d.needs_pattern]
    assert len(needs) == 1 and needs[0].suit_first
    rx = re.compile(needs[0].pattern)
    assert {"rank", "suit"} <= set(rx.groupindex)
    assert any(d.keepalives for d in DIALECTS.values())
    assert any(d.checksum for d in DIALECTS.values())
    assert any(d.seq == "prefix" for d in DIALECTS.values())
    assert any(d.seq == "suffix" for d in DIALECTS.values())
    assert any(d.timestamp for d in DIALECTS.values())
    # all rendered configurations are distinct
    cards = ["TH", "AS", "QD", "2C"]
    renders = {emit(cards, d, Faults(keepalive=1), seed=5).data for d in DIALECTS.values()}
    assert len(renders) == len(DIALECTS)


def test_canonical_card():
    assert canonical_card("10h") == "TH"
    assert canonical_card("tS") == "TS"
    assert canonical_card("qd") == "QD"
    assert canonical_card("Qd") == "QD"
    for bad in ("1H", "0H", "SA", "H10", "XX", "ACK", "10", ""):
        with pytest.raises(ValueError):
            canonical_card(bad)


def test_random_deck():
    d = random_deck(52, 3)
    assert sorted(d) == sorted(r + s for r in RANKS for s in SUITS)
    assert random_deck(52, 3) == d and random_deck(52, 4) != d
    assert len(random_deck(300, 1)) == 300
    assert random_deck(0, 1) == []


# ---------------------------------------------------------------- ground truth

@pytest.mark.parametrize("name", list(DIALECTS))
def test_no_faults_every_card_present(name):
    d = DIALECTS[name]
    cards = random_deck(104, 11)
    em = emit(cards, d, Faults(), seed=2)
    assert em.cards == cards
    assert em.intended == cards
    assert em.ambiguous == []
    assert em.data == b"".join(em.chunks)
    assert len(em.chunks) == len(cards)
    assert all(c.endswith(d.eol) for c in em.chunks)
    # exactly one line per card, whatever splitting rule is used
    lines = [ln for ln in _LINE_SPLIT.split(em.data) if ln]
    assert len(lines) == len(cards)
    if d.needs_pattern:
        assert pattern_parse(em.data, d.pattern) == cards
    else:
        assert strict_parse(em.data, d) == cards
        assert lenient_parse(em.data) == cards


@pytest.mark.parametrize("name", list(DIALECTS))
def test_ground_truth_bookkeeping_under_faults(name):
    d = DIALECTS[name]
    for seed in range(5):
        cards = random_deck(80, seed)
        em = emit(cards, d, HEAVY, seed=seed)
        kinds = [k for _, k in em.events]
        n_lost = kinds.count("lost")
        n_dup = kinds.count("duplicate")
        n_drop = kinds.count("truncated")
        assert len(em.cards) == len(cards) - n_lost - n_drop - len(em.ambiguous) + n_dup
        assert len(em.slots) == len(em.cards) + len(em.ambiguous)
        assert sorted(set(em.ambiguous)) == em.ambiguous
        # each intended index is accounted for exactly once by its line event
        line_kinds = {"card", "lost", "truncated", "truncated_ambiguous", "truncated_ws", "garbage_mid"}
        per_index = [i for i, k in em.events if k in line_kinds]
        assert per_index == list(range(len(cards)))
        # ambiguous cards are exactly the optional slots, in order
        assert [c for c, req in em.slots if not req] == [cards[i] for i in em.ambiguous]
        # cards is a subsequence of intended (plus duplicates)
        assert em.accepts(em.cards)
        assert em.accepts([c for c, _ in em.slots])


@pytest.mark.parametrize("name", list(DIALECTS))
def test_reference_parsers_accepted_under_heavy_faults(name):
    d = DIALECTS[name]
    for seed in range(30):
        em = emit(random_deck(60, seed), d, HEAVY, seed=seed)
        if d.needs_pattern:
            got = pattern_parse(em.data, d.pattern)
            assert em.mismatch(got) is None, (seed, em.mismatch(got))
            continue
        for got in (strict_parse(em.data, d), lenient_parse(em.data)):
            assert em.mismatch(got) is None, (seed, em.mismatch(got))


def test_suit_first_only_with_pattern():
    d = DIALECTS["suit_first"]
    em = emit(["TH", "AS", "9C"], d)
    assert em.data == b"H10\r\nSA\r\nC9\r\n"
    assert pattern_parse(em.data, d.pattern) == ["TH", "AS", "9C"]
    assert lenient_parse(em.data) == []  # no suit-first code is a rank-first code


def test_accepts_rules():
    em = Emitted(data=b"", cards=["AS", "KH"], ambiguous=[1], intended=["AS", "QD", "KH"],
                 slots=[("AS", True), ("QD", False), ("KH", True)])
    assert em.accepts(["AS", "KH"]) and em.accepts(["AS", "QD", "KH"]) and em.accepts(["as", "kh"])
    assert not em.accepts(["AS"])
    assert not em.accepts(["AS", "KH", "QD"])
    assert not em.accepts(["AS", "2C", "KH"])
    assert "expected KH" in em.mismatch(["AS", "QD"])


def test_naive_parser_is_caught():
    em = emit(random_deck(40, 1), DIALECTS["status_label"], Faults(keepalive=1), seed=1)
    assert not em.accepts(naive_parse(em.data))  # "ACK" -> AC, "READY" style traps
    em = emit(random_deck(40, 1), DIALECTS["heartbeat"], Faults(keepalive=1), seed=1)
    assert b"READY" in em.data and not em.accepts(naive_parse(em.data))


def test_determinism_by_seed():
    cards = random_deck(50, 9)
    for d in DIALECTS.values():
        a = emit(cards, d, HEAVY, seed=42)
        b = emit(cards, d, HEAVY, seed=42)
        assert a == b
    d = DIALECTS["kitchen_sink"]
    assert emit(cards, d, HEAVY, seed=1).data != emit(cards, d, HEAVY, seed=2).data


# ---------------------------------------------------------------- fault shapes

_CARDISH = re.compile(r"[A2-9TJQKSHDC10]", re.I)


def _no_card_char_anywhere(b: bytes) -> bool:
    """No decoding / normalisation / case mapping turns b into a rank, suit or digit."""
    if re.search(rb"[A-Za-z0-9]", b):
        return False
    texts = [b.decode("latin-1"), b.decode("cp1252", "replace"), b.decode("utf-8", "replace"),
             b.decode("utf-8", "ignore")]
    for t in texts:
        for form in ("NFKC", "NFKD"):
            n = unicodedata.normalize(form, t)
            for s in (n, n.casefold(), n.upper(), n.lower()):
                if _CARDISH.search(s) or any(c.isdigit() for c in s):
                    return False
        if _CARDISH.search(t):  # re.I folds e.g. KELVIN SIGN to k, LONG S to s
            return False
    return True


def test_garbage_pool_cannot_become_card_text():
    assert _no_card_char_anywhere(GARBAGE_POOL)
    assert {0x00, 0xFF, 0x0D, 0x0A, 0x02, 0x03} <= set(GARBAGE_POOL)
    for b in OVERLONG_POOL:
        assert chr(b) not in "\r\n"
        assert chr(b).upper() not in set(RANKS + SUITS + "10")


def test_fault_shapes():
    d = DIALECTS["heartbeat"]  # CR LF, has keep-alives
    seen_bytes = set()
    kinds = set()
    garbage_checked = overlong_checked = 0
    for seed in range(40):
        em = emit(random_deck(50, seed), d, HEAVY, seed=seed)
        kinds |= {k for _, k in em.events}
        sent = [e for e in em.events if e[1] != "lost"]  # one chunk per event
        assert len(sent) == len(em.chunks)
        for (_, k), chunk in zip(sent, em.chunks, strict=True):
            if k == "overlong":
                body = chunk[:-2]
                assert len(body) >= 500 and b"\r" not in body and b"\n" not in body
                overlong_checked += 1
            if k == "garbage_between":
                assert chunk.endswith(b"\r\n"), chunk  # a burst is closed by the dialect's line end
                g = chunk[:-2]
                assert g, chunk  # and is never just an empty line (that is a keep-alive)
                assert _no_card_char_anywhere(g), g
                seen_bytes |= set(g)
                garbage_checked += 1
    assert garbage_checked > 0 and overlong_checked > 0  # the checks above really ran
    assert {"card", "duplicate", "lost", "truncated", "garbage_mid", "garbage_between",
            "keepalive", "overlong"} <= kinds
    assert {0x00, 0xFF, 0x0D, 0x0A} <= seen_bytes


def test_duplicate_is_immediate_and_identical():
    d = DIALECTS["timestamp_ms"]
    em = emit(random_deck(30, 0), d, Faults(duplicate=1), seed=0)
    assert len(em.cards) == 60 and em.cards[0::2] == em.cards[1::2] == em.intended
    assert all(a == b for a, b in zip(em.chunks[0::2], em.chunks[1::2], strict=False))


def test_lost_all():
    em = emit(random_deck(10, 0), DIALECTS["plain_lf_ten10"], Faults(lost=1))
    assert em.cards == [] and em.data == b""


def test_truncated_line_classification():
    d = DIALECTS["label_space_ok"]  # "CARD KH OK"
    for seed in range(50):
        em = emit(["KH"], d, Faults(truncated=1), seed=seed)
        frag = em.data[:-2]
        assert b"CARD KH OK".startswith(frag) and frag != b"CARD KH OK"
        if len(frag) < len(b"CARD KH"):
            assert em.cards == [] and em.ambiguous == []
        else:
            assert em.cards == [] and em.ambiguous == [0]


# ---------------------------------------------------------------- pty

def _read_exactly(fd: int, n: int, timeout: float) -> bytes:
    buf = bytearray()
    end = time.monotonic() + timeout
    while len(buf) < n:
        rem = end - time.monotonic()
        if rem <= 0:
            break
        r, _, _ = select.select([fd], [], [], rem)
        if r:
            buf += os.read(fd, 65536)
    return bytes(buf)


def test_pty_delivers_bytes():
    with LineReaderPty(DIALECTS["stx_etx_checksum"], HEAVY, seed=3) as pty:
        fd = os.open(pty.path, os.O_RDWR | os.O_NOCTTY)
        try:
            em = pty.send(random_deck(40, 3))
            pty.send_bytes(b"\x00\xff raw\r\n")
            want = em.data + b"\x00\xff raw\r\n"
            got = _read_exactly(fd, len(want), 5)
            assert got == want  # raw mode: no CR/LF translation, no echo
            assert pty.wait_idle(5)
            os.write(fd, b"hello reader")
            time.sleep(0.2)
        finally:
            os.close(fd)
        assert b"hello reader" in pty.received


def test_pty_line_delay_and_baud_pacing():
    with LineReaderPty(DIALECTS["plain_crlf"], line_delay=0.05) as pty:
        fd = os.open(pty.path, os.O_RDWR | os.O_NOCTTY)
        try:
            t0 = time.monotonic()
            em = pty.send(["AS", "KH", "QD", "2C"])
            assert _read_exactly(fd, len(em.data), 5) == em.data
            assert pty.wait_idle(5)
            assert time.monotonic() - t0 >= 0.15
        finally:
            os.close(fd)
    with LineReaderPty(DIALECTS["plain_crlf"], baud=9600) as pty:
        fd = os.open(pty.path, os.O_RDWR | os.O_NOCTTY)
        try:
            payload = b"KH\r\n" * 120  # 480 bytes = 0.5 s at 9600 baud
            t0 = time.monotonic()
            pty.send_bytes(payload)
            assert _read_exactly(fd, len(payload), 5) == payload
            elapsed = time.monotonic() - t0
            assert 0.4 <= elapsed <= 2.0, elapsed
        finally:
            os.close(fd)


def test_pty_nobody_listening_does_not_block():
    pty = LineReaderPty(DIALECTS["plain_crlf"], write_timeout=0.2)
    try:
        t0 = time.monotonic()
        pty.send_bytes(b"x" * 300_000)
        em = pty.send(random_deck(500, 1))
        assert time.monotonic() - t0 < 0.5  # send() itself never blocks
        assert pty.wait_idle(10)
        assert pty.bytes_dropped > 0
        assert pty.bytes_written + pty.bytes_dropped == 300_000 + len(em.data)
        # a later reader does not get stale bytes after discard_pending()
        pty.discard_pending()
        fd = os.open(pty.path, os.O_RDWR | os.O_NOCTTY)
        try:
            em2 = pty.send(["AS"])
            assert _read_exactly(fd, len(em2.data), 5) == em2.data
        finally:
            os.close(fd)
    finally:
        t1 = time.monotonic()
        pty.close()
        pty.close()  # idempotent
        assert time.monotonic() - t1 < 5
    with pytest.raises(RuntimeError):
        pty.send_bytes(b"x")


def _generous_cards(chunk: bytes, suit_first: bool) -> list[list[str]]:
    """Per reading variant, every whole-token card code in every line of chunk."""
    rx = re.compile(rb"([SHDCshdc])(10|[2-9AaTtJjQqKk])" if suit_first else rb"(10|[2-9AaTtJjQqKk])([SHDCshdc])")
    out = []
    for variant in (chunk, re.sub(rb"[^\t\r\n\x20-\x7e]", b"", chunk), re.sub(rb"[\x02\x03]", b" ", chunk)):
        found = []
        for line in _LINE_SPLIT.split(variant):
            for run in re.findall(rb"[A-Za-z0-9]+", line):
                m = rx.fullmatch(run)
                if m:
                    found.append(canonical_card((m[2] + m[1] if suit_first else m[0]).decode()))
        out.append(found)
    return out


@pytest.mark.parametrize("name", list(DIALECTS))
def test_no_line_can_read_as_another_card(name):
    """Every physical line yields at most its own intended card, under generous readings."""
    d = DIALECTS[name]
    f = Faults(lost=0.1, duplicate=0.1, truncated=0.4, garbage=0.8, overlong=0.2, keepalive=0.5)
    own_kinds = {"card", "duplicate", "truncated_ws", "truncated_ambiguous", "garbage_mid"}
    for seed in range(60):
        em = emit(random_deck(40, seed), d, f, seed=seed)
        sent = [e for e in em.events if e[1] != "lost"]
        for (i, kind), chunk in zip(sent, em.chunks, strict=True):
            allowed = [em.intended[i]] if kind in own_kinds else []
            for found in _generous_cards(chunk, d.suit_first):
                assert set(found) <= set(allowed) and len(found) <= 1, (seed, kind, chunk, found)
