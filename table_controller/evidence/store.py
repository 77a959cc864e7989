"""The evidence store: JPEG pictures kept by their SHA-256, next to the journal, and what was pruned.

A picture's file name is its hash (``<folder>/<first two hex>/<hash>.jpg``), so the
journal's ``evidence`` events, which carry the hash, name the file, and a picture
that was changed no longer matches its name. A write goes to a temporary file, is
flushed to disk, and is renamed into place: a picture is whole or absent.

Retention deletes old pictures (by age, or the oldest beyond a size) but never a
hash: every deletion is first appended to ``deleted.log`` (hash, time, reason), so
a picture that is gone is *known* to be deleted, not missing.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DELETED_LOG = "deleted.log"
PictureStatus = Literal["kept", "deleted", "missing", "changed"]


@dataclass(frozen=True)
class Deleted:
    """One pruned picture: its hash, when and why."""

    hash: str
    at: float
    reason: str


class EvidenceStore:
    """Pictures in ``folder`` by their SHA-256 (see module doc)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def path(self, digest: str) -> Path:
        return self.folder / digest[:2] / f"{digest}.jpg"

    def write(self, data: bytes) -> str:
        """Keep ``data``; its SHA-256 (hex). Raises OSError (a full disk) with nothing left behind."""
        digest = hashlib.sha256(data).hexdigest()
        target = self.path(digest)
        if target.exists():
            return digest
        target.parent.mkdir(exist_ok=True)
        temporary = target.with_suffix(f".{os.getpid()}.tmp")
        try:
            with open(temporary, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, target)
        except OSError:
            temporary.unlink(missing_ok=True)
            raise
        return digest

    def read(self, digest: str) -> bytes | None:
        try:
            return self.path(digest).read_bytes()
        except OSError:
            return None

    def deleted(self) -> dict[str, Deleted]:
        """Every picture retention removed, by hash."""
        out: dict[str, Deleted] = {}
        try:
            lines = (self.folder / DELETED_LOG).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return out
        for line in lines:
            parts = line.split("\t", 2)
            if len(parts) == 3 and len(parts[0]) == 64:
                try:
                    out[parts[0]] = Deleted(parts[0], float(parts[1]), parts[2])
                except ValueError:
                    continue
        return out

    def status(self, digest: str) -> PictureStatus:
        """``kept`` (present and whole), ``changed`` (present, another content), ``deleted`` (pruned,
        in the log), or ``missing`` (never written, or lost)."""
        data = self.read(digest)
        if data is not None:
            return "kept" if hashlib.sha256(data).hexdigest() == digest else "changed"
        return "deleted" if digest in self.deleted() else "missing"

    def pictures(self) -> list[tuple[Path, float, int]]:
        """Every kept picture: (path, modification time, bytes), oldest first."""
        out = []
        for path in self.folder.glob("??/*.jpg"):
            try:
                st = path.stat()
            except OSError:
                continue
            out.append((path, st.st_mtime, st.st_size))
        return sorted(out, key=lambda p: p[1])

    def prune(self, *, now: float | None = None, max_age_days: float | None = None,
              max_bytes: int | None = None) -> list[str]:
        """Delete pictures older than ``max_age_days`` and then the oldest until at most
        ``max_bytes`` remain; each is logged in ``deleted.log`` before it goes. The hashes deleted."""
        now = time.time() if now is None else now
        pictures = self.pictures()
        doomed: list[tuple[Path, str]] = []
        if max_age_days is not None:
            cutoff = now - max_age_days * 86400
            doomed += [(p, f"older than {max_age_days:g} days") for p, mtime, _ in pictures if mtime < cutoff]
        if max_bytes is not None:
            gone = {p for p, _ in doomed}
            remaining = [(p, size) for p, _, size in pictures if p not in gone]
            total = sum(size for _, size in remaining)
            for p, size in remaining:  # oldest first
                if total <= max_bytes:
                    break
                doomed.append((p, f"beyond {max_bytes} bytes"))
                total -= size
        if not doomed:
            return []
        with open(self.folder / DELETED_LOG, "a", encoding="utf-8") as log:
            for path, reason in doomed:
                log.write(f"{path.stem}\t{now:.3f}\t{reason}\n")
            log.flush()
            os.fsync(log.fileno())
        for path, _ in doomed:
            path.unlink(missing_ok=True)
        return [p.stem for p, _ in doomed]
