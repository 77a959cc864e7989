"""``table-controller par``: the exact PAR sheet of a variant, and a simulation to check it."""

from __future__ import annotations

import argparse
import json
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any, Self


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    par = subparsers.add_parser(
        "par",
        help="exact probabilities, RTP and house edge of every bet of a variant (PAR sheet)",
        description=(
            "Counts every deal of the variant's deck or shoe exactly (rational arithmetic) "
            "and settles each class of deal with the rules core, so the sheet follows the "
            "variant file. --simulate N also plays N rounds through the live dealing and "
            "judging path and shows each bet's measured RTP with a 99% confidence interval."
        ),
    )
    par.add_argument(
        "--game", required=True, metavar="VARIANT", help="game variant id, e.g. baccarat"
    )
    par.add_argument("--variants-dir", type=Path, help="a folder of the studio's own variant files")
    par.add_argument(
        "--min-rtp",
        type=_rtp_floor,
        default=Fraction(3, 4),
        metavar="FRACTION",
        help="mark every bet whose RTP is below this (default 0.75, GLI-19's figure for a game)",
    )
    par.add_argument("--simulate", type=_rounds, metavar="N", help="also play N rounds and compare")
    par.add_argument(
        "--seed", type=int, default=2026, help="shuffle seed of --simulate (default 2026)"
    )
    par.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    par.set_defaults(func=run_par)


def _rtp_floor(text: str) -> Fraction:
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(
            f"--min-rtp {text!r} is not a number such as 0.75"
        ) from None
    if not 0 <= value <= 10:
        raise argparse.ArgumentTypeError(f"--min-rtp {text!r} must be between 0 and 10")
    return value


def _rounds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--simulate {text!r} is not a whole number of rounds"
        ) from None
    if value < 2:
        raise argparse.ArgumentTypeError(f"--simulate needs at least 2 rounds, not {value}")
    return value


class ProgressDisplay:
    """Progress on stderr: rich bars on a terminal, plain start/done lines otherwise."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True)
        self.bars: Any = None
        if self.console.is_terminal:
            self.bars = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.percentage:>3.0f}%"),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
        self.tasks: dict[str, Any] = {}
        self.started: dict[str, float] = {}

    def __enter__(self) -> Self:
        if self.bars is not None:
            self.bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bars is not None:
            self.bars.stop()

    def __call__(self, task: str, done: int, total: int) -> None:
        if self.bars is not None:
            if task not in self.tasks:
                self.tasks[task] = self.bars.add_task(task, total=total)
            self.bars.update(self.tasks[task], completed=done)
            return
        if task not in self.started:
            self.started[task] = time.perf_counter()
            print(f"{task}: started", file=sys.stderr, flush=True)
        if done >= total and task in self.started and total:
            seconds = time.perf_counter() - self.started.pop(task)
            self.started[task] = float("inf")  # report completion once
            print(f"{task}: done in {seconds:.1f} s", file=sys.stderr, flush=True)


def run_par(args: argparse.Namespace) -> int:
    from rich.console import Console

    from table_controller.analysis.exact import par_sheet
    from table_controller.analysis.report import render_sheet, render_simulation
    from table_controller.analysis.simulate import simulate
    from table_controller.rules.registry import load_game

    game = load_game(args.game, args.variants_dir)
    with ProgressDisplay() as progress:
        sheet = par_sheet(game, args.min_rtp, progress)
        measured = None
        if args.simulate:
            started = time.perf_counter()
            measured = simulate(game, args.simulate, args.seed, progress)
            sim_seconds = time.perf_counter() - started
    if args.json:
        answer = sheet.to_dict()
        if measured is not None:
            bets = {
                name: {
                    **m.to_dict(),
                    "exact_inside": m.contains(float(sheet.bets[name].rtp)),
                }
                for name, m in measured.items()
            }
            answer["simulation"] = {
                "rounds": args.simulate,
                "seed": args.seed,
                "confidence": 0.99,
                "bets": bets,
                "all_inside": all(b["exact_inside"] for b in bets.values()),
                "seconds": round(sim_seconds, 3),
            }
        print(json.dumps(answer))
        return 0
    console = Console()
    if not console.is_terminal:
        console = Console(width=120)  # files and pipes: keep rows on one line
    render_sheet(sheet, console)
    if measured is not None:
        render_simulation(sheet, measured, args.simulate, args.seed, console)
    return 0
