"""Independent emulator of *plain* card readers.

A plain card reader (barcode / RFID / optical table reader) sends one card
per line over a serial port: no frame, no sequence number of the protocol's
own, no acknowledgement.  Field readers differ in many small ways; each way is
modelled here as a named :class:`Dialect`.  :func:`emit` turns an intended
card sequence into the exact bytes such a reader would send (optionally with
line faults) *and* the ground truth a correct parser must report.
:class:`LineReaderPty` puts those bytes on a real pseudo-terminal.

Written from a prose description only, without looking at the parser it is
meant to test.  Standard library only.  See README.md for the definitions.

Ground truth, in short (README.md has the full rules):

* Every line the emulator sends is one of: a card line, a keep-alive/status
  line, a garbage burst closed by a line end, an over-long line, or a card line
  damaged by a fault.
* ``Emitted.cards`` lists the cards a correct parser MUST report, in order.
* ``Emitted.ambiguous`` lists indexes (into the intended sequence) of cards
  whose line was damaged in a way that leaves it open whether a correct parser
  reports the card.  Such a card is left out of ``cards``; a parser may report
  it (exactly that card, at that position) or not.  ``Emitted.accepts`` checks
  a parser's output against exactly this rule.
* Nothing else in the stream may produce a card: garbage never contains an
  ASCII letter or digit, over-long lines contain no rank or suit character, and
  keep-alive/status words are never a card code as a whole token.
"""

from __future__ import annotations

import errno
import os
import random
import re
import select
import termios
import threading
import time
import tty
from collections import deque
from dataclasses import dataclass, field

__all__ = [
    "RANKS",
    "SUITS",
    "Dialect",
    "DIALECTS",
    "Faults",
    "Emitted",
    "emit",
    "random_deck",
    "canonical_card",
    "LineReaderPty",
    "GARBAGE_POOL",
    "OVERLONG_POOL",
]

RANKS = "A23456789TJQK"
SUITS = "SHDC"

STX = 0x02
ETX = 0x03

# --------------------------------------------------------------------------
# Byte pools for faults
# --------------------------------------------------------------------------

# High bytes that cannot turn into an ASCII letter or digit under any usual
# decoding (latin-1, cp1252, utf-8 with errors=replace/ignore) followed by
# NFKC/NFKD normalisation or case folding.  Excluded on purpose, for example:
#   0x99 (cp1252 "TM" sign, NFKC -> "TM"), 0x8A/0x9A (cp1252 S/s with caron),
#   0xAA/0xBA (ordinal a/o), 0xB2/0xB3/0xB9 (superscript digits, str.isdigit()
#   is True), 0xBC-0xBE (fractions), 0xC0-0xFD (accented Latin letters, and
#   UTF-8 lead bytes that could build U+212A KELVIN SIGN, which re.IGNORECASE
#   matches against "k").
_HIGH_EXCLUDED = {0x83, 0x8A, 0x8C, 0x8E, 0x99, 0x9A, 0x9C, 0x9E, 0x9F,
                  0xAA, 0xB2, 0xB3, 0xB9, 0xBA, 0xBC, 0xBD, 0xBE}
HIGH_SAFE = bytes(b for b in range(0x80, 0xC0) if b not in _HIGH_EXCLUDED) + bytes([0xF7, 0xFE, 0xFF])

# Garbage: control bytes (0x00-0x1F, so NUL, STX, ETX, TAB, CR, LF are all
# possible), ASCII punctuation and space, DEL, and the safe high bytes.
# Never an ASCII letter or digit.
GARBAGE_POOL = bytes(
    b for b in range(0x00, 0x80)
    if not (0x30 <= b <= 0x39 or 0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A)
) + HIGH_SAFE

# Over-long line body: printable ASCII that contains no rank or suit character
# in either case (so no parser, rank-first or suit-first, can find a card in
# it), TAB, and the safe high bytes.  Never CR or LF.
_CARD_CHARS = set((RANKS + "10" + SUITS).upper() + (RANKS + SUITS).lower())
OVERLONG_POOL = bytes(
    b for b in range(0x20, 0x7F) if chr(b) not in _CARD_CHARS
) + b"\t" + HIGH_SAFE


# --------------------------------------------------------------------------
# Cards
# --------------------------------------------------------------------------

_CARD_RE = re.compile(r"^(10|[2-9AaTtJjQqKk])([SsHhDdCc])$")


def canonical_card(code: str) -> str:
    """Return the canonical form ("TS", "AH", ...) of a card code.

    Accepts either case and ten as "10", "T" or "t".  Raises ValueError for
    anything else (suit-first codes are *not* accepted here).
    """
    m = _CARD_RE.match(code.strip())
    if not m:
        raise ValueError(f"not a card code: {code!r}")
    rank, suit = m.group(1), m.group(2)
    rank = "T" if rank == "10" else rank.upper()
    return rank + suit.upper()


def random_deck(n: int, seed: int) -> list[str]:
    """``n`` canonical cards dealt from a shoe of freshly shuffled 52-card decks.

    Deterministic for a given (n, seed).  For n > 52 further decks are
    shuffled and appended, as from a multi-deck shoe.
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        deck = [r + s for s in SUITS for r in RANKS]
        rng.shuffle(deck)
        out.extend(deck)
    return out[:n]


# --------------------------------------------------------------------------
# Dialects
# --------------------------------------------------------------------------

_CASES = ("upper", "lower", "random")


@dataclass(frozen=True)
class Dialect:
    """How one family of field readers writes a line.

    A card line is built, left to right, as::

        lead [STX] [timestamp " "] prefix label [seq seq_sep] CODE
             [seq_sep seq] suffix [ETX [checksum]] trail eol

    A keep-alive/status line gets the same envelope (lead, STX, timestamp,
    prefix, ETX, checksum, trail, eol) around the word, but no label, no
    sequence field and no suffix.
    """

    name: str
    description: str = ""
    eol: bytes = b"\r\n"          # b"\r\n", b"\n" or b"\r"
    ten: str = "T"                # "T" (follows rank_case), "t" (always lower) or "10"
    rank_case: str = "upper"      # "upper" | "lower" | "random" (per character, per line)
    suit_case: str = "upper"
    suit_first: bool = False      # "SA", "H10" instead of "AS", "10H"
    lead: str = ""                # fixed leading whitespace
    trail: str = ""               # fixed trailing whitespace
    ws_jitter: bool = False       # plus 0..3 random spaces/tabs on each side, per line
    stx_etx: bool = False         # 0x02 before, 0x03 after
    checksum: bool = False        # one arbitrary byte 0x20..0x7E after ETX
    timestamp: bool = False       # "HH:MM:SS.mmm " after STX
    prefix: str = ""              # vendor prefix on every line ("RDR01 ", "#")
    label: str = ""               # card lines only ("CARD:", "CARD ", "card=", "C:")
    seq: str | None = None        # None | "prefix" | "suffix"
    seq_width: int = 4
    seq_sep: str = " "
    suffix: str = ""              # card lines only (" OK", ";")
    keepalives: tuple[str, ...] = ()  # words the reader sends unsolicited
    needs_pattern: bool = False
    pattern: str | None = None    # Python re with named groups rank, suit

    def __post_init__(self) -> None:
        if self.eol not in (b"\r\n", b"\n", b"\r"):
            raise ValueError(f"{self.name}: eol must be CRLF, LF or CR")
        if self.ten not in ("T", "t", "10"):
            raise ValueError(f"{self.name}: ten must be 'T', 't' or '10'")
        if self.rank_case not in _CASES or self.suit_case not in _CASES:
            raise ValueError(f"{self.name}: bad case knob")
        if self.seq not in (None, "prefix", "suffix"):
            raise ValueError(f"{self.name}: seq must be None, 'prefix' or 'suffix'")
        if self.checksum and not self.stx_etx:
            raise ValueError(f"{self.name}: checksum needs stx_etx")
        if self.needs_pattern and not self.pattern:
            raise ValueError(f"{self.name}: needs_pattern requires pattern")
        if self.pattern is not None:
            rx = re.compile(self.pattern)
            if not {"rank", "suit"} <= set(rx.groupindex):
                raise ValueError(f"{self.name}: pattern needs groups rank and suit")
        for w in self.keepalives:
            for tok in re.findall(r"[A-Za-z0-9]+", w):
                if _CARD_RE.match(tok) or _SUIT_FIRST_RE.match(tok):
                    raise ValueError(f"{self.name}: keep-alive {w!r} has a card token")
        for s in (self.lead, self.trail):
            if s.strip(" \t"):
                raise ValueError(f"{self.name}: lead/trail must be spaces/tabs")


_SUIT_FIRST_RE = re.compile(r"^[SsHhDdCc](10|[2-9AaTtJjQqKk])$")

SUIT_FIRST_PATTERN = r"^\s*(?P<suit>[SHDC])(?P<rank>10|[2-9AJQK])\s*$"


def _d(**kw) -> Dialect:
    return Dialect(**kw)


_DIALECT_LIST = [
    _d(name="plain_crlf", description="Bare code, CR LF; the reference case.", eol=b"\r\n", ten="T"),
    _d(name="plain_lf_ten10", description="Bare code, LF only, ten sent as '10'.", eol=b"\n", ten="10"),
    _d(
        name="cr_only_lower",
        description="Old reader: CR alone as line end, all lower case.",
        eol=b"\r",
        ten="T",
        rank_case="lower",
        suit_case="lower",
    ),
    _d(name="ten_lower_t", description="Ten as lower-case 't', everything else upper case.", eol=b"\r\n", ten="t"),
    _d(
        name="mixed_case", description="Rank upper, suit lower ('Qd', 'Td'), LF.", eol=b"\n", ten="T", suit_case="lower"
    ),
    _d(
        name="random_case",
        description="Each letter in random case per line; ten as '10'.",
        eol=b"\r\n",
        ten="10",
        rank_case="random",
        suit_case="random",
    ),
    _d(
        name="padded_ws",
        description="Fixed plus random spaces/tabs around the code.",
        eol=b"\r\n",
        lead=" ",
        trail="\t",
        ws_jitter=True,
    ),
    _d(name="stx_etx", description="Code between STX (0x02) and ETX (0x03).", eol=b"\r\n", stx_etx=True),
    _d(
        name="stx_etx_checksum",
        description="STX code ETX + one checksum byte (0x20-0x7E, may be a letter/digit); framed keep-alive HB.",
        eol=b"\r\n",
        ten="10",
        stx_etx=True,
        checksum=True,
        keepalives=("HB",),
    ),
    _d(name="label_colon", description="Label 'CARD:' before the code.", eol=b"\r\n", label="CARD:"),
    _d(
        name="label_space_ok",
        description="Label 'CARD ' and suffix ' OK'; the reader also sends a bare 'OK' keep-alive.",
        eol=b"\r\n",
        label="CARD ",
        suffix=" OK",
        keepalives=("OK",),
    ),
    _d(
        name="label_eq_semicolon",
        description="Lower case 'card=' label, ';' suffix, lower case code, LF.",
        eol=b"\n",
        label="card=",
        suffix=";",
        rank_case="lower",
        suit_case="lower",
    ),
    _d(
        name="label_c_colon",
        description="Label 'C:' (C is also a suit letter), ten as '10'.",
        eol=b"\r\n",
        ten="10",
        label="C:",
    ),
    _d(
        name="vendor_rdr01",
        description="Vendor prefix 'RDR01 ' on every line (digits before a '10'); PING.",
        eol=b"\r\n",
        ten="10",
        prefix="RDR01 ",
        keepalives=("PING",),
    ),
    _d(
        name="vendor_hash",
        description="Vendor prefix '#' on every line, LF; '#HB' keep-alive.",
        eol=b"\n",
        prefix="#",
        keepalives=("HB",),
    ),
    _d(
        name="seq_prefix",
        description="Reader's own 4-digit counter before the code: '0007 KH', ten '10'.",
        eol=b"\r\n",
        ten="10",
        seq="prefix",
        seq_sep=" ",
    ),
    _d(
        name="seq_suffix",
        description="Reader's own counter after the code: 'KH,0007'.",
        eol=b"\r\n",
        seq="suffix",
        seq_sep=",",
    ),
    _d(
        name="timestamp_ms",
        description="Time stamp 'HH:MM:SS.mmm ' before the code, ten '10'; PING.",
        eol=b"\r\n",
        ten="10",
        timestamp=True,
        keepalives=("PING",),
    ),
    _d(
        name="heartbeat",
        description="Bare code plus keep-alives HB / PING / READY ('READY' contains 'AD').",
        eol=b"\r\n",
        keepalives=("HB", "PING", "READY"),
    ),
    _d(
        name="status_label",
        description="'CARD:' label plus status lines ACK / SHOE EMPTY / ERR 03 / ERR 10 ('ACK' contains 'AC').",
        eol=b"\r\n",
        label="CARD:",
        keepalives=("ACK", "SHOE EMPTY", "ERR 03", "ERR 10"),
    ),
    _d(
        name="suit_first",
        description="Suit before rank: 'SA', 'H10'. Parse only with the given pattern.",
        eol=b"\r\n",
        ten="10",
        suit_first=True,
        keepalives=("PING",),
        needs_pattern=True,
        pattern=SUIT_FIRST_PATTERN,
    ),
    _d(
        name="kitchen_sink",
        description="Everything at once: ws, STX, time stamp, vendor, label, counter, suffix, ETX+checksum, "
        "status lines.",
        eol=b"\r\n",
        ten="10",
        rank_case="random",
        suit_case="random",
        lead=" ",
        ws_jitter=True,
        stx_etx=True,
        checksum=True,
        timestamp=True,
        prefix="RDR01 ",
        label="CARD:",
        seq="prefix",
        seq_sep=" ",
        suffix=" OK",
        keepalives=("HB", "READY", "ERR 03", "SHOE EMPTY"),
    ),
]

DIALECTS: dict[str, Dialect] = {d.name: d for d in _DIALECT_LIST}
assert len(DIALECTS) == len(_DIALECT_LIST), "duplicate dialect name"


# --------------------------------------------------------------------------
# Faults and result
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Faults:
    """Fault probabilities.

    ``lost``, ``duplicate``, ``truncated``: per intended card line, mutually
    exclusive (their sum must be <= 1).
    ``garbage``: per intended card line, one burst of 1-40 noise bytes; half of
    the bursts go inside that line (if it is sent once and whole), the rest
    just before it, closed by a line end of their own.
    ``overlong``, ``keepalive``: per gap (before each card line and after the
    last one), one over-long line / one keep-alive or status line (keep-alives
    only if the dialect has any).
    """

    lost: float = 0
    duplicate: float = 0
    garbage: float = 0
    truncated: float = 0
    overlong: float = 0
    keepalive: float = 0

    def __post_init__(self) -> None:
        for k in ("lost", "duplicate", "garbage", "truncated", "overlong", "keepalive"):
            v = getattr(self, k)
            if not 0 <= v <= 1:
                raise ValueError(f"Faults.{k} must be in [0, 1]")
        if self.lost + self.duplicate + self.truncated > 1 + 1e-12:
            raise ValueError("lost + duplicate + truncated must be <= 1")


@dataclass(frozen=True)
class Emitted:
    """Bytes sent by the emulated reader plus the ground truth.

    data       -- everything, in order (== b"".join(chunks))
    cards      -- cards a correct parser MUST report, in order (canonical)
    ambiguous  -- indexes into ``intended`` of cards a parser MAY report
    intended   -- the card sequence given to :func:`emit` (canonical)
    slots      -- stream order of every reportable card: (card, required);
                  required=False exactly for ambiguous cards
    chunks     -- one entry per physical line / burst (used for pacing)
    events     -- (intended index or -1, kind) for every line and fault, in
                  stream order; kinds: card, duplicate, lost, truncated
                  (partial code, dropped), truncated_ambiguous, truncated_ws
                  (only trailing whitespace lost: still a card),
                  garbage_mid, garbage_between, keepalive, overlong
    """

    data: bytes
    cards: list[str]
    ambiguous: list[int] = field(default_factory=list)
    intended: list[str] = field(default_factory=list)
    slots: list[tuple[str, bool]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)
    events: list[tuple[int, str]] = field(default_factory=list)

    def mismatch(self, reported: list[str]) -> str | None:
        """None if ``reported`` is a correct parser output, else a reason.

        Correct means: ``reported`` is ``slots`` in order, with every required
        card present and each ambiguous card either present or absent.
        Reported cards are canonicalised first ("10h" == "TH").
        """
        try:
            rep = [canonical_card(c) for c in reported]
        except ValueError as e:
            return str(e)
        frontier = {0}
        for card, required in self.slots:
            nxt = set()
            for j in frontier:
                if not required:
                    nxt.add(j)
                if j < len(rep) and rep[j] == card:
                    nxt.add(j + 1)
            if not nxt:
                j = max(frontier)
                got = rep[j] if j < len(rep) else "<end of output>"
                return f"reported[{j}] = {got}, expected {card}"
            frontier = nxt
        if len(rep) in frontier:
            return None
        j = max(frontier)
        return f"reported[{j}] = {rep[j]} is extra (expected end of output)"

    def accepts(self, reported: list[str]) -> bool:
        return self.mismatch(reported) is None


# --------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------


def _case(s: str, how: str, rng: random.Random) -> str:
    if how == "upper":
        return s.upper()
    if how == "lower":
        return s.lower()
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in s)


def _code(card: str, d: Dialect, rng: random.Random) -> str:
    rank, suit = card[0], card[1]
    if rank == "T":
        if d.ten == "10":
            r = "10"
        elif d.ten == "t":
            r = "t"
        else:
            r = _case("T", d.rank_case, rng)
    else:
        r = _case(rank, d.rank_case, rng)
    s = _case(suit, d.suit_case, rng)
    return s + r if d.suit_first else r + s


class _Line:
    """A rendered line body (no eol) with the offsets the fault rules need."""

    __slots__ = ("body", "code_start", "code_end", "trail_start")

    def __init__(self, body: bytes, code_start: int, code_end: int, trail_start: int):
        self.body, self.code_start, self.code_end, self.trail_start = body, code_start, code_end, trail_start


class _Renderer:
    def __init__(self, d: Dialect, rng: random.Random):
        self.d = d
        self.rng = rng
        self.clock_ms = rng.randrange(86_400_000)

    def _ws(self, fixed: str) -> str:
        if not self.d.ws_jitter:
            return fixed
        return fixed + "".join(self.rng.choice(" \t") for _ in range(self.rng.randint(0, 3)))

    def _timestamp(self) -> str:
        self.clock_ms = (self.clock_ms + self.rng.randint(80, 2500)) % 86_400_000
        t = self.clock_ms
        return f"{t // 3_600_000:02d}:{t // 60_000 % 60:02d}:{t // 1000 % 60:02d}.{t % 1000:03d} "

    def line(self, inner: str, seq: int | None) -> _Line:
        """Render a card line (seq is not None) or a keep-alive line (seq None)."""
        d = self.d
        is_card = seq is not None
        head = self._ws(d.lead)
        if d.stx_etx:
            head += "\x02"
        if d.timestamp:
            head += self._timestamp()
        head += d.prefix
        tail = ""
        if is_card:
            head += d.label
            seq_s = f"{seq % 10**d.seq_width:0{d.seq_width}d}"
            if d.seq == "prefix":
                head += seq_s + d.seq_sep
            elif d.seq == "suffix":
                tail += d.seq_sep + seq_s
            tail += d.suffix
        if d.stx_etx:
            tail += "\x03"
            if d.checksum:
                tail += chr(self.rng.randint(0x20, 0x7E))
        trail = self._ws(d.trail)
        text = head + inner + tail + trail
        body = text.encode("ascii")
        cs = len(head)
        ce = cs + len(inner)
        return _Line(body, cs, ce, ce + len(tail))

    def garbage(self) -> bytes:
        rng = self.rng
        b = bytearray(rng.choice(GARBAGE_POOL) for _ in range(rng.randint(1, 40)))
        for special in (0x00, 0xFF, 0x0D, 0x0A):
            if rng.random() < 0.25:
                b[rng.randrange(len(b))] = special
        return bytes(b)

    def overlong(self) -> bytes:
        rng = self.rng
        return bytes(rng.choice(OVERLONG_POOL) for _ in range(rng.randint(500, 1200)))


_ALNUM_RUN = re.compile(rb"[A-Za-z0-9]+")
_STRIP_CTRL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\xff]")
_LINE_END = re.compile(rb"\r\n|\r|\n")
_CARD_RE_B = re.compile(rb"(10|[2-9AaTtJjQqKk])([SsHhDdCc])")
_SUIT_FIRST_RE_B = re.compile(rb"([SsHhDdCc])(10|[2-9AaTtJjQqKk])")


def _foreign_cards(chunk: bytes, card: str | None, suit_first: bool) -> set[str]:
    """Cards other than ``card`` (or ``card`` twice) a generous parser could read in ``chunk``.

    Generous = any line (split at CR, LF or CR LF) with any alphanumeric run
    that is a whole card code, both on the raw bytes and after deleting all
    control and non-ASCII bytes except TAB/CR/LF.
    """
    found: set[str] = set()
    rx = _SUIT_FIRST_RE_B if suit_first else _CARD_RE_B
    for variant in (chunk, _STRIP_CTRL.sub(b"", chunk)):
        own = 0
        for line in _LINE_END.split(variant):
            for run in _ALNUM_RUN.findall(line):
                m = rx.fullmatch(run)
                if m:
                    code = (m[2] + m[1]) if suit_first else m[0]
                    c = canonical_card(code.decode("ascii"))
                    if c != card:
                        found.add(c)
                    else:
                        own += 1
        if own > 1:  # the line's own card readable twice: as bad as a foreign one
            found.add(f"{card} twice")
    return found


def emit(cards: list[str], dialect: Dialect, faults: Faults = Faults(), seed: int = 0) -> Emitted:
    """Render ``cards`` as ``dialect`` would send them, with ``faults``.

    Deterministic for a given (cards, dialect, faults, seed).
    """
    d = dialect
    intended = [canonical_card(c) for c in cards]
    rng = random.Random(seed)
    r = _Renderer(d, rng)
    eol = d.eol

    chunks: list[bytes] = []
    slots: list[tuple[str, bool]] = []
    ambiguous: list[int] = []
    events: list[tuple[int, str]] = []

    def gap() -> None:
        items = []
        if d.keepalives and rng.random() < faults.keepalive:
            items.append("keepalive")
        if rng.random() < faults.overlong:
            items.append("overlong")
        rng.shuffle(items)
        for kind in items:
            if kind == "keepalive":
                word = rng.choice(d.keepalives)
                chunks.append(r.line(word, None).body + eol)
            else:
                chunks.append(r.overlong() + eol)
            events.append((-1, kind))

    for i, card in enumerate(intended):
        gap()
        u = rng.random()
        if u < faults.lost:
            kind = "lost"
        elif u < faults.lost + faults.duplicate:
            kind = "duplicate"
        elif u < faults.lost + faults.duplicate + faults.truncated:
            kind = "truncated"
        else:
            kind = "card"
        has_garbage = rng.random() < faults.garbage
        mid = has_garbage and rng.random() < 0.5 and kind == "card"
        if has_garbage and not mid:
            chunks.append(r.garbage() + eol)
            events.append((i, "garbage_between"))
        # The line is rendered even when lost, so that the reader's own
        # counter and clock advance as they would on a real reader.
        ln = r.line(_code(card, d, rng), seq=i + 1)
        if kind == "lost":
            events.append((i, "lost"))
        elif kind == "duplicate":
            chunks.append(ln.body + eol)
            chunks.append(ln.body + eol)
            slots += [(card, True), (card, True)]
            events += [(i, "card"), (i, "duplicate")]
        elif kind == "truncated" and len(ln.body) >= 2:
            k = rng.randint(1, len(ln.body) - 1)
            chunks.append(ln.body[:k] + eol)
            if k >= ln.trail_start:  # only trailing whitespace lost
                slots.append((card, True))
                events.append((i, "truncated_ws"))
            elif k >= ln.code_end:  # code whole, framing/suffix cut
                slots.append((card, False))
                ambiguous.append(i)
                events.append((i, "truncated_ambiguous"))
            else:  # code incomplete: not a card
                events.append((i, "truncated"))
        elif mid:
            # Garbage may split the line (stray CR/LF); re-draw the (rare)
            # bursts whose fragments would read as a *different* card under a
            # generous parser, e.g. " OK\x03h" split before "K\x03h" with
            # control bytes stripped gives "Kh".  If no draw is clean the
            # burst goes between lines instead.
            for _ in range(20):
                p = rng.randint(0, len(ln.body))
                damaged = ln.body[:p] + r.garbage() + ln.body[p:]
                if not _foreign_cards(damaged, card, d.suit_first):
                    chunks.append(damaged + eol)
                    slots.append((card, False))
                    ambiguous.append(i)
                    events.append((i, "garbage_mid"))
                    break
            else:
                chunks.append(r.garbage() + eol)
                events.append((i, "garbage_between"))
                chunks.append(ln.body + eol)
                slots.append((card, True))
                events.append((i, "card"))
        else:
            chunks.append(ln.body + eol)
            slots.append((card, True))
            events.append((i, "card"))
    gap()

    return Emitted(
        data=b"".join(chunks),
        cards=[c for c, req in slots if req],
        ambiguous=ambiguous,
        intended=intended,
        slots=slots,
        chunks=chunks,
        events=events,
    )


# --------------------------------------------------------------------------
# Pseudo-terminal
# --------------------------------------------------------------------------


class LineReaderPty:
    """A reader on a real pseudo-terminal.

    The slave side (``.path``) is what the parser opens, like /dev/ttyUSB0.
    Both ends are put in raw mode.  A daemon thread writes queued chunks to the
    master side; ``line_delay`` seconds are waited after each chunk (each line
    / burst of an :class:`Emitted`), and if ``baud`` is given the bytes are
    paced at 10 bits per byte.

    The emulator keeps its own descriptor of the slave open, so the pty never
    hangs up and termios settings persist between openers.  Writes never block
    the caller: if nobody reads and the kernel buffer is full, the writer waits
    at most ``write_timeout`` seconds and then drops the bytes (counted in
    ``bytes_dropped``), like a serial line nobody listens to.  Data the parser
    writes to the port is collected in ``received``.
    """

    def __init__(
        self,
        dialect: Dialect | None = None,
        faults: Faults = Faults(),
        seed: int = 0,
        line_delay: float = 0.0,
        baud: int | None = None,
        write_timeout: float = 0.5,
    ):
        if baud is not None and baud <= 0:
            raise ValueError("baud must be positive")
        self.dialect = dialect or DIALECTS["plain_crlf"]
        self.faults = faults
        self.seed = seed
        self.line_delay = line_delay
        self.baud = baud
        self.write_timeout = write_timeout
        self.bytes_written = 0
        self.bytes_dropped = 0
        self.received = bytearray()
        self._sends = 0
        self._master, self._slave = os.openpty()
        try:
            tty.setraw(self._master)
            tty.setraw(self._slave)
            os.set_blocking(self._master, False)
            self.path: str = os.ttyname(self._slave)
        except Exception:
            os.close(self._master)
            os.close(self._slave)
            raise
        self._cond = threading.Condition()
        self._queue: deque[tuple[bytes, float]] = deque()
        self._busy = False
        self._closed = False
        self._stalled = False
        self._thread = threading.Thread(target=self._run, name=f"LineReaderPty({self.path})", daemon=True)
        self._thread.start()

    # -- public API ---------------------------------------------------------

    def send(
        self, cards: list[str], dialect: Dialect | None = None, faults: Faults | None = None, seed: int | None = None
    ) -> Emitted:
        """Emit ``cards`` (with this pty's dialect/faults unless overridden) and queue the bytes.

        Returns the :class:`Emitted` ground truth immediately; the bytes are
        written in the background.  Without an explicit seed, successive
        sends use seed, seed+1, ...
        """
        if seed is None:
            seed = self.seed + self._sends
        self._sends += 1
        em = emit(cards, dialect or self.dialect, self.faults if faults is None else faults, seed)
        self._enqueue([(c, self.line_delay) for c in em.chunks])
        return em

    def send_bytes(self, data: bytes, delay_after: float = 0.0) -> None:
        """Queue raw bytes (paced by ``baud`` if set)."""
        self._enqueue([(bytes(data), delay_after)])

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until everything queued has been written (or dropped)."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._queue or self._busy:
                rem = None if end is None else end - time.monotonic()
                if rem is not None and rem <= 0:
                    return False
                self._cond.wait(rem)
        return True

    def discard_pending(self) -> None:
        """Throw away bytes written but not yet read by anybody (stale input)."""
        try:
            termios.tcflush(self._slave, termios.TCIFLUSH)
        except OSError:
            pass

    def close(self) -> None:
        """Stop the writer (pending bytes are discarded) and close the pty. Idempotent."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._queue.clear()
            self._cond.notify_all()
        self._thread.join(timeout=5)
        for fd in (self._master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> LineReaderPty:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # best effort
        try:
            self.close()
        except Exception:
            pass

    # -- writer thread ------------------------------------------------------

    def _enqueue(self, items: list[tuple[bytes, float]]) -> None:
        with self._cond:
            if self._closed:
                raise RuntimeError("LineReaderPty is closed")
            self._queue.extend(items)
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._busy = False
                    self._cond.notify_all()
                    self._cond.wait(0.05)
                    self._drain_input()
                if self._closed:
                    self._busy = False
                    self._cond.notify_all()
                    return
                data, delay = self._queue.popleft()
                self._busy = True
            try:
                self._write_paced(data)
                if delay > 0:
                    self._sleep(delay)
            except Exception:  # never let the thread die
                pass

    def _sleep(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self._closed:
            rem = end - time.monotonic()
            if rem <= 0:
                return
            time.sleep(min(rem, 0.05))

    def _write_paced(self, data: bytes) -> None:
        if not self.baud:
            self._write(data)
            return
        per_byte = 10.0 / self.baud
        step = max(1, int(self.baud / 10 / 200))  # ~5 ms worth of bytes per write
        start = time.monotonic()
        for off in range(0, len(data), step):
            if self._closed:
                return
            due = start + off * per_byte
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            self._write(data[off : off + step])
        # the last piece also takes time on the wire
        due = start + len(data) * per_byte
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)

    def _write(self, data: bytes) -> None:
        off = 0
        deadline = None
        while off < len(data) and not self._closed:
            try:
                n = os.write(self._master, data[off:])
                off += n
                self.bytes_written += n
                self._stalled = False
                deadline = None
                continue
            except BlockingIOError:
                pass
            except OSError as e:
                if e.errno in (errno.EINTR,):
                    continue
                break  # EIO etc.: nobody there, drop
            self._drain_input()
            if self._stalled:
                wait = 0.0
            else:
                if deadline is None:
                    deadline = time.monotonic() + self.write_timeout
                wait = deadline - time.monotonic()
            if wait <= 0:
                self._stalled = True
                break
            try:
                select.select([], [self._master], [], min(wait, 0.05))
            except (OSError, ValueError):
                break
        self.bytes_dropped += len(data) - off

    def _drain_input(self) -> None:
        """Read (and keep) whatever the parser wrote to the port."""
        try:
            while True:
                chunk = os.read(self._master, 4096)
                if not chunk:
                    return
                self.received += chunk
        except (BlockingIOError, OSError):
            return
