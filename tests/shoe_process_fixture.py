"""A simulated shoe in a process of its own on a pseudo-terminal, for tests that start a real
controller (``table-controller run``) against it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

from table_controller.soak.shoe_process import ShoeProcess


def simulated_shoe(tmp_path: Path, decks: int = 8) -> Iterator[ShoeProcess]:
    """Start it (its link at ``tmp_path/T01.shoe``), yield it, stop it."""
    link = tmp_path / "T01.shoe"
    with open(tmp_path / "shoe.log", "a", encoding="utf-8") as log:
        shoe = ShoeProcess(
            [sys.executable, "-m", "table_controller", "shoe", "sim", "--link", "pty",
             "--device-link", str(link), "--decks", str(decks)],
            link, log,
        )
        yield shoe
        shoe.stop()
