"""Mutation triage (issue 13, session 6): what Kafka 2.6 guarantees when a reassignment completes.

`onPartitionReassignment`'s last phase (B1-B8, model/reassignment.py) persists RS = TRS with
empty AR and RR in `/brokers/topics/<t>` (B6, `updateReplicaAssignmentForPartition`) and, in the
same event, removes the partition from `/admin/reassign_partitions` when the znode still asks
for exactly that target (B7, `removePartitionFromReassigningPartitions` ->
`maybeRemoveFromZkReassignment((tp, replicas) => tp == topicPartition && replicas ==
targetReplicas)`; kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
`onPartitionReassignment`, `removePartitionFromReassigningPartitions`, `maybeRemoveFromZkReassignment`).

Why the older properties missed a controller that skips B7: ReassignmentEventuallyCompletes and
AdminZnodesConsumed judge only quiescent states, and a controller that leaves the request in the
znode is never quiescent in the model: the re-put ZkPartitionReassignment (or the partition's
armed ISR-change watch) restarts the finished reassignment, which bumps the leader epoch and
fires again, for ever; the search times out instead of failing (the full run's
`reassignment:94:delete-effect:0` and `reassignment:188:delete-effect:0`). This property judges
the completing step itself, so it fails at the first completion.
"""

from __future__ import annotations

from kcm.model.actions import ControllerProcessEvent
from kcm.model.cluster import Cluster
from kcm.model.properties import AlwaysStep


def reassignment_completion_removes_request(s: Cluster, a, t: Cluster) -> bool:
    """On a controller event that completes a reassignment in ZooKeeper (the partition's AR or RR
    in `/brokers/topics` go from non-empty to empty while the partition stays assigned), the
    partition's entry in `/admin/reassign_partitions` no longer asks for the replicas just reached.
    An entry asking for another target (written by an admin after an earlier request failed, while
    this one was still completing) is the next reassignment's and stays, as in Kafka."""
    if type(a) is not ControllerProcessEvent or s.zk.adding is t.zk.adding and s.zk.removing is t.zk.removing:
        return True
    zk = t.zk
    for p, (adding, removing) in enumerate(zip(s.zk.adding, s.zk.removing)):
        if ((adding or removing) and not zk.adding[p] and not zk.removing[p] and zk.assignment[p]
                and zk.reassign[p] == zk.assignment[p]):
            return False
    return True


def registered(cfg) -> list:
    """The properties of this module, for `kcm.model.invariants.properties_for`."""
    return [
        AlwaysStep("ReassignmentCompletionRemovesRequest", reassignment_completion_removes_request,
                   "the event that completes a reassignment removes its request from /admin/reassign_partitions",
                   judges=(ControllerProcessEvent,)),
    ]
