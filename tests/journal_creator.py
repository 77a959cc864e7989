"""Create a journal and die by SIGKILL at the Nth SQL statement of this process (kill -9 tests).

Usage: ``python tests/journal_creator.py JOURNAL N``. Every SQLite connection the
process opens reports each statement before it runs; at the Nth the process kills
itself with SIGKILL, so the kill lands at a chosen point of ``Journal()``'s start.
When ``Journal()`` returns first, the process prints how many statements it took
and exits 0 (so a caller learns how many kill points there are).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from table_controller.journal import Journal  # noqa: E402


def main(path: str, kill_at: int) -> None:
    count = 0
    real_connect = sqlite3.connect

    def traced(sql: str) -> None:
        nonlocal count
        count += 1
        if count == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)
        conn.set_trace_callback(traced)
        return conn

    sqlite3.connect = connect  # type: ignore[assignment]
    Journal(path, table="T01", game="baccarat", variant="baccarat").close()
    print(count)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
