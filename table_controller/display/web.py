"""The web floor display: starlette + uvicorn, the view pushed to browsers by server-sent events.

A feeder thread follows the table with :class:`~table_controller.client.TableClient`,
folds items into a :class:`~table_controller.display.model.TableView` and hands
each new view to the :class:`ViewHub`, which wakes every open ``/events`` stream.
Streams end when the browser goes away and when the server shuts down, so
SIGTERM stops the display at once.
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
from table_controller.display.model import TableView
from table_controller.display.page import OVERLAY, PAGE, render_page

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 15.0


class ViewHub:
    """The latest view (as JSON) and a way for streams to wait for the next one. Thread-safe setters."""

    def __init__(self) -> None:
        self.view_json = json.dumps(TableView().view(time.time()))
        self.version = 0
        self.closing = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed: asyncio.Event | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Attach to the server's event loop (at start-up)."""
        self._loop = loop
        self._changed = asyncio.Event()

    def set_view(self, view: dict[str, Any]) -> None:
        """Publish a new view to every stream (from any thread)."""
        text = json.dumps(view, separators=(",", ":"), ensure_ascii=False)
        if self._loop is None:
            self.view_json = text
            return
        self._loop.call_soon_threadsafe(self._set, text)

    def _set(self, text: str) -> None:
        self.view_json = text
        self.version += 1
        self._wake()

    def _wake(self) -> None:
        if self._changed is not None:
            changed, self._changed = self._changed, asyncio.Event()
            changed.set()

    def close(self) -> None:
        """End every stream (from any thread): the server is shutting down."""
        self.closing = True
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._wake)

    async def wait(self, version: int, timeout: float) -> bool:
        """Wait until the view is newer than ``version`` or the hub closes; False on timeout."""
        while self.version == version and not self.closing:
            assert self._changed is not None
            try:
                await asyncio.wait_for(self._changed.wait(), timeout)
            except TimeoutError:
                return False
        return True


class Feeder:
    """Follows the table in a thread and feeds the hub with views."""

    def __init__(self, make_client: Callable[[], TableClient], hub: ViewHub, table: str | None,
                 clock: Callable[[], float] = time.time, limits: str | None = None) -> None:
        self.make_client = make_client
        self.hub = hub
        self.model = TableView(table, limits=limits)
        self.clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True, name="display-feeder")
        self._thread.start()

    @property
    def is_running(self) -> bool:
        """True while the feeder's thread follows the table (started, not stopped, not died)."""
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        try:
            client = self.make_client()
        except Exception:
            log.exception("the display cannot follow the table")
            return
        try:
            while not self._stop.is_set():
                for item in client.events(timeout=0.25):
                    if self.model.apply(item):
                        self.hub.set_view(self.model.view(self.clock()))
                    if self._stop.is_set():
                        break
        except Exception:  # top of a worker thread
            log.exception("display feeder stopped")
        finally:
            client.close()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():  # a stop can come before its start
            self._thread.join(timeout=5)


def create_app(hub: ViewHub, feeder: Feeder | None = None, lang: str = "en") -> Starlette:
    """The web display's ASGI app: ``/`` the floor page, ``/overlay`` the stream overlay, ``/events``
    SSE stream, ``/view`` JSON, ``/healthz``; pages in ``lang`` (:mod:`~table_controller.display.labels`)."""
    words = labels_json(lang)  # ValueError for an unknown language, before anything is served
    floor_page, overlay_page = render_page(PAGE, lang, words), render_page(OVERLAY, lang, words)

    async def page(request: Request) -> Response:
        return HTMLResponse(floor_page)

    async def overlay(request: Request) -> Response:
        return HTMLResponse(overlay_page)

    async def view(request: Request) -> Response:
        return Response(hub.view_json, media_type="application/json")

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "version": hub.version})

    async def events(request: Request) -> Response:
        async def stream() -> AsyncIterator[str]:
            version = -1
            yield "retry: 1000\n\n"
            while not hub.closing:
                if hub.version != version:
                    version = hub.version
                    yield f"event: view\nid: {version}\ndata: {hub.view_json}\n\n"
                if not await hub.wait(version, KEEPALIVE_SECONDS) and not hub.closing:
                    yield ": keep-alive\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.bind(asyncio.get_running_loop())
        if feeder is not None:
            feeder.start()
        try:
            yield
        finally:
            hub.close()
            if feeder is not None:
                await asyncio.to_thread(feeder.stop)

    return Starlette(routes=[Route("/", page), Route("/overlay", overlay), Route("/events", events),
                             Route("/view", view), Route("/healthz", health)], lifespan=lifespan)


class _Server(uvicorn.Server):
    """uvicorn, but a shutdown signal ends the open event streams first."""

    hub: ViewHub

    def handle_exit(self, sig: int, frame: Any) -> None:
        self.hub.close()
        super().handle_exit(sig, frame)


class WebDisplay:
    """The web floor display of one table: ``serve()`` in the foreground, or ``start()``/``stop()``."""

    def __init__(self, make_client: Callable[[], TableClient], *, table: str | None,
                 host: str = "127.0.0.1", port: int = 8080, lang: str = "en", limits: str | None = None) -> None:
        self.hub = ViewHub()
        self.feeder = Feeder(make_client, self.hub, table, limits=limits)
        self.app = create_app(self.hub, self.feeder, lang)
        config = uvicorn.Config(self.app, host=host, port=port, log_level="warning",
                                lifespan="on", timeout_graceful_shutdown=3)
        self.server = _Server(config)
        self.server.hub = self.hub
        self._thread: threading.Thread | None = None

    def serve(self) -> None:
        """Run until SIGINT/SIGTERM."""
        self.server.run()

    def start(self, timeout: float = 10) -> int:
        """Serve in a thread; returns the bound port once the server is up."""
        self._thread = threading.Thread(target=self.server.run, daemon=True, name="web-display")
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise OSError(f"the web display could not start on {self.server.config.host}:"
                              f"{self.server.config.port}")
            time.sleep(0.01)  # uvicorn offers no started event
        return int(self.server.servers[0].sockets[0].getsockname()[1])

    def stop(self) -> None:
        self.hub.close()
        self.server.should_exit = True
        if self._thread is not None and self._thread.is_alive():  # a stop can come before its start
            self._thread.join(timeout=10)
