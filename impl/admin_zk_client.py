"""`AdminZkClient.addPartitions`: what a CreatePartitions request does to ZooKeeper.

An operator adds partitions with `kafka-topics.sh --alter --partitions N` (through the AdminClient,
the CreatePartitions request) or with an explicit `--replica-assignment`. The broker that takes the
request validates it against ZooKeeper and rewrites `/brokers/topics/<t>`; it does not wait for the
controller, which learns of the change through its `PartitionModificationsHandler`
(kafka@2.6.x:core/src/main/scala/kafka/server/AdminManager.scala `createPartitions`, lines 265-304;
kafka@2.6.x:core/src/main/scala/kafka/zk/AdminZkClient.scala `addPartitions`, lines 184-223):

- the topic's full assignment is read; a topic with no assignment is unknown
  (`UnknownTopicOrPartitionException`), one with a partition being reassigned is refused
  (`ReassignmentInProgressException`, against a race with the controller's reassignment update);
- the new partitions' replicas must be registered brokers (`getBrokerMetadatas`), distinct, and as
  many as partition 0 has (`validateReplicaAssignment`);
- the old assignment and the new partitions are written with a plain `setData`, at any version and
  without the controller-epoch fence (`writeTopicPartitionAssignment(..., isUpdate = true)`).

Nothing looks at `/admin/delete_topics`: partitions can be added to a topic queued for deletion
(the controller then writes the old assignment back, docs/model.md, "Adding partitions").
The default placement (`AdminUtils.assignReplicasToBrokers` from partition 0's first replica) is
one of the explicit assignments, so only those are taken.
"""

from __future__ import annotations

from collections.abc import Sequence

from kcm.impl.kafka_exception import KafkaException
from kcm.impl.kafka_zk_client import KafkaZkClient
from kcm.impl.zk_data import ReplicaAssignment, TopicPartition


class AdminOperationException(KafkaException):
    """The request is refused (Kafka's `UnknownTopicOrPartitionException`,
    `ReassignmentInProgressException`, `InvalidReplicaAssignmentException`)."""


class AdminZkClient:
    """The admin side of ZooKeeper, as a broker handling an admin request uses it."""

    def __init__(self, zk_client: KafkaZkClient) -> None:
        self._zk = zk_client

    def add_partitions(self, topic: str,
                       new_replicas: Sequence[Sequence[int]]) -> dict[TopicPartition, tuple[int, ...]]:
        """Add one partition per entry of `new_replicas`, numbered after the existing ones; returns
        the topic's whole assignment as written. Raises `AdminOperationException` when refused."""
        existing = self._zk.get_full_replica_assignment_for_topics([topic])
        if not existing:
            raise AdminOperationException(f"The topic '{topic}' does not exist.")
        if any(a.adding_replicas or a.removing_replicas for a in existing.values()):
            raise AdminOperationException(f"A partition reassignment is in progress for the topic '{topic}'.")
        partition0 = existing.get(TopicPartition(topic, 0))
        if partition0 is None:
            raise AdminOperationException(f"Unexpected existing replica assignment for topic '{topic}', "
                                          "partition id 0 is missing.")
        brokers = set(self._zk.get_sorted_broker_list())
        for replicas in new_replicas:
            if len(set(replicas)) != len(replicas) or len(replicas) != len(partition0.replicas):
                raise AdminOperationException(f"Invalid replica assignment {list(replicas)}: the replication "
                                              f"factor is {len(partition0.replicas)}, with distinct brokers.")
            unknown = set(replicas) - brokers
            if unknown:
                raise AdminOperationException(f"Unknown broker(s) in replica assignment: {sorted(unknown)}.")
        assignment = dict(existing)
        for i, replicas in enumerate(new_replicas):
            assignment[TopicPartition(topic, len(existing) + i)] = ReplicaAssignment(tuple(replicas))
        self._zk.set_topic_assignment(topic, assignment)
        return {tp: a.replicas for tp, a in sorted(assignment.items())}
