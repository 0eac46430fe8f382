"""The state tables against Kafka 2.6, pair by pair, and the table validation."""

from __future__ import annotations

import itertools
from types import MappingProxyType

import pytest
from kcm.model.states import PartitionState as P
from kcm.model.states import ReplicaState as R
from kcm.model.tables import (
    PARTITION_TABLE,
    REPLICA_TABLE,
    REPLICA_TABLE_PRE_2_3,
    REPLICA_TABLE_VERSIONS,
    StateTable,
    TableError,
    edges,
    is_valid_transition,
    valid_previous,
)

# Written out by hand from Kafka 2.6 (kafka@2.6.x:core/src/main/scala/kafka/controller/
# ReplicaStateMachine.scala and PartitionStateMachine.scala), as (from, to) pairs, independently
# of kcm.model.tables.
KAFKA_2_6_REPLICA = {
    ("NonExistentReplica", "NewReplica"),
    ("NewReplica", "OnlineReplica"), ("OnlineReplica", "OnlineReplica"),
    ("OfflineReplica", "OnlineReplica"), ("ReplicaDeletionIneligible", "OnlineReplica"),
    ("NewReplica", "OfflineReplica"), ("OnlineReplica", "OfflineReplica"),
    ("OfflineReplica", "OfflineReplica"), ("ReplicaDeletionIneligible", "OfflineReplica"),
    ("OfflineReplica", "ReplicaDeletionStarted"),
    ("ReplicaDeletionStarted", "ReplicaDeletionSuccessful"),
    ("OfflineReplica", "ReplicaDeletionIneligible"), ("ReplicaDeletionStarted", "ReplicaDeletionIneligible"),
    ("ReplicaDeletionSuccessful", "NonExistentReplica"),
}
KAFKA_2_6_PARTITION = {
    ("NonExistentPartition", "NewPartition"),
    ("NewPartition", "OnlinePartition"), ("OnlinePartition", "OnlinePartition"),
    ("OfflinePartition", "OnlinePartition"),
    ("NewPartition", "OfflinePartition"), ("OnlinePartition", "OfflinePartition"),
    ("OfflinePartition", "OfflinePartition"),
    ("OfflinePartition", "NonExistentPartition"),
}

REPLICA_PAIRS = list(itertools.product(R, R))
PARTITION_PAIRS = list(itertools.product(P, P))


def test_byte_codes_are_kafkas() -> None:
    assert [(s.name, s.value) for s in R] == [
        ("NewReplica", 1), ("OnlineReplica", 2), ("OfflineReplica", 3), ("ReplicaDeletionStarted", 4),
        ("ReplicaDeletionSuccessful", 5), ("ReplicaDeletionIneligible", 6), ("NonExistentReplica", 7)]
    assert [(s.name, s.value) for s in P] == [
        ("NewPartition", 0), ("OnlinePartition", 1), ("OfflinePartition", 2), ("NonExistentPartition", 3)]


def test_pair_counts() -> None:
    assert len(REPLICA_PAIRS) == 49 and len(PARTITION_PAIRS) == 16


@pytest.mark.parametrize(("frm", "to"), REPLICA_PAIRS, ids=lambda s: s.short)
def test_replica_transition_matches_kafka_2_6(frm: R, to: R) -> None:
    expected = (frm.name, to.name) in KAFKA_2_6_REPLICA
    assert REPLICA_TABLE.is_valid_transition(frm, to) is expected
    assert is_valid_transition(frm, to) is expected
    assert (frm in valid_previous(to)) is expected


@pytest.mark.parametrize(("frm", "to"), PARTITION_PAIRS, ids=lambda s: s.short)
def test_partition_transition_matches_kafka_2_6(frm: P, to: P) -> None:
    expected = (frm.name, to.name) in KAFKA_2_6_PARTITION
    assert PARTITION_TABLE.is_valid_transition(frm, to) is expected
    assert is_valid_transition(frm, to) is expected


def test_pre_2_3_table_differs_only_in_deletion_ineligible_from_offline() -> None:
    old = set(edges(REPLICA_TABLE_PRE_2_3))
    new = set(edges(REPLICA_TABLE))
    assert new - old == {(R.OfflineReplica, R.ReplicaDeletionIneligible)}
    assert old - new == set()
    assert REPLICA_TABLE_PRE_2_3.valid_previous(R.ReplicaDeletionIneligible) == {R.ReplicaDeletionStarted}
    assert REPLICA_TABLE_VERSIONS == {"2.3+": REPLICA_TABLE, "pre-2.3": REPLICA_TABLE_PRE_2_3}


def test_edges_are_in_a_fixed_order_and_labelled() -> None:
    assert edges(PARTITION_TABLE)[0] == (P.NonExistentPartition, P.NewPartition)
    assert len(edges(REPLICA_TABLE)) == len(KAFKA_2_6_REPLICA) == 14
    for table in (REPLICA_TABLE, REPLICA_TABLE_PRE_2_3, PARTITION_TABLE):
        assert set(table.edge_actions) == set(table.edges())


def _table(rows, labels=None, initial=P.NonExistentPartition) -> StateTable:
    rows = {k: frozenset(v) for k, v in rows.items()}
    if labels is None:
        labels = {(f, t): "x" for t, fs in rows.items() for f in fs}
    return StateTable(name="partition", version="test", states=P, initial=initial,
                      valid_previous_states=MappingProxyType(rows), edge_actions=MappingProxyType(labels),
                      source="test")


GOOD_ROWS = {P.NewPartition: {P.NonExistentPartition}, P.OnlinePartition: {P.NewPartition},
             P.OfflinePartition: {P.OnlinePartition}, P.NonExistentPartition: {P.OfflinePartition}}


def test_validation_accepts_a_good_table() -> None:
    assert len(_table(GOOD_ROWS)) == 4


def test_validation_names_a_missing_row() -> None:
    rows = {k: v for k, v in GOOD_ROWS.items() if k != P.OfflinePartition}
    rows[P.NonExistentPartition] = {P.OnlinePartition}
    with pytest.raises(TableError, match=r"no row for OfflinePartition; add `OfflinePartition: frozenset"):
        _table(rows)


def test_validation_names_an_unknown_state() -> None:
    rows = dict(GOOD_ROWS)
    rows[P.OnlinePartition] = {P.NewPartition, R.OnlineReplica}
    with pytest.raises(TableError,
                       match=r"row OnlinePartition lists ReplicaState.OnlineReplica, which is not a PartitionState"):
        _table(rows, labels={})


def test_validation_names_an_unreachable_state() -> None:
    rows = dict(GOOD_ROWS)
    rows[P.OfflinePartition] = set()
    with pytest.raises(TableError, match=r"OfflinePartition is unreachable from NonExistentPartition"):
        _table(rows)


def test_validation_names_an_unlabelled_edge() -> None:
    labels = {(f, t): "x" for t, fs in GOOD_ROWS.items() for f in fs}
    del labels[(P.NewPartition, P.OnlinePartition)]
    with pytest.raises(TableError, match=r"edge NewPartition -> OnlinePartition has no action label"):
        _table(GOOD_ROWS, labels)
