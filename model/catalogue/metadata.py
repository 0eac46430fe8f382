"""The controller's metadata: what its context caches is what ZooKeeper holds.

Kafka 2.6's controller keeps its metadata in `ControllerContext`: the live brokers and their
epochs, every partition's assignment and leadership (leader, leader epoch, ISR, zkVersion), the
topics queued for deletion. A failover fills it from ZooKeeper (`initializeControllerContext`),
every later change of ZooKeeper the controller makes it caches as it writes
(`partitionLeadershipInfo.put` after `updateLeaderAndIsr`), a leader's own ISR change reaches it
through the ISR-change notification (`processIsrChangeNotification` -> `updateLeaderAndIsrCache`),
and a resignation empties it (`resetContext`)
(kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala,
kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerContext.scala).

So: a new controller's context is a function of ZooKeeper when its failover ends; after each
write the cache equals the znode written; an inactive controller module holds the empty context;
and once the cluster is quiescent the active controller's leadership cache and broker epochs equal
ZooKeeper's (Kafka 2.6 breaks the first after a lost reply to a partition-state create: Findings 7).
"""

from __future__ import annotations

from collections.abc import Callable

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
from kcm.model.catalogue.settledness import AFRESH, Judge, Settledness
from kcm.model.catalogue.views import active_controllers
from kcm.model.cluster import NO_ZNODE, Cluster, Context, Zk, empty_context
from kcm.model.config import ModelConfig


def cache_matches_zk_after_write(s: Cluster, a, t: Cluster) -> bool:
    """After an event in which the active controller wrote a partition state znode, its cached
    leadership of that partition (leader, leader epoch, ISR, zkVersion) equals the znode: every
    controller write goes through `updateLeaderAndIsr` and caches what it wrote
    (kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala,
    ReplicaStateMachine.scala `controllerContext.partitionLeadershipInfo.put`). The quiescent
    CacheMatchesZk only sees the cache once the cluster has settled, when a later re-read may have
    repaired it."""
    if type(a) is not ControllerProcessEvent or s.zk.partitions is t.zk.partitions:
        return True
    broker = t.brokers[a.broker]
    if not broker.active:
        return True
    cache = broker.ctx.leadership
    for p, (before, after) in enumerate(zip(s.zk.partitions, t.zk.partitions)):
        if after is not before and after != before and after != NO_ZNODE:
            c = cache[p]
            if (c.leader, c.leader_epoch, c.isr, c.version) != (after.leader, after.leader_epoch, after.isr,
                                                                 after.version):
                return False
    return True


def context_from_zk(zk: Zk, topics: int, ppt: int) -> dict:
    """What `initializeControllerContext` reads from ZooKeeper, as the context fields it fills
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    initializeControllerContext, fetchTopicDeletionsInProgress): the registered brokers and their
    epochs, the assignments with their adding/removing replicas (KIP-455), the leadership of every
    partition of an existing topic (leader, leader epoch, ISR, zkVersion), the topics queued for
    deletion that still exist."""
    existing = 0
    for t in range(topics):
        if zk.assignment[t * ppt]:
            existing |= 1 << t
    return {
        "live": sum(1 << b for b, e in enumerate(zk.broker_epochs) if e),
        "broker_epochs": zk.broker_epochs,
        "assignment": zk.assignment, "adding": zk.adding, "removing": zk.removing,
        "leadership": tuple((z.leader, z.leader_epoch, z.isr, z.version) if z != NO_ZNODE and zk.assignment[p] else None
                            for p, z in enumerate(zk.partitions)),
        "topics_to_delete": zk.delete_topics & existing,
    }


def _context_fields(ctx) -> dict:
    return {
        "live": ctx.live, "broker_epochs": ctx.broker_epochs,
        "assignment": ctx.assignment, "adding": ctx.adding, "removing": ctx.removing,
        "leadership": tuple(None if z == NO_ZNODE else (z.leader, z.leader_epoch, z.isr, z.version)
                            for z in ctx.leadership),
        "topics_to_delete": ctx.topics_to_delete,
    }


def context_derived_from_zk(topics: int, ppt: int):
    """Transition invariant builder: on the step in which a broker becomes the active controller
    (its `onControllerFailover` runs to the end of the event), its context equals
    `context_from_zk` of ZooKeeper after the step: everything it caches it read or wrote itself."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        if type(a) is not ControllerProcessEvent:
            return True
        b = a.broker
        if s.brokers[b].active or not t.brokers[b].active:
            return True
        return _context_fields(t.brokers[b].ctx) == context_from_zk(t.zk, topics, ppt)
    return holds


def no_stale_context_when_inactive(s: Cluster, empty: Context | None = None) -> bool:
    """A controller module that is not active holds the empty context (`onControllerResignation`
    ends with `controllerContext.resetContext()`), so nothing a resigned controller cached can leak
    into a later failover of the same broker. `empty`: the empty context of the state's size,
    computed once per model by the catalogue."""
    if empty is None:
        empty = empty_context(len(s.brokers), len(s.zk.partitions))
    return all(b.active or b.ctx == empty for b in s.brokers)


def cache_matches_zk(s: Cluster, judge: Settledness = AFRESH) -> bool:
    """Quiescent: the active controller's cached leadership of every partition (leader, leader
    epoch and ISR) equals the state znode. A leader's own ISR change reaches the cache through
    the ISR-change notification: `processIsrChangeNotification` -> `updateLeaderAndIsrCache`, its
    child watch armed at failover (`onControllerFailover`,
    `registerZNodeChildChangeHandler(isrChangeNotificationHandler)`) and re-armed by each read
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala)."""
    if not judge.quiescent(s):
        return True
    for b in active_controllers(s):
        ctx = s.brokers[b].ctx
        for p, z in enumerate(s.zk.partitions):
            c = ctx.leadership[p]
            if (z == NO_ZNODE) != (c == NO_ZNODE):
                return False
            if z != NO_ZNODE and (c.leader, c.leader_epoch, c.isr) != (z.leader, z.leader_epoch, z.isr):
                return False
    return True


def broker_incarnation_tracked(s: Cluster, judge: Settledness = AFRESH) -> bool:
    if not judge.quiescent(s):
        return True
    zk = s.zk
    for b in active_controllers(s):
        ctx = s.brokers[b].ctx
        if any(zk.broker_epochs[d] and ctx.broker_epochs[d] != zk.broker_epochs[d] for d in range(len(s.brokers))):
            return False
    return True


def _no_stale_context(cfg: ModelConfig, judge: Judge) -> Callable[[Cluster], bool]:
    size = (cfg.brokers, cfg.topics * cfg.partitions)
    empty = empty_context(*size)

    def holds(s: Cluster) -> bool:
        # A state of another size than the config's (`kcm simulate` judges the implementation's
        # cluster with a config of its broker count only) gets the empty context of its own size.
        same = (len(s.brokers), len(s.zk.partitions)) == size
        return no_stale_context_when_inactive(s, empty if same else None)

    return holds


def _context_derived(cfg: ModelConfig, judge: Judge) -> Callable[[Cluster, object, Cluster], bool]:
    return context_derived_from_zk(cfg.topics, cfg.partitions)


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("CacheMatchesZkAfterWrite",
                "the active controller's cached leadership equals each partition znode it just wrote",
                Kind.TRANSITION, as_is(cache_matches_zk_after_write),
                reads=frozenset({Part.CONTROLLER_MODULES, Part.ZOOKEEPER}), judges=CONTROLLER_EVENTS),
    Declaration("ContextDerivedFromZk",
                "a new controller's context is a function of ZooKeeper when its failover ends",
                Kind.TRANSITION, _context_derived,
                judges=CONTROLLER_EVENTS),
    Declaration("NoStaleContextWhenInactive", "a controller module that is not active holds the empty context",
                Kind.STATE, _no_stale_context, reads=frozenset({Part.CONTROLLER_MODULES})),
    Declaration("CacheMatchesZk",
                "once quiescent, the active controller caches every partition's leader, leader epoch and ISR "
                "as its znode holds them",
                Kind.LIVENESS, with_judge(cache_matches_zk), where=Judged.QUIESCENT,
                findings=((findings.LOST_CREATE_REPLY, findings.lost_create_replies),)),
    Declaration("BrokerIncarnationTracked",
                "once quiescent, the active controller knows the current epoch of every registered broker",
                Kind.LIVENESS, with_judge(broker_incarnation_tracked), where=Judged.QUIESCENT),
)
