"""``table-controller supervise``: a supervisor resumes or voids a paused round."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from table_controller.errors import TableError


class ControlUnreachable(TableError, ConnectionError):
    """The controller's control socket did not answer."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sup = subparsers.add_parser(
        "supervise",
        help="resume or void a paused round (needs a supervisor token)",
        description="Talks to a running controller's control socket (publish.control in its configuration).",
    )
    sup.add_argument("--control", default="tcp://127.0.0.1:5558", metavar="ENDPOINT", help="control endpoint")
    sup.add_argument(
        "--token-file", type=Path, metavar="FILE",
        help="a file holding the supervisor token (default: $TABLE_SUPERVISOR_TOKEN); a token "
        "is never given on the command line, where every user of the machine can read it",
    )
    sup.add_argument("--by", default=os.environ.get("USER", "supervisor"), help="who is acting (journaled)")
    sup.add_argument("--client-key", type=Path, metavar="FILE",
                     help="CURVE: this supervisor's .key_secret (when the table's sockets use CURVE)")
    sup.add_argument("--server-key", type=Path, metavar="FILE",
                     help="CURVE: the table's public .key")
    sup.add_argument("--json", action="store_true", help="print the controller's answer as JSON")
    sup.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for an answer")
    actions = sup.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    actions.add_parser("status", help="show the table's state")
    resume = actions.add_parser("resume", help="resume the paused round")
    resume.add_argument("--card", help="the confirmed card, when the round awaits one (e.g. TS)")
    void = actions.add_parser("void", help="void the round in progress and refund every bet")
    void.add_argument("--reason", default="voided by supervisor", help="reason (journaled)")
    dealer = actions.add_parser("dealer", help="sign a dealer in at the table (journaled; every round after "
                                               "it carries the dealer), or out with --sign-out")
    who = dealer.add_mutually_exclusive_group(required=True)
    who.add_argument("--id", dest="dealer_id", help="the dealer's id, as the studio's rota names them (e.g. D042)")
    who.add_argument("--sign-out", action="store_true", help="the dealer signed in leaves the table")
    actions.add_parser(
        "new-shoe",
        help="tell the table a new shoe was loaded (for readers that cannot say so: line readers)",
    )
    sup.set_defaults(func=run_supervise)


def send_request(endpoint: str, request: dict[str, Any], timeout: float, curve: Any = None) -> dict[str, Any]:
    """One request to a controller's control socket (``curve``: a ClientCurve)."""
    import zmq

    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    sock = context.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    if curve is not None:
        curve.apply(sock)
    try:
        sock.connect(endpoint)
        sock.send(json.dumps(request).encode())
        if not sock.poll(int(timeout * 1000)):
            raise ControlUnreachable(f"no answer from the controller at {endpoint} within {timeout:g} s")
        reply = json.loads(sock.recv())
        if not isinstance(reply, dict):
            raise ControlUnreachable(f"the controller at {endpoint} answered {type(reply).__name__}, not an object")
        return reply
    finally:
        sock.close()


def read_token(path: Path | None) -> str | None:
    """The supervisor token from ``path`` or ``$TABLE_SUPERVISOR_TOKEN``; None when neither."""
    if path is not None:
        try:
            return path.read_text().strip()
        except OSError as e:
            raise ControlUnreachable(f"cannot read the token file {path}: {e.strerror}") from e
    return os.environ.get("TABLE_SUPERVISOR_TOKEN")


def run_supervise(args: argparse.Namespace) -> int:
    request: dict[str, Any] = {"op": args.action, "by": args.by}
    if args.action != "status":
        request["token"] = read_token(args.token_file)
    if args.action == "resume" and args.card:
        request["card"] = args.card
    if args.action == "void":
        request["reason"] = args.reason
    if args.action == "dealer":
        request["dealer"] = None if args.sign_out else args.dealer_id
    curve = None
    if args.client_key or args.server_key:
        if not (args.client_key and args.server_key):
            raise ControlUnreachable("CURVE needs both --client-key and --server-key")
        from table_controller.publish import ClientCurve

        curve = ClientCurve(args.client_key, args.server_key)
    answer = send_request(args.control, request, args.timeout, curve)
    if args.json:
        print(json.dumps(answer))
    elif not answer.get("ok"):
        print(f"refused: {answer.get('error')}")
    elif args.action == "status":
        print(f"state {answer['state']} ({answer.get('reason') or '-'}), round {answer['round'] or '-'}, "
              f"next card to {answer['next_position'] or '-'}"
              + (f", awaiting a confirmed card ({answer['cause']})" if answer.get("awaiting") else ""))
    else:
        for event in answer["events"]:
            print(
                f"{event['seq']} {event['type']} "
                f"{event.get('state') or event.get('code') or event.get('reason') or event.get('dealer') or ''}"
            )
    return 0 if answer.get("ok") else 1
