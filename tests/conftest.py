"""Shared fixtures."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from table_controller.rules import Game, load_game
from table_controller.soak.postgres_server import PostgresServer, PostgresUnavailable


@pytest.fixture
def game_of():
    """Build the rules object of a shipped variant by id."""

    def make(variant: str) -> Game:
        return load_game(variant)

    return make


# -- PostgreSQL: one real server per test session (Debian's binaries), a fresh database per test


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server on loopback for the session. Without one installed the tests
    that need it are skipped, unless TC_REQUIRE_POSTGRES=1 (``make test`` sets it after
    installing the server), when they fail."""
    try:
        server = PostgresServer().start()
    except PostgresUnavailable as e:
        if os.environ.get("TC_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required here: {e}")
        pytest.skip(f"no PostgreSQL server: {e}")
    yield server
    server.close()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A new, empty database on the session's server, dropped after the test."""
    from pytest_postgresql.janitor import DatabaseJanitor

    dbname = f"archive_{uuid.uuid4().hex[:12]}"
    with DatabaseJanitor(user="postgres", host="127.0.0.1", port=postgres_server.port, dbname=dbname):
        yield postgres_server.url(dbname)


@pytest.fixture(params=["sqlite", "postgresql"])
def archive_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's archive lives, once for each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "archive.sqlite")
    return str(request.getfixturevalue("postgres_url"))
