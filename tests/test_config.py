"""Table configuration: the shipped examples load; each kind of mistake names its key."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import pytest

from table_controller.config import load_config, parse_config
from table_controller.errors import ConfigError

EXAMPLES = Path(str(resources.files("table_controller") / "configs"))


def example() -> dict:
    with open(EXAMPLES / "baccarat.toml", "rb") as f:
        return tomllib.load(f)


@pytest.mark.parametrize("name", ["baccarat", "three-pictures", "three-face", "teen-patti-2020"])
def test_every_shipped_example_is_valid(name: str) -> None:
    config = load_config(EXAMPLES / f"{name}.toml")
    assert config.variant == name
    assert config.panel.pins["lamp_alarm"] == 13
    assert config.shoe is not None and config.shoe.baudrate == 115200


def mutate(change) -> str:
    data = example()
    change(data)
    with pytest.raises(ConfigError) as err:
        parse_config(data, "T01.toml")
    return str(err.value)


def test_unknown_key_is_named() -> None:
    msg = mutate(lambda d: d["table"].update(betting_secs=10))
    assert msg.startswith("T01.toml: table.betting_secs: unknown key")


def test_unknown_section_is_named() -> None:
    assert mutate(lambda d: d.update(camra={})) .startswith("T01.toml: camra: unknown key")


def test_missing_pin_is_named() -> None:
    assert mutate(lambda d: d["panel"].pop("lamp_alarm")) == "T01.toml: panel.lamp_alarm: missing"


def test_pin_used_twice_is_named() -> None:
    msg = mutate(lambda d: d["panel"].update(buzzer=17))
    assert msg == "T01.toml: panel.buzzer: pin 17 is already panel.start_round"


def test_pin_out_of_range() -> None:
    assert "BCM pin must be 0..27, not 40" in mutate(lambda d: d["panel"].update(buzzer=40))


def test_unknown_variant_is_named() -> None:
    msg = mutate(lambda d: d["table"].update(variant="pai-gow"))
    assert msg.startswith("T01.toml: table.variant: unknown game variant 'pai-gow'")


def test_wrong_type_is_named() -> None:
    msg = mutate(lambda d: d["table"].update(betting_seconds="15"))
    assert msg == "T01.toml: table.betting_seconds: expected int or float, got '15'"


def test_bad_policy_is_named() -> None:
    msg = mutate(lambda d: d["table"].update(interrupted_round="retry"))
    assert msg == "T01.toml: table.interrupted_round: must be one of resume, void, not 'retry'"


def test_unknown_card_source() -> None:
    msg = mutate(lambda d: d["sources"].update(cards=["shoe", "rfid"]))
    assert msg == "T01.toml: sources.cards: unknown source 'rfid' (known: shoe, camera)"


def test_shoe_needs_a_port() -> None:
    assert mutate(lambda d: d["shoe"].pop("port")) == "T01.toml: shoe.port: missing"


def test_curve_keys_go_together() -> None:
    msg = mutate(lambda d: d["publish"].update(server_secret_key="k"))
    assert "go together" in msg and "publish.server_secret_key" in msg


def test_bad_token_digest() -> None:
    msg = mutate(lambda d: d["supervisor"].update(token_sha256=["abc"]))
    assert msg.startswith("T01.toml: supervisor.token_sha256: 'abc' is not")


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "T09.toml"
    bad.write_text("[table\nid = 'x'")
    with pytest.raises(ConfigError, match=r"T09.toml: not valid TOML"):
        load_config(bad)


def test_relative_journal_path_is_relative_to_the_file(tmp_path: Path) -> None:
    text = (EXAMPLES / "baccarat.toml").read_text().replace(
        'path = "/var/lib/table-controller/T01.sqlite"', 'path = "data/T01.sqlite"'
    )
    (tmp_path / "t.toml").write_text(text)
    assert load_config(tmp_path / "t.toml").journal == tmp_path / "data" / "T01.sqlite"


@pytest.mark.parametrize("value", [float("inf"), float("nan"), float("-inf")])
def test_a_non_finite_number_is_refused(value: float) -> None:
    """`betting_seconds = inf` once passed --check and journaled the non-JSON Infinity (issue 13)."""
    msg = mutate(lambda d: d["table"].update(betting_seconds=value))
    assert msg.startswith("T01.toml: table.betting_seconds: must be a finite number")


def test_an_event_with_a_non_finite_number_is_never_written_as_json() -> None:
    from table_controller.events import EventError, to_json

    with pytest.raises(EventError, match="round.start event: .* not JSON"):
        to_json({"type": "round.start", "betting_seconds": float("inf")})


def test_a_line_reader_alone_needs_accept_unverified() -> None:
    msg = mutate(lambda d: d["shoe"].update(protocol="lines"))
    assert msg.startswith("T01.toml: shoe.protocol: 'lines' as the only card source")
    assert "shoe.accept_unverified = true" in msg
    data = example()
    data["shoe"].update(protocol="lines", accept_unverified=True, pattern="(?P<suit>[SHDC])(?P<rank>10|[A2-9TJQK])")
    config = parse_config(data, "T01.toml")
    assert config.shoe is not None and config.shoe.driver_options()["pattern"].startswith("(?P<suit>")


def test_line_reader_keys_are_refused_for_a_smart_shoe() -> None:
    assert mutate(lambda d: d["shoe"].update(repeat_seconds=1)).startswith(
        "T01.toml: shoe.repeat_seconds: only for protocol \"lines\"")
    assert mutate(lambda d: d["shoe"].update(protocol="acme")).startswith(
        "T01.toml: shoe.protocol: must be one of lines, slp1")


@pytest.mark.parametrize("key,endpoint", [
    ("endpoint", "tcp://*:5556"), ("snapshot", "tcp://0.0.0.0:5557"), ("control", "tcp://10.0.0.5:5558"),
])
def test_a_bind_beyond_loopback_without_curve_is_refused(key: str, endpoint: str) -> None:
    msg = mutate(lambda d: d["publish"].update({key: endpoint}))
    assert msg.startswith(f"T01.toml: publish.{key}: {endpoint} listens beyond this machine without CURVE")


def test_insecure_allows_a_network_bind_and_loopback_is_the_default() -> None:
    data = example()
    data["publish"].update(endpoint="tcp://*:5556", insecure=True)
    assert parse_config(data, "T01.toml").publish.insecure
    data = example()
    del data["publish"]
    config = parse_config(data, "T01.toml")
    assert (config.publish.endpoint, config.publish.snapshot) == ("tcp://127.0.0.1:5556", "tcp://127.0.0.1:5557")
    data = example()
    data["publish"].update(endpoint="connect:tcp://studio:5559")  # outgoing: no bind to refuse
    assert parse_config(data, "T01.toml").publish.endpoint.startswith("connect:")


def test_salted_tokens_are_checked_on_load() -> None:
    from table_controller.tokens import stored_form

    data = example()
    data["supervisor"] = {"tokens": [stored_form("floor")]}
    assert parse_config(data, "T01.toml").supervisor_tokens[0].startswith("scrypt$")
    msg = mutate(lambda d: d.update(supervisor={"tokens": ["plain-text-token"]}))
    assert msg.startswith("T01.toml: supervisor.tokens: 'plain-text-token'... is not scrypt$")


def test_rig_ops_need_a_mock_panel() -> None:
    data = example()
    data["panel"]["gpio"] = "mock"
    data["rig"] = {"control_ops": True}
    assert parse_config(data, "T01.toml").rig_ops
    msg = mutate(lambda d: d.update(rig={"control_ops": True}))  # gpio native
    assert msg.startswith("T01.toml: rig.control_ops: only for a test rig")
    assert not parse_config(example(), "T01.toml").rig_ops


def test_journal_rotation_is_read_and_checked() -> None:
    data = example()
    data["journal"].update(rotate="shoe", segment_mb=64)
    rotation = parse_config(data, "T01.toml").journal_rotation
    assert (rotation.every, rotation.max_bytes) == ("shoe", 64 * 1024 * 1024)
    assert parse_config(example(), "T01.toml").journal_rotation.every == "day"  # as shipped
    bare = example()
    bare["journal"] = {"path": bare["journal"]["path"]}
    assert parse_config(bare, "T01.toml").journal_rotation.every == "never"
    assert mutate(lambda d: d["journal"].update(rotate="weekly")).startswith(
        "T01.toml: journal.rotate must be one of never, shoe, day, size, not 'weekly'")
    assert "journal.segment_mb" in mutate(lambda d: d["journal"].update(segment_mb=0))
