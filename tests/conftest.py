"""Shared fixtures."""

from __future__ import annotations

import pytest

from table_controller.rules import Game, load_game


@pytest.fixture
def game_of():
    """Build the rules object of a shipped variant by id."""

    def make(variant: str) -> Game:
        return load_game(variant)

    return make
