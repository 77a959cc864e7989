"""A calibration folder: the table plane (``table.json``), the layout it was calibrated
for (``layout.toml``), what is printed on the empty felt (``printed.png``, and the empty
table itself seen from above, ``empty_table.png``), and the deck's
templates and model (``templates/*.png``, ``deck_model.npz``, ``templates.json``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from calibration.errors import CalibrationFileError
from calibration.layout import Layout, load_layout
from calibration.table import TablePlane
from calibration.templates import CardTemplates


@dataclass(frozen=True)
class Calibration:
    """Everything the recogniser needs from one camera on one table."""

    table: TablePlane
    templates: CardTemplates
    path: Path | None = None
    layout: Layout | None = None  # the layout file calibrated with, kept in the folder
    printed: np.ndarray | None = None  # top-down mask of the empty felt's print (CardFinder)
    empty_table: np.ndarray | None = None  # the empty table top-down, BGR (CardFinder)


#: Files of a calibration folder besides table.json and the templates.
LAYOUT_FILE = "layout.toml"
PRINTED_FILE = "printed.png"
EMPTY_TABLE_FILE = "empty_table.png"


def save_table_files(cal_dir: Path, layout_text: str, printed: np.ndarray | None,
                     empty_table: np.ndarray | None = None) -> None:
    """Keep the layout file, the printed-felt mask and the empty table beside ``table.json``."""
    cal_dir.mkdir(parents=True, exist_ok=True)
    (cal_dir / LAYOUT_FILE).write_text(layout_text, encoding="utf-8")
    if printed is not None:
        cv2.imwrite(str(cal_dir / PRINTED_FILE), printed)
    if empty_table is not None:
        cv2.imwrite(str(cal_dir / EMPTY_TABLE_FILE), empty_table)


def load_calibration(cal_dir: str | Path) -> Calibration:
    """Load ``CAL_DIR/table.json`` and ``CAL_DIR/templates/``.

    Raises :class:`CalibrationFileError` naming the folder and the missing part.
    """
    path = Path(cal_dir)
    if not path.is_dir():
        raise CalibrationFileError(f"calibration folder {path} does not exist")
    table_file = path / "table.json"
    if not table_file.exists():
        raise CalibrationFileError(f"{path} has no table.json: run `table-controller calibrate table`")
    layout = load_layout(path / LAYOUT_FILE) if (path / LAYOUT_FILE).exists() else None
    printed = cv2.imread(str(path / PRINTED_FILE), cv2.IMREAD_GRAYSCALE) if (path / PRINTED_FILE).exists() else None
    empty = cv2.imread(str(path / EMPTY_TABLE_FILE), cv2.IMREAD_COLOR) if (path / EMPTY_TABLE_FILE).exists() else None
    return Calibration(TablePlane.load(table_file), CardTemplates.load(path), path, layout, printed, empty)
