"""Adding partitions: a topic's partition count only grows, and an added partition comes to life.

An operator adds partitions with `kafka-topics.sh --alter --partitions N` (the CreatePartitions
request): `AdminZkClient.addPartitions` rewrites `/brokers/topics/<t>` with the old assignment and
the new partitions, and answers success once written. The controller's `PartitionModificationsHandler`
hears the data change, and `processPartitionModifications` creates the partitions its context does
not know (`onNewPartitionCreation`: NewPartition, NewReplica, then OnlinePartition with the first
live replica as leader, and OnlineReplica) (kafka@2.6.x:core/src/main/scala/kafka/zk/AdminZkClient.scala
`addPartitions`; kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
`processPartitionModifications`, lines 1463-1505). What an operator expects of that:

- `PartitionCountNeverDecreases`: Kafka does not support reducing a topic's partitions
  (`addPartitions` refuses a smaller count), so no step takes an assigned partition out of
  `/brokers/topics/<t>` while the topic stays. Kafka 2.6 breaks it twice (docs/model.md,
  "Findings"): for a topic queued for deletion the controller writes the old assignment back
  (`restorePartitionReplicaAssignment`, by design, after the request was answered success), and a
  reassignment writes the whole topic from the controller's context
  (`updateReplicaAssignmentForPartition`), taking away a partition added in ZooKeeper that the
  controller has not processed yet.
- `AddedPartitionsCreated`: once quiescent, every partition in `/brokers/topics/<t>` of a topic not
  being deleted, an added one as much as one created with its topic, has its state znode with a
  leader among its assigned replicas, and each of those replicas has been told of it (it holds the
  znode's leader epoch).

Both are listed only where partitions can be added (`ModelConfig.adds_partitions`): elsewhere a
topic's partitions are all created with it, and `CreatedPartitionsHaveState` says the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kcm.model.catalogue import findings
from kcm.model.catalogue.declaration import Declaration, Judged, Kind, Part, per_topic, per_topic_with_judge
from kcm.model.catalogue.settledness import AFRESH, Settledness
from kcm.model.catalogue.views import uncreated_partitions
from kcm.model.cluster import Cluster
from kcm.model.config import ModelConfig


def _adds_partitions(cfg: ModelConfig) -> bool:
    return cfg.adds_partitions


def partition_count_never_decreases(ppt: int) -> Callable[[Cluster, Any, Cluster], bool]:
    """Per topic that has an assignment before and after the step, the partitions assigned in
    `/brokers/topics/<t>` after the step include those assigned before (a deletion takes the whole
    topic: its znode is gone, which this does not judge)."""

    def holds(s: Cluster, a: Any, t: Cluster) -> bool:
        before, after = s.zk.assignment, t.zk.assignment
        if before is after:
            return True
        for first in range(0, len(before), ppt):
            ps = range(first, first + ppt)
            if any(after[p] for p in ps) and any(before[p] and not after[p] for p in ps):
                return False
        return True

    return holds


def added_partitions_created(s: Cluster, ppt: int, judge: Settledness = AFRESH) -> bool:
    """Quiescent: every assigned partition of a topic not queued for deletion (`/admin/delete_topics`)
    has a state znode whose leader is one of its assigned replicas, and every assigned replica
    holds that znode's leader epoch (`uncreated_partitions` is empty)."""
    return not judge.quiescent(s) or not uncreated_partitions(s, ppt)


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("PartitionCountNeverDecreases",
                "no step takes an assigned partition out of a topic's /brokers/topics znode while the topic stays",
                Kind.TRANSITION, per_topic(partition_count_never_decreases),
                reads=frozenset({Part.ZOOKEEPER}), listed=_adds_partitions,
                findings=((findings.ADDITION_RESTORED_DURING_DELETION, findings.additions_and_deletions),
                          (findings.ADDITION_WRITTEN_AWAY_BY_REASSIGNMENT, findings.additions_and_reassignments))),
    Declaration("AddedPartitionsCreated",
                "once quiescent, every assigned partition of a topic not being deleted, added ones included, "
                "has a leader among its replicas, and each replica follows it",
                Kind.LIVENESS, per_topic_with_judge(added_partitions_created), where=Judged.QUIESCENT,
                listed=_adds_partitions,
                findings=((findings.LOST_CREATE_REPLY, findings.lost_create_replies),)),
)
