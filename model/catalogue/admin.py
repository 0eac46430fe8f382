"""Admin requests: what an operator writes under `/admin` is carried out or refused, then consumed.

An operator asks Kafka 2.6's controller for a preferred replica election, a reassignment or a
topic deletion by writing `/admin/preferred_replica_election`, `/admin/reassign_partitions` or
`/admin/delete_topics/<t>`. The controller watches those paths, carries out or refuses each
request, and deletes the entry once done, whichever controller took the request over: a preferred
election does not wait for a dead broker, it is refused and the znode deleted in
`onReplicaElection`'s `finally`, or by the next controller's `onControllerFailover`, which takes
over pending elections (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
onReplicaElection's `removePartitionsFromPreferredReplicaElection`,
`removePartitionsFromReassignedPartitions`,
kafka@2.6.x:core/src/main/scala/kafka/controller/TopicDeletionManager.scala `completeDeleteTopic`).

Kafka 2.6 leaves a preferred election behind when it names a partition without leadership:
`processReplicaLeaderElection` looks up `partitionLeadershipInfo(tp)` (a map's `apply`), which throws before the
`finally` is reached (Findings 9). PreferredElectionZnodeConsumed is excused for it on every
config; PreferredElectionZnodeConsumedWithLeadership allows exactly that cause and no other
(Findings 9's matcher: the election threw on a partition without leadership in the controller's
context).
"""

from __future__ import annotations

from kcm.model.catalogue import findings
from kcm.model.catalogue.declaration import Declaration, Judged, Kind, with_judge
from kcm.model.catalogue.settledness import AFRESH, Settledness, settled_under_a_controller
from kcm.model.cluster import NO_ZNODE, Cluster


def admin_znodes_consumed(s: Cluster, judge: Settledness = AFRESH) -> bool:
    """Quiescent: `/admin/preferred_replica_election`, `/admin/reassign_partitions` and
    `/admin/delete_topics` hold nothing: every request an operator wrote was carried out or refused
    and its entry deleted, whichever controller took it over
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    onReplicaElection's `removePartitionsFromPreferredReplicaElection`,
    `removePartitionsFromReassignedPartitions`, TopicDeletionManager `completeDeleteTopic`)."""
    if not judge.quiescent(s):
        return True
    zk = s.zk
    return not zk.preferred and not any(zk.reassign) and not zk.delete_topics


def preferred_election_znode_consumed(s: Cluster, judge: Settledness = AFRESH) -> bool:
    """Settled: `/admin/preferred_replica_election` is gone. A preferred election does not wait
    for a dead broker: it is refused for a partition whose preferred replica is dead and the znode
    is deleted in `onReplicaElection`'s `finally` (or by the next controller's
    `onControllerFailover`, which takes over pending elections)."""
    return not judge.settled(s) or not s.zk.preferred


def preferred_election_znode_consumed_with_leadership(s: Cluster, judge: Settledness = AFRESH) -> bool:
    """Settled under an active controller: `/admin/preferred_replica_election` is gone, unless a
    partition it names had no leadership in the controller's context when the controller handled
    the election. `processReplicaLeaderElection` elects for the partitions named, then
    `onReplicaElection`'s `finally` deletes the znode and re-puts the event (KAFKA-6146); only a
    partition without leadership, where the lookup `partitionLeadershipInfo(tp)` (a map's `apply`)
    throws before the `finally` is reached, leaves it behind (Findings 9)
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    processReplicaLeaderElection, onReplicaElection). What 2.6 looks up is the context, not
    ZooKeeper, and the state cannot always tell: a partition whose create reply was lost has a state
    znode but no cached leadership (Findings 7), and a partition whose only replica was down at the
    election gets its znode when the broker returns, after the lookup threw. So the state test
    below (a named partition of a live topic without a state znode) only excuses the plain case
    early; Findings 9's matcher, which reads the trace for the election that threw, excuses the
    rest."""
    if not settled_under_a_controller(s, judge):
        return True
    zk = s.zk
    if not zk.preferred:
        return True
    return any(zk.assignment[p] and zk.partitions[p] == NO_ZNODE for p in range(len(zk.partitions))
               if zk.preferred >> p & 1)


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("AdminZnodesConsumed",
                "once quiescent, no admin znode holds a request: each was carried out or refused, then deleted",
                Kind.LIVENESS, with_judge(admin_znodes_consumed), where=Judged.QUIESCENT,
                findings=((findings.PREFERRED_ELECTION_ZNODE_STAYS, findings.any_config),
                          (findings.DELETION_DURING_REASSIGNMENT, findings.deletions_and_reassignments))),
    Declaration("PreferredElectionZnodeConsumed",
                "once settled, /admin/preferred_replica_election is gone, dead brokers left dead",
                Kind.LIVENESS, with_judge(preferred_election_znode_consumed), where=Judged.SETTLED,
                findings=((findings.PREFERRED_ELECTION_ZNODE_STAYS, findings.any_config),)),
    Declaration("PreferredElectionZnodeConsumedWithLeadership",
                "once settled, /admin/preferred_replica_election is gone unless its election met a partition "
                "without leadership in the controller's context",
                Kind.LIVENESS, with_judge(preferred_election_znode_consumed_with_leadership), where=Judged.SETTLED,
                findings=((findings.PREFERRED_ELECTION_ZNODE_STAYS, findings.any_config),)),
)
