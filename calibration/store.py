"""A calibration folder: the table plane (``table.json``) and the deck's templates
(``templates/*.png``, ``templates.json``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from calibration.table import TablePlane
from calibration.templates import CardTemplates
from table_controller.errors import ConfigError


@dataclass(frozen=True)
class Calibration:
    """Everything the recogniser needs from one camera on one table."""

    table: TablePlane
    templates: CardTemplates
    path: Path | None = None


def load_calibration(cal_dir: str | Path) -> Calibration:
    """Load ``CAL_DIR/table.json`` and ``CAL_DIR/templates/``.

    Raises :class:`ConfigError` naming the folder and the missing part.
    """
    path = Path(cal_dir)
    if not path.is_dir():
        raise ConfigError(f"calibration folder {path} does not exist")
    table_file = path / "table.json"
    if not table_file.exists():
        raise ConfigError(f"{path} has no table.json: run `table-controller calibrate table`")
    return Calibration(TablePlane.load(table_file), CardTemplates.load(path), path)
