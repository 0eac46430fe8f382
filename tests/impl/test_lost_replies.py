"""What each writer does after ZooKeeper lost the reply to a write it had applied, on the embedded
ZooKeeper (`lose_next_ack`): the writes the model treats as unchanged by a lost reply
(docs/model.md, "Lost ZooKeeper replies"), each with the 2.6 read-back that makes it so. The
controller's partition-state writes, which do change, are compared with the model in
`tests/impl/lockstep/test_zk_faults_lockstep.py`; the election multi and the broker registration
in `test_kafka_zk_client.py`."""

from __future__ import annotations

from kcm.impl.kafka_zk_client import KafkaZkClient
from kcm.impl.partition import Partition
from kcm.impl.zk.memory import MemoryZooKeeperServer
from kcm.impl.zk_data import LeaderIsrAndControllerEpoch, TopicPartition
from kcm.model.election import LeaderAndIsr

TP = TopicPartition("t", 0)


def setup():
    server = MemoryZooKeeperServer()
    admin = KafkaZkClient(server.connect())
    admin.create_top_level_paths()
    admin.create_topic_assignment("t", {TP: [1, 2]})
    admin.create_topic_partition_states({TP: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2), 0), 1)}, -1)
    leader = KafkaZkClient(server.connect())
    partition = Partition(TP, 1, leader=1, leader_epoch=0, isr=(1, 2), zk_version=0, replicas=(1, 2),
                          controller_epoch=1)
    return server, admin, leader, partition


def test_a_leaders_isr_write_whose_reply_was_lost_is_recognised_by_the_read_back():
    """`Partition.updateIsr` -> `conditionalUpdatePath(..., Some(checkLeaderAndIsrZkData))`: the
    resend answers BADVERSION, the checker reads the znode back, finds its own data and reports
    success with the new version (kafka@2.6.x:core/src/main/scala/kafka/utils/ReplicationUtils.scala
    `updateLeaderAndIsr`, `checkLeaderAndIsrZkData`; KafkaZkClient.scala `conditionalUpdatePath`)."""
    server, admin, leader, partition = setup()
    server.lose_next_ack(leader.session_id)
    assert partition.update_isr(leader, (1,))
    assert (partition.isr, partition.zk_version) == ((1,), 1)
    assert server.pending_lost_acks(leader.session_id) == 0            # the fault did hit the write
    assert admin.get_topic_partition_state(TP).leader_and_isr == LeaderAndIsr(1, 0, (1,), 1)


def test_without_the_read_back_the_leader_would_keep_a_stale_isr():
    """The same lost reply where the znode has moved on since (the controller wrote it): the
    read-back finds other data and the leader keeps its ISR, as after any BADVERSION."""
    server, admin, leader, partition = setup()
    admin.update_leader_and_isr({TP: LeaderAndIsr(2, 1, (2,), 0)}, 1, -1)
    assert not partition.update_isr(leader, (1,))
    assert (partition.isr, partition.zk_version) == ((1, 2), 0)


def test_a_lost_reply_to_an_isr_change_notification_leaves_a_duplicate_that_names_the_same_partitions():
    """`propagateIsrChanges` -> `createSequentialPersistentPath`: the resend creates a second
    sequential znode; the controller reads both and deletes both, and they name the same partition."""
    server, admin, leader, _ = setup()
    server.lose_next_ack(leader.session_id)
    leader.propagate_isr_changes([TP])
    sequence = admin.get_all_isr_change_notifications()
    assert len(sequence) == 2
    assert admin.get_partitions_from_isr_change_notifications(sequence) == [TP, TP]


def test_a_lost_reply_to_a_fenced_delete_is_tolerated():
    """A controller's fenced delete (`deletePreferredReplicaElection`): the resend answers NONODE,
    which the controller treats as done."""
    server, admin, _, _ = setup()
    controller = KafkaZkClient(server.connect())
    _, version = controller.register_controller_and_increment_controller_epoch(1)
    admin.create_preferred_replica_election([TP])
    server.lose_next_ack(controller.session_id)
    controller.delete_preferred_replica_election(version)
    assert admin.get_preferred_replica_election() == set()
    assert server.pending_lost_acks(controller.session_id) == 0
