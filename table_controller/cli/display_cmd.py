"""``table-controller display``: follow a table on the terminal (rich) or serve the web floor display."""

from __future__ import annotations

import argparse
import signal

from table_controller.cli.stop_signals import StopFlag, stop_on_signals
from table_controller.errors import ConfigError
from table_controller.publish.options import (
    add_client_args,
    client_curve_from_args,
    snapshot_endpoint_for,
)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    display = subparsers.add_parser(
        "display",
        help="show a table live: terminal display, or --web for the floor screen",
        description=(
            "Follows one table's event stream (snapshot, then every event once; re-snapshots "
            "after a gap or a controller restart). Without --web: a terminal display for test "
            "rigs (or JSON lines with --json). With --web: a web page for a floor screen, "
            "pushed live by server-sent events."
        ),
    )
    add_client_args(display)
    display.add_argument("--web", action="store_true", help="serve the web floor display")
    display.add_argument("--host", default="127.0.0.1", help="web display address (default 127.0.0.1)")
    display.add_argument("--port", type=int, default=8080, help="web display port (default 8080)")
    display.add_argument("--lang", default="en", choices=["en", "zh-Hans", "zh", "zh-Hant"],
                         help="the web display's language: English, Chinese simplified or traditional (default en)")
    display.add_argument("--limits", metavar="TEXT", help='the table limits to show, as written, e.g. "10 - 5,000"')
    display.add_argument("--studio", action="store_true",
                         help="serve the studio dashboard: every table of --connect (the studio proxy's backend) "
                              "on one page, each table's floor page under /table/<T>/ (port 8088 unless --port)")
    display.add_argument("--snapshot-of", action="append", default=[], metavar="TABLE=ENDPOINT",
                         help="with --studio: a table's snapshot endpoint, for snapshots after gaps (repeat); "
                              "tables without one are followed from their events alone")
    display.add_argument("--json", action="store_true",
                         help="print each snapshot and event as a JSON line instead of drawing")
    display.set_defaults(func=run_display)


def run_display(args: argparse.Namespace) -> int:
    from table_controller.client import TableClient

    try:
        snapshot = args.snapshot or snapshot_endpoint_for(args.connect)
        curve = client_curve_from_args(args)
    except argparse.ArgumentTypeError as e:
        raise ConfigError(str(e)) from None
    if curve is not None:
        from table_controller.publish.security import load_keypair

        load_keypair(curve.client_secret_file, need_secret=True)  # clear errors before starting
        load_keypair(curve.server_public_file, need_secret=False)

    def make_client() -> TableClient:
        return TableClient(args.connect, snapshot, args.table, curve=curve)

    if args.studio:
        from table_controller.display.studio_web import StudioDisplay

        snapshots = {}
        for spec in args.snapshot_of:
            table, sep, endpoint = spec.partition("=")
            if not sep or not table or not endpoint:
                raise ConfigError(f"--snapshot-of {spec!r}: write TABLE=ENDPOINT, e.g. T01=tcp://table-01:5557")
            snapshots[table] = endpoint
        port = args.port if args.port != 8080 else 8088
        studio = StudioDisplay(lambda: TableClient(args.connect, snapshots, None, curve=curve), host=args.host,
                               port=port, lang=args.lang)
        print(f"studio dashboard on http://{args.host}:{port}/", flush=True)
        studio.serve()
        return 0

    if args.web:
        from table_controller.display.web import WebDisplay

        web = WebDisplay(make_client, table=args.table, host=args.host, port=args.port, lang=args.lang,
                         limits=args.limits)
        print(f"web floor display of table {args.table} on http://{args.host}:{args.port}/", flush=True)
        web.serve()
        return 0

    from table_controller.display.terminal import run_terminal

    stop = StopFlag()
    stop_on_signals(stop, [signal.SIGTERM])
    client = make_client()
    try:
        run_terminal(client, table=args.table, json_lines=args.json, stop=stop.is_set)
    finally:
        client.close()
    return 0
