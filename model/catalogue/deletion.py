"""Topic deletion: a topic queued for deletion is deleted, with every replica, and nothing else is.

An operator asks Kafka 2.6 to delete a topic by writing `/admin/delete_topics/<t>`. The
controller queues the topic (`topicsToBeDeleted`), stops electing for it, sends its replicas
StopReplica(delete = true) (OfflineReplica -> ReplicaDeletionStarted) and, once every replica is
ReplicaDeletionSuccessful, deletes its znodes and forgets it (`completeDeleteTopic`: `topicsToBeDeleted
-= topic`, `topicsWithDeletionStarted -= topic`, then `/admin/delete_topics/<t>` deleted). The only
other place that drops a deletion request is `processTopicDeletion`, for topics that do not exist
(`nonExistentTopics = topicsToBeDeleted -- controllerContext.allTopics`). Every election path
filters topics queued for deletion out (`triggerOnlinePartitionStateChange`'s
`!topicDeletionManager.isTopicQueuedUpForDeletion`, the controlled shutdown's `partitionsToActOn`,
`onReplicaElection`, `checkAndTriggerAutoLeaderRebalance`), except a reassignment that was under way
when the deletion was asked for (the topic is then ineligible and `onPartitionReassignment`
finishes) (kafka@2.6.x:core/src/main/scala/kafka/controller/TopicDeletionManager.scala,
kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala processTopicDeletion,
kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
triggerOnlinePartitionStateChange).

So: no election for a topic queued for deletion but a reassignment's (it would send LeaderAndIsr
to replicas being deleted); a deletion completes only once its brokers hold no replica of it; a
request is dropped only with its topic, or for a topic the controller does not know; and once
quiescent (every broker up, so no deletion waits for a dead replica) `/admin/delete_topics` is
empty and the active controller's deletion queues with it. A controller that kept a deleted topic
queued would treat a topic re-created under the same name as queued for deletion.
`topicsIneligibleForDeletion` is not judged: 2.6 keeps a completed topic's mark there
(model/topic_deletion.py). The model runs with `delete.topic.enable`.
"""

from __future__ import annotations

from kcm.model.actions import ControllerProcessEvent
from kcm.model.catalogue import findings
from kcm.model.catalogue.declaration import (
    CONTROLLER_EVENTS,
    Declaration,
    Judged,
    Kind,
    as_is,
    per_topic,
    per_topic_with_judge,
)
from kcm.model.catalogue.settledness import AFRESH, Judge, Settledness
from kcm.model.catalogue.views import waiting_for_failed_dirs
from kcm.model.cluster import NO_REPLICA, Cluster
from kcm.model.config import ModelConfig
from kcm.model.state_machines import Strategy


def no_election_for_deleting_topic(elections, topics_to_delete: int, ppt: int) -> bool:
    """Every election of the step but a reassignment's is for a topic not queued for deletion
    (`topics_to_delete`: the acting controller's queue after the step)."""
    return all(e.strategy is Strategy.REASSIGN or not topics_to_delete >> (e.partition // ppt) & 1
               for e in elections)


def deleted_topic_leaves_no_replica(s: Cluster, a, t: Cluster) -> bool:
    """When a topic's deletion completes (its `/brokers/topics` assignment goes), no broker of its
    assignment still holds a replica of it: completion waits for every replica to be
    ReplicaDeletionSuccessful, which only the broker's answer to StopReplica(delete=true) makes
    (kafka@2.6.x:core/src/main/scala/kafka/controller/TopicDeletionManager.scala
    resumeDeletions / completeDeleteTopic, onPartitionDeletion; core/src/main/scala/kafka/server/
    ReplicaManager.scala stopReplicas). A broker that died lost its replicas with its memory."""
    if type(a) is not ControllerProcessEvent or s.zk.assignment is t.zk.assignment:
        return True
    for p, (x, y) in enumerate(zip(s.zk.assignment, t.zk.assignment)):
        if x and not y and any(t.brokers[b].replicas[p] != NO_REPLICA for b in x):
            return False
    return True


def deletion_request_dropped_with_topic(ppt: int):
    """Transition invariant builder: a controller event deletes `/admin/delete_topics/<t>` only
    for a topic absent from its context when the event began, or whose `/brokers/topics/<t>` is
    gone when it ends."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        if type(a) is not ControllerProcessEvent:
            return True
        dropped = s.zk.delete_topics & ~t.zk.delete_topics
        if not dropped:
            return True
        ctx = s.brokers[a.broker].ctx
        topic = 0
        while dropped:
            if dropped & 1:
                parts = range(topic * ppt, (topic + 1) * ppt)
                if any(ctx.assignment[p] for p in parts) and any(t.zk.assignment[p] for p in parts):
                    return False
            dropped >>= 1
            topic += 1
        return True
    return holds


def topic_deletion_eventually_completes(s: Cluster, ppt: int = 1, judge: Settledness = AFRESH) -> bool:
    """Quiescent: no topic is left queued for deletion but those waiting for a failed log directory."""
    return not judge.quiescent(s) or s.zk.delete_topics & ~waiting_for_failed_dirs(s, ppt) == 0


def deletion_queues_empty_when_quiescent(s: Cluster, ppt: int = 1, judge: Settledness = AFRESH) -> bool:
    """Quiescent: the active controller's `topicsToBeDeleted` and `topicsWithDeletionStarted` are
    empty, but for the topics waiting for a failed log directory."""
    if not judge.quiescent(s):
        return True
    waiting = waiting_for_failed_dirs(s, ppt)
    return all(not ((b.ctx.topics_to_delete | b.ctx.topics_deletion_started) & ~waiting)
               for b in s.brokers if b.active)


def _no_election_for_deleting_topic(cfg: ModelConfig, judge: Judge):
    ppt = cfg.partitions

    def holds(s: Cluster, a, t: Cluster) -> bool:
        elections = judge.elections(s, a)
        if not elections:
            return True
        return no_election_for_deleting_topic(elections, t.brokers[a.broker].ctx.topics_to_delete, ppt)
    return holds


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("NoElectionForDeletingTopic",
                "no leader election for a topic queued for deletion, but a reassignment's",
                Kind.TRANSITION, _no_election_for_deleting_topic, judges=CONTROLLER_EVENTS),
    Declaration("DeletedTopicLeavesNoReplica",
                "a topic deletion completes only once its assigned brokers hold no replica of it",
                Kind.TRANSITION, as_is(deleted_topic_leaves_no_replica), judges=CONTROLLER_EVENTS,
                findings=((findings.STALE_STOP_REPLICA_ANSWER, findings.deletions_with_failover_or_bounce),)),
    Declaration("DeletionRequestDroppedWithTopic",
                "a controller deletes /admin/delete_topics/<t> only for a topic it does not know or has just deleted",
                Kind.TRANSITION, per_topic(deletion_request_dropped_with_topic),
                judges=CONTROLLER_EVENTS),
    Declaration("TopicDeletionEventuallyCompletes", "once quiescent, no topic is left queued in /admin/delete_topics",
                Kind.LIVENESS, per_topic_with_judge(topic_deletion_eventually_completes), where=Judged.QUIESCENT),
    Declaration("DeletionQueuesEmptyWhenQuiescent",
                "once quiescent, the active controller has no topic queued or started for deletion",
                Kind.LIVENESS, per_topic_with_judge(deletion_queues_empty_when_quiescent), where=Judged.QUIESCENT),
)
