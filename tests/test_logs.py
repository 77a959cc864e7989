"""Log lines: JSON objects (table, round, seq where known) off a terminal, readable lines on one."""

from __future__ import annotations

import io
import json
import logging

import pytest

from table_controller.service import logs


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_each_record_is_one_json_object_with_the_tables_context(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TABLE_CONTROLLER_LOG", raising=False)
    monkeypatch.setattr(logs, "_context", {})
    stream = io.StringIO()
    logs.configure(logging.INFO, stream)
    rounds = iter(["T01-000007", None])
    logs.set_context(table="T01", round=lambda: next(rounds), seq=lambda: 1 / 0)  # a context that fails is left out
    log = logging.getLogger("table_controller.test")
    log.warning("shoe link down: %s", "no frame for 2 s")
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("a fault")
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["msg"] == "shoe link down: no frame for 2 s" and first["level"] == "warning"
    assert (first["table"], first["round"], first["logger"]) == ("T01", "T01-000007", "table_controller.test")
    assert "seq" not in first and first["ts"].endswith("Z")
    assert "round" not in second and "ValueError: boom" in second["exc"]
    logging.getLogger().removeHandler(logs._handler)  # type: ignore[arg-type]


def test_on_a_terminal_the_lines_are_readable_and_the_choice_can_be_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TABLE_CONTROLLER_LOG", raising=False)
    assert not logs.wants_json(_Tty()) and logs.wants_json(io.StringIO())
    assert logs.wants_json(_Tty(), {"TABLE_CONTROLLER_LOG": "json"})
    assert not logs.wants_json(io.StringIO(), {"TABLE_CONTROLLER_LOG": "text"})
    stream = _Tty()
    logs.configure(logging.INFO, stream)
    logging.getLogger("x").info("readable")
    assert stream.getvalue().rstrip().endswith("INFO x: readable")
    logging.getLogger().removeHandler(logs._handler)  # type: ignore[arg-type]
