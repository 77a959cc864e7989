"""The web floor display, end to end in Debian's headless chromium (no browser download)."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from fake_table import BANKER_ROUND, PLAYER_ROUND, FakeTable

from table_controller.client import TableClient
from table_controller.display.web import WebDisplay
from table_controller.publish import EventPublisher

LOOPBACK = "tcp://127.0.0.1:0"
CHROMIUM = Path("/usr/bin/chromium")


class Heartbeats:
    """The controller's idle heartbeat, every 0.2 s here, in a thread."""

    def __init__(self, table: FakeTable) -> None:
        self.table = table
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.2):
            self.table.heartbeat()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)


@pytest.fixture
def stage() -> Iterator[dict]:
    context = zmq.Context()
    publisher = EventPublisher("T01", LOOPBACK, LOOPBACK, context=context).start()
    table = FakeTable(publisher)
    table.new_shoe()
    table.play_round(BANKER_ROUND)
    beats = Heartbeats(table)
    endpoints = (publisher.bound_publish, publisher.bound_snapshot)
    display = WebDisplay(lambda: TableClient(*endpoints, "T01"), table="T01", port=0)
    port = display.start()
    try:
        yield {"table": table, "publisher": publisher, "url": f"http://127.0.0.1:{port}/",
               "display": display, "port": port}
    finally:
        beats.close()
        display.stop()
        publisher.close()
        context.destroy(linger=0)


def test_health_and_view_endpoints_answer_json(stage):
    with urllib.request.urlopen(stage["url"] + "healthz", timeout=5) as answer:
        assert json.load(answer)["ok"] is True
    with urllib.request.urlopen(stage["url"] + "view", timeout=5) as answer:
        assert set(json.load(answer)) >= {"table", "state", "countdown", "positions", "result",
                                          "history", "bead_plate", "big_road"}


def test_page_draws_cards_itself_and_loads_nothing_from_elsewhere(stage):
    with urllib.request.urlopen(stage["url"], timeout=5) as answer:
        page = answer.read().decode()
    assert 'new EventSource("events")' in page
    assert "createElementNS(SVG" in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page


@pytest.mark.browser
@pytest.mark.slow
def test_floor_display_shows_a_round_as_it_is_played(stage, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed: run scripts/install-browser.sh")
    pytest.importorskip("playwright.sync_api", reason="install the 'browser' extra (playwright)")
    from playwright.sync_api import expect, sync_playwright

    table: FakeTable = stage["table"]
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions"],
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(stage["url"])
            # Late joiner: the snapshot brings the table, the last result and the shoe's scoreboard.
            expect(page.locator("#table")).to_have_text("T01", timeout=10_000)
            expect(page.locator("#status")).to_have_text("live")
            expect(page.locator("#banner")).to_have_text("BANKER WINS  PLAYER 3 – BANKER 8")
            expect(page.locator("#bead-plate g.cell")).to_have_count(1)
            expect(page.locator('#bead-plate g.cell[data-winner="B"]')).to_have_text("B")
            expect(page.locator("#bead-plate")).to_be_visible()

            table.open_round(betting_seconds=15)
            expect(page.locator("#state")).to_have_attribute("data-state", "betting")
            expect(page.locator("#state")).to_have_text("place your bets")
            expect(page.locator("#countdown")).to_have_text(
                __import__("re").compile(r"^(1[0-5]|[1-9])$"))
            expect(page.locator("#banner")).to_be_hidden()

            events = table.deal(PLAYER_ROUND)
            for card in [e for e in events if e.type == "card"]:
                slot = page.locator(f'[data-position="{card.position}"] svg.card')
                expect(slot.nth(card.index)).to_have_attribute("data-code", card.code)
            expect(page.locator("#state")).to_have_attribute("data-state", "dealing")
            expect(page.locator("#countdown")).to_have_text("")

            table.finish()
            expect(page.locator("#banner")).to_have_text("PLAYER WINS  PLAYER 7 – BANKER 4")
            expect(page.locator('[data-position="banker"] svg.card')).to_have_count(3)
            expect(page.locator("#bead-plate g.cell")).to_have_text(["B", "P"])
            expect(page.locator('#big-road g.cell[data-winner="B"]')).to_have_count(1)
            expect(page.locator('#big-road g.cell[data-winner="P"]')).to_have_count(1)
            expect(page.locator("#history span")).to_have_text(["B", "P"])
            page.screenshot(path=str(tmp_path / "web-display.png"), full_page=True)
            assert (tmp_path / "web-display.png").stat().st_size > 10_000

            table.new_shoe()
            expect(page.locator("#bead-plate g.cell")).to_have_count(0)
            expect(page.locator("#history span")).to_have_count(2)

            # The display server restarts: the page reconnects by itself.
            stage["display"].stop()
            expect(page.locator("#status")).not_to_have_text("live", timeout=10_000)
            endpoints = (stage["publisher"].bound_publish, stage["publisher"].bound_snapshot)
            stage["display"] = WebDisplay(lambda: TableClient(*endpoints, "T01"), table="T01",
                                          port=stage["port"])
            stage["display"].start()
            expect(page.locator("#status")).to_have_text("live", timeout=15_000)
            table.play_round(BANKER_ROUND)
            expect(page.locator("#history span")).to_have_text(["B", "P", "B"])
        finally:
            browser.close()


def views(url: str):
    """The views pushed on ``/events``, as they come (blocking reads with a timeout)."""
    with urllib.request.urlopen(url + "events", timeout=10) as stream:
        for raw in stream:
            line = raw.decode()
            if line.startswith("data: "):
                yield json.loads(line[6:])


def test_garbage_on_the_wire_is_skipped_and_the_display_stays_up(caplog):
    from table_controller.events import encode, make_event

    context = zmq.Context()
    raw = context.socket(zmq.PUB)
    raw.setsockopt(zmq.LINGER, 0)
    raw.bind(LOOPBACK)
    wire = raw.getsockopt_string(zmq.LAST_ENDPOINT)
    with EventPublisher("T01", LOOPBACK, LOOPBACK, context=context) as snapshots:
        seq = [0]

        def send(**fields) -> dict:
            seq[0] += 1
            event = make_event(table="T01", seq=seq[0], ts=0, game="baccarat", round=None, **fields)
            snapshots.prime([event])
            raw.send_multipart(encode(event))
            return event

        beats = threading.Event()

        def heartbeats() -> None:  # the controller's idle heartbeat until the display is live
            while not beats.wait(0.1):
                send(type="heartbeat", state="idle")

        beating = threading.Thread(target=heartbeats, daemon=True)
        display = WebDisplay(lambda: TableClient(wire, snapshots.bound_snapshot, "T01"),
                             table="T01", port=0)
        url = f"http://127.0.0.1:{display.start()}/"
        try:
            beating.start()
            stream = views(url)
            assert next(v for v in stream if v["seq"] > 0)["table"] == "T01"
            beats.set()
            beating.join(5)
            raw.send_multipart([b"T01.card", b"\xff\xfe not json"])
            raw.send_multipart([b"T01.card", b'{"v":1,"table":"T01","seq":"x"}'])
            good = send(type="table.state", state="paused", reason="dealer change")
            shown = next(v for v in stream if v["seq"] == good.seq)
            assert (shown["state"], shown["reason"]) == ("paused", "dealer change")
            assert display.feeder.is_running
        finally:
            beats.set()
            display.stop()
            raw.close(linger=0)
    context.destroy(linger=0)
