"""What can happen at a table: the inputs the state machine accepts.

Device threads turn what they see into these records and post them on the
controller's queue; one loop hands them to :class:`~table_controller.table.machine.TableMachine`
in order.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CameraDown",
    "CameraMismatch",
    "CardPresented",
    "CardDropped",
    "CardMisplaced",
    "CloseBetting",
    "DeviceFault",
    "DealerSignIn",
    "DeviceWarning",
    "ExposedCard",
    "ExtraCard",
    "LidChanged",
    "LinkChanged",
    "NoRead",
    "ShoeCut",
    "ShoeEmpty",
    "ShoeNew",
    "ShoeRestarted",
    "StartRound",
    "SupervisorResume",
    "SupervisorVoid",
    "TableInput",
    "Tick",
    "VoidRequest",
]


@dataclass(frozen=True)
class StartRound:
    """The dealer (or the schedule) opens betting on a new round."""

    by: str = "dealer"


@dataclass(frozen=True)
class CloseBetting:
    """The dealer closes betting before the countdown ends."""

    by: str = "dealer"


@dataclass(frozen=True)
class Tick:
    """Time passed; lets countdowns and result displays expire."""


@dataclass(frozen=True)
class CardPresented:
    """A card came to the table, identified: from the shoe, the camera, both, or entered by hand.

    ``source`` says which (``shoe``, ``camera``, ``shoe+camera``, ``manual``). Not the shoe
    driver's ``CardDrawn`` (a frame, with its link state): the controller maps that one to
    this in :mod:`table_controller.shoe_mapping`.
    """

    code: str
    source: str = "shoe"
    shoe_count: int | None = None  # the shoe's card count, journaled to recognise re-sent cards


@dataclass(frozen=True)
class NoRead:
    """A card left the shoe but could not be identified."""

    detail: str = "the shoe could not read a card"


@dataclass(frozen=True)
class CardDropped:
    """The dealer's button (or the camera) says a card fell."""

    detail: str = "dealer pressed card dropped"


@dataclass(frozen=True)
class ExposedCard:
    """A card was seen face up where no card may be (camera)."""

    detail: str


@dataclass(frozen=True)
class CardMisplaced:
    """A card was laid at another position than the rules called for (camera)."""

    detail: str


@dataclass(frozen=True)
class ExtraCard:
    """A card left the shoe after the round's last card: a card the rules did not call for."""

    detail: str


@dataclass(frozen=True)
class CameraMismatch:
    """Shoe and camera disagree about a card, or the camera saw a card the shoe did not.

    ``shoe_card``: the card the shoe gave, when it gave one (a supervisor confirms it).
    """

    detail: str
    shoe_card: str | None = None


@dataclass(frozen=True)
class CameraDown:
    """The camera stopped delivering frames."""

    detail: str = "camera stopped delivering frames"


@dataclass(frozen=True)
class VoidRequest:
    """The dealer asks a supervisor to void the round."""

    by: str = "dealer"


@dataclass(frozen=True)
class ShoeNew:
    """Cards were loaded into the shoe and its lid closed.

    ``announced_by``: a supervisor told the table (a reader that cannot say so); a repeat
    with no card dealt since is the same announcement, not another shoe.
    """

    decks: int
    announced_by: str | None = None


@dataclass(frozen=True)
class ShoeCut:
    """The cut card came out."""

    count: int


@dataclass(frozen=True)
class ShoeEmpty:
    """The shoe has no cards left."""

    count: int


@dataclass(frozen=True)
class LidChanged:
    """The shoe's lid opened or closed."""

    is_open: bool


@dataclass(frozen=True)
class LinkChanged:
    """The shoe link went down or came back."""

    up: bool
    reason: str = ""


@dataclass(frozen=True)
class ShoeRestarted:
    """The shoe started a new session (it lost power or was reset): unacknowledged frames may be lost."""

    detail: str = "the shoe restarted (new boot id)"


@dataclass(frozen=True)
class DeviceFault:
    """A device reported a fault (jam, reader failure)."""

    detail: str


@dataclass(frozen=True)
class DeviceWarning:
    """Something a device did that deserves an alert but no pause (a line read twice, a burst)."""

    detail: str


@dataclass(frozen=True)
class SupervisorResume:
    """A supervisor resumes a paused round, confirming the card by hand where one is awaited."""

    by: str
    card: str | None = None


@dataclass(frozen=True)
class SupervisorVoid:
    """A supervisor voids the round in progress; every bet is refunded."""

    by: str
    reason: str = "voided by supervisor"


@dataclass(frozen=True)
class DealerSignIn:
    """A dealer signs in at the table (``dealer``), or the one signed in signs out (None)."""

    dealer: str | None
    by: str


TableInput = (
    StartRound
    | CloseBetting
    | Tick
    | CardPresented
    | NoRead
    | CardDropped
    | ExposedCard
    | ExtraCard
    | CardMisplaced
    | CameraMismatch
    | CameraDown
    | VoidRequest
    | ShoeNew
    | ShoeCut
    | ShoeEmpty
    | LidChanged
    | LinkChanged
    | ShoeRestarted
    | DeviceFault
    | DeviceWarning
    | SupervisorResume
    | SupervisorVoid
    | DealerSignIn
)
