"""The studio API over the archive, through real HTTP: keys (401 without one, scoped to
tables), round history by time window with cursor pages, one round whole and equal to the
table's journal, refusals of bad parameters, the OpenAPI document."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from archive_helpers import LiveTable, Studio

from table_controller.archive import ArchiveFollower, SQLiteArchive, TableSource, open_archive
from table_controller.event_types import CardDealt, RoundResult, RoundStarted, RoundVoided, decode_event
from table_controller.journal.store import JournalRecord
from table_controller.studio.keys import key_hash, new_key
from table_controller.studio.rounds import assemble_round

Setup = tuple[Studio, LiveTable, dict[str, str]]


@pytest.fixture
def setup(tmp_path: Path, archive_location: str) -> Iterator[Setup]:
    """The API over an archive of one table's 6 rounds, on each backend."""
    table = LiveTable(tmp_path / "T01.sqlite")
    table.deal(6)
    archive = open_archive(archive_location)
    ArchiveFollower(archive, [TableSource("T01", table.endpoint)]).catch_up_all()
    keys = {"all": new_key(), "t01": new_key(), "t02": new_key()}
    for name, tables in (("all", ["*"]), ("t01", ["T01"]), ("t02", ["T02"])):
        archive.add_api_key(key_hash(keys[name]), name, tables, "2026-12-02T00:00:00.000Z")
    studio = Studio(archive)
    yield studio, table, keys
    studio.stop()
    archive.close()
    table.close()


def test_without_a_valid_key_the_answer_is_401_and_nothing_else(setup: Setup) -> None:
    studio, _, keys = setup
    for path in ("/v1/tables", "/v1/tables/T01/rounds", "/v1/tables/T01/rounds/R1", "/v1/tables/T09/rounds"):
        for key in (None, "", "tck_not-a-key", keys["all"] + "x", "x" * 5000):
            status, body = studio.get(path, key)
            assert status == 401 and body == {"error": "a valid API key is required"}, (path, key, status)
    assert studio.get("/v1/tables", keys["all"], header="x-api-key")[0] == 200


def test_a_key_reads_only_its_tables(setup: Setup) -> None:
    studio, _, keys = setup
    assert [t["table"] for t in studio.get("/v1/tables", keys["t01"])[1]["tables"]] == ["T01"]
    assert studio.get("/v1/tables", keys["t02"])[1]["tables"] == []
    assert studio.get("/v1/tables/T01/rounds/R1", keys["t02"])[0] == 404
    assert studio.get("/v1/tables/T01/rounds/R1", keys["t01"])[0] == 200


def test_one_round_is_the_tables_journal_of_it(setup: Setup) -> None:
    studio, table, keys = setup
    status, rnd = studio.get("/v1/tables/T01/rounds/R3", keys["t01"])
    assert status == 200
    rows = list(table.journal.records(round_id="R3"))
    events = [decode_event(r.body) for r in rows]
    cards = [e for e in events if isinstance(e, CardDealt) and e.position != "burn"]
    result = next(e for e in events if isinstance(e, RoundResult))
    start = next(e for e in events if isinstance(e, RoundStarted))
    assert [(c["position"], c["index"], c["code"], c["source"], c["ts"]) for c in rnd["cards"]] == [
        (c.position, c.index, c.code, c.source, c.ts) for c in cards]
    assert rnd["status"] == "resolved" and rnd["outcome"] == result.outcome and rnd["payouts"] == result.payouts
    assert rnd["started_at"] == start.ts and rnd["ended_at"] == result.ts and rnd["variant"] == "baccarat"
    assert (rnd["first_seq"], rnd["last_seq"], rnd["last_hash"]) == (rows[0].seq, rows[-1].seq, rows[-1].hash)
    assert studio.get("/v1/tables/T01/rounds/R99", keys["t01"])[0] == 404


def test_history_by_time_window_in_cursor_pages(setup: Setup) -> None:
    studio, table, keys = setup
    starts = [decode_event(r.body) for r in table.journal.records(types=["round.start"])]
    since, until = starts[1].ts, starts[5].ts  # rounds R2..R5 started in [since, until)
    got, cursor, pages = [], None, 0
    while True:
        path = f"/v1/tables/T01/rounds?from={since}&to={until}&limit=3" + (f"&cursor={cursor}" if cursor else "")
        status, page = studio.get(path, keys["all"])
        assert status == 200, page
        got += [r["round"] for r in page["rounds"]]
        cursor, pages = page["next_cursor"], pages + 1
        if cursor is None:
            break
    assert got == ["R2", "R3", "R4", "R5"] and pages == 2
    everything = studio.get("/v1/tables/T01/rounds?from=2000-01-01T00:00:00Z", keys["all"])[1]["rounds"]
    assert [r["round"] for r in everything] == [f"R{n}" for n in range(1, 7)]
    assert all(r["status"] == "resolved" for r in everything)


@pytest.mark.parametrize("query", ["from=yesterday", "to=2026-13-45T00:00:00Z", "limit=0", "limit=100000",
                                   "limit=ten", "cursor=-1", "cursor=abc"])
def test_a_bad_parameter_is_a_400_that_says_which(setup: Setup,
                                                  query: str) -> None:
    studio, _, keys = setup
    status, body = studio.get(f"/v1/tables/T01/rounds?{query}", keys["all"])
    assert status == 400 and body["error"]


def test_the_openapi_document_describes_every_path(setup: Setup) -> None:
    studio, _, _ = setup
    status, doc = studio.get("/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.")
    assert set(doc["paths"]) == {"/v1/tables", "/v1/tables/{table}/rounds", "/v1/tables/{table}/rounds/{round}",
                                 "/v1/tables/{table}/statistics", "/v1/tables/{table}/evidence/{picture}",
                                 "/v1/stream"}


def test_a_voided_round_is_cancelled_with_its_reason() -> None:
    def rec(seq: int, event: Any) -> JournalRecord:
        return JournalRecord(seq, event.ts, event.type, event.round, msgspec.json.encode(event).decode(), f"h{seq}")

    common = {"table": "T01", "game": "baccarat", "round": "R7"}
    rows = [
        rec(10, RoundStarted(seq=10, ts="2026-12-02T10:00:00.000Z", variant="baccarat", betting_seconds=15,
                             dealer="D042", **common)),
        rec(11, CardDealt(seq=11, ts="2026-12-02T10:00:20.000Z", position="player", index=0, code="AS",
                          source="shoe", **common)),
        rec(12, RoundVoided(seq=12, ts="2026-12-02T10:00:30.000Z", reason="misdeal: card dropped", refund=True,
                            **common)),
    ]
    rnd = assemble_round("T01", "R7", rows)
    assert rnd is not None
    assert (rnd.status, rnd.void_reason, rnd.ended_at) == ("cancelled", "misdeal: card dropped", rows[2].ts)
    assert [c.code for c in rnd.cards] == ["AS"] and rnd.outcome is None and rnd.dealer == "D042"
    assert (rnd.first_seq, rnd.last_seq, rnd.last_hash) == (10, 12, "h12")
    assert assemble_round("T01", "R8", []) is None


def test_one_command_archives_and_serves_a_simulated_studio(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = subprocess.run(
        [sys.executable, "-m", "table_controller", "studio", "sim", "--tables", "2", "--rounds", "2", "--speed", "0",
         "--port", str(port), "--base-port", "25800", "--dir", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["key"].startswith("tck_") and lines[0]["api"].endswith(str(port))
    from table_controller.journal import JournalReader

    last: dict[str, int] = {}
    with SQLiteArchive(tmp_path / "studio.sqlite") as archive:
        for table in ("T01", "T02"):
            with JournalReader(tmp_path / f"{table}.sqlite") as journal:
                assert [(e.record.seq, e.record.hash) for e in archive.events(table)] == [
                    (r.seq, r.hash) for r in journal.records()]
                last[table] = journal.last_seq
    assert lines[-1]["archived"] == last and min(last.values()) > 20


def _read_rounds(studio: Studio, key: str, n: int, since: str | None = None,
                 then: Any = None) -> list[tuple[str, dict[str, Any]]]:
    """Open the stream, call ``then()`` once it is open, and read ``n`` round events (id, data)."""
    request = urllib.request.Request(studio.base + "/v1/stream" + (f"?since={since}" if since else ""))
    request.add_header("authorization", f"Bearer {key}")
    out: list[tuple[str, dict[str, Any]]] = []
    with urllib.request.urlopen(request, timeout=20) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        reply.readline()  # the opening comment: the stream is open
        if then is not None:
            then()
        ident = None
        while len(out) < n:
            line = reply.readline().decode().rstrip("\n")
            if line.startswith("id: "):
                ident = line[4:]
            elif line.startswith("data: "):
                assert ident is not None
                out.append((ident, json.loads(line[6:])))
    return out


def test_the_live_stream_sends_each_result_as_it_is_archived_and_resumes(archive_location: str,
                                                                            setup: Setup) -> None:
    studio, table, keys = setup
    assert studio.get("/v1/stream")[0] == 401
    old = _read_rounds(studio, keys["t01"], 6, since="T01:0")
    assert [d["round"] for _, d in old] == [f"R{n}" for n in range(1, 7)]
    archive = open_archive(archive_location)
    follower = ArchiveFollower(archive, [TableSource("T01", table.endpoint)])

    def deal_two() -> None:
        table.deal(2)
        follower.catch_up_all()

    new = _read_rounds(studio, keys["t01"], 2, then=deal_two)  # from now: only what comes
    assert [d["round"] for _, d in new] == ["R7", "R8"] and all(d["status"] == "resolved" for _, d in new)
    resumed = _read_rounds(studio, keys["t01"], 2, since=old[4][0])  # after R5
    assert [d["round"] for _, d in resumed] == ["R6", "R7"]
    archive.close()


def test_statistics_count_the_rounds_and_check_outcomes_against_the_par_sheet(setup: Setup) -> None:
    studio, table, keys = setup
    status, report = studio.get("/v1/tables/T01/statistics?from=2000-01-01T00:00:00Z", keys["t01"])
    assert status == 200, report
    results = [decode_event(r.body) for r in table.journal.records(types=["round.result"])]
    assert report["variant"] == "baccarat" and report["all"]["rounds"] == 6 and report["all"]["results"] == 6
    assert report["all"]["mean_round_s"] > 0 and sum(h["rounds"] for h in report["hours"]) == 6
    banker = {c["label"]: c for c in report["outcomes"] if c["bet"] == "banker"}
    wins = sum(1 for e in results if isinstance(e, RoundResult) and e.outcome.get("winner") == "banker")
    assert banker["win"]["observed"] == wins and banker["win"]["rounds"] == 6
    assert abs(banker["win"]["expected"] - 0.4585974) < 1e-6  # the exact PAR figure
    lo, hi = banker["win"]["ci99"]
    assert lo < banker["win"]["expected"] < hi
    assert studio.get("/v1/tables/T01/statistics", keys["t02"])[0] == 404


def test_a_share_far_from_the_par_sheet_is_flagged() -> None:
    from table_controller.studio.rounds import RoundRecord
    from table_controller.studio.statistics import outcome_checks, period_stats

    par = {"player": {"outcomes": [{"net": "1", "label": "win", "probability_float": 0.4462},
                                   {"net": "-1", "label": "loss", "probability_float": 0.4586},
                                   {"net": "0", "label": "push", "probability_float": 0.0952}]}}

    def rnd(n: int, net: str) -> RoundRecord:
        return RoundRecord(table="T01", round=f"R{n}", status="resolved", game="baccarat", variant="baccarat",
                           started_at="2026-12-02T10:00:00.000Z", betting_closed_at="2026-12-02T10:00:15.000Z",
                           ended_at="2026-12-02T10:00:40.000Z", payouts={"player": net})

    fair = [rnd(n, "1" if n % 2 else "-1") for n in range(100)]
    assert not any(c.flagged for c in outcome_checks(fair, par) if c.label != "push")
    rigged = [rnd(n, "1") for n in range(100)]  # the player won every one of 100 rounds
    flagged = {c.label for c in outcome_checks(rigged, par) if c.flagged}
    assert flagged == {"win", "loss", "push"}
    void = RoundRecord(table="T01", round="V", status="cancelled", game="baccarat", void_reason="misdeal: dropped",
                       started_at="2026-12-02T11:00:00.000Z", betting_closed_at="2026-12-02T11:00:15.000Z",
                       ended_at="2026-12-02T11:00:20.000Z")
    from table_controller.studio.statistics import table_report

    by_dealer = table_report("T01", "baccarat", [*fair[:3], msgspec.structs.replace(void, dealer="D7")], None)
    assert [(d["period"], d["rounds"], d["voids"]) for d in by_dealer["dealers"]] == [("D7", 1, 1), ("unknown", 3, 0)]
    whole, hours = period_stats([*fair[:3], void])
    assert (whole.rounds, whole.results, whole.voids, dict(whole.voids_by_cause)) == (4, 3, 1, {"misdeal": 1})
    assert [h.period for h in hours] == ["2026-12-02T10:00Z", "2026-12-02T11:00Z"]
    assert whole.to_dict()["mean_betting_s"] == 15.0 and whole.to_dict()["mean_round_s"] == (40 * 3 + 20) / 4


def _rows(*events: Any) -> list[JournalRecord]:
    from table_controller.event_types import encode_event, numbered

    out = []
    for seq, e in enumerate(events, start=1):
        body = encode_event(numbered(e, seq)).decode()
        out.append(JournalRecord(seq, e.ts, e.type, e.round, body, "h"))
    return out


def test_pauses_are_counted_by_cause_with_their_seconds_and_shoes_number_the_rounds() -> None:
    from table_controller.event_types import ShoeChanged, TableStateChanged
    from table_controller.studio.rounds import RoundRecord, shoe_starts
    from table_controller.studio.statistics import pauses_from, shoe_report, table_report

    def state(ts: str, name: str, reason: str | None = None, **extra: Any) -> TableStateChanged:
        return TableStateChanged(table="T01", ts=ts, game="baccarat", round=None, state=name,  # type: ignore[arg-type]
                                 reason=reason, **extra)

    states = _rows(
        state("2026-12-02T10:00:00.000Z", "dealing"),
        state("2026-12-02T10:00:10.000Z", "paused", "shoe link down: no frame", cause="shoe-link-down"),
        state("2026-12-02T10:00:40.500Z", "paused", "misdeal: dropped card"),  # another cause: a new pause
        state("2026-12-02T10:01:00.500Z", "dealing"),
        state("2026-12-02T11:59:59.000Z", "paused", cause="lid-open"),  # still open at the end
    )
    pauses = pauses_from(states)
    assert [(p.cause, p.seconds) for p in pauses] == [("shoe-link-down", 30.5), ("misdeal", 20.0), ("lid-open", None)]

    def shoe(ts: str, event: str, count: int) -> ShoeChanged:
        return ShoeChanged(table="T01", ts=ts, game="baccarat", round=None, event=event, count=count)  # type: ignore[arg-type]

    shoe_rows = _rows(shoe("2026-12-02T09:00:00.000Z", "new", 0), shoe("2026-12-02T09:30:00.000Z", "cut", 396),
                      shoe("2026-12-02T09:31:00.000Z", "new", 0))
    starts = shoe_starts(shoe_rows)
    assert starts == [1, 3]
    rounds = [RoundRecord(table="T01", round=f"R{n}", status="resolved" if n != 2 else "cancelled", game="baccarat",
                          shoe=s, started_at="2026-12-02T10:00:00.000Z") for n, s in ((1, 1), (2, 1), (3, 2))]
    shoes = shoe_report(rounds, shoe_rows)
    assert [(s["shoe"], s["rounds"], s["results"], s["voids"], s["shoe_count"]) for s in shoes] == [
        (1, 2, 1, 1, 396), (2, 1, 1, 0, None)]
    report = table_report("T01", "baccarat", rounds, None, pauses, shoe_rows)
    assert report["all"]["pauses"] == 3
    assert report["all"]["pauses_by_cause"]["shoe-link-down"] == {"count": 1, "seconds": 30.5}
    assert [(h["period"], h["pauses"]) for h in report["hours"]] == [("2026-12-02T10:00Z", 2), ("2026-12-02T11:00Z", 1)]


def test_a_revoked_key_is_refused_from_the_next_request_on(tmp_path: Path, archive_location: str) -> None:
    import json as json_
    import subprocess
    import sys

    table = LiveTable(tmp_path / "T01.sqlite")
    table.deal(1)
    cli = [sys.executable, "-m", "table_controller", "studio"]
    made = subprocess.run([*cli, "key", "--db", archive_location, "--name", "op", "--tables", "*", "--json"],
                          capture_output=True, text=True, timeout=60)
    key = json_.loads(made.stdout)
    archive = open_archive(archive_location)
    ArchiveFollower(archive, [TableSource("T01", table.endpoint)]).catch_up_all()
    studio = Studio(archive)
    try:
        assert studio.get("/v1/tables", key["key"])[0] == 200
        done = subprocess.run([*cli, "revoke", "--db", archive_location, "--id", str(key["id"]), "--json"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and json_.loads(done.stdout) == {"id": key["id"], "revoked": True}
        assert studio.get("/v1/tables", key["key"])[0] == 401
        again = subprocess.run([*cli, "revoke", "--db", archive_location, "--id", str(key["id"])],
                               capture_output=True, text=True, timeout=60)
        assert again.returncode == 1 and "no live API key" in again.stdout
    finally:
        studio.stop()
        archive.close()
        table.close()
