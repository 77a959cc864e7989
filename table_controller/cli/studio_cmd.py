"""``table-controller studio``: the HTTP API over the studio archive (serve, key add)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from table_controller.cli.archive_cmd import patience_seconds
from table_controller.cli.stop_signals import StopFlag, stop_on_signals
from table_controller.errors import ConfigError


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    studio = subparsers.add_parser(
        "studio",
        help="the studio's HTTP API over the archive (serve, key add)",
        description="Round history from the studio archive (table-controller archive) over HTTP, for "
                    "operators' platforms; API keys kept hashed, each scoped to tables. See docs/studio.md.",
    )
    sub = studio.add_subparsers(dest="studio_command", metavar="ACTION")
    sub.required = True
    serve = sub.add_parser("serve", help="serve the API until Ctrl-C or SIGTERM",
                           description="Serve /v1/tables, /v1/tables/T/rounds, /v1/tables/T/rounds/R and "
                                       "/openapi.json over the archive.")
    _archive_arg(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8090, help="port (default 8090)")
    serve.add_argument("--wait-for-db", type=patience_seconds, default=math.inf, metavar="SECONDS",
                       help="at start, wait up to this long for an archive server that does not answer yet "
                            "(restarting, booting), trying again with a growing pause and logging each try; "
                            "0 gives up at once (default: for ever)")
    serve.add_argument("--evidence", action="append", default=[], metavar="TABLE=DIR",
                       help="a table's pictures folder (its journal's .evidence folder, shared or copied), "
                            "served at /v1/tables/TABLE/evidence/<sha256>.jpg (repeat)")
    serve.set_defaults(func=run_serve)
    key = sub.add_parser("key", help="make an API key (shown once; only its hash is kept)",
                         description="Make an API key scoped to some tables, or to all with '*'.")
    _archive_arg(key)
    key.add_argument("--name", required=True, help="who the key is for (an operator, a platform)")
    key.add_argument("--tables", required=True, help="comma-separated tables, or '*' for every table")
    key.add_argument("--json", action="store_true", help="print the key as a JSON object")
    key.set_defaults(func=run_key)
    revoke = sub.add_parser("revoke", help="revoke an API key by its number (refused from the next request on)",
                            description="Revoke the API key with this number (as 'studio key' printed it).")
    _archive_arg(revoke)
    revoke.add_argument("--id", type=int, required=True, help="the key's number")
    revoke.add_argument("--json", action="store_true", help="print the result as a JSON object")
    revoke.set_defaults(func=run_revoke)
    report = sub.add_parser(
        "report", help="studio statistics: pace, phases, voids, outcomes against the PAR sheet",
        description="Per table, per hour and in all: rounds, results, voids by cause, mean betting / "
                    "dealing / round seconds, and every bet's outcome shares against the exact PAR sheet "
                    "with a 99 % interval; a share outside it is flagged.")
    _archive_arg(report)
    report.add_argument("--table", action="append", help="a table (repeat; default: every archived table)")
    report.add_argument("--from", dest="since", help="rounds started at or after this RFC 3339 time")
    report.add_argument("--to", dest="until", help="rounds started before this RFC 3339 time")
    report.add_argument("--json", action="store_true", help="one JSON object")
    report.set_defaults(func=run_report)
    demo = sub.add_parser(
        "sim", help="a simulated studio on this machine: tables, the archive following them and the API",
        description="Start --tables simulated tables (each 'table-controller sim' in a process of its own, "
                    "loopback ports from --base-port), archive them as they deal (table-controller archive), "
                    "serve the API on --port with a key printed at start, until the tables have played "
                    "their rounds (then, with --stay, until Ctrl-C).")
    demo.add_argument("--tables", type=int, default=3, help="how many tables (default 3)")
    demo.add_argument("--rounds", type=int, default=20, help="rounds per table (default 20)")
    demo.add_argument("--speed", type=float, default=8.0, help="the tables' pace (default 8: 8x human)")
    demo.add_argument("--dir", type=Path, help="folder for the journals and the archive (default: a temporary one)")
    demo.add_argument("--base-port", type=int, default=25600, help="first loopback port of the tables (default 25600)")
    demo.add_argument("--port", type=int, default=8090, help="the API's port (default 8090)")
    demo.add_argument("--stay", action="store_true", help="keep archiving and serving after the tables end")
    demo.add_argument("--json", action="store_true", help="print the key and each archive turn as JSON lines")
    demo.set_defaults(func=run_demo)


def _archive_arg(parser: argparse.ArgumentParser) -> None:
    from table_controller.cli.archive_cmd import DB_HELP

    parser.add_argument("--db", required=True, metavar="LOCATION", help=DB_HELP + " (table-controller archive)")


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from table_controller.archive.backends import ArchiveOpener
    from table_controller.cli.archive_cmd import open_existing
    from table_controller.studio.app import create_app

    folders = {}
    for spec in args.evidence:
        table, sep, folder = spec.partition("=")
        if not sep or not table or not folder:
            raise ConfigError(f"--evidence {spec!r}: write TABLE=DIR, e.g. T01=/srv/evidence/T01")
        folders[table] = Path(folder)
    stop = StopFlag()
    stop_on_signals(stop)  # during the wait for the store (uvicorn installs its own while it serves)
    opened = ArchiveOpener(args.db, args.wait_for_db, opener=open_existing, stop=stop).open()
    if opened is None:
        return 0  # stopped while waiting for the store
    with opened as archive:
        uvicorn.run(create_app(archive, folders), host=args.host, port=args.port, log_level="warning")
    return 0


def run_key(args: argparse.Namespace) -> int:
    from table_controller.archive import open_archive
    from table_controller.events import format_ts
    from table_controller.studio.keys import key_hash, new_key

    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    if not tables:
        raise ConfigError("--tables: name at least one table, or '*'")
    key = new_key()
    import time

    with open_archive(args.db) as archive:
        number = archive.add_api_key(key_hash(key), args.name, tables, format_ts(time.time()))
    if args.json:
        print(json.dumps({"id": number, "name": args.name, "tables": tables, "key": key}))
    else:
        print(f"API key {number} for {args.name} (tables {', '.join(tables)}); shown only now:\n{key}")
    return 0


def run_revoke(args: argparse.Namespace) -> int:
    import time

    from table_controller.cli.archive_cmd import open_existing
    from table_controller.events import format_ts

    with open_existing(args.db) as archive:
        done = archive.revoke_api_key(args.id, format_ts(time.time()))
    if args.json:
        print(json.dumps({"id": args.id, "revoked": done}))
    else:
        print(f"API key {args.id} revoked" if done else f"no live API key {args.id}")
    return 0 if done else 1


GAMES = ("baccarat", "teen-patti-2020", "three-pictures", "three-face")


def run_demo(args: argparse.Namespace) -> int:
    """Tables in subprocesses, the follower in a thread, the API in this one (see ``studio sim --help``)."""
    import subprocess
    import sys
    import tempfile
    import threading
    import time
    from dataclasses import asdict

    import uvicorn

    from table_controller.archive import ArchiveFollower, SQLiteArchive, TableSource
    from table_controller.events import format_ts
    from table_controller.replay_client import ReplayError, fetch_replay
    from table_controller.studio.app import create_app
    from table_controller.studio.keys import key_hash, new_key

    if not 1 <= args.tables <= 20:
        raise ConfigError("--tables: 1 to 20 on one machine")
    folder = args.dir or Path(tempfile.mkdtemp(prefix="studio-sim-"))
    folder.mkdir(parents=True, exist_ok=True)
    sources, procs = [], []
    for k in range(args.tables):
        table = f"T{k + 1:02d}"
        publish, snapshot = args.base_port + 3 * k, args.base_port + 3 * k + 1
        cmd = [sys.executable, "-m", "table_controller", "sim", "--game", GAMES[k % len(GAMES)], "--table", table,
               "--rounds", str(args.rounds), "--speed", str(args.speed), "--seed", str(k + 1),
               "--journal", str(folder / f"{table}.sqlite"),
               "--publish", f"tcp://127.0.0.1:{publish}", "--snapshot", f"tcp://127.0.0.1:{snapshot}"]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(folder / f"{table}.log", "w")))
        sources.append(TableSource(table, f"tcp://127.0.0.1:{snapshot}"))
    stop = StopFlag()
    with SQLiteArchive(folder / "studio.sqlite") as archive:
        key = new_key()
        archive.add_api_key(key_hash(key), "studio sim", ["*"], format_ts(time.time()))
        base = f"http://127.0.0.1:{args.port}"
        if args.json:
            print(json.dumps({"api": base, "key": key, "archive": str(folder / "studio.sqlite")}), flush=True)
        else:
            print(f"studio API on {base} (key {key})\n  curl -H 'Authorization: Bearer {key}' "
                  f"{base}/v1/tables\n  archive {folder / 'studio.sqlite'}", flush=True)
        for source in sources:  # the tables take a moment to start: no alert for that
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    fetch_replay(source.endpoint, 0, 1, timeout=0.5)
                    break
                except ReplayError:
                    continue
        follower = ArchiveFollower(archive, sources, timeout=1.0)

        def follow() -> None:
            while not stop.is_set():
                for turn in follower.catch_up_all():
                    if turn.added:
                        if args.json:
                            print(json.dumps(asdict(turn)), flush=True)
                        else:
                            print(f"archived {turn.table}: +{turn.added} events (to seq {turn.archived_seq})",
                                  flush=True)
                if not args.stay and all(p.poll() is not None for p in procs):
                    # the tables have ended: what they journaled after the last turn is in their files
                    for turn in ArchiveFollower(archive, [TableSource(s.table, f"file:{folder / s.table}.sqlite")
                                                          for s in sources]).catch_up_all():
                        if turn.added:
                            print(json.dumps(asdict(turn)) if args.json else
                                  f"archived {turn.table}: +{turn.added} events from its journal file", flush=True)
                    stop.set()
                    break
                stop.wait(0.5)

        server = uvicorn.Server(uvicorn.Config(create_app(archive), host="127.0.0.1", port=args.port,
                                               log_level="warning"))
        follower_thread = threading.Thread(target=follow, daemon=True, name="archive-follower")
        follower_thread.start()
        def end_server() -> None:
            stop.wait()
            server.should_exit = True

        watcher = threading.Thread(target=end_server, daemon=True)
        watcher.start()
        stop_on_signals(stop)
        try:
            server.run()
        finally:
            stop.set()
            follower_thread.join(timeout=10)
            for p in procs:
                if p.poll() is None:
                    p.terminate()
            for p in procs:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        tables = archive.tables()
        summary = {t: seq for t, (seq, _) in tables.items()}
        print(json.dumps({"archived": summary, "alerts": len(archive.alerts())}) if args.json
              else f"archived: {summary}; alerts: {len(archive.alerts())}", flush=True)
    return 0


def run_report(args: argparse.Namespace) -> int:
    from table_controller.cli.archive_cmd import open_existing
    from table_controller.event_types import format_ts, parse_ts
    from table_controller.studio.history import EVERYTHING, studio_report

    try:
        since = format_ts(parse_ts(args.since)) if args.since else EVERYTHING[0]
        until = format_ts(parse_ts(args.until)) if args.until else EVERYTHING[1]
    except Exception as e:
        raise ConfigError(f"--from/--to: not an RFC 3339 time ({e})") from None
    with open_existing(args.db) as archive:
        tables = args.table or list(archive.tables())
        data = studio_report(archive, tables, since, until)
    if args.json:
        print(json.dumps(data))
        return 0
    for t in data["tables"]:
        a = t["all"]
        print(f"{t['table']} ({t['variant']}): {a['rounds']} rounds, {a['results']} results, {a['voids']} voids "
              f"{a['voids_by_cause'] or ''}; mean round {a['mean_round_s']} s (betting {a['mean_betting_s']}, "
              f"dealing {a['mean_dealing_s']})")
        pauses = ", ".join(f"{c} {v['count']}x {v['seconds']} s" for c, v in a["pauses_by_cause"].items())
        print(f"  pauses: {a['pauses']}" + (f" ({pauses})" if pauses else ""))
        for h in t["hours"]:
            print(f"  {h['period']}: {h['rounds']} rounds, {h['voids']} voids, {h['pauses']} pauses, "
                  f"mean round {h['mean_round_s']} s")
        for d in t["dealers"]:
            print(f"  dealer {d['period']}: {d['rounds']} rounds, {d['voids']} voids, mean round {d['mean_round_s']} s")
        for sh in t["shoes"]:
            print(f"  shoe {sh['shoe']} from {sh['started_at']}: {sh['rounds']} rounds, {sh['voids']} voids, "
                  f"{sh['cards_in_rounds']} cards in rounds, shoe count {sh['shoe_count']}")
        for c in t["outcomes"]:
            mark = "  FLAGGED" if c["flagged"] else ""
            print(f"  {c['bet']:<20} {c['label']:<10} {c['share']:.4f} observed ({c['observed']}/{c['rounds']}) "
                  f"vs {c['expected']:.4f} exact, 99 % [{c['ci99'][0]:.4f}, {c['ci99'][1]:.4f}]{mark}")
    return 0
