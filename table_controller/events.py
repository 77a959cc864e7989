"""The table event stream, version 1 (``shared/specs/events.md``): building, encoding, decoding.

An event is a plain ``dict`` with the common fields (``v``, ``table``, ``seq``,
``ts``, ``type``, ``game``, ``round``) and its type's payload. The same dict is
journaled, published on the PUB socket, served in snapshots and printed by
``sim --json``, so there is exactly one shape.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from table_controller.errors import TableError

VERSION = 1

#: Event type -> payload fields it must carry.
EVENT_TYPES: dict[str, tuple[str, ...]] = {
    "table.state": ("state", "reason"),
    "round.start": ("variant", "betting_seconds"),
    "betting.closed": (),
    "card": ("position", "index", "code", "source"),
    "round.result": ("hands", "outcome", "payouts"),
    "round.void": ("reason", "refund"),
    "alert": ("kind", "severity", "detail"),
    "shoe": ("event", "count"),
    "heartbeat": ("state",),
    "checkpoint": ("covers", "hash", "sig"),
}
COMMON_FIELDS = ("v", "table", "seq", "ts", "type", "game", "round")
TABLE_STATES = ("idle", "betting", "dealing", "result", "paused", "closed")
ALERT_KINDS = (
    "dropped-card", "exposed-card", "wrong-order", "wrong-position", "no-read", "foreign-card",
    "duplicate-card", "source-mismatch", "shoe-link-down", "camera-down", "lid-open",
    "device-fault",
)
SEVERITIES = ("info", "warning", "critical")
CARD_SOURCES = ("shoe", "camera", "shoe+camera", "manual")


class EventError(TableError, ValueError):
    """An event that does not follow events.md (unknown type, missing field, bad JSON)."""


def format_ts(epoch_seconds: float) -> str:
    """RFC 3339 UTC with milliseconds: ``2026-11-29T18:40:02.123Z``."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def make_event(
    *, table: str, seq: int, ts: float, type: str, game: str, round: str | None, **payload: Any
) -> dict[str, Any]:
    """An event dict with the common fields first, checked against its type."""
    event: dict[str, Any] = {
        "v": VERSION, "table": table, "seq": seq, "ts": format_ts(ts), "type": type,
        "game": game, "round": round,
    }
    event.update(payload)
    validate(event)
    return event


def validate(event: dict[str, Any]) -> None:
    """Raise :class:`EventError` unless ``event`` has the common fields and its type's payload."""
    if not isinstance(event, dict):
        raise EventError(f"an event is a JSON object, not {type(event).__name__}")
    missing = [f for f in COMMON_FIELDS if f not in event]
    if missing:
        raise EventError(f"event lacks common field {missing[0]!r}")
    kind = event["type"]
    if not isinstance(kind, str) or kind not in EVENT_TYPES:
        raise EventError(f"unknown event type {kind!r}"[:200])
    if not isinstance(event["seq"], int) or isinstance(event["seq"], bool) or event["seq"] < 1:
        raise EventError(f"event seq must be a positive integer, not {event['seq']!r}"[:200])
    for name in ("table", "ts", "game"):
        if not isinstance(event[name], str):
            raise EventError(f"event {name} must be text, not {type(event[name]).__name__}")
    if event["round"] is not None and not isinstance(event["round"], str):
        raise EventError(f"event round must be text or null, not {type(event['round']).__name__}")
    lacking = [f for f in EVENT_TYPES[kind] if f not in event]
    if lacking:
        raise EventError(f"{kind} event lacks field {lacking[0]!r}")


def topic(event: dict[str, Any]) -> str:
    """The PUB topic ``<table>.<type>``, e.g. ``T01.card``."""
    return f"{event['table']}.{event['type']}"


def to_json(event: dict[str, Any]) -> str:
    """Compact JSON text of an event (what the journal stores and the wire carries).

    Raises EventError for a non-finite number: ``Infinity`` is not JSON, and a
    browser's ``JSON.parse`` would refuse the event (and freeze a floor screen).
    """
    try:
        return json.dumps(event, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError as e:
        raise EventError(f"{event.get('type')} event: {e} (not JSON)") from e


def encode(event: dict[str, Any]) -> list[bytes]:
    """The two frames of a published event: topic and JSON, both UTF-8."""
    return [topic(event).encode(), to_json(event).encode()]


def decode(frames: list[bytes]) -> dict[str, Any]:
    """Parse a published message; raises :class:`EventError` on anything malformed."""
    if len(frames) != 2:
        raise EventError(f"expected 2 frames (topic, JSON), got {len(frames)}")
    try:
        event: dict[str, Any] = json.loads(frames[1].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:  # ValueError: bad JSON, a 5000-digit number
        raise EventError(f"event body is not UTF-8 JSON: {e}"[:300]) from None
    except RecursionError:
        raise EventError("event body is JSON nested too deep") from None
    validate(event)
    if frames[0].decode("utf-8", "replace") != topic(event):
        raise EventError(f"topic {frames[0]!r} does not match event {topic(event)!r}")
    return event
