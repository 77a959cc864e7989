"""Supervisor tokens: stored salted (scrypt), checked in constant time.

A configuration lists each supervisor token in its stored form
``scrypt$<n>$<r>$<p>$<salt hex>$<key hex>`` (``table-controller keys token``
makes a token and its stored form). The unsalted SHA-256 hex digests of
earlier configurations (``supervisor.token_sha256``) are still accepted, with a
warning at start: a leaked configuration gives an attacker a fast offline
guess against them, and none against scrypt.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

#: scrypt cost: about 30-60 ms a check on a small table PC, which also slows guessing.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
_HEX = frozenset("0123456789abcdef")


def new_token() -> str:
    """A fresh random supervisor token (32 URL-safe characters)."""
    return secrets.token_urlsafe(24)


def stored_form(token: str, *, salt: bytes | None = None) -> str:
    """The salted, stored form of ``token`` for a configuration's ``supervisor.tokens``."""
    salt = salt if salt is not None else secrets.token_bytes(16)
    key = hashlib.scrypt(token.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${key.hex()}"


def sha256_form(token: str) -> str:
    """The legacy unsalted form (``supervisor.token_sha256``)."""
    return hashlib.sha256(token.encode()).hexdigest()


def check_stored_form(text: object) -> str | None:
    """Why ``text`` is not a stored token, or None when it is one (scrypt or legacy SHA-256)."""
    if not isinstance(text, str):
        return f"{text!r} is not a string"
    if len(text) == 64 and _HEX.issuperset(text):
        return None
    parts = text.split("$")
    if len(parts) != 6 or parts[0] != "scrypt":
        return f"{text[:20]!r}... is not scrypt$N$R$P$SALT$KEY (make one with: table-controller keys token)"
    try:
        n, r, p = (int(x) for x in parts[1:4])
        bytes.fromhex(parts[4])
        key = bytes.fromhex(parts[5])
    except ValueError:
        return f"{text[:20]!r}...: N, R, P must be numbers and SALT, KEY hex"
    if not (2 <= n <= 2**20 and n & (n - 1) == 0 and 1 <= r <= 32 and 1 <= p <= 16 and len(key) >= 16):
        return f"{text[:20]!r}...: scrypt parameters out of range"
    return None


def matches(token: str, stored: str) -> bool:
    """True when ``token`` is the one ``stored`` was made from (constant-time compare)."""
    if len(stored) == 64:
        return hmac.compare_digest(sha256_form(token), stored)
    _, n, r, p, salt, key = stored.split("$")
    candidate = hashlib.scrypt(
        token.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), dklen=len(key) // 2,
        maxmem=256 * 1024 * 1024,
    )
    return hmac.compare_digest(candidate.hex(), key)
