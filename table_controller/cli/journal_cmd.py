"""``table-controller journal verify|show|export|segments|prune|evidence``: a table's journal.

All three open the journal read-only, so they run beside a live controller, and
take the table and game from the journal itself.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import deque
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from table_controller.event_types import (
    Alert,
    CardDealt,
    Event,
    EventError,
    Heartbeat,
    RoundResult,
    RoundStarted,
    RoundVoided,
    ShoeChanged,
    TableStateChanged,
    decode_event,
)

if TYPE_CHECKING:
    from table_controller.journal.store import JournalRecord

#: ``verify`` shows a progress bar from this many events on.
PROGRESS_FROM = 20_000
#: ``verify`` prints at most this many problems as text (``--json`` has them all).
SHOWN_PROBLEMS = 50


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    journal = subparsers.add_parser(
        "journal", help="verify, show and export a table's event journal",
        description="Read a table's journal (read-only: safe while the controller runs). Only "
                    "'prune' changes files, and only closed segments, never the live one.",
    )
    sub = journal.add_subparsers(dest="journal_command", metavar="ACTION")
    sub.required = True

    verify = sub.add_parser(
        "verify", help="check the hash chain, the seqs and every result against the rules core",
        description=(
            "Checks that seq runs 1, 2, 3... without gaps, that every event's hash chains to the "
            "previous one, and that every round.result equals what the rules core computes from "
            "the round's journaled cards, each round settled exactly once. Exit 0 when all is "
            "well, 1 when a problem was found, 2 when the file is not a journal."
        ),
    )
    _journal_arg(verify)
    verify.add_argument(
        "--variants-dir", type=Path, help="a folder of the studio's own variant files"
    )
    verify.add_argument("--checkpoints", type=Path, metavar="FILE",
                        help="the table's signed checkpoint file: also finds a deleted tail")
    verify.add_argument("--verify-key", type=Path, metavar="KEY",
                        help="the table's public verify key (keys signing), for --checkpoints")
    verify.add_argument("--json", action="store_true", help="print the report as one JSON object")
    verify.set_defaults(func=run_verify)

    show = sub.add_parser("show", help="print events as readable lines or JSON lines")
    _journal_arg(show)
    show.add_argument("--round", metavar="ID", help="only the events of this round")
    show.add_argument(
        "--type", action="append", metavar="TYPE", dest="types",
        help="only events of this type (repeat for several), e.g. round.result",
    )
    show.add_argument(
        "--since", type=_seq, default=0, metavar="SEQ", help="only events after this seq"
    )
    show.add_argument("--tail", type=_count, metavar="N", help="only the last N matching events")
    show.add_argument("--json", action="store_true", help="print the stored events as JSON lines")
    show.set_defaults(func=run_show)

    export = sub.add_parser(
        "export", help="write events as JSON lines, exactly as journaled",
        description=(
            "Writes the stored events, byte for byte, one per line. --since/--until take a seq "
            "(since: events after it; until: up to and including it) or an RFC 3339 time "
            "(since: at or after it; until: before it; a time without offset is UTC)."
        ),
    )
    _journal_arg(export)
    export.add_argument(
        "--since", type=_bound, metavar="SEQ|TIME", help="start after this seq / at this time"
    )
    export.add_argument(
        "--until", type=_bound, metavar="SEQ|TIME", help="end at this seq / before this time"
    )
    export.set_defaults(func=run_export)

    evidence = sub.add_parser(
        "evidence", help="write a round's dispute bundle: journal slice, pictures, a page (docs/evidence.md)",
        description="Writes the bundle of a round (--round), or of every round started in a time window "
                    "(--from/--to, one folder a round), into --out: the journal slice with its hashes, the "
                    "camera's pictures, the signed checkpoint covering it (with --checkpoints), a manifest "
                    "and index.html. 'journal verify-bundle' checks it offline.",
    )
    _journal_arg(evidence)
    which = evidence.add_mutually_exclusive_group(required=True)
    which.add_argument("--round", metavar="ID", help="the round")
    which.add_argument("--from", dest="since", type=_bound, metavar="TIME", help="rounds started at or after")
    evidence.add_argument("--to", dest="until", type=_bound, metavar="TIME", help="rounds started before (with --from)")
    evidence.add_argument("--out", required=True, type=Path, metavar="DIR", help="the bundle's folder")
    evidence.add_argument("--evidence", type=Path, metavar="DIR",
                          help="the pictures' folder (default: <journal>.evidence)")
    evidence.add_argument("--checkpoints", type=Path, metavar="FILE", help="the table's signed checkpoint file")
    evidence.add_argument("--verify-key", type=Path, metavar="KEY", help="the table's public verify key (copied in)")
    evidence.add_argument("--json", action="store_true", help="print the manifests as JSON lines")
    evidence.set_defaults(func=run_evidence)

    segments = sub.add_parser(
        "segments", help="list the journal's segments: seqs, events, size, compressed, live",
        description="Lists the segment files of a journal with rotation on (docs/journal.md), oldest "
                    "first, and the segments pruned before them.",
    )
    _journal_arg(segments)
    segments.add_argument("--json", action="store_true", help="print one JSON object")
    segments.set_defaults(func=run_segments)

    prune = sub.add_parser(
        "prune", help="compress closed segments; remove those the archive holds",
        description="--compress xz-compresses every closed segment (read back and compared before the "
                    "plain file goes). --archive LOCATION removes the oldest closed segments whose last "
                    "event the archive holds with the same hash, stopping at the first it does not hold, "
                    "and records each in pruned.jsonl. The live segment is never touched. Exit 0 when "
                    "done, 1 when something failed.",
    )
    _journal_arg(prune)
    prune.add_argument("--compress", action="store_true", help="compress the closed segments")
    prune.add_argument("--archive", metavar="LOCATION",
                       help="the studio archive (SQLite path or postgresql:// URL) that must hold a segment "
                            "before it is removed")
    prune.add_argument("--keep", type=_seq, default=0, metavar="N",
                       help="keep the last N closed segments even when archived (default 0)")
    prune.add_argument("--json", action="store_true", help="print one JSON object")
    prune.set_defaults(func=run_prune)

    check = sub.add_parser(
        "verify-bundle", help="check a dispute bundle offline: chain, pictures, checkpoint, result",
        description="Exit 0 when the bundle holds (its slice chains, every picture is the one its evidence "
                    "event names, the signed checkpoint verifies and signs the slice's hash, the result "
                    "re-judges the same), 1 when not.",
    )
    check.add_argument("bundle", type=Path, help="the bundle's folder")
    check.add_argument("--verify-key", type=Path, metavar="KEY",
                       help="the table's public key, if the bundle's own verify.key is not to be trusted")
    check.add_argument("--json", action="store_true", help="print the report as one JSON object")
    check.set_defaults(func=run_verify_bundle)


def _journal_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--journal", required=True, type=Path, metavar="PATH", help="the journal file"
    )


def _seq(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a seq number (0, 1, 2, ...)")
    return int(text)


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive count")
    return int(text)


def _bound(text: str) -> int | str:
    """A seq (digits) or an RFC 3339 time, normalised to the journal's ts text."""
    from table_controller.events import format_ts

    if text.isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither a seq number nor an RFC 3339 time such as 2026-11-29T18:40:02Z"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return format_ts(moment.timestamp())


# -- segments ----------------------------------------------------------------------------


def run_segments(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from table_controller.journal.prune import segment_statuses
    from table_controller.journal.segments import read_pruned

    if not args.journal.exists():
        print(f"table-controller: no journal at {args.journal}", file=sys.stderr)
        return 2
    statuses = segment_statuses(args.journal)
    pruned = read_pruned(args.journal)
    if args.json:
        print(json.dumps({"journal": str(args.journal), "segments": [asdict(s) for s in statuses],
                          "pruned": [asdict(p) for p in pruned]}))
        return 0
    for item in pruned:
        print(f"  {item.number:6d}  seqs {item.first_seq}..{item.last_seq}  pruned {item.pruned_at} "
              f"({item.confirmed_by})")
    for status in statuses:
        state = "live" if status.live else ("closed, xz" if status.compressed else "closed")
        print(f"  {status.number:6d}  seqs {status.first_seq}..{status.last_seq}  {status.events} events  "
              f"{status.bytes / 1e6:.2f} MB  {state}  {status.file}")
    return 0


def run_prune(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from table_controller.archive.base import redact
    from table_controller.errors import TableError
    from table_controller.journal.prune import archive_confirmation, compress_closed, prune_archived

    if not (args.compress or args.archive):
        print("table-controller: journal prune needs --compress, --archive or both", file=sys.stderr)
        return 2

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    report: dict[str, Any] = {"journal": str(args.journal), "compressed": [], "pruned": []}
    try:
        if args.archive:
            confirm, close = archive_confirmation(args.archive)
            try:
                pruned = prune_archived(args.journal, confirm, confirmed_by=redact(args.archive),
                                        keep=args.keep, progress=progress)
            finally:
                close()
            report["pruned"] = [asdict(p) for p in pruned]
        if args.compress:
            report["compressed"] = compress_closed(args.journal, progress=progress)
    except (TableError, OSError) as e:
        print(f"table-controller: journal prune: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{len(report['pruned'])} segments pruned, {len(report['compressed'])} compressed")
    return 0


# -- evidence ----------------------------------------------------------------------------


def run_evidence(args: argparse.Namespace) -> int:
    from table_controller.errors import ConfigError
    from table_controller.evidence.bundle import BundleError, make_bundle
    from table_controller.journal import JournalReader

    if args.until is not None and args.since is None:
        raise ConfigError("--to goes with --from")
    rounds = [args.round] if args.round else []
    if not rounds:
        reader = JournalReader(args.journal)
        try:
            for event in reader.events(types=["round.start"]):
                if (isinstance(args.since, int) and event.seq <= args.since) or (
                        isinstance(args.since, str) and event.ts < args.since):
                    continue
                if args.until is not None and ((isinstance(args.until, int) and event.seq > args.until) or (
                        isinstance(args.until, str) and event.ts >= args.until)):
                    continue
                if event.round:
                    rounds.append(event.round)
        finally:
            reader.close()
    for round_id in rounds:
        out = args.out if args.round else args.out / round_id
        try:
            manifest = make_bundle(args.journal, round_id, out, evidence=args.evidence,
                                   checkpoints=args.checkpoints, verify_key=args.verify_key)
        except BundleError as e:
            raise ConfigError(str(e)) from None
        if args.json:
            print(json.dumps(manifest))
        else:
            kept = sum(1 for s in manifest["pictures"].values() if s == "kept")
            print(f"{round_id}: {out} (seq {manifest['first_seq']}-{manifest['last_seq']}, "
                  f"{kept}/{len(manifest['pictures'])} pictures)")
    return 0


def run_verify_bundle(args: argparse.Namespace) -> int:
    from table_controller.evidence.bundle import verify_bundle

    report = verify_bundle(args.bundle, args.verify_key)
    if args.json:
        print(json.dumps({"ok": report.ok, "problems": report.problems, "notes": report.notes}))
    else:
        for p in report.problems:
            print(f"PROBLEM {p}")
        for n in report.notes:
            print(f"note: {n}")
        print("bundle holds" if report.ok else "bundle does NOT hold")
    return 0 if report.ok else 1


# -- verify ------------------------------------------------------------------------------
def run_verify(args: argparse.Namespace, stdout: TextIO | None = None) -> int:
    from table_controller.journal import verify_journal

    out = stdout or sys.stdout
    with ProgressReporter("verify", sys.stderr) as progress:
        report = verify_journal(
            args.journal, variants_dir=args.variants_dir, progress=progress,
            checkpoints=getattr(args, "checkpoints", None), verify_key=getattr(args, "verify_key", None),
        )
    if args.json:
        out.write(json.dumps(report.as_dict()) + "\n")
        return 0 if report.ok else 1
    head = f"journal {report.path} (table {report.table}, {report.game})"
    if report.ok:
        out.write(f"{head}: OK\n")
    else:
        n = len(report.problems) + report.problems_omitted
        out.write(f"{head}: FAILED, {n} problem{'s' if n != 1 else ''}\n")
        for problem in report.problems[:SHOWN_PROBLEMS]:
            out.write(f"  - {problem}\n")
        if n > SHOWN_PROBLEMS:
            out.write(f"  ... and {n - SHOWN_PROBLEMS} more (--json lists up to 1000)\n")
    seqs = f"seq 1..{report.last_seq}" if report.last_seq else "empty"
    out.write(
        f"  {report.events} events ({seqs}), {report.rounds} rounds, "
        f"{report.results_checked} results re-judged by the rules core\n"
        f"  last hash {report.last_hash}\n"
    )
    return 0 if report.ok else 1


class ProgressReporter:
    """A ``progress(done, total)`` callback: a rich bar on a terminal, plain lines otherwise.

    Shown only for journals of at least :data:`PROGRESS_FROM` events.
    """

    def __init__(self, label: str, stream: TextIO) -> None:
        self.label = label
        self.stream = stream
        self._bar: Any = None
        self._task: Any = None
        self._last_tenth = 0

    def __enter__(self) -> Callable[[int, int], None]:
        return self.update

    def update(self, done: int, total: int) -> None:
        if total < PROGRESS_FROM:
            return
        if not self.stream.isatty():
            tenth = done * 10 // max(total, 1)
            if tenth > self._last_tenth:
                self._last_tenth = tenth
                self.stream.write(f"{self.label}: {done}/{total} events\n")
                self.stream.flush()
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import Progress

            self._bar = Progress(console=Console(file=self.stream), transient=True)
            self._bar.start()
            self._task = self._bar.add_task(f"{self.label} journal", total=total)
        self._bar.update(self._task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


# -- show --------------------------------------------------------------------------------
def run_show(args: argparse.Namespace, stdout: TextIO | None = None) -> int:
    from table_controller.journal import JournalReader

    out = stdout or sys.stdout
    with JournalReader(args.journal) as reader:
        records: Iterator[JournalRecord] = reader.records(args.since, round_id=args.round, types=args.types)
        if args.tail:
            records = iter(deque(records, maxlen=args.tail))
        shown = 0
        for record in records:
            out.write((record.body if args.json else describe_record(record)) + "\n")
            shown += 1
    if shown == 0 and args.round is not None:
        print(
            f"table-controller: no events of round {args.round!r} in {args.journal}",
            file=sys.stderr,
        )
        return 1
    return 0


def describe_record(record: JournalRecord) -> str:
    """:func:`describe` of a row's typed event; a row whose text is not one says why, from its columns."""
    try:
        event = decode_event(record.body)
    except EventError as e:
        return (f"{record.seq:>7}  {record.ts}  {record.type:<14} {record.round or '-':<12} "
                f"(stored text is not a valid event: {e})")
    return describe(event)


def describe(event: Event) -> str:
    """One readable line: seq, time, type, round and the payload that matters."""
    return (
        f"{event.seq:>7}  {event.ts}  {event.type:<14} {event.round or '-':<12} {_summary(event)}"
    ).rstrip()


def _summary(e: Event) -> str:
    match e:
        case TableStateChanged(state=state, reason=reason):
            return state + (f" ({reason})" if reason else "")
        case RoundStarted(variant=variant, betting_seconds=seconds):
            return f"variant {variant}, betting {seconds} s"
        case CardDealt(position=position, index=index, code=code, source=source):
            return f"{position}[{index}] {code} ({source})"
        case RoundResult(hands=hands, outcome=outcome, payouts=payouts):
            shown = "  ".join(f"{pos}: {' '.join(h.cards)} [{h.cls}]" for pos, h in hands.items())
            wins = [f"{bet} +{v}" for bet, v in payouts.items() if Decimal(v) > 0]
            return (f"{json.dumps(outcome, separators=(',', ':'))}  {shown}  "
                    f"wins: {', '.join(wins) or 'none'}")
        case RoundVoided(reason=reason, refund=refund):
            return f"void: {reason} (refund {'yes' if refund else 'no'})"
        case Alert(severity=severity, kind=kind, detail=detail):
            return f"{severity} {kind}: {detail}"
        case ShoeChanged(event=what, count=count):
            return f"{what}, count {count}"
        case Heartbeat(state=state):
            return state
    return ""


# -- export ------------------------------------------------------------------------------
def run_export(args: argparse.Namespace, stdout: TextIO | None = None) -> int:
    from table_controller.journal import JournalReader

    out = stdout or sys.stdout
    since, until = args.since, args.until
    with JournalReader(args.journal) as reader:
        records = reader.records(
            since if isinstance(since, int) else 0,
            until_seq=until if isinstance(until, int) else None,
            since_ts=since if isinstance(since, str) else None,
            until_ts=until if isinstance(until, str) else None,
        )
        for record in records:
            out.write(record.body + "\n")
    out.flush()
    return 0
