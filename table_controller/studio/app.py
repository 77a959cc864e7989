"""The studio's HTTP API over the archive (starlette): tables, round history, one round.

Every request needs ``Authorization: Bearer <key>`` (or ``X-API-Key``); without a
valid key the answer is 401 and nothing else; a key not scoped to a table gets
404 for it, as for a table the archive does not hold (no key learns which
tables exist beyond its own). ``/openapi.json`` (no key needed) describes it all.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from table_controller.archive.store import SQLiteArchive
from table_controller.event_types import parse_ts
from table_controller.studio.history import EVERYTHING, studio_report
from table_controller.studio.keys import key_hash, may_read
from table_controller.studio.rounds import assemble_round, summary

#: Rounds per page at most, and by default.
MAX_PAGE = 500
DEFAULT_PAGE = 100
#: A window given without ``to`` ends now; without ``from`` it starts this long before ``to``.
DEFAULT_WINDOW = timedelta(hours=1)
FAR_FUTURE = "9999-12-31T23:59:59.999Z"
#: Seconds between looks at the archive for new results, in a live stream.
STREAM_POLL = 0.5


def _cursor(text: str) -> dict[str, int]:
    """``T01:120,T02:98`` (an event id of the stream) as table -> seq; what is not that is left out."""
    out: dict[str, int] = {}
    for part in text.split(",")[:1000]:
        table, _, seq = part.partition(":")
        if table and seq.isdigit() and len(seq) < 19:
            out[table] = int(seq)
    return out


def _json(data: Any, status: int = 200) -> Response:
    return Response(msgspec.json.encode(data), status_code=status, media_type="application/json")


def _error(status: int, text: str) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status)


def _ts_param(request: Request, name: str) -> str | None:
    """An RFC 3339 time from the query, normalised to the journal's text form; ValueError."""
    raw = request.query_params.get(name)
    if raw is None:
        return None
    try:
        epoch = parse_ts(raw)
    except Exception as e:
        raise ValueError(f"{name}: not an RFC 3339 time ({e})") from None
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def create_app(archive: SQLiteArchive) -> Starlette:
    """The API over ``archive`` (shared by every request; the archive serialises its reads)."""

    def scope(request: Request) -> list[str] | None:
        header = request.headers.get("authorization", "")
        key = header[7:].strip() if header.lower().startswith("bearer ") else request.headers.get("x-api-key", "")
        if not key or len(key) > 200:
            return None
        return archive.api_key_tables(key_hash(key))

    def guarded(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            tables = await asyncio.to_thread(scope, request)
            if tables is None:
                return _error(401, "a valid API key is required")
            table = request.path_params.get("table")
            if table is not None and not may_read(tables, table):
                return _error(404, f"no table {table}")
            try:
                return await asyncio.to_thread(handler, request, tables)
            except ValueError as e:
                return _error(400, str(e))
        return endpoint

    def list_tables(request: Request, tables: list[str]) -> Response:
        out = []
        for table, (seq, hash_) in archive.tables().items():
            if not may_read(tables, table):
                continue
            recent = []
            for rec in archive.recent_settlements(table, 20):
                rnd = assemble_round(table, rec.round or "", archive.round_rows(table, rec.round or ""))
                if rnd is not None:
                    recent.append(summary(rnd))
            out.append({"table": table, "last_seq": seq, "last_hash": hash_, "last_results": recent})
        return _json({"tables": out})

    def list_rounds(request: Request, tables: list[str]) -> Response:
        table = request.path_params["table"]
        until = _ts_param(request, "to") or FAR_FUTURE
        since = _ts_param(request, "from")
        if since is None:
            end = datetime.now(UTC) if until == FAR_FUTURE else datetime.fromtimestamp(parse_ts(until), UTC)
            since = (end - DEFAULT_WINDOW).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        try:
            limit = int(request.query_params.get("limit", DEFAULT_PAGE))
            after = int(request.query_params.get("cursor", "0"))
        except ValueError:
            raise ValueError("limit and cursor are whole numbers") from None
        if not 1 <= limit <= MAX_PAGE or after < 0:
            raise ValueError(f"limit is 1 to {MAX_PAGE}, cursor a cursor this API gave")
        starts = archive.round_starts(table, since, until, after, limit + 1)
        page, more = starts[:limit], len(starts) > limit
        rounds = []
        for round_id, _, _ in page:
            rnd = assemble_round(table, round_id, archive.round_rows(table, round_id))
            if rnd is not None:
                rounds.append(summary(rnd))
        return _json({"table": table, "from": since, "to": until, "rounds": rounds,
                      "next_cursor": str(page[-1][2]) if more else None})

    def statistics(request: Request, tables: list[str]) -> Response:
        table = request.path_params["table"]
        since = _ts_param(request, "from") or EVERYTHING[0]
        until = _ts_param(request, "to") or EVERYTHING[1]
        return _json(studio_report(archive, [table], since, until)["tables"][0])

    def one_round(request: Request, tables: list[str]) -> Response:
        table, round_id = request.path_params["table"], request.path_params["round"]
        rnd = assemble_round(table, round_id, archive.round_rows(table, round_id))
        if rnd is None:
            return _error(404, f"no round {round_id} at table {table}")
        return _json(rnd)

    async def stream(request: Request) -> Response:
        """Server-sent events: every round result and void as it is archived (``event: round``,
        ``data``: the round summary, ``id``: ``T01:seq,T02:seq`` to resume with Last-Event-ID)."""
        tables = await asyncio.to_thread(scope, request)
        if tables is None:
            return _error(401, "a valid API key is required")
        cursor = _cursor(request.headers.get("last-event-id") or request.query_params.get("since", ""))
        since_now = "last-event-id" not in request.headers and "since" not in request.query_params

        def readable() -> list[str]:
            return [t for t in archive.tables() if may_read(tables, t)]

        if since_now:  # a new listener starts from what is archived now
            cursor = {t: seq for t, (seq, _) in archive.tables().items() if may_read(tables, t)}

        async def events() -> Any:
            nonlocal cursor
            yield ": stream of round results\n\n"
            while not await request.is_disconnected():
                found = await asyncio.to_thread(archive.settlements_after, cursor, readable())
                for table, rec in found:
                    rnd = await asyncio.to_thread(assemble_round, table, rec.round or "",
                                                  archive.round_rows(table, rec.round or ""))
                    cursor = {**cursor, table: rec.seq}
                    if rnd is not None:
                        ident = ",".join(f"{t}:{q}" for t, q in sorted(cursor.items()))
                        yield f"event: round\nid: {ident}\ndata: {msgspec.json.encode(summary(rnd)).decode()}\n\n"
                if not found:
                    yield ": keep-alive\n\n"
                    await asyncio.sleep(STREAM_POLL)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def openapi(request: Request) -> Response:
        return JSONResponse(OPENAPI)

    return Starlette(routes=[
        Route("/v1/tables", guarded(list_tables)),
        Route("/v1/tables/{table}/rounds", guarded(list_rounds)),
        Route("/v1/tables/{table}/rounds/{round}", guarded(one_round)),
        Route("/v1/tables/{table}/statistics", guarded(statistics)),
        Route("/v1/stream", stream),
        Route("/openapi.json", openapi),
    ])


_KEY: list[dict[str, list[str]]] = [{"apiKey": []}]
_TABLE = {"name": "table", "in": "path", "required": True, "schema": {"type": "string"}}
OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "table-controller studio API", "version": "1",
             "description": "Round history from the studio archive. Every path needs an API key "
                            "(Authorization: Bearer <key>, or X-API-Key); without one: 401."},
    "components": {"securitySchemes": {
        "apiKey": {"type": "http", "scheme": "bearer"},
        "apiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key"}}},
    "security": [{"apiKey": []}, {"apiKeyHeader": []}],
    "paths": {
        "/v1/tables": {"get": {"summary": "The tables this key may read: last seq and hash, last 20 results",
                               "security": _KEY, "responses": {"200": {"description": "tables"},
                                                               "401": {"description": "no valid key"}}}},
        "/v1/tables/{table}/rounds": {"get": {
            "summary": "Rounds started in a time window, oldest first, a page at a time",
            "security": _KEY,
            "parameters": [_TABLE,
                           {"name": "from", "in": "query", "schema": {"type": "string", "format": "date-time"},
                            "description": "window start (inclusive); default: an hour before 'to'"},
                           {"name": "to", "in": "query", "schema": {"type": "string", "format": "date-time"},
                            "description": "window end (exclusive); default: open"},
                           {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1,
                                                                       "maximum": MAX_PAGE}},
                           {"name": "cursor", "in": "query", "schema": {"type": "string"},
                            "description": "next_cursor of the previous page"}],
            "responses": {"200": {"description": "a page: rounds and next_cursor (null on the last page)"},
                          "400": {"description": "a bad parameter"}, "401": {"description": "no valid key"},
                          "404": {"description": "no such table for this key"}}}},
        "/v1/tables/{table}/statistics": {"get": {
            "summary": "Rounds started in [from, to): per hour and in all, rounds, results, voids by cause, mean "
                       "betting / dealing / round seconds, and each bet's outcome shares against the exact PAR "
                       "sheet with a 99 % interval (flagged outside it)",
            "security": _KEY,
            "parameters": [_TABLE,
                           {"name": "from", "in": "query", "schema": {"type": "string", "format": "date-time"}},
                           {"name": "to", "in": "query", "schema": {"type": "string", "format": "date-time"}}],
            "responses": {"200": {"description": "the report"}, "401": {"description": "no valid key"},
                          "404": {"description": "no such table for this key"}}}},
        "/v1/stream": {"get": {
            "summary": "Server-sent events: each round result or void of this key's tables as it is archived "
                       "(event 'round', data: the round summary, id: 'T01:seq,...'; resume with Last-Event-ID "
                       "or ?since=<id>; without either, from now)",
            "security": _KEY,
            "responses": {"200": {"description": "text/event-stream"}, "401": {"description": "no valid key"}}}},
        "/v1/tables/{table}/rounds/{round}": {"get": {
            "summary": "One round: every card in deal order with its time, position and source, burns, "
                       "start / betting closed / end times, status, outcome, payouts or void reason, and "
                       "the journal seq range with the last hash",
            "security": _KEY,
            "parameters": [_TABLE, {"name": "round", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "the round"}, "401": {"description": "no valid key"},
                          "404": {"description": "no such round or table for this key"}}}},
    },
}
