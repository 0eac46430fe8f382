"""The broker side: KafkaApis' broker-epoch fence, the ReplicaManager's controller-epoch and
leader-epoch fencing (as model/broker.py `deliver`), and a leader's conditional ISR writes."""

from __future__ import annotations

import pytest
from kcm.impl.abstraction import abstract
from kcm.impl.controller_zk_client import ControllerZkClient
from kcm.impl.kafka_config import KafkaConfig
from kcm.impl.metadata_cache import MetadataCache
from kcm.impl.replica_manager import ReplicaManager
from kcm.impl.requests import (
    Errors,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from kcm.impl.step_cluster import StepCluster
from kcm.impl.timeline import Timeline
from kcm.impl.zk.memory import MemoryZooKeeperServer
from kcm.impl.zk_data import LeaderIsrAndControllerEpoch, TopicPartition
from kcm.model.config import ModelConfig
from kcm.model.election import LeaderAndIsr
from kcm.model.variants import Flags

KAFKA_2_6 = Flags()  # the default rules; a module constant, so that no default argument calls it

TP = TopicPartition("t", 0)


def lair(controller_epoch: int, leader: int, leader_epoch: int, replicas=(1, 2), zk_version=0) -> LeaderAndIsrRequest:
    state = LeaderAndIsrPartitionState(TP, controller_epoch, leader, leader_epoch, tuple(replicas), zk_version,
                                       tuple(replicas))
    return LeaderAndIsrRequest(0, controller_epoch, 5, (state,))


def stop(controller_epoch: int, leader_epoch: int, delete: bool) -> StopReplicaRequest:
    return StopReplicaRequest(0, controller_epoch, 5, (StopReplicaPartitionState(TP, leader_epoch, delete),))


@pytest.fixture
def zk():
    server = MemoryZooKeeperServer()
    client = ControllerZkClient(server.connect())
    client.create_top_level_paths()
    client.create_topic_assignment("t", {TP: [1, 2]})
    return client


def manager(zk, flags=KAFKA_2_6, broker=1) -> ReplicaManager:
    return ReplicaManager(broker, KafkaConfig(flags=flags), zk, Timeline(), MetadataCache())


def test_a_request_from_an_older_controller_epoch_is_rejected_whole(zk):
    rm = manager(zk)
    assert rm.become_leader_or_follower(lair(2, 1, 0)).error is Errors.NONE
    assert rm.become_leader_or_follower(lair(1, 2, 5)).error is Errors.STALE_CONTROLLER_EPOCH
    partition = rm.partition(TP)
    assert (partition.leader, partition.leader_epoch, rm.controller_epoch) == (1, 0, 2)
    stale = rm.maybe_update_metadata_cache(UpdateMetadataRequest(0, 1, 5, (), (1, 2)))
    assert stale.error is Errors.STALE_CONTROLLER_EPOCH
    assert rm.metadata_cache.epoch == 0


def test_variant_v1_applies_requests_from_any_controller_epoch(zk):
    rm = manager(zk, Flags(no_broker_controller_epoch_check=True))
    rm.become_leader_or_follower(lair(2, 1, 0))
    assert rm.become_leader_or_follower(lair(1, 2, 1)).error is Errors.NONE
    assert (rm.partition(TP).leader, rm.controller_epoch) == (2, 1)


def test_leader_and_isr_applies_only_a_higher_leader_epoch_for_a_listed_replica(zk):
    rm = manager(zk)
    rm.become_leader_or_follower(lair(1, 1, 3))
    rm.become_leader_or_follower(lair(1, 2, 3))            # equal leader epoch: ignored
    assert rm.partition(TP).leader == 1
    rm.become_leader_or_follower(lair(1, 2, 4, replicas=(2, 3)))   # not a replica: ignored
    assert rm.partition(TP).leader == 1
    rm.become_leader_or_follower(lair(1, 2, 4))
    partition = rm.partition(TP)
    assert (partition.leader, partition.leader_epoch, partition.isr) == (2, 4, ())


def test_stop_replica_is_fenced_by_the_leader_epoch_except_during_deletion(zk):
    rm = manager(zk)
    rm.become_leader_or_follower(lair(1, 1, 3))
    response = rm.stop_replicas(stop(1, 3, delete=False))
    assert response.partition_errors == ((TP, Errors.FENCED_LEADER_EPOCH),) and not rm.partition(TP).stopped
    rm.stop_replicas(stop(1, 4, delete=False))
    assert rm.partition(TP).stopped and rm.partition(TP).leader == -1
    rm.stop_replicas(stop(1, -2, delete=True))
    assert rm.partition(TP) is None


def test_a_leader_writes_the_isr_conditionally_on_its_cached_zk_version(zk):
    zk.create_topic_partition_states({TP: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2)), 1)}, -1)
    rm = manager(zk)
    rm.become_leader_or_follower(lair(1, 1, 0, zk_version=0))
    assert rm.shrink_isr(TP, 2)
    assert zk.get_topic_partition_state(TP).leader_and_isr == LeaderAndIsr(1, 0, (1,), 1)
    assert rm.partition(TP).zk_version == 1
    # the controller writes the znode: the leader's next write fails and it keeps its ISR
    zk.update_leader_and_isr({TP: LeaderAndIsr(1, 1, (1,), 1)}, 1, -1)
    assert not rm.expand_isr(TP, 2)
    assert rm.partition(TP).isr == (1,)
    rm.maybe_propagate_isr_changes(force=True)
    assert zk.get_all_isr_change_notifications() != []


def test_a_leaders_write_whose_acknowledgement_was_lost_is_recognised_as_its_own(zk):
    server = MemoryZooKeeperServer()
    client = ControllerZkClient(server.connect())
    client.create_top_level_paths()
    client.create_topic_assignment("t", {TP: [1, 2]})
    client.create_topic_partition_states({TP: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2)), 1)}, -1)
    rm = manager(client)
    rm.become_leader_or_follower(lair(1, 1, 0))
    server.lose_next_ack(client.session_id)   # applied, answered CONNECTIONLOSS; the retry gets BADVERSION
    assert rm.shrink_isr(TP, 2)
    assert rm.partition(TP).isr == (1,) and rm.partition(TP).zk_version == 1


def test_kafka_apis_rejects_a_request_meant_for_an_older_incarnation():
    cluster = StepCluster.initial(ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1,
                                                                replication_factor=2)))
    cluster.scheduler.run_until_quiet()
    server = cluster.server(1)
    old_epoch = server.broker_epoch - 1
    before = abstract(cluster).brokers[1]
    response = server.apis.handle(LeaderAndIsrRequest(0, 99, old_epoch, ()))
    assert response.error is Errors.STALE_BROKER_EPOCH
    assert abstract(cluster).brokers[1] == before
    assert cluster.timeline.of_kind("fenced")[-1].detail.endswith("STALE_BROKER_EPOCH")
