"""``par_sheet(game)``: the exact PAR sheet of any variant, whatever its paytable."""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction

from table_controller.analysis.baccarat import analyse_baccarat
from table_controller.analysis.sheet import (
    DEFAULT_MIN_RTP,
    Enumerated,
    ParSheet,
    Progress,
    Tally,
    no_progress,
)
from table_controller.analysis.teen_patti import analyse_teen_patti
from table_controller.analysis.three_pictures import analyse_three_pictures
from table_controller.rules.game import Game

Analyser = Callable[[Game, Tally, Progress], Enumerated]

#: game id -> the enumeration that covers it
ANALYSERS: dict[str, Analyser] = {
    "baccarat": analyse_baccarat,
    "three-pictures": analyse_three_pictures,
    "three-face": analyse_three_pictures,
    "teen-patti-2020": analyse_teen_patti,
}


def par_sheet(
    game: Game, min_rtp: Fraction = DEFAULT_MIN_RTP, progress: Progress = no_progress
) -> ParSheet:
    """Exact probabilities, RTP and house edge of every bet of ``game``'s variant."""
    started = time.perf_counter()
    tally = Tally(game)
    enumerated = ANALYSERS[game.game_id](game, tally, progress)
    bets = tally.figures(min_rtp, enumerated.deals)
    return ParSheet(
        variant=game.variant.id,
        title=game.variant.title,
        method=enumerated.method,
        min_rtp=min_rtp,
        bets=bets,
        seconds=time.perf_counter() - started,
    )
