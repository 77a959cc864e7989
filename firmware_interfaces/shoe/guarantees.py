"""What a card reader's protocol can promise, so the controller knows what to rely on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ReaderGuarantees:
    """The promises of one reader protocol (docs/shoe.md, "Readers and what they guarantee").

    ``exactly_once``: every card is delivered once, in order, across cable pulls
    and restarts (retransmission + acknowledgement). ``counts``: the device
    numbers its cards. ``gate``: the device can lock its gate and confirm it.
    ``sessions``: the device tells when it restarted (boot id).
    """

    exactly_once: bool
    counts: bool
    gate: bool
    sessions: bool

    def missing(self) -> list[str]:
        """The guarantees this protocol cannot give, in words."""
        words = {
            "exactly_once": "no retransmission (a card sent while the cable is out is lost)",
            "counts": "no card count",
            "gate": "no gate (cards can be drawn at any time)",
            "sessions": "no restart detection",
        }
        return [text for key, text in words.items() if not getattr(self, key)]


#: SLP/1 smart shoes.
SMART_SHOE = ReaderGuarantees(exactly_once=True, counts=True, gate=True, sessions=True)
#: Plain line readers (serial or HID).
LINE_READER = ReaderGuarantees(exactly_once=False, counts=False, gate=False, sessions=False)
