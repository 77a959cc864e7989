"""The studio dashboard's model: every table at a glance, from the studio proxy's stream.

:class:`StudioBoard` folds the items of one :class:`~table_controller.client.TableClient`
that follows *all* tables (``table=None``, through the proxy) into a
:class:`~table_controller.display.model.TableView` per table, and gives each table a
compact **tile** (:func:`tile`): game, state, countdown, dealer, rounds this hour, the
last results and, while the table is paused, its alert. Each table carries a version
that moves with every item applied to it, so a screen can send only the tiles that
changed. The full floor view of one table is made only when someone watches it.
"""

from __future__ import annotations

import threading
from typing import Any

from table_controller.client import ClientItem, Snapshot
from table_controller.display.model import TableView

#: Results a tile shows.
TILE_RESULTS = 12


def tile(view: TableView, now: float) -> dict[str, Any]:
    """One table's tile (JSON-able)."""
    alert = None
    if view.state == "paused":  # the last alert; a late joiner's snapshot has only the pause's reason
        alert = view.alerts[-1] if view.alerts else {"kind": "paused", "severity": "critical", "detail": view.reason}
    return {
        "table": view.table, "game": view.game, "variant": view.variant, "state": view.state,
        "reason": view.reason, "round": view.round, "countdown": view.countdown(now), "dealer": view.dealer,
        "rounds_this_hour": view.rounds_this_hour(now), "seq": view.seq,
        "last": [h["label"] for h in list(view.history)[-TILE_RESULTS:]], "alert": alert,
    }


class StudioBoard:
    """Every table's view, fed from one all-tables client. Thread-safe: a feeder thread applies
    items while the server's streams read tiles and views."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.views: dict[str, TableView] = {}
        self.versions: dict[str, int] = {}
        self.version = 0

    def apply(self, item: ClientItem) -> str | None:
        """Fold one item into its table's view; the table it changed (None: nothing changed)."""
        table = item.table if isinstance(item, Snapshot) else getattr(item, "table", None)
        if not isinstance(table, str) or not table:
            return None
        with self._lock:
            view = self.views.get(table)
            if view is None:
                view = self.views[table] = TableView(table)
            if not view.apply(item):
                return None
            self.versions[table] = self.versions.get(table, 0) + 1
            self.version += 1
        return table

    def tiles(self, now: float,
              newer_than: dict[str, int] | None = None) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """The tiles of the tables changed since ``newer_than`` (table -> version; all when None),
        sorted by table, and the versions they are at."""
        with self._lock:
            changed = {t: v for t, v in self.versions.items() if newer_than is None or newer_than.get(t, -1) < v}
            out = [tile(self.views[t], now) for t in sorted(changed)]
        return out, changed

    def table_view(self, table: str, now: float) -> dict[str, Any] | None:
        """The full floor view of one table (None for a table not seen)."""
        with self._lock:
            view = self.views.get(table)
            return view.view(now) if view is not None else None

    def table_version(self, table: str) -> int:
        with self._lock:
            return self.versions.get(table, 0)
