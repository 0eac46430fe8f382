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

So, on every step: a request a controller event deletes was carried out (its effect is in
ZooKeeper) or refused for a reason ZooKeeper shows when the event begins
(AdminRequestCarriedOutOrRefused): ZooKeeper mode answers an operator with nothing but the
znodes, so a request deleted otherwise is silently dropped. Once quiescent no request is left
(AdminZnodesConsumed), and once settled no preferred election is (PreferredElectionZnodeConsumed):
a request never acted on. Whether a request carried out was carried out right is judged
elsewhere (the elections in leadership.py, reassignment.py, deletion.py; a topic creation,
which the controller cannot refuse, by CreatedPartitionsHaveState). A partition addition is no
request under `/admin`: the broker that takes the CreatePartitions request answers it itself, and
refuses it before writing anything (kafka@2.6.x:core/src/main/scala/kafka/server/AdminManager.scala
`createPartitions`, the guards of model/spec.py `_partition_additions`); that an accepted addition
is carried out is PartitionCountNeverDecreases' and AddedPartitionsCreated's (partitions.py), and
its PartitionModifications deletes nothing under `/admin`. The reasons for a refusal read
the controller's context beside ZooKeeper where 2.6 tests the context (a broker dead or shutting
down to the controller, a partition it does not know): the context lags ZooKeeper only by the
events still queued. Kafka 2.6 drops a reassignment of a partition without a state znode silently
(Findings 11).

Kafka 2.6 leaves a preferred election behind when it names a partition without leadership:
`processReplicaLeaderElection` looks up `partitionLeadershipInfo(tp)` (a map's `apply`), which throws before the
`finally` is reached (Findings 9). PreferredElectionZnodeConsumed is excused for that cause
and no other (Findings 9's matcher: since the znode was written, the election threw on a partition
without leadership in the controller's context).
"""

from __future__ import annotations

from collections.abc import Callable

from kcm.model.actions import ControllerProcessEvent
from kcm.model.catalogue import findings
from kcm.model.catalogue.declaration import (
    CONTROLLER_EVENTS,
    Declaration,
    Judged,
    Kind,
    per_topic,
    per_topic_with_judge,
    with_judge,
)
from kcm.model.catalogue.settledness import AFRESH, Settledness
from kcm.model.catalogue.views import online_to, waiting_for_failed_dirs
from kcm.model.cluster import NO_ZNODE, Cluster, bits
from kcm.model.config import ModelConfig


def admin_znodes_consumed(s: Cluster, ppt: int = 1, judge: Settledness = AFRESH) -> bool:
    """Quiescent: `/admin/preferred_replica_election`, `/admin/reassign_partitions` and
    `/admin/delete_topics` hold nothing: every request an operator wrote was carried out or refused
    and its entry deleted, whichever controller took it over
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    onReplicaElection's `removePartitionsFromPreferredReplicaElection`,
    `removePartitionsFromReassignedPartitions`, TopicDeletionManager `completeDeleteTopic`). A
    deletion waiting for a failed log directory is left out (`waiting_for_failed_dirs`)."""
    if not judge.quiescent(s):
        return True
    zk = s.zk
    return not zk.preferred and not any(zk.reassign) and not zk.delete_topics & ~waiting_for_failed_dirs(s, ppt)


def preferred_election_znode_consumed(s: Cluster, judge: Settledness = AFRESH) -> bool:
    """Settled: `/admin/preferred_replica_election` is gone. A preferred election does not wait
    for a dead broker: it is refused for a partition whose preferred replica is dead and the znode
    is deleted in `onReplicaElection`'s `finally` (or by the next controller's
    `onControllerFailover`, which takes over pending elections)."""
    return not judge.settled(s) or not s.zk.preferred


def _reassignment_answered(s: Cluster, c: int, t: Cluster, p: int, ppt: int) -> bool:
    """Partition `p`'s request in `/admin/reassign_partitions`, deleted by controller `c`'s event
    from `s` to `t`, was carried out (`/brokers/topics` assigns `p` exactly the target, with no
    adding or removing replica left: `removePartitionFromReassigningPartitions` after B3-B6) or
    refused for a reason ZooKeeper shows: the topic queued for deletion or the partition unknown
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    maybeTriggerPartitionReassignment, lines 648-666: UNKNOWN_TOPIC_OR_PARTITION, then
    processZkPartitionReassignment's `maybeRemoveFromZkReassignment` of the failed ones, lines
    1554-1558). The controller's context is read too: it is what 2.6 tests, and it lags ZooKeeper
    only by events still queued."""
    target, zk, ctx = s.zk.reassign[p], t.zk, s.brokers[c].ctx
    if zk.assignment[p] == target and not zk.adding[p] and not zk.removing[p]:
        return True
    topic = p // ppt
    return bool(not s.zk.assignment[p] or not ctx.assignment[p]
                or (s.zk.delete_topics | ctx.topics_to_delete) >> topic & 1)


def _preferred_election_answered(s: Cluster, c: int, t: Cluster, p: int, ppt: int) -> bool:
    """Partition `p`'s preferred election, whose `/admin/preferred_replica_election` controller
    `c`'s event deleted, was carried out (the state znode's leader is the first assigned replica)
    or refused for a reason ZooKeeper shows at the start of the event: the partition unknown or
    its topic queued for deletion (`processReplicaLeaderElection`'s `unknownPartitions` and
    `partitionsBeingDeleted`), or the preferred replica not eligible: not registered, not online
    to the controller (dead or shutting down) or not in the ISR
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    processReplicaLeaderElection, lines 1745-1760;
    kafka@2.6.x:core/src/main/scala/kafka/controller/Election.scala
    preferredReplicaPartitionLeaderElection: the preferred replica if live and in the ISR, else none,
    PREFERRED_LEADER_NOT_AVAILABLE)."""
    after = t.zk.partitions[p]
    if t.zk.assignment[p] and after != NO_ZNODE and after.leader == t.zk.assignment[p][0]:
        return True
    zk, ctx = s.zk, s.brokers[c].ctx
    if not zk.assignment[p] or not ctx.assignment[p] or (zk.delete_topics | ctx.topics_to_delete) >> (p // ppt) & 1:
        return True
    preferred, z = zk.assignment[p][0], zk.partitions[p]
    online = online_to(ctx, p)
    return (not zk.broker_epochs[preferred] or not online >> preferred & 1
            or z == NO_ZNODE or preferred not in z.isr)


def _deletion_answered(s: Cluster, t: Cluster, topic: int, ppt: int) -> bool:
    """Topic `topic`'s `/admin/delete_topics/<t>`, deleted by a controller's event, was carried out
    (no partition of it is left in `/brokers/topics`: `completeDeleteTopic`) or refused because the
    topic did not exist when the event began (`processTopicDeletion`'s "Ignoring request to delete
    non-existing topics", kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    lines 1510-1514; kafka@2.6.x:core/src/main/scala/kafka/controller/TopicDeletionManager.scala
    completeDeleteTopic)."""
    parts = range(topic * ppt, (topic + 1) * ppt)
    return not any(t.zk.assignment[p] for p in parts) or not any(s.zk.assignment[p] for p in parts)


def unanswered_requests(s: Cluster, a, t: Cluster, ppt: int) -> list[tuple[str, int]]:
    """The admin requests a controller event deleted from `/admin` neither carried out nor
    refused for a reason ZooKeeper shows: ("reassignment", partition), ("preferred", partition)
    or ("deletion", topic)."""
    if type(a) is not ControllerProcessEvent:
        return []
    c, zk, after = a.broker, s.zk, t.zk
    left: list[tuple[str, int]] = []
    for p, target in enumerate(zk.reassign):
        if target and not after.reassign[p] and not _reassignment_answered(s, c, t, p, ppt):
            left.append(("reassignment", p))
    for p in bits(zk.preferred & ~after.preferred):
        if not _preferred_election_answered(s, c, t, p, ppt):
            left.append(("preferred", p))
    for topic in bits(zk.delete_topics & ~after.delete_topics):
        if not _deletion_answered(s, t, topic, ppt):
            left.append(("deletion", topic))
    return left


def admin_request_carried_out_or_refused(ppt: int) -> Callable[[Cluster, object, Cluster], bool]:
    """Transition invariant builder: when a controller event deletes an operator's request from
    `/admin` (a reassignment, a preferred election, a topic deletion), the request was carried out
    or refused for a reason the operator can read in ZooKeeper (`unanswered_requests`). A request
    deleted unanswered is silently dropped: ZooKeeper mode has no reply but the znodes."""
    return lambda s, a, t: not unanswered_requests(s, a, t, ppt)


def admin_requests(cfg: ModelConfig) -> bool:
    """An operator may write a request under `/admin` (a reassignment, a preferred election, a
    topic deletion), alone or in an overlapping run: elsewhere no request is ever deleted."""
    kinds = ("reassignment", "preferred_election", "topic_deletion")
    return bool(cfg.max_reassignments or cfg.max_preferred_elections or cfg.max_topic_deletions
                or any(kind in run for run in cfg.overlapping for kind in kinds))


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("AdminZnodesConsumed",
                "once quiescent, no admin znode holds a request: each was carried out or refused, then deleted",
                Kind.LIVENESS, per_topic_with_judge(admin_znodes_consumed), where=Judged.QUIESCENT,
                findings=((findings.PREFERRED_ELECTION_ZNODE_STAYS, findings.any_config),
                          (findings.DELETION_DURING_REASSIGNMENT, findings.deletions_and_reassignments),
                          (findings.LOG_DIRS_STALL_REASSIGNMENT, findings.log_dir_failures_and_reassignments))),
    Declaration("PreferredElectionZnodeConsumed",
                "once settled, /admin/preferred_replica_election is gone, dead brokers left dead",
                Kind.LIVENESS, with_judge(preferred_election_znode_consumed), where=Judged.SETTLED,
                findings=((findings.PREFERRED_ELECTION_ZNODE_STAYS, findings.any_config),)),
    Declaration("AdminRequestCarriedOutOrRefused",
                "an admin request deleted from /admin was carried out, or refused for a reason ZooKeeper shows",
                Kind.TRANSITION, per_topic(admin_request_carried_out_or_refused),
                judges=CONTROLLER_EVENTS, listed=admin_requests,
                findings=((findings.REASSIGNMENT_WITHOUT_STATE_ZNODE, findings.reassignment_without_state_znode),)),
)
