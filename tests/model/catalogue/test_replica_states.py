"""RemovedReplicasForgotten (model/catalogue/tables.py): fails on a hand-made violation,
holds on the clean model of the mutation suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.catalogue.tables import removed_replicas_forgotten
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import Cluster, Event, EventKind, put
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle
from kcm.model.states import ReplicaState

from kcm import config

SMALL = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1,
                                  "max_session_expiries": 0})
SUITE = Path(__file__).parents[3] / "bench" / "mutation"


@pytest.fixture(scope="module")
def calm() -> Cluster:
    """The settled cluster of SMALL: broker 0 controller, partition 0 on brokers (0, 1)."""
    s = settle(SMALL, init_states(SMALL)[0])
    assert s.zk.controller == 0 and s.brokers[0].active and s.brokers[0].ctx.assignment[0] == (0, 1)
    return s


def with_broker(s: Cluster, b: int, **fields) -> Cluster:
    return s._replace(brokers=put(s.brokers, b, s.brokers[b]._replace(**fields)))


def with_ctx(s: Cluster, b: int, **fields) -> Cluster:
    return with_broker(s, b, ctx=s.brokers[b].ctx._replace(**fields))


def removed(s: Cluster, state: ReplicaState) -> Cluster:
    """Broker 1 reassigned away from partition 0, its replica state left as `state`."""
    rs = s.brokers[0].ctx.replica_states
    return with_ctx(s, 0, assignment=put(s.brokers[0].ctx.assignment, 0, (0,)),
                    replica_states=put(rs, 0, put(rs[0], 1, state)))


def test_removed_replicas_forgotten(calm) -> None:
    assert removed_replicas_forgotten(calm)
    assert removed_replicas_forgotten(removed(calm, ReplicaState.NonExistentReplica))
    # the last step of stopRemovedReplicasOfReassignedPartition (or completeDeleteTopic) not taken
    assert not removed_replicas_forgotten(removed(calm, ReplicaState.ReplicaDeletionSuccessful))
    # the replica never reached ReplicaDeletionStarted, so the rest of the chain was refused
    assert not removed_replicas_forgotten(removed(calm, ReplicaState.OfflineReplica))


def test_judged_only_when_settled_under_a_controller(calm) -> None:
    bad = removed(calm, ReplicaState.ReplicaDeletionSuccessful)
    # an event still queued: not settled, the reassignment may not have finished
    assert removed_replicas_forgotten(with_broker(bad, 0, queue=(Event(EventKind.BrokerChange),)))
    # no active controller named in /controller
    assert removed_replicas_forgotten(with_broker(bad, 0, active=False))


@pytest.mark.parametrize("name", ["m-reassign", "m-delete", "m-overlap", "m-move", "m-shutdown", "tiny"])
def test_holds_on_the_mutation_suite(name) -> None:
    cfg = config.load_preset("tiny") if name == "tiny" else config.load_config_file(SUITE / f"{name}.toml")
    result = explore(KafkaModel(cfg), properties=["RemovedReplicasForgotten"], goals_required=False)
    assert result.verdict == "pass" and not result.violations, result.summary_lines()
