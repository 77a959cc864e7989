"""Event-stream benchmark: card-to-display latency of the real stack against its floor, and fan-out.

Prints one JSON object:

- ``floor``: measured in this run: raw pseudo-terminal write -> read of a shoe
  frame, raw pyzmq PUB -> SUB of the card event's bytes (subscriber in another
  process), one SQLite journal commit (WAL, synchronous=FULL).
- ``card_to_display``: the real stack. ``SimulatedTable`` in this process:
  the simulated shoe writes its CARD frame on a pty -> the real ShoeDriver
  (pyserial) -> the controller loop -> the real journal (one transaction with
  the shoe's link state, WAL, synchronous=FULL) -> the real EventPublisher ->
  the real ``TableClient`` (a thread of this process) yields the ``card``
  event. Timed from right before ``SimulatedShoe.draw`` to the client's yield.
  ``card_to_display_stages`` splits the same cards at the journal and the
  publisher (wrapped methods of the running controller).
  Target: p99 <= 3 x (pty p99 + pyzmq p99 + commit p99).
- ``fan_out``: 10 tables publish at 50 events/s each through the studio proxy
  to 100 subscribers (each following all tables, in 2 processes). Target:
  nothing lost and p99 <= 20 ms.

Times use ``time.perf_counter_ns`` (CLOCK_MONOTONIC on Linux), which is the
same clock in every process of the machine.
"""

from __future__ import annotations

import argparse
import binascii
import json
import multiprocessing as mp
import os
import select
import socket
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import zmq  # noqa: E402

from table_controller.client import Snapshot, TableClient  # noqa: E402
from table_controller.event_types import CardDealt, Event  # noqa: E402
from table_controller.events import encode, make_event  # noqa: E402
from table_controller.publish import EventPublisher, StudioProxy  # noqa: E402
from table_controller.sim.table import SimOptions, SimulatedTable  # noqa: E402

CODES = [r + s for r in "A23456789TJQK" for s in "SHDC"]


def say(text: str) -> None:
    print(f"[events benchmark] {text}", file=sys.stderr, flush=True)


def stats_ms(samples_ns: list[int]) -> dict[str, float]:
    ordered = sorted(samples_ns)
    if not ordered:
        return {"n": 0}
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"n": len(ordered), "p50_ms": round(statistics.median(ordered) / 1e6, 4),
            "p99_ms": round(pick(0.99) / 1e6, 4), "max_ms": round(ordered[-1] / 1e6, 4)}


def shoe_frame(seq: int, code: str, count: int) -> bytes:
    body = f"{seq % 65536},CARD,{code},RO,{count}".encode()
    return b"$" + body + b"*" + f"{binascii.crc_hqx(body, 0xFFFF):04X}".encode() + b"\r\n"


def open_pty() -> tuple[int, int]:
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    return master, slave


class PtyReader(threading.Thread):
    """Reads frames from the pty's slave side; hands each complete frame to ``on_frame``."""

    def __init__(self, fd: int, on_frame: Any) -> None:
        super().__init__(daemon=True)
        self.fd, self.on_frame = fd, on_frame
        self.stop = threading.Event()

    def run(self) -> None:
        buffer = b""
        while not self.stop.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if not ready:
                continue
            buffer += os.read(self.fd, 4096)
            while b"\n" in buffer:
                frame, buffer = buffer.split(b"\n", 1)
                self.on_frame(frame + b"\n", time.perf_counter_ns())


def subscriber_process(endpoint: str, prefix: bytes, count: int, ready: Any, out: Any,
                       sockets: int = 1, decode_json: bool = True) -> None:
    """Child process: ``sockets`` SUB sockets; sends back [(socket, table, seq, t_ns)]."""
    context = zmq.Context()
    subs = []
    for _ in range(sockets):
        sub = context.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.RCVHWM, 0)
        sub.subscribe(prefix)
        sub.connect(endpoint)
        subs.append(sub)
    poller = zmq.Poller()
    index = {}
    for i, sub in enumerate(subs):
        poller.register(sub, zmq.POLLIN)
        index[sub] = i
    raw: list[tuple[int, bytes, bytes, int]] = []  # decoded after the run: time is taken at receipt
    seen_ready: set[int] = set()
    ready_sent = False
    deadline = None
    while len(raw) < count:
        events = poller.poll(200)
        if not events and deadline is not None and time.monotonic() > deadline:
            break
        for sub, _ in events:
            while True:
                try:
                    topic, body = sub.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                now = time.perf_counter_ns()
                if topic.endswith(b".heartbeat"):  # warm-up traffic
                    seen_ready.add(index[sub])
                    if not ready_sent and len(seen_ready) == len(subs):
                        ready.set()
                        ready_sent = True
                    continue
                raw.append((index[sub], topic, body, now))
                deadline = time.monotonic() + 5
    received: list[tuple[int, str, int, int]] = []
    for n, (i, topic, body, now) in enumerate(raw):
        if decode_json:
            event = json.loads(body)
            received.append((i, event["table"], event["seq"], now))
        else:  # raw bytes: messages are counted in arrival order
            received.append((i, topic.decode(), n, now))
    out.send(received)
    for sub in subs:
        sub.close(linger=0)
    context.term()


def start_subscribers(endpoint: str, prefix: bytes, count: int, processes: int = 1,
                      sockets: int = 1, decode_json: bool = True) -> list[tuple[Any, Any, Any]]:
    ctx = mp.get_context("fork")
    children = []
    for _ in range(processes):
        ready = ctx.Event()
        parent_end, child_end = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=subscriber_process,
                           args=(endpoint, prefix, count, ready, child_end, sockets, decode_json))
        proc.start()
        children.append((proc, ready, parent_end))
    return children


def warm_up(children: list[tuple[Any, Any, Any]], beat: Any) -> None:
    for _ in range(1000):
        beat()
        if all(ready.wait(0.01) for _, ready, _ in children):
            return
    raise RuntimeError("subscribers never became live")


def collect(children: list[tuple[Any, Any, Any]]) -> list[tuple[int, int, str, int, int]]:
    rows = []
    for n, (proc, _, pipe) in enumerate(children):
        rows += [(n, *row) for row in pipe.recv()]
        proc.join(10)
    return rows


# -- floor -------------------------------------------------------------------------------------------


def floor_pty(samples: int, gap: float) -> list[int]:
    master, slave = open_pty()
    done: dict[int, int] = {}
    got = threading.Semaphore(0)

    def on_frame(frame: bytes, t: int) -> None:
        done[len(done)] = t
        got.release()

    reader = PtyReader(slave, on_frame)
    reader.start()
    sent = []
    for i in range(samples):
        frame = shoe_frame(i, CODES[i % 52], i)
        sent.append(time.perf_counter_ns())
        os.write(master, frame)
        got.acquire(timeout=5)
        time.sleep(gap)
    reader.stop.set()
    reader.join(1)
    os.close(master)
    os.close(slave)
    return [done[i] - sent[i] for i in range(samples) if i in done]


def floor_zmq(samples: int, gap: float, card: Event) -> list[int]:
    """Raw PUB -> SUB (other process) of the card event's own two frames, no journal, no checks."""
    context = zmq.Context()
    pub = context.socket(zmq.PUB)
    pub.setsockopt(zmq.LINGER, 0)
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    children = start_subscribers(f"tcp://127.0.0.1:{port}", b"", samples, decode_json=False)
    beat = encode(make_event(table="T01", seq=1, ts=0, type="heartbeat", game="baccarat",
                             round=None, state="idle"))
    warm_up(children, lambda: pub.send_multipart(beat))
    messages = [encode(msgspec.structs.replace(card, seq=1000 + i)) for i in range(samples)]
    sent = []
    for frames in messages:
        sent.append(time.perf_counter_ns())
        pub.send_multipart(frames)
        time.sleep(gap)
    rows = collect(children)
    pub.close(linger=0)
    context.term()
    return [t - sent[seq] for _, _, _, seq, t in rows]


def floor_commit(samples: int, folder: Path, pace: float) -> list[int]:
    """One INSERT per commit (autocommit), paced like the cards (an idle disk commits slower)."""
    journal = sqlite3.connect(folder / "floor.sqlite", isolation_level=None)
    journal.execute("PRAGMA journal_mode=WAL")
    journal.execute("PRAGMA synchronous=FULL")
    journal.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    times = []
    body = "x" * 250
    for i in range(1, samples + 1):
        t = time.perf_counter_ns()
        journal.execute("INSERT INTO events VALUES (?, ?)", (i, body))
        times.append(time.perf_counter_ns() - t)
        time.sleep(pace)
    journal.close()
    return times


# -- end to end: the real stack -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ClientThread(threading.Thread):
    """The real TableClient in a thread: the time each ``card`` event reaches the display code."""

    def __init__(self, publish: str, snapshot: str) -> None:
        super().__init__(name="bench-client", daemon=True)
        self.client = TableClient(publish, snapshot, "T01")
        self.synced = threading.Event()
        self.stop = threading.Event()
        self.cards: list[tuple[int, int, str, int]] = []  # (seq, shoe_count, code, t_ns)
        self._arrived = threading.Condition()

    def wait_for(self, count: int, timeout: float) -> bool:
        """Block until ``count`` cards have arrived; False after ``timeout`` seconds."""
        with self._arrived:
            return self._arrived.wait_for(lambda: len(self.cards) >= count, timeout)

    def run(self) -> None:
        while not self.stop.is_set():
            for item in self.client.events(timeout=0.25):
                now = time.perf_counter_ns()
                if isinstance(item, Snapshot):
                    self.synced.set()
                elif isinstance(item, CardDealt):
                    shoe_count = -1 if item.shoe_count is msgspec.UNSET else item.shoe_count
                    with self._arrived:
                        self.cards.append((item.seq, shoe_count, item.code, now))
                        self._arrived.notify_all()
                if self.stop.is_set():
                    break
        self.client.close()


def card_to_display(cards: int, gap: float, journal: Path) -> dict[str, Any]:
    """Deal baccarat rounds on the real simulated table until ``cards`` cards reached the client."""
    publish = f"tcp://127.0.0.1:{free_port()}"
    snapshot = f"tcp://127.0.0.1:{free_port()}"
    sim = SimulatedTable(SimOptions(variant="baccarat", speed=0, seed=20261129, journal=journal,
                                    publish=publish, snapshot=snapshot))
    client: ClientThread | None = None
    try:
        dealer = sim.start()  # shoe on a pty, ShoeDriver over pyserial, journal, publisher; burned
        controller = sim.live.controller
        # (t_ns right before the shoe writes CARD, shoe count, code)
        draws: list[tuple[int, int, str]] = []
        appends: list[tuple[int, int, int, int, str]] = []  # (seq, t_in, t_out, shoe_count, code)
        publishes: dict[int, tuple[int, int]] = {}  # seq -> (t_in, t_out)

        shoe_draw = sim.shoe.draw

        def timed_draw() -> str | None:
            t = time.perf_counter_ns()
            code = shoe_draw()  # the CARD frame is written to the pty inside draw()
            if code is not None:
                draws.append((t, sim.shoe.count, code))
            return code

        journal_append = controller.journal.append

        def timed_append(drafts: Any, **kwargs: Any) -> list[Event]:
            t_in = time.perf_counter_ns()
            events = journal_append(drafts, **kwargs)
            t_out = time.perf_counter_ns()
            for event in events:
                if isinstance(event, CardDealt):
                    count = event.shoe_count if isinstance(event.shoe_count, int) else -1
                    appends.append((event.seq, t_in, t_out, count, event.code))
            return events

        publisher_publish = controller.publisher.publish

        def timed_publish(event: Event) -> None:
            t_in = time.perf_counter_ns()
            publisher_publish(event)
            if isinstance(event, CardDealt):
                publishes[event.seq] = (t_in, time.perf_counter_ns())

        sim.shoe.draw = timed_draw
        controller.journal.append = timed_append
        controller.publisher.publish = timed_publish
        # The dealer draws once the controller has taken the card, then waits ``pace``:
        # one card's path is measured, not a queue.
        dealer.pace = gap

        client = ClientThread(publish, snapshot)
        client.start()
        if not client.synced.wait(10):
            raise RuntimeError("the table client got no snapshot within 10 s")
        rounds = 0
        while len(client.cards) < cards and not sim.live.stopped.is_set():
            dealer.play_round(sim.live.stopped)
            rounds += 1
            if rounds % 20 == 0:
                say(f"  {rounds} rounds, {len(client.cards)} cards at the client")
        client.wait_for(len(appends), 5)  # the last round's cards may still be on the wire
    finally:
        if client is not None:
            client.stop.set()
            client.join(5)
        sim.close()
    return match_cards(draws, appends, publishes, client.cards, rounds)


def match_cards(draws: list[tuple[int, int, str]], appends: list[tuple[int, int, int, int, str]],
                publishes: dict[int, tuple[int, int]], received: list[tuple[int, int, str, int]],
                rounds: int) -> dict[str, Any]:
    """Pair each card the client got with its draw: same shoe count and code, the latest draw before
    the journal took it (shoe counts restart with each shoe; burn cards are drawn but not dealt)."""
    committed = {seq: (t_in, t_out, count, code) for seq, t_in, t_out, count, code in appends}
    total: list[int] = []
    stages: dict[str, list[int]] = {"shoe_write_to_journal_append": [], "journal_append": [],
                                    "publish_call": [], "publish_to_client": []}
    unmatched = 0
    for seq, count, code, t_client in received:
        if seq not in committed or seq not in publishes:
            unmatched += 1
            continue
        t_in, t_out, _, _ = committed[seq]
        candidates = [t for t, c, k in draws if c == count and k == code and t < t_in]
        if not candidates:
            unmatched += 1
            continue
        t_draw = max(candidates)
        p_in, p_out = publishes[seq]
        total.append(t_client - t_draw)
        stages["shoe_write_to_journal_append"].append(t_in - t_draw)
        stages["journal_append"].append(t_out - t_in)
        stages["publish_call"].append(p_out - p_in)
        stages["publish_to_client"].append(t_client - p_out)
    return {"latencies": total, "stages": stages, "dealt": len(appends), "received": len(received),
            "unmatched": unmatched, "rounds": rounds, "draws": len(draws)}


# -- fan-out -----------------------------------------------------------------------------------------


def fan_out(tables: int, subscribers: int, rate: float, seconds: float) -> dict[str, Any]:
    context = zmq.Context()
    proxy = StudioProxy("tcp://127.0.0.1:0", "tcp://127.0.0.1:0", context=context).start()
    names = [f"T{n:02d}" for n in range(1, tables + 1)]
    publishers = [EventPublisher(t, f"connect:{proxy.bound_frontend}", "tcp://127.0.0.1:0",
                                 context=context).start() for t in names]
    seqs = dict.fromkeys(names, 0)

    def emit(index: int, type: str, **payload: Any) -> tuple[str, int]:
        table = names[index]
        seqs[table] += 1
        publishers[index].publish(make_event(table=table, seq=seqs[table], ts=time.time(),
                                             type=type, game="baccarat", round=None, **payload))
        return table, seqs[table]

    per_table = int(rate * seconds)
    expected = tables * per_table
    processes = 2
    children = start_subscribers(proxy.bound_backend, b"", expected * (subscribers // processes),
                                 processes=processes, sockets=subscribers // processes)
    warm_up(children, lambda: [emit(i, "heartbeat", state="idle") for i in range(tables)])
    sent: dict[tuple[str, int], int] = {}
    period = 1.0 / rate
    start = time.perf_counter()
    for n in range(per_table):
        for i in range(tables):  # spread the tables over the period, as real tables would be
            target = start + n * period + i * period / tables
            delay = target - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            key = (names[i], seqs[names[i]] + 1)
            sent[key] = time.perf_counter_ns()
            emit(i, "alert", kind="no-read", severity="info", detail=f"fan-out {n}")
    elapsed = time.perf_counter() - start
    rows = collect(children)
    latencies = [t - sent[(table, seq)] for _, _, table, seq, t in rows]
    delivered = len(rows)
    for publisher in publishers:
        publisher.close()
    proxy.close()
    context.term()
    result = {"tables": tables, "subscribers": subscribers, "rate_per_table": rate,
              "seconds": round(elapsed, 2), "expected_deliveries": expected * subscribers,
              "delivered": delivered, "lost": expected * subscribers - delivered,
              "latency": stats_ms(latencies)}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=2000, help="floor samples (default 2000)")
    parser.add_argument("--cards", type=int, default=400,
                        help="cards dealt on the real table (default 400, at least 300)")
    parser.add_argument("--gap-ms", type=float, default=2.0,
                        help="time between floor samples (default 2 ms)")
    parser.add_argument("--fan-seconds", type=float, default=5.0, help="fan-out duration (default 5 s)")
    parser.add_argument("--subscribers", type=int, default=100, help="fan-out subscribers (default 100)")
    parser.add_argument("--quick", action="store_true",
                        help="a short run (500 floor samples, 300 cards, 2 s fan-out)")
    args = parser.parse_args()
    samples, cards, fan_seconds = ((500, 300, 2.0) if args.quick
                                   else (args.samples, max(300, args.cards), args.fan_seconds))
    gap = args.gap_ms / 1000
    load_at_start = os.getloadavg()[0]
    card = make_event(table="T01", seq=123456, ts=time.time(), type="card", game="baccarat",
                      round="T01-000001", position="player", index=0, code="TS", source="shoe",
                      shoe_count=17)
    with tempfile.TemporaryDirectory(dir=Path(__file__).resolve().parent) as tmp:
        folder = Path(tmp)
        say(f"floor: pty, pyzmq, journal commit ({samples} samples; commits paced)")
        pty_ns = floor_pty(samples, gap)
        zmq_ns = floor_zmq(samples, gap, card)
        commit_ns = floor_commit(min(samples, 1000), folder, max(gap, 0.01))
        # The dealer draws no faster than the journal commits (a real one deals about one card
        # a second): otherwise the benchmark would measure a queue, not the path of one card.
        card_gap = max(0.01, 3 * sorted(commit_ns)[int(0.99 * (len(commit_ns) - 1))] / 1e9)
        say(f"card to display on the real simulated table ({cards} cards, "
            f"the dealer waits {card_gap * 1000:.1f} ms after each)")
        # The table's journal lives on the same disk as the floor's commits.
        e2e_run = card_to_display(cards, card_gap, folder / "T01.sqlite")
    say(f"fan-out: 10 tables x {args.subscribers} subscribers, 50 events/s per table, {fan_seconds} s")
    fan = fan_out(10, args.subscribers, 50.0, fan_seconds)
    floor = {"pty_write_read": stats_ms(pty_ns), "zmq_pub_sub": stats_ms(zmq_ns),
             "journal_commit": stats_ms(commit_ns)}
    floor_p99 = sum(floor[k]["p99_ms"] for k in floor)
    floor_p50 = sum(floor[k]["p50_ms"] for k in floor)
    e2e = stats_ms(e2e_run["latencies"])
    report = {
        "benchmark": "events",
        "machine": {"cpus": os.cpu_count(), "load_1min_at_start": round(load_at_start, 2),
                    "load_1min_at_end": round(os.getloadavg()[0], 2)},
        "floor": floor,
        "floor_plus_commit_p50_ms": round(floor_p50, 4),
        "floor_plus_commit_p99_ms": round(floor_p99, 4),
        "card_to_display": {"stack": "real: SimulatedShoe on a pty -> ShoeDriver (pyserial) -> "
                                     "TableController -> Journal -> EventPublisher -> TableClient",
                            **e2e},
        "card_to_display_rounds": e2e_run["rounds"],
        "card_to_display_cards_journaled": e2e_run["dealt"],
        "card_to_display_lost": e2e_run["dealt"] - e2e_run["received"],
        "card_to_display_unmatched": e2e_run["unmatched"],
        "dealer_pause_after_card_ms": round(card_gap * 1000, 2),
        "card_to_display_stages": {
            "note": "the same cards of the real stack, split where the controller calls the "
                    "journal and the publisher",
            **{name: stats_ms(v) for name, v in e2e_run["stages"].items()},
        },
        "card_to_display_p99_over_floor": round(e2e["p99_ms"] / floor_p99, 2) if floor_p99 else None,
        "card_to_display_target_met": e2e.get("p99_ms", 1e9) <= 3 * floor_p99,
        "card_to_display_p99_over_floor_p50": round(e2e["p99_ms"] / floor_p50, 2) if floor_p50 else None,
        "fan_out": fan,
        "fan_out_target_met": fan["lost"] == 0 and fan["latency"].get("p99_ms", 1e9) <= 20.0,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
