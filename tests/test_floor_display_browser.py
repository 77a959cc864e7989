"""The floor display and the stream overlay in Debian's Chromium (playwright), against the pure
functions: every road's cells, the ask roads and the shoe statistics of a recorded baccarat
shoe; each other game's history board; both screen sizes and both Chinese scripts; the
overlay's transparent page; "connection lost" when the table goes silent.

Screenshots are written for a person to look at (not committed): under pytest's temporary
folder, ``floor-<game>-<lang>-<width>x<height>.png`` and ``overlay.png`` (the paths are printed).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq
from recorded_tables import RecordedTable

from table_controller.client import TableClient
from table_controller.display.boards import game_board
from table_controller.display.roads import ShoeResult, scoreboard
from table_controller.display.web import WebDisplay
from table_controller.publish import EventPublisher

CHROMIUM = Path("/usr/bin/chromium")
LOOPBACK = "tcp://127.0.0.1:0"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage",
        "--no-first-run", "--disable-extensions", "--disable-component-update", "--disable-sync"]
pytestmark = pytest.mark.browser


class Stage:
    """A recorded table and its web display."""

    def __init__(self, variant: str, lang: str = "en", seed: int = 3) -> None:
        self.context: zmq.Context[Any] = zmq.Context()
        self.publisher = EventPublisher("T01", LOOPBACK, LOOPBACK, context=self.context).start()
        self.table = RecordedTable(self.publisher, variant, seed=seed)
        endpoints = (self.publisher.bound_publish, self.publisher.bound_snapshot)
        self.display = WebDisplay(lambda: TableClient(*endpoints, "T01"), table="T01", port=0, lang=lang,
                                  limits="10 - 5,000")
        self.url = f"http://127.0.0.1:{self.display.start()}/"

    def close(self) -> None:
        self.display.stop()
        self.publisher.close()
        self.context.destroy(linger=0)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed: run scripts/install-browser.sh")
    sync_api = pytest.importorskip("playwright.sync_api", reason="install the 'browser' extra (playwright)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def cells(page: Any, selector: str, *attrs: str) -> list[tuple[Any, ...]]:
    """Every drawn cell of a road: (data-col, data-row, *attrs) as the DOM has them."""
    raw = page.eval_on_selector_all(
        selector + " g.cell", "(gs, attrs) => gs.map(g => [g.dataset.col, g.dataset.row, ...attrs.map(a => "
        "g.getAttribute('data-' + a))])", list(attrs))
    return [(int(c), int(r), *rest) for c, r, *rest in raw]


def shot(page: Any, folder: Path, name: str) -> Path:
    path = folder / name
    page.screenshot(path=str(path))
    print(f"screenshot: {path}")
    assert path.stat().st_size > 10_000
    return path


@pytest.mark.parametrize("lang", ["en", "zh-Hant"])
def test_baccarat_roads_ask_roads_and_statistics_are_the_pure_functions(browser: Any, tmp_path: Path,
                                                                        lang: str) -> None:
    from playwright.sync_api import expect

    stage = Stage("baccarat", lang)
    try:
        stage.table.new_shoe()
        stage.table.play(45)
        stage.table.open_round()
        results = [ShoeResult(r.outcome["winner"][0].upper(), r.outcome["player_pair"],  # type: ignore[arg-type]
                              r.outcome["banker_pair"], r.outcome["natural"]) for r in stage.table.results]
        board = scoreboard(results)
        for width, height in ((1920, 1080), (1080, 1920)):
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(stage.url)
            expect(page.locator("#state")).to_have_attribute("data-state", "betting", timeout=10_000)
            expect(page.locator("#bead-plate g.cell")).to_have_count(len(board.bead_plate))
            assert cells(page, "#bead-plate", "winner") == [(b.col, b.row, b.winner) for b in board.bead_plate]
            big = [(c.col, c.row, c.value.winner, str(c.value.ties)) for c in board.big_road]
            first = max(0, max(c[0] for c in big) - 29)  # the page shows the last 30 columns
            assert cells(page, "#big-road", "winner", "ties") == [c for c in big if c[0] >= first]
            for name, drawn in board.derived.items():
                want = [(c.col, c.row, c.value) for c in drawn]
                first = max(0, max((c[0] for c in want), default=0) - 54)  # 55 columns of 14 px
                assert cells(page, "#" + name.replace("_", "-"), "colour") == [c for c in want if c[0] >= first], name
            for side in ("B", "P"):
                shown = page.eval_on_selector_all(f"#ask-{side} svg",
                                                  "s => s.map(x => [x.dataset.road, x.dataset.colour])")
                assert {road: colour or None for road, colour in shown} == board.ask[side]  # type: ignore[index]
            for key in ("banker", "player", "tie", "player_pair", "banker_pair", "natural", "rounds"):
                expect(page.locator(f'[data-stat="{key}"]')).to_have_text(str(board.stats[key]))
            expect(page.locator('[data-bet="banker"]')).to_contain_text("0.95:1")
            if lang == "zh-Hant":
                expect(page.locator('#bead-plate g.cell[data-winner="B"]').first).to_have_text("莊")
                expect(page.locator('#ask-P b')).to_have_text("閒問路")
            else:
                expect(page.locator('#bead-plate g.cell[data-winner="B"]').first).to_have_text("B")
            # nothing of the page falls outside the screen
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            shot(page, tmp_path, f"floor-baccarat-{lang}-{width}x{height}.png")
            page.close()
    finally:
        stage.close()


@pytest.mark.parametrize("variant", ["teen-patti-2020", "three-pictures", "three-face"])
def test_each_other_game_shows_its_own_history_board(browser: Any, tmp_path: Path, variant: str) -> None:
    from playwright.sync_api import expect

    stage = Stage(variant, "zh-Hans" if variant == "three-face" else "en", seed=11)
    try:
        stage.table.play(40)
        stage.table.heartbeat()
        board = game_board(stage.table.result_dicts())
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto(stage.url)
        expect(page.locator("#board")).to_be_visible(timeout=10_000)
        expect(page.locator("#big-road")).to_be_hidden()
        rows = board["rounds"][-12:][::-1]
        expect(page.locator("#board-rounds tr[data-round]")).to_have_count(len(rows))
        # the page has drawn the last view: its newest row is the table's last round
        expect(page.locator("#board-rounds tr[data-round]").first).to_have_attribute("data-round", rows[0]["round"])
        shown = page.eval_on_selector_all(
            "#board-rounds tr[data-round]", "trs => trs.map(tr => [tr.dataset.round, "
            "[...tr.querySelectorAll('td[data-position]')].map(td => [td.dataset.position, td.dataset.result])])")
        assert shown == [[r["round"], [[p["name"], p["result"] or ""] for p in r["positions"]]] for r in rows]
        notable = page.eval_on_selector_all("#notable li", "lis => lis.map(li => li.textContent)")
        assert notable == [f"{n['round']} — {n['text']}" for n in board["notable"][::-1]]
        wins = page.eval_on_selector_all("#board-wins span", "s => s.map(x => x.dataset.wins)")
        assert wins == list(board["wins"])
        shot(page, tmp_path, f"floor-{variant}-1920x1080.png")
        page.close()
    finally:
        stage.close()


def test_the_overlay_is_transparent_and_shows_the_cards_totals_and_result(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    stage = Stage("baccarat")
    try:
        stage.table.new_shoe()
        stage.table.play(1)
        last = stage.table.results[-1]
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto(stage.url + "overlay")
        expect(page.locator("#banner")).to_be_visible(timeout=10_000)
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"
        for position, hand in last.hands.items():
            expect(page.locator(f'[data-position="{position}"] svg.card')).to_have_count(len(hand.cards))
            expect(page.locator(f'[data-position="{position}"] .points')).to_have_text(str(hand.points))
        path = tmp_path / "overlay.png"
        page.screenshot(path=str(path), omit_background=True)
        print(f"screenshot: {path}")
        page.close()
    finally:
        stage.close()


#: Run in the floor display's page: records in ``window.lostAfterMs`` how long after the last
#: message (the page's own ``lastMessage``) the status turned to "connection lost".
_TIME_THE_LOSS = """() => {
  const status = document.getElementById("status");
  window.lostAfterMs = null;
  const note = () => {
    if (status.className === "stale" && window.lostAfterMs === null) {
      window.lostAfterMs = performance.now() - lastMessage;
    }
  };
  new MutationObserver(note).observe(status, {attributes: true, childList: true, characterData: true, subtree: true});
  note();
}"""


def test_a_silent_table_shows_connection_lost_within_3_s_and_a_pause_shows_its_alert(browser: Any) -> None:
    from playwright.sync_api import expect

    stage = Stage("baccarat")
    try:
        stage.table.new_shoe()
        stage.table.play(2)
        stage.table.pause("lid-open", "shoe lid opened")
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto(stage.url)
        expect(page.locator("#pause")).to_be_visible(timeout=10_000)
        expect(page.locator("#pause")).to_contain_text("shoe lid open")
        stage.table.heartbeat("paused")
        expect(page.locator("#status")).to_have_text("live")
        # the table says nothing more: within 3 s of its last message the floor sees that the
        # connection is lost. Timed in the page, where the display decides (from the message's
        # arrival to the status's change): the test's own polling of a loaded machine once
        # added enough to miss a 3 s window counted from when it saw "live"
        page.evaluate(_TIME_THE_LOSS)
        expect(page.locator("#status")).to_have_text("CONNECTION LOST", timeout=10_000)
        lost_after_ms = page.evaluate("window.lostAfterMs")
        assert lost_after_ms is not None and 2_000 <= lost_after_ms <= 3_000
        page.close()
    finally:
        stage.close()
