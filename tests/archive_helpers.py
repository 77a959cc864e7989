"""A table for archive and studio tests: a journal being written and its snapshot endpoint
answering replay, with no controller around it."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import uvicorn
import zmq
from journal_helpers import TickingClock, write_rounds

from table_controller.archive import Archive
from table_controller.journal import Journal
from table_controller.publish import EventPublisher
from table_controller.publish.replay import JournalReplay
from table_controller.studio.app import create_app

LOOPBACK = "tcp://127.0.0.1:0"


class LiveTable:
    """A journal being written and its snapshot endpoint answering replay (no controller)."""

    def __init__(self, path: Path, table: str = "T01", seed: int = 7) -> None:
        self.journal = Journal(path, table=table, game="baccarat", variant="baccarat")
        self.clock = TickingClock()
        self.rounds = 0
        self.seed = seed
        self.context: zmq.Context[Any] = zmq.Context()
        self.publisher = EventPublisher(table, LOOPBACK, LOOPBACK, context=self.context,
                                        replay=JournalReplay(path, table)).start()
        assert self.publisher.bound_snapshot is not None
        self.endpoint: str = self.publisher.bound_snapshot

    def deal(self, rounds: int) -> None:
        write_rounds(self.journal, rounds=rounds, seed=self.seed + self.rounds, clock=self.clock,
                     first_round=self.rounds + 1)
        self.rounds += rounds

    def close(self) -> None:
        self.publisher.close()
        self.context.destroy(linger=0)
        self.journal.close()


class Studio:
    """The studio API over an archive, served by uvicorn on a free loopback port."""

    def __init__(self, archive: Archive, evidence: dict[str, Path] | None = None) -> None:
        config = uvicorn.Config(create_app(archive, evidence), host="127.0.0.1", port=0, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "the studio API did not start"
            time.sleep(0.01)
        self.base = f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def get_bytes(self, path: str, key: str) -> tuple[int, bytes]:
        request = urllib.request.Request(self.base + path, headers={"authorization": f"Bearer {key}"})
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def get(self, path: str, key: str | None = None, header: str = "authorization") -> tuple[int, Any]:
        request = urllib.request.Request(self.base + path)
        if key is not None:
            request.add_header(header, f"Bearer {key}" if header == "authorization" else key)
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
