"""Build a running table from its configuration: journal, controller, shoe, panel, publisher.

``table-controller run`` and the simulated table both use :class:`LiveTable`;
the simulated table only points the shoe at a pseudo-terminal and the panel
at gpiozero's mock pins. Every backend is chosen by name from the configuration
through its registry (``shoe.protocol``, ``camera.kind``, ``panel.gpio``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from table_controller.config import TableConfig
from table_controller.controller import TableController
from table_controller.event_types import CardDealt, ShoeChanged
from table_controller.rules.registry import load_game

if TYPE_CHECKING:
    from calibration.store import Calibration
    from firmware_interfaces.camera.simulated import SimulatedCamera
    from firmware_interfaces.camera.sources import CameraSource
    from firmware_interfaces.shoe.events import CardDrawn
    from firmware_interfaces.shoe.protocols import ShoeBackend
    from table_controller.camera_watch import CameraWatcher
    from table_controller.control import ControlOps, ControlServer
    from table_controller.evidence.keeper import EvidenceKeeper
    from table_controller.journal.checkpoints import CheckpointSigner
    from table_controller.publish import CurveConfig, EventPublisher

log = logging.getLogger(__name__)


class LiveTable:
    """One table's parts, wired together; :meth:`start` it, then :meth:`close` it."""

    def __init__(
        self, config: TableConfig, *, pin_factory: Any = None, context: Any = None,
        camera_parts: tuple[CameraSource, Calibration] | None = None, new_journal: bool = False,
    ) -> None:
        """``camera_parts``: (camera source, calibration) to use instead of the configured camera
        (the simulated table passes its simulated camera). ``new_journal``: an existing but
        empty journal file may become a new journal (``--new-journal``)."""
        from table_controller.journal import Journal
        from table_controller.panel import DealerPanel, make_pin_factory

        self.config = config
        # Everything close() touches exists from the start: a failure half-way through
        # start-up reports its own cause, not an AttributeError of the clean-up.
        self.shoe: ShoeBackend | None = None
        self.camera: CameraWatcher | None = None
        #: The camera's pictures (docs/evidence.md): None without a camera or with evidence.enabled false.
        self.evidence: EvidenceKeeper | None = None
        #: The simulated camera of a ``camera.kind = "sim"`` table (a rig lays cards under it).
        self.simulated_camera: SimulatedCamera | None = None
        self.control: ControlServer | None = None
        self.publisher: EventPublisher | None = None
        self.game = load_game(config.variant, config.variants_dir)
        self._closers: list[Callable[[], None]] = []
        #: The parts that feed the loop from their own threads (camera, control socket):
        #: closed before the loop stops, so that a request they are answering still gets
        #: the loop's reply.
        self._input_closers: list[Callable[[], None]] = []
        self._stop = threading.Event()
        self._loop: threading.Thread | None = None
        #: Set when the controller loop died (e.g. the journal cannot commit); ``failure`` says why.
        self.failed = threading.Event()
        self.failure = ""
        self.metrics: Any = None
        try:
            self.journal = Journal(
                config.journal, table=config.table_id, game=self.game.game_id,
                variant=self.game.variant.id, new=new_journal, rotation=config.journal_rotation,
            )
            self._closers.append(self.journal.close)
            checked = self.journal.check_at_start()  # a broken journal is never extended
            log.info("journal %s: chain checked (%d new events)", config.journal, checked)
            self.publisher = self._make_publisher(context)
            self.controller = TableController(
                self.game, self.journal, table=config.table_id,
                betting_seconds=config.betting_seconds, result_seconds=config.result_seconds,
                interrupted_round=config.interrupted_round, has_shoe="shoe" in config.sources,
                publisher=self.publisher, card_sources=config.sources,
                checkpoints=self._make_signer(),
            )
            if self.publisher is not None:
                from table_controller.table.inputs import DeviceWarning

                controller = self.controller
                self.publisher.on_trouble = lambda text: controller.post(DeviceWarning(text))
            self.pin_factory = pin_factory if pin_factory is not None else make_pin_factory(config.panel.gpio)
            self.panel = DealerPanel(config.panel.pins, self.pin_factory, self.controller.on_button)
            self._closers.append(self.panel.close)
            self.controller.panel = self.panel
            self.shoe = self._make_shoe() if config.shoe is not None and "shoe" in config.sources else None
            self.controller.shoe = self.shoe
            if "camera" in config.sources:
                self.evidence = self._make_evidence()
                self.camera = self._make_camera(camera_parts)
                self._input_closers.append(self.camera.close)  # closed first: then the keeper finishes
            if config.publish.control:
                from table_controller.control import ControlServer

                if any(len(t) == 64 for t in config.supervisor_tokens):
                    log.warning("table %s: supervisor.token_sha256 stores tokens unsalted; replace "
                                "them with supervisor.tokens (table-controller keys token)",
                                config.table_id)

                self.control = ControlServer(
                    self.controller, config.publish.control, config.supervisor_tokens, context,
                    security=self._control_security(), extra_ops=self._rig_ops(),
                )
                self._input_closers.append(self.control.close)
        except BaseException:
            self.close()
            raise

    def _rig_ops(self) -> list[ControlOps]:
        """A test rig's hands on its control socket (``rig.control_ops``); none on a production table."""
        if not self.config.rig_ops:
            return []
        from table_controller.sim.control import RigControlOps

        return [RigControlOps(self.panel, self.simulated_camera)]

    def _control_security(self) -> CurveConfig | None:
        """The control socket is a CURVE server with the table's keys when the stream is."""
        pub = self.config.publish
        if pub.server_secret_key is None or pub.authorized_clients is None:
            return None
        from table_controller.publish import CurveConfig

        return CurveConfig(pub.server_secret_key, pub.authorized_clients)

    def _make_signer(self) -> CheckpointSigner | None:
        if self.config.checkpoints is None:
            return None
        from table_controller.journal.checkpoints import CheckpointSigner

        key, path = self.config.checkpoints
        return CheckpointSigner(key, path)

    def _make_publisher(self, context: Any) -> EventPublisher | None:
        pub = self.config.publish
        if not pub.endpoint:
            return None
        from table_controller.publish import CurveConfig, EventPublisher
        from table_controller.publish.publisher import binds_beyond_loopback

        for endpoint in (pub.endpoint, pub.snapshot, pub.control):
            if pub.insecure and endpoint and binds_beyond_loopback(endpoint) and pub.server_secret_key is None:
                log.warning("table %s: %s listens beyond this machine without CURVE "
                            "(publish.insecure = true)", self.config.table_id, endpoint)
        security = None
        if pub.server_secret_key is not None and pub.authorized_clients is not None:
            security = CurveConfig(pub.server_secret_key, pub.authorized_clients)
        from table_controller.publish.replay import JournalReplay

        publisher = EventPublisher(
            self.config.table_id, pub.endpoint, pub.snapshot or "tcp://127.0.0.1:0",
            security=security, context=context, replay=JournalReplay(self.journal.path, self.config.table_id),
        )
        self._closers.append(publisher.close)
        return publisher

    def _make_shoe(self) -> ShoeBackend:
        """The card reader's driver, by the configured protocol (slp1, lines, ...: SHOE_PROTOCOLS)."""
        from firmware_interfaces.shoe import LinkState, open_shoe, open_url

        shoe_config = self.config.shoe
        assert shoe_config is not None
        link = self.journal.link_state
        options = shoe_config.driver_options()
        return open_shoe(
            shoe_config.protocol, open_url(shoe_config.port, baudrate=shoe_config.baudrate),
            resume=LinkState(*link) if link else None,
            listener=self.controller.on_shoe_event, auto_ack=False,
            recent_events=self._recent_shoe_cards(), **options,
        )

    def _recent_shoe_cards(self) -> list[CardDrawn]:
        """The last shoe cards the journal holds, as the driver knows them (code and shoe count).

        Only the current shoe's: counts restart with each new shoe.
        """
        from firmware_interfaces.shoe import CardDrawn

        recent: list[CardDrawn] = []
        for event in self.journal.restore_events(types=["card", "shoe"]):
            match event:
                case ShoeChanged(event="new"):
                    recent.clear()
                case CardDealt(code=code, shoe_count=int(count)):
                    recent.append(CardDrawn(code, "", count, None))
                    del recent[:-16]
        return recent

    def _make_evidence(self) -> EvidenceKeeper | None:
        """The evidence keeper of a camera table, started (its pictures beside the journal)."""
        from table_controller.evidence.keeper import EvidenceKeeper, EvidenceSettings

        ev = self.config.evidence
        if not ev.enabled:
            return None
        keeper = EvidenceKeeper(EvidenceSettings(
            folder=self.config.evidence_dir, card_px=ev.card_px, frame_width=ev.frame_width, quality=ev.quality,
            retention_days=ev.retention_days, max_bytes=int(ev.max_mb * 1_000_000) if ev.max_mb else None,
        ), self.controller.post).start()
        self._input_closers.append(keeper.close)
        self.controller.evidence = keeper
        return keeper

    def _make_camera(self, parts: tuple[CameraSource, Calibration] | None) -> CameraWatcher:
        """The camera watcher: source, recogniser over the game's layout, stabiliser."""
        from calibration.errors import LayoutError
        from calibration.layout import load_layout
        from firmware_interfaces.camera import Recognizer, Stabilizer
        from table_controller.camera_watch import CameraWatcher
        from table_controller.errors import ConfigError

        camera = self.config.camera
        key = "camera.layout" if camera and camera.layout else "table.variant"
        try:
            layout = load_layout(camera.layout if camera and camera.layout else self.game.game_id)
        except LayoutError as e:
            raise ConfigError(f"{self.config.source}: {key}: {e}") from e
        source, calibration = parts if parts is not None else self._configured_camera()
        frames = camera.stable_frames if camera else 3
        watcher = CameraWatcher(
            source, Recognizer(calibration, layout), Stabilizer(frames=frames), self.controller.post,
            fps=camera.fps if camera else 15.0, evidence=self.evidence,
        )
        if self.evidence is not None:
            self.controller.latest_frame = watcher.latest
        return watcher

    def _configured_camera(self) -> tuple[CameraSource, Calibration]:
        """The configured camera source (``camera.kind`` of CAMERA_SOURCES) and its calibration.

        A simulated camera (``sim``, test rigs) is calibrated from its own empty table, like a
        studio would; every other kind reads ``camera.calibration``. A driver's error becomes
        a ConfigError naming the key.
        """
        from calibration.store import load_calibration
        from firmware_interfaces.camera import open_source
        from firmware_interfaces.errors import DeviceError
        from table_controller.errors import ConfigError

        camera = self.config.camera
        where = self.config.source
        if camera is None:
            raise ConfigError(f"{where}: [camera]: missing (a camera table needs one)")
        try:
            if camera.kind == "sim":
                from table_controller.sim.camera import simulated_camera

                simulated, calibration = simulated_camera(self.game.game_id, camera.source)
                self.simulated_camera = simulated
                return simulated, calibration
            if camera.calibration is None:
                raise ConfigError(f"{where}: camera.calibration: missing (a camera table needs one)")
            try:
                calibration = load_calibration(camera.calibration)
            except DeviceError as e:
                raise ConfigError(f"{where}: camera.calibration: {e}") from e
            return open_source(camera.kind, camera.source), calibration
        except DeviceError as e:
            raise ConfigError(f"{where}: camera ({camera.kind} {camera.source!r}): {e}") from e

    def start(self) -> None:
        """Restore from the journal, then start the loop and the devices."""
        if self.publisher is not None:
            self.publisher.start()
        if self.shoe is not None:
            self.shoe.start()  # its events wait on the controller's queue until the loop runs
        self.controller.restore()
        self._loop = threading.Thread(target=self._run_loop, name=f"table-{self.config.table_id}", daemon=True)
        self._loop.start()
        if self.camera is not None:
            self.camera.start()
        if self.control is not None:
            self.control.start()
        if self.config.metrics_listen is not None:
            self._start_metrics(*self.config.metrics_listen)

    def _start_metrics(self, host: str, port: int) -> None:
        """``/metrics`` and ``/healthz`` (service/metrics.py); healthy while the loop turned within
        2 s (it turns at least every quarter second) and the journal accepts appends."""
        from table_controller.service.metrics import MetricsServer, TableMetrics, loop_health

        self.metrics = TableMetrics(self)
        server = MetricsServer(self.metrics, lambda: loop_health(self, 2.0), host, port).start()
        self._closers.append(server.close)
        log.info("table %s: metrics on http://%s:%d/metrics", self.config.table_id, host, server.port)

    def _run_loop(self) -> None:
        try:
            self.controller.run(self._stop)
        except Exception as e:
            log.exception("table %s: the controller loop stopped", self.config.table_id)
            self.failure = f"{type(e).__name__}: {e}"
            self.failed.set()
            self._stop.set()

    @property
    def stopped(self) -> threading.Event:
        return self._stop

    def close(self) -> None:
        """Close the inputs (control socket, camera), stop the loop and the shoe, then close
        the rest (panel, publisher, journal), newest first."""
        self._close_all(self._input_closers)
        if self.evidence is not None and self._loop is not None and self._loop.is_alive():
            self.controller.wait_until_idle(timeout=3.0)  # the keeper's last pictures are journaled
        self._stop.set()
        if self.shoe is not None:
            try:
                self.shoe.close()
            except Exception:
                log.exception("closing the shoe driver")
        if self._loop is not None and self._loop.is_alive():  # a stop can come before its start
            self._loop.join(timeout=5)
        self._close_all(self._closers)

    def _close_all(self, closers: list[Callable[[], None]]) -> None:
        for close in reversed(closers):
            try:
                close()
            except Exception:
                log.exception("closing part of table %s", self.config.table_id)
        closers.clear()
