"""KafkaZkClient on both backends: the controller election multi, the controller-epoch fence, broker
epochs, partition states, the admin znodes, ISR change notifications, watch handlers, and the
JSON formats Kafka 2.6 writes. The lost-acknowledgement cases need the embedded server's fault."""

from __future__ import annotations

import json

import pytest
from kcm.impl.kafka_zk_client import ControllerMovedException, KafkaZkClient
from kcm.impl.zk.handlers import StateChangeHandler, ZNodeChangeHandler, ZNodeChildChangeHandler
from kcm.impl.zk.protocol import NodeExistsError, ZooKeeperError
from kcm.impl.zk_data import (
    Broker,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
    TopicPartitionStateZNode,
    TopicZNode,
)
from kcm.model.election import LeaderAndIsr

NOW_MS = 1600000000000
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def kafka_client(backend, **kwargs) -> KafkaZkClient:
    return KafkaZkClient(backend.connect(), clock_ms=lambda: NOW_MS, **kwargs)


def state(leader: int, leader_epoch: int, isr: tuple[int, ...], controller_epoch: int) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, leader_epoch, isr), controller_epoch)


def raw(client: KafkaZkClient, path: str) -> bytes:
    return client.zookeeper.get_data(path)[0]


@pytest.fixture
def topic(backend) -> KafkaZkClient:
    """An admin client that has created topic t with two partitions."""
    admin = kafka_client(backend)
    admin.create_top_level_paths()
    admin.create_topic_assignment("t", {T0: [1, 2], T1: [2, 1]})
    return admin


# ---- election and the epoch fence ---------------------------------------------------------------


def test_the_first_controller_gets_epoch_1_and_a_contender_is_told_the_controller_moved(backend):
    first, second = kafka_client(backend), kafka_client(backend)
    assert first.get_controller_epoch() is None
    assert first.register_controller_and_increment_controller_epoch(1) == (1, 1)
    with pytest.raises(ControllerMovedException):
        second.register_controller_and_increment_controller_epoch(2)
    assert (second.get_controller_id(), second.get_controller_epoch()) == (1, (1, 1))
    assert raw(second, "/controller") == b'{"version":1,"brokerid":1,"timestamp":"1600000000000"}'
    assert raw(second, "/controller_epoch") == b"1"
    assert second.zookeeper.exists("/controller").ephemeral_owner == first.session_id


def test_the_next_controller_after_an_expiry_gets_the_next_epoch(backend):
    first, second = kafka_client(backend), kafka_client(backend)
    first.register_controller_and_increment_controller_epoch(1)
    backend.expire(first.zookeeper)
    assert second.get_controller_id() is None
    assert second.register_controller_and_increment_controller_epoch(2) == (2, 2)
    assert second.get_controller_id() == 2


def test_the_epoch_fence_rejects_a_deposed_controllers_writes(backend, topic):
    zombie, successor = kafka_client(backend), kafka_client(backend)
    _, zombie_version = zombie.register_controller_and_increment_controller_epoch(1)
    assert zombie.create_topic_partition_states({T0: state(1, 0, (1, 2), 1)}, zombie_version) == {T0: None}
    topic.zookeeper.delete("/controller")        # the controller moves while the zombie's session lives on
    _, successor_version = successor.register_controller_and_increment_controller_epoch(2)
    before = topic.zookeeper.get_data("/brokers/topics/t/partitions/0/state")

    with pytest.raises(ControllerMovedException):
        zombie.update_leader_and_isr({T0: LeaderAndIsr(2, 1, (2,), zk_version=0)}, 1, zombie_version)
    with pytest.raises(ControllerMovedException):
        zombie.create_topic_partition_states({T1: state(2, 0, (2, 1), 1)}, zombie_version)
    with pytest.raises(ControllerMovedException):
        zombie.set_topic_assignment("t", {T0: ReplicaAssignment((3,))}, zombie_version)
    with pytest.raises(ControllerMovedException):
        zombie.delete_controller(zombie_version)

    assert topic.zookeeper.get_data("/brokers/topics/t/partitions/0/state") == before
    assert topic.get_topic_partition_state(T1) is None
    assert topic.get_replica_assignment_for_topics(["t"]) == {T0: [1, 2], T1: [2, 1]}
    assert topic.get_controller_id() == 2
    result = successor.update_leader_and_isr({T0: LeaderAndIsr(2, 1, (2,), zk_version=0)}, 2, successor_version)
    assert result.finished_partitions == {T0: LeaderAndIsr(2, 1, (2,), 1)}


def test_an_election_whose_acknowledgement_was_lost_is_recognised_as_won(memory_backend):
    client = kafka_client(memory_backend)
    client.register_controller_and_increment_controller_epoch(1)       # epoch 1 exists
    memory_backend.expire(client.zookeeper)
    winner = kafka_client(memory_backend)
    memory_backend.server.lose_next_ack(winner.session_id)
    # The multi is applied, the reply lost, the retry hits NODEEXISTS: checkControllerAndEpoch says ours.
    assert winner.register_controller_and_increment_controller_epoch(2) == (2, 2)


def test_a_fenced_write_whose_acknowledgement_was_lost_comes_back_as_a_retry(memory_backend):
    admin = kafka_client(memory_backend)
    admin.create_top_level_paths()
    admin.create_topic_assignment("t", {T0: [1, 2]})
    controller = kafka_client(memory_backend)
    _, version = controller.register_controller_and_increment_controller_epoch(1)
    controller.create_topic_partition_states({T0: state(1, 0, (1, 2), 1)}, version)
    memory_backend.server.lose_next_ack(controller.session_id)
    result = controller.update_leader_and_isr({T0: LeaderAndIsr(2, 1, (2,), zk_version=0)}, 1, version)
    # As in Kafka: the write landed, the resend hit BADVERSION, the partition goes to the retry list.
    assert (result.finished_partitions, result.partitions_to_retry) == ({}, (T0,))
    assert admin.get_topic_partition_state(T0).leader_and_isr == LeaderAndIsr(2, 1, (2,), 1)


# ---- brokers ------------------------------------------------------------------------------------


def test_broker_epochs_are_registration_czxids(backend):
    admin = kafka_client(backend)
    admin.create_top_level_paths()
    one, two = kafka_client(backend), kafka_client(backend)
    epoch_one = one.register_broker(Broker(1, "h1", 9092))
    epoch_two = two.register_broker(Broker(2, "h2", 9093, rack="r2"))
    assert epoch_one < epoch_two
    assert admin.get_all_broker_and_epochs_in_cluster() == {
        Broker(1, "h1", 9092): epoch_one, Broker(2, "h2", 9093, "r2"): epoch_two}
    assert one.register_broker(Broker(1, "h1", 9092)) == epoch_one      # our own znode: same epoch
    with pytest.raises(NodeExistsError):
        two.register_broker(Broker(1, "h1", 9092))                       # someone else's
    backend.expire(one.zookeeper)
    assert admin.get_sorted_broker_list() == [2]
    again = kafka_client(backend)
    assert again.register_broker(Broker(1, "h1", 9092)) > epoch_two      # a bounce is a new epoch


def test_a_broker_registration_whose_acknowledgement_was_lost_keeps_its_epoch(memory_backend):
    broker = kafka_client(memory_backend)
    broker.create_top_level_paths()
    memory_backend.server.lose_next_ack(broker.session_id)
    epoch = broker.register_broker(Broker(1))
    assert broker.zookeeper.exists("/brokers/ids/1").czxid == epoch


# ---- partition states, admin znodes, notifications ----------------------------------------------


def test_partition_states_are_created_once_and_updated_conditionally(backend, topic):
    controller = kafka_client(backend)
    _, version = controller.register_controller_and_increment_controller_epoch(1)
    states = {T0: state(1, 0, (1, 2), 1), T1: state(2, 0, (2, 1), 1)}
    assert controller.create_topic_partition_states(states, version) == {T0: None, T1: None}
    again = controller.create_topic_partition_states(states, version)
    assert all(isinstance(error, NodeExistsError) for error in again.values())
    assert controller.get_topic_partition_states([T0, T1]) == states

    # A partition leader shrinks the ISR with its own conditional write (≤2.6) ...
    shrunk = TopicPartitionStateZNode.encode(state(1, 0, (1,), 1))
    assert topic.conditional_update_path("/brokers/topics/t/partitions/0/state", shrunk, 0) == (True, 1)
    assert topic.conditional_update_path("/brokers/topics/t/partitions/0/state", shrunk, 0) == (False, -2)
    # ... so the controller's write on the old zkVersion must be retried; T1's goes through.
    result = controller.update_leader_and_isr(
        {T0: LeaderAndIsr(2, 1, (2,), zk_version=0), T1: LeaderAndIsr(1, 1, (1,), zk_version=0)}, 1, version)
    assert result.partitions_to_retry == (T0,)
    assert result.finished_partitions == {T1: LeaderAndIsr(1, 1, (1,), 1)}
    assert controller.get_topic_partition_state(T0) == LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1,), 1), 1)


def test_admin_requests_and_the_controllers_fenced_cleanup(backend, topic):
    controller = kafka_client(backend)
    _, version = controller.register_controller_and_increment_controller_epoch(1)
    controller.create_topic_partition_states({T0: state(1, 0, (1, 2), 1)}, version)

    topic.create_partition_reassignment({T0: [2, 3]})
    topic.create_preferred_replica_election({T1, T0})
    topic.create_delete_topic_path("t")
    assert controller.reassign_partitions_in_progress()
    assert controller.get_partition_reassignment() == {T0: [2, 3]}
    assert controller.get_preferred_replica_election() == {T0, T1}
    assert controller.get_topic_deletions() == ["t"] and controller.is_topic_marked_for_deletion("t")

    controller.delete_partition_reassignment(version)
    controller.delete_preferred_replica_election(version)
    controller.delete_topic_znode("t", version)
    controller.delete_topic_deletions(["t"], version)
    assert not controller.reassign_partitions_in_progress()
    assert controller.get_preferred_replica_election() == set()
    assert controller.get_all_topics_in_cluster() == set()
    assert controller.get_topic_deletions() == []


def test_isr_change_notifications_are_sequential_and_deleted_by_the_controller(backend, topic):
    controller = kafka_client(backend)
    _, version = controller.register_controller_and_increment_controller_epoch(1)
    leader = kafka_client(backend)
    assert leader.propagate_isr_changes({T0}) == "/isr_change_notification/isr_change_0000000000"
    assert leader.propagate_isr_changes({T1, T0}) == "/isr_change_notification/isr_change_0000000001"
    sequence_numbers = controller.get_all_isr_change_notifications()
    assert sequence_numbers == ["0000000000", "0000000001"]
    assert controller.get_partitions_from_isr_change_notifications(sequence_numbers) == [T0, T0, T1]
    controller.delete_isr_change_notifications(version)
    assert controller.get_all_isr_change_notifications() == []


def test_the_controller_epoch_check_needs_the_epoch_znode(backend, topic):
    # A fence on a missing /controller_epoch is a failure of its own, not the op's NONODE.
    with pytest.raises(ZooKeeperError) as failed:
        topic.delete_isr_change_notifications(0, ["0000000000"])
    assert failed.value.path == "/controller_epoch"


# ---- handlers -----------------------------------------------------------------------------------


class Handler(ZNodeChangeHandler, ZNodeChildChangeHandler):
    def __init__(self, path: str, calls):
        self.path = path
        self.calls = calls

    def handle_creation(self) -> None:
        self.calls(("created", self.path))

    def handle_deletion(self) -> None:
        self.calls(("deleted", self.path))

    def handle_data_change(self) -> None:
        self.calls(("changed", self.path))

    def handle_child_change(self) -> None:
        self.calls(("children", self.path))


def test_reads_arm_watches_for_registered_handlers(backend, make_recorder):
    calls = make_recorder()
    observer, candidate = kafka_client(backend), kafka_client(backend)
    observer.create_top_level_paths()
    assert observer.register_znode_change_handler_and_check_existence(Handler("/controller", calls)) is False
    observer.register_znode_child_change_handler(Handler("/brokers/ids", calls))
    assert observer.get_all_broker_and_epochs_in_cluster() == {}      # arms the child watch

    candidate.register_controller_and_increment_controller_epoch(7)
    candidate.register_broker(Broker(7))
    backend.settle(observer.zookeeper)
    assert calls.events == [("created", "/controller"), ("children", "/brokers/ids")]

    assert observer.get_controller_id() == 7                          # re-arms the data watch
    observer.unregister_znode_child_change_handler("/brokers/ids")
    backend.expire(candidate.zookeeper)
    backend.settle(observer.zookeeper)
    assert calls.events[2:] == [("deleted", "/controller")]


class SessionHandler(StateChangeHandler):
    name = "controller"

    def __init__(self, calls):
        self.calls = calls

    def before_initializing_session(self) -> None:
        self.calls("before")

    def after_initializing_session(self) -> None:
        self.calls("after")


def test_an_expiry_reinitializes_the_session_when_a_factory_is_given(backend, make_recorder):
    calls = make_recorder()
    client = kafka_client(backend, reconnect=backend.connect)
    client.register_state_change_handler(SessionHandler(calls))
    old_session = client.session_id
    backend.expire(client.zookeeper)
    assert calls.events == ["before", "after"]
    assert client.session_id != old_session
    client.create_top_level_paths()
    assert client.register_broker(Broker(1)) > 0


# ---- formats ------------------------------------------------------------------------------------


def test_znode_json_is_kafkas(backend, topic):
    controller = kafka_client(backend)
    _, version = controller.register_controller_and_increment_controller_epoch(1)
    controller.create_topic_partition_states({T0: state(1, 0, (1, 2), 1)}, version)
    topic.create_partition_reassignment({T0: [2, 3]})
    topic.create_preferred_replica_election({T0})
    topic.propagate_isr_changes({T0})
    topic.register_broker(Broker(1, "h1", 9092))

    assert raw(topic, "/brokers/topics/t") == (
        b'{"version":2,"partitions":{"0":[1,2],"1":[2,1]},"adding_replicas":{},"removing_replicas":{}}')
    assert raw(topic, "/brokers/topics/t/partitions/0/state") == (
        b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}')
    assert raw(topic, "/admin/reassign_partitions") == (
        b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,3]}]}')
    assert raw(topic, "/admin/preferred_replica_election") == (
        b'{"version":1,"partitions":[{"topic":"t","partition":0}]}')
    assert raw(topic, "/isr_change_notification/isr_change_0000000000") == (
        b'{"version":1,"partitions":[{"topic":"t","partition":0}]}')
    assert json.loads(raw(topic, "/brokers/ids/1")) == {
        "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"}, "endpoints": ["PLAINTEXT://h1:9092"],
        "jmx_port": -1, "host": "h1", "timestamp": "1600000000000", "port": 9092, "version": 4}


def test_kafka_written_json_decodes():
    # As Kafka 2.6 (and the pre-2.4 version 1 topic format) write them, key order differing.
    assert TopicZNode.decode("t", b'{"version":1,"partitions":{"1":[2,3],"0":[1,2]}}') == {
        T0: ReplicaAssignment((1, 2)), T1: ReplicaAssignment((2, 3))}
    assert TopicZNode.decode("t", b'{"removing_replicas":{"0":[1]},"partitions":{"0":[1,2,3]},'
                                  b'"adding_replicas":{"0":[3]},"version":2}') == {
        T0: ReplicaAssignment((1, 2, 3), adding_replicas=(3,), removing_replicas=(1,))}
    assert TopicPartitionStateZNode.decode(
        b'{"leader":3,"isr":[3,1],"controller_epoch":7,"leader_epoch":4,"version":1}', zk_version=9) == (
        LeaderIsrAndControllerEpoch(LeaderAndIsr(3, 4, (3, 1), 9), 7))
