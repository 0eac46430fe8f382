"""State-machine diagrams drawn from the tables, and their rendering through graphviz.

Each diagram has one node per state and one edge per valid transition of `kcm.model.tables`,
labelled with the Kafka action that takes it. The replica diagram also shows the table versions:
an edge that exists in the pinned 2.3+ table but not in the pre-2.3 one is drawn dashed and marked
with the JIRA that added it (KAFKA-8237), so one picture answers "what changed".

DOT is always produced (by the `graphviz` package, which only builds text); SVG and PNG need
graphviz's `dot` program. Each graph carries a `comment` with a digest of its own DOT text; `dot`
copies it into the SVG, so a test can tell an SVG that is out of date with the tables.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import graphviz
from kcm.checker.engine.errors import UsageError
from kcm.model.tables import PARTITION_TABLE, REPLICA_TABLE, REPLICA_TABLE_PRE_2_3, StateTable

FORMATS = ("dot", "svg", "png")

_NODE_STYLE = {"shape": "box", "style": "rounded,filled", "fillcolor": "#eef3fb", "fontname": "Helvetica"}
_INITIAL_STYLE = {"fillcolor": "#d9ead3"}


@dataclass(frozen=True)
class Diagram:
    """A diagram's file stem and DOT source (with its digest comment)."""

    name: str
    source: str


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _finish(name: str, graph: graphviz.Digraph) -> Diagram:
    """Stamp the graph with a digest of its own source, so a rendering can be matched to it."""
    body = graph.source
    graph.attr(comment=f"kcm digest {_digest(body)}")
    return Diagram(name, graph.source)


def digest_comment(diagram: Diagram) -> str:
    """The comment `dot` copies into renderings of `diagram` (`kcm digest <hex>`)."""
    for line in diagram.source.splitlines():
        if "kcm digest" in line:
            return line.split('"')[1]
    raise ValueError(f"diagram {diagram.name} has no digest")


def state_machine_diagram(table: StateTable, *, older: StateTable | None = None, note: str = "") -> Diagram:
    """`table` as a graph; edges missing from `older` are dashed and marked with `note`."""
    title = (f"{table.states.__name__.replace('State', '')}StateMachine · Kafka {table.version} table\\n"
             f"{table.source}")
    g = graphviz.Digraph(name=f"{table.name}_state_machine")
    g.attr(label=title, labelloc="t", fontname="Helvetica", fontsize="12", rankdir="LR", nodesep="0.5")
    g.attr("node", **_NODE_STYLE)
    g.attr("edge", fontname="Helvetica", fontsize="9")
    for state in table.states:
        extra = _INITIAL_STYLE if state == table.initial else {}
        g.node(state.name, f"{state.name}\\n({state.value})", **extra)
    for frm, to in table.edges():
        label = table.edge_actions[(frm, to)]
        attrs: dict[str, str] = {}
        if older is not None and not older.is_valid_transition(frm, to):
            attrs = {"style": "dashed", "color": "#b45f06", "fontcolor": "#b45f06"}
            label = f"{label}\\n[{note}]"
        g.edge(frm.name, to.name, label=label, **attrs)
    return _finish(f"{table.name}_state_machine", g)


def table_diagrams() -> tuple[Diagram, ...]:
    """Both state machines of the pinned version; the replica one marks the pre-2.3 difference."""
    return (
        state_machine_diagram(REPLICA_TABLE, older=REPLICA_TABLE_PRE_2_3,
                              note="2.3+ only: KAFKA-8237; absent before 2.3"),
        state_machine_diagram(PARTITION_TABLE),
    )


def dot_available() -> bool:
    return shutil.which("dot") is not None


def write(diagrams: tuple[Diagram, ...], out: Path, formats: tuple[str, ...] = FORMATS) -> list[Path]:
    """Write each diagram in each format under `out`; DOT always, SVG and PNG only with `dot`.

    Returns the files written. A format that needs `dot` when it is missing is skipped only if the
    caller asked for every format (the default); asked for alone, it is an error.
    """
    for fmt in formats:
        if fmt not in FORMATS:
            raise UsageError(f"unknown diagram format '{fmt}'; choose one of {', '.join(FORMATS)}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create output folder '{out}' ({exc.strerror})") from None
    rendered = [f for f in formats if f != "dot"]
    if rendered and not dot_available():
        if tuple(formats) != FORMATS:
            raise UsageError("graphviz's `dot` is not installed; install graphviz or use --format dot")
        rendered = []
    written: list[Path] = []
    for diagram in diagrams:
        dot_path = out / f"{diagram.name}.dot"
        dot_path.write_text(diagram.source, encoding="utf-8")
        if "dot" in formats:
            written.append(dot_path)
        for fmt in rendered:
            target = out / f"{diagram.name}.{fmt}"
            subprocess.run(["dot", f"-T{fmt}", "-o", str(target), str(dot_path)], check=True,
                           capture_output=True)
            written.append(target)
        if "dot" not in formats:
            dot_path.unlink()
    return written
