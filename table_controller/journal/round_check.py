"""Re-judge the journal's rounds with the rules core: every result exactly as computed, once.

Fed the events in seq order, :class:`RoundAudit` keeps each open round's card
events and, at its ``round.result``, checks that the cards land where the
game's dealing plan puts them, that the deal is complete, and that
``game.judge(hands)`` gives the journaled hands, outcome and payouts. It also
checks that a round starts once and is settled (result or void) exactly once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from table_controller.errors import TableError
from table_controller.rules import Game, load_game
from table_controller.rules.cards import CODES, parse_card

#: At most this many differences are listed for one result.
MAX_DIFFS_PER_RESULT = 5


@dataclass
class CardEntry:
    """A journaled card event of a round."""

    seq: int
    position: str
    index: int
    code: str


@dataclass
class OpenRound:
    """What the audit remembers of a round until it is settled."""

    round_id: str
    start_seq: int | None = None
    variant: str | None = None
    cards: list[CardEntry] = field(default_factory=list)


def differences(journaled: Any, computed: Any, path: str = "") -> list[str]:
    """Human-readable differences between two JSON values, leaf by leaf."""
    if isinstance(journaled, dict) and isinstance(computed, dict):
        out: list[str] = []
        for key in list(computed) + [k for k in journaled if k not in computed]:
            where = f"{path}.{key}" if path else str(key)
            if key not in journaled:
                out.append(
                    f"{where} is missing in the journal (rules core: {_show(computed[key])})"
                )
            elif key not in computed:
                out.append(f"{where} is in the journal ({_show(journaled[key])}) but not computed")
            else:
                out.extend(differences(journaled[key], computed[key], where))
        return out
    if journaled != computed or type(journaled) is not type(computed):
        return [f"{path or 'value'} is {_show(journaled)} in the journal, the rules core computes "
                f"{_show(computed)}"]
    return []


def _show(value: Any) -> str:
    import json

    return json.dumps(value, separators=(",", ":"))


class RoundAudit:
    """Checks rounds as their events stream past; problems go to ``report``."""

    def __init__(
        self, *, default_variant: str, variants_dir: Path | None, report: Callable[[str], None]
    ) -> None:
        self.default_variant = default_variant
        self.variants_dir = variants_dir
        self.report = report
        self.open: dict[str, OpenRound] = {}
        self.settled: dict[str, tuple[int, str]] = {}
        self.started: set[str] = set()
        self.results_checked = 0
        self._games: dict[str, Game | str] = {}
        self._last_round: str | None = None

    @property
    def rounds(self) -> int:
        return len(self.open) + len(self.settled)

    def add(self, seq: int, event: dict[str, Any]) -> None:
        """Take the next event in seq order."""
        round_id = event.get("round")
        if not isinstance(round_id, str):
            return
        kind = event.get("type")
        if round_id in self.settled:
            if kind == "round.start":
                self._start(seq, round_id)
            else:
                self._after_settlement(seq, round_id, event)
            return
        if kind == "round.start":
            self._start(seq, round_id)
        rnd = self.open.get(round_id)
        if rnd is None:
            rnd = self.open[round_id] = OpenRound(round_id)
            self._last_round = round_id
        if kind == "round.start":
            rnd.start_seq, rnd.variant = seq, event.get("variant")
            self._last_round = round_id
        elif kind == "card" and event.get("position") != "burn":
            rnd.cards.append(
                CardEntry(seq, str(event.get("position")), _int(event.get("index")),
                          str(event.get("code")))
            )
        elif kind == "round.result":
            self.results_checked += 1
            self._check_result(rnd, seq, event)
            self._settle(round_id, seq, kind)
        elif kind == "round.void":
            self._settle(round_id, seq, kind)

    def finish(self) -> None:
        """Report rounds left unsettled, except the last one (it may still be in progress)."""
        for round_id, rnd in self.open.items():
            if round_id == self._last_round:
                continue
            since = f"started at seq {rnd.start_seq}" if rnd.start_seq else "no round.start"
            self.report(
                f"round {round_id!r} ({since}) was never settled: no round.result or round.void, "
                "yet later rounds were played"
            )

    # -- settlement bookkeeping ---------------------------------------------------------
    def _start(self, seq: int, round_id: str) -> None:
        if round_id in self.started:
            self.report(f"round {round_id!r} started again at seq {seq}: round ids must be unique")
        self.started.add(round_id)

    def _after_settlement(self, seq: int, round_id: str, event: dict[str, Any]) -> None:
        first_seq, first_kind = self.settled[round_id]
        kind = event.get("type")
        if kind in ("round.result", "round.void"):
            if kind == "round.result":
                self.results_checked += 1
            how = "settled twice" if kind == first_kind else "has both round.result and round.void"
            self.report(
                f"round {round_id!r} {how}: {first_kind} at seq {first_seq} and {kind} at seq {seq}"
                " (a round is settled exactly once)"
            )
        elif kind == "card":
            self.report(
                f"round {round_id!r}: card {event.get('code')} at seq {seq} comes after the round "
                f"was settled ({first_kind} at seq {first_seq})"
            )

    def _settle(self, round_id: str, seq: int, kind: str) -> None:
        self.open.pop(round_id, None)
        self.settled[round_id] = (seq, kind)

    # -- the result itself --------------------------------------------------------------
    def _game(self, variant: str) -> Game | str:
        if variant not in self._games:
            try:
                self._games[variant] = load_game(variant, self.variants_dir)
            except TableError as e:
                self._games[variant] = str(e)
        return self._games[variant]

    def _check_result(self, rnd: OpenRound, seq: int, event: dict[str, Any]) -> None:
        where = f"round {rnd.round_id!r}: round.result at seq {seq}"
        variant = rnd.variant if isinstance(rnd.variant, str) else self.default_variant
        game = self._game(variant)
        if isinstance(game, str):
            self.report(f"{where} cannot be checked: {game}")
            return
        hands = self._hands(game, rnd, where)
        if hands is None:
            return
        self._check_plan(game, rnd, where)
        try:
            computed = game.judge(hands).to_dict()
        except Exception as e:  # the rules core refusing these cards is itself the finding
            self.report(f"{where}: the rules core cannot judge the journaled cards: {e}")
            return
        journaled = {key: event.get(key) for key in ("hands", "outcome", "payouts")}
        diffs = differences(journaled, computed)
        for diff in diffs[:MAX_DIFFS_PER_RESULT]:
            self.report(f"{where} differs from the rules core ({variant}): {diff}")
        if len(diffs) > MAX_DIFFS_PER_RESULT:
            self.report(f"{where}: ... and {len(diffs) - MAX_DIFFS_PER_RESULT} more differences")

    def _hands(self, game: Game, rnd: OpenRound, where: str) -> dict[str, list[int]] | None:
        """{position: [cards by index]} from the card events; None if they cannot form hands."""
        slots: dict[str, dict[int, tuple[int, int]]] = {p: {} for p in game.positions}
        good = True
        for entry in rnd.cards:
            try:
                card = parse_card(entry.code)
            except TableError:
                self.report(
                    f"{where}: card event at seq {entry.seq} has unknown code {entry.code!r}"
                )
                good = False
                continue
            if entry.position not in slots:
                self.report(
                    f"{where}: card {entry.code} at seq {entry.seq} has position "
                    f"{entry.position!r}, not one of {', '.join(game.positions)}"
                )
                good = False
                continue
            if entry.index in slots[entry.position]:
                other = slots[entry.position][entry.index][0]
                self.report(
                    f"{where}: two cards at {entry.position}[{entry.index}] (seq {other} and "
                    f"seq {entry.seq})"
                )
                good = False
                continue
            slots[entry.position][entry.index] = (entry.seq, card)
        hands: dict[str, list[int]] = {}
        for position, by_index in slots.items():
            if sorted(by_index) != list(range(len(by_index))):
                self.report(
                    f"{where}: {position} has cards at indices {sorted(by_index)}, not 0.."
                    f"{len(by_index) - 1}"
                )
                good = False
            hands[position] = [by_index[i][1] for i in sorted(by_index)]
        counts = Counter(c for hand in hands.values() for c in hand)
        for card, n in sorted(counts.items()):
            if n > game.decks:
                self.report(
                    f"{where}: card {CODES[card]} appears {n} times; the shoe holds {game.decks} "
                    f"deck{'s' if game.decks > 1 else ''}"
                )
        return hands if good else None

    def _check_plan(self, game: Game, rnd: OpenRound, where: str) -> None:
        """The cards, in journal order, placed by the dealing plan, land where journaled."""
        deal = game.new_deal()
        for entry in rnd.cards:
            if deal.is_complete:
                self.report(
                    f"{where}: card {entry.code} at seq {entry.seq} comes after the deal was "
                    "complete"
                )
                return
            position, index = deal.place(parse_card(entry.code))
            if (position, index) != (entry.position, entry.index):
                self.report(
                    f"{where}: card {entry.code} at seq {entry.seq} is journaled at "
                    f"{entry.position}[{entry.index}] but the dealing plan puts it at "
                    f"{position}[{index}]"
                )
                return
        if not deal.is_complete:
            self.report(
                f"{where} but the deal is incomplete: {deal.dealt} cards, the next card would go "
                f"to {deal.next_position}"
            )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1
