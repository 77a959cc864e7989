"""A studio of recorded tables behind a real studio proxy, and its dashboard: for the dashboard's
browser test and its benchmark (benchmarks/studio_page.py)."""

from __future__ import annotations

from typing import Any

import zmq
from recorded_tables import RecordedTable

from table_controller.client import TableClient
from table_controller.display.studio_web import StudioDisplay
from table_controller.publish import EventPublisher
from table_controller.publish.proxy import StudioProxy

LOOPBACK = "tcp://127.0.0.1:0"
GAMES = ("baccarat", "baccarat", "baccarat", "teen-patti-2020", "three-pictures", "three-face")


class StudioStage:
    """``tables`` recorded tables (T001...) publishing through a proxy; the dashboard follows it."""

    def __init__(self, tables: int, lang: str = "en") -> None:
        self.context: zmq.Context[Any] = zmq.Context()
        self.proxy = StudioProxy(LOOPBACK, LOOPBACK, context=self.context).start()
        assert self.proxy.bound_frontend is not None and self.proxy.bound_backend is not None
        self.publishers: list[EventPublisher] = []
        self.tables: list[RecordedTable] = []
        snapshots = {}
        for k in range(1, tables + 1):
            name = f"T{k:03d}"
            publisher = EventPublisher(name, "connect:" + self.proxy.bound_frontend, LOOPBACK,
                                       context=self.context).start()
            self.publishers.append(publisher)
            self.tables.append(RecordedTable(publisher, GAMES[k % len(GAMES)], table=name, seed=k))
            assert publisher.bound_snapshot is not None
            snapshots[name] = publisher.bound_snapshot
        backend = self.proxy.bound_backend
        self.display = StudioDisplay(lambda: TableClient(backend, snapshots, None, context=self.context),
                                     port=0, lang=lang)
        self.url = f"http://127.0.0.1:{self.display.start()}/"

    def close(self) -> None:
        self.display.stop()
        for p in self.publishers:
            p.close()
        self.proxy.close()
        self.context.destroy(linger=0)
