"""The evidence keeper: the camera's pictures encoded and kept off the card path, in a thread of its own.

The camera watcher hands it the frame it decided on when a card becomes stable (the
card has already been posted to the controller: a picture never waits in front of a
card), and the controller hands it the latest frame at each pause, void, result and
supervisor action. For each request the keeper encodes JPEGs (the card's own picture,
turned upright, and the whole table scaled down; sizes configurable), writes them to
the :class:`~table_controller.evidence.store.EvidenceStore`, and posts
:class:`EvidenceKept` to the controller, which journals an ``evidence`` event with the
hashes: the journal's hash chain then covers the pictures.

Requests wait in a bounded queue. A full queue (a slow disk) or a failed write (a
full disk) drops that picture and raises one alert per outage through ``alert``,
never anything on the card path. Retention runs in the same thread every
:data:`PRUNE_EVERY` seconds.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from table_controller.evidence.store import EvidenceStore

log = logging.getLogger(__name__)

PRUNE_EVERY = 3600.0
#: A card's picture is width:height 5:7 (a 63 x 88 mm card).
CARD_ASPECT = 5 / 7


@dataclass(frozen=True)
class EvidenceSettings:
    """Where pictures go and how big they are; how long they are kept."""

    folder: Path
    card_px: int = 280  # the card's picture, its height in pixels
    frame_width: int = 960  # the whole table, scaled to this width (never up)
    quality: int = 85  # JPEG quality
    retention_days: float | None = 90.0
    max_bytes: int | None = None
    queue: int = 32


@dataclass(frozen=True)
class EvidenceRequest:
    """What to keep: ``of`` card (with the card's ``corners`` in the frame, its position, index
    and code) or pause / void / result / supervisor (``for_seq``: the event it shows)."""

    of: str
    frame: Any  # a BGR numpy image
    corners: Sequence[tuple[float, float]] | None = None
    position: str | None = None
    index: int | None = None
    code: str | None = None
    for_seq: int | None = None
    round: str | None = None  # the round of the event it shows (a result's, a void's)


@dataclass(frozen=True)
class EvidenceKept:
    """Posted to the controller: the request's pictures are kept under these hashes."""

    of: str
    frame: str
    bytes: int
    card: str | None = None
    position: str | None = None
    index: int | None = None
    code: str | None = None
    for_seq: int | None = None
    corners: tuple[tuple[float, float], ...] | None = None  # in the frame picture's pixels
    round: str | None = None


@dataclass(frozen=True)
class EvidenceLost:
    """Posted to the controller: pictures could not be kept (the alert's text)."""

    detail: str


def encode_jpeg(image: Any, quality: int) -> bytes:
    import cv2

    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("the picture could not be encoded as JPEG")
    return bytes(data.tobytes())


def card_picture(frame: Any, corners: Sequence[tuple[float, float]], height: int) -> Any:
    """The card turned upright (corners TL, TR, BR, BL), ``height`` pixels high."""
    import cv2
    import numpy as np

    width = max(1, round(height * CARD_ASPECT))
    src = np.array(corners[:4], dtype=np.float32)
    dst = np.array([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]], dtype=np.float32)
    return cv2.warpPerspective(frame, cv2.getPerspectiveTransform(src, dst), (width, height))


def table_picture(frame: Any, width: int) -> Any:
    import cv2

    h, w = frame.shape[:2]
    if w <= width:
        return frame
    return cv2.resize(frame, (width, max(1, round(h * width / w))), interpolation=cv2.INTER_AREA)


class EvidenceKeeper:
    """Encodes and keeps pictures in a worker thread (see module doc)."""

    def __init__(self, settings: EvidenceSettings, post: Callable[[EvidenceKept | EvidenceLost], None], *,
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.store = EvidenceStore(settings.folder)
        self.post = post
        self.clock = clock
        self.kept = 0
        self.dropped = 0
        self.bytes = 0
        self._queue: queue.Queue[EvidenceRequest | None] = queue.Queue(maxsize=settings.queue)
        self._failing: str | None = None  # the outage being reported (one alert each)
        self._last_prune = 0.0
        self._thread = threading.Thread(target=self._run, name="evidence", daemon=True)

    def start(self) -> EvidenceKeeper:
        self._thread.start()
        return self

    @property
    def is_running(self) -> bool:
        return self._thread.is_alive()

    def submit(self, request: EvidenceRequest) -> bool:
        """Queue a request (never blocks); False when it was dropped (the queue is full)."""
        try:
            self._queue.put_nowait(request)
            return True
        except queue.Full:
            self._lost(f"evidence of {request.of} not kept: {self.settings.queue} pictures already wait "
                       f"for the disk ({self.settings.folder})")
            return False

    def _lost(self, detail: str) -> None:
        self.dropped += 1
        if self._failing is None:
            self._failing = detail
            log.error("%s", detail)
            try:
                self.post(EvidenceLost(detail))
            except Exception:  # the controller's queue: never let the camera thread fail
                log.exception("the evidence alert could not be posted")

    def _run(self) -> None:
        while True:
            request = self._queue.get()
            if request is None:
                return
            try:
                self._keep(request)
            except OSError as e:
                self._lost(f"evidence of {request.of} not kept in {self.settings.folder}: {e.strerror or e}")
            except Exception as e:  # a bad frame: that picture is lost, the keeper goes on
                log.exception("evidence of %s failed", request.of)
                self._lost(f"evidence of {request.of} not kept: {type(e).__name__}: {e}")
            now = self.clock()
            if now - self._last_prune >= PRUNE_EVERY:
                self._last_prune = now
                self.prune(now)

    def _keep(self, request: EvidenceRequest) -> None:
        s = self.settings
        table = table_picture(request.frame, s.frame_width)
        scale = table.shape[1] / request.frame.shape[1]
        frame_jpeg = encode_jpeg(table, s.quality)
        card_jpeg = (encode_jpeg(card_picture(request.frame, request.corners, s.card_px), s.quality)
                     if request.corners and len(request.corners) >= 4 else None)
        frame_hash = self.store.write(frame_jpeg)
        card_hash = self.store.write(card_jpeg) if card_jpeg is not None else None
        size = len(frame_jpeg) + (len(card_jpeg) if card_jpeg is not None else 0)
        self.kept += 1
        self.bytes += size
        if self._failing is not None:
            log.warning("evidence is kept again (%s is over)", self._failing)
            self._failing = None
        corners = (tuple((round(x * scale, 1), round(y * scale, 1)) for x, y in request.corners[:4])
                   if request.corners and len(request.corners) >= 4 else None)
        self.post(EvidenceKept(request.of, frame_hash, size, card_hash, request.position, request.index,
                               request.code, request.for_seq, corners, request.round))

    def prune(self, now: float | None = None) -> list[str]:
        """Retention now (it also runs every :data:`PRUNE_EVERY` seconds)."""
        try:
            return self.store.prune(now=now, max_age_days=self.settings.retention_days,
                                    max_bytes=self.settings.max_bytes)
        except OSError as e:
            log.error("evidence retention failed: %s", e)
            return []

    def close(self, timeout: float = 10.0) -> None:
        """Finish what is queued, then stop."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout)
