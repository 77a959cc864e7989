"""History boards of the games without roads: Teen Patti 20-20, Three Pictures, 3 Face. Pure.

Baccarat has its roads (:mod:`table_controller.display.roads`); the other games show
their own board, built from the last results (``round.result`` events as
``to_dict()``-shaped data: ``hands``, ``outcome``, ``payouts``):

* **rounds**: per round, newest last, each position's result against the banker (or
  the winner, in Teen Patti), its hand class and points;
* **wins**: how often each position (or side) won in the rounds shown;
* **notable**: the hands a floor calls out: a hand of three pictures (``3P``), a
  Teen Patti trail, trail of aces or straight flush, and every side bet that won (a
  Pair Plus, the six-card bonus, a three-pictures bet) with what it pays.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

#: Hand classes called out wherever they come.
NOTABLE_CLASSES = {"3P": "three pictures", "trail-aces": "trail of aces", "trail": "trail",
                   "straight-flush": "straight flush"}
#: Bets whose win is called out (the part after the position, or the whole name).
SIDE_BETS = ("pair_plus", "six_card_bonus", "three_pictures")
MAX_ROUNDS = 30


def _wins(payout: str) -> bool:
    try:
        return Decimal(payout) > 0
    except (InvalidOperation, TypeError):
        return False


def board_round(round_id: str | None, result: Mapping[str, Any]) -> dict[str, Any]:
    """One round of the board: positions with result, class and points, and its notable hands."""
    hands: Mapping[str, Any] = result.get("hands") or {}
    outcome: Mapping[str, Any] = result.get("outcome") or {}
    payouts: Mapping[str, Any] = result.get("payouts") or {}
    winner = outcome.get("winner")
    positions = []
    for name, hand in hands.items():
        if name == "first" or not isinstance(hand, Mapping):
            continue  # 3 Face's first card: shown, then discarded
        verdict = outcome.get(name)
        if verdict is None and isinstance(winner, str):
            verdict = "win" if winner == name else "tie" if winner == "tie" else "lose"
        positions.append({"name": name, "result": verdict, "class": hand.get("class"), "points": hand.get("points")})
    notable = []
    for p in positions:
        label = NOTABLE_CLASSES.get(str(p["class"]))
        if label:
            notable.append(f"{p['name']}: {label}")
    for bet, payout in payouts.items():
        if any(bet == s or bet.endswith("." + s) for s in SIDE_BETS) and _wins(str(payout)):
            owner = bet.split(".", 1)[0] if "." in bet else None
            kind = outcome.get(bet) if bet == "six_card_bonus" else next(
                (p["class"] for p in positions if p["name"] == owner), None)
            notable.append(f"{bet} pays {payout}:1" + (f" ({kind})" if kind else ""))
    return {"round": round_id, "winner": winner, "positions": positions, "notable": notable}


def game_board(rounds: Sequence[tuple[str | None, Mapping[str, Any]]]) -> dict[str, Any]:
    """The board of the last :data:`MAX_ROUNDS` results: rounds, wins per position, notable hands."""
    shown = [board_round(r, result) for r, result in rounds][-MAX_ROUNDS:]
    wins: Counter[str] = Counter()
    for r in shown:
        if isinstance(r["winner"], str):
            wins[r["winner"]] += 1
        for p in r["positions"]:
            if p["result"] == "win" and r["winner"] is None:
                wins[p["name"]] += 1
            elif p["result"] == "lose" and r["winner"] is None:
                wins["banker over " + p["name"]] += 1
    notable = [{"round": r["round"], "text": text} for r in shown for text in r["notable"]]
    return {"rounds": shown, "wins": dict(sorted(wins.items())), "notable": notable[-10:]}
