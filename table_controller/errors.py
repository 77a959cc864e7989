"""One error tree for the whole controller.

Every error the controller raises on purpose is a :class:`TableError`; each
leaf also inherits the built-in it most resembles, so callers that only know
Python's own exceptions still catch it (``except ValueError`` catches a bad
card code).
"""

from __future__ import annotations


class TableError(Exception):
    """Root of every error raised by the table controller."""


class ConfigError(TableError, ValueError):
    """A configuration or data file is malformed; the message names the file and key."""


class VariantError(ConfigError):
    """A game-variant file is malformed or names an unknown game, bet or option."""


class CardError(TableError, ValueError):
    """A card code or a card's use is not acceptable."""


class UnknownCard(CardError):
    """A card code that is not a card of a standard 52-card deck."""


class DuplicateCard(CardError):
    """A card seen more often than the shoe holds it (twice in a single-deck round)."""


class DealError(TableError, ValueError):
    """A card cannot be placed: the round is complete, or cards are missing."""


class RoundComplete(DealError):
    """A card arrived after the rules said the round needs no more cards."""


class NotEnoughCards(DealError):
    """The round needs more cards than were given."""
