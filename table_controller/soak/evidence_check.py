"""The soak's evidence check: the camera tables kept their pictures, and every voided round's
dispute bundle verifies offline (docs/evidence.md).

For each camera table: every ``evidence`` event's pictures are in its journal's
``.evidence`` folder and hash to their names; and for every round its journal voided, a
bundle is made (``journal evidence``) and checked (``journal verify-bundle``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from table_controller.event_types import EvidenceRecorded, RoundVoided
from table_controller.evidence.bundle import make_bundle, verify_bundle
from table_controller.evidence.store import EvidenceStore
from table_controller.journal.store import JournalReader

CHECK = "evidence_bundles_verify"


def check_evidence(journals: dict[str, Path], out: Path, problems: dict[str, list[str]]) -> dict[str, Any]:
    """Check the camera tables' journals (``journals``: table -> journal); bundles go under ``out``."""
    problems.setdefault(CHECK, [])
    pictures = bundles = 0
    for table, journal in journals.items():
        store = EvidenceStore(journal.with_name(journal.name + ".evidence"))
        reader = JournalReader(journal)
        try:
            events = list(reader.events())
        finally:
            reader.close()
        for e in events:
            if isinstance(e, EvidenceRecorded):
                for digest in (e.frame, e.card):
                    if digest is None:
                        continue
                    pictures += 1
                    status = store.status(digest)
                    if status != "kept":
                        problems[CHECK].append(f"{table}: seq {e.seq}: picture {digest[:12]} is {status}")
        for void in (e for e in events if isinstance(e, RoundVoided) and e.round):
            assert void.round is not None
            folder = out / table / void.round
            try:
                make_bundle(journal, void.round, folder)
            except Exception as err:  # the check's finding, not the soak's end
                problems[CHECK].append(f"{table} {void.round}: no bundle: {err}")
                continue
            bundles += 1
            report = verify_bundle(folder)
            problems[CHECK] += [f"{table} {void.round}: {p}" for p in report.problems]
    return {"evidence_pictures": pictures, "void_bundles_verified": bundles}
