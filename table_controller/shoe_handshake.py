"""The controller's side of the shoe handshake: lock confirmation and held acknowledgements.

No threads and no clock of its own: the controller's loop calls it, passing the time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from firmware_interfaces.shoe import events as shoe
from firmware_interfaces.shoe.guarantees import SMART_SHOE

__all__ = ["GATE_CONFIRM_SECONDS", "HeldStarts", "ShoeCommands", "ShoeHandshake"]

#: How long a start-round may wait for the shoe to confirm that its gate is locked.
GATE_CONFIRM_SECONDS = 2.0

Held = TypeVar("Held")


class ShoeCommands(Protocol):
    """What the handshake asks of a shoe driver (``ShoeDriver``, ``LineReaderDriver``)."""

    def lock(self) -> None: ...
    def unlock(self) -> None: ...
    def status(self) -> None: ...
    def ack(self, event: Any) -> None: ...


@dataclass
class HeldStarts(Generic[Held]):
    """What :meth:`ShoeHandshake.release_starts` lets go: starts to apply now, starts to refuse."""

    ready: list[Held] = field(default_factory=list)
    expired: list[Held] = field(default_factory=list)


class ShoeHandshake(Generic[Held]):
    """The gate-lock handshake and the held ACKs between the table and an SLP/1 shoe.

    **Lock confirmation.** The gate is commanded with LOCK/UNLOCK (docs/shoe.md);
    the shoe keeps sending the frames of cards drawn before a LOCK took effect,
    and a frame may come late (re-sent after a controller restart). Frames
    arrive in order, so after LOCK the controller also sends STATUS, and a GATE
    LOCKED or STATE (gate locked) frame means every card drawn before the lock
    has arrived. Until then a new round must not start, or such a late card
    would be dealt into it: :meth:`hold_start` keeps the start-round, and
    :meth:`release_starts` hands it back once the lock is confirmed, or as
    expired after :data:`GATE_CONFIRM_SECONDS` (to be refused). A reader without
    a gate (a line reader) has no lock to confirm; with the link down the table
    refuses a start for its own reason, so neither waits.

    **Held ACKs.** An ACK tells the shoe it may forget a frame (SLP/1: exactly
    once, an ACK covers every earlier frame). A frame is acknowledged only
    after what it caused is journaled; while a card waits for the camera, its
    frame and every later one stay unacknowledged (and their link state
    unjournaled), so a crash loses nothing: the shoe sends them again. When
    released, every held frame is acknowledged, oldest first: the driver counts
    a frame as recorded only when it is named, so one left out would hold back
    every later ACK until the shoe's window filled and the link stalled.
    """

    def __init__(self, shoe_: ShoeCommands | None = None, *, confirm_seconds: float = GATE_CONFIRM_SECONDS) -> None:
        #: The shoe driver commanded; None for a table without one. Settable: the
        #: assembly opens the driver after the controller exists.
        self.shoe = shoe_
        self.confirm_seconds = confirm_seconds
        self._gate_open: bool | None = None  # as last commanded; None: not since the session began
        self._lock_confirmed = False
        self._held_starts: list[tuple[Held, float]] = []
        self._held_frames: list[Any] = []

    # ------------------------------------------------------------------ the gate
    def observe(self, event: object) -> None:
        """A shoe driver event arrived (call before applying it): a session start or a lock answer."""
        if isinstance(event, (shoe.Hello, shoe.LinkUp)):
            self._gate_open = None  # a new shoe session starts locked: say again what the gate must be
        elif self._gate_open is False and (
            (isinstance(event, shoe.Gate) and event.is_locked)
            or (isinstance(event, shoe.ShoeStatus) and event.gate_locked)
        ):
            self._lock_confirmed = True

    def drive_gate(self, should_be_open: bool) -> None:
        """Command the gate where it differs from the last command: UNLOCK, or LOCK then STATUS
        (STATUS is answered even by a shoe that reports GATE only on a change)."""
        if self.shoe is None or should_be_open == self._gate_open:
            return
        self._gate_open = should_be_open
        self._lock_confirmed = False
        if should_be_open:
            self.shoe.unlock()
        else:
            self.shoe.lock()
            self.shoe.status()

    def must_wait_for_lock(self, *, link_up: bool) -> bool:
        """True while a new round must wait for the shoe to confirm the lock that ended the last."""
        if self.shoe is None or not getattr(self.shoe, "guarantees", SMART_SHOE).gate:
            return False
        return link_up and not self._lock_confirmed

    # ------------------------------------------------------------------ held starts
    def hold_start(self, start: Held, now: float, *, link_up: bool) -> bool:
        """Hold a start-round until the lock is confirmed; False: no wait, apply it now."""
        if not self.must_wait_for_lock(link_up=link_up):
            return False
        self._held_starts.append((start, now))
        return True

    @property
    def holding_starts(self) -> bool:
        """True while a start-round waits for the lock confirmation."""
        return bool(self._held_starts)

    def release_starts(self, now: float, *, link_up: bool) -> HeldStarts[Held]:
        """The held starts to apply now (the lock is confirmed) and those that waited too long."""
        out: HeldStarts[Held] = HeldStarts()
        if not self.must_wait_for_lock(link_up=link_up):
            out.ready = [start for start, _ in self._held_starts]
            self._held_starts = []
            return out
        while self._held_starts and now - self._held_starts[0][1] >= self.confirm_seconds:
            out.expired.append(self._held_starts.pop(0)[0])
        return out

    def refusal(self) -> str:
        """Why an expired start is refused."""
        return (f"cannot start a round: the shoe did not confirm within {self.confirm_seconds:g} s "
                "that its gate is locked")

    # ------------------------------------------------------------------ held ACKs
    def frames_to_ack(self, event: object, *, hold: bool) -> list[Any]:
        """The shoe frames to acknowledge once this step is journaled, oldest first.

        ``event``: the driver event of this step (None, or one without a link state,
        adds nothing). ``hold``: a card waits for the camera; every frame is held.
        The last frame's link state is the one to journal with the step.
        """
        if getattr(event, "link", None) is not None:
            self._held_frames.append(event)
        if hold:
            return []
        frames, self._held_frames = self._held_frames, []
        return frames

    def acknowledge(self, frames: list[Any]) -> None:
        """ACK ``frames`` (journaled by now) to the shoe, oldest first."""
        if self.shoe is not None:
            for frame in frames:
                self.shoe.ack(frame)
