"""Reassignment (KIP-455): a partition moves to its target replicas, and the request is consumed.

An operator asks Kafka 2.6 to move a partition by writing its target replicas (TRS) under
`/admin/reassign_partitions`. The controller records in `/brokers/topics/<t>` the replicas being
added (AR = TRS - original) and removed (RR = original - TRS) beside the full set RS = original +
TRS (`ReplicaAssignment`), starts the new replicas, waits for them to join the ISR, elects a leader
from TRS if needed, and in the last phase (B1-B8, model/reassignment.py) persists RS = TRS with
empty AR and RR (B6, `updateReplicaAssignmentForPartition`), removes the request from
`/admin/reassign_partitions` when it still asks for exactly that target (B7,
`removePartitionFromReassigningPartitions` -> `maybeRemoveFromZkReassignment`), and stops and
deletes each removed replica: OfflineReplica -> ReplicaDeletionStarted sends it StopReplica(delete
= true) (B4-B5, `stopRemovedReplicasOfReassignedPartition`)
(kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala onPartitionReassignment,
kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerContext.scala ReplicaAssignment).

So: AR and RR are always disjoint and within RS; the event that completes a reassignment removes
its request and sends StopReplica(delete = true) to each live removed replica (StopReplica(delete
= false) only stops it, and the broker keeps the log for good: it is outside every assignment, so
no other property judges it); and once quiescent no reassignment is requested or under way. The
completing step is judged itself because a controller that leaves the request behind is never
quiescent: the request restarts the finished reassignment, for ever.
"""

from __future__ import annotations

from kcm.model.actions import ControllerProcessEvent
from kcm.model.catalogue import findings
from kcm.model.catalogue.declaration import (
    CONTROLLER_EVENTS,
    Declaration,
    Judged,
    Kind,
    Part,
    as_is,
    with_judge,
)
from kcm.model.catalogue.settledness import AFRESH, Settledness
from kcm.model.catalogue.views import sent_in_step
from kcm.model.cluster import Cluster, RequestKind


def reassignment_sets_disjoint(s: Cluster) -> bool:
    """In `/brokers/topics` every partition's adding and removing replicas (KIP-455's AR and RR)
    are disjoint and within its replicas: `ReplicaAssignment` derives them from the original and
    target replicas (`addingReplicas = targetReplicas -- originReplicas`, `removingReplicas =
    originReplicas -- targetReplicas`), and a resumed reassignment passes the stored ones on
    (kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerContext.scala ReplicaAssignment;
    KafkaController.scala maybeResumeReassignments, onPartitionReassignment)."""
    zk = s.zk
    for replicas, adding, removing in zip(zk.assignment, zk.adding, zk.removing):
        if (adding or removing) and (set(adding) & set(removing) or not set(adding) | set(removing) <= set(replicas)):
            return False
    return True


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
            sent = sent_in_step(s, t, c * n + r)
            if not any(q.kind is RequestKind.StopReplica and any(x.partition == p and x.delete for x in q.partitions)
                       for q in sent):
                return False
    return True


def reassignment_eventually_completes(s: Cluster, judge: Settledness = AFRESH) -> bool:
    zk = s.zk
    return not judge.quiescent(s) or not (any(zk.reassign) or any(zk.adding) or any(zk.removing))


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("ReassignmentSetsDisjoint",
                "the adding and removing replicas in /brokers/topics are disjoint and among the replicas",
                Kind.STATE, as_is(reassignment_sets_disjoint), reads=frozenset({Part.ZOOKEEPER})),
    Declaration("ReassignmentCompletionRemovesRequest",
                "the event that completes a reassignment removes its request from /admin/reassign_partitions",
                Kind.TRANSITION, as_is(reassignment_completion_removes_request),
                judges=CONTROLLER_EVENTS),
    Declaration("ReassignmentDeletesRemovedReplicas",
                "the event that completes a reassignment sends StopReplica(delete=true) to each live removed replica",
                Kind.TRANSITION, as_is(reassignment_deletes_removed_replicas),
                judges=CONTROLLER_EVENTS),
    Declaration("ReassignmentEventuallyCompletes",
                "once quiescent, no reassignment is requested or under way",
                Kind.LIVENESS, with_judge(reassignment_eventually_completes), where=Judged.QUIESCENT,
                findings=((findings.REASSIGNMENT_WITHOUT_STATE_ZNODE, findings.reassignment_without_state_znode),
                          (findings.DELETION_DURING_REASSIGNMENT, findings.deletions_and_reassignments),
                          (findings.LOG_DIRS_STALL_REASSIGNMENT, findings.log_dir_failures_and_reassignments))),
)
