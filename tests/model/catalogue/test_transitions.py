"""ReplicaTransitionsValid (model/catalogue/tables.py): fails on hand-made violations, holds on
the clean model of the mutation suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.catalogue.tables import replica_changes_by_valid_transitions
from kcm.model.cluster import Edge
from kcm.model.states import ReplicaState as R
from kcm.model.tables import PARTITION_TABLE, REPLICA_TABLE

from kcm import config

SUITE = Path(__file__).parents[3] / "bench" / "mutation"
NEX, NEW, ON, OFF = R.NonExistentReplica, R.NewReplica, R.OnlineReplica, R.OfflineReplica


def edge(frm, to, p, b, valid=True, table=REPLICA_TABLE) -> Edge:
    return Edge(table.name, frm, to, p, b, valid)


def test_a_change_needs_a_valid_transition_to_its_final_state() -> None:
    before = ((ON, ON), (ON, NEX))
    # partition 1: broker 1 added by a reassignment (NonExistent -> New), nothing else changes
    assert replica_changes_by_valid_transitions(before, ((ON, ON), (ON, NEW)), [edge(NEX, NEW, 1, 1)])
    # no change at all needs no observation
    assert replica_changes_by_valid_transitions(before, before, [])
    # 2.6 asks for OnlineReplica -> NewReplica (a reassignment resumed at startup) and skips it:
    # carried out, the replica is re-marked New with only the invalid request observed
    assert not replica_changes_by_valid_transitions(before, ((NEW, ON), (ON, NEX)), [edge(ON, NEW, 0, 0, valid=False)])
    # a change no transition was asked for (a direct write to the context)
    assert not replica_changes_by_valid_transitions(before, ((ON, OFF), (ON, NEX)), [])
    # a valid transition of another replica, or of the partition table, does not explain it
    assert not replica_changes_by_valid_transitions(before, ((ON, OFF), (ON, NEX)), [edge(ON, OFF, 0, 0)])
    assert not replica_changes_by_valid_transitions(
        before, ((ON, OFF), (ON, NEX)), [Edge(PARTITION_TABLE.name, ON, OFF, 0, 1, True)])


def test_a_chain_inside_one_event_is_judged_by_its_final_state() -> None:
    # topic deletion: Offline -> DeletionStarted -> DeletionSuccessful -> NonExistent in one event
    chain = [edge(OFF, R.ReplicaDeletionStarted, 0, 1),
             edge(R.ReplicaDeletionStarted, R.ReplicaDeletionSuccessful, 0, 1),
             edge(R.ReplicaDeletionSuccessful, NEX, 0, 1)]
    assert replica_changes_by_valid_transitions(((ON, OFF),), ((ON, NEX),), chain)
    assert not replica_changes_by_valid_transitions(((ON, OFF),), ((ON, R.ReplicaDeletionSuccessful),), chain[:1])


def test_it_fails_on_a_controller_that_carries_out_invalid_transitions(monkeypatch) -> None:
    """The hand-made violation: the state machines observe (log) an invalid request as 2.6 does,
    then carry it out anyway. On m-overlap 2.6 asks for OnlineReplica -> NewReplica."""
    from kcm.model.checking.kafka_model import KafkaModel
    from kcm.model.state_machines import StateMachinesMixin

    checked = StateMachinesMixin._invalid

    def carried_out(self, table, frm, to, p, b=-1):
        checked(self, table, frm, to, p, b)
        return False

    monkeypatch.setattr(StateMachinesMixin, "_invalid", carried_out)
    cfg = config.load_config_file(SUITE / "m-overlap.toml")
    result = explore(KafkaModel(cfg), properties=["ReplicaTransitionsValid"], goals_required=False)
    assert [(v.name, v.trace_length) for v in result.violations] == [("ReplicaTransitionsValid", 8)]


@pytest.mark.parametrize("name", ["m-reassign", "m-delete", "m-delete-crash", "m-overlap", "m-move", "m-reassign2",
                                  "m-shutdown", "tiny"])
def test_holds_on_the_mutation_suite(name) -> None:
    from kcm.model.checking.kafka_model import KafkaModel
    cfg = config.load_preset("tiny") if name == "tiny" else config.load_config_file(SUITE / f"{name}.toml")
    result = explore(KafkaModel(cfg), properties=["ReplicaTransitionsValid"], goals_required=False)
    assert result.verdict == "pass" and not result.violations, result.summary_lines()
