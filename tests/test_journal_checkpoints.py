"""Signed checkpoints outside the journal find what the hash chain cannot: a deleted tail (issue 13)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from table_controller.controller import TableController
from table_controller.journal import Journal, verify_journal
from table_controller.journal.checkpoints import CheckpointSigner, generate_signing_key, load_checkpoints
from table_controller.rules import load_game
from table_controller.table import inputs as i

BANKER_ROUND = ("4H", "KS", "3D", "2C", "9H")  # player 4+3 = 7, banker 10+2+9... a complete deal


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        self.now += 0.01
        return self.now


def table(tmp_path: Path, checkpoint_file: Path | None = None) -> tuple[TableController, Path]:
    private, public = generate_signing_key(tmp_path / "keys", "T01")
    game = load_game("baccarat")
    journal = Journal(tmp_path / "T01.sqlite", table="T01", game="baccarat", variant="baccarat")
    signer = CheckpointSigner(private, checkpoint_file or tmp_path / "T01.checkpoints")
    c = TableController(game, journal, table="T01", has_shoe=False, clock=Clock(), checkpoints=signer)
    c.restore()
    return c, public


def play(c: TableController, rounds: int = 2) -> None:
    for _ in range(rounds):
        c.step(i.StartRound())
        c.step(i.CloseBetting())
        for code in BANKER_ROUND:
            c.step(i.CardPresented(code))
        c.clock.now += 10
        c.step(i.Tick())


def tamper(path: Path, sql: str) -> None:
    """Change the journal behind its back and put its append-only triggers back."""
    conn = sqlite3.connect(path)
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type='trigger'").fetchall()
    for name, _ in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute(sql)
    for _, create in triggers:
        conn.execute(create)
    conn.commit()
    conn.close()


def test_every_round_end_is_signed_outside_the_journal_and_published(tmp_path: Path) -> None:
    c, public = table(tmp_path)
    play(c, 2)
    checkpoints = load_checkpoints(tmp_path / "T01.checkpoints")
    results = [e.seq for e in c.journal.events(types=["round.result"])]
    journaled = list(c.journal.events(types=["checkpoint"]))
    assert len(checkpoints) == len(journaled) == 2
    assert [cp.seq for cp in checkpoints] == [e.covers for e in journaled]
    assert all(cp.seq > r for cp, r in zip(checkpoints, results, strict=True))  # the state after the result too
    c.journal.close()
    report = verify_journal(tmp_path / "T01.sqlite", checkpoints=tmp_path / "T01.checkpoints",
                            verify_key=public)
    assert report.ok, report.problems


def test_a_deleted_tail_is_found_by_its_checkpoint(tmp_path: Path) -> None:
    c, public = table(tmp_path)
    play(c, 2)
    last_checkpoint = load_checkpoints(tmp_path / "T01.checkpoints")[-1].seq
    c.journal.close()
    tamper(tmp_path / "T01.sqlite", f"DELETE FROM events WHERE seq > {last_checkpoint - 4}")
    plain = verify_journal(tmp_path / "T01.sqlite")
    assert plain.ok  # the chain alone cannot tell
    report = verify_journal(tmp_path / "T01.sqlite", checkpoints=tmp_path / "T01.checkpoints",
                            verify_key=public)
    assert not report.ok
    assert any("were deleted from its tail" in p for p in report.problems)


def test_a_forged_checkpoint_is_found(tmp_path: Path) -> None:
    c, public = table(tmp_path)
    play(c, 1)
    c.journal.close()
    path = tmp_path / "T01.checkpoints"
    path.write_text(path.read_text().replace('"seq":', '"seq":1', 1))  # moved to another seq
    report = verify_journal(tmp_path / "T01.sqlite", checkpoints=path, verify_key=public)
    assert any("signature does not verify" in p for p in report.problems)
    _, other_key = generate_signing_key(tmp_path / "other", "T01")
    report = verify_journal(tmp_path / "T01.sqlite", checkpoints=path, verify_key=other_key)
    assert not report.ok


def test_meta_changed_under_a_valid_checkpoint_is_found(tmp_path: Path) -> None:
    c, public = table(tmp_path)
    play(c, 1)
    c.journal.close()
    tamper(tmp_path / "T01.sqlite", "UPDATE meta SET value = 'baccarat-no-commission' WHERE key = 'variant'")
    report = verify_journal(tmp_path / "T01.sqlite", checkpoints=tmp_path / "T01.checkpoints",
                            verify_key=public)
    assert any("meta rows were changed" in p for p in report.problems)


def test_an_unwritable_checkpoint_file_is_an_alert_and_the_table_runs_on(tmp_path: Path) -> None:
    c, _ = table(tmp_path, checkpoint_file=tmp_path / "no-such-folder" / "T01.checkpoints")
    play(c, 2)
    alerts = [e for e in c.journal.events(types=["alert"]) if "checkpoint of seq" in e.detail]
    assert len(alerts) == 2 and alerts[0].severity == "critical"
    assert len(list(c.journal.events(types=["round.result"]))) == 2
