"""Partitions added to a topic on Debian's ZooKeeper, with the threaded implementation: the admin
side of CreatePartitions rewrites `/brokers/topics/<t>`, the controller's
`PartitionModificationsHandler` hears it, and `processPartitionModifications` creates the new
partitions on their replicas with the first live one as leader; a topic queued for deletion gets
its old assignment back instead (docs/model.md, "Adding partitions").

No assertion depends on timing: each test waits, with a generous bound, for a condition.
"""

from __future__ import annotations

from kcm.impl.threaded_cluster import ThreadedCluster
from kcm.impl.zk_data import TopicPartition

from tests.impl import threaded

WAIT_S = 60


def _created(c: ThreadedCluster, count: int) -> bool:
    """`count` partitions, each with a state znode led by its first replica, which every replica follows."""
    states = c.partition_states()
    if len(states) != count:
        return False
    for tp, (replicas, state) in states.items():
        if state is None or state.leader_and_isr.leader != replicas[0]:
            return False
        for b in replicas:
            partition = c.servers[b].replica_manager.partition(tp)
            if partition is None or partition.leader != replicas[0]:
                return False
    return True


def test_added_partitions_are_created_on_their_replicas(zookeeper_hosts) -> None:
    with threaded.running_cluster(3, zookeeper_hosts) as c:
        c.create_topic("orders", {0: (0, 1)})
        assert threaded.wait_for(lambda: _created(c, 1), WAIT_S)
        c.add_partitions("orders", ((1, 2), (2, 0)))
        assert threaded.wait_for(lambda: _created(c, 3), WAIT_S)
        assert c.settle(WAIT_S)
        controller = c.servers[c.controller_id()].controller
        assert sorted(controller.partition_modifications_handlers) == ["orders"]
        assert controller.context.partition_replica_assignment(TopicPartition("orders", 2)) == (2, 0)


def test_an_addition_to_a_topic_being_deleted_is_written_back(zookeeper_hosts) -> None:
    with threaded.running_cluster(2, zookeeper_hosts) as c:
        c.create_topic("orders", {0: (0, 1)})
        assert threaded.wait_for(lambda: _created(c, 1), WAIT_S)
        c.crash_broker(1)    # the deletion cannot complete while a replica is down: the topic stays queued
        c.delete_topic("orders")
        controller = c.servers[0].controller
        assert threaded.wait_for(lambda: controller.topic_deletion_manager.is_topic_queued_up_for_deletion("orders"),
                                 WAIT_S)
        c.add_partitions("orders", ((0, 1),))
        assert threaded.wait_for(lambda: list(c.partition_states()) == [TopicPartition("orders", 0)], WAIT_S)
        assert controller.context.partition_replica_assignment(TopicPartition("orders", 1)) == ()
