"""Unit tests of the controller's parts: the request batch, the channel manager, the event manager
and the two state machines, each against an embedded ZooKeeper and recorded sends."""

from __future__ import annotations

import threading

import pytest
from kcm.impl import controller_events as ev
from kcm.impl.channel_manager import ControllerChannelManager
from kcm.impl.controller_context import ControllerContext, PartitionAndReplica
from kcm.impl.controller_event_manager import ControllerEventManager
from kcm.impl.controller_zk_client import ControllerZkClient
from kcm.impl.kafka_zk_client import ControllerMovedException
from kcm.impl.network import BrokerUnavailable, Network
from kcm.impl.partition_state_machine import PartitionLeaderElectionStrategy, PartitionStateMachine
from kcm.impl.replica_state_machine import ReplicaStateMachine
from kcm.impl.request_batch import ControllerBrokerRequestBatch, IllegalStateException
from kcm.impl.requests import (
    ApiKeys,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from kcm.impl.timeline import Timeline
from kcm.impl.zk.memory import MemoryZooKeeperServer
from kcm.impl.zk_data import Broker, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from kcm.model.election import LeaderAndIsr
from kcm.model.states import PartitionState as P
from kcm.model.states import ReplicaState as R
from kcm.model.variants import Flags

KAFKA_2_6 = Flags()  # the default rules; a module constant, so that no default argument calls it

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)


class RecordingChannel:
    """Stands for the channel manager: records (broker, request, callback) in send order."""

    def __init__(self) -> None:
        self.sent: list = []

    def send_request(self, broker_id, request, callback=None) -> None:
        self.sent.append((broker_id, request, callback))

    def kinds(self, broker_id=None) -> list:
        return [r.api_key for b, r, _ in self.sent if broker_id is None or b == broker_id]


def context(live=(0, 1, 2), epochs=None) -> ControllerContext:
    ctx = ControllerContext()
    ctx.epoch, ctx.epoch_zk_version = 1, 1
    ctx.set_live_brokers({Broker(b): (epochs or {}).get(b, 10 + b) for b in live})
    ctx.set_all_topics({"t"})
    ctx.update_partition_full_replica_assignment(T0, ReplicaAssignment((0, 1, 2)))
    ctx.update_partition_full_replica_assignment(T1, ReplicaAssignment((1, 2, 0)))
    return ctx


def batch_for(ctx, channel=None, acted=None) -> ControllerBrokerRequestBatch:
    return ControllerBrokerRequestBatch(0, ctx, channel or RecordingChannel(), lambda b, r: None,
                                        acted or (lambda: None))


def info(leader, epoch, isr, zk_version=0, controller_epoch=1) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, epoch, tuple(isr), zk_version), controller_epoch)


# ---- ControllerBrokerRequestBatch ----------------------------------------------------------------


def test_new_batch_raises_when_the_previous_batch_was_not_sent():
    ctx = context()
    batch = batch_for(ctx)
    batch.new_batch()
    batch.add_stop_replica_request_for_brokers([1], T0, delete_partition=False)
    with pytest.raises(IllegalStateException, match="StopReplica"):
        batch.new_batch()
    batch.clear()
    batch.new_batch()


def test_a_batch_sends_leader_and_isr_then_update_metadata_then_stop_replica():
    ctx = context()
    ctx.put_partition_leadership_info(T0, info(0, 3, (0, 1, 2)))
    channel = RecordingChannel()
    batch = batch_for(ctx, channel)
    batch.new_batch()
    batch.add_stop_replica_request_for_brokers([1], T1, delete_partition=False)
    batch.add_leader_and_isr_request_for_brokers([1, 2], T0, ctx.partition_leadership_info[T0],
                                                 ctx.partition_full_replica_assignment(T0), is_new=False)
    batch.send_requests_to_brokers(1)
    assert channel.kinds(1) == [ApiKeys.LEADER_AND_ISR, ApiKeys.UPDATE_METADATA, ApiKeys.STOP_REPLICA]
    # LeaderAndIsr also adds UpdateMetadata for the partition to every live broker
    assert channel.kinds(0) == [ApiKeys.UPDATE_METADATA]
    assert channel.kinds(2) == [ApiKeys.LEADER_AND_ISR, ApiKeys.UPDATE_METADATA]
    lair = channel.sent[0][1]
    assert isinstance(lair, LeaderAndIsrRequest) and (lair.controller_epoch, lair.broker_epoch) == (1, 11)
    assert lair.partition_states[0].leader_epoch == 3
    assert batch.is_empty()


def test_no_leader_and_brokers_that_are_not_live_receive_nothing():
    ctx = context(live=(0, 1))
    ctx.put_partition_leadership_info(T0, info(0, 1, (0,)))
    channel = RecordingChannel()
    batch = batch_for(ctx, channel)
    batch.new_batch()
    batch.add_leader_and_isr_request_for_brokers([-1, 2], T0, ctx.partition_leadership_info[T0],
                                                 ctx.partition_full_replica_assignment(T0), is_new=False)
    batch.send_requests_to_brokers(1)
    assert {b for b, _, _ in channel.sent} == {0, 1}
    assert all(r.api_key is ApiKeys.UPDATE_METADATA for _, r, _ in channel.sent)


def test_is_new_sticks_and_a_topic_being_deleted_is_stopped_at_epoch_minus_2():
    ctx = context()
    ctx.put_partition_leadership_info(T0, info(0, 4, (0, 1)))
    channel = RecordingChannel()
    batch = batch_for(ctx, channel)
    batch.new_batch()
    assignment = ctx.partition_full_replica_assignment(T0)
    batch.add_leader_and_isr_request_for_brokers([1], T0, ctx.partition_leadership_info[T0], assignment, is_new=True)
    batch.add_leader_and_isr_request_for_brokers([1], T0, ctx.partition_leadership_info[T0], assignment, is_new=False)
    batch.add_stop_replica_request_for_brokers([2], T0, delete_partition=False)
    ctx.queue_topic_deletion({"t"})
    batch.add_stop_replica_request_for_brokers([2], T1, delete_partition=True)
    batch.send_requests_to_brokers(1)
    lair = next(r for b, r, _ in channel.sent if isinstance(r, LeaderAndIsrRequest))
    assert lair.partition_states[0].is_new
    stop = next(r for b, r, _ in channel.sent if isinstance(r, StopReplicaRequest))
    assert [(s.topic_partition, s.leader_epoch, s.delete_partition) for s in stop.partition_states] == [
        (T0, 4, False), (T1, -2, True)]


def test_sending_while_inactive_is_noticed():
    noticed = []
    ctx = context()
    batch = batch_for(ctx, acted=lambda: noticed.append(True))
    batch.new_batch()
    batch.send_requests_to_brokers(1)   # empty: nothing to notice
    batch.add_update_metadata_request_for_brokers([1])
    batch.send_requests_to_brokers(1)
    assert noticed == [True]


# ---- ControllerChannelManager ----------------------------------------------------------------------


def update_metadata(partition: int, epoch=1, broker_epoch=5, live=(0, 1)) -> UpdateMetadataRequest:
    state = UpdateMetadataPartitionState(TopicPartition("t", partition), epoch, 0, 1, (0,), 0, (0,))
    return UpdateMetadataRequest(0, epoch, broker_epoch, (state,), live)


def stop_replica(epoch=1) -> StopReplicaRequest:
    return StopReplicaRequest(0, epoch, 5, ())


def stepped_channel(network=None) -> ControllerChannelManager:
    channel = ControllerChannelManager(0, network or Network(), Timeline(), threaded=False)
    channel.startup([1, 2])
    return channel


def test_queues_are_fifo_per_broker_and_deliver_one_runs_the_callback():
    network = Network()
    received, answered = [], []
    network.register(1, lambda request: received.append(request) or "ok")
    channel = stepped_channel(network)
    first, second = stop_replica(1), stop_replica(2)
    channel.send_request(1, first, answered.append)
    channel.send_request(1, second)
    channel.send_request(2, stop_replica(3))
    assert channel.queued_requests(1) == (first, second)
    assert channel.deliver_one(1) == first
    assert received == [first] and answered == ["ok"]
    assert channel.queued_requests(1) == (second,)


def test_removing_a_broker_or_shutting_down_drops_what_is_queued():
    channel = stepped_channel()
    channel.send_request(1, stop_replica())
    channel.send_request(2, stop_replica())
    channel.remove_broker(1)
    assert channel.queued_requests(1) == () and channel.brokers() == {2}
    channel.send_request(1, stop_replica())   # no queue for broker 1: dropped, as Kafka does
    assert channel.queued_requests(1) == ()
    channel.shutdown()
    assert channel.brokers() == frozenset() and channel.queued_requests(2) == ()


def test_adjacent_update_metadata_with_the_same_stamps_are_merged():
    channel = stepped_channel()
    channel.send_request(1, update_metadata(0))
    channel.send_request(1, update_metadata(1, live=(0, 1, 2)))
    (merged,) = channel.queued_requests(1)
    assert [s.topic_partition.partition for s in merged.partition_states] == [0, 1]
    assert merged.live_brokers == (0, 1, 2)
    channel.send_request(1, update_metadata(2, epoch=2))   # another controller epoch: not merged
    channel.send_request(1, stop_replica())
    channel.send_request(1, update_metadata(0))            # not adjacent to an UpdateMetadata
    assert [r.api_key for r in channel.queued_requests(1)] == [
        ApiKeys.UPDATE_METADATA, ApiKeys.UPDATE_METADATA, ApiKeys.STOP_REPLICA, ApiKeys.UPDATE_METADATA]


def test_a_send_thread_resends_the_same_request_until_it_is_answered():
    attempts = []
    done = threading.Event()

    def flaky(request):
        attempts.append(request)
        if len(attempts) < 3:
            raise BrokerUnavailable("not yet")
        return "ok"

    network = Network()
    network.register(1, flaky)
    channel = ControllerChannelManager(0, network, Timeline(), threaded=True, backoff_ms=1)
    channel.startup([1])
    request = stop_replica()
    try:
        channel.send_request(1, request, lambda response: done.set())
        assert done.wait(10)
    finally:
        channel.shutdown()
    assert attempts == [request, request, request]


# ---- ControllerEventManager ------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.processed, self.preempted = [], []

    def process(self, event) -> None:
        self.processed.append(event)

    def preempt(self, event) -> None:
        self.preempted.append(event)


def test_events_are_processed_one_at_a_time_in_fifo_order():
    recorder = Recorder()
    manager = ControllerEventManager(0, recorder)
    events = [ev.Startup(), ev.BrokerChange(), ev.TopicChange()]
    for event in events:
        manager.put(event)
    assert manager.queued_events() == tuple(events)
    assert [manager.process_one() for _ in events] == events
    assert recorder.processed == events and manager.is_idle()


def test_clear_and_put_preempts_the_queued_events_and_leaves_only_expire():
    recorder = Recorder()
    manager = ControllerEventManager(0, recorder)
    change, shutdown = ev.BrokerChange(), ev.ControlledShutdown(2, 7, callback=lambda result: None)
    manager.put(change)
    manager.put(shutdown)
    manager.clear_and_put(ev.Expire())
    assert recorder.preempted == [change, shutdown] and recorder.processed == []
    assert [type(e) for e in manager.queued_events()] == [ev.Expire]


def test_a_preempted_controlled_shutdown_is_answered_controller_moved():
    from kcm.impl.kafka_controller import KafkaController

    answers = []
    event = ev.ControlledShutdown(2, 7, callback=answers.append)
    KafkaController.preempt(None, event)   # preempt uses no controller state
    assert len(answers) == 1 and isinstance(answers[0], ControllerMovedException)


def test_await_processing_returns_once_the_event_thread_has_started_the_event():
    started, release = threading.Event(), threading.Event()

    class Blocking(Recorder):
        def process(self, event) -> None:
            if isinstance(event, ev.Startup):
                started.set()
                release.wait(10)
            super().process(event)

    manager = ControllerEventManager(0, Blocking())
    manager.start()
    try:
        manager.put(ev.Startup())
        assert started.wait(10)
        queued = manager.clear_and_put(ev.Expire())
        release.set()
        assert queued.await_processing(10)
        assert manager.wait_idle(10)
    finally:
        manager.close()


# ---- the state machines ------------------------------------------------------------------------------


@pytest.fixture
def zk():
    server = MemoryZooKeeperServer()
    client = ControllerZkClient(server.connect())
    client.create_top_level_paths()
    client.register_controller_and_increment_controller_epoch(0)   # epoch 1, zkVersion 1
    client.create_topic_assignment("t", {T0: [0, 1, 2], T1: [1, 2, 0]})
    return client


def machines(zk, ctx, flags=KAFKA_2_6):
    channel = RecordingChannel()
    timeline = Timeline()
    replicas = ReplicaStateMachine(0, ctx, zk, batch_for(ctx, channel), timeline, flags)
    partitions = PartitionStateMachine(0, ctx, zk, batch_for(ctx, channel), timeline, flags)
    return replicas, partitions, channel


def test_an_invalid_replica_transition_is_logged_counted_and_skipped(zk):
    ctx = context()
    replicas, _, channel = machines(zk, ctx)
    replica = PartitionAndReplica(T0, 1)
    replicas.handle_state_changes([replica], R.ReplicaDeletionStarted)   # NonExistent -> DeletionStarted
    assert ctx.replica_state(replica) is R.NonExistentReplica
    assert replicas.invalid_transitions == {("NonExistentReplica", "ReplicaDeletionStarted"): 1}
    assert channel.sent == []


def test_new_partitions_go_online_with_the_first_live_replica_as_leader(zk):
    ctx = context(live=(1, 2))
    _, partitions, channel = machines(zk, ctx)
    partitions.handle_state_changes([T0, T1], P.NewPartition)
    partitions.handle_state_changes([T0, T1], P.OnlinePartition, PartitionLeaderElectionStrategy.OFFLINE)
    assert ctx.partition_state(T0) is P.OnlinePartition
    state = zk.get_topic_partition_state(T0)
    assert (state.leader_and_isr.leader, state.leader_and_isr.isr, state.controller_epoch) == (1, (1, 2), 1)
    lair = [r for b, r, _ in channel.sent if isinstance(r, LeaderAndIsrRequest)]
    assert {b for b, r, _ in channel.sent if isinstance(r, LeaderAndIsrRequest)} == {1, 2}
    assert all(s.is_new for r in lair for s in r.partition_states)
    assert partitions.invalid_transitions == {}


def test_an_offline_election_picks_the_first_live_isr_member_in_assignment_order(zk):
    ctx = context(live=(0, 1, 2))
    _, partitions, _ = machines(zk, ctx)
    partitions.handle_state_changes([T0], P.NewPartition)
    partitions.handle_state_changes([T0], P.OnlinePartition, PartitionLeaderElectionStrategy.OFFLINE)
    ctx.remove_live_brokers([0])
    partitions.handle_state_changes([T0], P.OfflinePartition)
    elected = partitions.handle_state_changes([T0], P.OnlinePartition, PartitionLeaderElectionStrategy.OFFLINE)
    assert elected[T0].leader == 1 and elected[T0].leader_epoch == 1 and tuple(elected[T0].isr) == (1, 2)
    assert zk.get_topic_partition_state(T0).leader_and_isr.zk_version == 1


def test_a_replica_going_offline_leaves_the_isr_but_a_sole_member_stays(zk):
    ctx = context()
    replicas, partitions, channel = machines(zk, ctx)
    partitions.handle_state_changes([T0], P.NewPartition)
    partitions.handle_state_changes([T0], P.OnlinePartition, PartitionLeaderElectionStrategy.OFFLINE)
    for b in (0, 1, 2):
        ctx.put_replica_state(PartitionAndReplica(T0, b), R.OnlineReplica)
    channel.sent.clear()
    replicas.handle_state_changes([PartitionAndReplica(T0, 1)], R.OfflineReplica)
    lai = zk.get_topic_partition_state(T0).leader_and_isr
    assert (lai.leader, lai.leader_epoch, lai.isr) == (0, 1, (0, 2))
    assert channel.kinds(1) == [ApiKeys.UPDATE_METADATA, ApiKeys.STOP_REPLICA]
    assert ApiKeys.LEADER_AND_ISR in channel.kinds(0) and ApiKeys.LEADER_AND_ISR in channel.kinds(2)
    replicas.handle_state_changes([PartitionAndReplica(T0, 2)], R.OfflineReplica)
    replicas.handle_state_changes([PartitionAndReplica(T0, 0)], R.OfflineReplica)   # the leader, last member
    lai = zk.get_topic_partition_state(T0).leader_and_isr
    assert (lai.leader, lai.isr) == (-1, (0,))


def test_variant_v6_empties_the_isr(zk):
    ctx = context()
    replicas, partitions, _ = machines(zk, ctx, Flags(isr_shrink_empties=True))
    partitions.handle_state_changes([T0], P.NewPartition)
    partitions.handle_state_changes([T0], P.OnlinePartition, PartitionLeaderElectionStrategy.OFFLINE)
    for b in (0, 1, 2):
        ctx.put_replica_state(PartitionAndReplica(T0, b), R.OnlineReplica)
        replicas.handle_state_changes([PartitionAndReplica(T0, b)], R.OfflineReplica)
    assert zk.get_topic_partition_state(T0).leader_and_isr.isr == ()


def test_a_controller_whose_epoch_moved_cannot_write(zk):
    ctx = context()
    _, partitions, channel = machines(zk, ctx)
    zk.zookeeper.delete("/controller")
    ControllerZkClient(zk.zookeeper).register_controller_and_increment_controller_epoch(1)   # epoch 2
    partitions.handle_state_changes([T0], P.NewPartition)
    with pytest.raises(ControllerMovedException):
        partitions.handle_state_changes([T0], P.OnlinePartition, PartitionLeaderElectionStrategy.OFFLINE)
    assert zk.get_topic_partition_state(T0) is None


@pytest.mark.parametrize(("field", "value"), [("controlled_shutdown_enable", False),
                                              ("isr_change_propagation_ms", 100)])
def test_a_kafka_config_field_nothing_reads_is_refused(field, value):
    from kcm.impl.kafka_config import KafkaConfig

    with pytest.raises(ValueError, match=f"KafkaConfig field `{field}` does nothing yet"):
        KafkaConfig(**{field: value})
    KafkaConfig(**{field: getattr(KafkaConfig(), field)})   # the default, which is what runs, is fine
