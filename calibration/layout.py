"""Table layouts: where each card goes, in table millimetres.

A layout file (TOML) describes one game's printed layout as seen from above:
the table rectangle, the four ArUco markers at its corners, the card size and
one rectangle per card *slot*. Slot names follow the game's positions:

* ``banker2`` is position ``banker``, card index 1 (slot numbers are 1-based,
  event indexes 0-based);
* when the position itself ends in a digit (``box2``, ``player1``) a dot
  separates the card number: ``box2.3`` is position ``box2``, index 2;
* a name without a number (``first``) is that position's only card, index 0.

:func:`split_slot` and :func:`slot_name` convert. Layouts for the four games
ship in ``calibration/layouts/``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from calibration.errors import LayoutError

LAYOUTS_DIR = Path(__file__).with_name("layouts")

_SLOT_RE = re.compile(r"^(?P<pos>[a-z][a-z_-]*?)(?P<num>[1-9][0-9]*)?$")
_DOTTED_RE = re.compile(r"^(?P<pos>[a-z][a-z0-9_-]*)\.(?P<num>[1-9][0-9]*)$")


def split_slot(slot: str) -> tuple[str, int]:
    """``"banker2" -> ("banker", 1)``, ``"box2.3" -> ("box2", 2)``, ``"first" -> ("first", 0)``.

    Raises :class:`LayoutError` for a name that is not a slot name.
    """
    m = _DOTTED_RE.match(slot)
    if m is None:
        m = _SLOT_RE.match(slot)
    if m is None:
        raise LayoutError(f"bad slot name {slot!r}: expected e.g. 'banker2', 'box2.3' or 'first'")
    num = m.group("num")
    return m.group("pos"), (int(num) - 1 if num else 0)


def slot_name(position: str, index: int) -> str:
    """Inverse of :func:`split_slot`: ``("banker", 1) -> "banker2"``, ``("box2", 2) -> "box2.3"``."""
    if index < 0:
        raise ValueError(f"card index must be >= 0, not {index}")
    sep = "." if position[-1:].isdigit() else ""
    return f"{position}{sep}{index + 1}"


@dataclass(frozen=True)
class Slot:
    """One card place on the layout: a rectangle in table millimetres (x, y = top-left)."""

    name: str
    x: float
    y: float
    w: float
    h: float

    @property
    def position(self) -> str:
        return split_slot(self.name)[0]

    @property
    def index(self) -> int:
        return split_slot(self.name)[1]

    @property
    def centre(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y + self.h / 2)

    def contains(self, x: float, y: float) -> bool:
        return self.x <= x <= self.x + self.w and self.y <= y <= self.y + self.h


@dataclass(frozen=True)
class Markers:
    """The four ArUco markers at the layout's corners: ids and centres in table mm (none at
    all for a felt calibrated from four clicked points)."""

    dictionary: str
    size_mm: float
    ids: tuple[int, ...]
    centres_mm: tuple[tuple[float, float], ...]

    def corners_mm(self, i: int) -> list[tuple[float, float]]:
        """Corners of marker ``i`` (0..3) in ArUco order: TL, TR, BR, BL."""
        cx, cy = self.centres_mm[i]
        s = self.size_mm / 2
        return [(cx - s, cy - s), (cx + s, cy - s), (cx + s, cy + s), (cx - s, cy + s)]


@dataclass(frozen=True)
class Layout:
    """A game's table layout: table size, markers, card size and slots, all in mm."""

    name: str
    game: str
    width_mm: float
    height_mm: float
    card_mm: tuple[float, float]
    markers: Markers
    slots: tuple[Slot, ...]

    def slot(self, name: str) -> Slot:
        for s in self.slots:
            if s.name == name:
                return s
        raise LayoutError(f"layout {self.name} has no slot {name!r}")

    def slot_at(self, x: float, y: float) -> Slot | None:
        """The slot whose rectangle holds table point (x, y) mm, or None."""
        for s in self.slots:
            if s.contains(x, y):
                return s
        return None

    @property
    def outline_mm(self) -> list[tuple[float, float]]:
        w, h = self.width_mm, self.height_mm
        return [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)]


def _layout_path(path_or_name: str | Path) -> Path:
    path = Path(path_or_name)
    if not path.suffix and not path.exists():
        path = LAYOUTS_DIR / f"{path_or_name}.toml"
        if not path.exists():
            shipped = ", ".join(sorted(p.stem for p in LAYOUTS_DIR.glob("*.toml")))
            raise LayoutError(f"unknown layout {path_or_name!r}: shipped layouts are {shipped}")
    return path


def layout_source(path_or_name: str | Path) -> str:
    """The TOML text of a layout file or shipped layout (kept in a calibration folder)."""
    path = _layout_path(path_or_name)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise LayoutError(f"cannot read layout file {path}: {e.strerror}") from e


def load_layout(path_or_name: str | Path) -> Layout:
    """Load a layout from a TOML file, or a shipped one by game name (``baccarat``,
    ``three-pictures``, ``three-face``, ``teen-patti-2020``).

    Raises :class:`LayoutError` naming the file and key when it is malformed.
    """
    path = _layout_path(path_or_name)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise LayoutError(f"cannot read layout file {path}: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise LayoutError(f"layout file {path}: {e}") from e
    return parse_layout(data, str(path))


def parse_layout(data: dict, where: str = "layout") -> Layout:  # type: ignore[type-arg]
    """Build a :class:`Layout` from the decoded TOML; see :func:`load_layout`."""

    def need(table: dict, key: str, ctx: str):  # type: ignore[no-untyped-def,type-arg]
        if key not in table:
            raise LayoutError(f"{where}: missing key {ctx}{key}")
        return table[key]

    def pair(value: object, key: str) -> tuple[float, float]:
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, (int, float)) for v in value)
        ):
            raise LayoutError(f"{where}: {key} must be [x, y] numbers, got {value!r}")
        return (float(value[0]), float(value[1]))

    table = pair(need(data, "table_mm", ""), "table_mm")
    card = pair(data.get("card_mm", [63, 88]), "card_mm")
    m = data.get("markers")
    if m is None:  # a felt without markers: calibrated from four clicked points
        markers = Markers(dictionary="DICT_4X4_50", size_mm=0.0, ids=(), centres_mm=())
    else:
        ids = need(m, "ids", "markers.")
        centres = need(m, "centres_mm", "markers.")
        if not (isinstance(ids, list) and len(ids) == 4 and all(isinstance(i, int) for i in ids)):
            raise LayoutError(f"{where}: markers.ids must be four integers, got {ids!r}")
        if not (isinstance(centres, list) and len(centres) == 4):
            raise LayoutError(f"{where}: markers.centres_mm must be four [x, y] points")
        markers = Markers(
            dictionary=str(m.get("dictionary", "DICT_4X4_50")),
            size_mm=float(m.get("size_mm", 50)),
            ids=(ids[0], ids[1], ids[2], ids[3]),
            centres_mm=tuple(pair(c, f"markers.centres_mm[{i}]") for i, c in enumerate(centres)),
        )
    slots_raw = need(data, "slots", "")
    slots = []
    for name, rect in slots_raw.items():
        split_slot(name)  # validates the name
        if not (isinstance(rect, list) and len(rect) == 4 and all(isinstance(v, (int, float)) for v in rect)):
            raise LayoutError(f"{where}: slots.{name} must be [x, y, w, h] in mm, got {rect!r}")
        x, y, w, h = (float(v) for v in rect)
        if w <= 0 or h <= 0 or x < 0 or y < 0 or x + w > table[0] or y + h > table[1]:
            raise LayoutError(f"{where}: slots.{name} {rect!r} is not inside the {table[0]}x{table[1]} mm table")
        slots.append(Slot(name, x, y, w, h))
    if not slots:
        raise LayoutError(f"{where}: no slots")
    return Layout(
        name=str(data.get("name", Path(where).stem)),
        game=str(data.get("game", data.get("name", ""))),
        width_mm=table[0],
        height_mm=table[1],
        card_mm=card,
        markers=markers,
        slots=tuple(slots),
    )
