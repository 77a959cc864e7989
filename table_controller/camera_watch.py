"""The camera's watcher thread: frames in, stable card sightings out to the controller.

It knows nothing of games: it reads frames from a camera source, recognises
the cards, stabilises them over frames and posts each newly stable card (and a
camera that stopped delivering frames) on the controller's queue. With an
evidence keeper it then hands the keeper the frame it decided on, with the card's
corners (after the card is posted: a picture never waits in front of a card), and
keeps the latest frame for the controller's pictures of pauses, voids and results.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from table_controller.evidence.keeper import EvidenceRequest
from table_controller.fusion import CameraSaw
from table_controller.table import inputs as i

log = logging.getLogger(__name__)


class CameraWatcher:
    """Runs recognition on a camera source and posts what becomes stable."""

    def __init__(
        self, source: Any, recognizer: Any, stabilizer: Any, post: Callable[[Any], None], *,
        fps: float = 15.0, down_after: float = 2.0, clock: Callable[[], float] = time.monotonic,
        evidence: Any = None,
    ) -> None:
        self.source = source
        self.recognizer = recognizer
        self.stabilizer = stabilizer
        self.post = post
        self.period = 1.0 / fps
        self.down_after = down_after
        self.clock = clock
        self.frames = 0
        self.evidence = evidence
        self._latest: Any = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="camera", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def latest(self) -> Any:
        """The last frame read (None before the first); the caller must not change it."""
        return self._latest

    @property
    def is_running(self) -> bool:
        """True while the watcher's thread runs (started, not closed, not died)."""
        return self._thread.is_alive()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():  # closed before it was started: a stop during start-up
            self._thread.join(timeout=5)
        self.source.close()

    def _run(self) -> None:
        last_frame = self.clock()
        down = False
        while not self._stop.is_set():
            started = self.clock()
            try:
                frame = self.source.read()
            except Exception:  # a camera that throws is a camera that is down
                log.exception("camera read failed")
                frame = None
            if frame is None:
                if not down and started - last_frame >= self.down_after:
                    down = True
                    self.post(i.CameraDown(f"no frame from the camera for {self.down_after:g} s"))
                self._stop.wait(self.period)
                continue
            down, last_frame = False, started
            self.frames += 1
            self._latest = frame
            try:
                for stable in self.stabilizer.update(self.recognizer.recognize(frame)):
                    self.post(CameraSaw(stable.game_position, stable.index, stable.code))
                    if self.evidence is not None and stable.code is not None:
                        self.evidence.submit(EvidenceRequest(
                            "card", frame, stable.corners, stable.game_position, stable.index, stable.code))
            except Exception:  # one bad frame must not stop the camera
                log.exception("recognising a frame failed")
            self._stop.wait(max(0.0, self.period - (self.clock() - started)))
