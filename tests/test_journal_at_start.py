"""A journal is checked before a table extends it; a damaged one is refused, never restarted (issue 13)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from journal_helpers import write_rounds

from table_controller.journal import Journal
from table_controller.journal.errors import JournalBroken, JournalEmpty, JournalError


def new_journal(path: Path, rounds: int = 3) -> None:
    with Journal(path, table="T01", game="baccarat", variant="baccarat") as journal:
        write_rounds(journal, rounds=rounds)


def open_journal(path: Path) -> Journal:
    return Journal(path, table="T01", game="baccarat", variant="baccarat")


def tamper_keeping_triggers(path: Path, sql: str, params: tuple = ()) -> None:
    """Change rows behind the journal's back, then put its append-only triggers back."""
    conn = sqlite3.connect(path)
    try:
        triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type='trigger'").fetchall()
        for name, _ in triggers:
            conn.execute(f"DROP TRIGGER {name}")
        for statement in sql.split(";"):
            if statement.strip():
                conn.execute(statement, params)
        for _, create in triggers:
            conn.execute(create)
        conn.commit()
    finally:
        conn.close()


def test_a_zero_byte_journal_is_refused_not_restarted(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    new_journal(path)
    path.write_bytes(b"")
    with pytest.raises(JournalEmpty, match=r"exists but holds no journal \(0 bytes\).*--new-journal"):
        open_journal(path)
    with Journal(path, table="T01", game="baccarat", variant="baccarat", new=True) as journal:
        assert journal.last_seq == 0  # only when asked for


def test_a_missing_journal_is_created(tmp_path: Path) -> None:
    with open_journal(tmp_path / "T01.sqlite") as journal:
        assert journal.check_at_start() == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "T01.sqlite", "T01.sqlite.lock", "T01.sqlite.verified"]  # nothing of the creation is left


def test_what_a_killed_creation_left_is_removed_and_the_journal_kept(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    creating = tmp_path / "T01.sqlite.creating"
    creating.write_bytes(b"half a journal")  # killed while laying it out
    (tmp_path / "T01.sqlite.creating-journal").write_bytes(b"x")
    with open_journal(path) as journal:
        assert journal.last_seq == 0
        write_rounds(journal, rounds=1)
        last = journal.last_seq
    assert not creating.exists()
    creating.hardlink_to(path)  # killed after naming it, before removing its first name
    with open_journal(path) as journal:
        assert journal.last_seq == last  # the journal is whole; only its second name is gone
    assert not creating.exists()


def test_a_wal_file_without_its_journal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    (tmp_path / "T01.sqlite-wal").write_bytes(b"the rest of a removed journal")
    with pytest.raises(JournalError, match=r"T01.sqlite-wal exists but the journal itself does not"):
        open_journal(path)
    assert not path.exists()


def test_an_edited_payout_is_found_at_start(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    new_journal(path)
    tamper_keeping_triggers(
        path, "UPDATE events SET body = replace(body, '\"1\"', '\"100\"') WHERE type = 'round.result'")
    with open_journal(path) as journal, pytest.raises(JournalBroken, match=r"hash chain broken at seq \d+"):
        journal.check_at_start()


def test_a_deleted_row_is_found_at_start(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    new_journal(path)
    tamper_keeping_triggers(path, "DELETE FROM events WHERE seq = 5")
    with open_journal(path) as journal, pytest.raises(JournalBroken, match="seq 5 is missing"):
        journal.check_at_start()


def test_two_swapped_rows_are_found_at_start(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    new_journal(path)
    tamper_keeping_triggers(
        path,
        "UPDATE events SET seq = -1 WHERE seq = 6; UPDATE events SET seq = 6 WHERE seq = 7; "
        "UPDATE events SET seq = 7 WHERE seq = -1",
    )
    with open_journal(path) as journal, pytest.raises(JournalBroken, match="hash chain broken at seq 6"):
        journal.check_at_start()


def test_removed_triggers_are_found_at_start(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    new_journal(path)
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER events_are_append_only_delete")
    conn.commit()
    conn.close()
    with open_journal(path) as journal, pytest.raises(
        JournalBroken, match="an append-only trigger was removed: the file no longer refuses",
    ):
        journal.check_at_start()


def test_a_later_start_checks_only_what_is_new_and_finds_a_deleted_tail(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    new_journal(path, rounds=2)
    with open_journal(path) as journal:
        total = journal.check_at_start()
        assert total == journal.last_seq > 0
        write_rounds(journal, rounds=1, first_round=3)
    with open_journal(path) as journal:
        assert 0 < journal.check_at_start() < total  # only the new round
        last = journal.last_seq
    tamper_keeping_triggers(path, f"DELETE FROM events WHERE seq > {last - 3}")
    with open_journal(path) as journal, pytest.raises(
        JournalBroken, match=f"seq {last} no longer has the hash verified before"
    ):
        journal.check_at_start()


def run_table(tmp_path: Path, journal: Path) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "T01.toml"
    config.write_text(f"""
[table]
id = "T01"
variant = "baccarat"
[sources]
cards = ["shoe"]
[shoe]
port = "{tmp_path / 'no-such-port'}"
[panel]
gpio = "mock"
start_round = 17
close_betting = 27
card_dropped = 22
void_request = 23
supervisor_key = 24
lamp_betting = 5
lamp_dealing = 6
lamp_alarm = 13
buzzer = 19
[publish]
endpoint = "tcp://127.0.0.1:0"
snapshot = "tcp://127.0.0.1:0"
control = "tcp://127.0.0.1:0"
[journal]
path = "{journal}"
""")
    return subprocess.run(
        [sys.executable, "-m", "table_controller", "run", "--config", str(config)],
        capture_output=True, text=True, timeout=60,
    )


def test_run_refuses_a_broken_journal_with_one_line_and_its_own_exit_status(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    new_journal(path)
    tamper_keeping_triggers(path, "DELETE FROM events WHERE seq = 4")
    done = run_table(tmp_path, path)
    assert done.returncode == 3, done.stderr
    assert "table T01 not started: journal" in done.stderr and "seq 4 is missing" in done.stderr
    assert "Traceback" not in done.stderr


def test_run_on_a_journal_held_by_another_controller_says_so(tmp_path: Path) -> None:
    path = tmp_path / "T01.sqlite"
    with open_journal(path):
        done = run_table(tmp_path, path)
    assert done.returncode == 3, done.stderr
    assert "not started" in done.stderr and "Traceback" not in done.stderr
    assert "AttributeError" not in done.stderr
