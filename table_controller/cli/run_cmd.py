"""``table-controller run``: run a real table from its configuration file."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from table_controller.errors import TableError


class StartupError(TableError, RuntimeError):
    """A part of the table (a device, a port) could not be started."""


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
    run.add_argument(
        "--new-journal", action="store_true",
        help="the journal file exists but is empty: start a new journal in it (never implied)",
    )
    run.set_defaults(func=run_table)

#: Exit statuses of `run`: the configuration or a device refused at start (2, as for every
#: command's refusal), the journal refused at start (3), the journal failed while running (4).
EXIT_JOURNAL_REFUSED = 3
EXIT_JOURNAL_FAILED = 4


def run_table(args: argparse.Namespace) -> int:
    """Start the table, run it until SIGTERM or SIGINT, close it: exit 0 on a stop at any
    moment. Up to the end of start-up a stop raises Terminated (table_controller.cli.main
    armed the handlers first and makes it exit 0); from then on it only sets a flag."""
    from table_controller.cli.stop_signals import STOP

    STOP.arm()  # already armed by main(); here for a caller of run_table itself
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

    from firmware_interfaces.errors import DeviceError
    from table_controller.assembly import LiveTable
    from table_controller.cli.sim_cmd import describe
    from table_controller.errors import TableError
    from table_controller.event_types import Event, encode_event
    from table_controller.journal.errors import JournalError
    from table_controller.service.logs import set_context
    from table_controller.service.notify import SystemdNotifier, Watchdog

    notifier = SystemdNotifier.from_environment()
    try:
        live = LiveTable(config, new_journal=args.new_journal)
    except JournalError as e:
        print(f"table-controller: table {config.table_id} not started: {e}", file=sys.stderr)
        return EXIT_JOURNAL_REFUSED
    except (TableError, DeviceError):
        raise
    except Exception as e:  # a device (a busy GPIO pin, a missing port): one line, not a traceback
        raise StartupError(f"table {config.table_id} not started: {type(e).__name__}: {e}") from e
    def show(event: Event) -> None:
        line = encode_event(event).decode("utf-8") if args.json else describe(event)
        if line:
            print(line, flush=True)

    # Nothing may come between the table's construction and the try below: a stop signal during
    # start-up raises there, and only the finally closes the table (its journal, its sockets).
    try:
        live.controller.listeners.append(show)
        set_context(table=config.table_id, round=lambda: live.controller.machine.round_id,
                    seq=lambda: live.controller.last_seq or None)
        watchdog = Watchdog(notifier, lambda: table_is_well(live, watchdog.interval or 1.0))
        try:
            live.start()
        except (TableError, DeviceError) as e:  # the journal cannot be replayed, the shoe not opened
            print(f"table-controller: table {config.table_id} not started: {e}", file=sys.stderr)
            return EXIT_JOURNAL_REFUSED
        STOP.running()  # started: a stop now ends the loop below, and the table closes in order
        notifier.ready(f"table {config.table_id} dealing")
        while not STOP.requested.wait(0.5):
            if live.failed.is_set():
                print(f"table-controller: table {config.table_id} stopped: {live.failure}",
                      file=sys.stderr)
                return EXIT_JOURNAL_FAILED
            watchdog.tick()
    finally:
        STOP.running()  # the table closes: a stop signal must not interrupt that
        notifier.stopping()
        live.close()
        notifier.close()
    return 0


def table_is_well(live: Any, within: float) -> bool:
    """The watchdog's question (service/metrics.py ``loop_health``): the loop turned within
    ``within`` seconds and the table has not failed."""
    from table_controller.service.metrics import loop_health

    return loop_health(live, within) is None
