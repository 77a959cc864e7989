"""A round's dispute bundle: its journal slice, its pictures and a page, checkable offline.

``make_bundle`` writes into a folder:

* ``slice.jsonl``: every journal row from the round's first event to its last (its
  pictures' ``evidence`` events included), and on to the signed checkpoint that
  covers it when the table signs checkpoints: ``{"seq", "hash", "body"}`` a line;
* ``pictures/<sha256>.jpg``: every picture the slice's ``evidence`` events name that
  the table still has;
* ``checkpoint.json`` and ``verify.key`` (when given): the signed checkpoint and the
  table's public key;
* ``manifest.json``: table, round, the seq range, the hash before the first row, each
  picture's status (kept; or deleted by retention, with when; or missing), the result
  re-judged by the rules core;
* ``index.html``: the round for a person: cards in deal order with their pictures and
  the camera's reading drawn over the table, every event with its time, the result,
  the re-judged result and the payouts.

``verify_bundle`` checks a bundle with nothing but the bundle (and, if the bundle's
own key is not to be trusted, a key given apart): the rows' seqs follow one another
from the manifest's first seq, each hash is ``sha256(previous hash + body)`` from
the manifest's hash before it, each picture's content hashes to its name and is named
by an ``evidence`` event of the slice, the checkpoint's signature verifies and it
signs the hash the slice holds at its seq, and the round's result re-judges the same.
The written procedure is ``docs/evidence.md``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from table_controller.event_types import (
    CardDealt,
    EventError,
    EvidenceRecorded,
    RoundResult,
    RoundVoided,
    decode_event,
)
from table_controller.evidence.store import EvidenceStore
from table_controller.journal.store import JournalReader, JournalRecord

GENESIS = "0" * 64


class BundleError(ValueError):
    """The bundle cannot be made (no such round, an unreadable journal)."""


@dataclass(frozen=True)
class BundleReport:
    """What ``verify_bundle`` found: problems (empty: the bundle holds) and notes."""

    problems: list[str]
    notes: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def _rows(journal: Path) -> list[JournalRecord]:
    try:
        reader = JournalReader(journal)
    except Exception as e:
        raise BundleError(f"{journal}: cannot read the journal: {e}") from e
    try:
        return list(reader.records())
    finally:
        reader.close()


def _checkpoint_covering(checkpoints: Path | None, last_seq: int) -> Any:
    if checkpoints is None:
        return None
    from table_controller.journal.checkpoints import load_checkpoints

    after = [c for c in load_checkpoints(checkpoints) if c.seq >= last_seq]
    return min(after, key=lambda c: c.seq) if after else None


def _rejudge(variant: str | None, events: list[Any]) -> dict[str, Any] | None:
    """The round's result computed by the rules core from its journaled cards (None: no result)."""
    from table_controller.journal.replay import SeqCard, rejudge
    from table_controller.rules import load_game

    result = next((e for e in events if isinstance(e, RoundResult)), None)
    if result is None or variant is None:
        return None
    cards = [SeqCard(e.seq, e) for e in events if isinstance(e, CardDealt) and e.position != "burn"]
    judged = rejudge(load_game(variant), cards, result)
    return {"computed": judged.computed, "journaled": judged.journaled, "differences": list(judged.differences),
            "refused": judged.refused}


def make_bundle(journal: Path, round_id: str, out: Path, *, evidence: Path | None = None,
                checkpoints: Path | None = None, verify_key: Path | None = None) -> dict[str, Any]:
    """Write the bundle of ``round_id`` into ``out`` (see module doc); returns the manifest."""
    rows = _rows(journal)
    mine = [r for r in rows if r.round == round_id]
    if not mine:
        raise BundleError(f"{journal}: no round {round_id}")
    first, last = mine[0].seq, mine[-1].seq
    checkpoint = _checkpoint_covering(checkpoints, last)
    end = checkpoint.seq if checkpoint is not None else last
    part = [r for r in rows if first <= r.seq <= end]
    prev = next((r.hash for r in rows if r.seq == first - 1), GENESIS)
    events = []
    for r in part:
        try:
            events.append(decode_event(r.body))
        except EventError:
            continue
    store = EvidenceStore(evidence or journal.with_name(journal.name + ".evidence"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "pictures").mkdir(exist_ok=True)
    statuses: dict[str, str] = {}
    deleted = store.deleted()
    for e in events:
        if not isinstance(e, EvidenceRecorded):
            continue
        for digest in (e.frame, e.card):
            if digest is None or digest in statuses:
                continue
            data = store.read(digest)
            if data is not None and hashlib.sha256(data).hexdigest() == digest:
                (out / "pictures" / f"{digest}.jpg").write_bytes(data)
                statuses[digest] = "kept"
            elif digest in deleted:
                statuses[digest] = f"deleted by retention at {deleted[digest].at:.0f} ({deleted[digest].reason})"
            else:
                statuses[digest] = "missing" if data is None else "changed on the table's disk (not copied)"
    with open(out / "slice.jsonl", "w", encoding="utf-8") as f:
        for r in part:
            f.write(json.dumps({"seq": r.seq, "hash": r.hash, "body": r.body}) + "\n")
    start = next((e for e in events if e.type == "round.start" and e.round == round_id), None)
    variant = getattr(start, "variant", None)
    table = events[0].table if events else None
    round_events = [e for e in events if e.round == round_id]
    manifest: dict[str, Any] = {
        "table": table, "round": round_id, "variant": variant, "first_seq": first, "last_seq": end,
        "round_last_seq": last, "prev_hash": prev, "pictures": statuses,
        "rejudged": _rejudge(variant, round_events),
        "checkpoint": checkpoint.seq if checkpoint is not None else None,
    }
    if checkpoint is not None:
        (out / "checkpoint.json").write_text(checkpoint.to_json() + "\n", encoding="utf-8")
    if verify_key is not None:
        shutil.copyfile(verify_key, out / "verify.key")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    (out / "index.html").write_text(render_html(manifest, part, events), encoding="utf-8")
    return manifest


def render_html(manifest: dict[str, Any], part: Sequence[JournalRecord], events: list[Any]) -> str:
    """The bundle's page: the cards with their pictures, the table with the reading drawn over it,
    every event, the result and its re-judgement. Self-contained (pictures from ``pictures/``)."""
    e = html.escape
    round_id = manifest["round"]
    evidence = [x for x in events if isinstance(x, EvidenceRecorded)]
    by_card = {(x.position, x.index, x.code): x for x in evidence if x.of == "card"}
    cards_html = []
    for c in (x for x in events if isinstance(x, CardDealt) and x.round == round_id):
        pic = by_card.get((c.position, c.index, c.code))
        img = (f'<img class="card" alt="{e(c.code)}" src="pictures/{pic.card}.jpg">'
               if pic is not None and pic.card and manifest["pictures"].get(pic.card) == "kept"
               else '<div class="nopic">no picture</div>')
        frame = ""
        if pic is not None and manifest["pictures"].get(pic.frame) == "kept":
            overlay = ""
            if pic.corners:
                points = " ".join(f"{x},{y}" for x, y in pic.corners)
                x0, y0 = pic.corners[0]
                overlay = (f'<polygon points="{points}" class="read"/>'
                           f'<text x="{x0}" y="{max(12.0, y0 - 4)}" class="read">{e(c.code)}</text>')
            frame = (f'<svg class="table" data-frame="{pic.frame}" viewBox="0 0 960 540">'
                     f'<image href="pictures/{pic.frame}.jpg" width="960" height="540" '
                     f'preserveAspectRatio="xMinYMin meet"/>{overlay}</svg>')
        cards_html.append(f'<div class="dealt" data-seq="{c.seq}" data-code="{e(c.code)}"><h3>{e(c.position)} '
                          f'{c.index + 1}: {e(c.code)}</h3><p>seq {c.seq} · {e(c.ts)} · {e(c.source)}</p>'
                          f"{img}{frame}</div>")
    rows = "".join(f'<tr data-seq="{r.seq}"><td>{r.seq}</td><td>{e(getattr(x, "ts", ""))}</td>'
                   f'<td>{e(getattr(x, "type", "?"))}</td><td><code>{e(r.body[:160])}</code></td>'
                   f'<td><code>{r.hash[:16]}…</code></td></tr>'
                   for r, x in zip(part, events, strict=False))
    settled = next((x for x in events if isinstance(x, RoundResult | RoundVoided) and x.round == round_id), None)
    if isinstance(settled, RoundResult):
        outcome = (f"<p id='outcome'>{e(json.dumps(settled.outcome))}</p><table id='payouts'>"
                   + "".join(f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in settled.payouts.items())
                   + "</table>")
    elif isinstance(settled, RoundVoided):
        outcome = f"<p id='outcome'>void: {e(settled.reason or '')}</p>"
    else:
        outcome = "<p id='outcome'>not settled in this slice</p>"
    rejudged = manifest.get("rejudged")
    verdict = ("the rules core computes the same result" if rejudged and not rejudged["differences"]
               and not rejudged["refused"] else f"re-judgement: {e(json.dumps(rejudged))}")
    pictures = "".join(f"<li><code>{d[:16]}…</code> {e(s)}</li>" for d, s in manifest["pictures"].items())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Round {e(round_id)} — {e(str(manifest['table']))}</title>
<style>
 body {{ font-family: "DejaVu Sans", Arial, sans-serif; margin: 1.5rem; }}
 .dealt {{ display: inline-block; vertical-align: top; margin: .5rem; padding: .5rem; border: 1px solid #ccc; }}
 img.card {{ height: 200px; display: block; }} svg.table {{ width: 480px; display: block; }}
 polygon.read {{ fill: none; stroke: #00e676; stroke-width: 3; }} text.read {{ fill: #00e676; font-size: 20px; }}
 table {{ border-collapse: collapse; }} td {{ border-bottom: 1px solid #ddd; padding: 2px 6px; font-size: 12px; }}
</style></head><body>
<h1>Table {e(str(manifest['table']))}, round {e(round_id)}</h1>
<p>Journal seq {manifest['first_seq']}–{manifest['last_seq']} (the round up to {manifest['round_last_seq']});
hash before: <code>{manifest['prev_hash'][:16]}…</code>; signed checkpoint: {manifest['checkpoint'] or 'none'}.
Check it offline: <code>table-controller journal verify-bundle DIR</code> (docs/evidence.md).</p>
<h2>Cards in deal order</h2><div id="cards">{''.join(cards_html)}</div>
<h2>Result</h2>{outcome}<p id="rejudged">{verdict}</p>
<h2>Pictures</h2><ul id="pictures">{pictures}</ul>
<h2>Every event</h2><table id="events">{rows}</table>
</body></html>
"""


def verify_bundle(folder: Path, verify_key: Path | None = None) -> BundleReport:
    """Check a bundle offline (see module doc)."""
    problems: list[str] = []
    notes: list[str] = []
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        lines = (folder / "slice.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
    except (OSError, ValueError) as e:
        return BundleReport([f"not a bundle: {e}"], [])
    prev, expected = str(manifest.get("prev_hash", "")), int(manifest.get("first_seq", 0))
    hashes: dict[int, str] = {}
    events = []
    for row in rows:
        seq, body, digest = row.get("seq"), str(row.get("body", "")), str(row.get("hash", ""))
        if seq != expected:
            problems.append(f"seq {seq} where {expected} was due: the slice is not in order or has a gap")
        if hashlib.sha256((prev + body).encode("utf-8")).hexdigest() != digest:
            problems.append(f"seq {seq}: its hash does not chain from the row before (changed or moved)")
        hashes[int(seq) if isinstance(seq, int) else -1] = digest
        prev, expected = digest, (seq + 1 if isinstance(seq, int) else expected + 1)
        try:
            event = decode_event(body)
        except EventError as e:
            problems.append(f"seq {seq}: not an event: {e}")
            continue
        if event.seq != seq or event.table != manifest.get("table"):
            problems.append(f"row {seq}: its event is seq {event.seq} of table {event.table}")
        events.append(event)
    if rows and rows[-1].get("seq") != manifest.get("last_seq"):
        problems.append(f"the slice ends at seq {rows[-1].get('seq')}, the manifest says {manifest.get('last_seq')}")
    named = {d for x in events if isinstance(x, EvidenceRecorded) for d in (x.frame, x.card) if d}
    pictures = folder / "pictures"
    for path in sorted(pictures.iterdir()) if pictures.is_dir() else []:
        if not re.fullmatch(r"[0-9a-f]{64}\.jpg", path.name):
            problems.append(f"pictures/{path.name}: not a picture of the bundle (<sha256>.jpg)")
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != path.stem:
            problems.append(f"picture {path.name}: its content hashes to {digest[:16]}…: it was changed")
        elif digest not in named:
            problems.append(f"picture {path.name} is named by no evidence event of the slice")
    for digest in sorted(named):
        if not (pictures / f"{digest}.jpg").exists():
            status = manifest.get("pictures", {}).get(digest, "missing")
            notes.append(f"picture {digest[:16]}… not in the bundle: {status}")
    checkpoint_file = folder / "checkpoint.json"
    if checkpoint_file.exists():
        problems += _check_checkpoint(checkpoint_file, verify_key or folder / "verify.key", hashes,
                                      manifest.get("table"), int(manifest.get("round_last_seq") or 0))
    elif manifest.get("checkpoint") is not None:
        problems.append(f"the manifest names the checkpoint of seq {manifest['checkpoint']}, and it is not here")
    else:
        notes.append("no signed checkpoint: the chain is checked within the slice only")
    round_events = [x for x in events if x.round == manifest.get("round")]
    judged = _rejudge(manifest.get("variant"), round_events)
    if judged is not None and (judged["differences"] or judged["refused"]):
        problems.append(f"the result does not re-judge the same: {judged['differences'] or judged['refused']}")
    return BundleReport(problems, notes)


def _check_checkpoint(path: Path, key: Path, hashes: dict[int, str], table: Any, round_end: int) -> list[str]:
    from cryptography.exceptions import InvalidSignature

    from table_controller.journal.checkpoints import CheckpointError, load_checkpoints, load_verify_key

    try:
        checkpoint = load_checkpoints(path)[0]
        public = load_verify_key(key)
    except (CheckpointError, IndexError) as e:
        return [f"checkpoint: {e}"]
    try:
        public.verify(base64.b64decode(checkpoint.sig), checkpoint.payload())
    except (InvalidSignature, ValueError):
        return [f"checkpoint of seq {checkpoint.seq}: the signature does not verify with {key}"]
    if checkpoint.table != table:
        return [f"checkpoint of seq {checkpoint.seq} is of table {checkpoint.table}, not {table}"]
    if hashes.get(checkpoint.seq) != checkpoint.hash:
        return [f"checkpoint of seq {checkpoint.seq}: the slice's hash there is not the signed one"]
    if checkpoint.seq < round_end:
        return [f"checkpoint of seq {checkpoint.seq} does not cover the round, which ends at seq {round_end}"]
    return []
