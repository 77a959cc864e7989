"""The studio soak end to end: 4 tables x 30 rounds, every fault kind, controllers killed and restarted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from table_controller.soak.checker import CHECKS
from table_controller.soak.options import CAMERA_FAULTS, FAULT_KINDS, LINE_ONLY_FAULTS

ROOT = Path(__file__).resolve().parents[1]
#: Every shoe and dealer fault kind, at rates high enough that each happens in 120 rounds.
FAULTS = "all,unplug=0.015,dropped=0.015,misdeal=0.015,void=0.015,lid=0.015,noread=0.02"
#: The camera table's run: camera blackouts and shoe/camera disagreements besides the rest.
CAMERA_FAULTS_SPEC = (
    "all,unplug=0.01,dropped=0.01,misdeal=0.01,void=0.01,lid=0.01,noread=0.02,"
    "blackout=0.07,mismatch=0.07"
)


def _soak(*args: str, timeout: float = 175) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "table_controller", "soak", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_short_soak_with_every_fault_and_kills_keeps_every_promise(tmp_path: Path) -> None:
    done = _soak(
        "--tables",
        "4",
        "--rounds",
        "30",
        "--seed",
        "5",
        "--faults",
        FAULTS,
        "--kill-every",
        "5",
        "--camera-tables",
        "0",
        "--json",
        "--keep",
        str(tmp_path / "soak"),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["ok"] is True
    assert report["checks"] == {name: True for name in CHECKS}
    counts = report["counts"]
    assert counts["rounds"] == 120
    assert counts["results"] + counts["voided"] == 120
    assert counts["voided"] > 0 and counts["paused"] > 0
    assert counts["restarts"] >= 2
    assert sum(counts["kills_by_state"].values()) == counts["restarts"]
    assert {kind for kind, n in counts["faults"].items() if n > 0} == {
        *(k for k in FAULT_KINDS if k not in CAMERA_FAULTS and k not in LINE_ONLY_FAULTS), "kill"}
    assert counts["drawn_by_shoes"] >= counts["cards"] - counts["burn_cards"]
    assert (
        report["latency_ms"]["p50"] is not None
        and report["latency_ms"]["p99"] >= report["latency_ms"]["p50"]
    )
    for table in ("T01", "T02", "T03", "T04"):  # journals, configurations and logs were kept
        assert (tmp_path / "soak" / f"{table}.sqlite").is_file()
        # every journal rotated (32 KB segments), kills falling between and in rotations
        assert len(list((tmp_path / "soak" / f"{table}.sqlite.segments").glob("*.sqlite"))) >= 3


@pytest.mark.slow
def test_camera_tables_under_camera_faults_and_kills_keep_every_promise(tmp_path: Path) -> None:
    """T01 has a simulated overhead camera: every card counts only when shoe and camera agree;
    blackouts and disagreements pause it, and a killed controller's new camera sees the cards
    still on the layout."""
    done = _soak(
        "--tables", "2", "--rounds", "10", "--seed", "22",
        "--variants", "baccarat,teen-patti-2020",
        "--faults", CAMERA_FAULTS_SPEC, "--kill-every", "6", "--camera-tables", "1",
        "--json", "--keep", str(tmp_path / "soak"),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["checks"] == {**{name: True for name in CHECKS}, "evidence_bundles_verify": True}
    counts = report["counts"]
    assert counts["rounds"] == 20 and counts["restarts"] >= 2
    assert counts["faults"]["blackout"] + counts["faults"]["mismatch"] > 0
    # the camera table kept its pictures, and every round it voided has a bundle that verifies
    assert counts["evidence_pictures"] > 20
    voids = _voided_rounds(tmp_path / "soak" / "T01.sqlite")
    assert counts["void_bundles_verified"] == len(voids)
    assert {p.name for p in (tmp_path / "soak" / "bundles" / "T01").glob("*")} == voids
    journal = tmp_path / "soak" / "T01.sqlite"
    from table_controller.journal import JournalReader

    with JournalReader(journal) as reader:  # every segment
        sources = {json.loads(r.body).get("source") for r in reader.records(types=["card"])}
    assert "shoe+camera" in sources  # the camera confirmed the cards


def _voided_rounds(journal: Path) -> set[str]:
    from table_controller.journal import JournalReader

    with JournalReader(journal) as reader:  # every segment
        return {r.round for r in reader.records(types=["round.void"]) if r.round}


#: Line tables: lost lines, double reads and line noise at rates that hit every run, dealer
#: drops and voids; the smart-shoe table gets every shoe and dealer fault at its default rate.
LINE_FAULTS_SPEC = "all,lost=0.08,twice=0.1,garbage=0.1,dropped=0.03,void=0.03"


@pytest.mark.slow
def test_line_tables_under_lost_lines_double_reads_noise_and_kills_keep_what_they_can_promise(
    tmp_path: Path,
) -> None:
    """T02 (teen patti: a new shoe every round, told by the supervisor) and T03 (baccarat:
    burn cards) have plain line readers: no gate, no count, no retransmission. Every card
    the readers drew is journaled once in its round, or its line was lost, or its round
    voided (the dealer calls a misdeal for a card that does not show, a kill's included);
    no double read is journaled twice. The killer's seed sends its first kills to them."""
    done = _soak(
        "--tables", "3", "--rounds", "8", "--seed", "11", "--line-tables", "2",
        "--variants", "baccarat,teen-patti-2020,baccarat", "--camera-tables", "0",
        "--faults", LINE_FAULTS_SPEC, "--kill-every", "3",
        "--json", "--keep", str(tmp_path / "soak"),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["checks"] == {name: True for name in CHECKS}
    counts = report["counts"]
    assert counts["rounds"] == 24 and counts["line_tables"] == 2
    faults = counts["faults"]
    assert faults["lost"] > 0 and faults["twice"] > 0 and faults["garbage"] > 0
    assert counts["lost_lines"] == faults["lost"]
    assert counts["lines_read_twice"] > 0
    kills = {t: (tmp_path / "soak" / f"{t}.log").read_text().count("killed with SIGKILL")
             for t in ("T02", "T03")}
    assert sum(kills.values()) >= 1, kills
    config = (tmp_path / "soak" / "T03.toml").read_text()
    assert 'protocol = "lines"' in config and "accept_unverified = true" in config
    from table_controller.journal import JournalReader

    with JournalReader(tmp_path / "soak" / "T02.sqlite") as reader:  # every segment
        bodies = [json.loads(r.body) for r in reader.records()]
    assert all("shoe_count" not in e for e in bodies if e["type"] == "card")
    # Teen patti takes a new deck every round: one shoe at least for every round that dealt a
    # card (a repeated announcement with no card dealt since is the same shoe).
    dealt = {e["round"] for e in bodies if e["type"] == "card" and e["round"]}
    assert sum(1 for e in bodies if e["type"] == "shoe" and e.get("event") == "new") >= len(dealt) > 0


def test_hostile_clients_sending_garbage_to_every_endpoint_are_refused_and_every_table_finishes(
    tmp_path: Path,
) -> None:
    """Two hostile clients send random bytes, malformed and oversized JSON, multipart
    messages, wrong tokens and unknown ops to every snapshot and control endpoint, and garbage
    to the proxy, while controllers are killed: every check still passes, every endpoint kept
    answering, nothing was accepted without the token."""
    done = _soak(
        "--tables", "2", "--rounds", "6", "--seed", "3", "--hostile", "2", "--kill-every", "5",
        "--camera-tables", "0", "--json", "--keep", str(tmp_path / "soak"), timeout=90,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["checks"] == {**{name: True for name in CHECKS}, "hostile_clients_refused": True}
    counts = report["counts"]
    assert counts["rounds"] == 12 and counts["results"] + counts["voided"] == 12
    assert counts["hostile_clients"] == 2 and counts["hostile_messages"] > 50
    assert counts["hostile_control_answers"] > 0 and counts["hostile_snapshot_answers"] > 0
    assert counts["hostile_proxy_messages"] > 0
    for table in ("T01", "T02"):  # no hostile message reached a traceback in a controller
        assert "Traceback" not in (tmp_path / "soak" / f"{table}.log").read_text()


def test_line_tables_that_overlap_camera_tables_are_a_clear_error() -> None:
    done = _soak("--tables", "1", "--line-tables", "1", timeout=30)
    assert done.returncode == 2
    assert "--line-tables 1 with --camera-tables 1" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_fault_spec_is_a_clear_error() -> None:
    done = _soak("--faults", "fire", timeout=30)
    assert done.returncode == 2
    assert "unknown fault 'fire'" in done.stderr
    assert "Traceback" not in done.stderr


def test_camera_tables_without_the_card_art_are_a_clear_error(tmp_path: Path) -> None:
    done = _soak("--camera-deck", str(tmp_path / "no-such-deck"), timeout=30)
    assert done.returncode == 2
    assert "--camera-tables 1: card art for deck" in done.stderr
    assert "--camera-tables 0" in done.stderr and "Traceback" not in done.stderr


def test_an_unknown_variant_is_a_clear_error() -> None:
    done = _soak("--variants", "poker", timeout=30)
    assert done.returncode == 2
    assert "--variants:" in done.stderr and "poker" in done.stderr
    assert "Traceback" not in done.stderr



@pytest.mark.slow
def test_the_archive_and_the_studio_api_beside_the_tables_survive_kills_and_a_cut_off_table(
    tmp_path: Path, postgres_server: object,  # the fixture: PostgreSQL is installed, or the test skips/fails
) -> None:
    """soak --archive: the archive, the studio API and PostgreSQL are each killed and started
    again, one table is cut off the archive for a while; the archive ends holding exactly the
    journals' events and the API tells every round as its journal does."""
    from table_controller.soak.archive_side import ARCHIVE_CHECKS

    done = _soak(
        "--tables", "2", "--rounds", "25", "--seed", "4", "--pace", "0.05", "--camera-tables", "0",
        "--archive", "--archive-chaos-every", "1", "--json", "--keep", str(tmp_path / "soak"), timeout=150,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["checks"] == {**{name: True for name in CHECKS}, **{name: True for name in ARCHIVE_CHECKS}}
    counts = report["counts"]
    assert counts["archive"] == "postgresql" and counts["api_rounds_checked"] == 50
    assert all(n >= 1 for n in counts["archive_chaos"].values()), counts["archive_chaos"]
    assert counts["archived_live"] > counts["archived_from_files"]  # followed live, not only at the end
    assert "Traceback" not in (tmp_path / "soak" / "archive.log").read_text()  # no crash in either process
