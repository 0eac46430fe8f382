"""The state-machine diagrams: drawn from the tables, and the committed ones up to date."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker import diagrams
from kcm.model.tables import PARTITION_TABLE, REPLICA_TABLE

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "diagrams"


def _by_name():
    return {d.name: d for d in diagrams.table_diagrams()}


@pytest.mark.parametrize("table", [REPLICA_TABLE, PARTITION_TABLE], ids=lambda t: t.name)
def test_one_node_per_state_and_one_edge_per_transition(table) -> None:
    source = _by_name()[f"{table.name}_state_machine"].source
    for state in table.states:
        assert f"\t{state.name} [label=" in source
    edge_lines = [line for line in source.splitlines() if " -> " in line]
    assert len(edge_lines) == len(table)
    for frm, to in table.edges():
        assert any(line.strip().startswith(f"{frm.name} -> {to.name} ") for line in edge_lines)
        assert table.edge_actions[(frm, to)].split("\\n")[0] in source


def test_replica_diagram_marks_the_pre_2_3_difference() -> None:
    source = _by_name()["replica_state_machine"].source
    dashed = [line for line in source.splitlines() if "style=dashed" in line]
    assert len(dashed) == 1
    assert dashed[0].strip().startswith("OfflineReplica -> ReplicaDeletionIneligible")
    assert "KAFKA-8237" in dashed[0]
    assert "StopReplica(delete=true)" in source


@pytest.mark.parametrize("name", ["replica_state_machine", "partition_state_machine"])
def test_committed_diagrams_are_up_to_date(name) -> None:
    diagram = _by_name()[name]
    dot = COMMITTED / f"{name}.dot"
    svg = COMMITTED / f"{name}.svg"
    assert dot.read_text(encoding="utf-8") == diagram.source, f"run `make diagrams`: {dot} is out of date"
    assert diagrams.digest_comment(diagram) in svg.read_text(encoding="utf-8"), \
        f"run `make diagrams`: {svg} was not rendered from the current tables"


def test_write_renders_svg_and_png_with_dot(tmp_path) -> None:
    written = diagrams.write(diagrams.table_diagrams(), tmp_path)
    assert sorted(p.name for p in written) == sorted(
        f"{n}.{f}" for n in ("replica_state_machine", "partition_state_machine") for f in ("dot", "svg", "png"))
    assert (tmp_path / "replica_state_machine.png").read_bytes()[:4] == b"\x89PNG"
