"""Shoe link benchmark: the simulated shoe and the driver over a real pseudo-terminal.

Prints one JSON object:
- ``unpaced``: card frames/s streamed back to back, and the latency from the
  shoe's write to the driver's event (p50, p99) for single cards;
- ``paced_115200``: the same with the shoe's output paced to 115200 baud, next
  to the wire-time floor (bytes x 10 / 115200);
- ``faults``: 5 % drop + 5 % corruption on both directions: every card still
  arrives exactly once and in order; throughput and p99 (the 250 ms
  retransmission timer dominates).

- ``conformance``: one row per behaviour of the independent conformance shoe
  (``tests/conformance/slp1_shoe.py``, written from the spec alone) against
  the real :class:`ShoeDriver` over a pty or TCP, every row under 4 % drop +
  4 % corruption + 4 % duplication on both directions: cards drawn back to
  back (the dealer draws as fast as the gate allows: ``cards_per_s`` from the
  first draw to the last delivery), then single cards (each drawn once the
  previous one was delivered: ``latency_p50_ms``/``latency_p99_ms`` from the
  ``draw()`` call to the driver's ``CardDrawn``), and ``exactly_once``: the
  delivered (code, count) sequence equals the shoe's ``drawn``;
- ``line_reader``: one row per dialect of the independent line-reader emulator
  (``tests/linereader/emulator.py``) read by :class:`LineReaderDriver` over a
  pty, with 5 % garbage bursts and 20 % keep-alive lines: lines/s streamed,
  single-line latency (send to ``CardDrawn``), ``correct`` against the
  emulator's ground truth, and the driver's stats.

Targets (issue 4): >= 10,000 card frames/s; unpaced p99 <= 0.5 ms; paced p99
within 1 ms of the wire time; faults: exact sequence. Conformance: every row
exactly once; line reader: every row correct.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from firmware_interfaces.shoe import (  # noqa: E402
    CardDrawn,
    FaultPlan,
    FaultyTransport,
    Hello,
    ShoeDriver,
    SimulatedShoe,
    SLP1Codec,
    open_pty_pair,
    open_url,
)
from firmware_interfaces.shoe.lines import LineReaderDriver
from tests.conformance.slp1_shoe import ConformanceShoe, PtyShoe, ShoeBehaviour, TcpShoe
from tests.linereader.emulator import DIALECTS, Faults, LineReaderPty, random_deck

BAUD = 115200


class Probe:
    """Driver listener: timestamps each card, wakes the benchmark when a target is reached."""

    def __init__(self) -> None:
        self.codes: list[str] = []
        self.times: list[float] = []
        self.target = 0
        self.reached = threading.Event()
        self.hello = threading.Event()
        self.at_count: dict[int, float] = {}
        self.tx_started: dict[int, float] = {}

    def transmitted(self, wire: bytes, started: float) -> None:
        """The shoe's on_transmit hook: when each CARD frame first started onto the wire."""
        fields = wire.split(b",")
        if len(fields) == 5 and fields[1] == b"CARD":
            count = int(fields[4].split(b"*")[0])
            self.tx_started.setdefault(count, started)

    def __call__(self, event: object) -> None:
        if isinstance(event, CardDrawn):
            now = time.perf_counter()
            self.times.append(now)
            self.at_count[event.count] = now
            self.codes.append(event.code)
            if len(self.codes) >= self.target:
                self.reached.set()
        elif isinstance(event, Hello):
            self.hello.set()

    def expect(self, total: int) -> None:
        self.target = total
        self.reached.clear()
        if len(self.codes) >= total:
            self.reached.set()


def pair(decks: int, *, baudrate: int | None = None, faults: str = "", seed: int = 1):
    master, path = open_pty_pair()
    probe = Probe()
    shoe = SimulatedShoe(master, decks=decks, seed=seed, baudrate=baudrate,
                         faults=FaultPlan.parse(faults, seed=seed) if faults else None,
                         on_transmit=probe.transmitted)
    opener = open_url(path)
    if faults:
        plain = opener
        plan = FaultPlan.parse(faults, seed=seed + 1)

        def opener():  # noqa: F811
            return FaultyTransport(plain(), plan)

    driver = ShoeDriver(opener, listener=probe)
    shoe.start()
    driver.start()
    if not probe.hello.wait(10):
        raise SystemExit("no HELLO from the simulated shoe")
    driver.unlock()
    if not shoe.wait_gate(False, 10):
        raise SystemExit("the simulated shoe did not unlock")
    return shoe, driver, probe


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(x: float) -> float:
    return round(x * 1000, 4)


def throughput(
    shoe: SimulatedShoe, probe: Probe, n: int, timeout: float
) -> tuple[float, list[str]]:
    start_count = len(probe.codes)
    probe.expect(start_count + n)
    t0 = time.perf_counter()
    drawn = [shoe.draw() for _ in range(n)]
    if not probe.reached.wait(timeout):
        raise SystemExit(f"only {len(probe.codes) - start_count} of {n} cards arrived")
    elapsed = probe.times[start_count + n - 1] - t0
    assert probe.codes[start_count:start_count + n] == drawn, "card sequence differs"
    return n / elapsed, drawn


def latencies(shoe: SimulatedShoe, probe: Probe, n: int, baud: int | None = None) -> list[float]:
    """Single cards: from the shoe's write of the CARD frame to the driver's event.

    With ``baud``, each value is the latency minus that frame's wire time.
    """
    out = []
    for _ in range(n):
        probe.expect(len(probe.codes) + 1)
        shoe.draw()
        if not probe.reached.wait(5):
            raise SystemExit("a card did not arrive within 5 s")
        count = shoe.count
        wire = card_frame_bytes(count) * 10 / baud if baud else 0.0
        out.append(probe.at_count[count] - probe.tx_started[count] - wire)
    return out


def card_frame_bytes(count: int) -> int:
    return len(SLP1Codec().encode(100, "CARD", ("TS", "RO", str(count))))


def run_simulated(result: dict, args: argparse.Namespace) -> None:
    """The project's own simulated shoe: unpaced, paced at 115200 baud, 5 % faults."""

    shoe, driver, probe = pair(decks=(args.cards + args.latency_cards + 200) // 52 + 2)
    try:
        latencies(shoe, probe, 200)  # warm-up
        rate, _ = throughput(shoe, probe, args.cards, timeout=120)
        lat = latencies(shoe, probe, args.latency_cards)
        result["unpaced"] = {
            "cards": args.cards, "card_frames_per_s": round(rate),
            "latency_cards": len(lat), "latency_p50_ms": ms(pct(lat, 0.5)),
            "latency_p99_ms": ms(pct(lat, 0.99)), "latency_max_ms": ms(max(lat)),
        }
    finally:
        driver.close()
        shoe.close()

    shoe, driver, probe = pair(decks=(2 * args.paced_cards + 20) // 52 + 2, baudrate=BAUD)
    try:
        latencies(shoe, probe, 20)
        rate, _ = throughput(shoe, probe, args.paced_cards, timeout=120)
        over = latencies(shoe, probe, args.paced_cards, baud=BAUD)
        nbytes = card_frame_bytes(shoe.count)
        wire = nbytes * 10 / BAUD
        result["paced_115200"] = {
            "card_frames_per_s": round(rate), "wire_frames_per_s": round(BAUD / 10 / nbytes),
            "frame_bytes": nbytes, "wire_time_ms": ms(wire),
            "latency_p50_ms": ms(pct(over, 0.5) + wire),
            "latency_p99_ms": ms(pct(over, 0.99) + wire),
            "p50_over_wire_ms": ms(pct(over, 0.5)), "p99_over_wire_ms": ms(pct(over, 0.99)),
        }
    finally:
        driver.close()
        shoe.close()

    faults = "drop=0.05,corrupt=0.05"
    shoe, driver, probe = pair(decks=(args.fault_cards + args.fault_latency_cards) // 52 + 2,
                               faults=faults)
    try:
        rate, drawn = throughput(shoe, probe, args.fault_cards, timeout=600)
        lat = latencies(shoe, probe, args.fault_latency_cards)
        stats = driver.stats
        result["faults"] = {
            "faults": f"{faults} (both directions)", "cards": args.fault_cards,
            "exactly_once_in_order": probe.codes == shoe.drawn,
            "card_frames_per_s": round(rate, 1),
            "latency_cards": len(lat),
            "latency_p50_ms": ms(pct(lat, 0.5)), "latency_p99_ms": ms(pct(lat, 0.99)),
            "bad_crc": stats.bad_crc, "duplicates": stats.duplicates,
            "out_of_order": stats.out_of_order,
            "shoe_retransmissions": shoe.link.stats.retransmissions,
        }
    finally:
        driver.close()
        shoe.close()

    u, p, f = result["unpaced"], result["paced_115200"], result["faults"]
    result["targets"] = {
        "card_frames_per_s>=10000": u["card_frames_per_s"] >= 10000,
        "unpaced_p99<=0.5ms": u["latency_p99_ms"] <= 0.5,
        "paced_p99_within_1ms_of_wire": p["p99_over_wire_ms"] <= 1.0,
        "faults_exactly_once_in_order": f["exactly_once_in_order"],
    }



# -- the independent conformance shoe ---------------------------------------------------

#: Faults on what the conformance shoe sends (its own knobs) and on what our driver sends.
CONF_SHOE_FAULTS = {"drop": 0.04, "corrupt": 0.04, "duplicate": 0.04}
CONF_DRIVER_FAULTS = "drop=0.04,corrupt=0.04,dup=0.04"


class Delivered:
    """Driver listener for the conformance rows: every CardDrawn with its perf_counter time."""

    def __init__(self) -> None:
        self.cards: list[tuple[str, int]] = []
        self.at: dict[int, float] = {}  # count -> first delivery
        self.new_sessions = 0
        self.changed = threading.Condition()

    def __call__(self, event: object) -> None:
        now = time.perf_counter()
        with self.changed:
            if isinstance(event, CardDrawn):
                self.cards.append((event.code, event.count))
                self.at.setdefault(event.count, now)
            elif isinstance(event, Hello) and event.new_session:
                self.new_sessions += 1
            self.changed.notify_all()

    def wait(self, predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
        with self.changed:
            if not self.changed.wait_for(predicate, timeout):
                raise TimeoutError(f"waited {timeout:g} s for {what}")


def conformance_deck(seed: int, n: int) -> list[str]:
    """``n`` card codes from shuffled 52-card decks (SLP/1 codes: ten is T)."""
    rng = random.Random(f"bench-deck:{seed}")
    out: list[str] = []
    while len(out) < n:
        deck = [r + s for r in "A23456789TJQK" for s in "SHDC"]
        rng.shuffle(deck)
        out += deck
    return out[:n]


class ConformanceRig:
    """The conformance shoe on a pty or TCP, our driver on the other end behind FaultyTransport."""

    def __init__(self, behaviour: ShoeBehaviour, *, tcp: bool, powered_on_for: float, seed: int,
                 n_cards: int) -> None:
        shoe = ConformanceShoe(behaviour, cards=conformance_deck(seed, n_cards + 20), decks=8,
                               seed=seed, now=time.monotonic())
        self.runner: PtyShoe | TcpShoe = (TcpShoe if tcp else PtyShoe)(shoe, behaviour=behaviour)
        self.runner.start()
        self.driver: ShoeDriver | None = None
        if powered_on_for:
            time.sleep(powered_on_for)  # talking to nobody: HELLO and NEWSHOE stay unACKed
        url = self.runner.url if isinstance(self.runner, TcpShoe) else self.runner.path
        plain = open_url(url)
        plan = FaultPlan.parse(CONF_DRIVER_FAULTS, seed=seed)

        def opener():  # type: ignore[no-untyped-def]
            return FaultyTransport(plain(), plan)

        self.delivered = Delivered()
        self.drawn_at: dict[int, float] = {}  # count -> perf_counter just before draw()
        self.driver = ShoeDriver(opener, listener=self.delivered, name="bench-conformance")
        self.driver.start()

    def close(self) -> None:
        if self.driver is not None:
            self.driver.close()
        self.runner.close()

    def shoe(self, fn):  # type: ignore[no-untyped-def]
        return self.runner.call(lambda s, now: fn(s, now))

    def draw_one(self, timeout: float = 30) -> int:
        """The dealer draws one card as soon as the gate lets him; returns its count."""
        deadline = time.monotonic() + timeout
        while True:
            t = time.perf_counter()
            count = self.runner.call(lambda s, now: s.count if s.draw(now) is not None else None)
            if count is not None:
                self.drawn_at[count] = t
                return count
            if time.monotonic() > deadline:
                raise TimeoutError(f"the gate stayed locked for {timeout:g} s")
            time.sleep(0.002)

    def burst(self, n: int) -> list[int]:
        """``n`` cards back to back (as fast as the gate allows)."""
        return [self.draw_one() for _ in range(n)]

    def wait_delivered(self, count: int, timeout: float) -> float:
        d = self.delivered
        d.wait(lambda: count in d.at, timeout, f"card #{count} to be delivered")
        return d.at[count]

    def single(self, n: int, timeout: float = 30) -> list[float]:
        """``n`` single cards, each drawn once the previous one arrived: draw -> CardDrawn."""
        out = []
        for _ in range(n):
            count = self.draw_one()
            out.append(self.wait_delivered(count, timeout) - self.drawn_at[count])
        return out


def conformance_behaviours(n: int, m: int) -> list[dict]:
    """Rows: name, behaviour knobs, how the rig is set up, what the dealer does."""
    def b(**knobs: object) -> ShoeBehaviour:
        return ShoeBehaviour(**{**CONF_SHOE_FAULTS, **knobs})  # type: ignore[arg-type]

    few_n, few_m = max(2, n // 4), max(2, m // 4)
    return [
        {"behaviour": "powered-on-before-host", "shoe": b(), "powered_on_for": 1.5},
        {"behaviour": "no-resend-after-reset", "shoe": b(resend_after_reset=False), "powered_on_for": 1.0},
        {"behaviour": "no-old-hellos", "shoe": b(resend_old_hellos=False), "powered_on_for": 1.0},
        {"behaviour": "window-1", "shoe": b(window=1)},
        {"behaviour": "window-16", "shoe": b(window=16)},
        {"behaviour": "retransmit-40ms", "shoe": b(retransmit=0.04)},
        {"behaviour": "retransmit-1.5s", "shoe": b(retransmit=1.5), "n": few_n, "m": few_m},
        {"behaviour": "late-command-acks", "shoe": b(command_ack_delay=0.6)},
        {"behaviour": "reboot-mid-round", "shoe": b(), "dealer": "reboot"},
        {"behaviour": "tcp-two-cable-pulls", "shoe": b(), "tcp": True, "dealer": "cable"},
        {"behaviour": "pty-9600-baud", "shoe": b(baud=9600)},
        {"behaviour": "pty-921600-baud", "shoe": b(baud=921600)},
    ]


def knobs_text(behaviour: ShoeBehaviour) -> str:
    default = ShoeBehaviour(**CONF_SHOE_FAULTS)  # type: ignore[arg-type]
    names = ("window", "retransmit", "resend_after_reset", "resend_old_hellos",
             "command_ack_delay", "baud")
    return ",".join(f"{k}={getattr(behaviour, k)}" for k in names
                    if getattr(behaviour, k) != getattr(default, k)) or "spec defaults"


def conformance_burst(rig: ConformanceRig, n: int, dealer: str) -> tuple[list[int], str]:
    """The back-to-back part; for reboot/cable rows the disruption happens inside it."""
    if dealer == "reboot":
        first = rig.burst(n // 2)
        if first:
            rig.wait_delivered(first[-1], 60)
        deadline = time.monotonic() + 10
        while rig.shoe(lambda s, now: s.unacked) and time.monotonic() < deadline:
            time.sleep(0.01)
        rig.shoe(lambda s, now: s.reboot(now))
        d = rig.delivered
        d.wait(lambda: d.new_sessions >= 1, 15, "the new session's HELLO after the reboot")
        assert rig.driver is not None
        rig.driver.unlock()  # a rebooted shoe's gate is locked again
        return first + rig.burst(n - n // 2), (
            "the shoe reboots after the first half: cards_per_s includes the new session and the UNLOCK")
    if dealer == "cable":
        assert isinstance(rig.runner, TcpShoe)
        out_cards = min(3, max(1, n // 8))
        part = max(1, (n - 2 * out_cards) // 3)
        counts: list[int] = []
        for _ in range(2):
            counts += rig.burst(part)
            rig.runner.pull_cable(1.0)
            counts += rig.burst(out_cards)  # drawn while the cable is out: sent after it is back
            time.sleep(1.2)
        counts += rig.burst(max(1, n - len(counts)))
        return counts, (f"cable pulled twice for 1 s with {out_cards} cards drawn each time it was out: "
                        "cards_per_s includes both outages")
    return rig.burst(n), ""


def conformance_row(spec: dict, n: int, m: int, seed: int) -> dict:
    n, m = spec.get("n", n), spec.get("m", m)
    behaviour: ShoeBehaviour = spec["shoe"]
    row: dict = {"behaviour": spec["behaviour"], "transport": "tcp" if spec.get("tcp") else "pty",
                 "knobs": knobs_text(behaviour), "cards": 0, "exactly_once": False}
    started = time.perf_counter()
    rig = ConformanceRig(behaviour, tcp=spec.get("tcp", False),
                         powered_on_for=spec.get("powered_on_for", 0.0), seed=seed, n_cards=n + m)
    try:
        assert rig.driver is not None
        try:
            rig.driver.wait_up(15)
            rig.driver.unlock()
            burst, note = conformance_burst(rig, n, spec.get("dealer", ""))
            last = max(rig.wait_delivered(c, 60) for c in burst)
            first = rig.drawn_at[burst[0]]
            burst_lat = [rig.delivered.at[c] - rig.drawn_at[c] for c in burst]
            single = rig.single(m)
            row.update({
                "burst_cards": len(burst), "single_cards": len(single),
                "cards_per_s": round(len(burst) / (last - first), 1),
                "latency_p50_ms": ms(pct(single, 0.5)), "latency_p99_ms": ms(pct(single, 0.99)),
                "burst_latency_p50_ms": ms(pct(burst_lat, 0.5)),
                "burst_latency_p99_ms": ms(pct(burst_lat, 0.99)),
            })
            if note:
                row["note"] = note
        except Exception as e:  # noqa: BLE001 - a finding, not a crash: the row says what went wrong
            row["error"] = f"{type(e).__name__}: {e}"
        truth = rig.shoe(lambda s, now: list(s.drawn))
        d = rig.delivered
        try:
            d.wait(lambda: len(d.cards) >= len(truth), 10, f"{len(truth)} cards")
        except TimeoutError:
            pass
        time.sleep(0.3)  # anything delivered twice would arrive now
        with d.changed:
            got = list(d.cards)
        row["cards"] = len(truth)
        row["exactly_once"] = got == truth
        if got != truth:
            diverge = next((i for i, (a, b) in enumerate(zip(got, truth, strict=False)) if a != b),
                           min(len(got), len(truth)))
            row["mismatch"] = {"drawn": len(truth), "delivered": len(got), "first_difference_at": diverge,
                               "drawn_there": truth[diverge:diverge + 3],
                               "delivered_there": got[diverge:diverge + 3]}
        stats = rig.driver.stats
        shoe_rtx, lost, rx_err = rig.shoe(lambda s, now: (s.retransmissions, s.lost_on_reboot,
                                                          dict(s.rx_errors)))
        row.update({
            "retransmissions": shoe_rtx + stats.retransmissions,
            "shoe_retransmissions": shoe_rtx, "driver_retransmissions": stats.retransmissions,
            "stale_hellos": stats.stale_hellos, "duplicates": stats.duplicates,
            "bad_crc": stats.bad_crc, "session_resyncs": stats.session_resyncs,
            "reconnects": stats.reconnects, "shoe_rx_errors": rx_err,
        })
        if spec.get("dealer") == "reboot":
            row["lost_on_reboot"] = lost
    finally:
        rig.close()
    row["seconds"] = round(time.perf_counter() - started, 2)
    return row


def run_conformance(args: argparse.Namespace) -> list[dict]:
    specs = conformance_behaviours(args.conformance_cards, args.conformance_latency_cards)
    return [conformance_row(spec, args.conformance_cards, args.conformance_latency_cards,
                            seed=args.seed + i) for i, spec in enumerate(specs)]


# -- the independent line-reader emulator ---------------------------------------------

LINE_FAULTS = Faults(garbage=0.05, keepalive=0.2)


class LineEvents:
    """LineReaderDriver listener: card codes with their perf_counter times."""

    def __init__(self) -> None:
        self.codes: list[str] = []
        self.times: list[float] = []
        self.notices: list[str] = []
        self.changed = threading.Condition()

    def __call__(self, event: object) -> None:
        now = time.perf_counter()
        with self.changed:
            if isinstance(event, CardDrawn):
                self.codes.append(event.code)
                self.times.append(now)
            elif type(event).__name__ == "ReaderNotice":
                self.notices.append(event.kind)  # type: ignore[attr-defined]
            self.changed.notify_all()

    def wait_for(self, predicate, timeout: float) -> bool:  # type: ignore[no-untyped-def]
        with self.changed:
            return self.changed.wait_for(predicate, timeout)


def line_reader_row(dialect: str, n: int, m: int, seed: int) -> dict:
    row: dict = {"dialect": dialect, "faults": "garbage=0.05,keepalive=0.2", "cards": 0,
                 "correct": False}
    events = LineEvents()
    with LineReaderPty(dialect=DIALECTS[dialect], seed=seed, line_delay=0.0) as reader:
        # burst_window=0: cards back to back are the point here, not a dealer error;
        # repeat_window=0: the emulator sends no line twice (Faults.duplicate=0), but a deck of
        # several shuffled decks can put the same card twice in a row, which within 0.5 s the
        # driver would take as one line read twice.
        driver = LineReaderDriver(open_url(reader.path), listener=events, burst_window=0,
                                  repeat_window=0)
        driver.start()
        mismatches: list[str] = []
        try:
            driver.wait_up(5)
            # Streamed: every line as fast as the pty takes it.
            t0 = time.perf_counter()
            em = reader.send(random_deck(n, seed=seed), faults=LINE_FAULTS)
            if not events.wait_for(lambda: len(events.codes) >= len(em.cards), 60):
                mismatches.append(f"streamed: {len(events.codes)} of {len(em.cards)} cards in 60 s")
            reader.wait_idle(10)
            time.sleep(0.1)
            with events.changed:
                streamed = list(events.codes)
                t_last = events.times[-1] if events.times else t0
            if (why := em.mismatch(streamed)) is not None:
                mismatches.append(f"streamed: {why}")
            elapsed = t_last - t0
            # Single lines: each sent once the previous one was read.
            lat: list[float] = []
            singles = 0
            for card in random_deck(m, seed=seed + 1):
                before = len(events.codes)
                t = time.perf_counter()
                em1 = reader.send([card], faults=LINE_FAULTS)
                singles += len(em1.cards)
                if em1.cards and events.wait_for(lambda b=before: len(events.codes) > b, 5):
                    lat.append(events.times[before] - t)
                reader.wait_idle(5)  # a keep-alive after the card, or a damaged card line
                if not em1.cards:
                    time.sleep(0.02)  # an ambiguous card may or may not come
                with events.changed:
                    got = events.codes[before:]
                if (why := em1.mismatch(got)) is not None:
                    mismatches.append(f"single {card}: {why}")
            stats = driver.stats.as_dict()
        finally:
            driver.close()
    row.update({
        "cards": len(em.cards) + singles, "streamed_cards": len(em.cards),
        "streamed_lines": len(em.chunks), "correct": not mismatches,
        "lines_per_s": round(len(em.chunks) / elapsed) if elapsed > 0 else None,
        "cards_per_s": round(len(em.cards) / elapsed) if elapsed > 0 else None,
        "latency_samples": len(lat),
        "latency_p50_ms": ms(pct(lat, 0.5)) if lat else None,
        "latency_p99_ms": ms(pct(lat, 0.99)) if lat else None,
        "notices": sorted(set(events.notices)), "stats": stats,
    })
    if mismatches:
        row["mismatches"] = mismatches[:5]
    return row


def run(args: argparse.Namespace) -> dict:
    result: dict = {"benchmark": "shoe_link", "transport": "pty", "python": sys.version.split()[0],
                    "cpus": os.cpu_count(), "load_avg_1min_at_start": round(os.getloadavg()[0], 2)}
    result["targets"] = {}
    if not args.skip_simulated:
        run_simulated(result, args)
    if not args.skip_conformance:
        t = time.perf_counter()
        result["conformance"] = run_conformance(args)
        result["conformance_seconds"] = round(time.perf_counter() - t, 1)
        result["targets"]["conformance_all_exactly_once"] = all(
            r["exactly_once"] for r in result["conformance"])
    if not args.skip_line_reader:
        result["line_reader"] = [
            line_reader_row(name, args.line_cards, args.line_latency_cards, seed=args.seed)
            for name in args.line_dialects.split(",") if name]
        result["targets"]["line_reader_all_correct"] = all(r["correct"] for r in result["line_reader"])
    result["load_avg_1min_at_end"] = round(os.getloadavg()[0], 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=20000, help="cards streamed unpaced")
    parser.add_argument("--latency-cards", type=int, default=3000,
                        help="single-card latency samples")
    parser.add_argument("--paced-cards", type=int, default=500, help="cards at 115200 baud")
    parser.add_argument("--fault-cards", type=int, default=300,
                        help="cards streamed with 5%% drop + 5%% corruption")
    parser.add_argument("--fault-latency-cards", type=int, default=200,
                        help="single-card latency samples with those faults")
    parser.add_argument("--skip-simulated", action="store_true",
                        help="skip the project's simulated shoe (unpaced, paced, faults)")
    parser.add_argument("--conformance-cards", type=int, default=40,
                        help="cards drawn back to back per conformance row (a quarter for the "
                             "1.5 s retransmission row)")
    parser.add_argument("--conformance-latency-cards", type=int, default=40,
                        help="single-card latency samples per conformance row (a quarter for the "
                             "1.5 s retransmission row)")
    parser.add_argument("--skip-conformance", action="store_true",
                        help="skip the rows against the independent conformance shoe")
    parser.add_argument("--line-cards", type=int, default=2000,
                        help="cards streamed per line-reader dialect")
    parser.add_argument("--line-latency-cards", type=int, default=200,
                        help="single-line latency samples per line-reader dialect")
    parser.add_argument("--line-dialects", default="kitchen_sink,plain_crlf",
                        help="comma-separated emulator dialects (tests/linereader/emulator.py)")
    parser.add_argument("--skip-line-reader", action="store_true",
                        help="skip the rows against the independent line-reader emulator")
    parser.add_argument("--seed", type=int, default=1, help="seed of decks and faults")
    print(json.dumps(run(parser.parse_args())))


if __name__ == "__main__":
    main()
