"""The terminal display for test rigs: one table's state, countdown, cards, result, last results."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from table_controller.client import TableClient, encode_item
from table_controller.display.model import TableView

log = logging.getLogger(__name__)

SUIT_SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
RED_SUITS = ("H", "D")
LABEL_STYLE = {"B": "bold white on red", "P": "bold white on blue", "T": "bold white on green"}


def card_text(code: str | None) -> Text:
    """A card as ``T♠`` (red for hearts and diamonds); ``··`` for a card not seen yet."""
    if not code:
        return Text("[··]", style="dim")
    rank, suit = code[:-1], code[-1]
    style = "bold red on white" if suit in RED_SUITS else "bold black on white"
    return Text(f"[{'10' if rank == 'T' else rank}{SUIT_SYMBOL.get(suit, suit)}]", style=style)


ROAD_COLUMNS = 30


def big_road_text(cells: list[dict[str, Any]], columns: int = ROAD_COLUMNS) -> Text:
    """The big road's last ``columns`` grid columns, six rows: ``B``/``P`` in red/blue, a tie
    count as a green digit after the letter (``B1``), blanks as dots."""
    last = max((c["col"] for c in cells), default=-1)
    first = max(0, last - columns + 1)
    grid = {(c["col"], c["row"]): c for c in cells if c["col"] >= first}
    text = Text("big road\n", style="bold")
    for row in range(6):
        for col in range(first, max(last + 1, first + 1)):
            cell = grid.get((col, row))
            if cell is None:
                text.append(" · ", style="dim")
                continue
            text.append(cell["winner"], style=LABEL_STYLE.get(cell["winner"], ""))
            text.append(str(min(cell["ties"], 9)) if cell["ties"] else " ", style="bold green")
            text.append(" ")
        text.append("\n")
    return text


def shoe_stats_text(stats: dict[str, Any]) -> Text:
    """One line of the shoe's statistics: ``shoe: B 20  P 21  T 4  pairs 2/4  naturals 16 ...``."""
    def n(key: str) -> str:
        value = stats.get(key)
        return "–" if value is None else str(value)

    return Text(f"shoe: B {n('banker')}  P {n('player')}  T {n('tie')}  player pairs {n('player_pair')}  "
                f"banker pairs {n('banker_pair')}  naturals {n('natural')}  rounds {n('rounds')}  "
                f"cards left {n('cards_left')}")


def render(view: dict[str, Any]) -> RenderableType:
    """The whole screen for one view (see :meth:`TableView.view`)."""
    header = Text()
    header.append(f"{view['table'] or '?'}  ", style="bold")
    header.append(f"{view['variant'] or view['game'] or ''}  ")
    header.append((view["state"] or "waiting").upper(), style="bold yellow")
    if view.get("reason"):
        header.append(f" ({view['reason']})")
    if view["countdown"] is not None:
        header.append(f"   betting closes in {view['countdown']:.0f} s", style="bold green")
    if view["round"]:
        header.append(f"   round {view['round']}", style="dim")

    cards = Table.grid(padding=(0, 2))
    cards.add_column(style="bold", justify="right")
    cards.add_column()
    for position in view["positions"]:
        row = Text(" ").join(card_text(c) for c in position["cards"])
        cards.add_row(position["name"], row)
    parts: list[RenderableType] = [header, Text(""), cards]
    result = view["result"]
    if result is not None:
        parts += [Text(""), Text(result["banner"], style="bold white on dark_green", justify="center")]
    if view["history"]:
        last = Text("last results: ")
        for entry in view["history"]:
            last.append(f" {entry['label']} ", style=LABEL_STYLE.get(entry["label"], "reverse"))
            last.append(" ")
        parts += [Text(""), last]
    if view.get("big_road") or (view.get("game") == "baccarat" and view.get("shoe_stats")):
        parts += [Text(""), big_road_text(view.get("big_road") or []), shoe_stats_text(view.get("shoe_stats") or {})]
    for alert in view["alerts"][-3:]:
        parts.append(Text(f"alert {alert['severity']}: {alert['kind']} {alert['detail'] or ''}",
                          style="bold red" if alert["severity"] == "critical" else "yellow"))
    return Panel(Group(*parts), title=f"table {view['table'] or ''}", subtitle=f"seq {view['seq']}")


def run_terminal(client: TableClient, *, table: str | None, json_lines: bool = False,
                 out: TextIO | None = None, stop: Callable[[], bool] = lambda: False,
                 clock: Callable[[], float] = time.time) -> None:
    """Follow ``client`` until ``stop()`` or Ctrl-C: a live rich screen, or JSON lines with --json."""
    out = out or sys.stdout
    model = TableView(table)
    if json_lines:
        while not stop():
            for item in client.events(timeout=0.25):
                out.write(encode_item(item).decode() + "\n")
                out.flush()
                if stop():
                    return
        return
    # Not a terminal (a pipe, a log): no height to crop the screen to.
    console = Console(file=out, height=None if out.isatty() else 200)
    with Live(render(model.view(clock())), console=console, refresh_per_second=4,
              transient=False) as live:
        while not stop():
            for item in client.events(timeout=0.25):
                model.apply(item)
                live.update(render(model.view(clock())))
                if stop():
                    return
            live.update(render(model.view(clock())))  # the countdown ticks
