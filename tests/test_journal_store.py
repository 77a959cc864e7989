"""Journal: appending, transactions, link state, append-only, identity, locking, readers."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import pytest
from journal_helpers import BOOT_ID, TickingClock, draft, round_drafts, write_rounds

from table_controller.event_types import as_dict, numbered
from table_controller.journal import (
    GENESIS,
    Journal,
    JournalError,
    JournalLocked,
    JournalMismatch,
    JournalReader,
    NotAJournal,
    RoundAlreadySettled,
    RoundAlreadyStarted,
    verify_journal,
)
from table_controller.rules import load_game


def open_journal(path: Path, **kw: str) -> Journal:
    args = {"table": "T01", "game": "baccarat", "variant": "baccarat", **kw}
    return Journal(path, **args)


def state(clock: TickingClock, value: str = "idle", round: str | None = None) -> dict:
    return draft("table.state", round, clock=clock, state=value, reason=None)


def test_append_assigns_consecutive_seqs_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "t01.sqlite"
    clock = TickingClock()
    with open_journal(path) as journal:
        assert journal.last_seq == 0
        first = journal.append([state(clock), state(clock, "paused")])
        assert [e.seq for e in first] == [1, 2]
    with open_journal(path) as journal:
        assert journal.last_seq == 2
        more = journal.append([state(clock), state(clock), state(clock, "closed")])
        assert [e.seq for e in more] == [3, 4, 5]
        assert [e.seq for e in journal.events()] == [1, 2, 3, 4, 5]
        assert journal.last_event() == more[-1]


def test_seq_is_inserted_after_table_and_the_text_is_exactly_to_json(tmp_path: Path) -> None:
    clock = TickingClock()
    with open_journal(tmp_path / "j.sqlite") as journal:
        [event] = journal.append([state(clock, "betting", "R1")])
        assert list(as_dict(event)) == ["v", "table", "seq", "ts", "type", "game", "round", "state", "reason"]
        [record] = journal.records()
    assert record.body == (
        '{"v":1,"table":"T01","seq":1,"ts":"2026-11-29T18:40:00.000Z","type":"table.state",'
        '"game":"baccarat","round":"R1","state":"betting","reason":null}'
    )
    assert record.hash == hashlib.sha256((GENESIS + record.body).encode()).hexdigest()


def test_each_hash_chains_to_the_previous_one(tmp_path: Path) -> None:
    clock = TickingClock()
    with open_journal(tmp_path / "j.sqlite") as journal:
        journal.append([state(clock), state(clock, "paused")])
        one, two = journal.records()
        assert two.hash == hashlib.sha256((one.hash + two.body).encode()).hexdigest()
        assert journal.last_hash == two.hash


def test_failure_in_the_middle_of_a_transaction_writes_nothing(tmp_path: Path) -> None:
    clock = TickingClock()
    path = tmp_path / "j.sqlite"
    with open_journal(path) as journal:
        journal.append([state(clock)], link=(BOOT_ID, 4))
        unencodable = draft("alert", None, clock=clock, kind="no-read", severity="warning",
                            detail=object())
        with pytest.raises(JournalError, match=r"draft #1: Encoding objects of type object is unsupported"):
            journal.append([state(clock, "paused"), unencodable, state(clock)],
                           link=(BOOT_ID, 9))
        assert journal.last_seq == 1
        assert journal.link_state == (BOOT_ID, 4)
        [after] = journal.append([state(clock, "closed")])
        assert after.seq == 2
    assert verify_journal(path).problems == []


def test_a_bad_link_state_rolls_back_the_events_of_its_transaction(tmp_path: Path) -> None:
    clock = TickingClock()
    with open_journal(tmp_path / "j.sqlite") as journal:
        with pytest.raises(JournalError, match=r"link must be \(boot_id: str, shoe_seq: int\)"):
            journal.append([state(clock), state(clock)], link=(BOOT_ID, "7"))  # type: ignore[arg-type]
        assert journal.last_seq == 0
        assert journal.link_state is None


def test_link_state_is_stored_with_the_events_and_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    clock = TickingClock()
    with open_journal(path) as journal:
        journal.append([state(clock)], link=("boot-a", 41))
        journal.append([state(clock)])
        assert journal.link_state == ("boot-a", 41)
        journal.append([], link=("boot-b", 1))
        assert journal.link_state == ("boot-b", 1)
        assert journal.last_seq == 2
    with open_journal(path) as journal:
        assert journal.link_state == ("boot-b", 1)


def test_a_draft_with_seq_is_refused(tmp_path: Path) -> None:
    with open_journal(tmp_path / "j.sqlite") as journal:
        with pytest.raises(JournalError, match="draft #0 already has seq 5: the journal assigns seq"):
            journal.append([numbered(state(TickingClock()), 5)])


def test_an_invalid_draft_is_refused_with_the_events_md_reason(tmp_path: Path) -> None:
    bad = draft("card", "R1", clock=TickingClock(), position="player", index=0, code="AS", source="rfid")
    with open_journal(tmp_path / "j.sqlite") as journal:
        with pytest.raises(JournalError, match=r"draft #0: card event: Invalid enum value 'rfid' - at `\$.source`"):
            journal.append([bad])
        with pytest.raises(JournalError, match=r"draft #0 is a dict, not an event"):
            journal.append([as_dict(draft("heartbeat", None, clock=TickingClock(), state="idle"))])  # type: ignore[list-item]
        assert journal.last_seq == 0


def test_a_draft_of_another_table_is_refused(tmp_path: Path) -> None:
    other = draft("table.state", None, clock=TickingClock(), table="T09", state="idle", reason=None)
    with open_journal(tmp_path / "j.sqlite") as journal:
        with pytest.raises(JournalMismatch, match="table 'T09' does not match the journal's table 'T01'"):
            journal.append([other])


def test_events_filter_by_round_type_and_seq(tmp_path: Path) -> None:
    with open_journal(tmp_path / "j.sqlite") as journal:
        committed = write_rounds(journal, rounds=2)
        r2 = [e for e in committed if e.round == "R2"]
        assert list(journal.events(round_id="R2")) == r2
        results = list(journal.events(types={"round.result"}))
        assert [e.round for e in results] == ["R1", "R2"]
        assert list(journal.events(committed[-3].seq)) == committed[-2:]
        assert list(journal.events(types=[])) == []


def test_a_second_settlement_of_a_round_is_refused(tmp_path: Path) -> None:
    clock = TickingClock()
    with open_journal(tmp_path / "j.sqlite") as journal:
        committed = write_rounds(journal, rounds=1)
        result_seq = next(e.seq for e in committed if e.type == "round.result")
        void = draft("round.void", "R1", clock=clock, reason="operator", refund=True)
        with pytest.raises(
            RoundAlreadySettled,
            match=f"round 'R1' is already settled \\(round.result at seq {result_seq}\\); "
            "refusing a second round.void",
        ):
            journal.append([void])
        assert journal.last_seq == len(committed)


def test_two_settlements_in_one_batch_are_refused(tmp_path: Path) -> None:
    clock = TickingClock()
    void = draft("round.void", "R7", clock=clock, reason="operator", refund=True)
    with open_journal(tmp_path / "j.sqlite") as journal:
        with pytest.raises(RoundAlreadySettled, match=r"already settled \(round.void at seq 1\)"):
            journal.append([void, void])
        assert journal.last_seq == 0


def test_a_reused_round_id_is_refused(tmp_path: Path) -> None:
    clock = TickingClock()
    start = draft("round.start", "R1", clock=clock, variant="baccarat", betting_seconds=15)
    with open_journal(tmp_path / "j.sqlite") as journal:
        journal.append([start])
        with pytest.raises(RoundAlreadyStarted, match=r"round 'R1' was already started \(seq 1\)"):
            journal.append([start])


def test_round_in_progress_returns_its_events_until_it_is_settled(tmp_path: Path) -> None:
    clock = TickingClock()
    game = load_game("baccarat")
    drafts, _ = round_drafts(game, list(range(20)), "R5", clock=clock)
    with open_journal(tmp_path / "j.sqlite") as journal:
        assert journal.round_in_progress() is None
        opened = journal.append(drafts[:6])
        assert journal.round_in_progress() == opened
        assert journal.settlement("R5") is None
        rest = journal.append(drafts[6:])
        assert journal.round_in_progress() is None
        result = next(e for e in rest if e.type == "round.result")
        assert journal.settlement("R5") == result
        assert journal.recent_settlements() == [result]


def test_update_and_delete_are_refused_by_the_file_itself(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with open_journal(path) as journal:
        journal.append([state(TickingClock())])
    raw = sqlite3.connect(path)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="journal events are append-only: UPDATE refused"):
            raw.execute("UPDATE events SET body = '{}' WHERE seq = 1")
        with pytest.raises(sqlite3.IntegrityError, match="journal events are append-only: DELETE refused"):
            raw.execute("DELETE FROM events")
    finally:
        raw.close()


def test_opening_the_journal_of_another_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t01.sqlite"
    open_journal(path).close()
    with pytest.raises(JournalMismatch) as caught:
        open_journal(path, table="T02")
    assert str(caught.value) == (
        f"journal {path}: meta key 'table' is 'T01', not 'T02': this is the journal of 'T01' "
        "(baccarat), refusing to write events of 'T02' (baccarat) into it"
    )


def test_opening_the_journal_of_another_game_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t01.sqlite"
    open_journal(path).close()
    with pytest.raises(JournalMismatch, match="meta key 'game' is 'baccarat', not 'three-face'"):
        open_journal(path, game="three-face")


def test_a_garbage_file_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_bytes(b"shopping list: eggs, milk\n" * 200)
    with pytest.raises(NotAJournal) as caught:
        open_journal(path)
    assert str(caught.value) == (
        f"journal {path}: not a table-controller journal (file is not a database)"
    )
    with pytest.raises(NotAJournal, match="not a table-controller journal"):
        JournalReader(path)
    assert path.read_bytes() == b"shopping list: eggs, milk\n" * 200


def test_another_sqlite_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE players (name TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(NotAJournal, match=r"an SQLite database with tables \['players'\]"):
        open_journal(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    conn.close()


def test_a_second_writer_is_refused_while_the_first_is_open(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    first = open_journal(path)
    try:
        with pytest.raises(JournalLocked, match=r"already open for writing by another process \(pid \d+"):
            open_journal(path)
    finally:
        first.close()
    open_journal(path).close()  # released by close()


def test_a_reader_sees_the_commits_of_a_live_writer(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    clock = TickingClock()
    with open_journal(path) as writer:
        writer.append([state(clock)])
        with Journal.open_readonly(path) as reader:
            assert (reader.table, reader.game, reader.variant) == ("T01", "baccarat", "baccarat")
            assert reader.last_seq == 1
            writer.append([state(clock, "paused")], link=(BOOT_ID, 3))
            assert reader.last_seq == 2
            assert reader.link_state == (BOOT_ID, 3)
            assert [e.state for e in reader.events()] == ["idle", "paused"]


def test_appends_from_several_threads_get_unique_consecutive_seqs(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with open_journal(path) as journal:
        clock_lock = threading.Lock()
        clock = TickingClock()
        seqs: list[int] = []

        def work() -> None:
            for _ in range(25):
                with clock_lock:
                    drafts = [state(clock), state(clock, "paused")]
                seqs.extend(e.seq for e in journal.append(drafts))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert sorted(seqs) == list(range(1, 201))
        assert journal.last_seq == 200
    report = verify_journal(path)
    assert (report.ok, report.events) == (True, 200)


def test_use_after_close_is_a_clear_error(tmp_path: Path) -> None:
    journal = open_journal(tmp_path / "j.sqlite")
    journal.close()
    journal.close()
    with pytest.raises(JournalError, match="append\\(\\) after close\\(\\)"):
        journal.append([state(TickingClock())])
