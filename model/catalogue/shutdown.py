"""Controlled shutdown: a broker asks to stop, and the controller moves its leadership away first.

In Kafka 2.6 a broker about to stop sends ControlledShutdown to the controller, which marks it
shutting down (`shuttingDownBrokerIds`), re-elects every partition it leads with
`ControlledShutdownPartitionLeaderElectionStrategy` (the first replica of the assignment live, in
the ISR and not shutting down), sends StopReplica(delete = false) for the partitions it follows
and takes them OfflineReplica (out of the ISR), and answers with the partitions it still leads;
the broker retries while that answer is not empty (kafka@2.6.x:core/src/main/scala/kafka/controller/
KafkaController.scala doControlledShutdown, kafka@2.6.x:core/src/main/scala/kafka/controller/
Election.scala leaderForControlledShutdown, kafka@2.6.x:core/src/main/scala/kafka/server/
KafkaServer.scala controlledShutdown).

So: an accepted shutdown moves every partition the broker leads that has another online ISR
member, never elects the broker itself, is answered with a retry only while the broker still
leads, and when answered with nothing left leaves the broker leading nothing and out of the ISRs;
no replica of a broker the controller knows is shutting down joins an ISR (Kafka 2.6 breaks that
one: the leader admits it back, Findings 8; KIP-841 fixed it in 3.3.0); and once quiescent no
shutdown is left under way. A controller whose ZooKeeper session has expired unnoticed writes
nothing and answers all the same (`views.writes_fail`): the properties about what it writes do not
judge it.
"""

from __future__ import annotations

from kcm.model.actions import ControllerProcessEvent, LeaderExpandIsr
from kcm.model.catalogue import findings
from kcm.model.catalogue.declaration import (
    CONTROLLER_EVENTS,
    Declaration,
    Judged,
    Kind,
    Part,
    as_is,
    from_judge,
    per_topic,
    with_judge,
)
from kcm.model.catalogue.settledness import AFRESH, Judge, Settledness
from kcm.model.catalogue.views import active_controllers, agreed, handled, sent_in_step, writes_fail
from kcm.model.cluster import NO_ZNODE, NONE, Cluster, Event, EventKind, RequestKind, Shutdown
from kcm.model.state_machines import Strategy


def no_shutting_down_joins_isr(s: Cluster, a, t: Cluster) -> bool:
    """A replica on a broker the active controller knows is shutting down does not join an ISR.
    Controlled shutdown moved leadership away and removed the replica from the ISR
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala doControlledShutdown);
    letting it back in makes it a leader candidate for a broker about to stop. Kafka 2.6 breaks
    it (docs/model.md, Findings 8); KIP-841 (3.3.0, KAFKA-14140 for ZooKeeper mode) fixed it
    (`isr_admission = "kip-841"`)."""
    if type(a) is not LeaderExpandIsr:
        return True
    p, f = a.partition, a.follower
    if f in s.zk.partitions[p].isr or f not in t.zk.partitions[p].isr:
        return True
    c = s.zk.controller
    return c == NONE or not s.brokers[c].active or not s.brokers[c].ctx.shutting_down >> f & 1


def _controlled_shutdown_handled(s: Cluster, a) -> Event | None:
    """The ControlledShutdown event step `a` handles, or None if it handles another one."""
    if type(a) is not ControllerProcessEvent:
        return None
    queue = s.brokers[a.broker].queue
    event = queue[0] if queue else None
    return event if event is not None and event.kind is EventKind.ControlledShutdown else None


def controlled_shutdown_leaves_broker_clean(ppt: int):
    """Transition invariant builder: on the step in which the controller answers a broker's
    controlled shutdown with no partition left (the broker's shutdown becomes DONE), every
    partition the controller acts on (the broker in an assignment of more than one replica, with
    leadership info, topic not queued for deletion) has another leader and an ISR without the
    broker (sole member aside), and every one the broker followed when the event began got
    StopReplica(delete=false) in this event (kafka@2.6.x:core/src/main/scala/kafka/controller/
    KafkaController.scala doControlledShutdown: `partitionsToActOn`, the led ones re-elected with
    ControlledShutdownPartitionLeaderElectionStrategy, the followed ones
    `addStopReplicaRequestForBrokers(..., deletePartition = false)` then OfflineReplica, which
    shrinks the ISR; core/src/main/scala/kafka/server/KafkaServer.scala controlledShutdown
    retries until `partitionsRemaining` is empty)."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        if type(a) is not ControllerProcessEvent:
            return True
        done = [b for b, (x, y) in enumerate(zip(s.brokers, t.brokers))
                if y.shutdown is Shutdown.DONE and x.shutdown is not Shutdown.DONE]
        if not done:
            return True
        c = a.broker
        if writes_fail(s, c):
            # 2.6 answers the shutdown with nothing left while the broker is still in the ISR;
            # the broker's own session closing then takes it out (onBrokerFailure).
            return True
        before, after = s.brokers[c].ctx, t.brokers[c].ctx
        n = len(s.brokers)
        for b in done:
            sent = sent_in_step(s, t, c * n + b)
            stopped = {part.partition for r in sent if r.kind is RequestKind.StopReplica
                       for part in r.partitions if not part.delete}
            for p, assigned in enumerate(after.assignment):
                if (b not in assigned or len(assigned) < 2 or after.leadership[p] == NO_ZNODE
                        or after.topics_to_delete >> (p // ppt) & 1):
                    continue
                z = t.zk.partitions[p]
                if z.leader == b or (b in z.isr and len(z.isr) > 1):
                    return False
                followed = before.leadership[p] != NO_ZNODE and before.leadership[p].leader != b
                if followed and p not in stopped:
                    return False
        return True
    return holds


def controlled_shutdown_elects_another(judge: Judge):
    """Transition invariant builder: while the controller handles broker b's ControlledShutdown, no
    controlled-shutdown election chooses b: `doControlledShutdown` adds b to
    `shuttingDownBrokerIds` before the election, whose algorithm leaves shutting-down brokers out
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala doControlledShutdown;
    Election.scala / PartitionStateMachine.scala `controlledShutdownPartitionLeaderElection`:
    `!shuttingDownBrokers.contains(id)`)."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        event = _controlled_shutdown_handled(s, a)
        if event is None:
            return True
        return all(e.chosen != event.a for e in judge.elections(s, a)
                   if e.strategy is Strategy.CONTROLLED_SHUTDOWN)
    return holds


def controlled_shutdown_retried_only_with_partitions_left(ppt: int):
    """Transition invariant builder: when the active controller accepts a controlled shutdown
    (the broker is in its shutting-down set after the event) and answers it with a retry, some
    partition it acts on is still led by the broker: the answer is `partitionsRemaining`,
    `partitionLeadersOnBroker` after the elections (kafka@2.6.x:core/src/main/scala/kafka/
    controller/KafkaController.scala doControlledShutdown; core/src/main/scala/kafka/server/
    KafkaServer.scala controlledShutdown retries while it is non-empty)."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        event = _controlled_shutdown_handled(s, a)
        if event is None:
            return True
        b, c = event.a, t.brokers[a.broker]
        if not (s.brokers[b].shutdown is Shutdown.AWAITING and t.brokers[b].shutdown is Shutdown.RETRY):
            return True
        ctx = c.ctx
        if not c.active or not ctx.shutting_down >> b & 1 or t.zk.controller_epoch != ctx.epoch:
            return True
        return any(b in assigned and len(assigned) > 1 and ctx.leadership[p] != NO_ZNODE
                   and ctx.leadership[p].leader == b and not ctx.topics_to_delete >> (p // ppt) & 1
                   for p, assigned in enumerate(ctx.assignment))
    return holds


def controlled_shutdown_moves_leadership(ppt: int):
    """Transition invariant builder: an accepted ControlledShutdown of broker b (b live in the
    controller's view and marked shutting down after the event) leaves b leading no partition
    (assigned more than one replica, topic not queued for deletion) that had another live, not
    shutting-down ISR member."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        event = handled(s, a, t, EventKind.ControlledShutdown)
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
            z = agreed(s, before, p)
            if z is None or z.leader != b:
                continue
            if any(r != b and r in z.isr and online >> r & 1 for r in assigned) and t.zk.partitions[p].leader == b:
                return False
        return True
    return holds


def controlled_shutdown_eventually_completes(s: Cluster, judge: Settledness = AFRESH) -> bool:
    if not judge.quiescent(s):
        return True
    return all(not s.brokers[b].ctx.shutting_down for b in active_controllers(s))


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("NoShuttingDownJoinsIsr",
                "no replica on a broker the controller knows is shutting down joins an ISR",
                Kind.TRANSITION, as_is(no_shutting_down_joins_isr),
                reads=frozenset({Part.CONTROLLER_MODULES, Part.ZOOKEEPER}), judges=(LeaderExpandIsr,),
                findings=((findings.SHUTTING_DOWN_REJOINS_ISR, findings.isr_admission_of_2_6),)),
    Declaration("ControlledShutdownLeavesBrokerClean",
                "a controlled shutdown answered with nothing left leaves the broker leading nothing, "
                "out of the ISRs, its followed replicas stopped",
                Kind.TRANSITION, per_topic(controlled_shutdown_leaves_broker_clean),
                judges=CONTROLLER_EVENTS),
    Declaration("ControlledShutdownElectsAnother",
                "a controlled-shutdown election never chooses the broker shutting down",
                Kind.TRANSITION, from_judge(controlled_shutdown_elects_another),
                judges=CONTROLLER_EVENTS),
    Declaration("ControlledShutdownRetriedOnlyWithPartitionsLeft",
                "an accepted controlled shutdown is answered with a retry only while the broker still leads",
                Kind.TRANSITION, per_topic(controlled_shutdown_retried_only_with_partitions_left),
                judges=CONTROLLER_EVENTS),
    Declaration("ControlledShutdownMovesLeadership",
                "an accepted controlled shutdown moves every partition the broker leads that has another "
                "online ISR member",
                Kind.TRANSITION, per_topic(controlled_shutdown_moves_leadership),
                judges=CONTROLLER_EVENTS),
    Declaration("ControlledShutdownEventuallyCompletes",
                "once quiescent, the active controller holds no broker as shutting down",
                Kind.LIVENESS, with_judge(controlled_shutdown_eventually_completes), where=Judged.QUIESCENT),
)
