"""A whole simulated table (controller, journal, panel, dealer) dealing from a shoe we did not write.

The table's journal must hold exactly the cards the independent conformance
shoe says it drew (code and the shoe's own count), in order, each once, over a
pty or TCP, under drop, corruption and duplication both ways.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from firmware_interfaces.shoe.guarantees import SMART_SHOE
from table_controller.sim.table import SimOptions, SimulatedTable
from tests.conformance.slp1_shoe import ConformanceShoe, PtyShoe, ShoeBehaviour, TcpShoe

pytestmark = pytest.mark.timeout(180)


class ConformanceHands:
    """The simulated dealer's hands on the conformance shoe (the simulated shoe's interface)."""

    announces_new_shoe = True
    guarantees = SMART_SHOE

    def __init__(self, runner: PtyShoe | TcpShoe) -> None:
        self.runner = runner
        self.cut_at: int | None = None

    def start(self) -> None:
        """The runner is started by the test."""

    def close(self) -> None:
        """The runner is closed by the test."""

    @property
    def remaining(self) -> int:
        return self.runner.call(lambda s, now: s.remaining)

    @property
    def unread(self) -> list[str]:
        return self.runner.call(lambda s, now: [code for code, _ in s.noread_drawn])

    def wait_gate(self, locked: bool, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.runner.call(lambda s, now: s.gate_locked) != locked:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    def draw(self) -> str | None:
        def pull(s: ConformanceShoe, now: float) -> str | None:
            if self.cut_at is not None and s.count == self.cut_at and not s.gate_locked:
                s.cut(now)
                self.cut_at = None
            return s.draw(now)

        return self.runner.call(pull)

    def draw_noread(self) -> bool:
        return self.runner.call(lambda s, now: s.draw_noread(now))

    def set_lid(self, is_open: bool) -> None:
        self.runner.call(lambda s, now: s.set_lid(is_open, now))

    def load(self, cards: Sequence[str] | None = None, decks: int | None = None,
             cut_at: int | None = None) -> None:
        self.cut_at = cut_at
        self.runner.call(lambda s, now: s.load(list(cards or []), decks or 8, now))


def shuffled(seed: int) -> list[str]:
    import random

    cards = [r + s for _ in range(8) for r in "A23456789TJQK" for s in "SHDC"]
    random.Random(seed).shuffle(cards)
    return cards


FAULTS = {"drop": 0.04, "corrupt": 0.04, "duplicate": 0.04}


@pytest.mark.parametrize("name,knobs,tcp", [
    ("powered-on-before-host", {}, False),
    ("window-1", {"window": 1}, False),
    ("late-command-acks", {"command_ack_delay": 0.6}, False),
    ("no-old-hellos", {"resend_old_hellos": False}, False),
    ("tcp-two-cable-pulls", {}, True),
])
def test_a_table_journals_exactly_what_the_shoe_drew(tmp_path: Path, name: str, knobs: dict, tcp: bool) -> None:
    behaviour = ShoeBehaviour(**{**FAULTS, **knobs})
    shoe = ConformanceShoe(behaviour, cards=shuffled(7), seed=7, now=time.monotonic())
    runner: PtyShoe | TcpShoe = (TcpShoe if tcp else PtyShoe)(shoe, behaviour=behaviour)
    runner.start()
    time.sleep(0.5)  # the shoe is on before the controller: its HELLO and NEWSHOE wait unACKed
    url = runner.url if isinstance(runner, TcpShoe) else runner.path
    options = SimOptions(variant="baccarat", rounds=5, seed=7, speed=0, journal=tmp_path / "T01.sqlite",
                         betting_seconds=0)
    table = SimulatedTable(options, device=(url, ConformanceHands(runner)))
    pulls: list[threading.Timer] = []
    try:
        dealer = table.start()
        if isinstance(runner, TcpShoe):
            pulls = [threading.Timer(t, runner.pull_cable, args=(1.0,)) for t in (0.5, 3.0)]
            for timer in pulls:
                timer.start()
        played = 0
        # Play the rounds asked for and, on TCP, on until both pulls are over (a round after
        # the second reconnect), so the outages fall in the middle of dealing.
        while played < options.rounds or (
            isinstance(runner, TcpShoe) and runner.connections < 3 and played < 40
        ):
            dealer.play_round(table.live.stopped)
            played += 1
        if isinstance(runner, TcpShoe):
            dealer.play_round(table.live.stopped)
            played += 1
        journaled = [(e.code, e.shoe_count) for e in table.live.journal.events(types=["card"])]
        results = list(table.live.journal.events(types=["round.result"]))
    finally:
        for timer in pulls:
            timer.cancel()
        table.close()
        runner.close()
    truth = shoe.drawn
    assert journaled == truth, name
    assert len(results) + dealer.stats.voids == played
    if isinstance(runner, TcpShoe):
        assert runner.connections >= 3  # two pulls: the driver reconnected twice
