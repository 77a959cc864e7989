"""``table-controller shoe sim|monitor|record|replay``: simulate a shoe, watch, record or replay one."""

from __future__ import annotations

import argparse
import io
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from firmware_interfaces.errors import DeviceError
from table_controller.cli.stop_signals import StopFlag, stop_on_signals
from table_controller.errors import TableError

SIM_COMMANDS = (
    "draw [N] | noread | lid open|close | unplug SECONDS | replug | power | "
    "load [DECKS [CUT]] | fault CODE TEXT | stats | quit"
)
MONITOR_COMMANDS = "lock | unlock | status | reset | stats | quit"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    shoe = subparsers.add_parser("shoe", help="the smart shoe: simulate one (SLP/1) or monitor one")
    sub = shoe.add_subparsers(dest="shoe_command", metavar="ACTION")
    sub.required = True

    sim = sub.add_parser(
        "sim",
        help="run a simulated shoe on a new pseudo-terminal or TCP port",
        description=(
            "Runs a shoe that speaks SLP/1 and prints 'device: <path or url>' as its first line. "
            f"Its gate starts locked. Commands on stdin, one a line: {SIM_COMMANDS}. "
            "With --protocol lines: a plain line-per-card reader instead (no gate: it says "
            "'gate unlocked' at once; no lid; each draw answers 'card TS count N' with the "
            "simulator's own count, followed by the faults that hit its line, e.g. 'lost')."
        ),
    )
    sim.add_argument("--protocol", default="slp1", metavar="NAME",
                     help="slp1 (a smart shoe, default) or lines (a plain line-per-card reader)")
    sim.add_argument("--link", default="pty", metavar="pty|tcp:PORT",
                     help="pty (a new pseudo-terminal, default) or tcp:PORT on 127.0.0.1 (0: any)")
    sim.add_argument("--device-link", type=Path, metavar="PATH",
                     help="with --link pty: the stable path (a symlink) to create for the pty")
    sim.add_argument("--decks", type=int, default=8, help="decks in the shoe (default 8)")
    sim.add_argument("--seed", type=int, help="shuffle seed")
    sim.add_argument("--script", type=Path, metavar="FILE",
                     help="card codes in dealing order (whitespace separated, # comments)")
    sim.add_argument("--cut-at", type=int, metavar="N", help="the cut card comes out after N cards")
    sim.add_argument("--draw-every", type=float, metavar="SECONDS",
                     help="the simulated dealer draws a card this often while the gate is unlocked")
    sim.add_argument("--faults", default="", metavar="SPEC",
                     help="faults on the shoe's transmit side, e.g. "
                          "drop=0.05,corrupt=0.05,dup=0.05,garbage=0.01,"
                          "unplug-every=30,unplug-for=3; with --protocol lines per card line: "
                          "lost=0.02,twice=0.02,garbage=0.05")
    sim.add_argument("--baud", type=int, metavar="RATE",
                     help="pace the shoe's output to this baud rate (a pty has no speed)")
    sim.set_defaults(func=run_sim)

    monitor = sub.add_parser(
        "monitor",
        help="open a shoe, run the controller side of the link and print what it says",
        description=(
            "Opens DEVICE (a device path or a pyserial URL such as socket://host:port), "
            "anchors a session, ACKs, reconnects, and prints every delivered event and the link "
            f"statistics. Commands on stdin, one a line: {MONITOR_COMMANDS}."
        ),
    )
    monitor.add_argument("device", metavar="DEVICE",
                         help="/dev/ttyUSB0, socket://host:port, a pty path, hid:/dev/input/eventN")
    _monitor_options(monitor)
    monitor.set_defaults(func=run_monitor)

    record = sub.add_parser(
        "record",
        help="monitor a reader and record both directions of its byte stream, with times",
        description=(
            "Like monitor, and writes every byte read from and written to DEVICE, timed, to "
            "--out (JSON lines, docs/shoe.md). A recording of a real device belongs in "
            "tests/fixtures/ with a note of the device; the tests replay it through the driver."
        ),
    )
    record.add_argument("device", metavar="DEVICE", help="as for monitor")
    record.add_argument("--out", type=Path, required=True, metavar="FILE", help="the recording to write")
    record.add_argument("--note", default="", help="what device this is (vendor, model, firmware)")
    _monitor_options(record)
    record.set_defaults(func=run_monitor)

    replay = sub.add_parser(
        "replay",
        help="play a recording back through the real driver and print what it delivers",
    )
    replay.add_argument("recording", type=Path, metavar="FILE", help="a shoe record file")
    replay.add_argument("--speed", type=float, default=0.0,
                        help="1 = as recorded, 0 = as fast as possible (default)")
    replay.add_argument("--json", action="store_true", help="one JSON object per line")
    replay.add_argument("--pattern", help="lines: a regex with groups rank and suit")
    replay.set_defaults(func=run_replay)


def _monitor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--protocol", default="slp1", metavar="NAME",
                        help="slp1 (smart shoe, default) or lines (a plain line-per-card reader)")
    parser.add_argument("--pattern", help="lines: a regex with groups rank and suit for odd readers")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--baud", type=int, default=115200, help="baud rate (default 115200)")
    parser.add_argument("--resume", metavar="BOOT:SEQ",
                        help="slp1: the last delivered link state, e.g. 5F3A9C01:17 (default: RESET)")
    gate = parser.add_mutually_exclusive_group()
    gate.add_argument("--lock", action="store_true", help="send LOCK at start")
    gate.add_argument("--unlock", action="store_true", help="send UNLOCK at start")
    parser.add_argument("--status", action="store_true", help="send STATUS at start")
    parser.add_argument("--duration", type=float, metavar="SECONDS", help="stop after this long")
    parser.add_argument("--cards", type=int, metavar="N", help="stop after N cards")
    parser.add_argument("--stats-every", type=float, default=10.0, metavar="SECONDS",
                        help="print link statistics this often (0: only at the end; default 10)")


class _Printer:
    """Thread-safe line output."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def __call__(self, text: str) -> None:
        with self._lock:
            self._stream.write(text + "\n")
            self._stream.flush()


def read_script(path: Path) -> list[str]:
    """Card codes from a script file; raises ShoeScriptError naming the file and line."""
    from firmware_interfaces.shoe.errors import ShoeScriptError
    from firmware_interfaces.shoe.events import CARD_CODES

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ShoeScriptError(f"card script {path}: cannot read it: {e}") from e
    cards: list[str] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for word in line.split("#", 1)[0].replace(",", " ").split():
            code = word.upper()
            if code.startswith("10"):
                code = "T" + code[2:]
            if code not in CARD_CODES:
                raise ShoeScriptError(
                    f"card script {path}, line {lineno}: {word!r} is not a card code "
                    "(rank A23456789TJQK + suit SHDC, e.g. TS)"
                )
            cards.append(code)
    if not cards:
        raise ShoeScriptError(f"card script {path}: no card codes in it")
    return cards


def _make_port(args: argparse.Namespace) -> Any:
    from firmware_interfaces.shoe.ports import PtyPort, TcpPort

    link = args.link.strip().lower()
    if link == "pty":
        return PtyPort(args.device_link)
    if link.startswith("tcp:"):
        try:
            port = int(link[4:])
        except ValueError:
            raise TableError(
                f"--link {args.link!r}: expected tcp:PORT with a port number"
            ) from None
        try:
            return TcpPort(port)
        except OSError as e:
            raise TableError(f"--link {args.link}: cannot listen on 127.0.0.1:{port}: {e}") from e
    raise TableError(f"--link {args.link!r}: expected pty or tcp:PORT")


def run_sim(
    args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    from firmware_interfaces.shoe.faults import FaultPlan
    from firmware_interfaces.shoe.sim import SimulatedShoe

    stdin = stdin or sys.stdin
    out = _Printer(stdout or sys.stdout)
    if args.decks < 1:
        raise TableError(f"--decks {args.decks}: a shoe holds at least one deck")
    if args.draw_every is not None and args.draw_every <= 0:
        raise TableError(f"--draw-every {args.draw_every}: must be more than 0 seconds")
    protocol = getattr(args, "protocol", "slp1") or "slp1"
    if protocol != "slp1":
        return _run_reader_sim(args, protocol, stdin, out)
    faults = FaultPlan.parse(args.faults, seed=args.seed)
    cards = read_script(args.script) if args.script else None
    port = _make_port(args)
    shoe = SimulatedShoe(port, decks=args.decks, seed=args.seed, cards=cards, cut_at=args.cut_at,
                         faults=faults, baudrate=args.baud, on_action=out)
    stop = StopFlag()
    _on_sigterm(stop)
    out(f"device: {port.description}")
    shoe.start()
    out(f"boot {shoe.boot_id}, gate locked, {shoe.remaining} cards, faults {faults.describe()}")
    if args.draw_every:
        dealer_args = (shoe, args.draw_every, stop, out)
        threading.Thread(target=_dealer, args=dealer_args, daemon=True).start()
    threading.Thread(target=_sim_commands, args=(shoe, stdin, stop, out), daemon=True).start()
    try:
        stop.wait()
    finally:
        shoe.close()
    return 0


def _run_reader_sim(args: argparse.Namespace, protocol: str, stdin: TextIO, out: _Printer) -> int:
    """A simulated reader of another protocol (``lines``) behind the same commands and replies."""
    from firmware_interfaces.shoe.protocols import simulator_for

    simulator, fault_plan = simulator_for(protocol)
    faults = fault_plan.parse(args.faults, seed=args.seed)
    cards = read_script(args.script) if args.script else None
    port = _make_port(args)
    hands = _ReaderHands(out)
    reader = simulator(port, decks=args.decks, seed=args.seed, cards=cards, cut_at=args.cut_at,
                       faults=faults, baudrate=args.baud, on_action=hands.report)
    hands.reader = reader
    stop = StopFlag()
    _on_sigterm(stop)
    out(f"device: {port.description}")
    reader.start()
    rates = ",".join(f"{k}={getattr(faults, k):g}" for k in _LINE_FAULT_KINDS if getattr(faults, k, 0))
    out(f"reader {protocol}, no gate, {reader.remaining} cards, faults {rates or 'none'}")
    out("gate unlocked")  # it has no gate: whoever waits for one may deal at once
    if args.draw_every:
        dealer_args = (hands, args.draw_every, stop, out)
        threading.Thread(target=_dealer, args=dealer_args, daemon=True).start()
    threading.Thread(target=_sim_commands, args=(hands, stdin, stop, out), daemon=True).start()
    try:
        stop.wait()
    finally:
        reader.close()
    return 0


_LINE_FAULT_KINDS = ("lost", "twice", "garbage")


class _ReaderHands:
    """A simulated line reader behind the simulated shoe's commands and reply lines.

    ``draw`` answers ``card TS count N`` (N: the simulator's count of cards out of this shoe;
    the device itself says no count), followed by the faults that hit the card's line
    (``lost``, ``twice``, ``garbage``, comma separated) and ``unplugged`` when the cable
    was out. Commands a line reader has no use for say so in one line.
    """

    gate_locked = False  # no gate

    def __init__(self, out: _Printer) -> None:
        self.out = out
        self.reader: Any = None
        self._lock = threading.Lock()

    def report(self, text: str) -> None:
        """The simulator's own reports; card lines are answered by :meth:`draw`."""
        if text.startswith("card ") or text == "unread card":
            return
        self.out(text)

    @property
    def unread(self) -> list[str]:
        return self.reader.unread  # type: ignore[no-any-return]

    @property
    def count(self) -> int:
        return int(self.reader.count)

    @property
    def remaining(self) -> int:
        return int(self.reader.remaining)

    def wait_gate(self, locked: bool, timeout: float) -> bool:
        return bool(self.reader.wait_gate(locked, timeout))

    def draw(self) -> str | None:
        with self._lock:
            counters = self.reader.faults.counters
            before = {k: getattr(counters, k, 0) for k in _LINE_FAULT_KINDS}
            plugged = getattr(self.reader, "_plugged", True)
            code = self.reader.draw()
            if code is None:
                return None
            hit = [k for k in _LINE_FAULT_KINDS if getattr(counters, k, 0) > before[k]]
            if not plugged:
                hit.append("unplugged")
            self.out(f"card {code} count {self.reader.count}" + (f" {','.join(hit)}" if hit else ""))
            return code  # type: ignore[no-any-return]

    def draw_noread(self) -> bool:
        with self._lock:
            if not self.reader.draw_noread():
                return False
            self.out(f"noread count {self.reader.count}")
            return True

    def set_lid(self, is_open: bool) -> None:
        self.out("lid sensor: none (a line reader has no lid)")

    def unplug(self, seconds: float) -> None:
        self.reader.unplug(seconds)
        self.out(f"unplugged for {seconds:g} s")

    def replug(self) -> None:
        self.reader.replug()
        self.out("plugged in")

    def power_cycle(self) -> None:
        raise ValueError("a line reader has no power cycle (it has no session to restart)")

    def load(self, decks: int | None = None, cut_at: int | None = None) -> None:
        self.reader.load(decks=decks)  # it reports "new shoe of N decks"; no cut card report

    def fault(self, code: str, text: str) -> None:
        self.reader.fault(code, text)
        self.out(f"fault {code} {text} (sent as a line)")

    def stats(self) -> dict[str, Any]:
        return {**self.reader.stats(), "count": self.reader.count, "remaining": self.reader.remaining}


def _on_sigterm(stop: StopFlag) -> None:
    if threading.current_thread() is threading.main_thread():
        stop_on_signals(stop)


def _dealer(shoe: Any, every: float, stop: threading.Event, out: _Printer) -> None:
    """The simulated dealer: one card every ``every`` seconds while the gate is unlocked."""
    while not stop.is_set():
        if not shoe.wait_gate(False, timeout=0.5):
            continue
        if shoe.draw() is None and shoe.remaining == 0:
            out("shoe empty: the dealer stops")
            return
        stop.wait(every)


def _sim_commands(shoe: Any, stdin: TextIO, stop: threading.Event, out: _Printer) -> None:
    for line in stdin:
        words = line.split()
        if not words:
            continue
        try:
            if _sim_command(shoe, words, out):
                stop.set()
                return
        except (ValueError, IndexError, TableError, DeviceError) as e:
            out(f"error: {line.strip()!r}: {e}; commands: {SIM_COMMANDS}")


def _sim_command(shoe: Any, words: list[str], out: _Printer) -> bool:
    cmd = words[0].lower()
    if cmd == "draw":
        for _ in range(int(words[1]) if len(words) > 1 else 1):
            if shoe.draw() is None:
                out(_no_card(shoe))
                break
    elif cmd == "noread":
        if shoe.draw_noread():
            out(f"unread {shoe.unread[-1]} count {shoe.count}")  # what the supervisor will see
        else:
            out(_no_card(shoe))
    elif cmd == "lid" and len(words) == 2 and words[1].lower() in ("open", "close", "closed"):
        shoe.set_lid(words[1].lower() == "open")
    elif cmd == "unplug":
        shoe.unplug(float(words[1]) if len(words) > 1 else 3.0)
    elif cmd == "replug":
        shoe.replug()
    elif cmd == "power":
        shoe.power_cycle()
    elif cmd == "load":
        shoe.load(decks=int(words[1]) if len(words) > 1 else None,
                  cut_at=int(words[2]) if len(words) > 2 else None)
    elif cmd == "fault" and len(words) >= 3:
        shoe.fault(words[1].upper(), " ".join(words[2:]))
    elif cmd == "stats":
        out(f"stats {json.dumps(shoe.stats(), sort_keys=True)}")
    elif cmd in ("quit", "exit"):
        return True
    else:
        raise ValueError("unknown command")
    return False


def _no_card(shoe: Any) -> str:
    return "no card: the gate is locked" if shoe.gate_locked else "no card: the shoe is empty"


def run_replay(args: argparse.Namespace, stdin: TextIO | None = None,
               stdout: TextIO | None = None) -> int:
    """Replay a recording through the real driver until every recorded byte is read."""
    from firmware_interfaces.shoe.recording import Recording, ReplayTransport

    recording = Recording.load(args.recording)
    transport = ReplayTransport(recording, speed=args.speed)
    ns = argparse.Namespace(
        device=str(args.recording), protocol=recording.protocol, pattern=args.pattern,
        json=args.json, baud=115200, resume=None, lock=False, unlock=False, status=False,
        duration=None, cards=None, stats_every=0.0, out=None, note="",
    )
    return run_monitor(ns, stdin=io.StringIO(), stdout=stdout, transport=transport)


def run_monitor(args: argparse.Namespace, stdin: TextIO | None = None,
                stdout: TextIO | None = None, transport: Any = None) -> int:
    """Monitor (and with ``--out`` record) a reader; ``transport``: a replayed one instead."""
    from firmware_interfaces.shoe.driver import open_url
    from firmware_interfaces.shoe.events import CardDrawn, LinkState, event_to_dict
    from firmware_interfaces.shoe.protocols import open_shoe
    from firmware_interfaces.shoe.recording import RecordingWriter, recording_opener

    stdin = stdin or sys.stdin
    out = _Printer(stdout or sys.stdout)
    resume = LinkState.parse(args.resume) if args.resume else None
    stop = StopFlag()
    cards = [0]

    def show(event: Any) -> None:
        data = event_to_dict(event)
        out(json.dumps(data) if args.json else _plain(data))
        if isinstance(event, CardDrawn):
            cards[0] += 1
            if args.cards is not None and cards[0] >= args.cards:
                stop.set()

    opener = open_url(args.device, baudrate=args.baud) if transport is None else (lambda: transport)
    out_file = None
    if getattr(args, "out", None) is not None:
        out_file = open(args.out, "w", encoding="utf-8")  # noqa: SIM115 (closed in finally)
        writer = RecordingWriter(out_file, protocol=args.protocol, device=args.device, note=args.note)
        opener = recording_opener(opener, writer)
    options = {"pattern": args.pattern} if args.pattern else {}
    driver = open_shoe(args.protocol, opener, resume=resume, listener=show, **options)

    def show_stats() -> None:
        data = {"event": "stats", "up": driver.is_up, **driver.stats.as_dict()}
        state = driver.link_state
        if state is not None:
            data["link"] = str(state)
        out(json.dumps(data) if args.json else _plain(data))

    _on_sigterm(stop)
    driver.start()
    try:
        if args.lock:
            driver.lock()
        if args.unlock:
            driver.unlock()
        if args.status:
            driver.status()
        threading.Thread(target=_monitor_commands, args=(driver, stdin, stop, show_stats, out),
                         daemon=True).start()
        deadline = time.monotonic() + args.duration if args.duration else None
        next_stats = time.monotonic() + args.stats_every if args.stats_every > 0 else None
        if transport is not None:  # a replay ends when every recorded byte was read
            threading.Thread(target=_stop_when_exhausted, args=(transport, stop), daemon=True).start()
        while not stop.is_set():
            now = time.monotonic()
            waits = [t - now for t in (deadline, next_stats) if t is not None]
            if stop.wait(max(0.0, min(waits)) if waits else None):
                break
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                break
            if next_stats is not None and now >= next_stats:
                show_stats()
                next_stats = now + args.stats_every
    finally:
        driver.close()
        show_stats()
        if out_file is not None:
            out_file.close()
    return 0


def _stop_when_exhausted(transport: Any, stop: threading.Event) -> None:
    while not stop.is_set() and not transport.exhausted:
        time.sleep(0.05)
    stop.wait(0.5)  # the driver's last frames are being delivered
    stop.set()


def _monitor_commands(driver: Any, stdin: TextIO, stop: threading.Event, show_stats: Any,
                      out: _Printer) -> None:
    actions = {"lock": driver.lock, "unlock": driver.unlock, "status": driver.status,
               "reset": driver.reset, "stats": show_stats}
    for line in stdin:
        word = line.strip().lower()
        if not word:
            continue
        if word in ("quit", "exit"):
            stop.set()
            return
        action = actions.get(word)
        if action is None:
            out(f"error: unknown command {word!r}; commands: {MONITOR_COMMANDS}")
        else:
            action()


def _plain(data: dict[str, Any]) -> str:
    name = data.get("event", "")
    rest = " ".join(f"{k}={v}" for k, v in data.items() if k != "event")
    return f"{name:9} {rest}"
