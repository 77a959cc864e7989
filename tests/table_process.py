"""A scripted controller as its own process, for kill -9 tests.

``python table_process.py PUBLISH SNAPSHOT JOURNAL ROUNDS...``: primes its publisher
from the journal (JSON lines), then plays the given baccarat rounds (cards
comma-separated), journaling each event (flush + fsync) before publishing it,
then sends heartbeats every 0.1 s until killed. Prints "ready" once bound.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fake_table import FakeTable  # noqa: E402

from table_controller.event_types import Event, decode_event, encode_event  # noqa: E402
from table_controller.publish import EventPublisher  # noqa: E402


class JournaledTable(FakeTable):
    """FakeTable whose journal is a file: written and synced before the event is published."""

    def __init__(self, publisher: EventPublisher, journal: Path) -> None:
        super().__init__(publisher)
        self.file = journal.open("a", encoding="utf-8")
        self.rounds = sum(1 for e in self.previous(journal) if e.type == "round.start")

    @staticmethod
    def previous(journal: Path) -> list[Event]:
        if not journal.exists():
            return []
        return [decode_event(line) for line in journal.read_text().splitlines() if line.strip()]

    def emit(self, type: str, **payload):  # type: ignore[override]
        publish, self.publisher = self.publisher, _Journal(self)
        try:
            event = super().emit(type, **payload)
        finally:
            self.publisher = publish
        publish.publish(event)
        return event


class _Journal:
    def __init__(self, table: JournaledTable) -> None:
        self.table = table

    def publish(self, event: Event) -> None:
        self.table.file.write(encode_event(event).decode("utf-8") + "\n")
        self.table.file.flush()
        os.fsync(self.table.file.fileno())


def main() -> None:
    publish, snapshot, journal_path, *rounds = sys.argv[1:]
    journal = Path(journal_path)
    publisher = EventPublisher("T01", publish, snapshot)
    previous = JournaledTable.previous(journal)
    publisher.prime(previous)
    publisher.start()
    table = JournaledTable(publisher, journal)
    table.seq = publisher.last_seq
    print("ready", flush=True)
    for cards in rounds:
        table.play_round(cards.split(","))
    while True:
        table.heartbeat()
        time.sleep(0.1)  # the controller's heartbeat pace


if __name__ == "__main__":
    main()
