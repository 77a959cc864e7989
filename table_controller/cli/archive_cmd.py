"""``table-controller archive``: the studio's archive of every table's events (follow, status)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from table_controller.cli.stop_signals import StopFlag, stop_on_signals
from table_controller.errors import ConfigError

if TYPE_CHECKING:
    from table_controller.archive import Archive

DB_HELP = ("the archive: a SQLite file's path, or postgresql://USER@HOST:PORT/DB (the password from "
           "PGPASSWORD or ~/.pgpass, not the command line)")


def patience_seconds(text: str) -> float:
    """A ``--wait-for-db`` value: seconds, 0 or more, ``inf`` for ever (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give seconds (0 or more), or 'inf'") from None
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text!r}: give seconds (0 or more), or 'inf'")
    return value


def open_existing(location: str) -> Archive:
    """Open an archive that must already exist (a SQLite path that is not a file is refused,
    rather than created empty)."""
    from table_controller.archive import open_archive
    from table_controller.archive.backends import backend_name

    if backend_name(location) == "sqlite" and not Path(location.removeprefix("sqlite:")).is_file():
        raise ConfigError(f"--db {location}: no such archive (table-controller archive follow makes it)")
    return open_archive(location)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    archive = subparsers.add_parser(
        "archive",
        help="archive every table's events exactly once, chain-checked (follow, status)",
        description=(
            "The studio's archive: every table's journaled events, pulled by seq from each "
            "table's replay endpoint (its snapshot endpoint), checked against the hash chain and "
            "kept once in the archive (a SQLite file, or PostgreSQL). See docs/archive.md."
        ),
    )
    sub = archive.add_subparsers(dest="archive_command", metavar="ACTION")
    sub.required = True
    follow = sub.add_parser("follow", help="keep the archive up with the tables until Ctrl-C or SIGTERM",
                            description="Pull every table's new events into the archive, every --poll "
                                        "seconds, raising an alert for a table that cannot be reached, "
                                        "whose chain does not continue the archive's, or that is far ahead.")
    follow.add_argument("--db", required=True, metavar="LOCATION", help=DB_HELP + " (created if absent)")
    follow.add_argument("--table", action="append", required=True, metavar="TABLE=ENDPOINT",
                        help="a table and its snapshot endpoint, e.g. T01=tcp://table-01:5557, or a journal "
                             "file, T01=file:/var/lib/table/T01.sqlite (repeat)")
    follow.add_argument("--client-key", type=Path, metavar="FILE",
                        help="the archive's CURVE secret key file (tables with CURVE)")
    follow.add_argument("--server-key-dir", type=Path, metavar="DIR",
                        help="folder of the tables' public keys, named table-<TABLE>.key")
    follow.add_argument("--poll", type=float, default=0.5, help="seconds between turns (default 0.5)")
    follow.add_argument("--once", action="store_true", help="catch every table up once, then exit")
    follow.add_argument("--json", action="store_true",
                        help="print each turn's result as JSON lines (without --once: each turn that archived "
                             "something or found a problem)")
    follow.add_argument("--wait-for-db", type=patience_seconds, metavar="SECONDS",
                        help="at start, wait up to this long for an archive server that does not answer yet "
                             "(restarting, booting), trying again with a growing pause and logging each try; "
                             "'inf' waits for ever (default: for ever, or 0 with --once)")
    follow.set_defaults(func=run_follow)
    status = sub.add_parser("status", help="every archived table's last seq, and the alerts",
                            description="What the archive holds: per table the last seq and hash, "
                                        "and every alert raised.")
    status.add_argument("--db", required=True, metavar="LOCATION", help=DB_HELP)
    status.add_argument("--json", action="store_true", help="one JSON object")
    status.set_defaults(func=run_status)


def _sources(args: argparse.Namespace) -> list:  # type: ignore[type-arg]
    from table_controller.archive import TableSource
    from table_controller.publish.security import ClientCurve

    if (args.client_key is None) != (args.server_key_dir is None):
        raise ConfigError("--client-key and --server-key-dir go together")
    out = []
    for spec in args.table:
        table, sep, endpoint = spec.partition("=")
        if not sep or not table or not endpoint.startswith(("tcp://", "ipc://", "inproc://", "file:")):
            raise ConfigError(f"--table {spec!r}: write TABLE=ENDPOINT, e.g. T01=tcp://table-01:5557 "
                              "(or T01=file:/path/T01.sqlite for a journal file)")
        curve = None
        if args.client_key is not None:
            curve = ClientCurve(args.client_key, args.server_key_dir / f"table-{table}.key")
        out.append(TableSource(table, endpoint, curve))
    return out


def run_follow(args: argparse.Namespace) -> int:
    import math

    from table_controller.archive import ArchiveFollower
    from table_controller.archive.backends import ArchiveOpener

    sources = _sources(args)
    stop = StopFlag()
    stop_on_signals(stop)  # before the wait for the store: a stop then exits 0 at once
    patience = args.wait_for_db if args.wait_for_db is not None else (0.0 if args.once else math.inf)
    opener = ArchiveOpener(args.db, patience, stop=stop)
    opened = opener.open()
    if opened is None:
        return 0  # stopped while waiting for the store
    with opened as archive:
        follower = ArchiveFollower(archive, sources)
        if opener.outage is not None:
            follower.store_was_down(f"the archive did not answer at start for {opener.waited:.0f} s: {opener.outage}")
        if args.once:
            turns = follower.catch_up_all()
            for t in turns:
                _print_turn(t, args.json)
            return 0 if all(t.problem is None for t in turns) else 1
        follower.run(stop, args.poll, on_turn=(lambda t: _print_turn(t, True)) if args.json else None)
    return 0


def _print_turn(t: object, as_json: bool) -> None:
    from dataclasses import asdict

    row = asdict(t)  # type: ignore[call-overload]
    if as_json:
        print(json.dumps(row), flush=True)
    else:
        print(f"{row['table']}: +{row['added']} events, archived to seq {row['archived_seq']}"
              + (f" (table at {row['table_seq']})" if row["table_seq"] is not None else "")
              + (f"; {row['problem']}" if row["problem"] else ""), flush=True)


def run_status(args: argparse.Namespace) -> int:
    with open_existing(args.db) as archive:
        tables = archive.tables()
        alerts = archive.alerts()
        if args.json:
            print(json.dumps({"schema_version": archive.schema_version,
                              "tables": {t: {"seq": s, "hash": h} for t, (s, h) in tables.items()},
                              "alerts": [a.__dict__ for a in alerts]}))
            return 0
        for t, (s, h) in tables.items():
            print(f"{t}: seq {s}, hash {h[:16]}…")
        for a in alerts:
            print(f"ALERT {a.at} {a.table} {a.kind}: {a.text}")
    return 0
