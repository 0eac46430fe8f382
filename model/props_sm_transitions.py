"""A replica's state changes only by a transition its table allows (issue 13, the state-machine triage).

Kafka 2.6's `ReplicaStateMachine.doHandleStateChanges` first splits the replicas it is asked to move
into valid and invalid ones (`checkValidReplicaStateChange`, against `ReplicaState.validPreviousStates`,
kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala), logs the invalid ones
(`logInvalidTransition`) and carries out only the valid ones. 2.6 itself asks for invalid transitions
(OnlineReplica -> NewReplica when a reassignment is resumed at broker startup, NewReplica ->
NewReplica on `default`): the check is what keeps them harmless. A controller that carried them out
would re-mark a live replica New, and any table change (a state added, an edge dropped) would go
unchecked by anything but the table's own tests.

The property, judged on every event the active controller processes in one tenure (the controller
epoch of its context is the same before and after; a failover's `initializeControllerContext` and
the replica state machine's `startup` set states directly, as Kafka does, and a resignation resets
them): every replica whose state the event changed ends in the target of a transition the state
machine carried out for it in that event, and that transition is valid in `REPLICA_TABLE`. The
state machine reports each transition it is asked for as an `Edge` observation (valid or not);
chains inside one event (OfflineReplica -> ReplicaDeletionStarted -> ReplicaDeletionSuccessful ->
NonExistentReplica) are fine because only the final state is compared with the valid targets.

What slips past it: a change whose final state is also the target of some other valid transition
of the same replica in the same event; and an invalid request that is logged but whose effects
(requests sent) are carried out while the state is left alone (BrokersFollowTheLeader and the
request properties judge those).
"""

from __future__ import annotations

from kcm.checker.engine.contract import AlwaysStep
from kcm.model.actions import ControllerProcessEvent
from kcm.model.cluster import Cluster, Edge
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


def properties(cfg, observe) -> list:
    """This module's properties, registered at the end of `kcm.model.invariants.properties_for`."""

    def holds(s: Cluster, a, t: Cluster) -> bool:
        if type(a) is not ControllerProcessEvent:
            return True  # its own early return (`AlwaysStep.judges`): random walks call it on every edge
        before, after = s.brokers[a.broker].ctx, t.brokers[a.broker].ctx
        if before.epoch == 0 or before.epoch != after.epoch or before.replica_states == after.replica_states:
            return True  # not the active controller, a failover or a resignation, or nothing changed
        return replica_changes_by_valid_transitions(before.replica_states, after.replica_states, observe(s, a))

    return [AlwaysStep("ReplicaTransitionsValid", holds,
                       "a replica's state changes only by a transition the replica table allows",
                       judges=(ControllerProcessEvent,))]
