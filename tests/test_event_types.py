"""The typed events are the contract: old journals and streams decode and re-encode byte for
byte, the published JSON Schema is the one generated from the types, and an independent
validator (jsonschema) agrees with the typed decoder on what is an event."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller import event_types as et
from table_controller.events import to_json, validate

FIXTURES = Path(__file__).parent / "fixtures" / "events-v1"
SCHEMA_FILE = Path(__file__).parents[1] / "docs" / "events.schema.json"


def recorded_bodies() -> list[str]:
    lines: list[str] = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            lines.append(record["body"] if "body" in record else line)
    return lines


RECORDED = recorded_bodies()


def an_event(**changes: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "v": 1, "table": "T01", "seq": 7, "ts": "2026-11-29T18:40:02.123Z", "type": "card",
        "game": "baccarat", "round": "T01-000001", "position": "player", "index": 0, "code": "AS",
        "source": "shoe",
    }
    event.update(changes)
    return {k: v for k, v in event.items() if v is not ...}


#: Event types added to the contract after the version 1 recordings were made (older consumers
#: skip them as unknown types); every other type must be in the recordings.
ADDED_SINCE_THE_RECORDINGS = {"dealer", "evidence"}


def test_the_recordings_hold_every_event_type_of_the_contract() -> None:
    seen = {json.loads(body)["type"] for body in RECORDED}
    assert seen == set(et.EVENT_CLASSES) - ADDED_SINCE_THE_RECORDINGS
    assert len(RECORDED) > 100


def test_every_recorded_event_decodes_and_encodes_again_byte_for_byte() -> None:
    for body in RECORDED:
        event = et.decode_event(body)
        assert et.encode_event(event).decode("utf-8") == body
        assert type(event) is et.EVENT_CLASSES[event.type]
        assert et.event_from_dict(json.loads(body)) == event
        assert to_json(et.as_dict(event)) == body


def test_the_published_schema_is_the_one_generated_from_the_types() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == et.schema_text(), (
        "docs/events.schema.json is stale: python -m table_controller.event_types --schema > docs/events.schema.json"
    )
    assert et.main(["--check", str(SCHEMA_FILE)]) == 0


def test_the_schema_check_fails_on_a_changed_file(tmp_path: Path) -> None:
    stale = tmp_path / "events.schema.json"
    stale.write_text(et.schema_text().replace('"minimum": 1', '"minimum": 0', 1), encoding="utf-8")
    assert et.main(["--check", str(stale)]) == 1


@pytest.fixture(scope="module")
def schema_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_an_independent_validator_accepts_every_recorded_event(
    schema_validator: jsonschema.Draft202012Validator,
) -> None:
    for body in RECORDED:
        errors = [e.message for e in schema_validator.iter_errors(json.loads(body))]
        assert not errors, (body[:200], errors[:3])


BROKEN = {
    "unknown state": an_event(type="table.state", state="dancing", reason=None, position=..., index=...,
                              code=..., source=...),
    "card code not a card": an_event(code="1S"),
    "source not one of events.md": an_event(source="rfid"),
    "seq zero": an_event(seq=0),
    "seq as text": an_event(seq="7"),
    "no version": an_event(v=...),
    "version 2": an_event(v=2),
    "time without milliseconds": an_event(ts="2026-11-29T18:40:02Z"),
    "time in another zone": an_event(ts="2026-11-29T18:40:02.123+01:00"),
    "missing position": an_event(position=...),
    "negative index": an_event(index=-1),
    "no type": an_event(type=...),
    "unknown type": an_event(type="dance"),
    "payout as a number": an_event(type="round.result", position=..., index=..., code=..., source=...,
                                   hands={}, outcome={"winner": "banker"}, payouts={"banker": 0.95}),
    "payout with an exponent": an_event(type="round.result", position=..., index=..., code=..., source=...,
                                        hands={}, outcome={}, payouts={"banker": "1E+1"}),
    "hand without class": an_event(type="round.result", position=..., index=..., code=..., source=...,
                                   hands={"player": {"cards": ["AS"], "points": 1}}, outcome={}, payouts={}),
    "alert of an unknown kind": an_event(type="alert", position=..., index=..., code=..., source=...,
                                         kind="bored", severity="info", detail="x"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_event_is_refused_by_the_types_and_by_the_schema(
    name: str, schema_validator: jsonschema.Draft202012Validator
) -> None:
    event = BROKEN[name]
    with pytest.raises(et.EventError):
        et.event_from_dict(event)
    with pytest.raises(et.EventError):
        et.decode_event(json.dumps(event))
    assert list(schema_validator.iter_errors(event)), f"the schema accepts: {name}"


def test_a_refusal_names_the_missing_field_in_events_md_words() -> None:
    with pytest.raises(et.EventError, match="card event lacks field 'source'"):
        validate(an_event(source=...))
    with pytest.raises(et.EventError, match=r"round.result event lacks field 'class' \(in hands"):
        et.event_from_dict(BROKEN["hand without class"])


def test_an_addition_this_project_leaves_out_stays_out_and_a_null_stays_null() -> None:
    burn = et.decode_event(json.dumps(an_event(position="burn", round=None)))
    assert isinstance(burn, et.CardDealt) and burn.shoe_count is et.UNSET
    assert b"shoe_count" not in et.encode_event(burn)
    state = et.decode_event(json.dumps(an_event(type="table.state", state="paused", reason="lid", awaiting=None,
                                                position=..., index=..., code=..., source=...)))
    assert isinstance(state, et.TableStateChanged) and state.awaiting is None
    assert b'"awaiting":null' in et.encode_event(state)


def test_unknown_fields_are_allowed_as_the_contract_grows_by_addition() -> None:
    event = et.decode_event(json.dumps(an_event(future_field=[1, 2])))
    assert isinstance(event, et.CardDealt) and event.code == "AS"


def test_consumers_dispatch_on_the_type() -> None:
    def describe(event: et.Event) -> str:
        match event:
            case et.CardDealt(position=position, code=code):
                return f"{position} {code}"
            case et.RoundResult(outcome=outcome):
                return f"result {outcome}"
            case _:
                return event.type

    assert describe(et.decode_event(json.dumps(an_event()))) == "player AS"
    assert describe(et.decode_event(json.dumps(an_event(code="KD", position="banker")))) == "banker KD"


def test_one_timestamp_parser_reads_what_format_ts_writes() -> None:
    for seconds in (0.0, 1_800_000_000.123, 1_764_441_602.999):
        assert et.parse_ts(et.format_ts(seconds)) == pytest.approx(int(seconds * 1000) / 1000, abs=1e-6)
    with pytest.raises(et.EventError):
        et.parse_ts("yesterday")


# Text the controller writes into events (a supervisor's reason, an alert's detail) may hold
# anything; the typed encoder must write the same bytes as the journal's json.dumps.
_text = st.text(st.characters(codec="utf-8"), max_size=40)


@settings(max_examples=300, deadline=None)
@given(detail=_text, table=_text)
def test_the_typed_encoder_writes_any_text_as_the_journal_does(detail: str, table: str) -> None:
    event = an_event(type="alert", position=..., index=..., code=..., source=..., kind="no-read",
                     severity="warning", detail=detail, table=table)
    typed = et.event_from_dict(event)
    assert et.encode_event(typed).decode("utf-8") == to_json(event)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_decode_to_an_event_or_an_event_error(body: bytes) -> None:
    try:
        et.decode_event(body)
    except et.EventError:
        pass


def test_money_in_the_schema_is_text_never_a_number() -> None:
    money = et.json_schema()["$defs"]["RoundResult"]["properties"]["payouts"]["additionalProperties"]
    assert money["type"] == "string"
    for text in ("0.95", "-1", "0", "8", "1000.5"):
        assert Decimal(text) == Decimal(et.decode_event(json.dumps(an_event(
            type="round.result", position=..., index=..., code=..., source=...,
            hands={}, outcome={}, payouts={"bet": text}))).payouts["bet"])  # type: ignore[union-attr]


def test_a_snapshot_reply_decodes_typed_and_the_schema_describes_it(
    schema_validator: jsonschema.Draft202012Validator,
) -> None:
    from table_controller.publish.snapshot import SnapshotState

    state = SnapshotState()
    for body in RECORDED:
        event = et.decode_event(body)
        if event.table == "T09":
            state.apply(event)
    body = msgspec.json.encode(state.reply()).decode("utf-8")
    reply = et.decode_snapshot_reply(body)
    assert reply.seq == state.seq and len(reply.history) == 2
    assert all(isinstance(e, et.RoundResult) for e in reply.history)
    assert msgspec.json.encode(reply).decode("utf-8") == body
    schema = dict(schema_validator.schema, oneOf=None)
    schema.pop("oneOf")
    schema["$ref"] = "#/$defs/SnapshotReply"
    validator = jsonschema.Draft202012Validator(schema)
    assert not list(validator.iter_errors(json.loads(body)))
    broken = json.loads(body)
    broken["history"][0]["type"] = "card"
    assert list(validator.iter_errors(broken))
    with pytest.raises(et.EventError):
        et.decode_snapshot_reply(json.dumps(broken))


def test_an_event_is_built_unstamped_stamped_by_the_controller_and_numbered_by_the_journal() -> None:
    built = et.CardDealt(round="T01-000001", position="player", index=0, code="AS", source="shoe")
    with pytest.raises(et.EventError, match="event: Expected `int` >= 1"):
        et.decode_event(et.encode_event(built))  # unnumbered: not an event of the stream yet
    event = et.numbered(et.stamped(built, table="T01", game="baccarat", ts=1_795_977_602.123), 7)
    assert et.encode_event(event).decode() == to_json(an_event())


@pytest.mark.parametrize("field_name", ["v", "table", "seq", "ts", "type", "game", "round"])
def test_every_common_field_is_required_on_the_wire(field_name: str) -> None:
    with pytest.raises(et.EventError, match=f"event lacks common field '{field_name}'"):
        et.decode_event(json.dumps(an_event(**{field_name: ...})))
    with pytest.raises(et.EventError, match=f"event lacks common field '{field_name}'"):
        et.event_from_dict(an_event(**{field_name: ...}))


def test_every_recorded_message_decodes_with_its_topic() -> None:
    from table_controller.events import decode

    messages = 0
    for path in sorted(FIXTURES.glob("stream-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            event = decode([record["topic"].encode(), record["body"].encode()])
            assert record["topic"] == f"{event.table}.{event.type}"
            messages += 1
            with pytest.raises(et.EventError, match="topic"):
                decode([b"T99.card", record["body"].encode()])
    assert messages == 320


def test_deep_nesting_is_an_event_error_not_a_crash() -> None:
    deep = '{"v":1,"table":"T01","seq":1,"ts":"2026-11-29T18:40:02.123Z","type":"card","game":"g",' \
           '"round":null,"x":' + "[" * 5000 + "]" * 5000 + "}"
    with pytest.raises(et.EventError):
        et.decode_event(deep)


def test_a_snapshot_leaves_out_event_types_it_does_not_know_and_refuses_broken_ones() -> None:
    known = json.loads(RECORDED[0])
    future = dict(known, type="round.fanfare")
    reply = {"seq": 9, "state": None, "round": [future, known], "history": [], "shoe": []}
    decoded = et.decode_snapshot_reply(json.dumps(reply))
    assert [e.type for e in decoded.round] == [known["type"]]
    broken = dict(known, seq="nine")
    with pytest.raises(et.EventError):
        et.decode_snapshot_reply(json.dumps(dict(reply, round=[broken])))
    with pytest.raises(et.UnknownEventType):
        et.decode_event(json.dumps(future))
