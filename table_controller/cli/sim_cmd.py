"""``table-controller sim``: a whole table with simulated hardware."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from table_controller.event_types import Alert, RoundResult, RoundVoided, ShoeChanged
from table_controller.journal.segments import ROTATE_EVERY, RotationPolicy


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sim = subparsers.add_parser(
        "sim",
        help="run a simulated table (shoe on a pseudo-terminal, mock panel, simulated dealer)",
        description=(
            "Runs the real controller against a simulated shoe on a pseudo-terminal, gpiozero's "
            "mock pins and a simulated dealer, and prints each round as it completes. Run again "
            "with the same --journal to continue where it ended."
        ),
    )
    sim.add_argument("--game", default="baccarat", metavar="VARIANT", help="game variant (default baccarat)")
    sim.add_argument("--rounds", type=int, default=10, help="rounds to play (default 10)")
    sim.add_argument("--seed", type=int, default=None, help="seed for shuffles and faults")
    sim.add_argument(
        "--speed", type=float, default=1.0,
        help="human pace divided by this (default 1; 0 = as fast as the table goes)",
    )
    sim.add_argument(
        "--faults", default="",
        help="e.g. drop=0.05,corrupt=0.05,dup=0.05,garbage=0.01,unplug-every=30 (shoe link) "
        "and dropped=0.01,void_request=0.01,lid=0.01,noread=0.01 (dealer; reported as dropped, void, lid, noread)",
    )
    sim.add_argument("--journal", type=Path, help="journal file (default: a temporary one)")
    sim.add_argument("--journal-rotate", choices=ROTATE_EVERY, default="never",
                     help="start a new journal segment at each new shoe, each UTC day, or at --segment-mb "
                     "(default never: one file; docs/journal.md)")
    sim.add_argument("--segment-mb", type=float, default=256, help="largest journal segment in MB (default 256)")
    sim.add_argument("--table", default="T01", help="table id (default T01)")
    sim.add_argument("--betting-seconds", type=float, default=15,
                     help="betting time at speed 1 (default 15), at most 5 s: the simulated dealer closes "
                     "betting then, and the table announces that time")
    sim.add_argument("--publish", default="tcp://127.0.0.1:5556", metavar="ENDPOINT",
                     help="ZeroMQ PUB endpoint (default tcp://127.0.0.1:5556)")
    sim.add_argument("--snapshot", default="tcp://127.0.0.1:5557", metavar="ENDPOINT",
                     help="snapshot endpoint (default tcp://127.0.0.1:5557)")
    sim.add_argument("--no-publish", action="store_true", help="publish nothing (no ZeroMQ sockets)")
    sim.add_argument("--control", metavar="ENDPOINT",
                     help="supervisor control socket, e.g. tcp://127.0.0.1:5558 (default: none)")
    sim.add_argument(
        "--display", action="store_true",
        help="show the table through a real display client subscribed to the event stream "
        "(a live screen on a terminal, one line per round otherwise)",
    )
    sim.add_argument("--variants-dir", type=Path, help="a folder of the studio's own variant files")
    sim.add_argument(
        "--camera", nargs="?", const="svg-cards", metavar="DECK",
        help="add a simulated overhead camera (deck design: svg-cards, kde-standard, kde-nicu-white); "
        "cards then count only when shoe and camera agree. Camera faults: misplace, exposed, blackout",
    )
    sim.add_argument(
        "--shoe-protocol", choices=("slp1", "lines"), default="slp1",
        help="slp1: a simulated smart shoe (default); lines: a plain line-per-card reader (no gate, "
        "no count, no retransmission; faults lost, twice, garbage)",
    )
    sim.add_argument("--json", action="store_true", help="print every event as one JSON object per line")
    sim.set_defaults(func=run_sim)


def describe(event: object) -> str | None:
    """One human line for the events worth showing, else None."""
    match event:
        case RoundResult(round=round_id, hands=hands, payouts=payouts, outcome=outcome):
            shown = "  ".join(
                f"{pos} {' '.join(h.cards)} [{h.cls}]" for pos, h in hands.items() if h.cls is not None
            )
            won = [bet for bet, v in payouts.items() if not v.startswith("-") and v != "0"]
            return f"{round_id}  {shown}  => {outcome.get('winner', outcome)}; paid: {', '.join(won) or 'none'}"
        case RoundVoided(round=round_id, reason=reason):
            return f"{round_id}  VOID ({reason}), every bet refunded"
        case Alert(round=round_id, kind=kind, severity=severity, detail=detail):
            return f"{round_id or '-'}  ALERT {kind} ({severity}): {detail}"
        case ShoeChanged(event=what, count=count):
            return f"shoe: {what} (count {count})"
    return None


def run_sim(args: argparse.Namespace) -> int:
    from table_controller.event_types import Event, encode_event
    from table_controller.sim.table import SimOptions, SimulatedTable

    if args.display and args.no_publish:
        from table_controller.errors import ConfigError

        raise ConfigError("--display needs the event stream: drop --no-publish")

    def show(event: Event) -> None:
        if args.display and not args.json:
            return  # the display client shows the table
        if args.json:
            print(encode_event(event).decode("utf-8"), flush=True)
        else:
            line = describe(event)
            if line:
                print(line, flush=True)

    options = SimOptions(
        variant=args.game, rounds=args.rounds, seed=args.seed, speed=args.speed, faults=args.faults,
        journal=args.journal, table=args.table, betting_seconds=args.betting_seconds,
        publish=None if args.no_publish else args.publish,
        snapshot=None if args.no_publish else args.snapshot,
        control=args.control, variants_dir=args.variants_dir, camera=args.camera,
        shoe_protocol=args.shoe_protocol,
        journal_rotation=RotationPolicy(args.journal_rotate, max(1, int(args.segment_mb * 1024 * 1024))),
    )
    table = SimulatedTable(options, on_event=show)
    if args.display and not args.json:
        report = run_with_display(table, args.publish, args.snapshot, args.table)
    else:
        report = table.run()
    summary = {
        "rounds": report.rounds, "results": report.results, "voids": report.voids,
        "cards": report.cards, "events": report.events, "dealer_faults": report.faults,
        "journal": report.journal if args.journal else None,
    }
    print(("# " if args.json else "") + "summary: " + json.dumps(summary), file=sys.stderr)
    return 0


def run_with_display(table: Any, publish: str, snapshot: str, table_id: str) -> Any:
    """Run the simulated table in a thread and a display client in this one."""
    import threading

    from table_controller.client import TableClient

    finished = threading.Event()
    outcome: dict[str, Any] = {}

    def play() -> None:
        try:
            outcome["report"] = table.run()
        except BaseException as e:  # handed to the main thread below
            outcome["error"] = e
        finally:
            finished.set()

    client = TableClient(publish.replace("*", "127.0.0.1"), snapshot.replace("*", "127.0.0.1"), table_id)
    player = threading.Thread(target=play, name="sim", daemon=True)
    player.start()
    try:
        if sys.stdout.isatty():
            from table_controller.display.terminal import run_terminal

            run_terminal(client, table=table_id, stop=finished.is_set)
        else:
            while not finished.is_set():
                for event in client.events(timeout=0.25):
                    line = describe(event)
                    if line:
                        print(f"[display] {line}", flush=True)
    finally:
        client.close()
        player.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["report"]
