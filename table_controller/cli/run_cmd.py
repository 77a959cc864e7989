"""``table-controller run``: run a real table from its configuration file."""

from __future__ import annotations

import argparse
import dataclasses
import signal
import threading
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    run = subparsers.add_parser(
        "run", help="run a table from its configuration file",
        description="Runs one table until SIGTERM or Ctrl-C. The configuration is validated first.",
    )
    run.add_argument("--config", type=Path, required=True, help="the table's TOML configuration")
    run.add_argument("--publish", metavar="ENDPOINT", help="override publish.endpoint")
    run.add_argument("--snapshot", metavar="ENDPOINT", help="override publish.snapshot")
    run.add_argument("--check", action="store_true", help="only validate the configuration and exit")
    run.add_argument("--json", action="store_true", help="print every event as a JSON line")
    run.set_defaults(func=run_table)


def run_table(args: argparse.Namespace) -> int:
    from table_controller.config import load_config

    config = load_config(args.config)
    if args.publish or args.snapshot:
        publish = dataclasses.replace(
            config.publish,
            endpoint=args.publish or config.publish.endpoint,
            snapshot=args.snapshot or config.publish.snapshot,
        )
        config = dataclasses.replace(config, publish=publish)
    if args.check:
        print(f"{args.config}: configuration of table {config.table_id} ({config.variant}) is valid")
        return 0

    from table_controller.assembly import LiveTable
    from table_controller.cli.sim_cmd import describe
    from table_controller.events import to_json

    live = LiveTable(config)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())

    def show(event: dict) -> None:
        line = to_json(event) if args.json else describe(event)
        if line:
            print(line, flush=True)

    live.controller.listeners.append(show)
    try:
        live.start()
        while not done.wait(0.5):
            if live.failed.is_set():
                return 1
    finally:
        live.close()
    return 0
