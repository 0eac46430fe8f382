"""Leadership that a Kafka 2.6 controller must move in one event (issue 13, triage of controller.py).

Two controller events exist to move leaders away from a broker or back to the preferred replica,
and each moves every partition it can in the event itself:

- `doControlledShutdown` re-elects, with `ControlledShutdownPartitionLeaderElectionStrategy`,
  every partition the shutting-down broker leads (more than one replica, topic not queued for
  deletion); the strategy picks the first replica of the assignment that is live, in the ISR and
  not shutting down, so whenever such a replica exists the leader moves
  (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala doControlledShutdown,
  kafka@2.6.x:core/src/main/scala/kafka/controller/Election.scala leaderForControlledShutdown).
- `checkAndTriggerAutoLeaderRebalance` elects the preferred replica of every partition off it
  whose preferred replica is online, in the ISR, not being deleted, while no reassignment is in
  progress (`canPreferredReplicaBeLeader`, then `onReplicaElection(..., AutoTriggered)`;
  kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
  checkAndTriggerAutoLeaderRebalance; the model's imbalance test is "any partition off its
  preferred leader", docs/model.md).

The older properties judged what these events elected (ControlledShutdownElectsAnother,
PreferredElectionMovesLeader) and what a finished shutdown leaves (ControlledShutdownLeavesBrokerClean,
only on a DONE answer), never a partition they should have elected and left alone: a controlled
shutdown that moves nothing is answered RETRY until the broker gives up, and a rebalance that
skips its candidates changes nothing at all.

Both are judged from the ZooKeeper state and the controller's cache before the event, asking
for a candidate both agree on (the election reads the partition znode), and only on events
after which the controller is still active at the same epoch (a fenced write abandons the event).
"""

from __future__ import annotations

from kcm.model.actions import ControllerProcessEvent
from kcm.model.cluster import NO_ZNODE, Cluster, EventKind
from kcm.model.invariants import writes_fail  # invariants imports this module only inside properties_for


def _handled(s: Cluster, a, t: Cluster, kind: EventKind):
    """The event of `kind` that step `a` handles at a controller active before and after it at one
    epoch, with a live ZooKeeper session, or None."""
    if type(a) is not ControllerProcessEvent:
        return None
    queue = s.brokers[a.broker].queue
    if not queue or queue[0].kind is not kind:
        return None
    before, after = s.brokers[a.broker], t.brokers[a.broker]
    if not (before.active and after.active and before.ctx.epoch == after.ctx.epoch == t.zk.controller_epoch):
        return None
    if writes_fail(s, a.broker):
        return None
    return queue[0]


def _agreed(s: Cluster, ctx, p: int):
    """Partition `p`'s znode if the controller's cache agrees with ZooKeeper on leader and ISR."""
    z, c = s.zk.partitions[p], ctx.leadership[p]
    if z == NO_ZNODE or c == NO_ZNODE or z.leader != c.leader or z.isr != c.isr:
        return None
    return z


def controlled_shutdown_moves_leadership(ppt: int):
    """Transition invariant builder: an accepted ControlledShutdown of broker b (b live in the
    controller's view and marked shutting down after the event) leaves b leading no partition
    (assigned more than one replica, topic not queued for deletion) that had another live, not
    shutting-down ISR member."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        event = _handled(s, a, t, EventKind.ControlledShutdown)
        if event is None:
            return True
        b = event.a
        before, after = s.brokers[a.broker].ctx, t.brokers[a.broker].ctx
        if not (before.live >> b & 1 and after.shutting_down >> b & 1) or event.b < before.broker_epochs[b]:
            return True
        online = before.live & ~after.shutting_down
        for p, assigned in enumerate(before.assignment):
            if b not in assigned or len(assigned) < 2 or before.topics_to_delete >> (p // ppt) & 1:
                continue
            z = _agreed(s, before, p)
            if z is None or z.leader != b:
                continue
            if any(r != b and r in z.isr and online >> r & 1 for r in assigned) and t.zk.partitions[p].leader == b:
                return False
        return True
    return holds


def auto_rebalance_elects_preferred(ppt: int):
    """Transition invariant builder: the scheduled rebalance, with no reassignment in progress,
    leaves every partition whose preferred replica was online and in the ISR (topic not queued for
    deletion) led by its preferred replica."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        if _handled(s, a, t, EventKind.AutoPreferredReplicaLeaderElection) is None:
            return True
        ctx = s.brokers[a.broker].ctx
        if ctx.reassigning:
            return True
        online = ctx.live & ~ctx.shutting_down
        for p, assigned in enumerate(ctx.assignment):
            if not assigned or ctx.topics_to_delete >> (p // ppt) & 1:
                continue
            z = _agreed(s, ctx, p)
            preferred = assigned[0]
            if z is None or z.leader == preferred or not online >> preferred & 1 or preferred not in z.isr:
                continue
            if t.zk.partitions[p].leader != preferred:
                return False
        return True
    return holds


def properties(cfg) -> list:
    """This module's properties, registered at the end of `invariants.properties_for`."""
    from kcm.checker.engine.contract import AlwaysStep
    ppt = cfg.partitions
    return [
        AlwaysStep("ControlledShutdownMovesLeadership", controlled_shutdown_moves_leadership(ppt),
                   "an accepted controlled shutdown moves every partition the broker leads that has another "
                   "online ISR member", judges=(ControllerProcessEvent,)),
        AlwaysStep("AutoRebalanceElectsPreferred", auto_rebalance_elects_preferred(ppt),
                   "the scheduled rebalance elects every eligible preferred replica", judges=(ControllerProcessEvent,)),
    ]
