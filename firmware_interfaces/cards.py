"""The 52 card codes as the devices speak them: rank ``A23456789TJQK`` then suit ``SHDC``.

The drivers' own copy, so that a camera or shoe driver needs nothing from the
controller; ``table_controller.rules.cards`` keeps the same codes in the same
order (a test holds the two together) and turns them into the rules' cards.
"""

from __future__ import annotations

from firmware_interfaces.errors import UnknownCardCode

RANKS = "A23456789TJQK"
SUITS = "SHDC"

#: Every card code, ranks in order and, within a rank, suits in order (``AS AH AD AC 2S ...``).
CODES: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS)

_CANONICAL: dict[str, str] = {code: code for code in CODES} | {"10" + s: "T" + s for s in SUITS}


def parse_code(code: str) -> str:
    """The canonical code (``"TS"``) of a code such as ``"TS"``, ``"10s"`` or ``" ah "``.

    Raises :class:`~firmware_interfaces.errors.UnknownCardCode` for anything else,
    a value that is not a string included.
    """
    if not isinstance(code, str):
        raise UnknownCardCode(f"card code must be a string, got {code!r}")
    canonical = _CANONICAL.get(code.strip().upper())
    if canonical is None:
        raise UnknownCardCode(
            f"unknown card code {code!r}: expected rank A23456789TJQK (or 10) + suit SHDC, e.g. 'TS'"
        )
    return canonical
