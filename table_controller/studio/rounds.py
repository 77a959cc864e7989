"""One round as the studio API tells it, assembled from a table's archived records. Pure.

A round's record gathers, from its journaled events in seq order: when it
started (and who started it, and the variant), when betting closed, every card
in deal order with its time, position, index and source (the shoe, the camera,
a supervisor), the burn cards, and how it ended: a result (the hands, the
game's outcome, every bet's payout) or a void (its reason). ``first_seq`` and
``last_seq`` with ``last_hash`` tie it to the table's journal: anyone holding
the journal can check that the rows between them are these, and chain.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import msgspec

from table_controller.event_types import (
    UNSET,
    BettingClosed,
    CardDealt,
    EventError,
    EvidenceRecorded,
    RoundResult,
    RoundStarted,
    RoundVoided,
    ShoeChanged,
    decode_event,
)
from table_controller.journal.store import JournalRecord

RoundStatus = Literal["resolved", "cancelled", "open"]


class RoundCard(msgspec.Struct, frozen=True, kw_only=True):
    """A card of a round, as dealt."""

    seq: int
    ts: str
    position: str
    index: int
    code: str
    source: str


class RoundPicture(msgspec.Struct, frozen=True, kw_only=True):
    """A picture set the camera kept for the round (docs/evidence.md): what it shows, and the
    SHA-256 of the card's picture and of the whole table (``GET /v1/tables/{t}/evidence/{sha256}``)."""

    seq: int
    of: str
    for_seq: int | None = None
    position: str | None = None
    index: int | None = None
    code: str | None = None
    card: str | None = None
    frame: str


class RoundRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A round, whole (see module doc)."""

    table: str
    round: str
    status: RoundStatus
    game: str
    variant: str | None = None
    dealer: str | None = None
    #: the n-th shoe of the table's journal (counted by its ``shoe`` ``new`` events), None before the first
    shoe: int | None = None
    started_by: str | None = None
    started_at: str | None = None
    betting_closed_at: str | None = None
    ended_at: str | None = None
    cards: list[RoundCard] = []
    burns: list[RoundCard] = []
    hands: dict[str, Any] | None = None
    outcome: dict[str, Any] | None = None
    payouts: dict[str, str] | None = None
    void_reason: str | None = None
    pictures: list[RoundPicture] = []
    first_seq: int = 0
    last_seq: int = 0
    last_hash: str = ""


class RoundSummary(msgspec.Struct, frozen=True, kw_only=True):
    """A round in a list: enough to pick it, and its ids."""

    table: str
    round: str
    status: RoundStatus
    dealer: str | None
    shoe: int | None
    started_at: str | None
    ended_at: str | None
    outcome: dict[str, Any] | None
    void_reason: str | None


class TableEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A table in ``GET /v1/tables``: where its archive ends, and its last results."""

    table: str
    last_seq: int
    last_hash: str
    last_results: list[RoundSummary]


class TablesReply(msgspec.Struct, frozen=True, kw_only=True):
    """``GET /v1/tables``."""

    tables: list[TableEntry]


class RoundsPage(msgspec.Struct, frozen=True, kw_only=True, rename={"since": "from", "until": "to"}):
    """``GET /v1/tables/{table}/rounds``: one page of a time window (``next_cursor`` null on the last)."""

    table: str
    since: str
    until: str
    rounds: list[RoundSummary]
    next_cursor: str | None


class ErrorReply(msgspec.Struct, frozen=True):
    """Every refusal: 400, 401, 404, 405."""

    error: str


def shoe_starts(records: Iterable[JournalRecord]) -> list[int]:
    """The seqs of a table's ``shoe`` ``new`` events, in seq order: the n-th starts shoe n."""
    out = []
    for rec in records:
        try:
            event = decode_event(rec.body)
        except EventError:
            continue
        if isinstance(event, ShoeChanged) and event.event == "new":
            out.append(rec.seq)
    return out


def assemble_round(table: str, round_id: str, records: Iterable[JournalRecord],
                   shoes: Sequence[int] = ()) -> RoundRecord | None:
    """The round's record from its rows (those whose ``round`` is ``round_id``, seq order), or
    None when there are none; ``shoes`` (:func:`shoe_starts` of the table) numbers its shoe.
    Rows that are not events are left out (the archive keeps only events, so there are none)."""
    fields: dict[str, Any] = {"cards": [], "burns": [], "pictures": []}
    status: RoundStatus = "open"
    game = ""
    first = last = 0
    last_hash = ""
    for rec in records:
        try:
            event = decode_event(rec.body)
        except EventError:
            continue
        first = first or rec.seq
        last, last_hash = rec.seq, rec.hash
        game = game or event.game
        match event:
            case RoundStarted(variant=variant, by=by, dealer=dealer):
                fields.update(variant=variant, started_at=event.ts, started_by=None if by is UNSET else by,
                              dealer=None if dealer is UNSET else dealer)
            case BettingClosed():
                fields["betting_closed_at"] = event.ts
            case CardDealt(position=position, index=index, code=code, source=source):
                card = RoundCard(seq=rec.seq, ts=event.ts, position=position, index=index, code=code,
                                 source=source)
                fields["burns" if position == "burn" else "cards"].append(card)
            case RoundResult(hands=hands, outcome=outcome, payouts=payouts):
                status = "resolved"
                fields.update(ended_at=event.ts, outcome=outcome, payouts=dict(payouts),
                              hands={k: msgspec.to_builtins(v) for k, v in hands.items()})
            case RoundVoided(reason=reason):
                status = "cancelled"
                fields.update(ended_at=event.ts, void_reason=reason)
            case EvidenceRecorded():
                fields["pictures"].append(RoundPicture(
                    seq=rec.seq, of=event.of, for_seq=event.for_seq, position=event.position, index=event.index,
                    code=event.code, card=event.card, frame=event.frame))
            case _:
                pass
    if not first:
        return None
    shoe = bisect.bisect_right(shoes, first) or None
    return RoundRecord(table=table, round=round_id, status=status, game=game, first_seq=first, last_seq=last,
                       last_hash=last_hash, shoe=shoe, **fields)


def summary(record: RoundRecord) -> RoundSummary:
    return RoundSummary(table=record.table, round=record.round, status=record.status, dealer=record.dealer,
                        shoe=record.shoe, started_at=record.started_at, ended_at=record.ended_at,
                        outcome=record.outcome, void_reason=record.void_reason)
