"""Test doubles of the shoe driver's command side, shared by the controller's and the handshake's tests."""

from __future__ import annotations

from firmware_interfaces import shoe
from firmware_interfaces.shoe.guarantees import LINE_READER


class RecordingShoe:
    """The driver's command side, recorded: gate commands in ``commands``, ACKed seqs in ``acked``
    (frames are fed to the controller with ``on_shoe_event``)."""

    def __init__(self) -> None:
        self.commands: list[str] = []
        self.acked: list[int] = []

    def lock(self) -> None:
        self.commands.append("LOCK")

    def unlock(self) -> None:
        self.commands.append("UNLOCK")

    def status(self) -> None:
        self.commands.append("STATUS")

    def ack(self, event: shoe.ShoeEvent) -> None:
        assert event.link is not None
        self.acked.append(event.link.seq)


class LineReader(RecordingShoe):
    """A plain line reader's guarantees: no gate, no count, no retransmission."""

    guarantees = LINE_READER
