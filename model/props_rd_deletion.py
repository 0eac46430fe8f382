"""Mutation triage (issue 13, session 6): a controller forgets a topic whose deletion completed.

`completeDeleteTopic` removes the topic from `topicsToBeDeleted` and `topicsWithDeletionStarted`
as it deletes its znodes (kafka@2.6.x:core/src/main/scala/kafka/controller/TopicDeletionManager.scala
`completeDeleteTopic`: `topicsToBeDeleted -= topic`, `topicsWithDeletionStarted -= topic`). A
controller that keeps a deleted topic queued treats a topic created again under the same name as
queued for deletion: `isTopicQueuedUpForDeletion` excludes its partitions from offline,
preferred and controlled-shutdown elections, and the next `resumeDeletions` deletes it without an
`/admin/delete_topics` request; one that keeps it in `topicsWithDeletionStarted` skips the
partitions' Offline -> NonExistent step when the new topic is deleted (`onTopicDeletion`).

Why the older properties missed it: TopicDeletionEventuallyCompletes and AdminZnodesConsumed read
ZooKeeper, where the deletion did complete; ContextDerivedFromZk compares the context with
ZooKeeper only when a failover ends, and the suite never re-creates a deleted topic.

At quiescence every broker is up, so no deletion waits for a dead replica and
TopicDeletionEventuallyCompletes holds `/admin/delete_topics` empty: every deletion the active
controller queued has completed, by its own `completeDeleteTopic` (another controller's would
have made it resign, and its next failover rebuilds the queue from ZooKeeper).
`topicsIneligibleForDeletion` is not judged: 2.6 keeps a completed topic's mark there
(`completeDeleteTopic` does not clear it; model/topic_deletion.py).
"""

from __future__ import annotations

from kcm.checker.engine.contract import Always
from kcm.model.cluster import Cluster
from kcm.model.invariants import quiescent  # invariants imports this module only inside properties_for


def deletion_queues_empty_when_quiescent(s: Cluster) -> bool:
    """Quiescent: the active controller's `topicsToBeDeleted` and `topicsWithDeletionStarted` are
    empty."""
    if not quiescent(s):
        return True
    return all(not (b.ctx.topics_to_delete or b.ctx.topics_deletion_started) for b in s.brokers if b.active)


def properties(cfg) -> list:
    """This module's properties, registered at the end of `kcm.model.invariants.properties_for`."""
    return [
        Always("DeletionQueuesEmptyWhenQuiescent", deletion_queues_empty_when_quiescent,
               "holds whenever no healing action is enabled", kind="quiescence"),
    ]
