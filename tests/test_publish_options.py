"""The event-stream options that ``run`` and ``sim`` add to their parsers."""

from __future__ import annotations

import argparse

import pytest

from table_controller.errors import ConfigError
from table_controller.publish.options import (
    add_publish_args,
    publisher_from_args,
    snapshot_endpoint_for,
)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_publish_args(parser)
    return parser.parse_args(list(argv))


def test_defaults_are_events_md_ports_on_loopback():
    publisher = publisher_from_args(parse(), "T01")
    assert (publisher.publish_endpoint, publisher.snapshot_endpoint) == ("tcp://127.0.0.1:5556", "tcp://127.0.0.1:5557")
    assert publisher.security is None
    publisher.context.term()


def test_loopback_endpoints_and_curve_files(tmp_path):
    args = parse("--publish", "tcp://127.0.0.1:6001", "--snapshot", "tcp://127.0.0.1:6002",
                 "--curve-secret", str(tmp_path / "t.key_secret"),
                 "--authorized-clients", str(tmp_path))
    publisher = publisher_from_args(args, "T07")
    assert publisher.publish_endpoint == "tcp://127.0.0.1:6001"
    assert publisher.security.server_secret_file == tmp_path / "t.key_secret"
    publisher.context.term()


def test_half_the_curve_options_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="--curve-secret and --authorized-clients go together"):
        publisher_from_args(parse("--curve-secret", str(tmp_path / "k")), "T01")


def test_snapshot_endpoint_is_the_next_port():
    assert snapshot_endpoint_for("tcp://table-01:5556") == "tcp://table-01:5557"
