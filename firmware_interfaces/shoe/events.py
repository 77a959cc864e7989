"""Typed shoe events and the mapping from SLP/1 frames to them.

Every event that came from a shoe frame carries ``link``: the link state right
after delivering it. The controller persists that state together with the
event (one transaction) and hands the last one back as ``resume=`` after a
restart, so the shoe's retransmissions are then recognised as duplicates.
"""

from __future__ import annotations

from dataclasses import dataclass

from firmware_interfaces.cards import CODES
from firmware_interfaces.cards import RANKS as RANKS  # the readers' imports
from firmware_interfaces.cards import SUITS as SUITS
from firmware_interfaces.shoe.codec import Frame
from firmware_interfaces.shoe.errors import MalformedFrame

#: The 52 card codes a shoe may report (``TS`` is the ten of spades).
CARD_CODES: frozenset[str] = frozenset(CODES)
READERS = ("R", "O", "RO")
_HEX = frozenset("0123456789ABCDEFabcdef")


@dataclass(frozen=True, slots=True)
class LinkState:
    """The last delivered shoe frame: session (boot id) and its seq."""

    boot_id: str
    seq: int

    def __str__(self) -> str:
        return f"{self.boot_id}:{self.seq}"

    @classmethod
    def parse(cls, text: str) -> LinkState:
        """Parse ``BOOTID:SEQ`` (as printed by ``str()``); raises MalformedFrame."""
        boot, _, seq = text.partition(":")
        if not is_boot_id(boot) or not seq.isdigit() or int(seq) > 65535:
            raise MalformedFrame(f"link state {text!r}: expected BOOTID:SEQ, e.g. 5F3A9C01:17")
        return cls(boot.upper(), int(seq))


@dataclass(frozen=True, slots=True)
class CardDrawn:
    """A card left the gate and was identified.

    ``reader``: R, O or RO (SLP/1), L (a plain line reader). ``link`` is None
    for readers without a link state (line readers).
    """

    code: str
    reader: str
    count: int
    link: LinkState | None


@dataclass(frozen=True, slots=True)
class NoRead:
    """A card left the gate but could not be identified."""

    count: int
    link: LinkState


@dataclass(frozen=True, slots=True)
class CutCard:
    """The cut card came out."""

    count: int
    link: LinkState


@dataclass(frozen=True, slots=True)
class NewShoe:
    """Cards were loaded and the lid closed; the count restarts at 0."""

    decks: int
    link: LinkState


@dataclass(frozen=True, slots=True)
class ShoeEmpty:
    """No cards left in the shoe."""

    count: int
    link: LinkState


@dataclass(frozen=True, slots=True)
class Lid:
    """The shoe's lid opened or closed."""

    is_open: bool
    link: LinkState


@dataclass(frozen=True, slots=True)
class Gate:
    """The gate's state changed (the shoe's answer to LOCK/UNLOCK)."""

    is_locked: bool
    link: LinkState


@dataclass(frozen=True, slots=True)
class ShoeStatus:
    """The shoe's answer to STATUS."""

    gate_locked: bool
    lid_open: bool
    count: int
    link: LinkState


@dataclass(frozen=True, slots=True)
class Fault:
    """A device fault (jam, reader failure), or ``BADFRAME`` for a shoe frame we could not use.

    ``link`` is None only for readers without a link state.
    """

    code: str
    text: str
    link: LinkState | None


@dataclass(frozen=True, slots=True)
class ReaderNotice:
    """What a driver can tell about a reader that has no protocol to say it (line readers).

    ``kind``: ``gap`` (the port was down: a card drawn meanwhile is lost),
    ``repeat`` (the same card twice within the repeat window: taken once),
    ``burst`` (two cards closer together than a dealer draws), ``unreadable``
    (a line that names more than one card: a card came out unread).
    """

    kind: str
    text: str
    link: None = None


@dataclass(frozen=True, slots=True)
class Hello:
    """The shoe started a session.

    ``new_session``: the shoe started this session on its own (power-on, or a
    RESET that was not ours) while we had another one, so frames it had not
    had acknowledged are gone: raise an alert for a round in progress.
    ``resynced``: the session answers our own RESET while we had a session
    (nothing lost: the shoe re-sends every unacknowledged frame).
    """

    vendor: str
    model: str
    serial: str
    firmware: str
    boot_id: str
    nonce: str
    new_session: bool
    link: LinkState
    resynced: bool = False


@dataclass(frozen=True, slots=True)
class LinkUp:
    """Frames from the shoe arrive (again)."""

    link: None = None


@dataclass(frozen=True, slots=True)
class LinkDown:
    """No frame from the shoe for too long, or the transport failed; ``reason`` says which."""

    reason: str
    link: None = None


ShoeEvent = (
    CardDrawn | NoRead | CutCard | NewShoe | ShoeEmpty | Lid | Gate | ShoeStatus | Fault | Hello
    | LinkUp | LinkDown | ReaderNotice
)

#: Frame types that keep the link alive but are not events.
LINK_ONLY_TYPES = frozenset({"HB"})


def is_boot_id(text: str) -> bool:
    return len(text) == 8 and _HEX.issuperset(text)


def _count(frame: Frame, index: int, name: str) -> int:
    text = frame.args[index]
    if not (text.isdigit() and text.isascii()) or len(text) > 9:
        raise MalformedFrame(f"{frame.type} frame seq {frame.seq}: {name} {text!r} is not a count")
    return int(text)


def _need(frame: Frame, n: int, names: str) -> None:
    if len(frame.args) < n:
        raise MalformedFrame(
            f"{frame.type} frame seq {frame.seq}: expected {n} argument(s) ({names}), "
            f"got {len(frame.args)}"
        )


def _choice(frame: Frame, index: int, name: str, yes: str, no: str) -> bool:
    text = frame.args[index]
    if text not in (yes, no):
        raise MalformedFrame(
            f"{frame.type} frame seq {frame.seq}: {name} {text!r}: expected {yes} or {no}"
        )
    return text == yes


def event_from_frame(frame: Frame, link: LinkState) -> ShoeEvent | None:
    """The event a delivered shoe frame means; ``None`` for link-only and unknown types.

    HELLO is not handled here (the link builds it: it depends on the session).
    Raises :class:`MalformedFrame` when the arguments do not fit the type.
    """
    t = frame.type
    if t == "CARD":
        _need(frame, 3, "code, reader, count")
        code, reader = frame.args[0], frame.args[1]
        if code not in CARD_CODES:
            raise MalformedFrame(
                f"CARD frame seq {frame.seq}: card code {code!r} is not "
                "rank A23456789TJQK + suit SHDC"
            )
        if reader not in READERS:
            raise MalformedFrame(
                f"CARD frame seq {frame.seq}: reader {reader!r}: expected R, O or RO"
            )
        return CardDrawn(code, reader, _count(frame, 2, "count"), link)
    if t == "NOREAD":
        _need(frame, 1, "count")
        return NoRead(_count(frame, 0, "count"), link)
    if t == "CUT":
        _need(frame, 1, "count")
        return CutCard(_count(frame, 0, "count"), link)
    if t == "NEWSHOE":
        _need(frame, 1, "decks")
        return NewShoe(_count(frame, 0, "decks"), link)
    if t == "EMPTY":
        _need(frame, 1, "count")
        return ShoeEmpty(_count(frame, 0, "count"), link)
    if t == "LID":
        _need(frame, 1, "OPEN or CLOSED")
        return Lid(_choice(frame, 0, "lid", "OPEN", "CLOSED"), link)
    if t == "GATE":
        _need(frame, 1, "LOCKED or UNLOCKED")
        return Gate(_choice(frame, 0, "gate", "LOCKED", "UNLOCKED"), link)
    if t == "STATE":
        _need(frame, 3, "gate, lid, count")
        return ShoeStatus(
            _choice(frame, 0, "gate", "LOCKED", "UNLOCKED"),
            _choice(frame, 1, "lid", "OPEN", "CLOSED"),
            _count(frame, 2, "count"),
            link,
        )
    if t == "FAULT":
        _need(frame, 2, "code, text")
        return Fault(frame.args[0], frame.args[1], link)
    return None


@dataclass(frozen=True, slots=True)
class HelloInfo:
    """The arguments of a HELLO frame."""

    vendor: str
    model: str
    serial: str
    firmware: str
    protocol: str
    boot_id: str
    nonce: str


def parse_hello(frame: Frame) -> HelloInfo:
    """Check and split a HELLO frame's arguments; raises MalformedFrame.

    The seq is not checked here: whether a HELLO starts a session is the link's decision.
    """
    _need(frame, 7, "vendor, model, serial, firmware, SLP1, boot id, nonce")
    info = HelloInfo(*frame.args[:7])
    if info.protocol != "SLP1":
        raise MalformedFrame(f"HELLO frame: protocol {info.protocol!r}, expected SLP1")
    if not is_boot_id(info.boot_id):
        raise MalformedFrame(f"HELLO frame: boot id {info.boot_id!r} is not 8 hex digits")
    return info


def event_to_dict(event: ShoeEvent) -> dict[str, object]:
    """A JSON-ready dict of an event (as ``shoe monitor --json`` prints it)."""
    name = _EVENT_NAMES[type(event)]
    out: dict[str, object] = {"event": name}
    for key in event.__slots__:
        if key == "link":
            continue
        out[_JSON_KEYS.get(key, key)] = getattr(event, key)
    if event.link is not None:
        out["seq"] = event.link.seq
        out["boot"] = event.link.boot_id
    if isinstance(event, Hello):
        out["boot"] = event.boot_id
        del out["boot_id"]
    return out


_EVENT_NAMES: dict[type, str] = {
    CardDrawn: "card",
    NoRead: "noread",
    CutCard: "cut",
    NewShoe: "newshoe",
    ShoeEmpty: "empty",
    Lid: "lid",
    Gate: "gate",
    ShoeStatus: "state",
    Fault: "fault",
    Hello: "hello",
    LinkUp: "link-up",
    LinkDown: "link-down",
    ReaderNotice: "notice",
}
_JSON_KEYS = {"is_open": "open", "is_locked": "locked"}
