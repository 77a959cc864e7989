"""The studio soak: many simulated tables under faults and kills, then an independent check.

``table-controller soak`` (see ``docs/soak.md``) runs N real controller
processes, each with its simulated shoe in a separate process on a
pseudo-terminal, a studio proxy, subscribers and remote dealers; it injects
faults, kills controllers with SIGKILL and restarts them, and finally checks
every journal and every subscriber's stream against what the shoes really
dealt (:mod:`table_controller.soak.checker`).
"""

from table_controller.soak.options import FAULT_KINDS, SoakOptions, parse_faults
from table_controller.soak.runner import SoakReport, run_soak

__all__ = ["FAULT_KINDS", "SoakOptions", "SoakReport", "parse_faults", "run_soak"]
