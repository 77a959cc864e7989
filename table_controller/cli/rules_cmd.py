"""``table-controller rules judge|classify|variants``: the rules core from the shell."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from table_controller.errors import DuplicateCard, TableError


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    rules = subparsers.add_parser("rules", help="judge rounds and classify hands with the rules core")
    sub = rules.add_subparsers(dest="rules_command", metavar="ACTION")
    sub.required = True

    judge = sub.add_parser(
        "judge",
        help="judge rounds given as JSON lines on stdin",
        description=(
            'Reads JSON lines {"cards": ["4H", "KS", ...]} (cards in shoe order) and writes '
            'one JSON line per input: {"hands", "outcome", "payouts", "used"} or {"error"}.'
        ),
    )
    _add_variant_args(judge)
    judge.set_defaults(func=run_judge)

    classify = sub.add_parser("classify", help="print the class of one hand")
    _add_variant_args(classify)
    classify.add_argument("cards", nargs="+", metavar="CARD", help="card codes, e.g. AS KH 10D")
    classify.add_argument("--json", action="store_true", help="print a JSON object")
    classify.set_defaults(func=run_classify)

    demo = sub.add_parser("demo", help="deal and judge a few rounds of every variant from seeded shoes")
    demo.add_argument("--rounds", type=int, default=3, help="rounds per variant (default 3)")
    demo.add_argument("--seed", type=int, default=2026, help="shuffle seed (default 2026)")
    demo.add_argument("--json", action="store_true", help="one JSON object per round")
    demo.add_argument("--variants-dir", type=Path, help="a folder of the studio's own variant files")
    demo.set_defaults(func=run_demo)

    variants = sub.add_parser("variants", help="list the game variants available")
    variants.add_argument("--variants-dir", type=Path, help="a folder of the studio's own variant files")
    variants.add_argument("--json", action="store_true", help="print a JSON object")
    variants.set_defaults(func=run_variants)


def _add_variant_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", required=True, metavar="VARIANT", help="game variant id, e.g. baccarat")
    parser.add_argument("--variants-dir", type=Path, help="a folder of the studio's own variant files")


def judge_line(game: Any, line: str) -> dict[str, Any]:
    """Judge one JSON line; raises TableError or ValueError with a clear message."""
    from table_controller.rules.cards import CODES, parse_cards

    try:
        request = json.loads(line)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON: {e.msg} at column {e.colno}") from None
    if not isinstance(request, dict) or not isinstance(request.get("cards"), list):
        raise ValueError('expected an object {"cards": ["4H", "KS", ...]}')
    cards = parse_cards(request["cards"])
    deal, used = game.deal(cards)
    counts = Counter(cards[:used])
    for card, n in counts.items():
        if n > game.decks:
            shoe = "a single-deck game" if game.decks == 1 else f"a {game.decks}-deck shoe"
            raise DuplicateCard(f"card {CODES[card]} appears {n} times in {shoe}")
    return {**deal.result().to_dict(), "used": used}


def run_judge(args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    from table_controller.rules.registry import load_game

    game = load_game(args.game, args.variants_dir)
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    failures = 0
    for line in stdin:
        if not line.strip():
            continue
        try:
            answer = judge_line(game, line)
        except (TableError, ValueError) as e:
            failures += 1
            answer = {"error": str(e)}
        stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
    stdout.flush()
    return 1 if failures else 0


def run_classify(args: argparse.Namespace) -> int:
    from table_controller.rules.cards import parse_cards
    from table_controller.rules.registry import load_game

    game = load_game(args.game, args.variants_dir)
    cards = parse_cards(args.cards)
    for card in set(cards):
        if cards.count(card) > game.decks:
            raise DuplicateCard(
                f"card {args.cards[cards.index(card)]} is given {cards.count(card)} times; "
                f"the {args.game} shoe holds {game.decks}"
            )
    cls = game.classify(cards)
    if args.json:
        print(json.dumps({"game": args.game, "cards": args.cards, "class": cls}))
    else:
        print(cls)
    return 0


def run_variants(args: argparse.Namespace) -> int:
    from table_controller.rules.registry import load_variant_file, variant_files

    rows: list[dict[str, Any]] = []
    broken = 0
    for name, path in variant_files(args.variants_dir).items():
        try:
            variant = load_variant_file(path)
        except TableError as e:  # list the rest; say plainly which file is broken
            broken += 1
            rows.append({"id": name, "file": str(path), "error": str(e)})
            continue
        rows.append({"id": name, "game": variant.game, "title": variant.title, "file": str(path)})
    if args.json:
        print(json.dumps({"variants": rows}))
    else:
        for row in rows:
            if "error" in row:
                print(f"{row['id']:32} BROKEN: {row['error']}")
            else:
                print(f"{row['id']:32} {row['game']:18} {row['title']}")
    return 1 if broken else 0


def run_demo(args: argparse.Namespace) -> int:
    import random

    from table_controller.rules.cards import shuffled_shoe
    from table_controller.rules.registry import load_game, variant_files

    rng = random.Random(args.seed)
    for name in variant_files(args.variants_dir):
        game = load_game(name, args.variants_dir)
        shoe = shuffled_shoe(game.decks, rng)
        for n in range(1, args.rounds + 1):
            if game.shuffle_every_round or len(shoe) < 6:
                shoe = shuffled_shoe(game.decks, rng)
            deal, used = game.deal(shoe)
            shoe = shoe[used:]
            result = deal.result()
            if args.json:
                print(json.dumps({"variant": name, "round": n, **result.to_dict()}))
                continue
            hands = "  ".join(
                f"{pos}: {' '.join(h.cards)} [{h.cls}]" for pos, h in result.hands.items()
            )
            won = [bet for bet, v in result.payouts.items() if v > 0]
            print(f"{name:30} round {n}: {hands}")
            print(f"{'':30}   outcome {json.dumps(result.outcome)}; winning bets: {', '.join(won) or 'none'}")
    return 0
