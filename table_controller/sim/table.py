"""The simulated table: real controller, real serial driver, simulated devices.

The simulated shoe runs on a pseudo-terminal, so the controller reads it
through pyserial exactly as it reads a real shoe; the dealer's panel is
gpiozero's MockFactory; the simulated dealer presses its pins.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from table_controller.config import DEFAULT_PINS
from table_controller.controller import TableController
from table_controller.errors import ConfigError
from table_controller.rules.registry import load_game
from table_controller.sim.dealer import DealerFaults, SimulatedDealer

log = logging.getLogger(__name__)


@dataclass
class SimOptions:
    """What ``table-controller sim`` was asked for."""

    variant: str = "baccarat"
    rounds: int = 10
    seed: int | None = None
    speed: float = 1.0  # 0 = as fast as possible
    faults: str = ""
    journal: Path | None = None
    table: str = "T01"
    betting_seconds: float = 15
    publish: str | None = None
    snapshot: str | None = None
    variants_dir: Path | None = None


@dataclass
class SimReport:
    """What happened in a simulated run."""

    rounds: int = 0
    results: int = 0
    voids: int = 0
    cards: int = 0
    events: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    journal: str = ""


def split_faults(text: str) -> tuple[str, DealerFaults]:
    """Split ``--faults`` into the shoe's part (its FaultPlan syntax) and the dealer's part."""
    shoe_parts: list[str] = []
    dealer = DealerFaults()
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = part.partition("=")
        if key.strip() in DealerFaults.KEYS:
            try:
                setattr(dealer, key.strip(), float(value))
            except ValueError:
                raise ConfigError(f"--faults: {key}={value!r} is not a probability") from None
        else:
            shoe_parts.append(part)
    return ",".join(shoe_parts), dealer


class SimulatedTable:
    """Builds and runs a whole table with simulated hardware."""

    def __init__(self, options: SimOptions, on_event: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.options = options
        self.on_event = on_event
        self.game = load_game(options.variant, options.variants_dir)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._stop = threading.Event()
        self._closers: list[Callable[[], None]] = []

    def run(self) -> SimReport:
        """Play the asked-for rounds; returns the report."""
        try:
            return self._run()
        finally:
            self.close()

    def _run(self) -> SimReport:
        import serial
        from gpiozero.pins.mock import MockFactory

        from firmware_interfaces.shoe import FaultPlan, LinkState, ShoeDriver, SimulatedShoe, open_pty_pair
        from table_controller.journal import Journal
        from table_controller.panel import DealerPanel

        o = self.options
        speed = o.speed
        scale = 0.0 if speed <= 0 else 1.0 / speed
        shoe_faults, dealer_faults = split_faults(o.faults)
        journal_path = o.journal
        if journal_path is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="table-sim-")
            journal_path = Path(self._tmp.name) / f"{o.table}.sqlite"
        journal = Journal(journal_path, table=o.table, game=self.game.game_id, variant=self.game.variant.id)
        self._closers.append(journal.close)

        publisher = None
        if o.publish:
            from table_controller.publish import EventPublisher

            publisher = EventPublisher(o.table, o.publish, o.snapshot or "tcp://127.0.0.1:0")
            publisher.start()
            self._closers.append(publisher.close)

        controller = TableController(
            self.game, journal, table=o.table, betting_seconds=o.betting_seconds * scale,
            result_seconds=3 * scale, publisher=publisher,
        )
        if self.on_event is not None:
            controller.listeners.append(self.on_event)

        factory = MockFactory()
        panel = DealerPanel(DEFAULT_PINS, factory, controller.on_button)
        self._closers.append(panel.close)
        controller.panel = panel

        master_fd, device = open_pty_pair()
        seed = o.seed
        shoe = SimulatedShoe(
            master_fd, decks=self.game.decks, seed=seed,
            faults=FaultPlan.parse(shoe_faults, seed=seed) if shoe_faults else None,
        )
        shoe.start()
        self._closers.append(shoe.close)

        link = journal.link_state
        driver = ShoeDriver(
            lambda: serial.serial_for_url(device, timeout=0.05),
            resume=LinkState(*link) if link else None,
            listener=controller.on_shoe_event,
            auto_ack=False,
        )
        controller.shoe = driver
        controller.restore()
        loop = threading.Thread(target=controller.run, args=(self._stop,), name="controller", daemon=True)
        loop.start()
        self._closers.append(lambda: loop.join(timeout=5))
        self._closers.append(self._stop.set)
        driver.start()
        self._closers.append(driver.close)

        def press(name: str) -> None:
            pin = factory.pin(DEFAULT_PINS[name])
            pin.drive_low()
            pin.drive_high()

        dealer = SimulatedDealer(
            self.game, shoe, controller, press, pace=1.0 * scale,
            betting_seconds=min(o.betting_seconds, 5) * scale, seed=seed, faults=dealer_faults,
        )
        if not controller.link_ready.wait(10):
            raise ConfigError(f"the simulated shoe on {device} did not answer within 10 s")
        if not self.game.shuffle_every_round:
            dealer.load_shoe()
        for _ in range(o.rounds):
            if self._stop.is_set():
                break
            dealer.play_round(self._stop)
        return SimReport(
            rounds=dealer.stats.rounds, results=dealer.stats.results, voids=dealer.stats.voids,
            cards=dealer.stats.cards, events=controller.stats.events,
            faults=dict(dealer.stats.faults), journal=str(journal_path),
        )

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        self._stop.set()
        for close in reversed(self._closers):
            try:
                close()
            except Exception:
                log.exception("closing the simulated table")
        self._closers.clear()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
