"""Flood benchmark: a hostile SLP/1 shoe floods a real table controller (issue 13).

Starts ``table-controller run`` in a child process (mock panel, journal and
shoe pseudo-terminal in a temporary folder, publish/snapshot/control sockets on
free loopback ports), so that its RSS is measured alone. The benchmark itself
is the shoe, on the pty's master side, written here from the SLP/1 spec
(``shoe-protocol.md``) rather than with the project's codec:

1. it answers the controller's RESET with a HELLO echoing the nonce (seq 0);
2. it floods ``CARD,<code>,RO,<count>`` frames (seqs 1, 2, 3, ... wrapping
   after 65535; counts 1, 2, 3, ...) at ``--rate`` frames/s for ``--seconds``
   without waiting for ACKs (the spec's window of 8 ignored), reading the
   controller's ACKs meanwhile. Like a serial line with nobody reading, what
   the pty does not take is lost (``--lossless``: the shoe queues it instead,
   as a TCP adapter would); a RESET is answered at once (new boot id, HELLO,
   every unACKed frame re-sent under new seqs);
3. it then closes the stream with ``EMPTY,<cards>`` (the controller journals
   its deck audit, whose ``seen`` counts every card it took) and runs
   go-back-N from the last ACK (everything not ACKed is re-sent, in order,
   without losing bytes; back to the last ACK after 250 ms without progress)
   until every frame is ACKed or ``--timeout`` passes.

The controller's RSS (``/proc/<pid>/status`` VmRSS) is sampled every 100 ms.
After the controller is stopped (SIGTERM) its journal is opened read-only:
the link state stored with the last event must be (the final boot id, the seq
of the last frame sent) -- each delivered frame is journaled with the link
state, so that is the proof that every frame was delivered -- and the audit of
the EMPTY event must have seen exactly the cards sent, code by code (none lost,
none twice: card codes are scattered over the deck, so a block of cards lost
and another taken twice shows even when the totals agree). A shoe that ignores
its window can have a frame on the wire more than 65536 frames ahead of the
last ACK, so with the seq of a frame not yet delivered
(``max_frames_ahead_of_ack``, ``seq_reused_while_unacked``).
Cards outside a round are ``wrong-order`` alerts, rate-limited by the
controller (20 per kind per 10 s, then one summary).

Prints one JSON object. ``frames_sent``/``frames_acked`` count distinct frames
(the cards and the closing EMPTY; HELLOs and re-sends not included);
``drain_seconds`` runs from the end of the flood to the last ACK; ``rss_mb_peak``
is the highest sample from the start of the flood to the end of the drain.
Target (issue 13): a 10-second flood at 10,000 frames/s keeps the controller
under 150 MB, with every card delivered afterwards.
"""

from __future__ import annotations

import argparse
import binascii
import errno
import json
import os
import random
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from firmware_interfaces.shoe import open_pty_pair  # noqa: E402
from table_controller.config import DEFAULT_PINS  # noqa: E402
from table_controller.journal import JournalReader  # noqa: E402

MASK = 0xFFFF
RETRANSMIT = 0.25  # the spec's retransmission interval
DECK = [r + s for r in "A23456789TJQK" for s in "SHDC"]
CHUNK = 16384  # bytes per write() at most
TARGET_RSS_MB = 150


def card_code(index: int) -> str:
    """Card ``index``'s code: scattered over the deck, so that a block of cards lost and
    another delivered twice (the same number of cards) shows in the audit's per-code counts."""
    return DECK[(((index * 0x9E3779B1) & 0xFFFFFFFF) >> 16) % 52]


def crc(body: bytes) -> bytes:
    return f"{binascii.crc_hqx(body, 0xFFFF):04X}".encode()


def frame(seq: int, type_: str, *args: str) -> bytes:
    body = ",".join((str(seq & MASK), type_, *args)).encode("ascii")
    return b"$" + body + b"*" + crc(body) + b"\r\n"


class FrameReader:
    """The controller's bytes -> (seq, type, args); bad frames are counted, never raised."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.bad = 0

    def feed(self, data: bytes) -> list[tuple[int, str, list[str]]]:
        self._buf += data
        out: list[tuple[int, str, list[str]]] = []
        while True:
            start = self._buf.find(b"$")
            if start < 0:
                self._buf.clear()
                return out
            end = self._buf.find(b"\r\n", start)
            if end < 0:
                del self._buf[:start]
                if len(self._buf) > 96:  # an over-long partial frame: drop its '$'
                    del self._buf[:1]
                    continue
                return out
            raw = bytes(self._buf[start + 1:end])
            del self._buf[:end + 2]
            raw = raw[raw.rfind(b"$") + 1:]  # a '$' inside restarts the frame
            body, star, check = raw.rpartition(b"*")
            if not star or check != crc(body):
                self.bad += 1
                continue
            fields = body.decode("ascii", "replace").split(",")
            try:
                out.append((int(fields[0]), fields[1], fields[2:]))
            except (ValueError, IndexError):
                self.bad += 1
        return out


class HostileShoe:
    """The shoe on the pty master: sessions, the flood, go-back-N; single-threaded.

    Frames are numbered by index: card ``i`` (1-based) is ``CARD,<card_code(i)>,RO,<i>``,
    and index ``last`` (set for the drain) is the closing ``EMPTY``. In a session whose first
    frame is index ``first``, index ``i`` has seq ``(i - first + 1) mod 65536``; HELLO is seq 0.
    """

    def __init__(self, fd: int, *, lossless: bool, rng: random.Random) -> None:
        self.fd = fd
        self.lossless = lossless
        self.rng = rng
        self.reader = FrameReader()
        # session
        self.boot = ""
        self.nonce = ""
        self.first = 1
        self.hello_acked = False
        self.hello_sent_at = float("-inf")
        # stream
        self.produced = 0  # cards drawn so far
        self.last: int | None = None  # index of the closing EMPTY once the flood is over
        self.cursor = 1  # next index to put on the wire
        self.sent_max = 0  # highest index put on the wire in this session
        self.acked = 0  # every index <= acked is ACKed
        self.last_progress = time.monotonic()
        self.last_ack_at: float | None = None
        self._head = b""  # the unwritten rest of a frame that is half on the wire
        self._ctl: list[bytes] = []  # HELLO and command ACKs: go before cards
        self._encoded: dict[int, bytes] = {}  # index -> frame, in this session
        self.resets_seen: list[float] = []
        self.trace: list[tuple[float, str, int, int]] = []  # wall time, what, index, seq
        #: How far ahead of the last ACK a whole frame on the wire was at most: from 32768
        #: the controller takes it for an old one, from 65536 its seq is one not yet ACKed.
        self.max_ahead = 0
        self.stats: Counter[str] = Counter()

    # -- frames --------------------------------------------------------------
    def seq_of(self, index: int) -> int:
        return (index - self.first + 1) & MASK

    def wire(self, index: int) -> bytes:
        """Frame ``index`` in this session (encoded once per session: go-back-N re-sends)."""
        data = self._encoded.get(index)
        if data is None:
            if self.last is not None and index == self.last:
                data = frame(self.seq_of(index), "EMPTY", str(self.produced))
            else:
                data = frame(self.seq_of(index), "CARD", card_code(index), "RO", str(index))
            self._encoded[index] = data
        return data

    def start_session(self, nonce: str, now: float) -> None:
        """A new session answering ``nonce``: HELLO, then every unACKed frame under new seqs."""
        self.boot = f"{self.rng.randrange(1 << 32):08X}"
        self.nonce = nonce
        self.first = self.acked + 1
        self.cursor = self.first
        self._encoded.clear()
        self.trace.append((time.time(), "session " + self.boot, self.first, 0))
        self.sent_max = self.acked
        self.hello_acked = False
        self._send_hello(now)
        self.stats["sessions"] += 1

    def _send_hello(self, now: float) -> None:
        self._ctl = [c for c in self._ctl if b",HELLO," not in c]
        self._ctl.append(frame(0, "HELLO", "FLOODCO", "Hostile-1", "SN-FLOOD", "0.1", "SLP1",
                               self.boot, self.nonce))
        self.hello_sent_at = now
        self.stats["hellos_sent"] += 1

    # -- input ---------------------------------------------------------------
    def read(self, now: float) -> None:
        """Everything the controller sent so far: ACKs and commands."""
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            except OSError as e:
                if e.errno == errno.EIO:  # nobody has the slave open (yet, or any more)
                    return
                raise
            if not data:
                return
            for seq, type_, args in self.reader.feed(data):
                if type_ == "ACK":
                    self._on_ack(seq, args, now)
                else:
                    self._on_command(seq, type_, args, now)

    def _on_command(self, seq: int, type_: str, args: list[str], now: float) -> None:
        self._ctl.append(frame(seq, "ACK"))
        self.stats[f"cmd_{type_.lower()}"] += 1
        if type_ == "RESET" and args and args[0] != self.nonce:
            self.resets_seen.append(now)
            self.start_session(args[0], now)

    def _on_ack(self, seq: int, args: list[str], now: float) -> None:
        self.stats["acks_received"] += 1
        if not args or args[0] != self.boot:
            self.stats["acks_other_session"] += 1
            return
        done = self.acked - self.first + 1  # frames of this session ACKed
        if seq == 0 and done == 0 and not self.hello_acked:
            self.hello_acked = True
            return
        step = (seq - done) & MASK
        if step == 0:
            self.stats["acks_repeated"] += 1
            return
        if self.acked + step > self.sent_max:
            self.stats["acks_unexpected"] += 1  # names a frame not sent in this session
            return
        self.hello_acked = True  # an ACK covers every earlier frame
        self.acked += step
        self.last_progress = self.last_ack_at = now
        if not self.trace or self.trace[-1][1] != "acked" or time.time() - self.trace[-1][0] > 0.05:
            self.trace.append((time.time(), "acked", self.acked, seq))

    # -- output --------------------------------------------------------------
    def wants_to_write(self, limit: int) -> bool:
        return bool(self._head or self._ctl or self.cursor <= limit)

    def _write(self, data: bytes) -> int:
        try:
            return os.write(self.fd, data)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError as e:
            if e.errno == errno.EIO:
                return 0
            raise

    def pump(self, limit: int, *, lossy: bool) -> None:
        """Write the half-written frame, HELLO/ACKs, then frames cursor..limit, while the pty
        takes them. ``lossy``: what it does not take is lost (the cursor moves on anyway)."""
        if self._head:
            n = self._write(self._head)
            self.stats["bytes_written"] += n
            self._head = self._head[n:]
            if self._head:
                return
        while self._ctl or self.cursor <= limit:
            parts: list[bytes] = []
            kinds: list[int] = []  # -1: a control frame, else the frame's index
            size = 0
            while self._ctl and size < CHUNK:
                parts.append(self._ctl.pop(0))
                kinds.append(-1)
                size += len(parts[-1])
            index = self.cursor
            while index <= limit and size < CHUNK:
                parts.append(self.wire(index))
                kinds.append(index)
                size += len(parts[-1])
                index += 1
            data = b"".join(parts)
            n = self._write(data)
            self.stats["bytes_written"] += n
            offset = 0
            for k, (part, kind) in enumerate(zip(parts, kinds, strict=False)):
                end = offset + len(part)
                if end <= n:  # on the wire
                    self._sent(kind)
                elif offset < n:  # half on the wire
                    if lossy:
                        self.stats["bytes_lost"] += end - n
                        self._lost(kind)
                    else:
                        self._head = part[n - offset:]
                        self._sent(kind)
                elif lossy:
                    self.stats["bytes_lost"] += len(part)
                    self._lost(kind)
                else:  # not taken: the control frames go back, the cursor stays
                    self._ctl[0:0] = [p for p, c in zip(parts[k:], kinds[k:], strict=False) if c < 0]
                    return
                offset = end
            if n < len(data):
                if lossy and self.cursor <= limit:  # the rest of what is due is lost too
                    self.stats["frames_lost"] += limit - self.cursor + 1
                    self.sent_max = max(self.sent_max, limit)
                    self.cursor = limit + 1
                return

    def _sent(self, kind: int) -> None:
        if kind < 0:
            return
        if kind <= self.sent_max:
            self.stats["frames_resent"] += 1
        self.sent_max = max(self.sent_max, kind)
        self.max_ahead = max(self.max_ahead, kind - self.acked)
        self.cursor = kind + 1
        self.stats["frames_written"] += 1

    def _lost(self, kind: int) -> None:
        if kind < 0:
            self.stats["control_frames_lost"] += 1
            return
        self.sent_max = max(self.sent_max, kind)
        self.cursor = kind + 1
        self.stats["frames_lost"] += 1

    def step(self, limit: int, *, lossy: bool, wait: float) -> None:
        """One turn: HELLO retransmission, write, wait for the pty, read."""
        now = time.monotonic()
        if self.boot and not self.hello_acked and now - self.hello_sent_at >= RETRANSMIT:
            self._send_hello(now)  # and the session's frames again after it
            self.cursor = self.acked + 1
        self.pump(limit, lossy=lossy)
        writing = [self.fd] if self.wants_to_write(limit) and not lossy else []
        try:
            select.select([self.fd], writing, [], wait)
        except InterruptedError:
            pass
        self.read(time.monotonic())


class RssSampler(threading.Thread):
    """VmRSS of one process every ``interval`` seconds (kB), until stopped."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        super().__init__(name="rss-sampler", daemon=True)
        self.pid, self.interval = pid, interval
        self.samples: list[tuple[float, int]] = []
        self.halt = threading.Event()

    def read(self, field: str = "VmRSS") -> int | None:
        try:
            with open(f"/proc/{self.pid}/status", encoding="ascii") as f:
                for line in f:
                    if line.startswith(field + ":"):
                        return int(line.split()[1])
        except (OSError, ValueError):
            return None
        return None

    def run(self) -> None:
        while not self.halt.is_set():
            kb = self.read()
            if kb is not None:
                self.samples.append((time.monotonic(), kb))
            self.halt.wait(self.interval)

    def peak(self, since: float, until: float) -> int | None:
        values = [kb for t, kb in self.samples if since <= t <= until]
        return max(values) if values else None


def cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def die_with_parent() -> None:
    """In the child before exec: SIGKILL when the benchmark dies, however it dies (Linux)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(path: Path, shoe_port: str, journal: Path) -> None:
    pins = "\n".join(f"{name} = {pin}" for name, pin in DEFAULT_PINS.items())
    ports = [free_port() for _ in range(3)]
    path.write_text(
        f"""# benchmarks/flood.py
[table]
id = "F01"
variant = "baccarat"
betting_seconds = 15
result_seconds = 3

[sources]
cards = ["shoe"]

[shoe]
port = "{shoe_port}"

[panel]
gpio = "mock"
{pins}

[publish]
endpoint = "tcp://127.0.0.1:{ports[0]}"
snapshot = "tcp://127.0.0.1:{ports[1]}"
control = "tcp://127.0.0.1:{ports[2]}"

[journal]
path = "{journal}"
""",
        encoding="utf-8",
    )


def mb(kb: int | None) -> float | None:
    return None if kb is None else round(kb / 1024, 1)


def read_journal(path: Path) -> dict[str, Any]:
    """What the journal holds: link state, event and alert counts, the EMPTY's audit."""
    out: dict[str, Any] = {}
    with JournalReader(path) as journal:
        out["link_state"] = journal.link_state
        out["events"] = journal.event_count()
        types: Counter[str] = Counter()
        kinds: Counter[str] = Counter()
        summarised: Counter[str] = Counter()
        audit_seen = None
        for record in journal.records():
            types[record.type] += 1
            if record.type == "alert":
                event = json.loads(record.body)  # the stored JSON, read as the audit's plain values
                kinds[str(event.get("kind"))] += 1
                m = re.match(r"(\d+) more (\S+) alerts in", str(event.get("detail", "")))
                if m:
                    summarised[m.group(2)] += int(m.group(1))
            elif record.type == "shoe":
                event = json.loads(record.body)
                if event.get("event") == "empty":
                    audit = event.get("audit", {})
                    audit_seen = audit.get("seen")
                    decks = int(audit.get("decks", 0))
                    out["audit_counts"] = {
                        code: decks - int(audit.get("missing", {}).get(code, 0))
                        + int(audit.get("extra", {}).get(code, 0)) for code in DECK}
        out["types"], out["kinds"], out["summarised"] = dict(types), dict(kinds), dict(summarised)
        out["audit_seen"] = audit_seen
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {
        "benchmark": "flood", "seconds": args.seconds, "rate": args.rate,
        "wire": "lossless (the shoe queues what the pty does not take)" if args.lossless
        else "lossy (what the pty does not take is lost, as on a serial line)",
        "python": sys.version.split()[0], "cpus": os.cpu_count(),
        "load_avg_1min_at_start": round(os.getloadavg()[0], 2),
    }
    cards = int(args.seconds * args.rate)
    with tempfile.TemporaryDirectory(prefix="flood-", dir=args.tmpdir) as tmp:
        folder = Path(tmp)
        journal = folder / "F01.sqlite"
        master, slave = open_pty_pair()
        config = folder / "F01.toml"
        write_config(config, slave, journal)
        log_path = folder / "controller.log"
        log = log_path.open("w", encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
        proc = subprocess.Popen(
            [sys.executable, "-m", "table_controller", "run", "--config", str(config)],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            preexec_fn=die_with_parent,  # noqa: PLW1509 - no other thread runs yet
        )
        sampler = RssSampler(proc.pid)
        sampler.start()
        shoe = HostileShoe(master, lossless=args.lossless, rng=random.Random(args.seed))
        try:
            try:
                result.update(flood(proc, shoe, sampler, cards, args))
            except SystemExit:
                log.flush()
                tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
                print("\n".join(["controller log (last lines):", *tail]), file=sys.stderr)
                raise
            stop_at = time.monotonic()
            proc.terminate()
            try:
                result["controller_exit"] = proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait(timeout=5)
                result["controller_exit"] = f"killed: no exit within 20 s of SIGTERM ({code})"
            result["stop_seconds"] = round(time.monotonic() - stop_at, 2)
        finally:
            sampler.halt.set()
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
            os.close(master)
            log.close()
        sampler.join(timeout=2)
        result.update(journal_figures(journal, shoe, result))
        text = log_path.read_text(encoding="utf-8", errors="replace")
        lines = text.splitlines()
        result["controller_log"] = {
            "lines": len(lines),
            "warnings": sum(" WARNING " in line for line in lines),
            "errors": sum(" ERROR " in line or " CRITICAL " in line for line in lines),
            "tracebacks": text.count("Traceback"),
            "reader_waits": sum("the reader waits" in line for line in lines),
            "stalled_at_expected_seqs": [int(m.group(1)) for m in re.finditer(
                r"stalled at expected seq (\d+)", text)],
            "tail": lines[-10:],
        }
    return result


def flood(proc: subprocess.Popen[bytes], shoe: HostileShoe, sampler: RssSampler, cards: int,
          args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def alive() -> bool:
        if proc.poll() is None:
            return True
        out["controller_died"] = f"exit status {proc.returncode}"
        return False

    # 1. The controller's RESET, our HELLO, its ACK.
    deadline = time.monotonic() + args.start_timeout
    while not shoe.hello_acked:
        if not alive():
            return out
        if time.monotonic() > deadline:
            raise SystemExit(f"flood: no session anchored within {args.start_timeout:g} s "
                             f"(RESETs seen: {len(shoe.resets_seen)})")
        shoe.step(0, lossy=False, wait=0.05)
    shoe.resets_seen.clear()
    shoe.stats["sessions"] = 0
    time.sleep(0.5)  # let the start-up settle: RSS before the flood
    shoe.read(time.monotonic())
    out["rss_mb_start"] = mb(sampler.read())

    # 2. The flood: cards at the rate, ACKs read, no waiting for them.
    t0, t0_wall = time.monotonic(), time.time()
    end = t0 + args.seconds
    while (now := time.monotonic()) < end:
        shoe.produced = min(cards, int((now - t0) * args.rate))
        shoe.step(shoe.produced, lossy=not args.lossless, wait=0.0005)
        if not alive():
            break
    shoe.produced = cards
    shoe.pump(cards, lossy=not args.lossless)
    t1 = time.monotonic()
    out["flood_seconds"] = round(t1 - t0, 3)
    out["acked_at_flood_end"] = shoe.acked
    out["resets_during_flood"] = len(shoe.resets_seen)

    # 3. EMPTY, then go-back-N from the last ACK until everything is ACKed.
    shoe.last = cards + 1
    if not args.lossless:
        shoe.cursor = shoe.acked + 1
    shoe.last_progress = t1
    deadline = t1 + args.timeout
    go_backs = 0
    while shoe.acked < shoe.last and time.monotonic() < deadline and alive():
        now = time.monotonic()
        if (now - shoe.last_progress >= RETRANSMIT and shoe.cursor > shoe.acked + 1
                and shoe.hello_acked):
            shoe.cursor = shoe.acked + 1  # go back to the first frame not ACKed
            shoe.last_progress = now
            go_backs += 1
        shoe.step(shoe.last, lossy=False, wait=0.01)
    t2 = time.monotonic()
    done = shoe.acked >= shoe.last
    last_ack_at = shoe.last_ack_at
    resets_before = len(shoe.resets_seen)

    # 4. Settle: the shoe stays (idle, answering) while the controller may still act.
    settle_end = t2 + args.settle
    while (time.monotonic() < settle_end or not shoe.hello_acked) and alive():
        if time.monotonic() > settle_end + 5:
            break
        shoe.step(shoe.last, lossy=False, wait=0.01)
    out["resets_after_drain"] = len(shoe.resets_seen) - resets_before
    out["resets_during_drain"] = resets_before - out["resets_during_flood"]
    peak = sampler.peak(t0, time.monotonic())
    out.update({
        "frames_sent": shoe.last, "cards_sent": cards,
        "frames_acked": shoe.acked, "all_acked": done,
        "drain_seconds": round((last_ack_at or t2) - t1, 3) if done else None,
        "seconds_to_last_ack": round((last_ack_at or t2) - t0, 3) if done else None,
        "drain_timed_out": not done and proc.poll() is None,
        "rss_mb_peak": mb(peak), "rss_mb_end": mb(sampler.read()),
        "rss_mb_hwm": mb(sampler.read("VmHWM")),
        "controller_cpu_seconds": cpu_seconds(proc.pid),
        "resets_total": len(shoe.resets_seen), "go_backs": go_backs,
        "max_frames_ahead_of_ack": shoe.max_ahead,
        "seq_reused_while_unacked": shoe.max_ahead > MASK + 1,
        "resets_at_seconds": [round(t - t0, 2) for t in shoe.resets_seen],  # from flood start
        "flood_started_at": time.strftime("%H:%M:%S", time.localtime(t0_wall))
        + f".{int(t0_wall % 1 * 1000):03d}",
        "shoe": dict(shoe.stats, bad_frames_from_controller=shoe.reader.bad),
    })
    # The last frame of the final session: EMPTY, or the HELLO of a session that began
    # after every frame was ACKed (nothing left to re-send in it).
    empty_in_it = shoe.first <= shoe.last
    if args.trace:
        out["trace"] = [(time.strftime("%H:%M:%S", time.localtime(t)) + f".{int(t % 1 * 1000):03d}",
                         what, index, seq) for t, what, index, seq in shoe.trace]
    out["final_session"] = {
        "boot_id": shoe.boot, "last_seq": shoe.seq_of(shoe.last) if empty_in_it else 0,
        "last_frame": "EMPTY" if empty_in_it else "HELLO (a session begun after the drain)",
        "hello_acked": shoe.hello_acked,
    }
    return out


def journal_figures(path: Path, shoe: HostileShoe, result: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"journal_bytes": sum(
        p.stat().st_size for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())}
    peak = result.get("rss_mb_peak")
    out["under_150mb"] = (peak is not None and peak < TARGET_RSS_MB
                          and not result.get("controller_died"))
    try:
        j = read_journal(path)
    except Exception as e:  # noqa: BLE001 - a finding, reported in the JSON
        out["journal_error"] = f"{type(e).__name__}: {e}"
        out["all_delivered"] = False
        return out
    link = j["link_state"]
    # Per card code: how often the audit saw it against how often it was sent.
    sent = Counter(card_code(i) for i in range(1, int(result.get("cards_sent") or 0) + 1))
    counts = j.get("audit_counts")
    differing = (sum(counts[c] != sent[c] for c in DECK) if counts is not None else None)
    final = result.get("final_session")
    expected = (final["boot_id"], final["last_seq"]) if final else None
    out.update({
        "last_link_seq": link[1] if link else None,
        "expected_last_seq": expected[1] if expected else None,
        "link_boot_id_matches": bool(link and expected and link[0] == expected[0]),
        "audit_seen": j["audit_seen"],
        "audit_codes_differing": differing,
        "exactly_once": j["audit_seen"] == result.get("cards_sent") and differing == 0,
        "alerts_journaled": j["types"].get("alert", 0),
        "alerts_by_kind": j["kinds"],
        "alerts_summarised": j["summarised"],
        "journal_events": j["events"], "journal_event_types": j["types"],
    })
    out["all_delivered"] = bool(
        link is not None and expected is not None and tuple(link) == expected
        and result.get("all_acked") and out["exactly_once"])
    return out


ORDER = ("benchmark", "seconds", "rate", "frames_sent", "frames_acked", "all_delivered",
         "last_link_seq", "rss_mb_start", "rss_mb_peak", "rss_mb_end", "under_150mb",
         "drain_seconds", "journal_bytes", "alerts_journaled", "load_avg_1min_at_start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="flood duration (default 10)")
    parser.add_argument("--rate", type=int, default=10000,
                        help="card frames per second (default 10000)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds after the flood for every frame to be ACKed (default 120)")
    parser.add_argument("--start-timeout", type=float, default=30.0,
                        help="seconds for the controller to start and anchor a session "
                             "(default 30)")
    parser.add_argument("--settle", type=float, default=1.5,
                        help="seconds the idle shoe stays after the drain before the controller "
                             "is stopped (default 1.5: this shoe sends no heartbeats, and after "
                             "2 s of silence the controller reports the link down)")
    parser.add_argument("--lossless", action="store_true",
                        help="the shoe queues what the pty does not take (a TCP adapter) "
                             "instead of losing it (a serial line)")
    parser.add_argument("--tmpdir", default=None,
                        help="where the temporary folder (journal, config, log) goes "
                             "(default: $TMPDIR)")
    parser.add_argument("--seed", type=int, default=13, help="seed of the shoe's boot ids")
    parser.add_argument("--trace", action="store_true",
                        help="add the shoe's sessions and ACK progress (wall clock) to the JSON")
    parser.add_argument("--json", action="store_true", help="accepted; the output is always JSON")
    args = parser.parse_args()
    if args.seconds <= 0 or args.rate <= 0:
        parser.error("--seconds and --rate must be positive")

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)  # the finally clauses kill the controller

    signal.signal(signal.SIGTERM, stop)
    result = run(args)
    ordered = {k: result.pop(k) for k in ORDER if k in result}
    print(json.dumps({**ordered, **result}))


if __name__ == "__main__":
    main()
