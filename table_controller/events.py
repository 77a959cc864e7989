"""The table event stream, version 1 (``shared/specs/events.md``): building, checking, framing.

The event types themselves are declared in :mod:`table_controller.event_types`, one
frozen class per type; this module is the wire around them. An event is also handled
as a plain ``dict`` in wire order (the journal, the publisher and the displays pass
dicts today): :func:`validate` checks such a dict against its type's class, field by
field, so a dict that passes is exactly what the typed decoder accepts.
"""

from __future__ import annotations

import json
from typing import Any, get_args

from table_controller.event_types import (
    EVENT_CLASSES,
    VERSION,
    AlertKind,
    CardSource,
    Event,
    EventBase,
    EventError,
    Severity,
    TableStateName,
    decode_event,
    encode_event,
    event_from_dict,
    format_ts,
    parse_ts,
)

__all__ = [
    "ALERT_KINDS", "CARD_SOURCES", "COMMON_FIELDS", "EVENT_TYPES", "SEVERITIES", "TABLE_STATES", "VERSION",
    "EventError", "decode", "encode", "format_ts", "make_event", "parse_ts", "to_json", "topic", "validate",
]

#: The event type names of events.md (and this project's ``checkpoint``).
EVENT_TYPES: tuple[str, ...] = tuple(EVENT_CLASSES)
COMMON_FIELDS = ("v", "table", "seq", "ts", "type", "game", "round")
TABLE_STATES: tuple[str, ...] = get_args(TableStateName)
ALERT_KINDS: tuple[str, ...] = get_args(AlertKind)
SEVERITIES: tuple[str, ...] = get_args(Severity)
CARD_SOURCES: tuple[str, ...] = get_args(CardSource)


def make_event(
    *, table: str, seq: int, ts: float, type: str, game: str, round: str | None, **payload: Any
) -> Event:
    """A complete, checked event of ``type`` (for tools and tests that script a stream;
    the controller builds the event types directly)."""
    event: dict[str, Any] = {
        "v": VERSION, "table": table, "seq": seq, "ts": format_ts(ts), "type": type,
        "game": game, "round": round,
    }
    event.update(payload)
    return event_from_dict(event)


def validate(event: dict[str, Any]) -> None:
    """Raise :class:`EventError` unless ``event`` is a valid event of its type (events.md)."""
    if not isinstance(event, dict):
        raise EventError(f"an event is a JSON object, not {type(event).__name__}")
    missing = [f for f in COMMON_FIELDS if f not in event]
    if missing:
        raise EventError(f"event lacks common field {missing[0]!r}")
    event_from_dict(event)


def topic(event: EventBase) -> str:
    """The PUB topic ``<table>.<type>``, e.g. ``T01.card``."""
    return f"{event.table}.{event.type}"


def to_json(event: dict[str, Any]) -> str:
    """Compact JSON text of an event dict, as the journal stores it (typed events:
    :func:`~table_controller.event_types.encode_event`, which writes the same bytes).

    Raises EventError for a non-finite number: ``Infinity`` is not JSON, and a
    browser's ``JSON.parse`` would refuse the event (and freeze a floor screen).
    """
    try:
        return json.dumps(event, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError as e:
        raise EventError(f"{event.get('type')} event: {e} (not JSON)") from e


def encode(event: EventBase) -> list[bytes]:
    """The two frames of a published event: topic and JSON, both UTF-8."""
    return [topic(event).encode(), encode_event(event)]


def decode(frames: list[bytes]) -> Event:
    """The typed event of a published message; raises :class:`EventError` on anything malformed
    (not two frames, not an event of events.md, a topic that is not the event's)."""
    if len(frames) != 2:
        raise EventError(f"expected 2 frames (topic, JSON), got {len(frames)}")
    event = decode_event(frames[1])
    if frames[0] != topic(event).encode():
        raise EventError(f"topic {frames[0][:80]!r} does not match event {topic(event)!r}")
    return event
