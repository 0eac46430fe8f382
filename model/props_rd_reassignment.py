"""Mutation triage (issue 13, session 6): what Kafka 2.6 guarantees when a reassignment completes.

`onPartitionReassignment`'s last phase (B1-B8, model/reassignment.py) persists RS = TRS with
empty AR and RR in `/brokers/topics/<t>` (B6, `updateReplicaAssignmentForPartition`) and, in the
same event, removes the partition from `/admin/reassign_partitions` when the znode still asks
for exactly that target (B7, `removePartitionFromReassigningPartitions(topicPartition,
assignment)` with the completed assignment -> `maybeRemoveFromZkReassignment((tp, replicas) => tp ==
topicPartition && replicas == assignment.replicas)`; kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
`onPartitionReassignment`, `removePartitionFromReassigningPartitions`, `maybeRemoveFromZkReassignment`).

Why the older properties missed a controller that skips B7: ReassignmentEventuallyCompletes and
AdminZnodesConsumed judge only quiescent states, and a controller that leaves the request in the
znode is never quiescent in the model: the re-put ZkPartitionReassignment (or the partition's
armed ISR-change watch) restarts the finished reassignment, which bumps the leader epoch and
fires again, for ever; the search times out instead of failing (the full run's
`reassignment:94:delete-effect:0` and `reassignment:188:delete-effect:0`). This property judges
the completing step itself, so it fails at the first completion.

B4-B5 (`stopRemovedReplicasOfReassignedPartition`) take each removed replica OfflineReplica ->
ReplicaDeletionStarted, which sends it StopReplica(delete = true), before the bookkeeping states
ReplicaDeletionSuccessful -> NonExistentReplica (kafka@2.6.x:core/src/main/scala/kafka/controller/
KafkaController.scala `stopRemovedReplicasOfReassignedPartition`; ReplicaStateMachine.scala
`doHandleStateChanges`, case ReplicaDeletionStarted: `addStopReplicaRequestForBrokers(...,
deletePartition = true)`). Skipping DeletionStarted, or taking it before OfflineReplica (an
illegal Online -> DeletionStarted transition that the state machine logs and skips), leaves the
removed broker with the partition's log for good: StopReplica(delete = false) only stops it. No
older property read the requests of a completing reassignment, and the broker's stopped replica
is outside every assignment, which BrokersFollowTheLeader and AtMostOneBelievedLeader do not
judge (Findings 4) (`reassignment:160:delete-effect:0`, `reassignment:159:swap-effects:0`).
"""

from __future__ import annotations

from kcm.checker.engine.contract import AlwaysStep
from kcm.model.actions import ControllerProcessEvent
from kcm.model.cluster import Cluster, RequestKind


def reassignment_completion_removes_request(s: Cluster, a, t: Cluster) -> bool:
    """On a controller event that completes a reassignment in ZooKeeper (the partition's AR or RR
    in `/brokers/topics` go from non-empty to empty while the partition stays assigned), the
    partition's entry in `/admin/reassign_partitions` no longer asks for the replicas just reached.
    An entry asking for another target (written by an admin after an earlier request failed, while
    this one was still completing) is the next reassignment's and stays, as in Kafka."""
    if type(a) is not ControllerProcessEvent:
        return True
    zk = t.zk
    return all(zk.reassign[p] != zk.assignment[p] for p in _completed(s, t))


def _completed(s: Cluster, t: Cluster):
    """The partitions whose reassignment the step completes in `/brokers/topics`: AR or RR
    non-empty before, both empty after, the partition still assigned (not deleted)."""
    if s.zk.adding is t.zk.adding and s.zk.removing is t.zk.removing:
        return []
    zk = t.zk
    return [p for p, (adding, removing) in enumerate(zip(s.zk.adding, s.zk.removing))
            if (adding or removing) and not zk.adding[p] and not zk.removing[p] and zk.assignment[p]]


def reassignment_deletes_removed_replicas(s: Cluster, a, t: Cluster) -> bool:
    """On a controller event that completes a reassignment in ZooKeeper, every removed replica (RR
    before the step) on a broker live in the controller's view, with a channel to it, is sent
    StopReplica(delete = true) for the partition in that event."""
    if type(a) is not ControllerProcessEvent:
        return True
    done = _completed(s, t)
    if not done:
        return True
    c = a.broker
    ctx = t.brokers[c].ctx
    if not t.brokers[c].active:
        return True
    n = len(t.brokers)
    for p in done:
        for r in s.zk.removing[p]:
            if r in t.zk.assignment[p] or not (ctx.live >> r & 1 and ctx.channel >> r & 1):
                continue
            i = c * n + r
            before, after = s.net[i], t.net[i]
            sent = after[len(before):] if after[:len(before)] == before else after
            if not any(q.kind is RequestKind.StopReplica and any(x.partition == p and x.delete for x in q.partitions)
                       for q in sent):
                return False
    return True


def properties(cfg) -> list:
    """This module's properties, registered at the end of `kcm.model.invariants.properties_for`."""
    return [
        AlwaysStep("ReassignmentCompletionRemovesRequest", reassignment_completion_removes_request,
                   "the event that completes a reassignment removes its request from /admin/reassign_partitions",
                   judges=(ControllerProcessEvent,)),
        AlwaysStep("ReassignmentDeletesRemovedReplicas", reassignment_deletes_removed_replicas,
                   "the event that completes a reassignment sends StopReplica(delete=true) to each live removed replica",
                   judges=(ControllerProcessEvent,)),
    ]
