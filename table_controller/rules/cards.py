"""Cards, decks and shoes.

A card is a small ``int`` 0..51: ``rank_index * 4 + suit_index`` with ranks
``A23456789TJQK`` and suits ``SHDC``. Ints keep the hot path (judging tens of
thousands of rounds a second, exact analysis over millions of hands) free of
object overhead; :func:`card_code` and :func:`parse_card` convert at the edges.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from table_controller.errors import UnknownCard

RANKS = "A23456789TJQK"
SUITS = "SHDC"
DECK_SIZE = 52

Card = int

CODES: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS)
_BY_CODE: dict[str, Card] = {code: i for i, code in enumerate(CODES)}
for _s in SUITS:
    _BY_CODE["10" + _s] = _BY_CODE["T" + _s]

#: Baccarat-style point value of each card (A=1, 2..9, T/J/Q/K=0).
POINTS: tuple[int, ...] = tuple(min(i // 4 + 1, 10) % 10 for i in range(DECK_SIZE))
#: True for J, Q, K ("pictures"); a ten is not a picture.
IS_PICTURE: tuple[bool, ...] = tuple(i // 4 >= 10 for i in range(DECK_SIZE))


def parse_card(code: str) -> Card:
    """Return the card for a code such as ``"TS"``, ``"10s"`` or ``"AH"``.

    Raises :class:`~table_controller.errors.UnknownCard` for anything else.
    """
    if not isinstance(code, str):
        raise UnknownCard(f"card code must be a string, got {code!r}")
    card = _BY_CODE.get(code.strip().upper())
    if card is None:
        raise UnknownCard(
            f"unknown card code {code!r}: expected rank A23456789TJQK (or 10) + suit SHDC, e.g. 'TS'"
        )
    return card


def parse_cards(codes: Iterable[str]) -> list[Card]:
    """Parse several card codes; see :func:`parse_card`."""
    return [parse_card(c) for c in codes]


def card_code(card: Card) -> str:
    """The canonical two-character code of a card (``"TS"``)."""
    return CODES[card]


def rank_index(card: Card) -> int:
    """0 for an ace up to 12 for a king."""
    return card >> 2


def suit_index(card: Card) -> int:
    """0..3 for S, H, D, C."""
    return card & 3


def new_deck() -> list[Card]:
    """One ordered 52-card deck."""
    return list(range(DECK_SIZE))


def new_shoe(decks: int) -> list[Card]:
    """``decks`` ordered decks, one after another."""
    if not 1 <= decks <= 8:
        raise ValueError(f"a shoe holds 1..8 decks, not {decks}")
    return list(range(DECK_SIZE)) * decks


def shuffled_shoe(decks: int, rng: random.Random) -> list[Card]:
    """A shuffled shoe of ``decks`` decks; the caller owns (and seeds) the generator."""
    shoe = new_shoe(decks)
    rng.shuffle(shoe)
    return shoe


def codes(cards: Sequence[Card]) -> list[str]:
    """Card codes of a sequence of cards."""
    return [CODES[c] for c in cards]
