"""The simulated table: the real controller and serial driver, simulated devices.

The simulated shoe runs on a pseudo-terminal, so the controller reads it
through pyserial exactly as it reads a real shoe; the dealer's panel is
gpiozero's MockFactory; the simulated dealer presses its pins.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from table_controller.config import (
    DEFAULT_PINS,
    EvidenceConfig,
    PanelConfig,
    PublishConfig,
    ShoeConfig,
    TableConfig,
)
from table_controller.errors import ConfigError
from table_controller.event_types import Event
from table_controller.journal.segments import RotationPolicy
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
    betting_seconds: float = 15  # at speed 1; the dealer closes betting after at most MAX_BETTING_SECONDS
    publish: str | None = None
    snapshot: str | None = None
    control: str | None = None
    variants_dir: Path | None = None
    cards: list[str] | None = None  # a scripted shoe (card codes in dealing order)
    camera: str | None = None  # deck design for a simulated camera (shoe + camera table)
    shoe_protocol: str = "slp1"  # "lines": a plain line-per-card reader instead of a smart shoe
    evidence: bool = True  # a camera table keeps its pictures beside the journal (docs/evidence.md)
    #: When the journal starts a new segment (journal/segments.py).
    journal_rotation: RotationPolicy = field(default_factory=RotationPolicy)


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


#: The simulated dealer leaves betting open this long at most (at speed 1): a simulated
#: table has no bettors to wait for. The table announces what the dealer waits.
MAX_BETTING_SECONDS = 5.0


def dealer_betting_seconds(options: SimOptions) -> float:
    """How long the simulated dealer leaves betting open: ``--betting-seconds``, at most
    :data:`MAX_BETTING_SECONDS`, divided by the speed (0 at speed 0)."""
    scale = 0.0 if options.speed <= 0 else 1.0 / options.speed
    return min(options.betting_seconds, MAX_BETTING_SECONDS) * scale


class SimulatedTable:
    """A :class:`~table_controller.assembly.LiveTable` on simulated devices, with a simulated dealer."""

    def __init__(
        self, options: SimOptions, on_event: Callable[[Event], None] | None = None,
        *, device: tuple[str, Any] | None = None,
    ) -> None:
        """``device``: (port URL, the device's hands) of a shoe to deal from instead of the
        built-in simulator, e.g. a test rig's own shoe; the hands are the simulated shoe's
        (``draw``, ``wait_gate``, ``load``, ...)."""
        self.options = options
        self.on_event = on_event
        self.device = device
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._closers: list[Callable[[], None]] = []
        self.live: Any = None
        self.shoe: Any = None

    def config(self, device: str, journal: Path) -> TableConfig:
        """The table configuration the simulated table runs with."""
        o = self.options
        scale = 0.0 if o.speed <= 0 else 1.0 / o.speed
        return TableConfig(
            table_id=o.table, variant=o.variant, journal=journal,
            sources=("shoe", "camera") if o.camera else ("shoe",),
            variants_dir=o.variants_dir, betting_seconds=dealer_betting_seconds(o),
            result_seconds=3 * scale,
            shoe=ShoeConfig(
                device, protocol=o.shoe_protocol, accept_unverified=not o.camera,
                # A line reader's time windows scale with the dealer's pace; a double read's
                # copy arrives within a millisecond, so it is caught even at full speed.
                repeat_seconds=max(0.5 * scale, 0.02), burst_seconds=0.15 * scale,
            ),
            panel=PanelConfig("mock", dict(DEFAULT_PINS)),
            publish=PublishConfig(endpoint=o.publish, snapshot=o.snapshot, control=o.control),
            source="table-controller sim", rig_ops=True, evidence=EvidenceConfig(enabled=o.evidence),
            journal_rotation=o.journal_rotation,
        )

    def run(self) -> SimReport:
        """Play the asked-for rounds; returns the report."""
        try:
            return self._run()
        finally:
            self.close()

    def start(self) -> SimulatedDealer:
        """Start shoe and table; returns the dealer (for tests that deal by hand)."""
        from gpiozero.pins.mock import MockFactory

        from firmware_interfaces.shoe import open_pty_pair
        from firmware_interfaces.shoe.protocols import simulator_for
        from table_controller.assembly import LiveTable

        o = self.options
        scale = 0.0 if o.speed <= 0 else 1.0 / o.speed
        shoe_faults, dealer_faults = split_faults(o.faults)
        journal = o.journal
        if journal is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="table-sim-")
            journal = Path(self._tmp.name) / f"{o.table}.sqlite"
        if self.device is not None:
            master_fd, device = -1, self.device[0]
        else:
            master_fd, device = open_pty_pair()
        config = self.config(device, journal)
        camera_parts = self._simulated_camera(config.variant) if o.camera else None
        live = LiveTable(config, pin_factory=MockFactory(), camera_parts=camera_parts)
        self.live = live
        self._closers.append(live.close)

        def press(name: str) -> None:
            pin = live.pin_factory.pin(DEFAULT_PINS[name])
            pin.drive_low()
            pin.drive_high()

        # The dealer watches the table's events from before the shoe powers on.
        pace = 1.0 * scale
        if o.shoe_protocol == "lines":
            pace = max(pace, 0.05)  # two same cards in a row must not look like one read twice
        dealer = SimulatedDealer(
            live.game, None, live.controller, press, pace=pace,
            betting_seconds=dealer_betting_seconds(o), seed=o.seed, faults=dealer_faults,
            camera=camera_parts[0] if camera_parts else None,
        )
        if self.device is not None:
            self.shoe = self.device[1]
        else:
            simulator, fault_plan = simulator_for(o.shoe_protocol)
            self.shoe = simulator(
                master_fd, decks=live.game.decks, seed=o.seed, cut_at=dealer.cut_position(),
                cards=o.cards, faults=fault_plan.parse(shoe_faults, seed=o.seed) if shoe_faults else None,
            )
        dealer.shoe = self.shoe
        # Close order: the table first (its driver stops reading), then the shoe (ours only).
        if self.device is None:
            self._closers.insert(0, self.shoe.close)
        if self.on_event is not None:
            live.controller.listeners.append(self.on_event)
        self.shoe.start()
        live.start()
        if not live.controller.link_ready.wait(10):
            raise ConfigError(f"the simulated shoe on {device} did not answer within 10 s")
        dealer.take_loaded_shoe()  # the shoe powered on loaded: NEWSHOE, then the burn
        return dealer

    def _simulated_camera(self, variant: str) -> tuple[Any, Any]:
        from table_controller.rules.registry import load_game
        from table_controller.sim.camera import simulated_camera

        game_id = load_game(variant, self.options.variants_dir).game_id
        return simulated_camera(game_id, self.options.camera or "svg-cards", self.options.seed)

    def _run(self) -> SimReport:
        dealer = self.start()
        live = self.live
        for _ in range(self.options.rounds):
            if live.stopped.is_set():
                break
            dealer.play_round(live.stopped)
        return SimReport(
            rounds=dealer.stats.rounds, results=dealer.stats.results, voids=dealer.stats.voids,
            cards=dealer.stats.cards, events=live.controller.stats.events,
            faults=dict(dealer.stats.faults), journal=str(live.config.journal),
        )

    def close(self) -> None:
        for close in reversed(self._closers):
            try:
                close()
            except Exception:
                log.exception("closing the simulated table")
        self._closers.clear()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
