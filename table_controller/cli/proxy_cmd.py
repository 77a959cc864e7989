"""``table-controller proxy``: the studio's XSUB/XPUB forwarder between tables and displays."""

from __future__ import annotations

import argparse
import json
import logging

from table_controller.cli.stop_signals import StopFlag, stop_on_signals
from table_controller.publish.proxy import DEFAULT_BACKEND, DEFAULT_FRONTEND

log = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    proxy = subparsers.add_parser(
        "proxy",
        help="run the studio's event forwarder (tables connect to the frontend, displays to the backend)",
        description=(
            "ZeroMQ's own XSUB/XPUB proxy. Tables publish to it with "
            "'--publish connect:tcp://STUDIO:5559'; displays subscribe at the backend. "
            "Snapshots are not forwarded: displays ask each table's snapshot endpoint. "
            "Runs until Ctrl-C or SIGTERM."
        ),
    )
    proxy.add_argument("--frontend", default=DEFAULT_FRONTEND, metavar="ENDPOINT",
                       help=f"XSUB endpoint the tables connect to (default {DEFAULT_FRONTEND})")
    proxy.add_argument("--backend", default=DEFAULT_BACKEND, metavar="ENDPOINT",
                       help=f"XPUB endpoint the displays connect to (default {DEFAULT_BACKEND})")
    proxy.add_argument("--hwm", type=int, default=100_000,
                       help="messages queued per peer before a slow one loses messages (default 100000)")
    proxy.add_argument("--insecure", action="store_true",
                       help="serve an address other hosts reach (the proxy has no CURVE yet: "
                            "anyone on that network may publish or subscribe)")
    proxy.add_argument("--json", action="store_true", help="print the bound endpoints as a JSON line")
    proxy.set_defaults(func=run_proxy)


def run_proxy(args: argparse.Namespace) -> int:
    from table_controller.errors import ConfigError
    from table_controller.publish.proxy import StudioProxy
    from table_controller.publish.publisher import binds_beyond_loopback

    for name, endpoint in (("--frontend", args.frontend), ("--backend", args.backend)):
        if binds_beyond_loopback(endpoint) and not args.insecure:
            raise ConfigError(
                f"{name} {endpoint} listens beyond this machine and the proxy has no CURVE: "
                "bind 127.0.0.1, or pass --insecure on a studio network you trust"
            )
        if binds_beyond_loopback(endpoint):
            log.warning("proxy %s %s listens beyond this machine without CURVE (--insecure)",
                        name, endpoint)

    stop = StopFlag()
    stop_on_signals(stop)
    with StudioProxy(args.frontend, args.backend, hwm=args.hwm) as proxy:
        if args.json:
            print(json.dumps({"frontend": proxy.bound_frontend, "backend": proxy.bound_backend}),
                  flush=True)
        else:
            print(f"forwarding events: tables -> {proxy.bound_frontend}, "
                  f"displays <- {proxy.bound_backend} (Ctrl-C stops)", flush=True)
        stop.wait()
    return 0
