"""``table-controller soak``: many simulated tables under faults and kills, then an independent check."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from table_controller.soak.options import FAULT_KINDS

if TYPE_CHECKING:
    from table_controller.soak.options import SoakOptions


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    soak = subparsers.add_parser(
        "soak",
        help="run a studio of simulated tables under faults and kills, then check every round",
        description=(
            "Starts N tables (a real controller process each, its simulated shoe in another process "
            "on a pseudo-terminal, a mock panel), a studio proxy, subscribers and remote dealers; "
            "injects faults and kills controllers with SIGKILL (each restarted at once); then checks "
            "the journals, the rules and every subscriber's stream against what the shoes dealt. "
            "Exit status 0 only when every check passed. See docs/soak.md."
        ),
    )
    soak.add_argument("--tables", type=int, default=4, help="tables (default 4)")
    soak.add_argument("--rounds", type=int, default=30, help="rounds per table (default 30)")
    soak.add_argument(
        "--seed", type=int, default=1, help="seed of shuffles, faults and kills (default 1)"
    )
    soak.add_argument(
        "--faults",
        default="all",
        metavar="SPEC",
        help=f"all | none | KIND[=RATE],... with KIND one of {', '.join(FAULT_KINDS)} "
        "(default all, at the rates in docs/soak.md; lost and twice, and garbage as line noise, "
        "hit line tables only)",
    )
    soak.add_argument(
        "--kill-every",
        type=float,
        metavar="SECONDS",
        help="SIGKILL one controller about this often (0.5x..1.5x) and restart it",
    )
    soak.add_argument(
        "--variants",
        default=None,
        metavar="LIST",
        help="variants the tables cycle through (default baccarat,teen-patti-2020,"
        "three-face,three-pictures)",
    )
    soak.add_argument(
        "--betting-seconds", type=float, default=0.4, help="betting countdown (default 0.4)"
    )
    soak.add_argument(
        "--pace",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the dealers' pause between cards (default 0)",
    )
    soak.add_argument(
        "--segment-kb", type=int, default=32, metavar="KB",
        help="every table's journal rotates when its live segment reaches this size, so kills land "
        "in rotations too (docs/journal.md, Segments); 0: one journal file (default 32)",
    )
    soak.add_argument(
        "--camera-tables", type=int, default=1, metavar="N",
        help="the first N tables also have a simulated overhead camera (cards count when shoe and "
        "camera agree; camera faults blackout and mismatch happen there). Needs the card art "
        "(scripts/install-card-art.sh). Default 1; 0 for shoe-only tables",
    )
    soak.add_argument(
        "--camera-deck", default="svg-cards", help="deck design the simulated cameras render"
    )
    soak.add_argument(
        "--line-tables", type=int, default=0, metavar="N",
        help="the last N tables have a plain line-per-card reader instead of a smart shoe "
        "(shoe.protocol = \"lines\", accepted unverified: no gate, no count, no retransmission); "
        "line faults lost, twice and garbage happen there. Default 0",
    )
    soak.add_argument(
        "--hostile", type=int, default=0, metavar="N",
        help="N hostile clients send random and malformed messages to every table's snapshot and "
        "control endpoints and garbage to the proxy while the tables deal (never a valid token); "
        "adds the check hostile_clients_refused. Default 0",
    )
    soak.add_argument(
        "--subscribers",
        type=int,
        default=1,
        help="fast subscribers besides the floor subscriber (default 1)",
    )
    soak.add_argument(
        "--table-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="a table without progress this long fails the run (default 60)",
    )
    soak.add_argument(
        "--archive", nargs="?", const="postgresql", choices=["postgresql", "sqlite"],
        help="also run the studio archive (on a throw-away PostgreSQL server, or a SQLite file) and the "
        "studio API beside the tables, kill each of them and PostgreSQL now and then, cut one table off "
        "the archive for a while; adds the checks archive_matches_journals and api_rounds_match_journals",
    )
    soak.add_argument("--archive-chaos-every", type=float, default=5.0, metavar="SECONDS",
                      help="seconds between the archive side's kills and cuts (default 5, randomised)")
    soak.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep journals, configurations and logs in DIR (default: a removed temporary folder)",
    )
    soak.add_argument("--json", action="store_true", help="print the report as one JSON object")
    soak.set_defaults(func=run_soak_command)


def run_soak_command(args: argparse.Namespace) -> int:
    from table_controller.soak import SoakOptions, parse_faults, run_soak

    options = SoakOptions(
        tables=args.tables,
        rounds=args.rounds,
        seed=args.seed,
        faults=parse_faults(args.faults),
        kill_every=args.kill_every,
        betting_seconds=args.betting_seconds,
        pace=args.pace,
        subscribers=args.subscribers,
        camera_tables=args.camera_tables,
        segment_kb=args.segment_kb,
        camera_deck=args.camera_deck,
        line_tables=args.line_tables,
        hostile=args.hostile,
        archive=args.archive,
        archive_chaos_every=args.archive_chaos_every,
        workdir=args.keep,
        table_timeout=args.table_timeout,
    )
    if args.variants:
        options = dataclasses.replace(options, variants=tuple(v.strip() for v in args.variants.split(",") if v.strip()))
    _check_variants(options.variants)
    _check_card_art(options)
    with _Progress(options.tables * options.rounds) as progress:
        report = run_soak(options, progress)
    data = report.as_dict()
    if args.json:
        print(json.dumps(data, sort_keys=False))
    else:
        print(render(data))
    return 0 if report.ok else 1


def _check_card_art(options: SoakOptions) -> None:
    """Camera tables render the deck: say so before starting anything if it is missing."""
    if min(options.camera_tables, options.tables) <= 0:
        return
    from firmware_interfaces.camera.deck_art import CardArtMissing, load_deck
    from table_controller.errors import ConfigError

    try:
        load_deck(options.camera_deck)
    except CardArtMissing as e:
        raise ConfigError(f"--camera-tables {options.camera_tables}: {e} (or pass --camera-tables 0)") from e


def _check_variants(variants: tuple[str, ...]) -> None:
    from table_controller.errors import ConfigError, TableError
    from table_controller.rules.registry import load_variant

    if not variants:
        raise ConfigError("--variants: name at least one variant")
    for v in variants:
        try:
            load_variant(v)
        except TableError as e:
            raise ConfigError(f"--variants: {e}") from e


def render(data: dict[str, Any]) -> str:
    """The report as text: verdict, each check, counts, latency, problems."""
    lines = [f"soak: {'OK' if data['ok'] else 'FAILED'} in {data['seconds']} s"]
    for name, passed in data["checks"].items():
        lines.append(f"  {'pass' if passed else 'FAIL'}  {name}")
    counts = dict(data["counts"])
    faults = counts.pop("faults", {})
    lines.append("counts: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    lines.append("faults injected: " + ", ".join(f"{k} {v}" for k, v in faults.items()))
    lat = data["latency_ms"]
    lines.append(
        f"card-to-display latency: p50 {lat['p50']} ms, p99 {lat['p99']} ms, max {lat['max']} ms"
    )
    for name, problems in data.get("problems", {}).items():
        lines.append(f"problems in {name}:")
        lines.extend(f"  - {p}" for p in problems)
    if data.get("workdir"):
        lines.append(f"journals and logs kept in {data['workdir']}")
    return "\n".join(lines)


class _Progress:
    """A rich progress bar on a terminal, plain lines every 10 s otherwise (on stderr)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self._bar: Any = None
        self._task: Any = None
        self._last_line = 0.0

    def __enter__(self) -> _Progress:
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(
                TextColumn("soak"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=Console(stderr=True),
            )
            self._bar.start()
            self._task = self._bar.add_task("starting", total=self.total)
        return self

    def __call__(self, done: int, total: int, status: str) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=done, description=status)
            return
        import time

        now = time.monotonic()
        if now - self._last_line >= 10 or done >= total:
            self._last_line = now
            print(f"soak: rounds {done}/{total}, {status}", file=sys.stderr, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
