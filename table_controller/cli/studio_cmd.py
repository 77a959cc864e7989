"""``table-controller studio``: the HTTP API over the studio archive (serve, key add)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

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
    serve.add_argument("--db", required=True, type=Path, help="the archive file")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8090, help="port (default 8090)")
    serve.set_defaults(func=run_serve)
    key = sub.add_parser("key", help="make an API key (shown once; only its hash is kept)",
                         description="Make an API key scoped to some tables, or to all with '*'.")
    key.add_argument("--db", required=True, type=Path, help="the archive file")
    key.add_argument("--name", required=True, help="who the key is for (an operator, a platform)")
    key.add_argument("--tables", required=True, help="comma-separated tables, or '*' for every table")
    key.add_argument("--json", action="store_true", help="print the key as a JSON object")
    key.set_defaults(func=run_key)


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from table_controller.archive import SQLiteArchive
    from table_controller.studio.app import create_app

    if not args.db.is_file():
        raise ConfigError(f"--db {args.db}: no such archive (table-controller archive follow makes it)")
    with SQLiteArchive(args.db) as archive:
        uvicorn.run(create_app(archive), host=args.host, port=args.port, log_level="warning")
    return 0


def run_key(args: argparse.Namespace) -> int:
    from table_controller.archive import SQLiteArchive
    from table_controller.events import format_ts
    from table_controller.studio.keys import key_hash, new_key

    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    if not tables:
        raise ConfigError("--tables: name at least one table, or '*'")
    key = new_key()
    import time

    with SQLiteArchive(args.db) as archive:
        number = archive.add_api_key(key_hash(key), args.name, tables, format_ts(time.time()))
    if args.json:
        print(json.dumps({"id": number, "name": args.name, "tables": tables, "key": key}))
    else:
        print(f"API key {number} for {args.name} (tables {', '.join(tables)}); shown only now:\n{key}")
    return 0
