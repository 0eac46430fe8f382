"""`kcm diagram reachable`: the explored graph projected onto one partition's view."""

from __future__ import annotations

from pathlib import Path

from kcm.checker import diagrams
from kcm.checker.engine.bfs import explore
from kcm.checker.reachable import kafka_reachable, project, reachable_diagram

from kcm.cli import main
from tests.checker.toys import DGraph

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "diagrams"


def test_a_projection_counts_states_and_merges_edges() -> None:
    # 0 -> 1 -> 2 -> 3 and 0 -> 3, viewed by parity; the step 1 -> 2 is marked refused.
    model = DGraph([0], {0: [1, 3], 1: [2], 2: [3], 3: []}, terminal=[3])
    graph = explore(model, keep_graph=True, symmetry=False).extra["graph"]
    refused = lambda s, a: ["table X -> Y"] if (s, a.to) == (1, 2) else []  # noqa: E731
    p = project(model, graph, lambda s: s % 2, refused)
    assert dict(p.nodes) == {0: 2, 1: 2}
    assert p.initial == {0} and p.quiescent == {1} and p.busy == {0, 1}
    assert {k: dict(v) for k, v in p.edges.items()} == {(0, 1): {"Go": 3}, (1, 0): {"Go": 1}}
    assert {k: dict(v) for k, v in p.invalid.items()} == {(1, 0): {"table X -> Y": 1}}
    source = reachable_diagram(p, name="toy", title="toy").source
    assert "refused: table X -> Y ×1" in source and "#cc0000" in source


def test_tiny_seen_from_its_partition(liveness_of) -> None:
    model, result, _ = liveness_of("tiny")
    diagram, p = kafka_reachable(model, result.extra["graph"], preset="tiny")
    assert sum(p.nodes.values()) == 10_294
    assert len(p.nodes) == 10
    settled = ("Online", ("Online", "Online"), "preferred", 2)
    assert p.nodes[settled] == 4_684 and settled in p.quiescent
    assert p.initial == {("no controller", (), "no znode", 0)}
    # The partition goes offline only with its leader's broker crashed, and comes back.
    offline = ("Offline", ("Offline", "Online"), "none", 1)
    assert offline in p.nodes and any(src == offline for src, _ in p.edges)
    assert not p.invalid  # tiny asks no state machine for a refused transition
    committed = (COMMITTED / "reachable_tiny_p0.dot").read_text(encoding="utf-8")
    assert committed.strip() == diagram.source.strip(), \
        "run `kcm diagram reachable --preset tiny --format dot --format svg`: docs/diagrams is out of date"
    assert diagrams.digest_comment(diagram) in (COMMITTED / "reachable_tiny_p0.svg").read_text(encoding="utf-8")


def test_a_partition_out_of_range_is_one_line(capsys) -> None:
    assert main(["diagram", "reachable", "--preset", "tiny", "--partition", "1"]) == 2
    assert capsys.readouterr().err.strip() == "kcm: error: --partition 1: preset 'tiny' has 1 partition(s), 0 to 0"


def test_the_tables_reachability_validation_agrees_with_networkx() -> None:
    """model/tables.py validates by its own stdlib fixpoint (the model imports no networkx); the
    same question asked of networkx on the tables' graphs, and on a table with a state cut off."""
    import dataclasses

    import networkx as nx
    import pytest
    from kcm.model.states import PartitionState
    from kcm.model.tables import PARTITION_TABLE, REPLICA_TABLE, REPLICA_TABLE_PRE_2_3, TableError

    for table in (REPLICA_TABLE, REPLICA_TABLE_PRE_2_3, PARTITION_TABLE):
        g = nx.DiGraph(list(table.edges()))
        g.add_nodes_from(table.states)
        assert nx.descendants(g, table.initial) | {table.initial} == set(table.states)
    rows = dict(PARTITION_TABLE.valid_previous_states)
    rows[PartitionState.OfflinePartition] = frozenset({PartitionState.OfflinePartition})
    g = nx.DiGraph([(frm, to) for to, frms in rows.items() for frm in frms])
    g.add_nodes_from(PartitionState)
    assert PartitionState.OfflinePartition not in nx.descendants(g, PARTITION_TABLE.initial)
    with pytest.raises(TableError, match="OfflinePartition is unreachable"):
        dataclasses.replace(PARTITION_TABLE, valid_previous_states=rows)  # validated on construction
