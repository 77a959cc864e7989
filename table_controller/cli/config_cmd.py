"""``table-controller config example|check``: a table's configuration to start from, and its check.

``example`` prints the shipped example of a game variant with this table's id, shoe
port, journal and metrics address filled in (everything else as shipped, comments
kept); ``check`` loads a configuration as ``run`` would and says what it found.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from importlib import resources
from pathlib import Path

#: The shipped example of each game (the variant is set in it).
EXAMPLES = {"baccarat": "baccarat", "three-pictures": "three-pictures", "three-face": "three-face",
            "teen-patti-2020": "teen-patti-2020"}


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    config = subparsers.add_parser(
        "config", help="print an example table configuration; check one",
        description="A table's TOML configuration (docs/config.md): start from a shipped example, check it.",
    )
    sub = config.add_subparsers(dest="config_command", metavar="ACTION")
    sub.required = True
    example = sub.add_parser("example", help="print a game's example configuration with this table's values")
    example.add_argument("game", choices=sorted(EXAMPLES), help="the game whose example to start from")
    example.add_argument("--table", default="T01", help="the table id (default T01)")
    example.add_argument("--shoe-port", help="the shoe's serial port or pyserial URL (default as shipped)")
    example.add_argument("--journal", type=Path,
                         help="the journal path (default /var/lib/table-controller/<table>.sqlite)")
    example.add_argument("--metrics", metavar="HOST:PORT", help="serve /metrics and /healthz here (default: not)")
    example.add_argument("--gpio", choices=["native", "mock"], help="the panel's pins (default native, as shipped)")
    example.set_defaults(func=run_example)
    check = sub.add_parser("check", help="load a configuration as `run` would; exit 0 when it is valid")
    check.add_argument("file", type=Path, help="the table's TOML configuration")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(func=run_check)


def example_text(game: str, *, table: str, shoe_port: str | None, journal: Path | None,
                 metrics: str | None, gpio: str | None) -> str:
    """The shipped example of ``game`` with the given values put in."""
    text = (resources.files("table_controller") / "configs" / f"{EXAMPLES[game]}.toml").read_text()
    text = re.sub(r'(?m)^id = "[^"]*"', f'id = "{table}"', text, count=1)
    journal = journal or Path(f"/var/lib/table-controller/{table}.sqlite")
    text = re.sub(r'(?m)^path = "[^"]*"', f'path = "{journal}"', text, count=1)
    if shoe_port:
        text = re.sub(r'(?m)^port = "[^"]*"', f'port = "{shoe_port}"', text, count=1)
    if gpio:
        text = re.sub(r'(?m)^gpio = "[^"]*"', f'gpio = "{gpio}"', text, count=1)
    if metrics:
        text += f'\n[metrics]\nlisten = "{metrics}"   # /metrics and /healthz (docs/service.md)\n'
    return text


def run_example(args: argparse.Namespace) -> int:
    print(example_text(args.game, table=args.table, shoe_port=args.shoe_port, journal=args.journal,
                       metrics=args.metrics, gpio=args.gpio), end="")
    return 0


def run_check(args: argparse.Namespace) -> int:
    from table_controller.config import load_config
    from table_controller.errors import ConfigError

    try:
        config = load_config(args.file)
    except ConfigError as e:
        if args.json:
            print(json.dumps({"ok": False, "problem": str(e)}))
        else:
            print(f"table-controller: {e}", file=sys.stderr)
        return 1
    summary = {"ok": True, "table": config.table_id, "variant": config.variant, "journal": str(config.journal),
               "journal_rotate": config.journal_rotation.every, "sources": list(config.sources),
               "shoe": config.shoe.port if config.shoe else None, "gpio": config.panel.gpio,
               "metrics": ":".join(map(str, config.metrics_listen)) if config.metrics_listen else None}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{args.file}: valid: table {config.table_id} ({config.variant}), journal {config.journal} "
              f"(rotate {config.journal_rotation.every}), cards from {', '.join(config.sources)}")
        if not config.journal.parent.is_dir():
            print(f"  note: the journal's folder {config.journal.parent} does not exist yet", file=sys.stderr)
    return 0
