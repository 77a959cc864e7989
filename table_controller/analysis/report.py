"""Human-readable PAR sheets: one table per bet, floors marked, on a rich console.

Per-position bets with identical figures (``box1.main``, ``box2.main``, ...)
share one table, so a sheet stays readable with seven boxes; ``--json`` still
lists every bet by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from rich.console import Console
from rich.table import Table

from table_controller.analysis.sheet import BetFigures, ParSheet, fraction_text
from table_controller.analysis.simulate import MeasuredRtp
from table_controller.rules.game import money_text


def percent(value: Fraction | float, places: int = 4) -> str:
    return f"{float(value) * 100:.{places}f}%"


def grouped_bets(sheet: ParSheet) -> list[tuple[list[str], BetFigures]]:
    """Bets of the same kind with identical outcomes, grouped in sheet order."""
    groups: list[tuple[list[str], BetFigures]] = []
    for name, figures in sheet.bets.items():
        kind = name.rsplit(".", 1)[-1]
        for names, first in groups:
            if first.name.rsplit(".", 1)[-1] == kind and first.outcomes == figures.outcomes:
                names.append(name)
                break
        else:
            groups.append(([name], figures))
    return groups


def group_name(names: list[str]) -> str:
    """``box{1,2,3}.main`` for per-position bets that share their figures."""
    if len(names) == 1:
        return names[0]
    positions = [n.rsplit(".", 1)[0] for n in names]
    kind = names[0].rsplit(".", 1)[-1]
    stems = {p.rstrip("0123456789") for p in positions}
    if len(stems) == 1:
        stem = stems.pop()
        return f"{stem}{{{','.join(p[len(stem) :] for p in positions)}}}.{kind}"
    return f"{{{','.join(positions)}}}.{kind}"


def floor_text(figures: BetFigures, min_rtp: Fraction) -> str:
    if figures.below_floor:
        return f"[bold red]BELOW {percent(min_rtp, 2)} FLOOR[/]"
    return "ok"


def render_sheet(sheet: ParSheet, console: Console) -> None:
    """Print the summary table, the highest-RTP bet and one outcome table per bet."""
    console.print(f"[bold]{sheet.title}[/] (variant [bold]{sheet.variant}[/])")
    console.print(f"Exact enumeration: {sheet.method}.")
    summary = Table(
        title=f"Return to player (floor {percent(sheet.min_rtp, 2)})", title_justify="left"
    )
    summary.add_column("Bet")
    summary.add_column("RTP", justify="right")
    summary.add_column("House edge", justify="right")
    summary.add_column("Floor")
    for names, figures in grouped_bets(sheet):
        summary.add_row(
            group_name(names),
            percent(figures.rtp),
            percent(figures.house_edge),
            floor_text(figures, sheet.min_rtp),
        )
    console.print(summary)
    best = set(sheet.max_rtp_bets())
    best_groups = [group_name(names) for names, _ in grouped_bets(sheet) if names[0] in best]
    console.print(
        f"Highest RTP: [bold]{', '.join(best_groups)}[/] at {percent(sheet.bets[names[0]].rtp)}"
        if (names := [n for n in sheet.bets if n in best])
        else ""
    )
    below = [name for name, b in sheet.bets.items() if b.below_floor]
    if below:
        console.print(
            f"[bold red]{len(below)} bet(s) below the {percent(sheet.min_rtp, 2)} floor:[/] "
            + ", ".join(below)
        )
    for names, figures in grouped_bets(sheet):
        console.print(
            f"\n[bold]{group_name(names)}[/]: RTP {float(figures.rtp):.6f} = "
            f"{fraction_text(figures.rtp)}, house edge {percent(figures.house_edge)}"
        )
        table = Table()
        table.add_column("Outcome")
        table.add_column("Net", justify="right")
        table.add_column("Probability", justify="right")
        table.add_column("Exact", justify="right")
        for outcome in figures.outcomes:
            table.add_row(
                outcome.label,
                money_text(outcome.net),
                f"{float(outcome.probability):.8f}",
                fraction_text(outcome.probability),
            )
        console.print(table)
    console.print(f"Computed in {sheet.seconds:.2f} s.")


def render_simulation(
    sheet: ParSheet, measured: Mapping[str, MeasuredRtp], rounds: int, seed: int, console: Console
) -> None:
    """Measured RTP with its 99% interval beside the exact figure, for every bet."""
    table = Table(
        title=f"{sheet.variant}: {rounds:,} simulated rounds (seed {seed}) against the exact RTP",
        title_justify="left",
    )
    for column in ("Bet", "Exact RTP", "Measured RTP", "99% interval", "Exact inside"):
        table.add_column(column, justify="left" if column == "Bet" else "right")
    for name, figures in sheet.bets.items():
        m = measured[name]
        inside = m.contains(float(figures.rtp))
        table.add_row(
            name,
            percent(figures.rtp),
            percent(m.rtp),
            f"{percent(m.low)} .. {percent(m.high)}",
            "yes" if inside else "[bold red]NO[/]",
        )
    console.print(table)
