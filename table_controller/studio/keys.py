"""API keys for the studio service: random tokens, kept only as their SHA-256.

A key is 32 random bytes (``secrets.token_urlsafe``), shown once when made. The
archive keeps its SHA-256 and the tables it may read; a request's key is hashed
and looked up. A fast hash is enough for a token of 256 random bits (no word
list reaches it); a salted slow hash is for passwords a person chose.
"""

from __future__ import annotations

import hashlib
import secrets

PREFIX = "tck_"


def new_key() -> str:
    """A fresh API key (shown once; only its hash is kept)."""
    return PREFIX + secrets.token_urlsafe(32)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def may_read(tables: list[str] | None, table: str) -> bool:
    """Whether a key scoped to ``tables`` (None: no valid key) may read ``table``."""
    return tables is not None and ("*" in tables or table in tables)
