"""Run a soak: start the studio, deal, inject faults and kills, stop, check, report."""

from __future__ import annotations

import logging
import queue
import random
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import zmq

from table_controller.client import ClientItem
from table_controller.control import token_digest
from table_controller.publish.proxy import StudioProxy
from table_controller.rules.registry import load_game
from table_controller.soak.archive_side import ArchiveSide
from table_controller.soak.checker import CheckResult, check_run, faults_by_kind, read_journal
from table_controller.soak.controller_process import ControlClient, ControllerProcess, write_config
from table_controller.soak.dealer import RemoteDealer
from table_controller.soak.evidence_check import check_evidence
from table_controller.soak.hostile import HostileClients, HostileTarget
from table_controller.soak.options import LINE_FAULTS, SHOE_FRAME_FAULTS, SoakOptions
from table_controller.soak.records import TableRecord
from table_controller.soak.shoe_process import ShoeProcess
from table_controller.soak.subscribers import LatencyTracker, Subscriber

log = logging.getLogger(__name__)

#: progress(rounds started, rounds asked for, a one-line status)
ProgressHook = Callable[[int, int, str], None]
#: Shoe counters reported as injected frame faults.
_SHOE_COUNTERS = {
    "corrupt": "corrupted",
    "drop": "dropped",
    "dup": "duplicated",
    "garbage": "garbage",
}
#: A line reader's counters (``stats``) reported as injected line faults.
_LINE_COUNTERS = {"lost": "lost", "twice": "twice", "garbage": "garbage"}


@dataclass
class SoakReport:
    """The outcome: ``ok``, each check, the counts, card-to-display latency, problems found."""

    ok: bool
    checks: dict[str, bool]
    counts: dict[str, Any]
    latency_ms: dict[str, float | None]
    problems: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0
    workdir: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "checks": self.checks,
            "counts": self.counts,
            "latency_ms": self.latency_ms,
            "problems": {k: v for k, v in self.problems.items() if v},
            "seconds": round(self.seconds, 1),
            "workdir": self.workdir,
        }


def free_port(rng: random.Random) -> int:
    """A free TCP port on 127.0.0.1 below the ephemeral range.

    The snapshot and control ports must survive restarts; a port from the
    ephemeral range could be taken, while its controller is down, by a
    client's reconnecting socket (TCP can even connect a socket to itself).
    """
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(200):
        port = rng.randrange(max(1024, low - 12000), low)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError("no free TCP port below the ephemeral range on 127.0.0.1")


@dataclass
class _Table:
    record: TableRecord
    shoe: ShoeProcess
    controller: ControllerProcess
    snapshot: str
    control: str
    log: IO[str]
    dealer: RemoteDealer | None = None
    thread: threading.Thread | None = None
    kills: list[float] = field(default_factory=list)
    killed_in: list[str] = field(default_factory=list)  # the table's state at each kill
    dealer_queue: queue.Queue[ClientItem] = field(default_factory=queue.Queue)


class Soak:
    """One soak run; :meth:`run` returns the report and always cleans up every process."""

    def __init__(self, options: SoakOptions, progress: ProgressHook | None = None) -> None:
        self.options = options
        self.progress = progress
        self.rng = random.Random(options.seed)
        self.token = secrets.token_hex(16)
        self.tables: list[_Table] = []
        self.errors: list[str] = []
        self.latency = LatencyTracker()
        self._stop = threading.Event()
        self._kill_lock = threading.Lock()
        self._context: zmq.Context[Any] | None = None
        self.hostile: HostileClients | None = None
        self.archive_side: ArchiveSide | None = None
        self.archive_counts: dict[str, Any] = {}
        self.evidence_counts: dict[str, Any] = {}

    # ------------------------------------------------------------------ the run
    def run(self) -> SoakReport:
        started = time.monotonic()
        o = self.options
        own_dir = o.workdir is None
        workdir = Path(tempfile.mkdtemp(prefix="soak-")) if own_dir else Path(o.workdir)  # type: ignore[arg-type]
        workdir.mkdir(parents=True, exist_ok=True)
        context: zmq.Context[Any] = zmq.Context()
        try:
            with ExitStack() as stack:
                stack.callback(self._stop.set)
                proxy = StudioProxy(
                    "tcp://127.0.0.1:0", "tcp://127.0.0.1:0", context=context
                ).start()
                stack.callback(proxy.close)
                assert proxy.bound_frontend is not None and proxy.bound_backend is not None
                for k in range(1, o.tables + 1):
                    self.tables.append(self._start_table(k, workdir, proxy.bound_frontend, stack))
                if o.archive:
                    self.archive_side = self._start_archive(workdir, stack)
                subscribers = self._start_subscribers(proxy.bound_backend, context, stack)
                # Dealers start once the floor subscriber follows every table: they watch through it.
                if not subscribers[0].wait_synced(timeout=30 + 3 * o.tables):
                    self.errors.append(
                        "the floor subscriber got no snapshot of some table at the start"
                    )
                if o.hostile:
                    self.hostile = self._start_hostile(proxy.bound_frontend, proxy.bound_backend, stack)
                self._deal(context)
                if self.hostile is not None:  # before the controllers stop: that is no refusal
                    self.hostile.stop()
                counts = self._finish(subscribers)
                if self.hostile is not None:  # garbage the proxy forwarded (docs/soak.md)
                    self.hostile.stats.subscribers_skipped = sum(
                        s.client.stats.malformed for s in subscribers
                    )
                streams = {s.name: s.streams for s in subscribers}
                for s in subscribers:
                    if s.error:
                        self.errors.append(f"subscriber {s.name}: {s.error}")
                result = check_run(
                    [t.record for t in self.tables],
                    streams,
                    {t.record.table: t.kills for t in self.tables},
                    self.errors,
                )
                if self.hostile is not None:
                    self.hostile.check(
                        result, {t.record.table: workdir / f"{t.record.table}.log" for t in self.tables}
                    )
                camera_journals = {t.record.table: Path(t.record.journal) for k, t in enumerate(self.tables)
                                   if k < o.camera_tables}
                if camera_journals:
                    self.evidence_counts = check_evidence(camera_journals, workdir / "bundles", result.problems)
                if self.archive_side is not None:
                    self.archive_counts = self.archive_side.check(
                        {t.record.table: Path(t.record.journal) for t in self.tables}, result.problems,
                        timeout=60 + 2 * o.tables,
                    )
            return self._report(
                result, counts, time.monotonic() - started, workdir if not own_dir else None
            )
        finally:
            context.term()
            if own_dir:
                shutil.rmtree(workdir, ignore_errors=True)

    def _start_archive(self, workdir: Path, stack: ExitStack) -> ArchiveSide:
        o = self.options
        assert o.archive is not None
        log_file = open(workdir / "archive.log", "a", encoding="utf-8")  # noqa: SIM115 (closed by the stack)
        stack.callback(log_file.close)
        side = ArchiveSide(o.archive, workdir, o.python or sys.executable, log_file,
                           random.Random(o.seed * 31 + 1), o.archive_chaos_every)
        stack.callback(side.close)
        side.start([(t.record.table, t.snapshot) for t in self.tables])
        return side

    def _start_table(self, k: int, workdir: Path, frontend: str, stack: ExitStack) -> _Table:
        o = self.options
        table = f"T{k:02d}"
        variant = o.variants[(k - 1) % len(o.variants)]
        game = load_game(variant)
        python = o.python or sys.executable
        log_file = open(workdir / f"{table}.log", "a", encoding="utf-8")  # noqa: SIM115 (closed by the stack)
        stack.callback(log_file.close)
        link = workdir / f"{table}.shoe"
        line_table = o.is_line_table(k)
        argv = [
            python,
            "-m",
            "table_controller",
            "shoe",
            "sim",
            "--link",
            "pty",
            "--device-link",
            str(link),
            "--decks",
            str(game.decks),
            "--seed",
            str(o.seed * 1000 + k),
        ]
        if line_table:
            # A plain line reader: no gate, no count, no cut card report, no retransmission.
            argv += ["--protocol", "lines"]
            if o.line_fault_spec():
                argv += ["--faults", o.line_fault_spec()]
        else:
            if o.shoe_fault_spec():
                argv += ["--faults", o.shoe_fault_spec()]
            if game.decks > 1:
                argv += ["--cut-at", str(52 * game.decks - 16)]
        shoe = ShoeProcess(argv, link, log_file)
        stack.callback(shoe.stop)
        ports = (
            random.Random()
        )  # not the run's seed: two soaks at once must not pick the same ports
        snapshot = f"tcp://127.0.0.1:{free_port(ports)}"
        control = f"tcp://127.0.0.1:{free_port(ports)}"
        config = workdir / f"{table}.toml"
        journal = workdir / f"{table}.sqlite"
        write_config(
            config,
            table=table,
            variant=variant,
            shoe_port=link,
            journal=journal,
            publish=f"connect:{frontend}",
            snapshot=snapshot,
            control=control,
            token_sha256=token_digest(self.token),
            betting_seconds=o.betting_seconds,
            result_seconds=o.result_seconds,
            camera_deck=o.camera_deck if k <= o.camera_tables else None,
            protocol="lines" if line_table else "slp1",
            segment_kb=o.segment_kb,
        )
        controller = ControllerProcess(
            [python, "-m", "table_controller", "-vv", "run", "--config", str(config)], log_file
        )
        controller.start()
        stack.callback(self._stop_controller, table, controller)
        record = TableRecord(table, variant, str(journal), protocol="lines" if line_table else "slp1")
        return _Table(record, shoe, controller, snapshot, control, log_file)

    def _stop_controller(self, table: str, controller: ControllerProcess) -> None:
        status = controller.stop()
        if status not in (0, None):
            self.errors.append(f"{table}: controller exited with status {status} on SIGTERM")

    def _start_subscribers(
        self, backend: str, context: zmq.Context[Any], stack: ExitStack
    ) -> list[Subscriber]:
        o = self.options
        snapshots = {t.record.table: t.snapshot for t in self.tables}
        queues = {t.record.table: t.dealer_queue for t in self.tables}
        subs = [
            Subscriber(
                "floor", backend, snapshots, context, dealer_queues=queues, latency=self.latency
            )
        ]
        subs += [
            Subscriber(f"fast{n}", backend, snapshots, context) for n in range(1, o.subscribers + 1)
        ]
        subs += [
            Subscriber(f"slow{n}", backend, snapshots, context, slow=True, seed=o.seed + n)
            for n in range(1, o.slow_subscribers + 1)
        ]
        for s in subs:
            s.start()
            stack.callback(s.stop)
        return subs

    def _start_hostile(self, frontend: str, backend: str, stack: ExitStack) -> HostileClients:
        """Hostile clients at every table's snapshot and control endpoint and at the proxy.

        They get the endpoints and the kill times, never the supervisor token."""
        targets = [
            HostileTarget(
                t.record.table, t.snapshot, t.control, t.kills,
                alive=lambda c=t.controller: c.alive,  # type: ignore[misc]
            )
            for t in self.tables
        ]
        hostile = HostileClients(self.options.hostile, targets, frontend, backend, self.options.seed)
        stack.callback(hostile.stop)
        return hostile.start()

    # ------------------------------------------------------------------ dealing
    def _deal(self, context: zmq.Context[Any]) -> None:
        o = self.options
        self._context = context
        for n, t in enumerate(self.tables):
            game = load_game(t.record.variant)
            t.dealer = RemoteDealer(
                t.record,
                game,
                t.shoe,
                ControlClient(t.control, context),
                t.dealer_queue,
                o,
                token=self.token,
                rng=random.Random(o.seed * 7919 + n),
                on_draw=self.latency.drawn,
                camera=n < o.camera_tables,
            )
            t.thread = threading.Thread(
                target=t.dealer.run,
                args=(self._stop,),
                name=f"dealer-{t.record.table}",
                daemon=True,
            )
            t.thread.start()
        killer = None
        if o.kill_every:
            killer = threading.Thread(target=self._killer, name="killer", daemon=True)
            killer.start()
        total = o.tables * o.rounds
        deadline = time.monotonic() + 60 + o.rounds * o.table_timeout
        next_line = 0.0
        try:
            while not all(t.dealer.finished.is_set() for t in self.tables if t.dealer):
                if self._stop.wait(0.5):
                    break
                self._revive_dead_controllers()
                if self.archive_side is not None:
                    self.archive_side.revive()
                now = time.monotonic()
                if self.progress is not None and now >= next_line:
                    next_line = now + 1.0
                    self.progress(*self._status(total))
                if now > deadline:
                    self.errors.append("the run did not finish in time")
                    break
        finally:
            self._stop.set()
            if killer is not None:
                killer.join(timeout=30)
            for t in self.tables:
                if t.thread is not None:
                    t.thread.join(timeout=30)
        if self.progress is not None:
            self.progress(*self._status(total))

    def _status(self, total: int) -> tuple[int, int, str]:
        started = sum(min(t.record.rounds_started, self.options.rounds) for t in self.tables)
        faults = sum(len(t.record.faults) for t in self.tables)
        kills = sum(len(t.kills) for t in self.tables)
        return (
            started,
            total,
            f"faults {faults}, kills {kills}, cards {sum(len(t.record.draws) for t in self.tables)}",
        )

    def _killer(self) -> None:
        o = self.options
        assert o.kill_every is not None
        while not self._stop.wait(o.kill_every * self.rng.uniform(0.5, 1.5)):
            busy = [
                t for t in self.tables if t.dealer is not None and not t.dealer.finished.is_set()
            ]
            if not busy:
                return
            # Any table, finished or not: a studio's crashes do not seek out the busiest
            # table, and a table that lags must not draw every kill once the others are done.
            t = self.rng.choice(self.tables)
            with self._kill_lock:
                t.kills.append(time.time())
                t.killed_in.append(t.dealer.state if t.dealer is not None else "starting")
                t.record.restarts += 1
                t.controller.kill_and_restart()
            self._restore_camera(t)

    def _restore_camera(self, t: _Table) -> None:
        """The restarted controller's camera must see the cards still on the layout."""
        if t.dealer is not None and t.dealer.camera and self._context is not None:
            threading.Thread(
                target=t.dealer.restore_camera,
                args=(ControlClient(t.control, self._context, timeout=0.5), self._stop),
                name=f"relay-{t.record.table}",
                daemon=True,
            ).start()

    def _revive_dead_controllers(self) -> None:
        with self._kill_lock:
            for t in self.tables:
                if not t.controller.alive and t.controller.proc is not None:
                    status = t.controller.proc.returncode
                    self.errors.append(
                        f"{t.record.table}: controller died by itself (status {status}); see its log"
                    )
                    t.kills.append(time.time())
                    t.controller.start()
                    self._restore_camera(t)

    # ------------------------------------------------------------------ the end
    def _finish(self, subscribers: list[Subscriber]) -> dict[str, Any]:
        """Stop the controllers cleanly, let every subscriber catch up, read the shoes' counters."""
        for t in self.tables:
            self._stop_controller(t.record.table, t.controller)
        scratch = CheckResult()
        last = {
            t.record.table: read_journal(Path(t.record.journal), t.record.table, scratch).last_seq
            for t in self.tables
        }
        deadline = time.monotonic() + 60 + 0.5 * self.options.tables
        for s in subscribers:
            if not s.wait_caught_up(last, timeout=max(0.0, deadline - time.monotonic())):
                behind = {k: v.last_seq for k, v in s.streams.items() if v.last_seq < last[k]}
                log.warning("subscriber %s did not catch up: %s", s.name, behind)
        shoe_counts: dict[str, int] = {}
        for t in self.tables:
            try:
                stats = t.shoe.stats()
            except Exception as e:  # a shoe that cannot answer fails the run
                self.errors.append(f"{t.record.table}: shoe stats: {e}")
                continue
            t.record.device_stats = stats
            counters = _LINE_COUNTERS if t.record.line_reader else _SHOE_COUNTERS
            for kind, key in counters.items():
                shoe_counts[kind] = shoe_counts.get(kind, 0) + int(stats.get(key, 0))
            resent = int(stats.get("retransmissions", 0))
            shoe_counts["retransmissions"] = shoe_counts.get("retransmissions", 0) + resent
        return shoe_counts

    def _report(
        self, result: CheckResult, shoe_counts: dict[str, Any], seconds: float, workdir: Path | None
    ) -> SoakReport:
        o = self.options
        faults = {k: 0 for k in o.faults}
        faults.update({k: v for k, v in shoe_counts.items() if k in (*SHOE_FRAME_FAULTS, *LINE_FAULTS)})
        faults.update(faults_by_kind([t.record for t in self.tables]))
        if o.slow_subscribers:
            faults["slow"] = o.slow_subscribers
        kills = sum(len(t.kills) for t in self.tables)
        faults["kill"] = kills
        c = result.counts
        counts = {
            "tables": o.tables,
            "rounds": c["rounds"],
            "results": c["results"],
            "voided": c["voided"],
            "paused": c["pauses"],
            "cards": c["cards"],
            "burn_cards": c["burn_cards"],
            "drawn_by_shoes": c["drawn_by_shoes"],
            "cards_in_voided_rounds": c["cards_in_voided_rounds"],
            **(
                {
                    "line_tables": o.line_tables,
                    "lost_lines": c["lost_lines"],
                    "lines_read_twice": c["lines_read_twice"],
                    "misdeals_called_for_missing_cards": c["misdeals_called_for_missing_cards"],
                    "cards_from_line_noise": c["cards_from_line_noise"],
                }
                if o.line_tables
                else {}
            ),
            "events": c["events"],
            "restarts": kills,
            "kills_by_state": dict(
                Counter(state for t in self.tables for state in t.killed_in).most_common()
            ),
            "faults": faults,
            "shoe_retransmissions": shoe_counts.get("retransmissions", 0),
            "resnapshots": c["resnapshots"],
            "events_bridged_by_snapshot": c["events_bridged_by_snapshot"],
            "latency_samples": len(self.latency.samples),
            **(self.hostile.counts() if self.hostile is not None else {}),
            **self.archive_counts,
            **self.evidence_counts,
        }
        return SoakReport(
            result.ok,
            result.checks,
            counts,
            self.latency.percentiles(),
            result.problems,
            seconds,
            str(workdir) if workdir else None,
        )


def run_soak(options: SoakOptions, progress: ProgressHook | None = None) -> SoakReport:
    """Run one soak and return its report (every process is stopped when it returns or raises)."""
    return Soak(options, progress).run()
