"""``table-controller deck-check``: is the deck complete before it goes live?"""

from __future__ import annotations

import argparse
import json
import time


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    dc = subparsers.add_parser(
        "deck-check", help="run a whole deck through the shoe's reader and report missing/extra cards",
        description=(
            "Opens the shoe, unlocks its gate and counts every card the dealer draws until the shoe "
            "reports empty (or no card comes for --idle-timeout seconds). Exit status 0 only when the "
            "deck is complete."
        ),
    )
    dc.add_argument("--shoe", required=True, metavar="PORT", help="device path or pyserial URL of the shoe")
    dc.add_argument("--decks", type=int, default=1, help="decks expected (default 1)")
    dc.add_argument("--idle-timeout", type=float, default=30.0, help="seconds without a card that end the check")
    dc.add_argument("--json", action="store_true", help="print the report as JSON")
    dc.set_defaults(func=run_deck_check)


def run_deck_check(args: argparse.Namespace) -> int:
    import serial
    from rich.progress import Progress

    from firmware_interfaces.shoe import ShoeDriver
    from table_controller.deck_check import check_deck
    from table_controller.errors import TableError

    driver = ShoeDriver(lambda: serial.serial_for_url(args.shoe, timeout=0.05))
    driver.start()
    try:
        deadline = time.monotonic() + 10
        while not driver.is_up:
            if time.monotonic() > deadline:
                raise TableError(f"no answer from the shoe at {args.shoe} within 10 s")
            driver.get_event(0.2)
        driver.unlock()
        with Progress(transient=True, disable=args.json) as progress:
            task = progress.add_task("cards read", total=52 * args.decks)
            report = check_deck(
                driver.get_event, args.decks, idle_timeout=args.idle_timeout,
                on_card=lambda n: progress.update(task, completed=n),
            )
        driver.lock()
    finally:
        driver.close()
    print(json.dumps(report.as_dict()) if args.json else report.summary())
    return 0 if report.complete else 1
