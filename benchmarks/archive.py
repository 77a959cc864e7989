"""Studio archive benchmark: ingest, queries at scale, catch-up. One JSON object.

* ``ingest``: 100 tables' event streams (``--ingest-rounds`` baccarat rounds each, as
  their journals hold them) pulled by the real :class:`ArchiveFollower` through the
  replay reply format (decode, chain check, event check, store), into PostgreSQL and
  into SQLite; events/s, and every table's archived (seq, hash) list compared with its
  journal's: lost and doubled must be 0. The transport (ZeroMQ) is left out: it is the
  replay endpoint's, measured by the tests; this is the archive's own cost.
* ``query``: an archive of ``--rounds`` rounds (default 1,000,000, spread over 100
  tables, a round every 45 s) and the studio API served by uvicorn: ``GET`` one round
  by id and a one-hour window, p50/p99 over ``--requests`` requests each, per backend.
* ``catch_up``: one table cut off for 10 minutes (a round every 45 s, a heartbeat every
  idle second, as a live table journals them) and then reachable again through its real
  replay endpoint (ZeroMQ, loopback): seconds until the archive holds all of it.

The PostgreSQL server is a throw-away cluster of Debian's binaries started here
(``table_controller.soak.postgres_server``); ``--skip-postgres`` leaves it out. Goals
(issue 16): ingest >= 50,000 events/s into PostgreSQL; GET one round p99 <= 10 ms, one
hour p99 <= 50 ms at 1,000,000 rounds.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import table_controller.archive.follower as follower_module  # noqa: E402
from table_controller.archive import Archive, ArchiveFollower, TableSource, open_archive  # noqa: E402
from table_controller.events import format_ts  # noqa: E402
from table_controller.replay_client import ReplayedEvent, ReplaySlice, decode_reply  # noqa: E402
from table_controller.sim.journal_rounds import START_EPOCH, TickingClock, chained_rounds  # noqa: E402
from table_controller.soak.postgres_server import PostgresServer  # noqa: E402

TABLES = 100
ROUND_SECONDS = 45.0
EVENT_STEP = 4.0  # seconds between a round's events: about 11 events, 45 s a round


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def table_name(k: int) -> str:
    return f"T{k:03d}"


class MemoryTable:
    """A table's journal held in memory, answering replay requests with the exact reply text
    a table's replay endpoint sends (:class:`~table_controller.publish.replay.JournalReplay`)."""

    def __init__(self, table: str, rows: list[tuple[int, str, str]], slice_: int) -> None:
        self.table = table
        self.endpoint = f"memory:{table}"
        self.curve = None
        self.rows = rows
        # the replies made before the clock starts: making them is the table's work, not the archive's
        self.replies = {(a, slice_): self.reply(a, slice_) for a in range(0, len(rows), slice_)}

    def fetch(self, after_seq: int, limit: int, timeout: float) -> ReplaySlice:
        reply = self.replies.get((after_seq, limit)) or self.reply(after_seq, limit)
        return decode_reply(reply, self.endpoint)

    def reply(self, after_seq: int, limit: int) -> bytes:
        part = self.rows[after_seq:after_seq + limit]
        prev = self.rows[after_seq - 1][2] if after_seq else "0" * 64
        head = json.dumps({"table": self.table, "after_seq": after_seq, "prev_hash": prev,
                           "last_seq": len(self.rows), "more": after_seq + len(part) < len(self.rows)})
        events = ", ".join(json.dumps({"seq": s, "hash": h, "body": b}) for s, b, h in part)
        return (head[:-1] + ', "events": [' + events + "]}").encode()


def check_archive(archive: Archive, tables: dict[str, list[tuple[int, str, str]]]) -> dict[str, int]:
    lost = doubled = wrong = 0
    for table, rows in tables.items():
        got = [(e.record.seq, e.record.hash) for e in archive.events(table)]
        want = [(s, h) for s, _, h in rows]
        lost += len(set(want) - set(got))
        doubled += len(got) - len(set(got))
        wrong += len(set(got) - set(want))
    return {"lost": lost, "doubled": doubled, "not_in_journals": wrong}


def bench_ingest(backends: dict[str, Callable[[], str]], rounds: int) -> dict[str, Any]:
    log(f"ingest: making {TABLES} tables x {rounds} rounds")
    tables = {table_name(k): list(chained_rounds(table_name(k), rounds, seed=k)) for k in range(TABLES)}
    total = sum(len(r) for r in tables.values())
    out: dict[str, Any] = {"tables": TABLES, "events": total}
    for name, location in backends.items():
        with open_archive(location()) as archive:
            sources = [MemoryTable(t, rows, follower_module.SLICE) for t, rows in tables.items()]
            follower = ArchiveFollower(archive, sources)  # type: ignore[arg-type]  # duck-typed sources
            t0 = time.perf_counter()
            while sum(t.added for t in follower.catch_up_all()):
                pass
            seconds = time.perf_counter() - t0
            # the store alone: the same slices, already decoded, into a second fresh archive
            out[name] = {"follow_events_per_s": round(total / seconds), "seconds": round(seconds, 2),
                         **check_archive(archive, tables)}
        with open_archive(location()) as archive:
            slices = [ReplaySlice(t, a, rows[a - 1][2] if a else "0" * 64, len(rows), False,
                                  [ReplayedEvent(s, h, b) for s, b, h in rows[a:a + 1000]])
                      for t, rows in tables.items() for a in range(0, len(rows), 1000)]
            t0 = time.perf_counter()
            for part in slices:
                archive.append(part, format_ts(time.time()))
            out[name]["store_events_per_s"] = round(total / (time.perf_counter() - t0))
        log(f"ingest {name}: {out[name]}")
    return out


def fill(archive: Archive, rounds: int) -> int:
    """``rounds`` rounds over :data:`TABLES` tables, stored slice by slice; returns events."""
    per_table = rounds // TABLES
    events = 0
    t0 = time.perf_counter()
    for k in range(TABLES):
        table = table_name(k)
        clock = TickingClock(start=START_EPOCH, step=EVENT_STEP)
        batch: list[ReplayedEvent] = []
        prev = "0" * 64
        for seq, body, hash_ in chained_rounds(table, per_table, seed=k, clock=clock):
            batch.append(ReplayedEvent(seq, hash_, body))
            if len(batch) == 5000:
                archive.append(ReplaySlice(table, batch[0].seq - 1, prev, seq, True, batch), "bench")
                prev, events, batch = hash_, events + len(batch), []
        if batch:
            archive.append(ReplaySlice(table, batch[0].seq - 1, prev, batch[-1].seq, False, batch), "bench")
            events += len(batch)
        if k % 10 == 9:
            rate = events / (time.perf_counter() - t0)
            log(f"  filled {k + 1}/{TABLES} tables, {events:,} events ({rate:,.0f}/s)")
    return events


class Server:
    """The studio API over ``archive`` on a free loopback port (uvicorn in a thread)."""

    def __init__(self, archive: Archive) -> None:
        import uvicorn

        from table_controller.studio.app import create_app

        self.server = uvicorn.Server(uvicorn.Config(create_app(archive), host="127.0.0.1", port=0,
                                                    log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        self.port = int(self.server.servers[0].sockets[0].getsockname()[1])

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def timed_gets(port: int, key: str, paths: Iterator[str], count: int) -> tuple[list[float], int]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    times: list[float] = []
    items = 0
    for _ in range(count):
        path = next(paths)
        t0 = time.perf_counter()
        conn.request("GET", path, headers={"authorization": f"Bearer {key}"})
        reply = conn.getresponse()
        body = reply.read()
        times.append((time.perf_counter() - t0) * 1000)
        if reply.status != 200:
            raise RuntimeError(f"GET {path}: {reply.status} {body[:200]!r}")
        data = json.loads(body)
        items += len(data.get("rounds", [])) if isinstance(data, dict) else 0
    conn.close()
    return times, items


def hour_windows(rng: random.Random, span: float) -> Iterator[str]:
    """Paths of random one-hour windows of random tables within the archived ``span`` seconds."""
    while True:
        start = START_EPOCH + rng.uniform(0, span - 3600)
        yield (f"/v1/tables/{table_name(rng.randrange(TABLES))}/rounds?from={format_ts(start)}"
               f"&to={format_ts(start + 3600)}&limit=500")


def bench_query(backends: dict[str, Callable[[], str]], rounds: int, requests: int) -> dict[str, Any]:
    from table_controller.studio.keys import key_hash, new_key

    out: dict[str, Any] = {"rounds": rounds, "tables": TABLES, "requests": requests}
    per_table = rounds // TABLES
    span = per_table * ROUND_SECONDS
    for name, location in backends.items():
        where = location()
        log(f"query {name}: filling {rounds:,} rounds")
        t0 = time.perf_counter()
        with open_archive(where) as archive:
            events = fill(archive, rounds)
            key = new_key()
            archive.add_api_key(key_hash(key), "bench", ["*"], format_ts(time.time()))
        fill_s = time.perf_counter() - t0
        with open_archive(where) as archive:
            server = Server(archive)
            rng = random.Random(5)
            one = (f"/v1/tables/{table_name(rng.randrange(TABLES))}/rounds/R{rng.randint(1, per_table)}"
                   for _ in iter(int, 1))

            timed_gets(server.port, key, one, 50)  # warm up
            one_ms, _ = timed_gets(server.port, key, one, requests)
            hour_ms, hour_rounds = timed_gets(server.port, key, hour_windows(rng, span), max(1, requests // 5))
            server.stop()
        out[name] = {
            "events": events, "fill_seconds": round(fill_s, 1),
            "get_round_ms": {"p50": round(percentile(one_ms, 0.5), 2), "p99": round(percentile(one_ms, 0.99), 2)},
            "get_hour_ms": {"p50": round(percentile(hour_ms, 0.5), 2), "p99": round(percentile(hour_ms, 0.99), 2),
                            "rounds_per_hour_window": round(hour_rounds / max(1, requests // 5), 1)},
        }
        log(f"query {name}: {out[name]}")
    return out


def bench_catch_up(backends: dict[str, Callable[[], str]]) -> dict[str, Any]:
    import zmq

    from table_controller.journal import Journal
    from table_controller.publish import EventPublisher
    from table_controller.publish.replay import JournalReplay

    rounds = int(600 / ROUND_SECONDS)
    out: dict[str, Any] = {"cut_off_seconds": 600}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "T01.sqlite"
        # the journal the table kept while it was cut off, rows exactly as chained_rounds makes them
        rows = list(chained_rounds("T01", rounds, clock=TickingClock(step=EVENT_STEP), heartbeats=True))
        Journal(path, table="T01", game="baccarat", variant="baccarat").close()
        import sqlite3

        conn = sqlite3.connect(path)
        for seq, body, hash_ in rows:
            event = json.loads(body)
            conn.execute("INSERT INTO events(seq, ts, type, round, body, hash) VALUES (?, ?, ?, ?, ?, ?)",
                         (seq, event["ts"], event["type"], event["round"], body, hash_))
        conn.commit()
        conn.close()
        out["events"] = len(rows)
        context: zmq.Context[Any] = zmq.Context()
        publisher = EventPublisher("T01", "tcp://127.0.0.1:0", "tcp://127.0.0.1:0", context=context,
                                   replay=JournalReplay(path, "T01")).start()
        try:
            for name, location in backends.items():
                with open_archive(location()) as archive:
                    follower = ArchiveFollower(archive, [TableSource("T01", str(publisher.bound_snapshot))])
                    t0 = time.perf_counter()
                    while follower.catch_up_all()[0].added:
                        pass
                    seconds = time.perf_counter() - t0
                    ok = archive.last("T01")[0] == len(rows)
                out[name] = {"seconds": round(seconds, 3), "complete": ok}
                log(f"catch-up {name}: {out[name]}")
        finally:
            publisher.close()
            context.destroy(linger=0)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ingest-rounds", type=int, default=200, help="rounds per table for ingest (default 200)")
    parser.add_argument("--rounds", type=int, default=1_000_000, help="archived rounds for queries (default 1M)")
    parser.add_argument("--requests", type=int, default=2000, help="GETs of one round (a fifth as many windows)")
    parser.add_argument("--skip-postgres", action="store_true", help="SQLite only")
    parser.add_argument("--postgres", metavar="URL",
                        help="a running server to use (postgresql://user@host:port/db, may create databases) "
                             "instead of a throw-away one started here")
    parser.add_argument("--skip-sqlite", action="store_true", help="PostgreSQL only")
    parser.add_argument("--only", choices=["ingest", "query", "catch_up"], action="append",
                        help="run only these parts (repeat); default all")
    parser.add_argument("--dir", type=Path, help="folder for the SQLite files (default: a temporary one)")
    parser.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    args = parser.parse_args()
    parts = args.only or ["ingest", "query", "catch_up"]
    folder = args.dir or Path(tempfile.mkdtemp(prefix="archive-bench-"))
    pg: PostgresServer | None = None if args.skip_postgres or args.postgres else PostgresServer().start()
    server_url = args.postgres or (pg.url() if pg is not None else None)
    made = 0

    def sqlite_location() -> str:
        nonlocal made
        made += 1
        return str(folder / f"archive-{made}.sqlite")

    def pg_location() -> str:
        nonlocal made
        import psycopg

        assert server_url is not None
        made += 1
        name = f"bench_{made}_{int(time.time())}"
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return server_url.rsplit("/", 1)[0] + "/" + name

    backends: dict[str, Callable[[], str]] = {} if args.skip_sqlite else {"sqlite": sqlite_location}
    if server_url is not None:
        backends = {"postgresql": pg_location, **backends}
    result: dict[str, Any] = {"benchmark": "archive"}
    try:
        if "ingest" in parts:
            result["ingest"] = bench_ingest(backends, args.ingest_rounds)
        if "catch_up" in parts:
            result["catch_up"] = bench_catch_up(backends)
        if "query" in parts:
            result["query"] = bench_query(backends, args.rounds, args.requests)
    finally:
        if pg is not None:
            pg.close()
    pg_ingest = result.get("ingest", {}).get("postgresql", {})
    pg_query = result.get("query", {}).get("postgresql", {})
    result["target_met"] = {
        "ingest_postgresql_50k_per_s": pg_ingest.get("follow_events_per_s", 0) >= 50_000 if pg_ingest else None,
        "exactly_once": all(v.get("lost") == 0 and v.get("doubled") == 0
                            for k, v in result.get("ingest", {}).items() if isinstance(v, dict)) or None,
        "get_round_p99_10ms": pg_query["get_round_ms"]["p99"] <= 10 if pg_query else None,
        "get_hour_p99_50ms": pg_query["get_hour_ms"]["p99"] <= 50 if pg_query else None,
    }
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
