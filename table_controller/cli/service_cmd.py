"""``table-controller install-service``: systemd units for the table, the archive and the studio API."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

from table_controller.errors import ConfigError


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "install-service", help="write systemd units: the table (with a watchdog), the archive, the studio API",
        description="Writes a hardened systemd unit (docs/service.md) into --dir, or prints it with --print. "
                    "The table's unit is Type=notify with a watchdog its loop feeds: a crashed or hung table "
                    "is restarted. Then: systemctl daemon-reload && systemctl enable --now UNIT.",
    )
    p.add_argument("kind", choices=["table", "archive", "studio", "prune"],
                   help="which service (prune: a nightly timer compressing and pruning the table's closed "
                        "journal segments; --db names the archive that must hold them first)")
    p.add_argument("--config", type=Path, help="table: its configuration file (checked first)")
    p.add_argument("--db", help="archive, studio: the archive (a SQLite path or postgresql://...)")
    p.add_argument("--table", action="append", default=[], metavar="TABLE=ENDPOINT",
                   help="archive: a table to follow (repeat)")
    p.add_argument("--port", type=int, default=8090, help="studio: the API's port (default 8090)")
    p.add_argument("--user", default="tablectl", help="the account the service runs as (default tablectl)")
    p.add_argument("--device", action="append", default=[], metavar="PATH",
                   help="table: a device it may open (default the serial ports and /dev/gpiochip0)")
    p.add_argument("--watchdog", type=int, default=10, metavar="SECONDS", help="table: WatchdogSec (default 10)")
    p.add_argument("--program", help="the table-controller command (default: this one's path)")
    p.add_argument("--dir", type=Path, default=Path("/etc/systemd/system"), help="where units go")
    p.add_argument("--print", action="store_true", help="print the unit instead of writing it")
    p.set_defaults(func=run_install_service)


def run_install_service(args: argparse.Namespace) -> int:
    from table_controller.service.units import archive_unit, prune_units, studio_unit, table_unit

    program = args.program or shutil.which("table-controller") or f"{sys.executable} -m table_controller"
    if args.kind == "table":
        if args.config is None:
            raise ConfigError("install-service table: --config FILE is required")
        from table_controller.config import load_config

        config = load_config(args.config)  # a unit for a configuration that does not load would only fail later
        devices = args.device or ["char-ttyUSB", "char-ttyACM", "char-ttyS", "/dev/gpiochip0"]
        unit = table_unit(config.table_id, str(args.config.resolve()), program=program, user=args.user,
                          state_dir="table-controller", devices=devices, watchdog_seconds=args.watchdog)
    elif args.kind == "prune":
        if args.config is None:
            raise ConfigError("install-service prune: --config FILE is required (the table's journal is named there)")
        from table_controller.config import load_config

        config = load_config(args.config)
        return _write(prune_units(config.table_id, str(config.journal), archive=args.db, program=program,
                                  user=args.user, state_dir="table-controller"), args)
    elif args.kind == "archive":
        if not args.db or not args.table:
            raise ConfigError("install-service archive: --db and at least one --table are required")
        unit = archive_unit(args.db, args.table, program=program, user=args.user, state_dir="table-controller")
    else:
        if not args.db:
            raise ConfigError("install-service studio: --db is required")
        unit = studio_unit(args.db, program=program, user=args.user, state_dir="table-controller", port=args.port)
    return _write([unit], args)


def _write(units: list[Any], args: argparse.Namespace) -> int:
    """Print the units (``--print``) or write them into ``--dir``; the last one is what to enable."""
    if args.print:
        print("\n".join(unit.text for unit in units), end="")
        return 0
    args.dir.mkdir(parents=True, exist_ok=True)
    for unit in units:
        (args.dir / unit.name).write_text(unit.text)
        print(f"{args.dir / unit.name} written")
    print(f"now: systemctl daemon-reload && systemctl enable --now {units[-1].name}")
    return 0
