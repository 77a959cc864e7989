"""Reading rounds out of the archive for the studio: a table's rounds in a time window, and the
statistics report over them (see :mod:`table_controller.studio.statistics`)."""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any

from table_controller.archive.base import Archive
from table_controller.studio.rounds import RoundRecord, assemble_round, shoe_starts
from table_controller.studio.statistics import pauses_from, table_report

EVERYTHING = ("0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z")


def table_shoes(archive: Archive, table: str) -> list[int]:
    """The seqs that start each of the table's shoes (:func:`shoe_starts`)."""
    return shoe_starts(archive.typed_rows(table, ["shoe"]))


def read_round(archive: Archive, table: str, round_id: str, shoes: list[int] | None = None) -> RoundRecord | None:
    """One archived round, whole, its shoe numbered (``shoes``: :func:`table_shoes`, read when not given)."""
    rows = archive.round_rows(table, round_id)
    if not rows:
        return None
    return assemble_round(table, round_id, rows, table_shoes(archive, table) if shoes is None else shoes)


def read_rounds(archive: Archive, table: str, round_ids: list[str], shoes: list[int] | None = None) -> list[
        RoundRecord]:
    """Several archived rounds, whole, in one read of the archive (in the order given)."""
    rows = archive.rounds_rows(table, round_ids)
    shoes = table_shoes(archive, table) if shoes is None else shoes
    out = []
    for round_id in round_ids:
        rnd = assemble_round(table, round_id, rows.get(round_id, []), shoes)
        if rnd is not None:
            out.append(rnd)
    return out


def rounds_in_window(archive: Archive, table: str, since: str, until: str) -> list[RoundRecord]:
    """The table's rounds started in [since, until), oldest first."""
    out: list[RoundRecord] = []
    after = 0
    shoes = table_shoes(archive, table)
    while True:
        starts = archive.round_starts(table, since, until, after, 500)
        out += read_rounds(archive, table, [r for r, _, _ in starts], shoes)
        if len(starts) < 500:
            return out
        after = starts[-1][2]


@functools.cache
def _par_bets(variant: str) -> dict[str, Any] | None:
    """The variant's exact PAR figures per bet (a second or two the first time), or None when
    the variant is unknown here."""
    from table_controller.analysis.exact import par_sheet
    from table_controller.rules import load_game

    try:
        game = load_game(variant)
    except Exception:  # a studio's own variant this machine does not have: no PAR column
        return None
    bets: dict[str, Any] = par_sheet(game).to_dict()["bets"]
    return bets


def studio_report(archive: Archive, tables: list[str], since: str = EVERYTHING[0],
                  until: str = EVERYTHING[1]) -> dict[str, Any]:
    """Every table's report for rounds started in [since, until)."""
    reports = []
    for table in tables:
        rounds = rounds_in_window(archive, table, since, until)
        variants = Counter(r.variant for r in rounds if r.variant)
        variant = variants.most_common(1)[0][0] if variants else None
        # outcomes are compared only within one variant: rounds of another are left out
        same = [r for r in rounds if r.variant == variant]
        pauses = pauses_from(archive.typed_rows(table, ["table.state"], since, until))
        reports.append(table_report(table, variant, same, _par_bets(variant) if variant else None, pauses,
                                    archive.typed_rows(table, ["shoe"])))
    return {"from": since, "to": until, "tables": reports}
