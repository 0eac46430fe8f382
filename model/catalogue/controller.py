"""The controller and its epochs: one active controller, whose writes are fenced by its epoch.

Kafka 2.6 elects the controller through the ephemeral `/controller` znode and numbers its terms
with `/controller_epoch`: the broker that creates `/controller` increments the epoch in the same
ZooKeeper transaction, and every later write of the controller is conditional on that epoch's
zkVersion (kafka@2.6.x:core/src/main/scala/kafka/zk/KafkaZkClient.scala
registerControllerAndIncrementControllerEpoch, wrapRequestWithControllerEpochCheck). A controller
that lost `/controller` resigns (`onControllerResignation`); until it notices, its writes fail the
fence.

So: no two active controller modules share an epoch; only an active one acts; every write it
makes is at the current epoch; and once the cluster has stopped healing exactly one controller is
active, the one `/controller` names (Kafka 2.6 can be left without one when an operator deletes
`/controller` at the wrong moment: Findings 10).

A controller module that is not active has no request queued for any broker. Only an active
controller sends (`OnlyActiveControllerActs`), and resigning shuts the channel manager down,
which stops each broker's send thread and clears its queue
(kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala onControllerResignation,
`controllerChannelManager.shutdown()`; kafka@2.6.x:core/src/main/scala/kafka/controller/
ControllerChannelManager.scala shutdown, removeExistingBroker `messageQueue.clear()`). A queue left
behind would reach brokers with the resigned controller's epoch after it has stopped answering for
them. The model's channel `c -> d` holds both the queue and the request on the wire, and the
resignation drops both: a request already written to the socket when the send thread stops,
which Kafka may still deliver, is not represented; nor are the state machines' request batches,
which 2.6 keeps across a resignation (docs/model.md, "Abstractions and omissions": the model
discards a batch interrupted by ControllerMoved). The rest of what a resignation gives up is
judged elsewhere: the context (`NoStaleContextWhenInactive`, metadata.py), the handlers
(`NoControllerWatchesWhenInactive`, watches.py). The scheduled work (`kafkaScheduler.shutdown()`:
the automatic rebalance) is no state of the model: its action is enabled only at an active
controller (model/spec.py `SchedulerAutoRebalance`), as 2.6's task reschedules itself only while
active (`processAutoPreferredReplicaLeaderElection`). Events already in the queue stay, in the
model as in Kafka, whose handlers drop them with `if (!isActive) return`.
"""

from __future__ import annotations

from kcm.model.actions import ControllerProcessEvent
from kcm.model.catalogue import findings
from kcm.model.catalogue.declaration import (
    CONTROLLER_EVENTS,
    Declaration,
    Judged,
    Kind,
    Part,
    as_is,
    with_judge,
)
from kcm.model.catalogue.settledness import AFRESH, Settledness
from kcm.model.catalogue.views import active_controllers
from kcm.model.cluster import Cluster, Ghost


def single_active_controller_per_epoch(s: Cluster) -> bool:
    epochs = [s.brokers[b].ctx.epoch for b in active_controllers(s)]
    return len(epochs) == len(set(epochs))


def only_active_controller_acts(s: Cluster) -> bool:
    return not s.ghost & Ghost.ACTED_WHILE_INACTIVE


_CONTROLLER_DATA = ("assignment", "adding", "removing", "partitions", "reassign", "preferred",
                    "delete_topics", "isr_changes", "log_dir_events")


def zk_writes_fenced(s: Cluster, a, t: Cluster) -> bool:
    """Every controller ZooKeeper write happens at the current /controller_epoch."""
    if type(a) is not ControllerProcessEvent or s.zk is t.zk:
        return True
    if all(getattr(s.zk, f) is getattr(t.zk, f) or getattr(s.zk, f) == getattr(t.zk, f) for f in _CONTROLLER_DATA):
        return True
    b = a.broker
    if t.zk.controller_epoch != s.zk.controller_epoch:
        # `b` won the election in this step, so it wrote at the new epoch, even if its failover then
        # failed and it resigned in the same step (`triggerControllerMove`)
        return True
    writer_epoch = t.brokers[b].ctx.epoch if t.brokers[b].active else s.brokers[b].ctx.epoch
    return writer_epoch == t.zk.controller_epoch


def no_queued_requests_when_inactive(s: Cluster) -> bool:
    """Every broker whose controller module is not active (resigned, or never elected) has every
    channel to the brokers empty."""
    nb = len(s.brokers)
    net = s.net
    return all(broker.active or not any(net[c * nb:(c + 1) * nb]) for c, broker in enumerate(s.brokers))


def eventually_one_active_controller(s: Cluster, judge: Settledness = AFRESH) -> bool:
    if not judge.quiescent(s):
        return True
    active = active_controllers(s)
    return len(active) == 1 and s.zk.controller == active[0]


def active_controller_once_settled(s: Cluster, judge: Settledness = AFRESH) -> bool:
    """Settled: exactly one controller module is active, the one `/controller` names."""
    if not judge.settled(s):
        return True
    active = active_controllers(s)
    return len(active) == 1 and s.zk.controller == active[0]


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("SingleActiveControllerPerEpoch", "no two active controller modules share an epoch",
                Kind.STATE, as_is(single_active_controller_per_epoch),
                reads=frozenset({Part.CONTROLLER_MODULES})),
    Declaration("OnlyActiveControllerActs",
                "only an active controller batches requests or writes controller znodes",
                Kind.STATE, as_is(only_active_controller_acts), reads=frozenset({Part.GHOST})),
    Declaration("ZkWritesFenced", "every controller write to ZooKeeper happens at the current /controller_epoch",
                Kind.TRANSITION, as_is(zk_writes_fenced),
                reads=frozenset({Part.CONTROLLER_MODULES, Part.ZOOKEEPER}), judges=CONTROLLER_EVENTS),
    Declaration("NoQueuedRequestsWhenInactive",
                "a controller module that is not active has no request queued for any broker",
                Kind.STATE, as_is(no_queued_requests_when_inactive),
                reads=frozenset({Part.CHANNELS, Part.CONTROLLER_MODULES})),
    Declaration("EventuallyOneActiveController",
                "with every broker up and nothing left to heal, exactly one controller is active and "
                "/controller names it",
                Kind.LIVENESS, with_judge(eventually_one_active_controller), where=Judged.QUIESCENT,
                findings=((findings.NO_CONTROLLER_AFTER_OPERATOR_MOVE, findings.two_controller_moves),)),
    Declaration("ActiveControllerOnceSettled",
                "once the cluster has settled around its faults, exactly one controller is active and "
                "/controller names it",
                Kind.LIVENESS, with_judge(active_controller_once_settled), where=Judged.SETTLED,
                findings=((findings.NO_CONTROLLER_AFTER_OPERATOR_MOVE, findings.controller_moves),)),
)
