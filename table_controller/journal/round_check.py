"""``journal verify``'s round checks: every result exactly as the rules core computes it, once.

Fed the typed events in seq order, :class:`RoundAudit` follows the rounds with the
:class:`~table_controller.journal.replay.RoundReplayer` and, at each
``round.result``, re-judges the round with :func:`~table_controller.journal.replay.rejudge`:
the journaled cards must form hands, land where the game's dealing plan puts
them and make a complete deal, and ``game.judge(hands)`` must give the
journaled hands, outcome and payouts. It also checks that a round starts once
and is settled (result or void) exactly once. This module only words the findings.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from table_controller.event_types import Event, RoundResult
from table_controller.journal.replay import (
    AfterComplete,
    CardAfterSettlement,
    GameShelf,
    JournaledRound,
    LooseCard,
    Misplaced,
    RoundReplayer,
    RoundSettled,
    RoundStartedAgain,
    SettledAgain,
    rejudge,
)

#: At most this many differences are listed for one result.
MAX_DIFFS_PER_RESULT = 5


class RoundAudit:
    """Checks rounds as their events stream past; problems go to ``report``."""

    def __init__(
        self, *, default_variant: str, variants_dir: Path | None, report: Callable[[str], None]
    ) -> None:
        self.default_variant = default_variant
        self.report = report
        self.results_checked = 0
        self._games = GameShelf(variants_dir)
        self._replayer = RoundReplayer()

    @property
    def rounds(self) -> int:
        return self._replayer.rounds

    def add(self, seq: int, event: Event) -> None:
        """Take the next event in seq order (``seq``: its row's)."""
        for found in self._replayer.add(seq, event):
            match found:
                case RoundStartedAgain(round_id=round_id, seq=again):
                    self.report(f"round {round_id!r} started again at seq {again}: round ids must be unique")
                case RoundSettled(round=rnd, settlement=RoundResult() as result, seq=at):
                    self.results_checked += 1
                    self._check_result(rnd, at, result)
                case SettledAgain(round_id=round_id, first=first, first_seq=first_seq, settlement=second):
                    if isinstance(second, RoundResult):
                        self.results_checked += 1
                    how = "settled twice" if isinstance(second, type(first)) else "has both round.result and round.void"
                    self.report(
                        f"round {round_id!r} {how}: {first.type} at seq {first_seq} and {second.type} at seq "
                        f"{found.seq} (a round is settled exactly once)"
                    )
                case CardAfterSettlement(round_id=round_id, card=entry, settlement=first, settled_seq=at):
                    self.report(
                        f"round {round_id!r}: card {entry.card.code} at seq {entry.seq} comes after the round "
                        f"was settled ({first.type} at seq {at})"
                    )
                case RoundSettled() | LooseCard():
                    pass  # a void settles without a result; a card outside any round is not a deal's

    def finish(self) -> None:
        """Report rounds left unsettled, except the last one (it may still be in progress)."""
        for rnd in self._replayer.unsettled():
            if rnd.round_id == self._replayer.last_round:
                continue
            since = f"started at seq {rnd.start_seq}" if rnd.start_seq else "no round.start"
            self.report(
                f"round {rnd.round_id!r} ({since}) was never settled: no round.result or round.void, "
                "yet later rounds were played"
            )

    def _check_result(self, rnd: JournaledRound, seq: int, result: RoundResult) -> None:
        where = f"round {rnd.round_id!r}: round.result at seq {seq}"
        variant = rnd.start.variant if rnd.start is not None else self.default_variant
        game = self._games.get(variant)
        if isinstance(game, str):
            self.report(f"{where} cannot be checked: {game}")
            return
        found = rejudge(game, rnd.cards, result)
        for problem in found.hand_problems:
            self.report(f"{where}: {problem}")
        if found.hands is None:
            return
        match found.plan:
            case (AfterComplete(card=entry), *_):
                self.report(f"{where}: card {entry.card.code} at seq {entry.seq} comes after the deal was complete")
            case (Misplaced(card=entry, planned=(position, index)), *_):
                self.report(
                    f"{where}: card {entry.card.code} at seq {entry.seq} is journaled at "
                    f"{entry.card.position}[{entry.card.index}] but the dealing plan puts it at "
                    f"{position}[{index}]"
                )
            case () if not found.is_complete:
                self.report(
                    f"{where} but the deal is incomplete: {found.dealt} cards, the next card would go "
                    f"to {found.next_position}"
                )
        if found.refused is not None:
            self.report(f"{where}: the rules core cannot judge the journaled cards: {found.refused}")
            return
        for diff in found.differences[:MAX_DIFFS_PER_RESULT]:
            self.report(f"{where} differs from the rules core ({variant}): {diff}")
        if len(found.differences) > MAX_DIFFS_PER_RESULT:
            self.report(f"{where}: ... and {len(found.differences) - MAX_DIFFS_PER_RESULT} more differences")
