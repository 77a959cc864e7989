"""One frozen type per event type of the table event stream, version 1 (``shared/specs/events.md``).

These classes *are* the contract: ``docs/events.schema.json`` is generated from them
(``python -m table_controller.event_types --schema``), the journal and the publisher
check every event against them, and consumers decode the wire into them::

    event = decode_event(frames[1])
    match event:
        case CardDealt(position=position, code=code):
            ...
        case RoundResult(outcome=outcome):
            ...

Each class is flat, as the JSON is: the common fields first (``v``, ``table``, ``seq``,
``ts``, ``type``, ``game``, ``round``), then the payload in the order the controller has
always written it, so that an event decoded and encoded again is the same bytes.
Payload fields that events.md does not name are this project's additions
(docs/events.md): those that are not always present default to :data:`msgspec.UNSET`
and are then left out of the JSON, while a field that is present with ``null`` stays
``null``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeAlias, TypeVar, cast

import msgspec
from msgspec import UNSET as UNSET
from msgspec import Meta, field
from msgspec import UnsetType as UnsetType

from table_controller.errors import TableError

VERSION: Literal[1] = 1

TableStateName = Literal["idle", "betting", "dealing", "result", "paused", "closed"]
AlertKind = Literal[
    "dropped-card", "exposed-card", "wrong-order", "wrong-position", "no-read", "foreign-card",
    "duplicate-card", "source-mismatch", "shoe-link-down", "camera-down", "lid-open", "device-fault",
]
Severity = Literal["info", "warning", "critical"]
CardSource = Literal["shoe", "camera", "shoe+camera", "manual"]
ShoeEventName = Literal["new", "cut", "empty"]

#: ``2026-11-29T18:40:02.123Z``: RFC 3339, UTC, milliseconds.
Timestamp = Annotated[str, Meta(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")]
CardCode = Annotated[str, Meta(pattern=r"^[2-9TJQKA][SHDC]$")]
#: A decimal amount as text, never a float: ``"0.95"``, ``"-1"``, ``"0"``, ``"8"``.
MoneyText = Annotated[str, Meta(pattern=r"^-?\d+(\.\d+)?$")]
Seq = Annotated[int, Meta(ge=1)]
Count = Annotated[int, Meta(ge=0)]
Seconds = Annotated[int, Meta(ge=0)] | Annotated[float, Meta(ge=0)]


class EventError(TableError, ValueError):
    """An event that does not follow events.md (unknown type, missing or malformed field, bad JSON)."""


class UnknownEventType(EventError):
    """A well-formed message of a type this version does not know: consumers skip it."""


class EventBase(msgspec.Struct, frozen=True, kw_only=True):
    """The common fields of every event.

    The machine builds an event *unstamped*, with only ``round`` and its payload; the
    controller stamps ``table``, ``game`` and ``ts`` and the journal numbers it
    (:func:`stamped`). The defaults are for that: on the wire and in a journal every
    common field is required (:func:`decode_event` checks them first).
    """

    v: Literal[1] = VERSION
    table: str = ""
    #: 0 until the journal numbers the event
    seq: int = 0
    ts: str = ""
    type: str
    game: str = ""
    round: str | None = None


class TableStateChanged(EventBase, frozen=True, kw_only=True):
    """``table.state``: the table entered ``state``; a pause says its cause and what it awaits."""

    type: Literal["table.state"] = "table.state"
    state: TableStateName
    reason: str | None
    #: added: why the table paused (an alert kind, or ``void-request``)
    cause: str | UnsetType = UNSET
    #: added: the state a resume returns to
    resume_to: TableStateName | UnsetType = UNSET
    #: added: ``"card"`` when the pause waits for a card to be presented again, else null
    awaiting: Literal["card"] | None | UnsetType = UNSET
    #: added: the supervisor who resumed or accepted the shoe
    by: str | UnsetType = UNSET
    #: added: the card the shoe gave, when the pause awaits its confirmation (``source-mismatch``:
    #: the camera saw another card or none); a supervisor confirms it with ``resume --card``
    shoe_card: CardCode | UnsetType = UNSET


class RoundStarted(EventBase, frozen=True, kw_only=True):
    """``round.start``: betting is open for ``betting_seconds``."""

    type: Literal["round.start"] = "round.start"
    variant: str
    betting_seconds: Seconds
    #: added: who started the round (button, dealer, supervisor), or null
    by: str | None | UnsetType = UNSET
    #: added: the dealer signed in at the table when the round started (``dealer`` events)
    dealer: str | UnsetType = UNSET


class BettingClosed(EventBase, frozen=True, kw_only=True):
    """``betting.closed``: no more bets; dealing starts."""

    type: Literal["betting.closed"] = "betting.closed"


class CardDealt(EventBase, frozen=True, kw_only=True):
    """``card``: a card went to ``position`` (``burn`` for a burn card) as its ``index``-th card."""

    type: Literal["card"] = "card"
    position: str
    index: Count
    code: CardCode
    source: CardSource
    #: added: the shoe's own count of this card within the shoe, when the shoe reports one
    shoe_count: int | UnsetType = UNSET


class HandSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One position's hand in a result: its cards, class name and points (or null)."""

    cards: list[CardCode]
    cls: str | None = field(name="class")
    points: int | None


class RoundResult(EventBase, frozen=True, kw_only=True):
    """``round.result``: the hands, the game's outcome and every bet's net win per unit staked."""

    type: Literal["round.result"] = "round.result"
    hands: dict[str, HandSummary]
    #: game-specific (games.md), e.g. ``{"winner": "banker", "natural": true, ...}``
    outcome: dict[str, Any]
    payouts: dict[str, MoneyText]


class RoundVoided(EventBase, frozen=True, kw_only=True):
    """``round.void``: the round is cancelled and every bet refunded."""

    type: Literal["round.void"] = "round.void"
    reason: str
    refund: bool
    #: added: the supervisor who voided it
    by: str | UnsetType = UNSET


class Alert(EventBase, frozen=True, kw_only=True):
    """``alert``: something the floor must know about (a critical alert pauses the table)."""

    type: Literal["alert"] = "alert"
    kind: AlertKind
    severity: Severity
    detail: str


class DeckAudit(msgspec.Struct, frozen=True, kw_only=True):
    """The cards a shoe gave against its decks: what is missing and what is extra (code -> n)."""

    decks: int
    seen: int
    missing: dict[str, int]
    extra: dict[str, int]
    complete: bool


class ShoeChanged(EventBase, frozen=True, kw_only=True):
    """``shoe``: a new shoe was loaded, the cut card came out, or the shoe is empty."""

    type: Literal["shoe"] = "shoe"
    event: ShoeEventName
    count: Count
    #: added (``new``): the decks the variant plays with
    decks: int | UnsetType = UNSET
    #: added (``new``): the audit of the shoe before it
    previous_audit: DeckAudit | UnsetType = UNSET
    #: added (``new``): the shoe claimed another deck count and is refused until accepted
    claimed_decks: int | UnsetType = UNSET
    refused: bool | UnsetType = UNSET
    #: added (``empty``): the audit of this shoe
    audit: DeckAudit | UnsetType = UNSET


class Heartbeat(EventBase, frozen=True, kw_only=True):
    """``heartbeat``: sent once a second when nothing else was."""

    type: Literal["heartbeat"] = "heartbeat"
    state: TableStateName


class CheckpointSigned(EventBase, frozen=True, kw_only=True):
    """``checkpoint`` (added type, docs/events.md): the table's signature over seq ``covers``."""

    type: Literal["checkpoint"] = "checkpoint"
    covers: Seq
    hash: str
    sig: str


class DealerChanged(EventBase, frozen=True, kw_only=True):
    """``dealer`` (added type): a dealer signed in at the table (``dealer``), or signed out (null).
    Every round started after it carries the dealer (``round.start`` ``dealer``)."""

    type: Literal["dealer"] = "dealer"
    dealer: Annotated[str, msgspec.Meta(min_length=1, max_length=64)] | None
    #: who signed the dealer in: a supervisor (token) or the panel's badge reader
    by: str


Sha256 = Annotated[str, Meta(pattern=r"^[0-9a-f]{64}$")]
EvidenceOf = Literal["card", "pause", "void", "result", "supervisor"]


class EvidenceRecorded(EventBase, frozen=True, kw_only=True):
    """``evidence`` (added type, docs/evidence.md): pictures the camera took, kept next to the
    journal by their SHA-256. ``of`` says what they show: a card the camera confirmed (with its
    ``position``, ``index`` and ``code``, and ``for_seq`` the card event's seq when it was
    journaled first), or the table at a pause, a void, a result or a supervisor's action
    (``for_seq``: that event). ``card`` is the card's own picture, ``frame`` the whole table."""

    type: Literal["evidence"] = "evidence"
    of: EvidenceOf
    for_seq: Seq | None = None
    position: str | None = None
    index: int | None = None
    code: CardCode | None = None
    card: Sha256 | None = None
    frame: Sha256
    bytes: Count
    #: the card's corners (TL, TR, BR, BL) in the ``frame`` picture's pixels, as the camera read it
    corners: list[tuple[float, float]] | None = None


E = TypeVar("E", bound="EventBase")

Event: TypeAlias = (
    TableStateChanged | RoundStarted | BettingClosed | CardDealt | RoundResult | RoundVoided | Alert
    | ShoeChanged | Heartbeat | CheckpointSigned | DealerChanged | EvidenceRecorded
)



def _type_name(cls: type[EventBase]) -> str:
    name: str = next(f.default for f in msgspec.structs.fields(cls) if f.name == "type")
    return name


#: events.md type name -> its class.
EVENT_CLASSES: dict[str, type[EventBase]] = {
    _type_name(cls): cls
    for cls in (
        TableStateChanged, RoundStarted, BettingClosed, CardDealt, RoundResult, RoundVoided, Alert,
        ShoeChanged, Heartbeat, CheckpointSigned, DealerChanged, EvidenceRecorded,
    )
}


class TableStatus(msgspec.Struct, frozen=True, kw_only=True):
    """A snapshot's ``state``: the payload of the table's latest ``table.state`` event."""

    state: TableStateName
    reason: str | None


class SnapshotReply(msgspec.Struct, frozen=True, kw_only=True):
    """The snapshot endpoint's answer to ``{"op": "snapshot"}`` (events.md, Transport).

    ``round``: the events of the round in progress, in order; ``history``: the last
    ``round.result`` / ``round.void`` events; ``shoe`` (added): the ``shoe`` events of the
    current shoe from its latest ``new`` on. Decode one with :func:`decode_snapshot_reply`.
    """

    seq: Count
    state: TableStatus | None
    round: list[Event]
    history: list[RoundResult | RoundVoided]
    shoe: list[ShoeChanged] = []


class _RawSnapshotReply(msgspec.Struct):
    seq: Count
    state: TableStatus | None
    round: list[msgspec.Raw]
    history: list[msgspec.Raw]
    shoe: list[msgspec.Raw] = []


class _Head(msgspec.Struct):
    """The common fields, all required: what :func:`decode_event` checks before the type's own."""

    v: Literal[1]
    table: str
    seq: Seq
    ts: Timestamp
    type: str
    game: str
    round: str | None


_ENCODER = msgspec.json.Encoder()
_HEAD = msgspec.json.Decoder(_Head)
_DECODERS = {name: msgspec.json.Decoder(cls) for name, cls in EVENT_CLASSES.items()}
_SNAPSHOT = msgspec.json.Decoder(_RawSnapshotReply)


def format_ts(epoch_seconds: float) -> str:
    """RFC 3339 UTC with milliseconds: ``2026-11-29T18:40:02.123Z``."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_ts(text: str) -> float:
    """Seconds since the epoch of an events.md timestamp (the one parser of ``ts``).

    Raises :class:`EventError` for text that is not one.
    """
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except (AttributeError, TypeError, ValueError) as e:
        raise EventError(f"not an events.md time stamp: {str(text)[:40]!r}") from e


_MISSING = re.compile(r"Object missing required field `([^`]*)`(?: - at `\$(.*)`)?")


def _problem(kind: str | None, error: Exception) -> EventError:
    """msgspec's complaint in events.md words: ``card event lacks field 'source'``
    (``kind`` None: a common field, ``event lacks common field 'seq'``)."""
    text = str(error)
    what = "event" if kind is None else f"{kind} event"
    missing = _MISSING.fullmatch(text)
    if missing:
        where = f" (in {missing.group(2).lstrip('.')})" if missing.group(2) else ""
        common = "common " if kind is None else ""
        return EventError(f"{what} lacks {common}field {missing.group(1)!r}{where}"[:300])
    return EventError(f"{what}: {text}"[:300])


def decode_event(body: bytes | str) -> Event:
    """The typed event of one JSON body; raises :class:`EventError` naming what is wrong."""
    try:
        kind = _HEAD.decode(body).type
    except msgspec.ValidationError as e:
        raise _problem(None, e) from None
    except msgspec.DecodeError as e:
        raise EventError(f"event body is not JSON: {e}"[:300]) from None
    except RecursionError:
        raise EventError("event body is JSON nested too deep") from None
    decoder = _DECODERS.get(kind)
    if decoder is None:
        raise UnknownEventType(f"unknown event type {kind!r}"[:200])
    try:
        event = cast(Event, decoder.decode(body))
    except msgspec.DecodeError as e:
        raise _problem(kind, e) from None
    except RecursionError:
        raise EventError(f"{kind} event nested too deep") from None
    return event


def _known_events(bodies: list[msgspec.Raw]) -> list[Event]:
    """The events of a snapshot list, leaving out types this version does not know (a newer
    table's addition); any other fault refuses the reply."""
    out: list[Event] = []
    for body in bodies:
        try:
            out.append(decode_event(bytes(body)))
        except UnknownEventType:
            continue
    return out


def decode_snapshot_reply(body: bytes | str) -> SnapshotReply:
    """The typed snapshot reply; raises :class:`EventError` naming what is wrong."""
    try:
        raw = _SNAPSHOT.decode(body)
    except msgspec.DecodeError as e:
        raise EventError(f"not a snapshot reply: {e}"[:300]) from None
    except RecursionError:
        raise EventError("snapshot reply nested too deep") from None
    history = _known_events(raw.history)
    shoe = _known_events(raw.shoe)
    if any(not isinstance(e, RoundResult | RoundVoided) for e in history):
        raise EventError("a snapshot's history holds only round.result and round.void events")
    if any(not isinstance(e, ShoeChanged) for e in shoe):
        raise EventError("a snapshot's shoe holds only shoe events")
    return SnapshotReply(
        seq=raw.seq, state=raw.state, round=_known_events(raw.round),
        history=cast(list[RoundResult | RoundVoided], history), shoe=cast(list[ShoeChanged], shoe),
    )


def event_from_dict(event: object) -> Event:
    """The typed event of an event dict (as ``json.loads`` gives it); raises :class:`EventError`."""
    if not isinstance(event, dict):
        raise EventError(f"an event is a JSON object, not {type(event).__name__}")
    try:
        kind = msgspec.convert(event, _Head, strict=True).type
    except msgspec.ValidationError as e:
        raise _problem(None, e) from None
    cls = EVENT_CLASSES.get(kind)
    if cls is None:
        raise UnknownEventType(f"unknown event type {kind!r}"[:200])
    try:
        typed = cast(Event, msgspec.convert(event, cls, strict=True))
    except msgspec.ValidationError as e:
        raise _problem(kind, e) from None
    return typed


def stamped(event: E, *, table: str, game: str, ts: float, seq: int = 0) -> E:
    """The event with its common fields filled in (``seq`` stays 0 until the journal numbers it)."""
    return msgspec.structs.replace(event, table=table, game=game, ts=format_ts(ts), seq=seq)


def numbered(event: E, seq: int) -> E:
    """The event as the journal stores it: numbered ``seq``."""
    return msgspec.structs.replace(event, seq=seq)


def encode_event(event: EventBase) -> bytes:
    """Compact JSON of a typed event, the bytes the journal stores and the wire carries."""
    return _ENCODER.encode(event)


def as_dict(event: EventBase) -> dict[str, Any]:
    """The event as a plain dict in wire order (fields left unset are absent)."""
    out: dict[str, Any] = msgspec.to_builtins(event)
    return out


def json_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of one event of the stream, generated from these types."""
    schema, components = msgspec.json.schema_components(
        [*EVENT_CLASSES.values(), _RawSnapshotReply, _Head], ref_template="#/$defs/{name}"
    )
    # SnapshotReply's lists hold events (an untagged union msgspec cannot describe): name them
    schema = schema[:-1]
    reply = components.pop(_RawSnapshotReply.__name__)
    reply.update(title="SnapshotReply", description=(SnapshotReply.__doc__ or "").split("\n")[0])

    def refs(*classes: type[msgspec.Struct]) -> dict[str, Any]:
        return {"oneOf": [{"$ref": f"#/$defs/{c.__name__}"} for c in classes]}

    reply["properties"]["round"]["items"] = refs(*EVENT_CLASSES.values())
    reply["properties"]["history"]["items"] = refs(RoundResult, RoundVoided)
    reply["properties"]["shoe"]["items"] = refs(ShoeChanged)
    components["SnapshotReply"] = reply
    head = components.pop(_Head.__name__)
    for cls in EVENT_CLASSES.values():  # the defaults are for building events; the wire needs them all
        event_schema = components[cls.__name__]
        fields = event_schema["properties"]
        payload = {name: value for name, value in fields.items() if name not in head["properties"]}
        event_schema["properties"] = {**head["properties"], "type": fields["type"], **payload}
        required = [name for name in event_schema.get("required", []) if name in payload]
        event_schema["required"] = [*head["required"], *required]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/opentable-studio/table-controller/docs/events.schema.json",
        "title": f"Table event stream, version {VERSION}",
        "description": (
            "One event of a table's stream (ZeroMQ frame 1, a journal row's body). "
            "Generated from table_controller/event_types.py; events.md is the prose contract. "
            "Consumers must ignore fields they do not know. The snapshot endpoint's reply is "
            "$defs/SnapshotReply."
        ),
        "oneOf": list(schema[:-1]),
        "$defs": components,
    }


def schema_text() -> str:
    """:func:`json_schema` as the text of ``docs/events.schema.json``."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m table_controller.event_types --schema``: print or check the JSON Schema."""
    parser = argparse.ArgumentParser(
        prog="python -m table_controller.event_types",
        description="Print the JSON Schema of the event stream generated from the event types, "
        "or check that a file holds exactly it.",
    )
    parser.add_argument("--schema", action="store_true", help="print the JSON Schema")
    parser.add_argument("--check", metavar="FILE", help="exit 1 unless FILE is the generated schema")
    args = parser.parse_args(argv)
    if args.check:
        with open(args.check, encoding="utf-8") as f:
            same = f.read() == schema_text()
        print(f"{args.check}: {'matches the event types' if same else 'differs: regenerate it with --schema'}")
        return 0 if same else 1
    sys.stdout.write(schema_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
