"""A table's configuration: one TOML file, validated on load.

Every mistake gives one :class:`~table_controller.errors.ConfigError` that
names the file and the key (``T01.toml: panel.lamp_alarm: missing``). See
``table_controller/configs/`` for an example per game and ``docs/config.md``.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from table_controller.errors import ConfigError, TableError
from table_controller.journal.segments import ROTATE_EVERY, RotateEvery, RotationPolicy

PANEL_PINS = (
    "start_round", "close_betting", "card_dropped", "void_request", "supervisor_key",
    "lamp_betting", "lamp_dealing", "lamp_alarm", "buzzer",
)
CARD_SOURCES = ("shoe", "camera")


@dataclass(frozen=True)
class ShoeConfig:
    """The card reader: where it is (any pyserial URL: ``/dev/ttyUSB0``, ``socket://host:port``,
    or ``hid:/dev/input/eventN``) and which protocol it speaks (``slp1`` smart shoe, ``lines``
    plain reader; ``firmware_interfaces.shoe.protocols``)."""

    port: str
    baudrate: int = 115200
    protocol: str = "slp1"
    pattern: str | None = None  # lines: a regex with groups rank and suit
    #: A line reader as the only card source, accepted knowing what it cannot guarantee.
    accept_unverified: bool = False
    repeat_seconds: float = 0.5  # lines: the same card again within this is a double read
    burst_seconds: float = 0.15  # lines: two cards closer than this is an alert

    def driver_options(self) -> dict[str, object]:
        """The protocol-specific keyword arguments of the reader's driver."""
        if self.protocol != "lines":
            return {}
        return {
            "pattern": self.pattern, "repeat_window": self.repeat_seconds,
            "burst_window": self.burst_seconds,
        }


@dataclass(frozen=True)
class CameraConfig:
    """The overhead camera: which kind of source (``opencv``: a device index, URL or video file;
    ``files``: an image folder; ``sim``: a simulated camera, ``source`` naming the deck design),
    where it is, and its calibration. Kinds: ``firmware_interfaces.camera.sources.CAMERA_SOURCES``."""

    source: str
    kind: str = "opencv"
    calibration: Path | None = None
    layout: str | None = None
    stable_frames: int = 3
    fps: float = 15.0


@dataclass(frozen=True)
class EvidenceConfig:
    """The camera's pictures (docs/evidence.md): where they go, their sizes, how long they stay.
    ``dir`` None: ``<journal>.evidence`` beside the journal."""

    enabled: bool = True
    dir: Path | None = None
    card_px: int = 280
    frame_width: int = 960
    quality: int = 85
    retention_days: float | None = 90.0
    max_mb: float | None = None


@dataclass(frozen=True)
class PanelConfig:
    """The dealer's panel: gpiozero pin factory by name (``native``, ``mock``, ``lgpio``, ...:
    ``table_controller.panel.PIN_FACTORIES``) and BCM pin numbers."""

    gpio: str
    pins: dict[str, int]


@dataclass(frozen=True)
class PublishConfig:
    """ZeroMQ endpoints (events.md defaults) and optional CURVE security."""

    endpoint: str | None = "tcp://127.0.0.1:5556"  # None: publish nothing (a bare simulated table)
    snapshot: str | None = "tcp://127.0.0.1:5557"
    control: str | None = "tcp://127.0.0.1:5558"  # None: no supervisor control socket
    server_secret_key: Path | None = None
    authorized_clients: Path | None = None
    #: Serve beyond loopback without CURVE (anyone on the network may listen and ask).
    insecure: bool = False


@dataclass(frozen=True)
class TableConfig:
    """Everything one table needs, validated."""

    table_id: str
    variant: str
    journal: Path
    sources: tuple[str, ...] = ("shoe",)
    variants_dir: Path | None = None
    betting_seconds: float = 15
    result_seconds: float = 3
    interrupted_round: str = "resume"
    shoe: ShoeConfig | None = None
    camera: CameraConfig | None = None
    panel: PanelConfig = field(default_factory=lambda: PanelConfig("mock", dict(DEFAULT_PINS)))
    publish: PublishConfig = field(default_factory=PublishConfig)
    supervisor_tokens: tuple[str, ...] = ()
    source: str = "<built in>"
    #: Signed checkpoints at every round end: (Ed25519 signing key, checkpoint file) or None.
    checkpoints: tuple[Path, Path] | None = None
    #: A test rig: the control socket also takes a rig's hands (press a mock button, lay a
    #: card under a simulated camera). Never on a production table.
    rig_ops: bool = False
    #: The camera's pictures: kept when the table has a camera and this is enabled.
    evidence: EvidenceConfig = field(default_factory=EvidenceConfig)
    #: ``/metrics`` and ``/healthz`` (service/metrics.py) on this host:port; None: not served.
    metrics_listen: tuple[str, int] | None = None
    #: When the journal starts a new segment (journal/segments.py); never: one file.
    journal_rotation: RotationPolicy = field(default_factory=RotationPolicy)

    @property
    def evidence_dir(self) -> Path:
        return self.evidence.dir or self.journal.with_name(self.journal.name + ".evidence")


#: Pins of the reference panel wiring (docs/panel.md).
DEFAULT_PINS: dict[str, int] = {
    "start_round": 17, "close_betting": 27, "card_dropped": 22, "void_request": 23,
    "supervisor_key": 24, "lamp_betting": 5, "lamp_dealing": 6, "lamp_alarm": 13, "buzzer": 19,
}


class _Section:
    """Reads one TOML table, naming the file and key in every error."""

    def __init__(self, data: Any, where: str, name: str) -> None:
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: [{name}] must be a table")
        self.data, self.where, self.name = data, where, name
        self.used: set[str] = set()

    def _key(self, key: str) -> str:
        return f"{self.where}: {self.name}.{key}" if self.name else f"{self.where}: {key}"

    def get(
        self,
        key: str,
        kind: type | tuple[type, ...],
        default: Any = ...,
        check: Callable[[Any], str | None] | None = None,
    ) -> Any:
        self.used.add(key)
        if key not in self.data:
            if default is ...:
                raise ConfigError(f"{self._key(key)}: missing")
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise ConfigError(f"{self._key(key)}: expected {names}, got {value!r}")
        problem = check(value) if check else None
        if problem:
            raise ConfigError(f"{self._key(key)}: {problem}")
        return value

    def finish(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise ConfigError(f"{self._key(unknown[0])}: unknown key (allowed: {', '.join(sorted(self.used))})")


def _positive(value: Any) -> str | None:
    if not math.isfinite(value):
        return f"must be a finite number, not {value}"
    return None if value > 0 else f"must be greater than 0, not {value}"


def _non_negative(value: Any) -> str | None:
    if not math.isfinite(value):
        return f"must be a finite number, not {value}"
    return None if value >= 0 else f"must be 0 or more, not {value}"


def _one_of(*choices: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value in choices else f"must be one of {', '.join(choices)}, not {value!r}"

    return check


def _pin(value: Any) -> str | None:
    return None if 0 <= value <= 27 else f"BCM pin must be 0..27, not {value}"


def _path(base: Path, text: str, key: str) -> Path:
    """``text`` (``~`` expanded) relative to the configuration's folder; ``key``: "T01.toml: x.y"."""
    try:
        path = Path(text).expanduser()
    except (RuntimeError, ValueError) as e:  # "~someone" of a user this machine does not know, a NUL
        raise ConfigError(f"{key}: {text!r}: {e}") from None
    return path if path.is_absolute() else base / path


def parse_config(data: dict[str, Any], where: str, base: Path = Path(".")) -> TableConfig:
    """Validate a decoded configuration (``base`` resolves relative paths)."""
    top = _Section(data, where, "")
    for section in ("table", "sources", "shoe", "camera", "panel", "publish", "journal", "supervisor", "rig",
                    "evidence", "metrics"):
        top.used.add(section)
    top.finish()

    t = _Section(data.get("table", {}), where, "table")
    table_id = t.get("id", str, check=lambda v: None if v and v.isidentifier() else "must be a short name like T01")
    variant = t.get("variant", str)
    variants_dir = t.get("variants_dir", str, None)
    betting = t.get("betting_seconds", (int, float), 15, _non_negative)
    result = t.get("result_seconds", (int, float), 3, _non_negative)
    policy = t.get("interrupted_round", str, "resume", _one_of("resume", "void"))
    t.finish()

    s = _Section(data.get("sources", {}), where, "sources")
    cards = s.get("cards", list, ["shoe"])
    s.finish()
    for source in cards:
        if source not in CARD_SOURCES:
            raise ConfigError(f"{where}: sources.cards: unknown source {source!r} (known: shoe, camera)")
    if not cards:
        raise ConfigError(f"{where}: sources.cards: name at least one card source")

    shoe = None
    if "shoe" in cards or "shoe" in data:
        shoe = _shoe_config(_Section(data.get("shoe", {}), where, "shoe"), cards)
    camera = None
    if "camera" in cards or "camera" in data:
        c = _Section(data.get("camera", {}), where, "camera")
        calibration = c.get("calibration", str, None)
        kind, source = _camera_source(c)
        camera = CameraConfig(
            source=source,
            kind=kind,
            calibration=_path(base, calibration, f"{where}: camera.calibration") if calibration else None,
            layout=c.get("layout", str, None),
            stable_frames=c.get("stable_frames", int, 3, _positive),
            fps=c.get("fps", (int, float), 15.0, _positive),
        )
        c.finish()

    p = _Section(data.get("panel", {}), where, "panel")
    from table_controller.panel import PIN_FACTORIES

    gpio = p.get("gpio", str, "native", _one_of(*PIN_FACTORIES.names()))
    pins = {name: p.get(name, int, check=_pin) for name in PANEL_PINS}
    p.finish()
    taken: dict[int, str] = {}
    for name, pin in pins.items():
        if pin in taken:
            raise ConfigError(f"{where}: panel.{name}: pin {pin} is already panel.{taken[pin]}")
        taken[pin] = name

    pub = _Section(data.get("publish", {}), where, "publish")
    secret = pub.get("server_secret_key", str, None)
    clients = pub.get("authorized_clients", str, None)
    publish = PublishConfig(
        endpoint=pub.get("endpoint", str, "tcp://127.0.0.1:5556"),
        snapshot=pub.get("snapshot", str, "tcp://127.0.0.1:5557"),
        control=pub.get("control", str, "tcp://127.0.0.1:5558"),
        server_secret_key=_path(base, secret, f"{where}: publish.server_secret_key") if secret else None,
        authorized_clients=_path(base, clients, f"{where}: publish.authorized_clients") if clients else None,
        insecure=pub.get("insecure", bool, False),
    )
    pub.finish()
    if (secret is None) != (clients is None):
        raise ConfigError(f"{where}: publish.server_secret_key and publish.authorized_clients go together (CURVE)")
    _check_binds(publish, where)

    j = _Section(data.get("journal", {}), where, "journal")
    journal = _path(base, j.get("path", str), f"{where}: journal.path")
    signing_key = j.get("signing_key", str, None)
    checkpoint_file = j.get("checkpoints", str, None)
    rotate = j.get("rotate", str, "never")
    segment_mb = j.get("segment_mb", (int, float), 256)
    j.finish()
    if rotate not in ROTATE_EVERY:
        raise ConfigError(f"{where}: journal.rotate must be one of {', '.join(ROTATE_EVERY)}, not {rotate!r}")
    if isinstance(segment_mb, bool) or not 0.01 <= segment_mb <= 65536:
        raise ConfigError(f"{where}: journal.segment_mb must be a number of MB from 0.01 to 65536")
    if (signing_key is None) != (checkpoint_file is None):
        raise ConfigError(f"{where}: journal.signing_key and journal.checkpoints go together")
    checkpoints = (
        (
            _path(base, signing_key, f"{where}: journal.signing_key"),
            _path(base, checkpoint_file, f"{where}: journal.checkpoints"),
        )
        if signing_key and checkpoint_file
        else None
    )

    ev = _Section(data.get("evidence", {}), where, "evidence")
    evidence_dir = ev.get("dir", str, None)
    retention = ev.get("retention_days", (int, float), 90, _non_negative)
    max_mb = ev.get("max_mb", (int, float), 0, _non_negative)
    evidence = EvidenceConfig(
        enabled=ev.get("enabled", bool, True),
        dir=_path(base, evidence_dir, f"{where}: evidence.dir") if evidence_dir else None,
        card_px=ev.get("card_px", int, 280, _positive),
        frame_width=ev.get("frame_width", int, 960, _positive),
        quality=ev.get("quality", int, 85, lambda v: None if 10 <= v <= 100 else "must be 10..100"),
        retention_days=float(retention) or None,
        max_mb=float(max_mb) or None,
    )
    ev.finish()
    mt = _Section(data.get("metrics", {}), where, "metrics")
    listen = mt.get("listen", str, None)
    mt.finish()
    metrics_listen = None
    if listen is not None:
        host, _, port = listen.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ConfigError(f"{where}: metrics.listen: write HOST:PORT, e.g. 127.0.0.1:9108, not {listen!r}")
        metrics_listen = (host, int(port))

    from table_controller.tokens import check_stored_form

    rig = _Section(data.get("rig", {}), where, "rig")
    rig_ops = rig.get("control_ops", bool, False)
    rig.finish()
    if rig_ops and gpio != "mock":
        raise ConfigError(f'{where}: rig.control_ops: only for a test rig (panel.gpio = "mock")')

    sup = _Section(data.get("supervisor", {}), where, "supervisor")
    salted = sup.get("tokens", list, [])
    legacy = sup.get("token_sha256", list, [])
    sup.finish()
    for token in salted:
        problem = check_stored_form(token)
        if problem is None and len(token) == 64:
            problem = "an unsalted SHA-256 belongs in supervisor.token_sha256 (better: keys token)"
        if problem:
            raise ConfigError(f"{where}: supervisor.tokens: {problem}")
    for token in legacy:
        if not (isinstance(token, str) and len(token) == 64 and all(ch in "0123456789abcdef" for ch in token)):
            raise ConfigError(f"{where}: supervisor.token_sha256: {token!r} is not a lower-case SHA-256 hex digest")
    tokens = [*salted, *legacy]

    config = TableConfig(
        table_id=table_id,
        variant=variant,
        journal=journal,
        sources=tuple(cards),
        variants_dir=_path(base, variants_dir, f"{where}: table.variants_dir") if variants_dir else None,
        betting_seconds=betting,
        result_seconds=result,
        interrupted_round=policy,
        shoe=shoe,
        camera=camera,
        panel=PanelConfig(gpio, pins),
        publish=publish,
        supervisor_tokens=tuple(tokens),
        source=where,
        checkpoints=checkpoints,
        rig_ops=rig_ops,
        evidence=evidence,
        metrics_listen=metrics_listen,
        journal_rotation=RotationPolicy(cast(RotateEvery, rotate), int(segment_mb * 1024 * 1024)),
    )
    _check_variant(config)
    return config


def _check_binds(publish: PublishConfig, where: str) -> None:
    """A socket that other hosts reach needs CURVE, or an explicit ``insecure = true``.

    With CURVE keys every socket, the control socket included, is a CURVE server.
    """
    from table_controller.publish.publisher import binds_beyond_loopback

    if publish.insecure or publish.server_secret_key is not None:
        return
    keys = ("endpoint", "snapshot", "control")
    for key in keys:
        endpoint = getattr(publish, key)
        if endpoint and binds_beyond_loopback(endpoint):
            raise ConfigError(
                f"{where}: publish.{key}: {endpoint} listens beyond this machine without CURVE: "
                "anyone on the network could listen or ask. "
                "Set publish.server_secret_key and publish.authorized_clients, bind 127.0.0.1, "
                "or set publish.insecure = true"
            )


#: The old way to name a simulated camera: ``camera.source = "sim:DECK"`` without ``camera.kind``.
LEGACY_SIM_PREFIX = "sim:"


def _camera_source(c: _Section) -> tuple[str, str]:
    """(kind, source) of the camera section: ``camera.kind`` names the backend, ``camera.source``
    says where it is (for ``sim``: the deck design, ``svg-cards`` if none).

    Without ``camera.kind`` (configurations before it existed) the kind is ``opencv``, or ``sim``
    for a source ``"sim:DECK"``; an image folder needs ``kind = "files"``.
    """
    from firmware_interfaces.camera.sources import CAMERA_SOURCES

    kind = c.get("kind", str, None, _one_of(*CAMERA_SOURCES.names()))
    raw = c.get("source", (str, int), "svg-cards" if kind == "sim" else ...)
    source = str(raw)
    if kind is None:
        legacy_sim = isinstance(raw, str) and raw.startswith(LEGACY_SIM_PREFIX)
        kind = "sim" if legacy_sim else "opencv"
        if legacy_sim:
            source = source[len(LEGACY_SIM_PREFIX):] or "svg-cards"
    elif kind == "sim" and source.startswith(LEGACY_SIM_PREFIX):
        raise ConfigError(f"{c._key('source')}: with kind = \"sim\" the source is the deck design, "
                          f"not {source!r}")
    return kind, source


def _shoe_config(sh: _Section, cards: list[str]) -> ShoeConfig:
    from firmware_interfaces.shoe.errors import ShoeProtocolError
    from firmware_interfaces.shoe.guarantees import SMART_SHOE
    from firmware_interfaces.shoe.protocols import SHOE_PROTOCOLS, protocol_class

    protocol = sh.get("protocol", str, "slp1", _one_of(*sorted(SHOE_PROTOCOLS)))
    pattern = sh.get("pattern", str, None)
    config = ShoeConfig(
        sh.get("port", str),
        sh.get("baudrate", int, 115200, _positive),
        protocol,
        pattern,
        sh.get("accept_unverified", bool, False),
        sh.get("repeat_seconds", (int, float), 0.5, _non_negative),
        sh.get("burst_seconds", (int, float), 0.15, _non_negative),
    )
    sh.finish()
    for key in ("repeat_seconds", "burst_seconds"):
        if key in sh.data and protocol != "lines":
            raise ConfigError(f'{sh._key(key)}: only for protocol "lines", not {protocol!r}')
    try:
        guarantees = getattr(protocol_class(protocol), "guarantees", SMART_SHOE)
    except ShoeProtocolError as e:
        raise ConfigError(f"{sh._key('protocol')}: {e}") from e
    if pattern is not None:
        if protocol != "lines":
            raise ConfigError(f'{sh._key("pattern")}: only for protocol "lines", not {protocol!r}')
        from firmware_interfaces.shoe.lines import compile_pattern

        try:
            compile_pattern(pattern)
        except ShoeProtocolError as e:
            raise ConfigError(f"{sh._key('pattern')}: {e}") from e
    if "camera" not in cards and guarantees.missing() and not config.accept_unverified:
        raise ConfigError(
            f"{sh._key('protocol')}: {protocol!r} as the only card source: such a reader gives "
            f'{"; ".join(guarantees.missing())}. Add "camera" to sources.cards to cross-check '
            "it, or set shoe.accept_unverified = true to run without"
        )
    return config


def _check_variant(config: TableConfig) -> None:
    from table_controller.rules.registry import load_variant

    try:
        load_variant(config.variant, config.variants_dir)
    except TableError as e:
        raise ConfigError(f"{config.source}: table.variant: {e}") from e


def load_config(path: Path) -> TableConfig:
    """Read and validate a table configuration file."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: byte {e.start} is not UTF-8") from e
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML: nested too deep") from None
    except ValueError as e:  # e.g. an integer of more than 4300 digits
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from e
    return parse_config(data, str(path), path.parent)
