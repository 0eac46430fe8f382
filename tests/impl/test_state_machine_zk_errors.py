"""ZooKeeper client errors in the state machines fail the partitions concerned, not the event.

Translations of the ZooKeeper-error cases of Kafka 2.6's
`core/src/test/scala/unit/kafka/controller/PartitionStateMachineTest.scala` (each test is named after
Kafka's, in snake_case), plus the same cases for the replica state machine's ISR shrink
(`ReplicaStateMachineTest.scala` has no ZooKeeper-error case in 2.6; those tests are ours and say so)
and a zombie controller on a real expired session of the embedded ZooKeeper (docs/model.md,
"Abstractions and omissions").

Kafka mocks `KafkaZkClient` to throw `ZooKeeperClientException`; here a `ControllerZkClient` over the
embedded ZooKeeper throws a `ZooKeeperError` from the one method under test, and the request batch
records whether `sendRequestsToBrokers` ran (EasyMock's `expect(...sendRequestsToBrokers(...))`).
"""

from __future__ import annotations

import pytest
from kcm.impl.controller_context import ControllerContext, PartitionAndReplica
from kcm.impl.controller_zk_client import ControllerZkClient
from kcm.impl.partition_state_machine import PartitionLeaderElectionStrategy, PartitionStateMachine
from kcm.impl.replica_state_machine import ReplicaStateMachine
from kcm.impl.request_batch import ControllerBrokerRequestBatch
from kcm.impl.requests import ApiKeys, LeaderAndIsrRequest, StopReplicaRequest
from kcm.impl.timeline import Timeline
from kcm.impl.zk.memory import MemoryZooKeeperServer
from kcm.impl.zk.protocol import NodeExistsError, ZooKeeperError
from kcm.impl.zk_data import Broker, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from kcm.model.election import LeaderAndIsr
from kcm.model.states import PartitionState as P
from kcm.model.states import ReplicaState as R
from kcm.model.variants import Flags

BROKER = 5
CONTROLLER_EPOCH = 50
PARTITION = TopicPartition("t", 0)
OFFLINE = PartitionLeaderElectionStrategy.OFFLINE


class FailingZkClient(ControllerZkClient):
    """A controller ZooKeeper client whose `failing` methods throw, as Kafka's mocks do."""

    def __init__(self, *args, failing=(), error: Exception | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.failing = set(failing)
        self.error = error or ZooKeeperError("test")
        self.calls: list[str] = []

    def create_topic_partition_states(self, states, expected_controller_epoch_zk_version):
        self.calls.append("create_topic_partition_states")
        if "create" in self.failing:
            raise self.error
        return super().create_topic_partition_states(states, expected_controller_epoch_zk_version)

    def get_topic_partition_states(self, partitions, watch=True):
        self.calls.append("get_topic_partition_states")
        if "get" in self.failing:
            raise self.error
        return super().get_topic_partition_states(partitions, watch)


class RecordingChannel:
    def __init__(self) -> None:
        self.sent: list = []

    def send_request(self, broker_id, request, callback=None) -> None:
        self.sent.append((broker_id, request))


class SpyBatch(ControllerBrokerRequestBatch):
    """Counts `sendRequestsToBrokers` calls."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.sends = 0

    def send_requests_to_brokers(self, controller_epoch: int) -> None:
        self.sends += 1
        super().send_requests_to_brokers(controller_epoch)


@pytest.fixture
def server():
    return MemoryZooKeeperServer()


def zk_client(server, **kwargs) -> FailingZkClient:
    client = FailingZkClient(server.connect(), **kwargs)
    client.create_top_level_paths()
    client.register_controller_and_increment_controller_epoch(BROKER)
    client.create_topic_assignment("t", {PARTITION: [BROKER]})
    return client


def context(replicas=(BROKER,), live=(BROKER,)) -> ControllerContext:
    ctx = ControllerContext()
    ctx.epoch, ctx.epoch_zk_version = CONTROLLER_EPOCH, 1
    ctx.set_live_brokers({Broker(b): 10 + b for b in live})
    ctx.set_all_topics({"t"})
    ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment(tuple(replicas)))
    return ctx


def partition_state_machine(ctx, zk):
    channel = RecordingChannel()
    batch = SpyBatch(BROKER, ctx, channel, lambda b, r: None, lambda: None)
    return PartitionStateMachine(BROKER, ctx, zk, batch, Timeline(), Flags()), batch, channel


def replica_state_machine(ctx, zk):
    channel = RecordingChannel()
    batch = SpyBatch(BROKER, ctx, channel, lambda b, r: None, lambda: None)
    return ReplicaStateMachine(BROKER, ctx, zk, batch, Timeline(), Flags()), batch, channel


# ---- PartitionStateMachineTest (kafka@2.6.x:core/src/test/scala/unit/kafka/controller/) ----------------


def test_new_partition_to_online_partition_transition(server):
    """The success case the error cases below depart from."""
    zk = zk_client(server)
    ctx = context()
    ctx.put_partition_state(PARTITION, P.NewPartition)
    machine, batch, channel = partition_state_machine(ctx, zk)
    machine.handle_state_changes([PARTITION], P.OnlinePartition, OFFLINE)
    assert ctx.partition_state(PARTITION) is P.OnlinePartition
    assert batch.sends == 1
    assert [type(r) for _, r in channel.sent if isinstance(r, LeaderAndIsrRequest)] == [LeaderAndIsrRequest]


def test_new_partition_to_online_partition_transition_zoo_keeper_client_exception_from_create_states(server):
    """`testNewPartitionToOnlinePartitionTransitionZooKeeperClientExceptionFromCreateStates`:
    `createTopicPartitionStatesRaw` throws; no LeaderAndIsr is added, the batch is still sent, the
    partition stays New."""
    zk = zk_client(server, failing={"create"})
    ctx = context()
    ctx.put_partition_state(PARTITION, P.NewPartition)
    machine, batch, channel = partition_state_machine(ctx, zk)
    assert machine.handle_state_changes([PARTITION], P.OnlinePartition, OFFLINE) == {}
    assert zk.calls == ["create_topic_partition_states"]
    assert batch.sends == 1
    assert channel.sent == []
    assert ctx.partition_state(PARTITION) is P.NewPartition
    assert PARTITION not in ctx.partition_leadership_info


def test_new_partition_to_online_partition_transition_error_code_from_create_states(server):
    """`testNewPartitionToOnlinePartitionTransitionErrorCodeFromCreateStates`: NODEEXISTS for the
    state znode (another controller created it): the partition stays New, the batch is sent."""
    zk = zk_client(server)
    other = ControllerZkClient(server.connect())
    other.create_topic_partition_states(
        {PARTITION: LeaderIsrAndControllerEpoch(LeaderAndIsr(BROKER, 0, (BROKER,), 0), CONTROLLER_EPOCH)}, 1)
    ctx = context()
    ctx.put_partition_state(PARTITION, P.NewPartition)
    machine, batch, channel = partition_state_machine(ctx, zk)
    machine.handle_state_changes([PARTITION], P.OnlinePartition, OFFLINE)
    assert batch.sends == 1
    assert channel.sent == []
    assert ctx.partition_state(PARTITION) is P.NewPartition


def offline_partition(ctx) -> None:
    ctx.put_partition_state(PARTITION, P.OfflinePartition)
    ctx.put_partition_leadership_info(
        PARTITION, LeaderIsrAndControllerEpoch(LeaderAndIsr(-1, 0, (BROKER,), 0), CONTROLLER_EPOCH))


def test_offline_partition_to_online_partition_transition_zoo_keeper_client_exception_from_state_lookup(server):
    """`testOfflinePartitionToOnlinePartitionTransitionZooKeeperClientExceptionFromStateLookup`:
    `getTopicPartitionStatesRaw` throws; the partition stays Offline, nothing is written, the batch is sent."""
    zk = zk_client(server, failing={"get"})
    ctx = context()
    offline_partition(ctx)
    machine, batch, channel = partition_state_machine(ctx, zk)
    assert machine.handle_state_changes([PARTITION], P.OnlinePartition, OFFLINE) == {}
    assert zk.calls == ["get_topic_partition_states"]
    assert batch.sends == 1
    assert channel.sent == []
    assert ctx.partition_state(PARTITION) is P.OfflinePartition


def test_offline_partition_to_online_partition_transition_error_code_from_state_lookup(server):
    """`testOfflinePartitionToOnlinePartitionTransitionErrorCodeFromStateLookup`: NONODE for the
    state znode; the partition stays Offline, the batch is sent."""
    zk = zk_client(server)
    ctx = context()
    offline_partition(ctx)
    machine, batch, channel = partition_state_machine(ctx, zk)
    assert machine.handle_state_changes([PARTITION], P.OnlinePartition, OFFLINE) == {}
    assert batch.sends == 1
    assert channel.sent == []
    assert ctx.partition_state(PARTITION) is P.OfflinePartition


def test_a_failed_create_does_not_stop_the_other_partitions_of_the_handler(server):
    """Ours: the handler goes on after the failed partitions; the requests it adds afterwards
    (here an UpdateMetadata from a second state change) are still sent."""
    zk = zk_client(server, failing={"create"})
    ctx = context()
    ctx.put_partition_state(PARTITION, P.NewPartition)
    machine, batch, channel = partition_state_machine(ctx, zk)
    machine.handle_state_changes([PARTITION], P.OnlinePartition, OFFLINE)
    machine.handle_state_changes([PARTITION], P.OfflinePartition)
    assert ctx.partition_state(PARTITION) is P.OfflinePartition
    assert batch.sends == 2


# ---- the replica state machine's ISR shrink (ours: ReplicaStateMachineTest has no ZK-error case) -----


def online_replica_with_leader(ctx, zk) -> PartitionAndReplica:
    other = BROKER + 1
    ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER, other)))
    zk.create_topic_partition_states(
        {PARTITION: LeaderIsrAndControllerEpoch(LeaderAndIsr(BROKER, 0, (BROKER, other), 0), CONTROLLER_EPOCH)}, 1)
    ctx.put_partition_leadership_info(
        PARTITION, LeaderIsrAndControllerEpoch(LeaderAndIsr(BROKER, 0, (BROKER, other), 0), CONTROLLER_EPOCH))
    replica = PartitionAndReplica(PARTITION, BROKER)
    ctx.put_replica_state(replica, R.OnlineReplica)
    return replica


def test_online_replica_to_offline_replica_transition(server):
    """`testOnlineReplicaToOfflineReplicaTransition`: StopReplica to the replica, its removal from
    the ISR written (leader -1, epoch + 1), LeaderAndIsr to the other replica."""
    zk = zk_client(server)
    ctx = context(live=(BROKER, BROKER + 1))
    replica = online_replica_with_leader(ctx, zk)
    machine, batch, channel = replica_state_machine(ctx, zk)
    machine.handle_state_changes([replica], R.OfflineReplica)
    lai = zk.get_topic_partition_state(PARTITION).leader_and_isr
    assert (lai.leader, lai.leader_epoch, lai.isr) == (-1, 1, (BROKER + 1,))
    assert ctx.partition_leadership_info[PARTITION].leader_and_isr == lai
    assert ctx.replica_state(replica) is R.OfflineReplica
    assert [(b, r.api_key) for b, r in channel.sent if r.api_key is not ApiKeys.UPDATE_METADATA] == [
        (BROKER + 1, ApiKeys.LEADER_AND_ISR), (BROKER, ApiKeys.STOP_REPLICA)]


def test_online_replica_to_offline_replica_transition_zoo_keeper_client_exception_from_state_lookup(server):
    """Ours, after kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala
    `getTopicPartitionStatesFromZk` (lines 387-392): the read throws, the partition fails
    (`logFailedStateChange`), the replica stays Online, the cache is untouched, and the StopReplica
    already in the batch is still sent."""
    zk = zk_client(server, failing={"get"})
    ctx = context(live=(BROKER, BROKER + 1))
    replica = online_replica_with_leader(ctx, zk)
    before = ctx.partition_leadership_info[PARTITION]
    machine, batch, channel = replica_state_machine(ctx, zk)
    machine.handle_state_changes([replica], R.OfflineReplica)
    assert ctx.replica_state(replica) is R.OnlineReplica
    assert ctx.partition_leadership_info[PARTITION] == before
    assert zk.get_topic_partition_state(PARTITION).leader_and_isr.isr == (BROKER, BROKER + 1)
    assert batch.sends == 1
    assert [(b, r.api_key) for b, r in channel.sent] == [(BROKER, ApiKeys.STOP_REPLICA)]


# ---- a zombie controller ---------------------------------------------------------------------------


def test_a_zombie_fails_the_partitions_and_still_sends_the_stop_replica(server):
    """Ours: the controller's session expired and it has not noticed. Kafka 2.6 fails each
    partition at its first ZooKeeper call (the reads answer SESSIONEXPIRED, the fenced writes throw
    it and `updateLeaderAndIsr` turns it into a per-partition failure) and still sends what needed no
    ZooKeeper: the StopReplica of the offline replica. Elections write nothing and send nothing."""
    zk = zk_client(server)
    ctx = context(live=(BROKER, BROKER + 1))
    replica = online_replica_with_leader(ctx, zk)
    server.expire_session(zk.session_id, notify=False)
    replicas, rbatch, rchannel = replica_state_machine(ctx, zk)
    replicas.handle_state_changes([replica], R.OfflineReplica)
    assert ctx.replica_state(replica) is R.OnlineReplica
    assert rbatch.sends == 1
    assert [(b, type(r)) for b, r in rchannel.sent] == [(BROKER, StopReplicaRequest)]

    partitions, pbatch, pchannel = partition_state_machine(ctx, zk)
    ctx.put_partition_state(PARTITION, P.OfflinePartition)
    assert partitions.handle_state_changes([PARTITION], P.OnlinePartition, OFFLINE) == {}
    assert ctx.partition_state(PARTITION) is P.OfflinePartition
    assert pbatch.sends == 1 and pchannel.sent == []

    new = TopicPartition("t", 1)
    ctx.update_partition_full_replica_assignment(new, ReplicaAssignment((BROKER,)))
    ctx.put_partition_state(new, P.NewPartition)
    assert partitions.handle_state_changes([new], P.OnlinePartition, OFFLINE) == {}
    assert ctx.partition_state(new) is P.NewPartition


def test_a_node_exists_error_is_a_per_partition_failure_not_an_exception(server):
    """Ours: an error code from the create (NODEEXISTS) raised by the client instead of returned
    still fails only the partition."""
    zk = zk_client(server, failing={"create"}, error=NodeExistsError("test"))
    ctx = context()
    ctx.put_partition_state(PARTITION, P.NewPartition)
    machine, batch, _ = partition_state_machine(ctx, zk)
    assert machine.handle_state_changes([PARTITION], P.OnlinePartition, OFFLINE) == {}
    assert ctx.partition_state(PARTITION) is P.NewPartition and batch.sends == 1
