"""Independent checker of a table's dispute bundle, written from docs/evidence.md
("Dispute bundles", "Checking a bundle offline") and docs/events.md alone, without
the controller's code or tests, to compare with `journal verify-bundle`.

Problems: manifest.json lacks table, first_seq, last_seq or a hex prev_hash;
slice.jsonl rows {seq, hash, body} do not run first_seq, first_seq+1, ... to
last_seq; a hash is not sha256(previous hash + body) (hex text, UTF-8) from
prev_hash; a body is not a JSON event with the row's seq and the manifest's table;
the first event is not of the manifest's round; a file in pictures/ is not
<sha256 of its bytes>.jpg or no "evidence" event of the slice names it ("card",
"frame"); checkpoint.json (if present): its base64 Ed25519 "sig" fails with the
given key (else the bundle's verify.key) over the sorted-keys compact JSON of its
other fields, its table is not the manifest's, its hash is not the slice's at its
"seq", or that seq is before the round's last event. Notes: named pictures
absent (with the manifest's status); no checkpoint.
NOT checked: the result re-judged by the rules core; index.html; "rejudged".

Findings (2026-12-02, bundles of `journal evidence` from sim and `run` tables):
 1. The evidence of a result or a void is journaled with round null after the
    round's last event: outside the slice (and after the checkpoint signed at
    the round's end). No bundle carries it or lists its picture as missing,
    though evidence.md counts "6 cards and the result" per round. A voided
    round's bundle lacked the void's picture (sim results reused the last
    card's frame, which hid it).
 2. The card the camera saw off every position (it voided the round) is journaled
    of "card" with round, position, index, for_seq all null: not matchable "by
    round, position, index and code" as evidence.md says.
 3. evidence.md names no checkpoint fields: the file has table, seq, hash, link,
    meta, ts, sig; the journaled "checkpoint" event calls the seq "covers".
    Escaping of non-ASCII in the signed JSON is unstated (we escape; observed
    fields are ASCII). The given signing scheme verified a real table's signature.
 4. manifest.json has undescribed fields (variant, round_last_seq, rejudged,
    checkpoint = signed seq or null); statuses read "kept"; the form of "deleted
    by retention and when" is unstated.
 5. verify-bundle accepts what this rejects: a file in pictures/ not named
    <sha256>.jpg; bodies whose seq/table disagree with the row/manifest (the row
    seq is outside the hash; e.g. two bodies swapped, chain recomputed, no
    checkpoint); a valid checkpoint signed inside the round (rows after it are
    unsigned); a bundle whose checkpoint.json was removed though its manifest
    names one (just the "no checkpoint" note, even with --verify-key).
"""
from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

HEX64 = re.compile(r"[0-9a-f]{64}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _load_json(path: Path, problems: list[str]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        problems.append(f"{path.name}: unreadable ({exc})")
        return None


def _check_slice(bundle: Path, manifest: dict[str, Any], problems: list[str]) -> dict[int, tuple[str, dict[str, Any]]]:
    """Seqs, chain and bodies of slice.jsonl; returns seq -> (hash, event)."""
    rows: dict[int, tuple[str, dict[str, Any]]] = {}
    try:
        lines = (bundle / "slice.jsonl").read_bytes().decode("utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"slice.jsonl: unreadable ({exc})")
        return rows
    if lines and lines[-1] == "":
        lines.pop()
    first, last, prev = manifest["first_seq"], manifest["last_seq"], manifest["prev_hash"]
    seq = first - 1
    for number, line in enumerate(lines, 1):
        expected = first + number - 1
        row = _parse(line)
        if not (isinstance(row, dict) and _is_int(row.get("seq")) and isinstance(row.get("hash"), str)
                and isinstance(row.get("body"), str)):
            problems.append(f"slice.jsonl line {number}: not a row {{seq, hash, body}}")
            continue
        seq, body = row["seq"], row["body"]
        if seq != expected:
            problems.append(f"slice.jsonl line {number}: seq {seq}, expected {expected}")
        if hashlib.sha256((prev + body).encode("utf-8")).hexdigest() != row["hash"]:
            problems.append(f"seq {seq}: hash is not sha256(previous hash + body)")
        prev = row["hash"]  # go on from the stated hash: one changed row gives one problem
        event = _parse(body)
        if not isinstance(event, dict):
            problems.append(f"seq {seq}: body is not a JSON event")
            event = {}
        elif event.get("seq") != seq:
            problems.append(f"seq {seq}: body's seq is {event.get('seq')!r}")
        elif event.get("table") != manifest["table"]:
            problems.append(f"seq {seq}: body's table is {event.get('table')!r}, not {manifest['table']!r}")
        if seq in rows:
            problems.append(f"seq {seq}: appears twice")
        rows.setdefault(seq, (row["hash"], event))
    if not lines or seq != last or len(lines) != last - first + 1:
        problems.append(f"slice ends at seq {seq} after {len(lines)} rows; manifest says {first}..{last}")
    if first in rows and rows[first][1].get("round") != manifest.get("round"):
        problems.append(f"slice's first event (seq {first}) is not of round {manifest.get('round')!r}")
    return rows


def _check_pictures(bundle: Path, manifest: dict[str, Any], events: list[dict[str, Any]],
                    problems: list[str], notes: list[str]) -> None:
    named: set[str] = {n for e in events if e.get("type") == "evidence" for f in ("card", "frame")
                       if isinstance(n := e.get(f), str)}
    folder, present = bundle / "pictures", set()
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        name = path.name
        if not (path.is_file() and name.endswith(".jpg") and HEX64.fullmatch(name[:-4])):
            problems.append(f"pictures/{name}: not a picture named <sha256>.jpg")
            continue
        present.add(name[:-4])
        if hashlib.sha256(path.read_bytes()).hexdigest() != name[:-4]:
            problems.append(f"pictures/{name}: content does not hash to its name")
        if name[:-4] not in named:
            problems.append(f"pictures/{name}: no evidence event of the slice names it")
    statuses = manifest["pictures"] if isinstance(manifest.get("pictures"), dict) else {}
    for missing in sorted(named - present):
        notes.append(f"picture {missing} named by the slice is not in the bundle "
                     f"(manifest: {statuses.get(missing, 'not listed')})")


def _check_checkpoint(bundle: Path, manifest: dict[str, Any], rows: dict[int, tuple[str, dict[str, Any]]],
                      verify_key: Path | None, problems: list[str], notes: list[str]) -> None:
    path = bundle / "checkpoint.json"
    if not path.exists():
        if manifest.get("checkpoint") is not None:
            problems.append(f"manifest names checkpoint {manifest['checkpoint']!r} but checkpoint.json is absent")
        notes.append("no signed checkpoint: the chain is checked within the slice only")
        return
    checkpoint = _load_json(path, problems)
    if not (isinstance(checkpoint, dict) and isinstance(checkpoint.get("sig"), str)):
        problems.append("checkpoint.json: not a JSON object with a string sig")
        return
    key_path = verify_key or bundle / "verify.key"
    try:
        key = load_pem_public_key(key_path.read_bytes())
        if not isinstance(key, Ed25519PublicKey):
            raise TypeError("not an Ed25519 public key")
        payload = {k: v for k, v in checkpoint.items() if k != "sig"}
        message = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")
        key.verify(base64.b64decode(checkpoint["sig"], validate=True), message)
    except (OSError, ValueError, TypeError, binascii.Error, UnsupportedAlgorithm) as exc:
        problems.append(f"checkpoint: cannot check the signature with {key_path} ({exc})")
    except InvalidSignature:
        problems.append(f"checkpoint: signature does not verify with {key_path}")
    if checkpoint.get("table") != manifest["table"]:
        problems.append(f"checkpoint: table {checkpoint.get('table')!r}, manifest says {manifest['table']!r}")
    seq = checkpoint.get("seq")
    if not _is_int(seq) or seq not in rows:
        problems.append(f"checkpoint: signed seq {seq!r} is not a row of the slice")
        return
    if rows[seq][0] != checkpoint.get("hash"):
        problems.append(f"checkpoint: signed hash differs from the slice's hash at seq {seq}")
    round_seqs = [s for s, (_, e) in rows.items() if e.get("round") == manifest.get("round")]
    if round_seqs and seq < max(round_seqs):
        problems.append(f"checkpoint: signed seq {seq} is before the round's last event (seq {max(round_seqs)})")


def check(bundle_dir: Path, verify_key: Path | None = None) -> tuple[list[str], list[str]]:
    """(problems, notes) of the bundle in bundle_dir."""
    bundle, problems, notes = Path(bundle_dir), list[str](), list[str]()
    manifest = _load_json(bundle / "manifest.json", problems)
    if not isinstance(manifest, dict):
        return problems or ["manifest.json: not a JSON object"], notes
    if not (isinstance(manifest.get("table"), str) and _is_int(manifest.get("first_seq"))
            and _is_int(manifest.get("last_seq")) and isinstance(manifest.get("prev_hash"), str)
            and HEX64.fullmatch(manifest["prev_hash"])):
        return problems + ["manifest.json: needs table, first_seq, last_seq and a hex prev_hash"], notes
    rows = _check_slice(bundle, manifest, problems)
    _check_pictures(bundle, manifest, [e for _, e in rows.values()], problems, notes)
    _check_checkpoint(bundle, manifest, rows, verify_key, problems, notes)
    return problems, notes


def verify(bundle_dir: Path, verify_key: Path | None = None) -> list[str]:
    """The problems found in the bundle (an empty list: the bundle holds)."""
    return check(bundle_dir, verify_key)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check a dispute bundle offline (docs/evidence.md).")
    parser.add_argument("bundle", type=Path, help="the bundle's folder")
    parser.add_argument("--verify-key", type=Path,
                        help="the table's PEM Ed25519 public key (default: BUNDLE/verify.key)")
    args = parser.parse_args(argv)
    problems, notes = check(args.bundle, args.verify_key)
    for line in [f"note: {note}" for note in notes] + [f"PROBLEM {problem}" for problem in problems]:
        print(line)
    print("bundle holds" if not problems else f"{len(problems)} problem(s)")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
