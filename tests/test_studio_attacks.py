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
from archive_helpers import LiveTable
from test_studio_api import Studio

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
