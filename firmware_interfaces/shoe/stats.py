"""Link statistics of the controller side."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class LinkStats:
    """Counters of one driver since it started (monotonic).

    Decoder: ``frames`` good frames received, ``bad_crc``, ``bad_syntax``,
    ``overlong``, ``resyncs`` (a ``$`` restarted a partial frame),
    ``garbage_bytes``. Link: ``delivered`` frames delivered in order,
    ``duplicates`` (shoe retransmissions of delivered frames, re-ACKed),
    ``out_of_order`` (frames ahead of the expected seq, dropped),
    ``undelivered`` (frames before the session was anchored), ``acks_sent``,
    ``commands_sent``, ``retransmissions`` (our command frames sent again),
    ``stale_acks`` (ACKs that named no command in flight), ``stale_hellos``,
    ``heartbeats``, ``unknown_frames``, ``protocol_errors`` (frames whose
    arguments did not fit their type), ``session_resyncs`` (RESETs we sent to
    re-anchor), ``link_downs``, ``reconnects`` (transport reopened).
    """

    frames: int = 0
    bad_crc: int = 0
    bad_syntax: int = 0
    overlong: int = 0
    resyncs: int = 0
    garbage_bytes: int = 0
    delivered: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    undelivered: int = 0
    acks_sent: int = 0
    commands_sent: int = 0
    retransmissions: int = 0
    stale_acks: int = 0
    stale_hellos: int = 0
    heartbeats: int = 0
    unknown_frames: int = 0
    protocol_errors: int = 0
    session_resyncs: int = 0
    link_downs: int = 0
    reconnects: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)
