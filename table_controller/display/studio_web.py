"""The studio dashboard on the web: every table on one page, and each table's floor page.

``table-controller display --studio`` follows every table through the studio proxy
(one :class:`~table_controller.client.TableClient` with ``table=None``) into a
:class:`~table_controller.display.studio.StudioBoard`, and serves:

* ``/``: the dashboard; ``/events`` pushes the tiles that changed, at most every
  :data:`COALESCE_SECONDS` (100 tables at 5 events/s each would otherwise be 500
  messages a second; coalesced, a browser redraws at most 10 times a second);
* ``/table/<T>/`` and ``/table/<T>/overlay``: that table's floor page and stream
  overlay, fed by ``/table/<T>/events`` (its full view, made only while someone
  watches it);
* ``/tiles`` (JSON), ``/healthz``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from table_controller.client import TableClient
from table_controller.display.labels import labels_json
from table_controller.display.page import OVERLAY, PAGE, STUDIO_PAGE, render_page
from table_controller.display.studio import StudioBoard

log = logging.getLogger(__name__)

COALESCE_SECONDS = 0.1
KEEPALIVE_SECONDS = 15.0


class Changes:
    """Wakes the server's streams when the board changed (set from the feeder's thread)."""

    def __init__(self) -> None:
        self.closing = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._event: asyncio.Event | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop, self._event = loop, asyncio.Event()

    def notify(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        if self._event is not None:
            event, self._event = self._event, asyncio.Event()
            event.set()

    def close(self) -> None:
        self.closing = True
        self.notify()

    async def wait(self, timeout: float) -> bool:
        """Until the next change (True) or ``timeout`` (False)."""
        assert self._event is not None
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
            return True
        except TimeoutError:
            return False


def create_studio_app(board: StudioBoard, changes: Changes, lang: str = "en",
                      clock: Callable[[], float] = time.time, on_start: Callable[[], None] | None = None,
                      on_stop: Callable[[], None] | None = None) -> Starlette:
    """The dashboard's ASGI app (see module doc)."""
    words = labels_json(lang)
    pages = {name: render_page(template, lang, words)
             for name, template in (("studio", STUDIO_PAGE), ("floor", PAGE), ("overlay", OVERLAY))}

    def sse(event: str, data: Any, ident: int) -> str:
        return f"event: {event}\nid: {ident}\ndata: {json.dumps(data, separators=(',', ':'), ensure_ascii=False)}\n\n"

    async def dashboard(request: Request) -> Response:
        return HTMLResponse(pages["studio"])

    async def floor(request: Request) -> Response:
        return HTMLResponse(pages["floor"])

    async def overlay(request: Request) -> Response:
        return HTMLResponse(pages["overlay"])

    async def tiles(request: Request) -> Response:
        return JSONResponse({"tiles": board.tiles(clock())[0]})

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "tables": len(board.views), "version": board.version})

    async def events(request: Request) -> Response:
        async def stream() -> AsyncIterator[str]:
            yield "retry: 1000\n\n"
            sent: dict[str, int] | None = None
            n = 0
            while not changes.closing:
                changed, versions = board.tiles(clock(), sent)
                if changed or sent is None:
                    n += 1
                    yield sse("tiles", {"tiles": changed, "full": sent is None}, n)
                    sent = {**(sent or {}), **versions}
                if not await changes.wait(KEEPALIVE_SECONDS):
                    yield ": keep-alive\n\n"
                    continue
                await asyncio.sleep(COALESCE_SECONDS)  # gather what else changes meanwhile

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def table_events(request: Request) -> Response:
        table = request.path_params["table"]

        async def stream() -> AsyncIterator[str]:
            yield "retry: 1000\n\n"
            seen = -1
            while not changes.closing:
                version = board.table_version(table)
                if version != seen:
                    seen = version
                    view = await asyncio.to_thread(board.table_view, table, clock())
                    if view is not None:
                        yield sse("view", view, version)
                if not await changes.wait(KEEPALIVE_SECONDS):
                    yield ": keep-alive\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        changes.bind(asyncio.get_running_loop())
        if on_start is not None:
            on_start()
        try:
            yield
        finally:
            changes.close()
            if on_stop is not None:
                await asyncio.to_thread(on_stop)

    return Starlette(routes=[
        Route("/", dashboard), Route("/events", events), Route("/tiles", tiles), Route("/healthz", health),
        Route("/table/{table}/", floor), Route("/table/{table}/overlay", overlay),
        Route("/table/{table}/events", table_events),
    ], lifespan=lifespan)


class StudioDisplay:
    """The dashboard server and its feeder thread: ``serve()`` in the foreground, or ``start()``/``stop()``."""

    def __init__(self, make_client: Callable[[], TableClient], *, host: str = "127.0.0.1", port: int = 8088,
                 lang: str = "en") -> None:
        self.make_client = make_client
        self.board = StudioBoard()
        self.changes = Changes()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.app = create_studio_app(self.board, self.changes, lang, on_start=self._start_feeder,
                                     on_stop=self._stop_feeder)
        self.server = uvicorn.Server(uvicorn.Config(self.app, host=host, port=port, log_level="warning",
                                                    lifespan="on", timeout_graceful_shutdown=3))
        self._server_thread: threading.Thread | None = None

    def _start_feeder(self) -> None:
        self._thread = threading.Thread(target=self._feed, daemon=True, name="studio-feeder")
        self._thread.start()

    def _feed(self) -> None:
        try:
            client = self.make_client()
        except Exception:
            log.exception("the studio display cannot follow the tables")
            return
        try:
            while not self._stop.is_set():
                for item in client.events(timeout=0.25):
                    if self.board.apply(item) is not None:
                        self.changes.notify()
                    if self._stop.is_set():
                        break
        except Exception:  # top of a worker thread
            log.exception("studio feeder stopped")
        finally:
            client.close()

    def _stop_feeder(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():  # a stop can come before its start
            self._thread.join(timeout=5)

    def serve(self) -> None:
        self.server.run()

    def start(self, timeout: float = 10) -> int:
        self._server_thread = threading.Thread(target=self.server.run, daemon=True, name="studio-display")
        self._server_thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._server_thread.is_alive() or time.monotonic() > deadline:
                raise OSError("the studio display could not start")
            time.sleep(0.01)
        return int(self.server.servers[0].sockets[0].getsockname()[1])

    def stop(self) -> None:
        self.changes.close()
        self.server.should_exit = True
        if self._server_thread is not None and self._server_thread.is_alive():  # a stop can come before its start
            self._server_thread.join(timeout=10)
