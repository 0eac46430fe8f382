"""The replica state machine: a replica's state changes only as its table allows, and matches the cluster.

Kafka 2.6's `ReplicaStateMachine.doHandleStateChanges` first splits the replicas it is asked to
move into valid and invalid ones (`checkValidReplicaStateChange`, against
`ReplicaState.validPreviousStates`), logs the invalid ones (`logInvalidTransition`) and carries
out only the valid ones (kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala).
2.6 itself asks for invalid transitions (OnlineReplica -> NewReplica when a reassignment is
resumed at broker startup, NewReplica -> NewReplica on `default`): the check is what keeps them
harmless. The state machine reports each transition it is asked for as an `Edge` observation
(valid or not); chains inside one event (OfflineReplica -> ReplicaDeletionStarted ->
ReplicaDeletionSuccessful -> NonExistentReplica) are fine because only the final state is
compared with the valid targets. What slips past ReplicaTransitionsValid: a change whose final
state is also the target of some other valid transition of the same replica in the same event,
and an invalid request that is logged but whose effects (requests sent) are carried out while the
state is left alone (BrokersFollowTheLeader and the request properties judge those).

A broker's failure moves its replicas to OfflineReplica (`onReplicasBecomeOffline`), its startup
back to OnlineReplica (`onBrokerStartup`); the NonExistentReplica transition drops a replica's
state (`removeReplicaState`), the last step of every path that takes a replica out of an
assignment (`stopRemovedReplicasOfReassignedPartition`, `completeDeleteTopic`); a failover builds
the states from the assignment only (`initializeReplicaState`). So once quiescent every assigned
replica of a live topic is OnlineReplica, and once settled every replica outside the assignment
is NonExistentReplica (one left ReplicaDeletionSuccessful would have its next NonExistent ->
NewReplica refused: the table has no such edge).
"""

from __future__ import annotations

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
from kcm.model.catalogue.settledness import AFRESH, Judge, Settledness, settled_under_a_controller
from kcm.model.catalogue.views import misheld_replicas
from kcm.model.cluster import Cluster, Edge
from kcm.model.config import ModelConfig
from kcm.model.states import ReplicaState
from kcm.model.tables import REPLICA_TABLE


def replica_changes_by_valid_transitions(before, after, obs) -> bool:
    """Every (partition, broker) whose state differs between `before` and `after` (a context's
    `replica_states`) ends in the target of a valid replica-table `Edge` in `obs` for it."""
    taken = None
    for p, (row_before, row_after) in enumerate(zip(before, after)):
        if row_before == row_after:
            continue
        for b, (frm, to) in enumerate(zip(row_before, row_after)):
            if frm == to:
                continue
            if taken is None:
                taken = {(o.partition, o.broker, o.to) for o in obs
                         if type(o) is Edge and o.valid and o.machine == REPLICA_TABLE.name}
            if (p, b, to) not in taken:
                return False
    return True


def failed_broker_replicas_offline(ppt: int):
    """Transition invariant builder: when the active controller handles a broker's failure (the
    broker leaves its live set in the event), every assigned replica on it of a topic not queued
    for deletion is OfflineReplica after the event: `onBrokerFailure` -> `onReplicasBecomeOffline`
    moves them all to OfflineReplica, whether or not the broker was still in the ISR
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala onReplicasBecomeOffline;
    ReplicaStateMachine.scala doHandleStateChanges, case OfflineReplica, and doRemoveReplicasFromIsr,
    whose `leaderAndIsrsWithoutReplica` are settled too). Judged for a controller still at the
    current epoch (a deposed one fails the partitions a newer controller wrote)."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        if type(a) is not ControllerProcessEvent:
            return True
        before, after = s.brokers[a.broker], t.brokers[a.broker]
        if not (before.active and after.active):
            return True
        gone = before.ctx.live & ~after.ctx.live
        if not gone:
            return True
        ctx = after.ctx
        if t.zk.controller_epoch != ctx.epoch:
            return True
        for p, assigned in enumerate(ctx.assignment):
            if ctx.topics_to_delete >> (p // ppt) & 1:
                continue
            for r in assigned:
                if gone >> r & 1 and ctx.replica_states[p][r] is not ReplicaState.OfflineReplica:
                    return False
        return True
    return holds


def replica_states_match_liveness(s: Cluster, ppt: int = 1, judge: Settledness = AFRESH) -> bool:
    """Quiescent (every broker up): the active controller holds every assigned replica of a topic
    not queued for deletion as OnlineReplica, or as OfflineReplica when its log directory failed
    (in `replicasOnOfflineDirs`). A broker's failure moves its replicas to OfflineReplica and its
    startup back to OnlineReplica; a log directory's failure moves its replica to OfflineReplica;
    a reassignment's new replicas go NewReplica -> OnlineReplica
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala onBrokerFailure /
    onReplicasBecomeOffline, processLeaderAndIsrResponseReceived, onBrokerStartup,
    onPartitionReassignment; ReplicaStateMachine.scala startup)."""
    return not judge.quiescent(s) or next(misheld_replicas(s, ppt), None) is None


def removed_replicas_forgotten(s: Cluster, judge: Settledness = AFRESH) -> bool:
    """Settled under an active controller: every replica outside its partition's assignment (in
    the controller's context) is NonExistentReplica."""
    if not settled_under_a_controller(s, judge):
        return True
    ctx = s.brokers[s.zk.controller].ctx
    for p, assigned in enumerate(ctx.assignment):
        states = ctx.replica_states[p]
        for b, state in enumerate(states):
            if state is not ReplicaState.NonExistentReplica and b not in assigned:
                return False
    return True


def _replica_transitions_valid(cfg: ModelConfig, judge: Judge):
    def holds(s: Cluster, a, t: Cluster) -> bool:
        if type(a) is not ControllerProcessEvent:
            return True  # its own early return (`AlwaysStep.judges`): random walks call it on every edge
        before, after = s.brokers[a.broker].ctx, t.brokers[a.broker].ctx
        if before.epoch == 0 or before.epoch != after.epoch or before.replica_states == after.replica_states:
            return True  # not the active controller, a failover or a resignation, or nothing changed
        return replica_changes_by_valid_transitions(before.replica_states, after.replica_states, judge.observe(s, a))
    return holds


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("FailedBrokerReplicasOffline", "a broker's failure moves each of its replicas to OfflineReplica",
                Kind.TRANSITION, per_topic(failed_broker_replicas_offline),
                judges=CONTROLLER_EVENTS),
    Declaration("ReplicaTransitionsValid",
                "a replica's state changes only by a transition the replica table allows",
                Kind.TRANSITION, _replica_transitions_valid, judges=CONTROLLER_EVENTS),
    Declaration("ReplicaStatesMatchLiveness",
                "once quiescent, the active controller holds every assigned replica of a live topic as OnlineReplica, "
                "or OfflineReplica on a failed log directory",
                Kind.LIVENESS, per_topic_with_judge(replica_states_match_liveness), where=Judged.QUIESCENT,
                findings=((findings.REASSIGNMENT_WITHOUT_STATE_ZNODE, findings.reassignment_without_state_znode),
                          (findings.LOG_DIRS_STALL_REASSIGNMENT, findings.log_dir_failures_and_reassignments),
                          (findings.SECOND_LOG_DIR_FAILURE, findings.second_log_dir_failures))),
    Declaration("RemovedReplicasForgotten",
                "once settled, the controller holds no state for a replica outside the assignment",
                Kind.LIVENESS, with_judge(removed_replicas_forgotten), where=Judged.SETTLED),
)
