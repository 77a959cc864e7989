"""Live template capture: the calibration deck is drawn through the shoe one card at a
time under the camera, and the shoe names each picture (no hand labelling).

Feed :meth:`TemplateCapture.add` the shoe's code and a camera frame taken once
the card lies still in view; when all 52 are in, :meth:`templates` builds the
deck's :class:`CardTemplates`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from calibration.errors import CaptureError as CaptureError  # where it was first defined
from calibration.layout import Layout
from calibration.table import TablePlane
from calibration.templates import CardTemplates, warp_card
from firmware_interfaces.cards import CODES, parse_code
from firmware_interfaces.errors import UnknownCardCode


class TemplateCapture:
    """Collects one upright picture per card code from live frames."""

    def __init__(self, plane: TablePlane, layout: Layout,
                 progress: Callable[[int, int, str], None] | None = None):
        from firmware_interfaces.camera.finder import CALIBRATION_PX_PER_MM, CardFinder

        # the template is cut along the finder's outline: the finest view, not the live one's
        self.finder = CardFinder(plane, layout, px_per_mm=CALIBRATION_PX_PER_MM)
        self.faces: dict[str, np.ndarray] = {}
        self.progress = progress

    @property
    def missing(self) -> list[str]:
        return [c for c in CODES if c not in self.faces]

    def add(self, code: str, frame: np.ndarray) -> None:
        """Store the one card in view of ``frame`` as card ``code`` (as the shoe read it).

        Raises :class:`CaptureError` when the frame shows no card or more than one,
        and :class:`~firmware_interfaces.errors.UnknownCardCode` for a bad code.
        """
        try:
            code = parse_code(code)
        except UnknownCardCode as e:
            raise UnknownCardCode(f"shoe reported {code!r}: {e}") from None
        quads = self.finder.find_cards(frame)
        if len(quads) != 1:
            raise CaptureError(
                f"card {code}: expected exactly one card on the table, found {len(quads)}; "
                "clear the layout and lay the card flat in view"
            )
        # upright or upside down does not matter: the reader tries both turns of every template
        self.faces[code] = warp_card(frame, quads[0])
        if self.progress:
            self.progress(len(self.faces), len(CODES), code)

    def templates(self) -> CardTemplates:
        if self.missing:
            raise CaptureError(f"capture incomplete: {len(self.missing)} card(s) missing: {' '.join(self.missing)}")
        return CardTemplates(self.faces)
