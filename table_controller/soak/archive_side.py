"""The soak's studio archive: the archive and the studio API beside the tables, under kills.

With ``soak --archive`` the soak starts ``table-controller archive follow`` (every
table's snapshot endpoint; one table through a :class:`CuttableRelay`) and
``table-controller studio serve`` in processes of their own, over a throw-away
PostgreSQL server (or a SQLite file), and while the tables deal it does, in turn and
over again: SIGKILL the archive and start it again, SIGKILL the studio API and start
it again, SIGKILL PostgreSQL (every backend at once: a crash) and start it a few
seconds later, and cut the relayed table off for a few seconds. At the end, once the
controllers have stopped, two checks:

* ``archive_matches_journals``: the archive holds exactly each journal's events, the
  same seqs, bodies and hashes, nothing missing and nothing more;
* ``api_rounds_match_journals``: every round of every journal, asked of the studio API
  by id, is the round assembled from the journal's own rows, and its outcome and
  payouts are those of the journal's result (the soak's own check re-judges those
  with the rules core);
* ``archive_side_ran``: neither the archive nor the studio API died by itself, every
  kill and cut was done, and the archive caught up with every journal in time.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

import msgspec

from table_controller.archive import open_archive
from table_controller.journal.store import JournalReader
from table_controller.soak.controller_process import ControllerProcess
from table_controller.soak.postgres_server import PostgresServer
from table_controller.soak.relay import CuttableRelay
from table_controller.studio.rounds import assemble_round, shoe_starts

log = logging.getLogger(__name__)

ARCHIVE_CHECKS = ("archive_matches_journals", "api_rounds_match_journals", "archive_side_ran")
CHAOS = ("kill-archive", "kill-studio", "kill-postgresql", "cut-table")


class ArchiveSide:
    """The archive and studio API processes, their database and the chaos done to them."""

    def __init__(self, backend: str, workdir: Path, python: str, log_file: IO[str], rng: random.Random,
                 chaos_every: float) -> None:
        self.backend = backend
        self.workdir = workdir
        self.python = python
        self.log_file = log_file
        self.rng = rng
        self.chaos_every = chaos_every
        self.pg: PostgresServer | None = None
        self.db = ""
        self.key = ""
        self.relay: CuttableRelay | None = None
        self.archive: ControllerProcess | None = None
        self.studio: ControllerProcess | None = None
        self.studio_port = 0
        self.done: dict[str, int] = {c: 0 for c in CHAOS}
        self.errors: list[str] = []
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def _cli(self, *words: str) -> list[str]:
        return [self.python, "-m", "table_controller", *words]

    def start(self, tables: list[tuple[str, str]]) -> None:
        """Start the database, make an API key, and start the archive and the studio API
        following ``tables`` ((table, snapshot endpoint)); the last table goes through the relay."""
        if self.backend == "postgresql":
            self.pg = PostgresServer().start()
            self.db = self.pg.url()
        else:
            self.db = str(self.workdir / "archive.sqlite")
        made = subprocess.run(self._cli("studio", "key", "--db", self.db, "--name", "soak", "--tables", "*",
                                        "--json"), capture_output=True, text=True, timeout=60, check=False)
        if made.returncode != 0:
            raise RuntimeError(f"studio key: {made.stderr.strip()}")
        self.key = json.loads(made.stdout)["key"]
        sources = []
        for k, (table, endpoint) in enumerate(tables):
            if k == len(tables) - 1:
                host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
                self.relay = CuttableRelay(host, int(port))
                endpoint = self.relay.endpoint
            sources += ["--table", f"{table}={endpoint}"]
        self.archive = ControllerProcess(self._cli("archive", "follow", "--db", self.db, "--poll", "0.2", *sources),
                                         self.log_file, block_stop_signals=False, name="archive")
        self.archive.start()
        from table_controller.soak.runner import free_port  # the soak's own port picker

        self.studio_port = free_port(random.Random())
        self.studio = ControllerProcess(self._cli("studio", "serve", "--db", self.db, "--port", str(self.studio_port)),
                                        self.log_file, block_stop_signals=False, name="studio")
        self.studio.start()
        self._thread = threading.Thread(target=self._chaos, name="archive-chaos", daemon=True)
        self._thread.start()

    # -- while the tables deal -----------------------------------------------------------
    def _chaos(self) -> None:
        order = [c for c in CHAOS if c != "kill-postgresql" or self.pg is not None]
        self.rng.shuffle(order)
        k = 0
        while not self._stop.wait(self.chaos_every * self.rng.uniform(0.5, 1.5)):
            action = order[k % len(order)]
            k += 1
            try:
                self._do(action)
            except Exception as e:  # the soak's own fault: reported, the run goes on
                log.exception("archive chaos %s failed", action)
                self.errors.append(f"archive chaos {action}: {type(e).__name__}: {e}")

    def _do(self, action: str) -> None:
        with self._lock:
            self._note(f"{action}")
            if action == "kill-archive" and self.archive is not None:
                self.archive.kill_and_restart()
            elif action == "kill-studio" and self.studio is not None:
                self.studio.kill_and_restart()
            elif action == "kill-postgresql" and self.pg is not None:
                self.pg.kill()
                if not self._stop.wait(self.rng.uniform(1.0, 3.0)):
                    self.pg.start()  # (stopping: check() starts it, close() must not)
            elif action == "cut-table" and self.relay is not None:
                self.relay.cut()
                self._stop.wait(self.rng.uniform(1.5, 4.0))
                self.relay.restore()
            self.done[action] += 1

    def _note(self, text: str) -> None:
        self.log_file.write(f"soak: {time.strftime('%H:%M:%S')} archive chaos: {text}\n")
        self.log_file.flush()

    def revive(self) -> None:
        """Start again an archive or studio process that died by itself (and say so)."""
        with self._lock:
            for name, proc in (("archive", self.archive), ("studio", self.studio)):
                if proc is not None and proc.proc is not None and not proc.alive:
                    self.errors.append(f"the {name} process died by itself (status {proc.proc.returncode})")
                    proc.start()

    # -- at the end ------------------------------------------------------------------------
    def check(self, journals: dict[str, Path], problems: dict[str, list[str]], timeout: float) -> dict[str, Any]:
        """Stop the chaos, let the archive catch up with the journals (the controllers have
        stopped), and run the two checks into ``problems``; returns the counts."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self.relay is not None:
            self.relay.restore()
        if self.pg is not None and not self.pg.running:
            self.pg.start()
        self.revive()
        for c in ARCHIVE_CHECKS:
            problems.setdefault(c, [])
        journal_rows = {t: [(r.seq, r.hash, r.body) for r in _records(p)] for t, p in journals.items()}
        last = {t: rows[-1][0] if rows else 0 for t, rows in journal_rows.items()}
        live = self._archived(last)
        # The controllers have stopped, and their replay endpoints with them: what they journaled
        # after the archive's last turn is archived from the journal files, as a studio archives
        # a table that has closed (docs/archive.md).
        if self.archive is not None:
            self.archive.stop()
        caught_up = self._from_files(journals, last, timeout)
        problems["archive_side_ran"] += self.errors
        if not caught_up:
            problems["archive_side_ran"].append("the archive did not catch up with the journals in time")
        rounds_checked = 0
        with open_archive(self.db) as archive:
            for table, rows in journal_rows.items():
                archived = [(e.record.seq, e.record.hash, e.record.body) for e in archive.events(table)]
                if archived != rows:
                    first = next((a[0] for a, b in zip(archived, rows, strict=False) if a != b),
                                 min(len(archived), len(rows)) + 1)
                    problems["archive_matches_journals"].append(
                        f"{table}: the archive holds {len(archived)} events, the journal {len(rows)}; "
                        f"they differ from seq {first}")
        conn = http.client.HTTPConnection("127.0.0.1", self.studio_port, timeout=10)
        for table, path in journals.items():
            records = _records(path)
            round_ids = list(dict.fromkeys(r.round for r in records if r.type == "round.start" and r.round))
            shoes = shoe_starts(r for r in records if r.type == "shoe")
            for round_id in round_ids:
                expected = assemble_round(table, round_id, [r for r in records if r.round == round_id], shoes)
                got = self._get(conn, f"/v1/tables/{table}/rounds/{round_id}")
                rounds_checked += 1
                want = msgspec.to_builtins(expected) if expected is not None else None
                if got != want:
                    problems["api_rounds_match_journals"].append(
                        f"{table} {round_id}: the API's round is not the journal's")
                    continue
                result = next((json.loads(r.body) for r in records if r.round == round_id
                               and r.type == "round.result"), None)
                if result is not None and (got["outcome"], got["payouts"]) != (result["outcome"], result["payouts"]):
                    problems["api_rounds_match_journals"].append(
                        f"{table} {round_id}: the API's outcome or payouts are not the journal's result's")
        conn.close()
        return {"archive": self.backend, "archive_caught_up": caught_up,
                "archived_live": sum(live.values()), "archived_from_files": sum(last.values()) - sum(live.values()),
                "api_rounds_checked": rounds_checked,
                "archive_chaos": dict(self.done),
                "archive_alerts": self._alert_kinds()}

    def _archived(self, last: dict[str, int]) -> dict[str, int]:
        """Each table's last archived seq (0 when the archive cannot be read)."""
        try:
            with open_archive(self.db) as archive:
                return {t: min(archive.last(t)[0], seq) for t, seq in last.items()}
        except Exception as e:
            log.warning("archive not readable: %s", e)
            return {t: 0 for t in last}

    def _from_files(self, journals: dict[str, Path], last: dict[str, int], timeout: float) -> bool:
        """``archive follow --once`` from the journal files until the archive holds them all."""
        sources = [w for t, p in journals.items() for w in ("--table", f"{t}=file:{p}")]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(self._archived(last)[t] >= seq for t, seq in last.items()):
                return True
            subprocess.run(self._cli("archive", "follow", "--db", self.db, "--once", *sources),
                           stdout=subprocess.DEVNULL, stderr=self.log_file, timeout=max(1.0, timeout), check=False)
        return False

    def _get(self, conn: http.client.HTTPConnection, path: str) -> Any:
        for attempt in range(20):  # the studio API may be starting again after a kill
            try:
                conn.request("GET", path, headers={"authorization": f"Bearer {self.key}"})
                reply = conn.getresponse()
                body = reply.read()
                return json.loads(body) if reply.status == 200 else {"status": reply.status}
            except (OSError, http.client.HTTPException):
                conn.close()
                time.sleep(0.25 * (attempt + 1))
        return {"status": "unreachable"}

    def _alert_kinds(self) -> dict[str, int]:
        try:
            with open_archive(self.db) as archive:
                kinds: dict[str, int] = {}
                for a in archive.alerts():
                    kinds[a.kind] = kinds.get(a.kind, 0) + 1
                return kinds
        except Exception as e:
            return {"unreadable": 1} if e else {}

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)  # a chaos step under way must not start PostgreSQL after close
        for name, proc in (("archive", self.archive), ("studio", self.studio)):
            if proc is not None:
                proc.stop()
                log.debug("%s stopped", name)
        if self.relay is not None:
            self.relay.close()
        if self.pg is not None:
            self.pg.close()


def _records(path: Path) -> list[Any]:
    reader = JournalReader(path)
    try:
        return list(reader.records())
    finally:
        reader.close()
