"""The simulated table with a simulated overhead camera: a card counts when shoe and camera agree."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cardart import deck_or_skip
from sim_helpers import journal_events, open_round_by_hand

from table_controller.journal import verify_journal
from table_controller.sim.table import SimOptions, SimulatedTable


def test_cards_count_as_shoe_and_camera(tmp_path: Path) -> None:
    deck_or_skip("svg-cards")
    journal = tmp_path / "T01.sqlite"
    report = SimulatedTable(SimOptions(variant="teen-patti-2020", rounds=2, speed=0, seed=3,
                                       journal=journal, camera="svg-cards")).run()
    assert (report.results, report.voids) == (2, 0)
    cards = [e for e in journal_events(journal) if e.type == "card"]
    assert len(cards) == 12 and {c.source for c in cards} == {"shoe+camera"}
    assert verify_journal(journal).ok


@contextmanager
def first_card_of_a_round(tmp_path: Path) -> Iterator[tuple[Any, Any, str]]:
    """A camera table with a round open and its first card just drawn: (sim, dealer, code)."""
    deck_or_skip("svg-cards")
    sim = SimulatedTable(SimOptions(variant="teen-patti-2020", speed=0, seed=3,
                                    journal=tmp_path / "T01.sqlite", camera="svg-cards"))
    dealer = sim.start()
    try:
        open_round_by_hand(sim, dealer)
        yield sim, dealer, sim.shoe.draw()
    finally:
        sim.close()


def test_camera_seeing_another_card_pauses_with_source_mismatch(tmp_path: Path) -> None:
    with first_card_of_a_round(tmp_path) as (_sim, dealer, code):
        wrong = "2C" if code != "2C" else "3C"
        dealer.camera.place("a1", wrong)  # the card on the layout is not the one the shoe read
        alert = dealer.watch.wait(lambda e: e.type == "alert", 15, "the mismatch alert")
        assert alert.kind == "source-mismatch"
        assert alert.detail == f"the shoe read {code}, the camera read {wrong} at a[0]"
        paused = dealer.watch.wait(lambda e: e.type == "table.state", 10, "the pause")
        assert (paused.state, paused.awaiting) == ("paused", "card")


def test_a_card_laid_off_every_position_voids_the_round(tmp_path: Path) -> None:
    with first_card_of_a_round(tmp_path) as (_sim, dealer, code):
        dealer.camera.place(None, code)
        void = dealer.watch.wait(lambda e: e.type == "round.void", 15, "the void")
        assert void.reason == f"misdeal: card {code} seen off every position"


def test_camera_faults_void_or_pause_with_their_own_alert_and_the_journal_verifies(tmp_path: Path) -> None:
    deck_or_skip("svg-cards")
    journal = tmp_path / "T01.sqlite"
    report = SimulatedTable(SimOptions(
        variant="teen-patti-2020", rounds=8, speed=0, seed=12, journal=journal, camera="svg-cards",
        faults="misplace=0.04,exposed=0.04,blackout=0.03",
    )).run()
    assert report.rounds == 8 and sum(report.faults.values()) >= 2
    events = journal_events(journal)
    alerts = {e.kind for e in events if e.type == "alert" and e.severity == "critical"}
    assert alerts <= {"wrong-position", "exposed-card", "camera-down", "source-mismatch"}
    # a misplaced card still waiting for the camera when its round is voided is recorded, not dropped
    warnings = {e.kind for e in events if e.type == "alert" and e.severity == "warning"}
    assert warnings <= {"wrong-order"}
    voids = [e for e in events if e.type == "round.void"]
    assert len(voids) == report.voids
    for void in voids:
        assert void.reason.startswith(("misdeal: card", "supervisor voided after"))
    check = verify_journal(journal)
    assert check.ok, check.problems
