"""What a soak run is asked for: tables, rounds, pacing and the faults to inject."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from table_controller.errors import ConfigError

#: Every fault kind and its default rate. Shoe frame faults are per frame sent by the
#: shoe; line-reader faults (line tables) per card line the reader sends (``garbage`` is
#: both: noise before a frame of a smart shoe, before a line of a line reader); dealer
#: faults are per card the dealer is about to draw; ``slow`` is the number of
#: deliberately slow subscribers.
DEFAULT_RATES: dict[str, float] = {
    "corrupt": 0.02,  # shoe frame with one bit flipped
    "drop": 0.02,  # shoe frame never sent
    "dup": 0.02,  # shoe frame sent twice
    "garbage": 0.01,  # random bytes before a shoe frame (line tables: noise before a card line)
    "lost": 0.01,  # a line reader's card line never sent (line tables)
    "twice": 0.01,  # a line reader's card line sent twice: a double read (line tables)
    "unplug": 0.004,  # the shoe's cable pulled for 2.5 s
    "dropped": 0.004,  # dealer presses "card dropped"
    "misdeal": 0.004,  # dealer pulls a card while the table is paused (lid open)
    "void": 0.004,  # dealer asks for a void
    "lid": 0.004,  # dealer opens and closes the shoe's lid mid-round
    "noread": 0.006,  # a card leaves the shoe unread
    "blackout": 0.004,  # the camera goes dark for 3 s (camera tables)
    "mismatch": 0.006,  # the card laid under the camera is not the one the shoe read (camera tables)
    "slow": 2,  # slow subscribers
}
FAULT_KINDS = tuple(DEFAULT_RATES)
SHOE_FRAME_FAULTS = ("corrupt", "drop", "dup", "garbage")
DEALER_FAULTS = ("unplug", "dropped", "misdeal", "void", "lid", "noread", "blackout", "mismatch")
CAMERA_FAULTS = ("blackout", "mismatch")
#: Faults of a plain line reader (``--line-tables``), per card line.
LINE_FAULTS = ("lost", "twice", "garbage")
#: Faults only line tables can have.
LINE_ONLY_FAULTS = ("lost", "twice")
#: Dealer faults a line table gets: it has no lid sensor (lid, misdeal), an unread card is a
#: lost line to it (noread), and its cable pulls are not injected (unplug).
LINE_TABLE_DEALER_FAULTS = ("dropped", "void")
#: Variants the tables cycle through (table 1 baccarat, table 2 teen patti, ...).
DEFAULT_VARIANTS = ("baccarat", "teen-patti-2020", "three-face", "three-pictures")


def parse_faults(text: str) -> dict[str, float]:
    """``all`` | ``none`` | ``kind[=rate],...`` -> {kind: rate}; ConfigError names a bad part."""
    text = text.strip().lower()
    if text in ("", "none"):
        return {}
    rates: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        kind, sep, value = part.partition("=")
        kind = kind.strip()
        if kind == "all":
            rates.update(DEFAULT_RATES)
            continue
        if kind not in DEFAULT_RATES:
            raise ConfigError(
                f"--faults: unknown fault {kind!r} (known: all, none, {', '.join(FAULT_KINDS)})"
            )
        if not sep:
            rates[kind] = DEFAULT_RATES[kind]
            continue
        try:
            rate = float(value)
        except ValueError:
            raise ConfigError(f"--faults: {kind}={value!r} is not a number") from None
        limit = 20 if kind == "slow" else 1
        if not 0 <= rate <= limit or rate != rate:
            raise ConfigError(f"--faults: {kind}={value}: must be in 0..{limit}")
        rates[kind] = rate
    return rates


@dataclass
class SoakOptions:
    """One soak run."""

    tables: int = 4
    rounds: int = 30
    seed: int = 1
    faults: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_RATES))
    kill_every: float | None = None  # seconds between kills (randomised 0.5x..1.5x)
    variants: tuple[str, ...] = DEFAULT_VARIANTS
    betting_seconds: float = 0.4  # the controller's countdown
    result_seconds: float = 0.1
    pace: float = 0.0  # seconds the dealer waits between cards
    subscribers: int = 1  # fast subscribers besides the floor subscriber the dealers use
    workdir: Path | None = None  # keep journals and logs here (default: a temporary folder)
    table_timeout: float = 60.0  # a table that makes no progress this long fails the run
    python: str | None = None  # interpreter for the child processes (default: this one)
    camera_tables: int = 1  # the first N tables also have a simulated overhead camera
    camera_deck: str = "svg-cards"
    line_tables: int = 0  # the last N tables have a plain line reader instead of a smart shoe
    hostile: int = 0  # hostile clients sending garbage to every endpoint (soak/hostile.py)
    archive: str | None = None  # "postgresql" or "sqlite": the archive and studio API beside (soak/archive_side.py)
    archive_chaos_every: float = 5.0  # seconds between the archive side's kills and cuts (randomised)
    segment_kb: int = 32  # journals rotate at this size, so kills land in rotations too; 0: one file

    def __post_init__(self) -> None:
        if not 1 <= self.tables <= 99:
            raise ConfigError(f"--tables {self.tables}: must be 1..99")
        if self.rounds < 1:
            raise ConfigError(f"--rounds {self.rounds}: must be at least 1")
        if self.segment_kb != 0 and not 11 <= self.segment_kb <= 65536:
            raise ConfigError(f"--segment-kb {self.segment_kb}: must be 0 (one file) or 11..65536")
        if self.camera_tables < 0:
            raise ConfigError(f"--camera-tables {self.camera_tables}: must be 0 or more")
        if not 0 <= self.line_tables <= self.tables:
            raise ConfigError(f"--line-tables {self.line_tables}: must be 0..{self.tables} (--tables)")
        if min(self.camera_tables, self.tables) + self.line_tables > self.tables:
            raise ConfigError(
                f"--line-tables {self.line_tables} with --camera-tables {self.camera_tables}: "
                f"{self.tables} tables cannot have both (camera tables are the first, line "
                "tables the last); lower one of them"
            )
        if not 0 <= self.hostile <= 50:
            raise ConfigError(f"--hostile {self.hostile}: must be 0..50")
        if self.archive not in (None, "postgresql", "sqlite"):
            raise ConfigError(f"--archive {self.archive}: postgresql or sqlite")
        if self.archive_chaos_every <= 0:
            raise ConfigError(f"--archive-chaos-every {self.archive_chaos_every}: must be more than 0 seconds")
        if self.kill_every is not None and self.kill_every <= 0:
            raise ConfigError(f"--kill-every {self.kill_every}: must be more than 0 seconds")

    def rate(self, kind: str) -> float:
        return float(self.faults.get(kind, 0.0))

    def shoe_fault_spec(self) -> str:
        """The shoe simulator's ``--faults`` for the frame faults asked for."""
        return ",".join(f"{k}={self.rate(k):g}" for k in SHOE_FRAME_FAULTS if self.rate(k) > 0)

    def line_fault_spec(self) -> str:
        """The line reader simulator's ``--faults`` for the line faults asked for."""
        return ",".join(f"{k}={self.rate(k):g}" for k in LINE_FAULTS if self.rate(k) > 0)

    def is_line_table(self, k: int) -> bool:
        """Table number ``k`` (1-based) has a plain line reader: the last ``line_tables``."""
        return k > self.tables - self.line_tables

    @property
    def slow_subscribers(self) -> int:
        return int(self.rate("slow"))
