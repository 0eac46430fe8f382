"""No leader election for a topic queued for deletion (issue 13, the state-machine triage).

Kafka 2.6 never elects a leader for a partition of a topic queued for deletion, except to move
the leader of a reassignment that was under way when the deletion was asked for (the topic is
then queued but ineligible, and `onPartitionReassignment` finishes). Every other path filters the
topic out before the partition state machine is asked for an election:
`triggerOnlinePartitionStateChange` (`!topicDeletionManager.isTopicQueuedUpForDeletion`,
kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala), the controlled
shutdown's `partitionsToActOn` and the preferred elections (`onReplicaElection`,
`checkAndTriggerAutoLeaderRebalance`) in kafka@2.6.x:core/src/main/scala/kafka/controller/
KafkaController.scala. A partition of such a topic that lost its leader stays leaderless until it
is deleted: its replicas are being stopped and deleted (TopicDeletionManager.scala
`onPartitionDeletion`), and an election would send them a LeaderAndIsr that restarts them.

The older election properties (LeaderIsLive, ElectionRuleConformance, CleanElectionFromIsr,
OfflineElectionForOfflineLeader) judge how a leader is chosen, not whether the partition should be
elected at all, so an election for a deleting topic passed them all.
"""

from __future__ import annotations

from kcm.checker.engine.contract import AlwaysStep
from kcm.model.actions import ControllerProcessEvent
from kcm.model.cluster import Cluster
from kcm.model.state_machines import Strategy


def no_election_for_deleting_topic(elections, topics_to_delete: int, ppt: int) -> bool:
    """Every election of the step but a reassignment's is for a topic not queued for deletion
    (`topics_to_delete`: the acting controller's queue after the step)."""
    return all(e.strategy is Strategy.REASSIGN or not topics_to_delete >> (e.partition // ppt) & 1
               for e in elections)


def properties(cfg, observe) -> list:
    """This module's properties, registered at the end of `kcm.model.invariants.properties_for`."""
    from kcm.model.invariants import _elections  # invariants imports this module when it registers it

    ppt = cfg.partitions

    def holds(s: Cluster, a, t: Cluster) -> bool:
        elections = _elections(observe, s, a)
        if not elections:
            return True
        return no_election_for_deleting_topic(elections, t.brokers[a.broker].ctx.topics_to_delete, ppt)

    return [AlwaysStep("NoElectionForDeletingTopic", holds,
                       "no leader election for a topic queued for deletion, but a reassignment's",
                       judges=(ControllerProcessEvent,))]
