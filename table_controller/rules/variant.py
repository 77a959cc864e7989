"""Game variants: the data file that says which bets a table offers and what they pay.

A variant is a TOML file::

    id = "baccarat-no-commission"
    game = "baccarat"
    title = "Punto Banco, no commission"

    [options]
    decks = 8

    [bets.banker]
    win = "1"                         # net win per 1 unit staked
    win_on_points = { 6 = "0.5" }     # ... except when winning with 6 points

    [bets.player_pair]
    win = "11"

Money is written as a string (``"0.5"``) or an integer; a TOML float is
refused because it is binary floating point. Each game declares which options
and bets it understands (:class:`OptionSpec`, :class:`BetSpec`); anything else
is an error naming the file and the key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from table_controller.errors import VariantError


@dataclass(frozen=True)
class OptionSpec:
    """One option a game understands: an int in a range, or one of some choices."""

    default: Any
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] | None = None

    def check(self, value: Any) -> str | None:
        """Return what is wrong with ``value``, or None when it is acceptable."""
        if self.choices is not None:
            if value not in self.choices:
                return f"must be one of {', '.join(map(repr, self.choices))}, not {value!r}"
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be an integer, not {value!r}"
        if self.minimum is not None and value < self.minimum:
            return f"must be at least {self.minimum}, not {value}"
        if self.maximum is not None and value > self.maximum:
            return f"must be at most {self.maximum}, not {value}"
        return None


@dataclass(frozen=True)
class BetSpec:
    """What a bet kind may say in a variant file.

    ``pays`` bets pay by the hand's category (pair plus, six-card bonus): the
    allowed keys are ``pays_keys``. Other bets have one ``win`` figure and, where
    ``points_exceptions`` is true, ``win_on_points`` exceptions by the winning
    hand's points.
    """

    per_position: bool = False
    points_exceptions: bool = False
    pays_keys: tuple[str, ...] | None = None
    required: bool = False


@dataclass(frozen=True)
class BetTerms:
    """What one bet pays, read from a variant file (net win per 1 unit)."""

    win: Decimal | None = None
    win_on_points: dict[int, Decimal] = field(default_factory=dict)
    pays: dict[str, Decimal] = field(default_factory=dict)

    def on_win(self, points: int | None = None) -> Decimal:
        """Net win of a winning bet, taking ``win_on_points`` exceptions into account."""
        if points is not None and points in self.win_on_points:
            return self.win_on_points[points]
        assert self.win is not None
        return self.win


@dataclass(frozen=True)
class Variant:
    """A validated game variant: game id, options and the bets on offer."""

    id: str
    game: str
    title: str
    options: dict[str, Any]
    bets: dict[str, BetTerms]
    source: str

    def option(self, name: str) -> Any:
        return self.options[name]


def parse_money(value: Any, where: str) -> Decimal:
    """A non-negative decimal amount from a string or an integer; floats are refused."""
    if isinstance(value, bool) or isinstance(value, float):
        raise VariantError(
            f"{where}: write money as a string such as \"0.5\" (got {value!r}; "
            "a TOML float is binary floating point)"
        )
    if isinstance(value, int):
        amount = Decimal(value)
    elif isinstance(value, str):
        try:
            amount = Decimal(value.strip())
        except InvalidOperation:
            raise VariantError(f"{where}: {value!r} is not a decimal amount") from None
    else:
        raise VariantError(f"{where}: expected a decimal string, got {value!r}")
    if not amount.is_finite() or amount < 0:
        raise VariantError(f"{where}: a net win must be a finite amount >= 0, not {value!r}")
    if amount >= 1_000_000_000 or (amount and amount.adjusted() < -6):
        raise VariantError(f"{where}: {value!r} is not a plausible net win (0.000001 .. 999999999)")
    return amount if amount else Decimal(0)  # "-0" and "0.00" settle as "0"


def _check_keys(
    table: dict[str, Any], allowed: set[str], where: str, none_allowed: str = "none allowed"
) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        listed = f"allowed: {', '.join(sorted(allowed))}" if allowed else none_allowed
        raise VariantError(f"{where}: unknown key {unknown[0]!r} ({listed})")


def parse_variant(
    data: dict[str, Any],
    source: str,
    option_specs: dict[str, OptionSpec],
    bet_specs: dict[str, BetSpec],
) -> Variant:
    """Validate a decoded variant table against a game's specs."""
    _check_keys(data, {"id", "game", "title", "options", "bets"}, source)
    for key in ("id", "game"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise VariantError(f"{source}: key {key!r} is missing or not a string")
    if not isinstance(data.get("title", ""), str):
        raise VariantError(f"{source}: key 'title' must be a string, not {data['title']!r}")
    options_in = data.get("options", {})
    if not isinstance(options_in, dict):
        raise VariantError(f"{source}: [options] must be a table")
    _check_keys(
        options_in, set(option_specs), f"{source}: [options]",
        none_allowed=f"game {data['game']!r} has no options",
    )
    options: dict[str, Any] = {}
    for name, spec in option_specs.items():
        value = options_in.get(name, spec.default)
        problem = spec.check(value)
        if problem:
            raise VariantError(f"{source}: options.{name} {problem}")
        options[name] = value

    bets_in = data.get("bets")
    if not isinstance(bets_in, dict) or not bets_in:
        raise VariantError(f"{source}: [bets] is missing or empty")
    _check_keys(bets_in, set(bet_specs), f"{source}: [bets]")
    bets: dict[str, BetTerms] = {}
    for name, bet_spec in bet_specs.items():
        if name not in bets_in:
            if bet_spec.required:
                raise VariantError(f"{source}: bets.{name} is required by game {data['game']!r}")
            continue
        bets[name] = _parse_bet(bets_in[name], bet_spec, f"{source}: bets.{name}")
    return Variant(
        id=data["id"],
        game=data["game"],
        title=data.get("title", data["id"]),
        options=options,
        bets=bets,
        source=source,
    )


def _parse_bet(table: Any, spec: BetSpec, where: str) -> BetTerms:
    if not isinstance(table, dict):
        raise VariantError(f"{where} must be a table")
    if spec.pays_keys is not None:
        _check_keys(table, {"pays"}, where)
        pays_in = table.get("pays")
        if not isinstance(pays_in, dict) or not pays_in:
            raise VariantError(f"{where}.pays is missing: give the net win of each category")
        _check_keys(pays_in, set(spec.pays_keys), f"{where}.pays")
        pays = {k: parse_money(v, f"{where}.pays.{k}") for k, v in pays_in.items()}
        return BetTerms(pays=pays)
    allowed = {"win", "win_on_points"} if spec.points_exceptions else {"win"}
    _check_keys(table, allowed, where)
    if "win" not in table:
        raise VariantError(f"{where}.win is missing")
    win = parse_money(table["win"], f"{where}.win")
    exceptions_in = table.get("win_on_points", {})
    if not isinstance(exceptions_in, dict):
        raise VariantError(
            f"{where}.win_on_points must be a table such as {{ 6 = \"0.5\" }}, "
            f"not {exceptions_in!r}"
        )
    exceptions: dict[int, Decimal] = {}
    for key, value in exceptions_in.items():
        try:
            points = int(key)
        except ValueError:
            raise VariantError(f"{where}.win_on_points: {key!r} is not a points total") from None
        if not 0 <= points <= 9:
            raise VariantError(f"{where}.win_on_points: points {points} is not in 0..9")
        exceptions[points] = parse_money(value, f"{where}.win_on_points.{key}")
    return BetTerms(win=win, win_on_points=exceptions)


def read_variant_file(path: Path) -> dict[str, Any]:
    """Decode a variant file's TOML, with errors that name the file."""
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise VariantError(f"{path}: not valid TOML: {e}") from e
    except UnicodeDecodeError as e:
        raise VariantError(
            f"{path}: not valid TOML: byte {e.start} is not UTF-8 (save the file as UTF-8)"
        ) from e
    except RecursionError:
        raise VariantError(f"{path}: not valid TOML: nested too deep") from None
    except ValueError as e:  # e.g. an integer of more than 4300 digits
        raise VariantError(f"{path}: not valid TOML: {e}") from e
    except OSError as e:
        raise VariantError(f"{path}: cannot read: {e.strerror}") from e
