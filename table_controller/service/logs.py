"""Log lines: readable on a terminal, one JSON object a line everywhere else (journald keeps them).

:func:`configure` picks the format: JSON when standard error is not a terminal (a
systemd service, a pipe) or ``TABLE_CONTROLLER_LOG=json``, the readable lines on a
terminal or with ``TABLE_CONTROLLER_LOG=text``. A JSON line carries ``ts`` (RFC 3339,
UTC), ``level``, ``logger``, ``msg`` and, where known, the ``table``, its current
``round`` and the journal's last ``seq`` (:func:`set_context`, set by ``run``), and
``exc`` with the traceback of a logged exception.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TextIO

_context: dict[str, Callable[[], Any] | Any] = {}
_handler: logging.Handler | None = None


def set_context(**fields: Callable[[], Any] | Any) -> None:
    """Fields every JSON line carries: a value, or a function asked at each line (never raising)."""
    _context.update(fields)


class JsonFormatter(logging.Formatter):
    """One JSON object per record (see module doc)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace(
                "+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in _context.items():
            try:
                value = value() if callable(value) else value
            except Exception:  # a context that cannot be read now: the line without it
                continue
            if value is not None:
                line[key] = value
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def wants_json(stream: TextIO, env: dict[str, str] | None = None) -> bool:
    choice = (os.environ if env is None else env).get("TABLE_CONTROLLER_LOG", "").lower()
    if choice in ("json", "text"):
        return choice == "json"
    isatty = getattr(stream, "isatty", None)
    return not (isatty is not None and isatty())


def configure(level: int, stream: TextIO | None = None) -> None:
    """The root logger's one handler, on standard error, in the format :func:`wants_json` picks."""
    stream = stream or sys.stderr
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if wants_json(stream) else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s: %(message)s"))
    global _handler
    root = logging.getLogger()
    if _handler is not None:  # configured before (main() called again in one process): replace ours only
        root.removeHandler(_handler)
    _handler = handler
    root.addHandler(handler)
    root.setLevel(level)
