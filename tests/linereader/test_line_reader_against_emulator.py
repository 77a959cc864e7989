"""Our line-reader parser and driver against byte streams we did not generate.

``emulator.py`` was written independently (it never saw
``firmware_interfaces/shoe/lines.py``): 22 dialects of real-world line readers
and their faults, each with an exact ground truth of the cards a correct
parser must report.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_interfaces.shoe import CardDrawn, LinkUp, open_url
from firmware_interfaces.shoe.events import CARD_CODES, ReaderNotice, ShoeEvent
from firmware_interfaces.shoe.lines import LineCardParser, LineReaderDriver
from firmware_interfaces.shoe.testing import EventRecorder
from tests.linereader.emulator import DIALECTS, Dialect, Faults, LineReaderPty, emit, random_deck

DEFAULT_DIALECTS = [d for d in DIALECTS.values() if not d.needs_pattern]
PATTERN_DIALECTS = [d for d in DIALECTS.values() if d.needs_pattern]
HEAVY = Faults(lost=0.05, duplicate=0.05, garbage=0.1, truncated=0.05, overlong=0.03, keepalive=0.2)


def parse(data: bytes, dialect: Dialect, *, chunk: int = 7) -> list[str]:
    parser = LineCardParser(dialect.pattern if dialect.needs_pattern else None)
    codes: list[str] = []
    for i in range(0, len(data), chunk):  # any chunking: a serial port delivers bytes as they come
        codes += [line.code for line in parser.feed(data[i:i + chunk]) if line.code is not None]
    return codes


@pytest.mark.parametrize("dialect", DEFAULT_DIALECTS + PATTERN_DIALECTS, ids=lambda d: d.name)
def test_every_card_of_every_dialect_reads_exactly(dialect: Dialect) -> None:
    emitted = emit(random_deck(104, seed=3), dialect, seed=3)
    assert parse(emitted.data, dialect) == emitted.cards


@pytest.mark.parametrize("dialect", DEFAULT_DIALECTS + PATTERN_DIALECTS, ids=lambda d: d.name)
def test_faults_never_give_a_wrong_or_phantom_card(dialect: Dialect) -> None:
    for seed in range(12):
        emitted = emit(random_deck(80, seed=seed), dialect, HEAVY, seed=seed)
        reported = parse(emitted.data, dialect, chunk=1 + seed % 9)
        assert emitted.mismatch(reported) is None, (seed, emitted.mismatch(reported))


def test_suit_first_readers_read_nothing_without_their_pattern() -> None:
    for dialect in PATTERN_DIALECTS:
        emitted = emit(random_deck(52, seed=1), dialect, seed=1)
        reported = [c for c in (LineCardParser().feed(emitted.data)) if c.code is not None]
        assert reported == [], f"{dialect.name}: guessed {reported[:3]} without a pattern"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600), st.integers(1, 64))
def test_any_bytes_are_read_without_raising_and_give_only_real_card_codes(data: bytes, chunk: int) -> None:
    parser = LineCardParser()
    for i in range(0, len(data), chunk):
        for line in parser.feed(data[i:i + chunk]):
            assert line.code is None or line.code in CARD_CODES
    c = parser.counters
    assert c.lines == c.cards + c.not_cards + c.ambiguous + c.garbage_lines


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["plain_crlf", "cr_only_lower", "stx_etx_checksum", "kitchen_sink", "heartbeat"])
def test_driver_over_a_pty_delivers_the_readers_cards_in_order(name: str) -> None:
    dialect = DIALECTS[name]
    events = EventRecorder()
    with LineReaderPty(dialect=dialect, seed=5, line_delay=0.002) as reader:
        driver = LineReaderDriver(open_url(reader.path), listener=events, burst_window=0)
        driver.start()
        try:
            driver.wait_up(5)
            emitted = reader.send(random_deck(60, seed=5), faults=Faults(garbage=0.1, keepalive=0.3))
            assert events.wait_for(lambda ev: len(events.cards) >= len(emitted.cards), 10)
            time.sleep(0.1)
            assert emitted.mismatch(events.cards) is None
            assert isinstance(events.events[0], LinkUp)
            assert [e.count for e in events.events if isinstance(e, CardDrawn)] == list(
                range(1, len(events.cards) + 1))
        finally:
            driver.close()


@pytest.mark.timeout(60)
def test_driver_takes_a_line_read_twice_once_and_says_so() -> None:
    events = EventRecorder()
    with LineReaderPty(dialect=DIALECTS["plain_crlf"], seed=2) as reader:
        driver = LineReaderDriver(open_url(reader.path), listener=events, repeat_window=0.5)
        driver.start()
        try:
            driver.wait_up(5)
            reader.send_bytes(b"KH\r\nKH\r\n")  # one card, read twice
            time.sleep(0.6)
            reader.send_bytes(b"KH\r\n")  # the same card again, later: a genuine second KH
            assert events.wait_for(lambda ev: len(events.cards) >= 2, 10)
            time.sleep(0.1)
            assert events.cards == ["KH", "KH"]
            notices = [e for e in events.events if isinstance(e, ReaderNotice)]
            assert [n.kind for n in notices] == ["repeat"]
            assert driver.stats.repeats == 1
        finally:
            driver.close()


def test_unreadable_line_is_a_notice_not_a_guess() -> None:
    events: list[ShoeEvent] = []
    driver = LineReaderDriver(lambda: None, listener=events.append)
    parser_events = driver.events_from(b"KH 7C\r\n", 0.0)
    assert parser_events == [ReaderNotice("unreadable", "reader line 'KH 7C': 2 card codes in one line")]
