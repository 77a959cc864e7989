"""The soak's archive checks can fail: an archive that holds another journal's events, and an
API that tells a round otherwise than its journal, are each reported."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from archive_helpers import LiveTable, Studio

from table_controller.archive import ArchiveFollower, TableSource, open_archive
from table_controller.soak.archive_side import ARCHIVE_CHECKS, ArchiveSide
from table_controller.studio.keys import key_hash, new_key


def _side(tmp_path: Path, db: str, port: int, key: str) -> ArchiveSide:
    side = ArchiveSide("sqlite", tmp_path, sys.executable, open(tmp_path / "archive.log", "a"), random.Random(1), 1.0)
    side.db, side.studio_port, side.key = db, port, key
    return side


def test_an_archive_of_another_journal_and_its_rounds_are_reported(tmp_path: Path) -> None:
    db = str(tmp_path / "archive.sqlite")
    real = LiveTable(tmp_path / "T01.sqlite", seed=7)
    other = LiveTable(tmp_path / "other.sqlite", seed=99)  # the same table id, other events
    try:
        real.deal(3)
        other.deal(3)
        key = new_key()
        with open_archive(db) as archive:
            archive.add_api_key(key_hash(key), "soak", ["*"], "2026-12-02T00:00:00.000Z")
            ArchiveFollower(archive, [TableSource("T01", other.endpoint)]).catch_up_all()
            studio = Studio(archive)
            try:
                problems: dict[str, list[str]] = {}
                counts = _side(tmp_path, db, int(studio.base.rsplit(":", 1)[1]), key).check(
                    {"T01": real.journal.path}, problems, timeout=5)
            finally:
                studio.stop()
    finally:
        real.close()
        other.close()
    assert set(ARCHIVE_CHECKS) <= set(problems)
    assert problems["archive_matches_journals"] and "they differ from seq" in problems["archive_matches_journals"][0]
    assert len(problems["api_rounds_match_journals"]) == 3  # R1..R3 as the other journal has them
    assert problems["archive_side_ran"] == ["the archive did not catch up with the journals in time"]
    assert counts["api_rounds_checked"] == 3


def test_an_archive_of_the_journal_passes(tmp_path: Path) -> None:
    db = str(tmp_path / "archive.sqlite")
    real = LiveTable(tmp_path / "T01.sqlite", seed=7)
    try:
        real.deal(3)
        key = new_key()
        with open_archive(db) as archive:
            archive.add_api_key(key_hash(key), "soak", ["*"], "2026-12-02T00:00:00.000Z")
            ArchiveFollower(archive, [TableSource("T01", real.endpoint)]).catch_up_all()
            real.deal(1)  # journaled after the archive's last turn: archived from the file at the end
            studio = Studio(archive)
            try:
                problems: dict[str, list[str]] = {}
                counts = _side(tmp_path, db, int(studio.base.rsplit(":", 1)[1]), key).check(
                    {"T01": real.journal.path}, problems, timeout=30)
            finally:
                studio.stop()
    finally:
        real.close()
    assert all(problems[c] == [] for c in ARCHIVE_CHECKS), problems
    assert counts["archived_from_files"] > 0 and counts["api_rounds_checked"] == 4
