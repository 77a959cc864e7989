"""The studio's HTTP API over the archive (starlette): tables, round history, one round.

Every request needs ``Authorization: Bearer <key>`` (or ``X-API-Key``); without a
valid key the answer is 401 and nothing else; a key not scoped to a table gets
404 for it, as for a table the archive does not hold (no key learns which
tables exist beyond its own). ``/openapi.json`` (no key needed) describes it all.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from table_controller.archive.base import Archive
from table_controller.studio.history import EVERYTHING, read_round, read_rounds, studio_report
from table_controller.studio.keys import key_hash, may_read
from table_controller.studio.rounds import (
    ErrorReply,
    RoundRecord,
    RoundsPage,
    TableEntry,
    TablesReply,
    summary,
)

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


#: An RFC 3339 date-time (section 5.6): ASCII digits, a 'T', seconds, an offset; no more than nanoseconds.
_RFC3339 = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?"
                      r"(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))")
#: A cursor is a seq: an SQLite INTEGER.
MAX_CURSOR = 2**63 - 1


def _text(moment: datetime) -> str:
    """The journal's text form of a UTC time (``%Y`` would not pad a year before 1000)."""
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
            f"{moment.second:02d}.{moment.microsecond // 1000:03d}Z")


def _ts_param(request: Request, name: str) -> datetime | None:
    """An RFC 3339 time from the query in UTC, rounded up to the millisecond (a journal time,
    in whole milliseconds, is before it exactly when it is before the rounded time); ValueError."""
    raw = request.query_params.get(name)
    if raw is None:
        return None
    match = _RFC3339.fullmatch(raw)
    if match is None:
        raise ValueError(f"{name}: not an RFC 3339 time such as 2026-12-02T10:00:00Z: {raw[:40]!r}")
    year, month, day, hour, minute, second, fraction, sign, off_hours, off_minutes = match.groups()
    try:
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=UTC)
        if sign is not None:
            if int(off_hours) > 23 or int(off_minutes) > 59:
                raise ValueError("offset out of range")
            offset = timedelta(hours=int(off_hours), minutes=int(off_minutes))
            moment = moment - offset if sign == "+" else moment + offset
        if fraction:
            moment += timedelta(milliseconds=-(-int(fraction) * 1000 // 10 ** len(fraction)))
    except (ValueError, OverflowError) as e:
        raise ValueError(f"{name}: not a time in the years 1 to 9999 UTC: {raw[:40]!r} ({e})") from None
    return moment


def _int_param(request: Request, name: str, default: int, low: int, high: int, what: str) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not re.fullmatch(r"[0-9]{1,19}", raw) or not low <= int(raw) <= high:
        raise ValueError(f"{name}: {what}, not {raw[:40]!r}")
    return int(raw)


def create_app(archive: Archive, evidence: dict[str, Path] | None = None) -> Starlette:
    """The API over ``archive`` (shared by every request; the archive serialises its reads);
    ``evidence``: each table's folder of pictures (its ``.evidence`` folder, shared or copied to
    the studio), served to keys that may read the table."""
    folders = dict(evidence or {})

    def guarded(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            tables: list[str] = request.scope[_TABLES]  # set by KeyGate, which let the request through
            table = request.path_params.get("table")
            try:
                return await asyncio.to_thread(call, handler, request, tables, table)
            except ValueError as e:
                return _error(400, str(e))
        return endpoint

    def call(handler: Any, request: Request, tables: list[str], table: str | None) -> Response:
        # a table outside the key's scope and one the archive does not hold look the same
        if table is not None and (not may_read(tables, table) or archive.last(table)[0] == 0):
            return _error(404, f"no table {table}")
        return handler(request, tables)  # type: ignore[no-any-return]

    def list_tables(request: Request, tables: list[str]) -> Response:
        out = []
        for table, (seq, hash_) in archive.tables().items():
            if not may_read(tables, table):
                continue
            settled = [rec.round for rec in archive.recent_settlements(table, 20) if rec.round]
            recent = [summary(r) for r in read_rounds(archive, table, settled)]
            out.append(TableEntry(table=table, last_seq=seq, last_hash=hash_, last_results=recent))
        return _json(TablesReply(tables=out))

    def list_rounds(request: Request, tables: list[str]) -> Response:
        table = request.path_params["table"]
        end, since = _ts_param(request, "to"), _ts_param(request, "from")
        if since is None:
            try:
                since = (end or datetime.now(UTC)) - DEFAULT_WINDOW
            except OverflowError:
                since = datetime.min.replace(tzinfo=UTC)
        if end is not None and since > end:
            raise ValueError(f"from ({_text(since)}) is after to ({_text(end)})")
        limit = _int_param(request, "limit", DEFAULT_PAGE, 1, MAX_PAGE, f"a whole number from 1 to {MAX_PAGE}")
        after = _int_param(request, "cursor", 0, 0, MAX_CURSOR, "a next_cursor this API gave")
        since_text, until = _text(since), FAR_FUTURE if end is None else _text(end)
        starts = archive.round_starts(table, since_text, until, after, limit + 1)
        page, more = starts[:limit], len(starts) > limit
        rounds = [summary(r) for r in read_rounds(archive, table, [r for r, _, _ in page])] if page else []
        return _json(RoundsPage(table=table, since=since_text, until=until, rounds=rounds,
                                next_cursor=str(page[-1][2]) if more else None))

    def statistics(request: Request, tables: list[str]) -> Response:
        table = request.path_params["table"]
        since, end = _ts_param(request, "from"), _ts_param(request, "to")
        if since is not None and end is not None and since > end:
            raise ValueError(f"from ({_text(since)}) is after to ({_text(end)})")
        return _json(studio_report(archive, [table], EVERYTHING[0] if since is None else _text(since),
                                   EVERYTHING[1] if end is None else _text(end))["tables"][0])

    def one_round(request: Request, tables: list[str]) -> Response:
        table, round_id = request.path_params["table"], request.path_params["round"]
        rnd = read_round(archive, table, round_id)
        if rnd is None:
            return _error(404, f"no round {round_id} at table {table}")
        return _json(rnd)

    def picture(request: Request, tables: list[str]) -> Response:
        """One picture of a table's evidence, by its SHA-256: served only when its content still
        hashes to its name (a changed picture is refused, not served)."""
        table, name = request.path_params["table"], request.path_params["picture"]
        digest = name.removesuffix(".jpg")
        if not re.fullmatch(r"[0-9a-f]{64}", digest) or table not in folders:
            return _error(404, f"no picture {name[:80]} at table {table}")
        from table_controller.evidence.store import EvidenceStore

        data = EvidenceStore(folders[table]).read(digest)
        if data is None:
            return _error(404, f"no picture {digest} at table {table} (never kept, or deleted by retention)")
        if hashlib.sha256(data).hexdigest() != digest:
            return _error(409, f"picture {digest} was changed on disk: refused")
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=86400"})

    async def stream(request: Request) -> Response:
        """Server-sent events: every round result and void as it is archived (``event: round``,
        ``data``: the round summary, ``id``: ``T01:seq,T02:seq`` to resume with Last-Event-ID)."""
        tables: list[str] = request.scope[_TABLES]  # set by KeyGate, which let the request through
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
                    rnd = await asyncio.to_thread(read_round, archive, table, rec.round or "")
                    cursor = {**cursor, table: rec.seq}
                    if rnd is not None:
                        ident = ",".join(f"{t}:{q}" for t, q in sorted(cursor.items()))
                        yield f"event: round\nid: {ident}\ndata: {msgspec.json.encode(summary(rnd)).decode()}\n\n"
                if not found:
                    yield ": keep-alive\n\n"
                    await asyncio.sleep(STREAM_POLL)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def refused(request: Request, exc: Exception) -> Response:
        """Starlette's own refusals (no such path, method not allowed) as JSON, like the API's."""
        assert isinstance(exc, HTTPException)
        return _error(exc.status_code, exc.detail)

    async def openapi(request: Request) -> Response:
        return JSONResponse(OPENAPI)

    return Starlette(routes=[
        Route("/v1/tables", guarded(list_tables)),
        Route("/v1/tables/{table}/rounds", guarded(list_rounds)),
        Route("/v1/tables/{table}/rounds/{round}", guarded(one_round)),
        Route("/v1/tables/{table}/statistics", guarded(statistics)),
        Route("/v1/tables/{table}/evidence/{picture}", guarded(picture)),
        Route("/v1/stream", stream),
        Route("/openapi.json", openapi),
    ], middleware=[Middleware(KeyGate, archive=archive)], exception_handlers={HTTPException: refused})


#: Where :class:`KeyGate` leaves the tables of the request's key, in the ASGI scope.
_TABLES = "studio.tables"


class KeyGate:
    """Every HTTP request but one for ``/openapi.json`` needs a valid key before it is routed:
    without one the answer is 401 whatever the path or method (no 404, 405 or redirect that
    would map the routes to someone without a key)."""

    def __init__(self, app: ASGIApp, archive: Archive) -> None:
        self.app, self.archive = app, archive

    def tables(self, headers: Headers) -> list[str] | None:
        header = headers.get("authorization", "")
        key = header[7:].strip() if header.lower().startswith("bearer ") else headers.get("x-api-key", "")
        if not key or len(key) > 200:
            return None
        return self.archive.api_key_tables(key_hash(key))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == "/openapi.json":
            await self.app(scope, receive, send)
            return
        tables = await asyncio.to_thread(self.tables, Headers(scope=scope))
        if tables is None:
            await _error(401, "a valid API key is required")(scope, receive, send)
            return
        await self.app({**scope, _TABLES: tables}, receive, send)


_KEY: list[dict[str, list[str]]] = [{"apiKey": []}]
_REFS, _SCHEMAS = msgspec.json.schema_components([TablesReply, RoundsPage, RoundRecord, ErrorReply],
                                                 ref_template="#/components/schemas/{name}")


def _reply(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _refusal(description: str) -> dict[str, Any]:
    return _reply(description, _REFS[3])


_TABLE = {"name": "table", "in": "path", "required": True, "schema": {"type": "string"}}
OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "table-controller studio API", "version": "1",
             "description": "Round history from the studio archive. Every path needs an API key "
                            "(Authorization: Bearer <key>, or X-API-Key); without one: 401."},
    "components": {"schemas": _SCHEMAS, "securitySchemes": {
        "apiKey": {"type": "http", "scheme": "bearer"},
        "apiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key"}}},
    "security": [{"apiKey": []}, {"apiKeyHeader": []}],
    "paths": {
        "/v1/tables": {"get": {"summary": "The tables this key may read: last seq and hash, last 20 results",
                               "security": _KEY, "responses": {"200": _reply("tables", _REFS[0]),
                                                               "401": _refusal("no valid key")}}},
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
            "responses": {"200": _reply("a page: rounds and next_cursor (null on the last page)", _REFS[1]),
                          "400": _refusal("a bad parameter"), "401": _refusal("no valid key"),
                          "404": _refusal("no such table for this key")}}},
        "/v1/tables/{table}/statistics": {"get": {
            "summary": "Rounds started in [from, to): per hour and in all, rounds, results, voids by cause, mean "
                       "betting / dealing / round seconds, and each bet's outcome shares against the exact PAR "
                       "sheet with a 99 % interval (flagged outside it)",
            "security": _KEY,
            "parameters": [_TABLE,
                           {"name": "from", "in": "query", "schema": {"type": "string", "format": "date-time"}},
                           {"name": "to", "in": "query", "schema": {"type": "string", "format": "date-time"}}],
            "responses": {"200": _reply("the report (docs/studio.md)", {"type": "object"}),
                          "400": _refusal("a bad parameter"), "401": _refusal("no valid key"),
                          "404": _refusal("no such table for this key")}}},
        "/v1/stream": {"get": {
            "summary": "Server-sent events: each round result or void of this key's tables as it is archived "
                       "(event 'round', data: the round summary, id: 'T01:seq,...'; resume with Last-Event-ID "
                       "or ?since=<id>; without either, from now)",
            "security": _KEY,
            "responses": {"200": {"description": "text/event-stream",
                                  "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                          "401": _refusal("no valid key")}}},
        "/v1/tables/{table}/evidence/{picture}": {"get": {
            "summary": "One picture of the table's evidence (a round's pictures name them: <sha256>.jpg); "
                       "served only while its content hashes to its name",
            "security": _KEY,
            "parameters": [_TABLE, {"name": "picture", "in": "path", "required": True,
                                    "schema": {"type": "string", "pattern": "^[0-9a-f]{64}(\\.jpg)?$"}}],
            "responses": {"200": {"description": "the JPEG", "content": {"image/jpeg": {"schema": {
                              "type": "string", "format": "binary"}}}},
                          "401": _refusal("no valid key"), "404": _refusal("no such picture or table for this key"),
                          "409": _refusal("the picture was changed on disk")}}},
        "/v1/tables/{table}/rounds/{round}": {"get": {
            "summary": "One round: every card in deal order with its time, position and source, burns, "
                       "start / betting closed / end times, status, outcome, payouts or void reason, and "
                       "the journal seq range with the last hash",
            "security": _KEY,
            "parameters": [_TABLE, {"name": "round", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": _reply("the round", _REFS[2]), "401": _refusal("no valid key"),
                          "404": _refusal("no such round or table for this key")}}},
    },
}
