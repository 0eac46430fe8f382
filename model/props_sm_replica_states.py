"""Replica states of replicas that are gone (issue 13, the state-machine triage of the full run).

Kafka 2.6 keeps a replica state only for a replica it knows: the `NonExistentReplica` transition
removes the replica from the partition's assignment and drops its state
(`controllerContext.removeReplicaState(replica)`, kafka@2.6.x:core/src/main/scala/kafka/controller/
ReplicaStateMachine.scala `doHandleStateChanges`, case NonExistentReplica), and it is the last step
of every path that takes a replica out of an assignment: a completed reassignment stops its
removed replicas Offline -> ReplicaDeletionStarted -> ReplicaDeletionSuccessful -> NonExistent
(kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala `stopRemovedReplicasOfReassignedPartition`,
also for the replicas a newer reassignment no longer needs, `updateCurrentReassignment`), and a
completed topic deletion moves every replica of the topic to NonExistent before the topic is
forgotten (kafka@2.6.x:core/src/main/scala/kafka/controller/TopicDeletionManager.scala
`completeDeleteTopic`). A failover builds the states from the assignment only
(ReplicaStateMachine.scala `initializeReplicaState`).

So once the cluster has settled, the active controller holds every replica outside a partition's
assignment as NonExistentReplica (the model's "no entry"). The older properties judged only the
assigned replicas (ReplicaStatesMatchLiveness, FailedBrokerReplicasOffline): a removed replica
left in ReplicaDeletionSuccessful (or stuck in OfflineReplica because it never reached
ReplicaDeletionStarted) was invisible to them, though Kafka would refuse the replica's next
NonExistent -> NewReplica (a topic re-created, a replica reassigned back): the table has no
ReplicaDeletionSuccessful -> NewReplica edge.
"""

from __future__ import annotations

from kcm.checker.engine.contract import Always
from kcm.model.cluster import Cluster
from kcm.model.invariants import _settled_under_a_controller
from kcm.model.states import ReplicaState


def removed_replicas_forgotten(s: Cluster) -> bool:
    """Settled under an active controller: every replica outside its partition's assignment (in
    the controller's context) is NonExistentReplica."""
    if not _settled_under_a_controller(s):
        return True
    ctx = s.brokers[s.zk.controller].ctx
    for p, assigned in enumerate(ctx.assignment):
        states = ctx.replica_states[p]
        for b, state in enumerate(states):
            if state is not ReplicaState.NonExistentReplica and b not in assigned:
                return False
    return True


def properties(cfg) -> list:
    """This module's properties, registered at the end of `kcm.model.invariants.properties_for`."""
    return [Always("RemovedReplicasForgotten", removed_replicas_forgotten,
                   "once settled, the controller holds no state for a replica outside the assignment",
                   kind="settled")]
