"""Any decoded TOML table is either a valid variant or a VariantError: never a crash."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.errors import VariantError
from table_controller.rules import GAMES
from table_controller.rules.variant import Variant, parse_variant

#: Values a TOML decoder can produce (dates aside).
scalars = st.one_of(
    st.booleans(), st.integers(-20, 2000), st.floats(allow_nan=True), st.text(max_size=8),
    st.sampled_from(["0.95", "-1", "8", "NaN", "1e3", "abc", "", "6", "class", "points"]),
)
toml_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
keys = st.sampled_from([
    "decks", "boxes", "tie_basis", "win", "win_on_points", "pays", "player", "banker", "tie",
    "main", "pair_plus", "six_card_bonus", "a", "b", "win", "lose", "three_pictures", "6",
    "pair", "trail", "royal-flush", "straight", "x",
])
nearly_right = st.recursive(
    scalars,
    lambda inner: st.dictionaries(keys, inner, max_size=5),
    max_leaves=12,
)


@settings(max_examples=500, deadline=None)
@given(
    game=st.sampled_from(sorted(GAMES)),
    options=nearly_right | toml_values,
    bets=nearly_right | toml_values,
    extra=st.dictionaries(st.sampled_from(["title", "id", "colour"]), toml_values, max_size=2),
)
def test_parse_variant_gives_a_variant_or_a_variant_error(
    game: str, options: Any, bets: Any, extra: dict[str, Any]
) -> None:
    data = {"id": "fuzz", "game": game, "options": options, "bets": bets, **extra}
    cls = GAMES[game]
    try:
        variant = parse_variant(data, "fuzz.toml", cls.OPTIONS, cls.BETS)
    except VariantError as e:
        assert str(e).startswith("fuzz.toml")
    else:
        assert isinstance(variant, Variant)
        cls(variant)  # and the game can be built from it
