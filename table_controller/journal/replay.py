"""The one replayer and re-judger of a journal's rounds.

:class:`RoundReplayer` is fed a journal's typed events in seq order and gathers
them round by round: each round's ``round.start``, its card events (not ``burn``)
and its settlement. It answers each event with what it found: a round settled
(:class:`RoundSettled`), started again, settled again, a card after its
round's settlement, a card outside any round. :func:`rejudge` then rebuilds a
round's deal with the rules core: the cards, in journal order, placed by the
game's dealing plan, the hands as journaled judged by ``game.judge`` and
compared with the journaled result, difference by difference.

Both readers of a journal use it: ``journal verify`` (through
:mod:`table_controller.journal.round_check`) and the soak's independent checker
(:mod:`table_controller.soak.checker`). Each words its own findings. Pure: no
file, clock or thread; the callers read the rows.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import msgspec

from table_controller.errors import TableError
from table_controller.event_types import CardDealt, Event, RoundResult, RoundStarted, RoundVoided
from table_controller.rules import Game, load_game
from table_controller.rules.cards import CODES, Card, parse_card

Settlement: TypeAlias = RoundResult | RoundVoided


@dataclass(frozen=True)
class SeqCard:
    """A card event of a round, with the seq of its journal row."""

    seq: int
    card: CardDealt


@dataclass
class JournaledRound:
    """What the journal holds of one round, gathered in seq order."""

    round_id: str
    start: RoundStarted | None = None
    start_seq: int | None = None
    #: the round's card events, ``burn`` cards left out, in seq order
    cards: list[SeqCard] = field(default_factory=list)
    settlement: Settlement | None = None
    settled_seq: int | None = None


@dataclass(frozen=True)
class RoundSettled:
    """A round got its (first) ``round.result`` or ``round.void``."""

    round: JournaledRound
    settlement: Settlement
    seq: int


@dataclass(frozen=True)
class RoundStartedAgain:
    """A second ``round.start`` of a round id (round ids must be unique)."""

    round_id: str
    seq: int


@dataclass(frozen=True)
class SettledAgain:
    """A second settlement of a round: ``first`` at ``first_seq``, ``settlement`` at ``seq``."""

    round_id: str
    first: Settlement
    first_seq: int
    settlement: Settlement
    seq: int


@dataclass(frozen=True)
class CardAfterSettlement:
    """A card event of a round that was already settled (by ``settlement`` at ``settled_seq``)."""

    round_id: str
    card: SeqCard
    settlement: Settlement
    settled_seq: int


@dataclass(frozen=True)
class LooseCard:
    """A card event (not ``burn``) that belongs to no round."""

    card: SeqCard


Finding: TypeAlias = RoundSettled | RoundStartedAgain | SettledAgain | CardAfterSettlement | LooseCard


class RoundReplayer:
    """Gathers a journal's events round by round; see the module docstring.

    A round is opened by any event that names it (a card may come without a
    ``round.start``: :attr:`JournaledRound.start` is then None) and closed by its
    first settlement.
    """

    def __init__(self) -> None:
        self.open: dict[str, JournaledRound] = {}
        self.settled: dict[str, JournaledRound] = {}
        self.last_round: str | None = None

    @property
    def rounds(self) -> int:
        """How many round ids the events named so far."""
        return len(self.open) + len(self.settled)

    def add(self, seq: int, event: Event) -> list[Finding]:
        """Take the next event (``seq``: its row's seq); returns what it shows."""
        round_id = event.round
        if round_id is None:
            if isinstance(event, CardDealt) and event.position != "burn":
                return [LooseCard(SeqCard(seq, event))]
            return []
        done = self.settled.get(round_id)
        if done is not None:
            return self._after_settlement(done, seq, event)
        rnd = self.open.get(round_id)
        if rnd is None:
            rnd = self.open[round_id] = JournaledRound(round_id)
            self.last_round = round_id
        found: list[Finding] = []
        match event:
            case RoundStarted():
                if rnd.start is not None:
                    found.append(RoundStartedAgain(round_id, seq))
                rnd.start, rnd.start_seq = event, seq
                self.last_round = round_id
            case CardDealt(position="burn"):
                pass
            case CardDealt():
                rnd.cards.append(SeqCard(seq, event))
            case RoundResult() | RoundVoided():
                rnd.settlement, rnd.settled_seq = event, seq
                del self.open[round_id]
                self.settled[round_id] = rnd
                found.append(RoundSettled(rnd, event, seq))
        return found

    def unsettled(self) -> list[JournaledRound]:
        """The rounds without a settlement so far, in the order they were first named."""
        return list(self.open.values())

    def _after_settlement(self, rnd: JournaledRound, seq: int, event: Event) -> list[Finding]:
        assert rnd.settlement is not None and rnd.settled_seq is not None
        match event:
            case RoundStarted():
                return [RoundStartedAgain(rnd.round_id, seq)]
            case RoundResult() | RoundVoided():
                return [SettledAgain(rnd.round_id, rnd.settlement, rnd.settled_seq, event, seq)]
            case CardDealt(position="burn"):
                return []
            case CardDealt():
                return [CardAfterSettlement(rnd.round_id, SeqCard(seq, event), rnd.settlement,
                                            rnd.settled_seq)]
        return []


# -- re-judging ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Misplaced:
    """A card the dealing plan puts at ``planned`` (position, index), not where it is journaled."""

    card: SeqCard
    planned: tuple[str, int]


@dataclass(frozen=True)
class AfterComplete:
    """A card journaled after the deal, by the dealing plan, was complete."""

    card: SeqCard


PlanProblem: TypeAlias = Misplaced | AfterComplete


@dataclass(frozen=True)
class Rejudgement:
    """A round rebuilt and judged by the rules core, against what the journal says."""

    #: cards the plan puts elsewhere, or that came after the deal was complete, in journal order
    plan: tuple[PlanProblem, ...]
    #: how many cards the plan placed, and where the next one would go (None: complete)
    dealt: int
    next_position: str | None
    #: why the journaled cards do not form hands (or hold a card more often than the shoe)
    hand_problems: tuple[str, ...] = ()
    #: ``{position: [cards by index]}`` as journaled; None when they do not form hands
    hands: dict[str, list[Card]] | None = None
    #: the rules core refused to judge the hands: its message
    refused: str | None = None
    #: the journaled and the computed ``hands``/``outcome``/``payouts`` (with a result)
    journaled: dict[str, Any] | None = None
    computed: dict[str, Any] | None = None
    differences: tuple[str, ...] = ()

    @property
    def is_complete(self) -> bool:
        """The plan's deal of the journaled cards is a complete round."""
        return self.next_position is None


def rejudge(game: Game, cards: Sequence[SeqCard], result: RoundResult | None = None) -> Rejudgement:
    """Rebuild a round's deal from its journaled cards and, given its result, re-judge it.

    The cards, in journal order, are placed by ``game.new_deal()`` (the dealing
    plan); every card it puts elsewhere, or that comes after the deal is complete,
    is a :data:`PlanProblem`. With ``result``: the hands as journaled are judged by
    ``game.judge`` and the journaled ``hands``/``outcome``/``payouts`` compared
    with it. Never raises for what the journal holds: that is the finding.
    """
    plan, dealt, next_position = _follow_plan(game, cards)
    if result is None:
        return Rejudgement(plan, dealt, next_position)
    hand_problems, hands = _hands(game, cards)
    if hands is None:
        return Rejudgement(plan, dealt, next_position, hand_problems)
    journaled = {
        "hands": msgspec.to_builtins(result.hands), "outcome": result.outcome,
        "payouts": dict(result.payouts),
    }
    try:
        computed = _normal(game.judge(hands).to_dict())
    except Exception as e:  # the rules core refusing these cards is itself the finding
        return Rejudgement(plan, dealt, next_position, hand_problems, hands, refused=str(e),
                           journaled=journaled)
    return Rejudgement(
        plan, dealt, next_position, hand_problems, hands, journaled=journaled, computed=computed,
        differences=tuple(differences(journaled, computed)),
    )


def _follow_plan(game: Game, cards: Sequence[SeqCard]) -> tuple[tuple[PlanProblem, ...], int, str | None]:
    deal = game.new_deal()
    problems: list[PlanProblem] = []
    for entry in cards:
        if deal.is_complete:
            problems.append(AfterComplete(entry))
            continue
        try:
            value = parse_card(entry.card.code)
        except TableError:
            continue  # not a card at all: the hands say so (a decoded event's code always is one)
        planned = deal.place(value)
        if planned != (entry.card.position, entry.card.index):
            problems.append(Misplaced(entry, planned))
    return tuple(problems), deal.dealt, deal.next_position


def _hands(game: Game, cards: Sequence[SeqCard]) -> tuple[tuple[str, ...], dict[str, list[Card]] | None]:
    """{position: [cards by index]} from the card events; None if they cannot form hands."""
    problems: list[str] = []
    slots: dict[str, dict[int, tuple[int, Card]]] = {p: {} for p in game.positions}
    good = True
    for entry in cards:
        seq, card = entry.seq, entry.card
        try:
            value = parse_card(card.code)
        except TableError:
            problems.append(f"card event at seq {seq} has unknown code {card.code!r}")
            good = False
            continue
        if card.position not in slots:
            problems.append(
                f"card {card.code} at seq {seq} has position {card.position!r}, not one of "
                f"{', '.join(game.positions)}"
            )
            good = False
            continue
        taken = slots[card.position].get(card.index)
        if taken is not None:
            problems.append(
                f"two cards at {card.position}[{card.index}] (seq {taken[0]} and seq {seq})"
            )
            good = False
            continue
        slots[card.position][card.index] = (seq, value)
    hands: dict[str, list[Card]] = {}
    for position, by_index in slots.items():
        if sorted(by_index) != list(range(len(by_index))):
            problems.append(
                f"{position} has cards at indices {sorted(by_index)}, not 0..{len(by_index) - 1}"
            )
            good = False
        hands[position] = [by_index[i][1] for i in sorted(by_index)]
    counts = Counter(c for hand in hands.values() for c in hand)
    for value, n in sorted(counts.items()):
        if n > game.decks:
            problems.append(
                f"card {CODES[value]} appears {n} times; the shoe holds {game.decks} "
                f"deck{'s' if game.decks > 1 else ''}"
            )
    return tuple(problems), hands if good else None


def differences(journaled: Any, computed: Any, path: str = "") -> list[str]:
    """Human-readable differences between two JSON values, leaf by leaf."""
    if isinstance(journaled, dict) and isinstance(computed, dict):
        out: list[str] = []
        for key in list(computed) + [k for k in journaled if k not in computed]:
            where = f"{path}.{key}" if path else str(key)
            if key not in journaled:
                out.append(f"{where} is missing in the journal (rules core: {_show(computed[key])})")
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
    return json.dumps(value, separators=(",", ":"), default=str)


def _normal(value: Any) -> Any:
    """The value as JSON would carry it (tuples become lists, anything else its text)."""
    return json.loads(json.dumps(value, default=str))


class GameShelf:
    """The games of the variants a journal names, each loaded once; a variant that does not
    load is kept as its error text."""

    def __init__(self, variants_dir: Path | None = None) -> None:
        self.variants_dir = variants_dir
        self._games: dict[str, Game | str] = {}

    def get(self, variant: str) -> Game | str:
        """The game of ``variant``, or why it cannot be loaded."""
        if variant not in self._games:
            try:
                self._games[variant] = load_game(variant, self.variants_dir)
            except TableError as e:
                self._games[variant] = str(e)
        return self._games[variant]
