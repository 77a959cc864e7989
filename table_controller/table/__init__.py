"""The table's pure state machine: rounds, dealing enforcement, shoe procedure, deck audit."""

from table_controller.table.inputs import *  # noqa: F403
from table_controller.table.machine import IllegalInput, StepOutcome, TableMachine

__all__ = ["IllegalInput", "StepOutcome", "TableMachine"]
