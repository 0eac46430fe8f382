"""ReassignmentCompletionRemovesRequest, ReassignmentDeletesRemovedReplicas and
DeletionQueuesEmptyWhenQuiescent (model/catalogue/reassignment.py, deletion.py): each fails on a small
hand-made violation, holds on the clean model's suite configs, and kills its mutants."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.actions import ControllerProcessEvent, NetworkDeliver
from kcm.model.catalogue.deletion import deletion_queues_empty_when_quiescent
from kcm.model.catalogue.reassignment import (
    reassignment_completion_removes_request,
    reassignment_deletes_removed_replicas,
)
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import Cluster, Request, RequestKind, StopReplicaPartition, put
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle

from kcm import config

SMALL = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 1, "max_broker_crashes": 1,
                                  "max_session_expiries": 0})
SUITE = Path(__file__).parents[3] / "bench" / "mutation"
NEW = ["ReassignmentCompletionRemovesRequest", "ReassignmentDeletesRemovedReplicas", "DeletionQueuesEmptyWhenQuiescent"]


@pytest.fixture(scope="module")
def calm() -> Cluster:
    """The settled cluster of SMALL: broker 0 controller, partition 0 on broker 0 alone."""
    s = settle(SMALL, init_states(SMALL)[0])
    assert s.zk.controller == 0 and s.zk.assignment == ((0,),) and s.zk.partitions[0].leader == 0
    return s


def with_zk(s: Cluster, **fields) -> Cluster:
    return s._replace(zk=s.zk._replace(**fields))


def with_ctx(s: Cluster, b: int, **fields) -> Cluster:
    return s._replace(brokers=put(s.brokers, b, s.brokers[b]._replace(ctx=s.brokers[b].ctx._replace(**fields))))


def test_reassignment_completion_removes_request(calm) -> None:
    # reassignment:94 / :188: the step that completes 0 -> 1 (RS = (1, 0), AR = (1,), RR = (0,) to
    # RS = (1,)) leaves /admin/reassign_partitions asking for (1,)
    a = ControllerProcessEvent(0)
    moving = with_zk(calm, assignment=((1, 0),), adding=((1,),), removing=((0,),), reassign=((1,),))
    done = with_zk(moving, assignment=((1,),), adding=((),), removing=((),), reassign=((),))
    assert reassignment_completion_removes_request(moving, a, done)
    kept = with_zk(done, reassign=((1,),))
    assert not reassignment_completion_removes_request(moving, a, kept)
    # judged only on controller events, and only when AR / RR empty in this step
    assert reassignment_completion_removes_request(moving, NetworkDeliver(0, 1), kept)
    assert reassignment_completion_removes_request(kept, a, kept)
    # a request for another target (the next reassignment's) stays, as in Kafka
    assert reassignment_completion_removes_request(moving, a, with_zk(done, reassign=((0,),)))
    # a topic deletion empties AR / RR with the assignment: not a completion
    assert reassignment_completion_removes_request(moving, a, with_zk(kept, assignment=((),)))


def stop_replica(p: int, delete: bool) -> Request:
    return Request(RequestKind.StopReplica, 0, 1, 1, (StopReplicaPartition(p, 1, delete),))


def test_reassignment_deletes_removed_replicas(calm) -> None:
    # reassignment:160 / reassignment:159 swap: broker 0, removed by 0 -> 1, gets no
    # StopReplica(delete = true) in the completing event (net index 0 is controller 0 -> broker 0)
    a = ControllerProcessEvent(0)
    moving = with_zk(calm, assignment=((1, 0),), adding=((1,),), removing=((0,),), reassign=((1,),))
    done = with_zk(moving, assignment=((1,),), adding=((),), removing=((),), reassign=((),))
    assert calm.brokers[0].ctx.live == 0b11 and calm.brokers[0].ctx.channel == 0b11 and not calm.net[0]
    assert not reassignment_deletes_removed_replicas(moving, a, done)
    only_stopped = done._replace(net=put(done.net, 0, (stop_replica(0, False),)))
    assert not reassignment_deletes_removed_replicas(moving, a, only_stopped)
    deleted = done._replace(net=put(done.net, 0, (stop_replica(0, False), stop_replica(0, True))))
    assert reassignment_deletes_removed_replicas(moving, a, deleted)
    # a removed replica on a broker the controller holds dead is not sent anything
    assert reassignment_deletes_removed_replicas(moving, a, with_ctx(done, 0, live=0b10))
    # not a completion: AR / RR still there, or the topic deleted
    assert reassignment_deletes_removed_replicas(moving, a, moving)
    assert reassignment_deletes_removed_replicas(moving, a, with_zk(done, assignment=((),)))


def test_deletion_queues_empty_when_quiescent(calm) -> None:
    # topic_deletion:143 / :144: completeDeleteTopic keeps the topic queued or "deletion started"
    assert deletion_queues_empty_when_quiescent(calm)
    assert not deletion_queues_empty_when_quiescent(with_ctx(calm, 0, topics_to_delete=1))
    assert not deletion_queues_empty_when_quiescent(with_ctx(calm, 0, topics_deletion_started=1))
    # the ineligibility mark may stay (2.6 does not clear it); a broker down is no quiescence
    assert deletion_queues_empty_when_quiescent(with_ctx(calm, 0, topics_ineligible=1))
    down = calm._replace(brokers=put(calm.brokers, 1, calm.brokers[1]._replace(up=False)))
    assert deletion_queues_empty_when_quiescent(with_ctx(down, 0, topics_to_delete=1))


@pytest.mark.parametrize("name", ["m-reassign", "m-delete", "m-overlap", "tiny", "m-reassign2",
                                  "m-recreate"])
def test_new_properties_hold_on_the_suite(name: str) -> None:
    cfg = config.load_preset("tiny") if name == "tiny" else config.load_config_file(SUITE / f"{name}.toml")
    model = KafkaModel(cfg)
    assert set(NEW) <= {x.name for x in model.properties()}
    result = explore(model, properties=NEW, goals_required=False)
    assert result.verdict == "pass" and not result.violations, result.summary_lines()
