"""The studio API against hostile requests, through real HTTP: no key is 401 on every path
(not a 404 or a redirect that maps the routes), a table the archive does not hold is 404 for
every key, and bad or odd parameters (cursors past SQLite's integers, times that are not
RFC 3339, years before 1000, a window that ends before it starts) are a 400 naming the
parameter, never a 500 or a silently wrong window."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from archive_helpers import LiveTable, Studio

from table_controller.archive import ArchiveFollower, SQLiteArchive, TableSource
from table_controller.studio.keys import key_hash, new_key

Attack = tuple[Studio, dict[str, str]]
NO_KEY = {"error": "a valid API key is required"}


@pytest.fixture
def studio(tmp_path: Path) -> Iterator[Attack]:
    table = LiveTable(tmp_path / "T01.sqlite")
    table.deal(4)
    archive = SQLiteArchive(tmp_path / "archive.sqlite")
    ArchiveFollower(archive, [TableSource("T01", table.endpoint)]).catch_up_all()
    keys = {"all": new_key(), "t09": new_key()}
    archive.add_api_key(key_hash(keys["all"]), "all", ["*"], "2026-12-02T00:00:00.000Z")
    archive.add_api_key(key_hash(keys["t09"]), "t09", ["T09"], "2026-12-02T00:00:00.000Z")
    server = Studio(archive)
    yield server, keys
    server.stop()
    archive.close()
    table.close()


def call(studio: Studio, path: str, key: str | None = None, method: str = "GET") -> tuple[int, Any]:
    request = urllib.request.Request(studio.base + path, method=method)
    if key is not None:
        request.add_header("X-API-Key", key)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=10) as reply:
            status, raw = reply.status, reply.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/v1/nope"), ("GET", "/v1/tables/T01"), ("GET", "/v1/tables/"), ("GET", "/admin"),
    ("POST", "/v1/tables"), ("DELETE", "/v1/tables/T01/rounds/R1"), ("PUT", "/v1/tables/T01/rounds"),
])
def test_without_a_key_every_path_and_method_is_401(studio: Attack, method: str, path: str) -> None:
    server, _ = studio
    assert call(server, path, method=method) == (401, NO_KEY)
    assert call(server, path, "tck_not-a-key", method=method) == (401, NO_KEY)


def test_the_openapi_document_still_needs_no_key(studio: Attack) -> None:
    server, _ = studio
    assert call(server, "/openapi.json")[0] == 200


def test_a_table_the_archive_does_not_hold_is_404_for_every_key(studio: Attack) -> None:
    server, keys = studio
    for key, table in ((keys["all"], "T09"), (keys["all"], "NOPE"), (keys["t09"], "T09"), (keys["t09"], "T01")):
        for path in (f"/v1/tables/{table}/rounds", f"/v1/tables/{table}/rounds/R1"):
            status, body = call(server, path, key)
            assert (status, body) == (404, {"error": f"no table {table}"}), (key, path)
    assert call(server, "/v1/tables/T01/rounds", keys["all"])[0] == 200


@pytest.mark.parametrize("query", [
    "cursor=9223372036854775808", "cursor=99999999999999999999999",  # past SQLite's INTEGER: was a 500
    "limit=1_0", "limit=%20%205%20", "limit=%D9%A3", "cursor=%2B5",  # int() is lenient; the API is not
    "from=2026-11-29T18:40:00",  # no offset: not RFC 3339 (was read as the server's local time)
    "from=2026-11-29", "from=20261129T184000Z", "from=2026-W48-7", "from=2026-11-29T18:40:00%2B00:00:30",
    "from=2026-11-29T18:40:00.5%2B01", "from=2026-11-29%2018:40:00Z",
    "from=2026-11-29T18:40:10Z&to=2026-11-29T18:40:00Z",  # a window that ends before it starts
    "from=0001-01-01T00:00:00%2B01:00", "to=9999-12-31T23:59:59-23:59",  # outside years 1-9999 in UTC
])
def test_an_odd_parameter_is_a_400_that_names_it(studio: Attack, query: str) -> None:
    server, keys = studio
    status, body = call(server, f"/v1/tables/T01/rounds?{query}", keys["all"])
    name = query.split("=")[0]
    assert status == 400 and isinstance(body, dict) and name in body["error"], (query, status, body)


@pytest.mark.parametrize("since", ["0001-01-01T00:00:00Z", "0999-01-01T00:00:00Z", "1970-01-01t00:00:00z"])
def test_a_window_from_the_far_past_holds_every_round(studio: Attack, since: str) -> None:
    server, keys = studio
    status, page = call(server, f"/v1/tables/T01/rounds?from={since}", keys["all"])
    assert status == 200, page
    assert [r["round"] for r in page["rounds"]] == ["R1", "R2", "R3", "R4"]
    assert page["from"] == since.upper()[:19] + ".000Z"


@pytest.mark.parametrize("until", ["0001-01-01T00:00:00Z", "0001-01-01T00:30:00Z", "0999-01-01T00:00:00Z"])
def test_a_window_ending_in_the_far_past_is_empty(studio: Attack, until: str) -> None:
    server, keys = studio
    status, page = call(server, f"/v1/tables/T01/rounds?to={until}", keys["all"])
    assert status == 200 and page["rounds"] == [], page


def test_a_time_finer_than_a_millisecond_does_not_widen_the_window(studio: Attack) -> None:
    server, keys = studio
    rounds = call(server, "/v1/tables/T01/rounds?from=2000-01-01T00:00:00Z", keys["all"])[1]["rounds"]
    first = rounds[0]["started_at"]  # 2026-11-29T18:40:00.000Z
    after = first[:-1] + "0001Z"  # a tenth of a millisecond after R1 started
    status, page = call(server, f"/v1/tables/T01/rounds?from={after}", keys["all"])
    assert status == 200 and "R1" not in [r["round"] for r in page["rounds"]], page
    status, page = call(server, f"/v1/tables/T01/rounds?from=2000-01-01T00:00:00Z&to={after}", keys["all"])
    assert status == 200 and [r["round"] for r in page["rounds"]] == ["R1"], page


def test_the_work_of_one_round_does_not_grow_with_the_archive(tmp_path: Path) -> None:
    """GET of one round (and each round of a page of 500) once walked every archived event of
    its table: about 3 s for a page over 1,800 rounds, under the archive's one lock. Counted
    here in SQLite VM steps, which do not depend on the machine."""
    table = LiveTable(tmp_path / "T01.sqlite")
    table.deal(3)
    archive = SQLiteArchive(tmp_path / "archive.sqlite")
    follower = ArchiveFollower(archive, [TableSource("T01", table.endpoint)])
    follower.catch_up_all()
    key = new_key()
    archive.add_api_key(key_hash(key), "all", ["*"], "2026-12-02T00:00:00.000Z")
    server = Studio(archive)
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    def cost() -> int:
        archive._conn.set_progress_handler(count, 100)
        steps[0] = 0
        assert call(server, "/v1/tables/T01/rounds/R1", key)[0] == 200
        archive._conn.set_progress_handler(None, 0)
        return steps[0]

    try:
        small = cost()
        table.deal(60)
        follower.catch_up_all()
        assert cost() < 2 * small + 20, (small, steps[0])
    finally:
        server.stop()
        archive.close()
        table.close()


@pytest.mark.parametrize(("method", "path", "status"), [
    ("GET", "/v1/nope", 404), ("GET", "/v1/tables/T01%2F..%2FT02/rounds/R1", 404), ("POST", "/v1/tables", 405)])
def test_with_a_key_an_unknown_path_or_method_is_a_json_refusal(studio: Attack, method: str, path: str,
                                                                status: int) -> None:
    server, keys = studio
    got, body = call(server, path, keys["all"], method=method)
    assert got == status and isinstance(body, dict) and body["error"], (got, body)
