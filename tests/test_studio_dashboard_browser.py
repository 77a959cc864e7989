"""The studio dashboard in Debian's Chromium: 100 recorded tables behind a real studio proxy, one
page; every tile as its table's events say (state, last results, the paused tables' alerts),
filtered by state, and a click opens that table's floor page, live."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from studio_stage import StudioStage

from table_controller.display.model import summary_of

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage",
        "--no-first-run", "--disable-extensions", "--disable-component-update", "--disable-sync"]
pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_hundred_tables_on_one_page_filtered_and_each_opening_its_floor_page(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed: run scripts/install-browser.sh")
    sync_api = pytest.importorskip("playwright.sync_api", reason="install the 'browser' extra (playwright)")
    from playwright.sync_api import expect

    stage = StudioStage(100)
    try:
        for k, table in enumerate(stage.tables):
            table.new_shoe()
            table.play(3 + k % 4)
            if k % 10 == 0:
                table.pause("lid-open", f"lid opened at {table.table}")
        paused = {t.table for k, t in enumerate(stage.tables) if k % 10 == 0}
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            page.goto(stage.url)
            deadline = time.monotonic() + 30
            while page.locator("a.tile").count() < 100 and time.monotonic() < deadline:
                for table in stage.tables:  # the dashboard learns of a table from its events
                    table.heartbeat("paused" if table.table in paused else "idle")
                time.sleep(0.5)
            expect(page.locator("a.tile")).to_have_count(100)
            for table in stage.tables:  # now that every table is followed: its state, live
                table.heartbeat("paused" if table.table in paused else "idle")
            for table in stage.tables[:12]:
                tile = page.locator(f'a.tile[data-table="{table.table}"]')
                expect(tile).to_have_attribute("data-state", "paused" if table.table in paused else "idle")
                labels = [summary_of(r)["label"] for r in table.results][-12:]
                chips = tile.locator(".chips span")
                expect(chips).to_have_count(len(labels))
                assert [c.get_attribute("class").split()[0] for c in chips.all()] == [f"lbl-{x}" for x in labels]
            expect(page.locator('a.tile[data-table="T001"] .alert')).to_contain_text("lid opened at T001")
            page.select_option("#filter", "paused")
            expect(page.locator("a.tile")).to_have_count(len(paused))
            assert {t.get_attribute("data-table") for t in page.locator("a.tile").all()} == paused
            page.screenshot(path=str(tmp_path / "studio-paused.png"))
            page.select_option("#filter", "")
            expect(page.locator("a.tile")).to_have_count(100)
            page.screenshot(path=str(tmp_path / "studio-1920x1080.png"))
            print(f"screenshot: {tmp_path / 'studio-1920x1080.png'}")
            # a click opens that table's floor page, which follows the table live
            page.locator('a.tile[data-table="T002"]').click()
            expect(page.locator("#table")).to_have_text("T002", timeout=10_000)
            stage.tables[1].open_round()
            # the floor page's server may subscribe just after the round opened (ZeroMQ's slow
            # joiner): a live table's next heartbeat, a second later, brings it up to date
            deadline = time.monotonic() + 10
            while page.locator("#state").get_attribute("data-state") != "betting" and time.monotonic() < deadline:
                stage.tables[1].heartbeat("betting")
                time.sleep(0.5)
            expect(page.locator("#state")).to_have_attribute("data-state", "betting", timeout=5_000)
            browser.close()
    finally:
        stage.close()
