"""The pure rules core: cards, games, dealing plans, judgement and settlement.

Nothing in this package does I/O beyond reading variant files on request,
reads a clock or starts a thread.
"""

from table_controller.rules.cards import Card, card_code, parse_card, parse_cards
from table_controller.rules.game import Deal, Game, Hand, RoundResult, money_text
from table_controller.rules.registry import GAMES, load_game, load_variant, make_game

__all__ = [
    "GAMES", "Card", "Deal", "Game", "Hand", "RoundResult", "card_code", "load_game",
    "load_variant", "make_game", "money_text", "parse_card", "parse_cards",
]
