"""Command-line options of the event stream, shared by ``run``, ``sim``, ``proxy`` and ``display``."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING

from table_controller.errors import ConfigError
from table_controller.publish.publisher import DEFAULT_PUBLISH, DEFAULT_SNAPSHOT
from table_controller.publish.security import ClientCurve, CurveConfig

if TYPE_CHECKING:
    from table_controller.publish.publisher import EventPublisher


def add_publish_args(parser: argparse.ArgumentParser) -> None:
    """``--publish``, ``--snapshot`` and the CURVE options of a table (for ``run`` and ``sim``)."""
    group = parser.add_argument_group("event stream (docs/events.md)")
    group.add_argument("--publish", default=DEFAULT_PUBLISH, metavar="ENDPOINT",
                       help=f"PUB endpoint to bind (default {DEFAULT_PUBLISH}); "
                            "'connect:tcp://studio:5559' connects to a studio proxy instead")
    group.add_argument("--snapshot", default=DEFAULT_SNAPSHOT, metavar="ENDPOINT",
                       help=f"snapshot endpoint to bind (default {DEFAULT_SNAPSHOT})")
    group.add_argument("--curve-secret", type=Path, metavar="FILE",
                       help="server secret key (.key_secret): turns CURVE security on")
    group.add_argument("--authorized-clients", type=Path, metavar="DIR",
                       help="folder of authorised client public keys (.key)")


def curve_config_from_args(args: argparse.Namespace) -> CurveConfig | None:
    """The CURVE settings of ``add_publish_args`` (None when security is off)."""
    if args.curve_secret is None and args.authorized_clients is None:
        return None
    if args.curve_secret is None or args.authorized_clients is None:
        raise ConfigError("--curve-secret and --authorized-clients go together")
    return CurveConfig(args.curve_secret, args.authorized_clients)


def add_client_args(parser: argparse.ArgumentParser) -> None:
    """``--connect``, ``--snapshot``, ``--table`` and the client's CURVE keys (for displays)."""
    parser.add_argument("--connect", default="tcp://127.0.0.1:5556", metavar="ENDPOINT",
                        help="the table's PUB endpoint or a studio proxy's backend "
                             "(default tcp://127.0.0.1:5556)")
    parser.add_argument("--snapshot", metavar="ENDPOINT",
                        help="the table's snapshot endpoint (default: --connect's port + 1)")
    parser.add_argument("--table", default="T01", help="table id to follow (default T01)")
    parser.add_argument("--client-key", type=Path, metavar="FILE",
                        help="this display's secret key (.key_secret) when the table uses CURVE")
    parser.add_argument("--server-key", type=Path, metavar="FILE",
                        help="the table's public key (.key) when the table uses CURVE")


def snapshot_endpoint_for(connect: str) -> str:
    """``tcp://host:5556`` -> ``tcp://host:5557`` (the default pairing of events.md)."""
    match = re.fullmatch(r"(tcp://.+):(\d+)", connect)
    if not match:
        raise argparse.ArgumentTypeError(
            f"cannot guess the snapshot endpoint of {connect!r}; give --snapshot")
    return f"{match.group(1)}:{int(match.group(2)) + 1}"


def client_curve_from_args(args: argparse.Namespace) -> ClientCurve | None:
    """The client's CURVE keys (None when not given); both files or neither."""
    if args.client_key is None and args.server_key is None:
        return None
    if args.client_key is None or args.server_key is None:
        raise argparse.ArgumentTypeError("--client-key and --server-key go together")
    return ClientCurve(args.client_key, args.server_key)


def publisher_from_args(args: argparse.Namespace, table: str, **kwargs: object) -> EventPublisher:
    """An (unstarted) EventPublisher for ``table`` from the options of ``add_publish_args``."""
    from table_controller.publish.publisher import EventPublisher

    return EventPublisher(table, args.publish, args.snapshot, security=curve_config_from_args(args),
                          **kwargs)  # type: ignore[arg-type]
