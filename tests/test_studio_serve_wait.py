"""`studio serve` waits for an archive server that is restarting instead of dying at start
(found by the archive soak: PostgreSQL killed while the API restarted ended the API)."""

from __future__ import annotations

from typing import Any

import pytest

from table_controller.archive.base import ArchiveUnavailable
from table_controller.cli import archive_cmd
from table_controller.cli.studio_cmd import _open_when_up


def test_the_api_waits_for_the_store_then_opens_it(monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[str] = []
    opened = object()

    def flaky(location: str) -> Any:
        attempts.append(location)
        if len(attempts) < 3:
            raise ArchiveUnavailable("the database system is starting up")
        return opened

    monkeypatch.setattr(archive_cmd, "open_existing", flaky)
    monkeypatch.setattr("time.sleep", lambda s: None)
    assert _open_when_up("postgresql://db/archive", 60) is opened
    assert len(attempts) == 3


def test_past_its_patience_the_api_gives_up_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    def down(location: str) -> Any:
        raise ArchiveUnavailable("connection refused")

    monkeypatch.setattr(archive_cmd, "open_existing", down)
    monkeypatch.setattr("time.sleep", lambda s: None)
    with pytest.raises(ArchiveUnavailable, match="connection refused"):
        _open_when_up("postgresql://db/archive", 0)
