"""Journal growth: bytes on disk per idle hour and per round, one file against segments.

Writes, through the real ``Journal`` with a made-up clock (so an hour takes seconds):

* an **idle hour**: one heartbeat a second, as an idle table sends them;
* **rounds at a live pace**: baccarat rounds from the real rules core, one every
  ``--round-seconds`` (default 45), with a heartbeat in every second in which nothing
  else was sent, and a new shoe every 70 rounds.

Each is written twice: *before* (one file, ``rotate = never``: what every table did
until segments came) and *after* (``rotate = day`` over two made-up days, then
``journal prune --compress``). Printed as one JSON object: bytes per idle hour and per
round in the live SQLite file, and in the closed segments once compressed, with the
ratio; the bytes a table keeps on disk in a steady state (the live day plus compressed
days not yet archived) follow from these. Progress goes to stderr.

    python benchmarks/journal_growth.py [--idle-hours 1] [--rounds 200] [--round-seconds 45]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from table_controller.event_types import Event  # noqa: E402
from table_controller.journal import Journal  # noqa: E402
from table_controller.journal.prune import compress_closed, segment_statuses  # noqa: E402
from table_controller.journal.segments import RotationPolicy  # noqa: E402
from table_controller.rules import load_game  # noqa: E402
from table_controller.rules.cards import shuffled_shoe  # noqa: E402
from table_controller.sim.journal_rounds import TickingClock, draft, round_drafts  # noqa: E402

#: 2026-12-01T00:00:00Z: the made-up days start here.
DAY = 1796083200.0
SHOE_ROUNDS = 70


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def idle(journal: Journal, clock: TickingClock, seconds: int) -> int:
    for _ in range(seconds):
        clock.now += 1.0
        journal.append([draft("heartbeat", None, clock=clock, state="idle")])
    return seconds


def rounds(journal: Journal, clock: TickingClock, count: int, round_seconds: float, seed: int) -> int:
    """``count`` rounds, each ``round_seconds`` long, heartbeats filling the quiet seconds."""
    game = load_game("baccarat")
    rng = random.Random(seed)
    shoe: list[int] = []
    events = 0
    for n in range(count):
        if n % SHOE_ROUNDS == 0 or len(shoe) < 10:
            shoe = shuffled_shoe(game.decks, rng)
            events += len(journal.append([draft("shoe", None, clock=clock, event="new", count=len(shoe))]))
        start = clock.now
        clock.step = 0.6  # a dealer's pace between the round's events
        drafts, used = round_drafts(game, shoe, f"G{seed}-{n + 1:06d}", clock=clock)
        shoe = shoe[used:]
        batch: list[Event] = []
        for d in drafts:
            batch.append(d)
        events += len(journal.append(batch[:4]))
        for d in batch[4:]:
            events += len(journal.append([d]))
        events += len(journal.append([draft("table.state", None, clock=clock, state="idle", reason=None)]))
        clock.step = 0.0
        while clock.now + 1.0 < start + round_seconds:
            clock.now += 1.0
            events += len(journal.append([draft("heartbeat", None, clock=clock, state="idle")]))
    return events


def on_disk(path: Path) -> dict[str, int]:
    statuses = segment_statuses(path)
    live = sum(s.bytes for s in statuses if s.live)
    closed = sum(s.bytes for s in statuses if not s.live)
    return {"live_bytes": live, "closed_bytes": closed, "segments": len(statuses),
            "events": sum(s.events for s in statuses)}


def measure(kind: str, rotate: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    path = folder / f"{kind}-{rotate}.sqlite"
    out: dict[str, Any] = {}
    # two made-up days of the same load: with rotate = day the first becomes a closed segment
    for day in range(2):
        clock = TickingClock(start=DAY + day * 86400.0, step=0.0)
        with Journal(path, table="T01", game="baccarat", rotation=RotationPolicy(rotate)) as journal:  # type: ignore[arg-type]
            if kind == "idle":
                idle(journal, clock, int(args.idle_hours * 3600))
            else:
                rounds(journal, clock, args.rounds, args.round_seconds, seed=day)
        progress(f"{kind}, rotate={rotate}: day {day + 1} written")
    before = on_disk(path)
    packed = compress_closed(path) if rotate != "never" else []
    after = on_disk(path)
    units = args.idle_hours if kind == "idle" else args.rounds
    per_day_events = before["events"] / 2
    out["events_per_unit"] = round(per_day_events / units, 1)
    if rotate == "never":
        out["bytes_per_unit_one_file"] = round(before["live_bytes"] / 2 / units)
    else:
        out["bytes_per_unit_live_segment"] = round(before["live_bytes"] / units)
        if packed:
            out["bytes_per_unit_compressed"] = round(after["closed_bytes"] / units)
            out["compression_ratio"] = round(before["closed_bytes"] / max(1, after["closed_bytes"]), 1)
        out["segments"] = after["segments"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle-hours", type=float, default=1.0, help="idle hours per made-up day (default 1)")
    parser.add_argument("--rounds", type=int, default=200, help="rounds per made-up day (default 200)")
    parser.add_argument("--round-seconds", type=float, default=45.0, help="seconds per round (default 45)")
    parser.add_argument("--dir", type=Path, help="where the journals are written (default: a temporary folder)")
    parser.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="journal-growth-") as scratch:
        folder = Path(scratch)
        result: dict[str, Any] = {"idle_hour": {}, "round": {}}
        for rotate in ("never", "day"):
            result["idle_hour"][rotate] = measure("idle", rotate, args, folder)
            result["round"][rotate] = measure("rounds", rotate, args, folder)
    result["settings"] = {"idle_hours": args.idle_hours, "rounds": args.rounds, "round_seconds": args.round_seconds}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
