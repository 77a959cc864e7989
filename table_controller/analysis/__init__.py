"""Exact game analysis (PAR sheets) and simulation, from the variant files the table runs.

:func:`par_sheet` counts every deal of a variant's deck or shoe exactly and
settles each class of deals with the rules core's own ``judge``;
:func:`simulate` plays rounds through ``game.deal``/``deal.result()`` to
check the sheet against the live path. See ``docs/par-method.md``.
"""

from table_controller.analysis.exact import ANALYSERS, par_sheet
from table_controller.analysis.memo import clear_caches
from table_controller.analysis.sheet import BetFigures, Outcome, ParSheet
from table_controller.analysis.simulate import MeasuredRtp, simulate

__all__ = [
    "ANALYSERS",
    "BetFigures",
    "MeasuredRtp",
    "Outcome",
    "ParSheet",
    "clear_caches",
    "par_sheet",
    "simulate",
]
