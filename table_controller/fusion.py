"""Shoe and camera: when does a card count?

With both sources a card counts when both agree: the shoe names the card and
its order, the camera must then see that card at the position the rules call
for. Disagreement, a camera card with no shoe card, or a shoe card the camera
never sees is a ``source-mismatch`` (the round pauses); a card laid at another
position is ``wrong-position``; a card seen off every position is an exposed
card. A camera-only table takes each card from the camera alone.

Pure: the caller passes the time and the round's deal; the answers are table inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from table_controller.rules.cards import parse_card
from table_controller.rules.game import Deal
from table_controller.table import inputs as i

Slot = tuple[str, int]


@dataclass
class _Pending:
    code: str
    since: float
    shoe_count: int | None = None


@dataclass
class _Sighting:
    slot: Slot
    code: str
    since: float


class CardFusion:
    """Cross-checks shoe cards with camera sightings (``mode``: shoe, camera or shoe+camera)."""

    def __init__(self, mode: str, confirm_seconds: float = 3.0) -> None:
        if mode not in ("shoe", "camera", "shoe+camera"):
            raise ValueError(f"unknown card source mode {mode!r}")
        self.mode = mode
        self.confirm_seconds = confirm_seconds
        self.pending: list[_Pending] = []
        self.unmatched: list[_Sighting] = []

    def reset(self) -> list[i.TableInput]:
        """A round ended. Shoe cards still waiting for the camera are handed back as plain
        shoe cards (the table then records them as cards the round did not call for):
        a card that left the shoe is never dropped silently."""
        leftover: list[i.TableInput] = [i.CardPresented(p.code, "shoe", p.shoe_count) for p in self.pending]
        self.pending.clear()
        self.unmatched.clear()
        return leftover

    # ------------------------------------------------------------------ shoe
    def shoe_card(
        self, code: str, deal: Deal | None, dealing: bool, now: float, shoe_count: int | None = None
    ) -> list[i.TableInput]:
        """A card left the shoe."""
        if self.mode == "shoe" or deal is None or not dealing:
            # burn cards and cards outside a round: the machine decides
            return [i.CardPresented(code, "shoe", shoe_count)]
        slot = self.expected_slot(deal, extra=len(self.pending))
        self.pending.append(_Pending(code, now, shoe_count))
        for k, seen in enumerate(self.unmatched):
            if seen.code == code and self._misplaced(deal, seen.slot, code):
                del self.unmatched[k]
                self.pending.pop()
                return [i.CardMisplaced(f"card {code} laid at {_name(seen.slot)}, the rules called for {_name(slot)}")]
        return self.settle_in_order(deal)

    # ------------------------------------------------------------------ camera
    def camera_card(
        self, position: str | None, index: int | None, code: str | None, deal: Deal | None,
        dealing: bool, now: float, held: bool = False,
    ) -> list[i.TableInput]:
        """The camera saw a card stable at a position (None: off every position).

        ``held``: the round is paused; the sighting is kept and settled when it deals again.
        """
        if position is None:
            if code is None and not dealing:
                return []
            what = f"card {code}" if code else "an unreadable card"
            return [i.ExposedCard(f"{what} seen off every position")]
        if deal is None or not (dealing or held):
            return []  # cards left on the layout between rounds are not dealt cards
        slot = (position, index if index is not None else 0)
        if self._already_placed(deal, slot, code):
            return []
        if self.mode == "camera":
            return [] if held else self._camera_only(slot, code, deal)
        if code is None:
            return []  # wait for a readable sighting; an unconfirmed shoe card times out in tick()
        # A slot holds one card: a newer sighting replaces an older one there.
        self.unmatched = [seen for seen in self.unmatched if seen.slot != slot]
        self.unmatched.append(_Sighting(slot, code, now))
        if held:
            return []  # kept: settled in order once the round deals again
        if self._misplaced(deal, slot, code):
            self.unmatched.pop()
            expected = self.expected_slot(deal, extra=0)
            return [i.CardMisplaced(f"card {code} laid at {_name(slot)}, the rules called for {_name(expected)}")]
        return self.settle_in_order(deal)

    def settle_in_order(self, deal: Deal | None) -> list[i.TableInput]:
        """Confirm waiting shoe cards, first to last, while the camera saw each at its slot.

        The camera may see several cards in one frame, in any order (after a
        blackout, or a restarted controller's first look), and a later card may be
        seen before an earlier one: each waits until the cards before it are
        settled. A different card at a card's slot is a disagreement and stops
        there; the supervisor settles it and the rest follow.
        """
        if deal is None or not self.pending:
            return []
        slots = [self.expected_slot(deal, extra=k) for k in range(len(self.pending))]
        out: list[i.TableInput] = []
        settled = 0
        for head, slot in zip(self.pending, slots, strict=False):
            seen = next((x for x in self.unmatched if x.slot == slot), None)
            if seen is None:
                break
            self.unmatched.remove(seen)
            settled += 1
            if seen.code != head.code:
                out.append(i.CameraMismatch(
                    f"the shoe read {head.code}, the camera read {seen.code} at {_name(slot)}",
                    shoe_card=head.code,
                ))
                break
            out.append(i.CardPresented(head.code, "shoe+camera", head.shoe_count))
        del self.pending[:settled]
        return out

    def _misplaced(self, deal: Deal, slot: Slot, code: str) -> bool:
        """A shoe card waiting for the camera was seen at a slot that is not its own."""
        named = [k for k, p in enumerate(self.pending) if p.code == code]
        return bool(named) and all(self.expected_slot(deal, extra=k) != slot for k in named)

    def _camera_only(self, slot: Slot, code: str | None, deal: Deal) -> list[i.TableInput]:
        expected = self.expected_slot(deal, extra=0)
        if slot != expected:
            what = code or "an unreadable card"
            return [i.CardMisplaced(f"{what} laid at {_name(slot)}, the rules called for {_name(expected)}")]
        if code is None:
            return [i.NoRead(f"the camera cannot read the card at {_name(slot)}")]
        return [i.CardPresented(code, "camera")]

    def camera_down(self) -> list[i.TableInput]:
        return [i.CameraDown()]

    # ------------------------------------------------------------------ time
    def tick(self, now: float, dealing: bool = True, deal: Deal | None = None) -> list[i.TableInput]:
        """Shoe cards the camera never confirmed, camera cards the shoe never named.

        One at a time, and only while dealing: each one pauses the round until a
        supervisor settles it, and the next waits its turn (none is dropped).
        """
        if not dealing:
            return []
        settled = self.settle_in_order(deal)
        if settled:
            return settled
        if self.pending and now - self.pending[0].since >= self.confirm_seconds:
            late = self.pending.pop(0)
            for waiting in self.pending:  # the next cards' wait starts after this one is settled
                waiting.since = max(waiting.since, now)
            return [i.CameraMismatch(
                f"the camera did not see card {late.code} within {self.confirm_seconds:g} s", shoe_card=late.code
            )]
        awaited = {p.code for p in self.pending}
        for k, seen in enumerate(self.unmatched):
            # A camera card may be ahead of a shoe frame that the link is still re-sending:
            # wait longer for the shoe than for the camera. One the shoe named waits its turn.
            if seen.code not in awaited and now - seen.since >= 3 * self.confirm_seconds:
                del self.unmatched[k]
                return [i.CameraMismatch(
                    f"the camera saw {seen.code} at {_name(seen.slot)} but the shoe gave no such card"
                )]
        return []

    # ------------------------------------------------------------------ helpers
    def expected_slot(self, deal: Deal, extra: int) -> Slot | None:
        """Where the card after ``extra`` pending cards must go, by the game's dealing plan."""
        hands = {p: list(cards) for p, cards in deal.hands.items()}
        dealt = deal.dealt
        for pending in self.pending[:extra]:
            position = deal.game.next_position(hands, dealt)
            if position is None:
                return None
            hands[position].append(parse_card(pending.code))
            dealt += 1
        position = deal.game.next_position(hands, dealt)
        return None if position is None else (position, len(hands[position]))

    @staticmethod
    def _already_placed(deal: Deal, slot: Slot, code: str | None) -> bool:
        hand = deal.hands.get(slot[0], [])
        if slot[1] >= len(hand):
            return False
        return code is None or parse_card(code) == hand[slot[1]]


def _name(slot: Slot | None) -> str:
    return "no position" if slot is None else f"{slot[0]}[{slot[1]}]"


@dataclass(frozen=True)
class CameraSaw:
    """The camera's watcher: a card became stable at a position (None: off every position)."""

    position: str | None
    index: int | None
    code: str | None
