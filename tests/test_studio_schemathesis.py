"""The studio API attacked from its own OpenAPI document (schemathesis): for every path and
method it describes, generated requests (odd parameters, wrong types, huge numbers, other
methods) get an answer the document allows: no 5xx, a body that matches the response's
schema, a declared status code. The live stream (an endless response) is left to
test_studio_api.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from archive_helpers import LiveTable
from hypothesis import HealthCheck, given, settings

from table_controller.archive import ArchiveFollower, SQLiteArchive, TableSource
from table_controller.studio.app import create_app
from table_controller.studio.keys import key_hash, new_key

KEY = new_key()


@pytest.fixture(scope="module")
def studio_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    folder: Path = tmp_path_factory.mktemp("schemathesis")
    table = LiveTable(folder / "T01.sqlite")
    table.deal(4)
    archive = SQLiteArchive(folder / "archive.sqlite")
    ArchiveFollower(archive, [TableSource("T01", table.endpoint)]).catch_up_all()
    archive.add_api_key(key_hash(KEY), "schemathesis", ["*"], "2026-12-02T00:00:00.000Z")
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(archive))
    yield schema.exclude(path="/v1/stream")
    archive.close()
    table.close()


def _operations(schema: Any) -> list[Any]:
    return [result.ok() for result in schema.get_all_operations()]


def test_every_described_operation_answers_as_described(studio_schema: Any) -> None:
    operations = _operations(studio_schema)
    assert {op.path for op in operations} >= {"/v1/tables", "/v1/tables/{table}/rounds/{round}"}
    for operation in operations:
        @given(case=operation.as_strategy())
        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def attack(case: Any) -> None:
            case.call_and_validate(headers={"Authorization": f"Bearer {KEY}"})

        attack()


def test_without_a_key_every_operation_is_a_described_401(studio_schema: Any) -> None:
    for operation in _operations(studio_schema):
        @given(case=operation.as_strategy())
        @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def attack(case: Any) -> None:
            response = case.call()
            assert response.status_code == 401, (case.path, response.status_code, response.text[:200])
            case.validate_response(response)

        attack()
