"""The simulated table end to end: real driver over a pseudo-terminal, journal, mock panel."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sim_helpers import journal_events, open_round_by_hand

from table_controller.event_types import Event, decode_event
from table_controller.journal import Journal, verify_journal
from table_controller.sim.table import SimOptions, SimulatedTable
from table_controller.table import inputs as i

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "variant", ["baccarat", "three-pictures", "three-face", "teen-patti-2020", "three-face-3p"]
)
def test_every_game_plays_rounds_that_verify(tmp_path: Path, variant: str) -> None:
    journal = tmp_path / "T01.sqlite"
    report = SimulatedTable(SimOptions(variant=variant, rounds=3, speed=0, seed=11, journal=journal)).run()
    assert (report.rounds, report.results, report.voids) == (3, 3, 0)
    check = verify_journal(journal)
    assert check.ok, check.problems
    assert check.results_checked == 3


def test_link_and_dealer_faults_lose_no_card_and_count_none_twice(tmp_path: Path) -> None:
    journal = tmp_path / "T01.sqlite"
    sim = SimulatedTable(SimOptions(
        variant="baccarat", rounds=25, speed=0, seed=5, journal=journal,
        faults="drop=0.05,corrupt=0.05,dup=0.05,garbage=0.01,noread=0.03,dropped=0.02,lid=0.02",
    ))
    report = sim.run()
    assert report.rounds == 25 and report.results + report.voids == 25
    check = verify_journal(journal)
    assert check.ok, check.problems
    events = journal_events(journal)
    from_shoe = [e.code for e in events if e.type == "card" and e.source == "shoe"]
    assert from_shoe == sim.shoe.drawn  # every card the shoe drew, once, in order
    manual = [e.code for e in events if e.type == "card" and e.source == "manual"]
    assert manual == sim.shoe.unread  # no-reads were confirmed by hand
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


def test_a_second_run_continues_the_journal(tmp_path: Path) -> None:
    journal = tmp_path / "T01.sqlite"
    SimulatedTable(SimOptions(variant="teen-patti-2020", rounds=2, speed=0, seed=1, journal=journal)).run()
    first = journal_events(journal)
    SimulatedTable(SimOptions(variant="teen-patti-2020", rounds=2, speed=0, seed=2, journal=journal)).run()
    events = journal_events(journal)
    assert events[: len(first)] == first
    rounds = [e.round for e in events if e.type == "round.result"]
    assert rounds == ["T01-000001", "T01-000002", "T01-000003", "T01-000004"]
    assert verify_journal(journal).ok


def test_sim_json_prints_every_event_as_events_md_defines(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "table_controller", "sim", "--game", "teen-patti-2020", "--rounds", "2",
         "--speed", "0", "--seed", "3", "--json", "--no-publish", "--journal", str(tmp_path / "T01.sqlite")],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=True,
    )
    lines = [decode_event(line) for line in out.stdout.splitlines()]
    assert [e.seq for e in lines] == list(range(lines[0].seq, lines[0].seq + len(lines)))
    assert lines == journal_events(tmp_path / "T01.sqlite")
    assert sum(e.type == "round.result" for e in lines) == 2


def wait_for_commit_after(journal: Path, seq: int, proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait (bounded) until the controller has committed an event after ``seq``: it is up and dealing."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the controller exited ({proc.returncode}) before committing anything"
        if journal.exists():
            reader = Journal.open_readonly(journal)
            try:
                if reader.last_seq > seq:
                    return
            finally:
                reader.close()
        time.sleep(0.01)
    raise AssertionError(f"the controller committed nothing after seq {seq} in {timeout} s")


@pytest.mark.slow
def test_kill_9_at_random_moments_loses_nothing_and_settles_once(tmp_path: Path) -> None:
    """Kill -9 the whole simulated table four times, then let it finish.

    The first kill comes at a random moment after the start, so under load it may come
    while the controller is still starting and creating its journal: then there is either
    no journal yet (nothing was committed) or a whole one. The other kills come at a random
    moment after the restarted controller committed its first event, so they land while it
    deals however slowly the machine starts processes. After every kill nothing committed
    before is lost or changed and the journal verifies."""
    journal = tmp_path / "T01.sqlite"
    rng = random.Random(20261129)
    command = [sys.executable, "-m", "table_controller", "sim", "--game", "baccarat", "--speed", "0", "--no-publish",
               "--journal", str(journal)]
    before: list[Event] = []
    for attempt in range(4):
        proc = subprocess.Popen(command + ["--rounds", "500", "--seed", str(attempt)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        delay = rng.uniform(1.0, 2.5)
        try:
            if attempt > 0:  # the second a start takes when the machine is idle is spent waiting
                wait_for_commit_after(journal, before[-1].seq if before else 0, proc, timeout=60)
                delay -= 1.0
            time.sleep(delay)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        if not journal.exists():  # killed before it had created its journal
            assert attempt == 0 and not before, attempt
            continue
        check = verify_journal(journal)
        assert check.ok, (attempt, check.problems)
        events = journal_events(journal)
        assert events[: len(before)] == before, attempt  # nothing committed was lost or changed
        if attempt > 0:
            assert len(events) > len(before), attempt  # it was killed while it dealt
        before = events
    done = subprocess.run(command + ["--rounds", "3", "--seed", "99"], cwd=ROOT, timeout=60,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    events = journal_events(journal)
    assert events[: len(before)] == before
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    results = [e.round for e in events if e.type in ("round.result", "round.void")]
    assert len(results) == len(set(results))  # every round settled (or voided) once
    assert verify_journal(journal).ok


def test_scripted_shoe_gives_exact_journal_rows(tmp_path: Path) -> None:
    journal = tmp_path / "T01.sqlite"
    script = ["2H", "KD", "QS", "4H", "KS", "3D", "2C", "9H", "9S", "9D", "KH", "KC"]
    sim = SimulatedTable(SimOptions(variant="baccarat", rounds=2, speed=0, seed=1, journal=journal,
                                    cards=script))
    sim.run()
    rows = [
        (e.type, getattr(e, "position", None), getattr(e, "index", None), getattr(e, "code", None),
         getattr(e, "state", None), e.round)
        for e in journal_events(journal) if e.type not in ("heartbeat",)
    ]
    r1, r2 = "T01-000001", "T01-000002"
    assert rows[:3] == [
        ("shoe", None, None, None, None, None),
        ("table.state", None, None, None, "dealing", None),
        ("card", "burn", 0, "2H", None, None),
    ]
    assert [r for r in rows if r[0] == "card"] == [
        ("card", "burn", 0, "2H", None, None), ("card", "burn", 1, "KD", None, None),
        ("card", "burn", 2, "QS", None, None),
        ("card", "player", 0, "4H", None, r1), ("card", "banker", 0, "KS", None, r1),
        ("card", "player", 1, "3D", None, r1), ("card", "banker", 1, "2C", None, r1),
        ("card", "banker", 2, "9H", None, r1),
        ("card", "player", 0, "9S", None, r2), ("card", "banker", 0, "9D", None, r2),
        ("card", "player", 1, "KH", None, r2), ("card", "banker", 1, "KC", None, r2),
    ]
    results = [e for e in journal_events(journal) if e.type == "round.result"]
    assert [r.outcome["winner"] for r in results] == ["player", "tie"]  # 9S KH vs 9D KC
    assert results[1].hands["player"].cls == "natural9"


def test_shoe_power_loss_mid_round_alerts_and_pauses(tmp_path: Path) -> None:
    sim = SimulatedTable(SimOptions(variant="teen-patti-2020", speed=0, seed=4,
                                    journal=tmp_path / "T01.sqlite"))
    dealer = sim.start()
    try:
        open_round_by_hand(sim, dealer)
        sim.shoe.draw()
        dealer.watch.wait(lambda e: e.type == "card", 10, "the first card")
        sim.shoe.power_cycle()
        alert = dealer.watch.wait(lambda e: e.type == "alert", 10, "the power-loss alert")
        assert alert.kind == "device-fault" and "new session" in alert.detail
        paused = dealer.watch.wait(lambda e: e.type == "table.state", 10, "the pause")
        assert paused.state == "paused" and paused.round == "T01-000001"
        assert sim.shoe.wait_gate(True, 10)  # the gate locks again on the new session
        sim.live.controller.request(i.SupervisorResume(by="test"))
        assert sim.shoe.wait_gate(False, 10)  # and opens again when dealing resumes
        sim.shoe.draw()
        card = dealer.watch.wait(lambda e: e.type == "card", 10, "the next card")
        assert (card.position, card.index) == ("b", 0)
    finally:
        sim.close()


def test_a_locked_gate_never_yields_a_card(tmp_path: Path) -> None:
    sim = SimulatedTable(SimOptions(variant="teen-patti-2020", speed=0, seed=4,
                                    journal=tmp_path / "T01.sqlite"))
    sim.start()
    try:
        assert sim.shoe.gate_locked
        assert [sim.shoe.draw() for _ in range(5)] == [None] * 5
        assert sim.shoe.drawn == []
    finally:
        sim.close()
    assert not [e for e in journal_events(tmp_path / "T01.sqlite") if e.type == "card"]
