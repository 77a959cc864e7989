"""Find games and load variant files: the shipped ones and a studio's own folder."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from table_controller.errors import VariantError
from table_controller.rules.baccarat import Baccarat
from table_controller.rules.game import Game
from table_controller.rules.teen_patti import TeenPatti2020
from table_controller.rules.three_face import ThreeFace
from table_controller.rules.three_pictures import ThreePictures
from table_controller.rules.variant import Variant, parse_variant, read_variant_file

GAMES: dict[str, type[Game]] = {
    cls.game_id: cls for cls in (Baccarat, ThreePictures, ThreeFace, TeenPatti2020)
}


def load_variant_file(path: Path) -> Variant:
    """Read and validate one variant file; errors name the file and the key."""
    data = read_variant_file(path)
    game_id = data.get("game")
    if not isinstance(game_id, str) or game_id not in GAMES:
        raise VariantError(
            f"{path}: key 'game' names unknown game {game_id!r} (known: {', '.join(GAMES)})"
        )
    game_cls = GAMES[game_id]
    variant = parse_variant(data, str(path), game_cls.OPTIONS, game_cls.BETS)
    if path.stem != variant.id:
        raise VariantError(f"{path}: id {variant.id!r} must match the file name {path.stem!r}")
    return variant


def builtin_variants_dir() -> Path:
    return Path(str(resources.files("table_controller.rules") / "variants"))


def variant_files(variants_dir: Path | None = None) -> dict[str, Path]:
    """Variant id -> file, the studio's folder overriding the shipped files of the same id."""
    files = {p.stem: p for p in sorted(builtin_variants_dir().glob("*.toml"))}
    if variants_dir is not None:
        if not variants_dir.is_dir():
            raise VariantError(f"--variants-dir {variants_dir}: not a folder")
        files.update({p.stem: p for p in sorted(variants_dir.glob("*.toml"))})
    return files


def load_variant(name: str, variants_dir: Path | None = None) -> Variant:
    """The validated variant called ``name``."""
    files = variant_files(variants_dir)
    if name not in files:
        raise VariantError(f"unknown game variant {name!r} (known: {', '.join(sorted(files))})")
    return load_variant_file(files[name])


def make_game(variant: Variant) -> Game:
    """The rules object for a validated variant."""
    return GAMES[variant.game](variant)


def load_game(name: str, variants_dir: Path | None = None) -> Game:
    """Shortcut: load the variant called ``name`` and build its game."""
    return make_game(load_variant(name, variants_dir))
