"""The event stream of events.md: publisher, snapshot server, CURVE keys, studio proxy."""

from table_controller.publish.proxy import StudioProxy
from table_controller.publish.publisher import (
    DEFAULT_PUBLISH,
    DEFAULT_SNAPSHOT,
    EventPublisher,
    attach,
)
from table_controller.publish.security import (
    ClientCurve,
    CurveConfig,
    KeyFileError,
    generate_keys,
    load_keypair,
)
from table_controller.publish.snapshot import SnapshotState

__all__ = [
    "DEFAULT_PUBLISH", "DEFAULT_SNAPSHOT", "ClientCurve", "CurveConfig", "EventPublisher",
    "KeyFileError", "SnapshotState", "StudioProxy", "attach", "generate_keys", "load_keypair",
]
