"""Shoe link benchmark: the simulated shoe and the driver over a real pseudo-terminal.

Prints one JSON object:
- ``unpaced``: card frames/s streamed back to back, and the latency from the
  shoe's write to the driver's event (p50, p99) for single cards;
- ``paced_115200``: the same with the shoe's output paced to 115200 baud, next
  to the wire-time floor (bytes x 10 / 115200);
- ``faults``: 5 % drop + 5 % corruption on both directions: every card still
  arrives exactly once and in order; throughput and p99 (the 250 ms
  retransmission timer dominates).

Targets (issue 4): >= 10,000 card frames/s; unpaced p99 <= 0.5 ms; paced p99
within 1 ms of the wire time; faults: exact sequence.
"""

from __future__ import annotations

import argparse
import json
import os
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


def run(args: argparse.Namespace) -> dict:
    result: dict = {"benchmark": "shoe_link", "transport": "pty", "python": sys.version.split()[0],
                    "cpus": os.cpu_count(), "load_avg_1min_at_start": round(os.getloadavg()[0], 2)}

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
    print(json.dumps(run(parser.parse_args())))


if __name__ == "__main__":
    main()
