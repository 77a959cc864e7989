"""The round's state diagram, drawn from :data:`~table_controller.table.states.ROUND`.

``python -m table_controller.table.diagram`` rewrites the diagram in
``docs/controller.md`` (between its markers); ``--check`` only says whether the
doc's diagram is the declaration's (exit status 1 when it is not). The drawing
itself (:func:`mermaid`) is a pure function of the declaration.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from table_controller.table.states import ROUND, Declaration, State

BEGIN = "<!-- state diagram: generated from table_controller/table/states.py by " \
        "`python -m table_controller.table.diagram`; do not edit by hand -->"
END = "<!-- end of the generated state diagram -->"
DOC = Path(__file__).resolve().parents[2] / "docs" / "controller.md"


def mermaid(declaration: Declaration = ROUND) -> str:
    """A Mermaid ``stateDiagram-v2`` of the declaration, in a fenced block.

    One arrow per (from, to) pair, labelled with every distinct "when" that leads
    along it, in declaration order; each state carries its meaning.
    """
    whens: dict[tuple[State, State], list[str]] = {}
    for source, _, arrow in declaration.arrows():
        labels = whens.setdefault((source, arrow.to), [])
        if arrow.when not in labels:
            labels.append(arrow.when)
    lines = ["```mermaid", "stateDiagram-v2", f"    [*] --> {declaration.initial.value}"]
    lines += [f"    {info.state.value}: {info.meaning}" for info in declaration.states]
    order = {state: n for n, state in enumerate(State)}
    for (source, target), labels in sorted(whens.items(), key=lambda kv: (order[kv[0][0]], order[kv[0][1]])):
        lines.append(f"    {source.value} --> {target.value}: {' / '.join(labels)}")
    lines.append("```")
    return "\n".join(lines)


def with_diagram(doc: str, declaration: Declaration = ROUND) -> str:
    """``doc`` with the text between :data:`BEGIN` and :data:`END` replaced by the diagram.

    Raises ValueError when the markers are missing or out of order.
    """
    start, end = doc.find(BEGIN), doc.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the state diagram's markers are missing: put {BEGIN!r} and {END!r} in the doc")
    return doc[: start + len(BEGIN)] + "\n" + mermaid(declaration) + "\n" + doc[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m table_controller.table.diagram", description="Draw the round's state diagram into the docs."
    )
    parser.add_argument("--doc", type=Path, default=DOC, help=f"the Markdown file (default {DOC})")
    parser.add_argument("--check", action="store_true", help="only check; exit 1 when the diagram is stale")
    args = parser.parse_args(argv)
    try:
        doc = args.doc.read_text(encoding="utf-8")
        fresh = with_diagram(doc)
    except (OSError, ValueError) as e:
        print(f"{args.doc}: {e}", file=sys.stderr)
        return 2
    if fresh == doc:
        return 0
    if args.check:
        print(f"{args.doc}: the state diagram differs from table_controller/table/states.py; "
              "run `python -m table_controller.table.diagram`", file=sys.stderr)
        return 1
    args.doc.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
