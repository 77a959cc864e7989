"""systemd unit files for a table PC: the table, the studio archive and the studio API.

``table-controller install-service`` writes them (or prints them with ``--print``). The
table's unit is ``Type=notify`` with a watchdog its loop feeds (service/notify.py): a
crashed table is restarted by ``Restart=always``, a hung one by the watchdog. Every unit
runs as a dedicated user and is hardened: the file system read-only but for its state
folder, no new privileges, no devices but the serial ports and the GPIO chip the table
uses (through the ``dialout`` and ``gpio`` groups and ``DeviceAllow=``).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

#: Hardening shared by every unit (systemd.exec(5)).
HARDENING = """\
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
RestrictSUIDSGID=yes
LockPersonality=yes
RestrictNamespaces=yes
RestrictRealtime=yes
SystemCallArchitectures=native
"""


@dataclass(frozen=True)
class Unit:
    """One unit file: its name and text."""

    name: str
    text: str


def _exec(program: str, args: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in [program, *args])


def table_unit(table: str, config: str, *, program: str, user: str, state_dir: str,
               devices: list[str], watchdog_seconds: int = 10) -> Unit:
    """The table's unit: ``table-controller run --config CONFIG`` under a watchdog."""
    device_lines = "".join(f"DeviceAllow={d} rw\n" for d in devices)
    text = f"""\
# Written by table-controller install-service (docs/service.md)
[Unit]
Description=Card table {table} (table-controller)
After=network-online.target
Wants=network-online.target

[Service]
Type=notify
NotifyAccess=main
ExecStart={_exec(program, ["run", "--config", config])}
WatchdogSec={watchdog_seconds}
Restart=always
RestartSec=2
TimeoutStopSec=20
User={user}
Group={user}
SupplementaryGroups=dialout gpio
StateDirectory={state_dir}
ReadWritePaths=/var/lib/{state_dir}
DevicePolicy=closed
{device_lines}{HARDENING}
[Install]
WantedBy=multi-user.target
"""
    return Unit(f"table-controller-{table}.service", text)


def _studio_service(name: str, description: str, after: str, exec_args: list[str], *, program: str, user: str,
                    state_dir: str) -> Unit:
    """A studio-side unit (no devices): the archive or the studio API."""
    text = f"""\
# Written by table-controller install-service (docs/service.md)
[Unit]
Description={description} (table-controller)
After=network-online.target {after}
Wants=network-online.target

[Service]
Type=simple
ExecStart={_exec(program, exec_args)}
Restart=always
RestartSec=2
User={user}
Group={user}
StateDirectory={state_dir}
ReadWritePaths=/var/lib/{state_dir}
PrivateDevices=yes
{HARDENING}
[Install]
WantedBy=multi-user.target
"""
    return Unit(name, text)


def archive_unit(db: str, tables: list[str], *, program: str, user: str, state_dir: str) -> Unit:
    """The studio archive's unit: ``table-controller archive follow``."""
    args = ["archive", "follow", "--db", db] + [w for t in tables for w in ("--table", t)]
    return _studio_service("table-controller-archive.service", "Studio archive", "postgresql.service", args,
                           program=program, user=user, state_dir=state_dir)


def studio_unit(db: str, *, program: str, user: str, state_dir: str, port: int = 8090) -> Unit:
    """The studio API's unit: ``table-controller studio serve``."""
    return _studio_service("table-controller-studio.service", "Studio API", "table-controller-archive.service",
                           ["studio", "serve", "--db", db, "--port", str(port)],
                           program=program, user=user, state_dir=state_dir)


def prune_units(table: str, journal: str, *, archive: str | None, program: str, user: str,
                state_dir: str, on_calendar: str = "*-*-* 04:30:00") -> list[Unit]:
    """A nightly ``journal prune`` of one table's closed segments: a oneshot service and its timer.

    Compresses the closed segments and, with ``archive``, removes those the archive holds
    (docs/journal.md, Segments). The live segment is the table's and is never touched."""
    args = ["journal", "prune", "--journal", journal, "--compress"] + (["--archive", archive] if archive else [])
    service = f"""\
# Written by table-controller install-service (docs/service.md)
[Unit]
Description=Compress and prune the closed journal segments of table {table} (table-controller)

[Service]
Type=oneshot
ExecStart={_exec(program, args)}
Nice=10
IOSchedulingClass=idle
User={user}
Group={user}
ReadWritePaths=/var/lib/{state_dir}
PrivateDevices=yes
{HARDENING}"""
    timer = f"""\
# Written by table-controller install-service (docs/service.md)
[Unit]
Description=Nightly journal prune of table {table} (table-controller)

[Timer]
OnCalendar={on_calendar}
RandomizedDelaySec=600
Persistent=true

[Install]
WantedBy=timers.target
"""
    name = f"table-controller-prune-{table}"
    return [Unit(f"{name}.service", service), Unit(f"{name}.timer", timer)]
