"""Signed checkpoints: the journal's position, signed and kept outside the journal file.

The hash chain shows that nothing *inside* the journal was changed, but a
journal whose last events were deleted is still a valid chain. So at every
round end the controller signs ``(table, seq, hash, link, meta)`` with the
table's Ed25519 key and appends it to a checkpoint file outside the journal
(later, the studio archive keeps them too), and journals a ``checkpoint``
event so the stream carries it. ``journal verify --checkpoints FILE
--verify-key KEY`` then finds a deleted tail (a checkpoint beyond the
journal's end), an edited event under a checkpoint, and a changed meta or
link row (both are in the signed payload).

Keys: ``table-controller keys signing --name T01`` writes ``T01.signing``
(private, mode 600) and ``T01.verify`` (public).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from table_controller.journal.errors import JournalError


class CheckpointError(JournalError, ValueError):
    """A checkpoint file or key that cannot be used (names the file and line)."""


@dataclass(frozen=True)
class Checkpoint:
    """One signed position of a journal."""

    table: str
    seq: int
    hash: str
    link: str | None  # "BOOTID:SEQ" of the shoe link stored with the journal, or None
    meta: str  # sha256 of the journal's meta rows (sorted JSON)
    ts: str
    sig: str = ""  # base64 Ed25519 signature of payload()

    def payload(self) -> bytes:
        """The signed bytes: every field but ``sig``, as sorted compact JSON."""
        fields = {k: v for k, v in asdict(self).items() if k != "sig"}
        return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))


def meta_digest(meta: dict[str, Any]) -> str:
    """The digest of a journal's meta rows that a checkpoint signs."""
    return hashlib.sha256(json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def link_text(link: tuple[str, int] | None) -> str | None:
    return f"{link[0]}:{link[1]}" if link else None


# -- keys -----------------------------------------------------------------------

def generate_signing_key(folder: Path, name: str) -> tuple[Path, Path]:
    """Write ``NAME.signing`` (private, 0600) and ``NAME.verify`` (public) into ``folder``."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    folder.mkdir(parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    private = folder / f"{name}.signing"
    public = folder / f"{name}.verify"
    fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    public.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return private, public


def _load_key(path: Path, private: bool) -> Any:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

    try:
        data = path.read_bytes()
        key = (serialization.load_pem_private_key(data, password=None) if private
               else serialization.load_pem_public_key(data))
    except (OSError, ValueError, TypeError) as e:
        raise CheckpointError(f"{path}: not an Ed25519 {'signing' if private else 'verify'} key: {e}") from e
    wanted = Ed25519PrivateKey if private else Ed25519PublicKey
    if not isinstance(key, wanted):
        raise CheckpointError(f"{path}: not an Ed25519 key ({type(key).__name__})")
    return key


def load_verify_key(path: Path) -> Any:
    """A table's public (verify) key; CheckpointError naming the file when it is not one."""
    return _load_key(path, private=False)


class CheckpointSigner:
    """Signs checkpoints with a table's Ed25519 key and appends them to the checkpoint file."""

    def __init__(self, key_path: Path, checkpoint_path: Path) -> None:
        self._key = _load_key(key_path, private=True)
        self.path = checkpoint_path

    def sign(self, checkpoint: Checkpoint) -> Checkpoint:
        signature = self._key.sign(checkpoint.payload())
        return replace(checkpoint, sig=base64.b64encode(signature).decode())

    def append(self, checkpoint: Checkpoint) -> None:
        """Append one signed checkpoint durably (flushed and fsynced)."""
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(checkpoint.to_json() + "\n")
            f.flush()
            os.fsync(f.fileno())


def load_checkpoints(path: Path) -> list[Checkpoint]:
    """Every checkpoint in a file, in order; raises CheckpointError naming the line."""
    out: list[Checkpoint] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise CheckpointError(f"{path}: cannot read: {e.strerror}") from e
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            out.append(Checkpoint(
                table=str(item["table"]), seq=int(item["seq"]), hash=str(item["hash"]),
                link=item["link"] if item["link"] is None else str(item["link"]),
                meta=str(item["meta"]), ts=str(item["ts"]), sig=str(item["sig"]),
            ))
        except (ValueError, KeyError, TypeError) as e:
            raise CheckpointError(f"{path}:{number}: not a checkpoint: {e}") from None
    return out


def check_checkpoints(
    checkpoints: Iterable[Checkpoint], verify_key: Path, *, table: str, last_seq: int,
    hash_at: Any, meta_at: Any, link_at_end: tuple[str, int] | None,
) -> list[str]:
    """Problems between signed checkpoints and a journal (empty: they agree).

    ``hash_at(seq)`` gives the journal's stored hash of a seq (None when missing);
    ``meta_at(seq)`` the meta rows of the file (segment) holding that seq, which is
    what the controller signed (None when no file holds it: its segment was pruned).
    """
    from cryptography.exceptions import InvalidSignature

    key = _load_key(verify_key, private=False)
    problems: list[str] = []
    highest: Checkpoint | None = None
    for cp in checkpoints:
        try:
            key.verify(base64.b64decode(cp.sig), cp.payload())
        except (InvalidSignature, ValueError):
            problems.append(f"checkpoint of seq {cp.seq}: signature does not verify with {verify_key}")
            continue
        if cp.table != table:
            problems.append(f"checkpoint of seq {cp.seq} is of table {cp.table!r}, not {table!r}")
            continue
        meta = meta_at(cp.seq) if cp.seq <= last_seq else None
        if meta is not None and cp.meta != meta_digest(meta):
            problems.append(f"checkpoint of seq {cp.seq}: the journal's meta rows were changed")
        if cp.seq > last_seq:
            problems.append(
                f"checkpoint of seq {cp.seq}: the journal ends at seq {last_seq}: "
                f"{cp.seq - last_seq} or more events were deleted from its tail"
            )
        elif hash_at(cp.seq) != cp.hash:
            problems.append(f"checkpoint of seq {cp.seq}: the journal's hash there differs "
                            "(events up to it were changed)")
        if highest is None or cp.seq > highest.seq:
            highest = cp
    if highest is not None and highest.seq == last_seq and highest.link != link_text(link_at_end):
        problems.append(f"checkpoint of seq {highest.seq}: the shoe link row was changed "
                        f"({highest.link} signed, {link_text(link_at_end)} stored)")
    return problems
