"""Our SLP/1 driver against a shoe we did not write (``slp1_shoe.py``, written from the spec alone).

Each test names one shoe behaviour and runs the real :class:`ShoeDriver` over a
real pseudo-terminal or TCP socket against it, with 3-5 % drop, corruption and
duplication on both directions. The ground truth is the shoe's own record of
what it drew (``shoe.drawn``: code and count); the driver must deliver exactly
that sequence: nothing lost, nothing twice, nothing out of order.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from firmware_interfaces.shoe import FaultPlan, FaultyTransport, Hello, ShoeDriver, open_url
from firmware_interfaces.shoe.testing import EventRecorder
from tests.conformance.slp1_shoe import ConformanceShoe, PtyShoe, ShoeBehaviour, TcpShoe

pytestmark = pytest.mark.timeout(120)

#: Faults on what the shoe sends (its own knobs) and on what the driver sends (FaultyTransport).
SHOE_FAULTS = {"drop": 0.04, "corrupt": 0.04, "duplicate": 0.04}
DRIVER_FAULTS = "drop=0.04,corrupt=0.04,dup=0.04"


def deck(seed: int, n: int = 60) -> list[str]:
    cards = [r + s for r in "A23456789TJQK" for s in "SHDC"] * 2
    random.Random(seed).shuffle(cards)
    return cards[:n]


class Delivered(EventRecorder):
    """What the driver handed out, in order (a listener on the reader thread)."""

    def cards(self) -> list[tuple[str, int]]:
        return self.drawn

    def wait(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        if not self.wait_for(lambda ev: predicate(), timeout):
            raise AssertionError(f"waited {timeout:g} s for {what}; got {self.drawn}")


@dataclass
class Rig:
    runner: PtyShoe | TcpShoe
    driver: ShoeDriver
    delivered: Delivered

    @property
    def shoe(self) -> ConformanceShoe:
        return self.runner.shoe

    def draw(self, n: int, *, every: float = 0.02, timeout: float = 60) -> None:
        """The dealer draws ``n`` cards whenever the gate is open."""
        deadline = time.monotonic() + timeout
        drawn = 0
        while drawn < n:
            if self.runner.call(lambda s, now: s.draw(now)) is not None:
                drawn += 1
                time.sleep(every)
            elif time.monotonic() > deadline:
                raise AssertionError(f"gate stayed locked: {drawn} of {n} cards drawn")
            else:
                time.sleep(0.005)

    def expect_exactly_what_was_drawn(self, timeout: float = 60) -> None:
        truth = lambda: self.runner.call(lambda s, now: list(s.drawn))  # noqa: E731
        self.delivered.wait(lambda: len(self.delivered.cards()) >= len(truth()), timeout,
                            f"{len(truth())} cards")
        time.sleep(0.3)  # anything delivered twice would arrive now
        assert self.delivered.cards() == truth()


@pytest.fixture
def rig_factory() -> Iterator[Callable[..., Rig]]:
    made: list[Rig] = []

    def make(
        behaviour: ShoeBehaviour, *, tcp: bool = False, powered_on_for: float = 0.0,
        driver_faults: str = DRIVER_FAULTS, seed: int = 1,
    ) -> Rig:
        shoe = ConformanceShoe(behaviour, cards=deck(seed), decks=8, seed=seed, now=time.monotonic())
        runner: PtyShoe | TcpShoe = (TcpShoe if tcp else PtyShoe)(shoe, behaviour=behaviour)
        runner.start()
        if powered_on_for:
            time.sleep(powered_on_for)  # the shoe talks to nobody: HELLO and NEWSHOE stay unACKed
        url = runner.url if isinstance(runner, TcpShoe) else runner.path
        plain = open_url(url)
        plan = FaultPlan.parse(driver_faults, seed=seed) if driver_faults else None

        def opener() -> object:
            port = plain()
            return FaultyTransport(port, plan) if plan is not None else port

        delivered = Delivered()
        driver = ShoeDriver(opener, listener=delivered, name="conformance")
        rig = Rig(runner, driver, delivered)
        made.append(rig)
        driver.start()
        return rig

    yield make
    for rig in made:
        rig.driver.close()
        rig.runner.close()


def faulty(**knobs: object) -> ShoeBehaviour:
    return ShoeBehaviour(**{**SHOE_FAULTS, **knobs})  # type: ignore[arg-type]


def deal(rig: Rig, n: int = 24, **kw: float) -> None:
    rig.driver.wait_up(15)
    rig.driver.unlock()
    rig.draw(n, **kw)
    rig.expect_exactly_what_was_drawn()


# -- sessions ---------------------------------------------------------------------

def test_shoe_powered_on_before_the_host_re_sends_its_old_hello_and_newshoe(rig_factory) -> None:
    """The failure that delivered 0 of 416 cards: old HELLOs re-sent with new seqs after RESET."""
    rig = rig_factory(faulty(), powered_on_for=1.5)
    deal(rig)
    kinds = [type(e).__name__ for e in rig.delivered.events]
    assert "NewShoe" in kinds  # the power-on NEWSHOE, re-sent after our RESET, is delivered
    assert rig.driver.stats.stale_hellos >= 1


def test_shoe_that_drops_unacked_frames_on_reset(rig_factory) -> None:
    rig = rig_factory(faulty(resend_after_reset=False), powered_on_for=1.0)
    deal(rig)


def test_shoe_that_re_sends_all_but_old_hellos(rig_factory) -> None:
    rig = rig_factory(faulty(resend_old_hellos=False), powered_on_for=1.0)
    deal(rig)


def test_shoe_that_reboots_on_its_own_mid_round(rig_factory) -> None:
    rig = rig_factory(faulty())
    deal(rig, 10)
    rig.delivered.wait(lambda: rig.runner.call(lambda s, now: s.unacked) == 0, 10, "the shoe's window to empty")
    rig.runner.call(lambda s, now: s.reboot(now))
    rig.delivered.wait(
        lambda: any(isinstance(e, Hello) and e.new_session for e in rig.delivered.events), 15,
        "the new session's HELLO",
    )
    rig.driver.unlock()  # a rebooted shoe's gate is locked again (the controller re-sends it)
    rig.draw(10)
    rig.expect_exactly_what_was_drawn()
    assert rig.runner.call(lambda s, now: s.lost_on_reboot) == 0


# -- windows and timers -------------------------------------------------------------

@pytest.mark.parametrize("window", [1, 16], ids=["window-1", "window-16"])
def test_window_size(rig_factory, window: int) -> None:
    deal(rig_factory(faulty(window=window)), 20, every=0.0)


@pytest.mark.parametrize(
    "retransmit,cards", [(0.04, 24), (1.5, 10)], ids=["retransmit-40ms", "retransmit-1.5s"],
)
def test_retransmission_interval(rig_factory, retransmit: float, cards: int) -> None:
    deal(rig_factory(faulty(retransmit=retransmit)), cards)


def test_shoe_that_answers_commands_late(rig_factory) -> None:
    """Commands handled 0.6 s late: our LOCK/UNLOCK are retransmitted meanwhile."""
    rig = rig_factory(faulty(command_ack_delay=0.6))
    deal(rig, 12)
    assert rig.driver.stats.retransmissions >= 1


# -- transports ------------------------------------------------------------------

def test_cable_pulled_twice_on_tcp(rig_factory) -> None:
    rig = rig_factory(faulty(), tcp=True)
    rig.driver.wait_up(15)
    rig.driver.unlock()
    for _ in range(2):
        rig.draw(6)
        rig.runner.pull_cable(1.0)
        rig.draw(3, every=0.1)  # drawn while the cable is out: must arrive after it is back
        time.sleep(1.2)
    rig.draw(4)
    rig.expect_exactly_what_was_drawn()
    assert rig.driver.stats.reconnects >= 2


@pytest.mark.parametrize("baud", [9600, 921600])
def test_paced_serial_line(rig_factory, baud: int) -> None:
    deal(rig_factory(faulty(baud=baud)), 16)
