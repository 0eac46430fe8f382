"""A topic deletion request is dropped only with its topic (issue 13, triage of controller.py).

`/admin/delete_topics/<t>` is deleted by the controller in exactly two places in Kafka 2.6:
`processTopicDeletion` drops the entries of topics that do not exist
(`nonExistentTopics = topicsToBeDeleted -- controllerContext.allTopics`, then
`zkClient.deleteTopicDeletions(nonExistentTopics)`), and `TopicDeletionManager.completeDeleteTopic`
drops it with the topic, after `deleteTopicZNode` (kafka@2.6.x:core/src/main/scala/kafka/controller/
KafkaController.scala processTopicDeletion, kafka@2.6.x:core/src/main/scala/kafka/controller/
TopicDeletionManager.scala completeDeleteTopic). So whenever a controller event deletes a
topic's entry, the topic was absent from that controller's context when the event began, or its
`/brokers/topics/<t>` is gone when the event ends. (The model runs with `delete.topic.enable`,
whose `false` branch drops every entry without deleting.)

AdminZnodesConsumed and TopicDeletionEventuallyCompletes only ask that the entry be gone at
quiescence, which a request dropped without deleting the topic also satisfies.
"""

from __future__ import annotations

from kcm.model.actions import ControllerProcessEvent
from kcm.model.cluster import Cluster


def deletion_request_dropped_with_topic(ppt: int):
    """Transition invariant builder: see the module docstring."""
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


def properties(cfg) -> list:
    """This module's properties, registered at the end of `invariants.properties_for`."""
    from kcm.checker.engine.contract import AlwaysStep
    return [
        AlwaysStep("DeletionRequestDroppedWithTopic", deletion_request_dropped_with_topic(cfg.partitions),
                   "a controller deletes /admin/delete_topics/<t> only for a topic it does not know "
                   "or has just deleted",
                   judges=(ControllerProcessEvent,)),
    ]
