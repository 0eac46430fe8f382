"""The properties the model is checked against: named, one concern each (reference §7).

Three kinds (`kcm.checker.engine.contract`):

- `Always` state invariants, checked on every reachable state. Those of kind "quiescence" are the
  bounded form of the liveness catalogue: they hold in every state where no healing action is
  enabled (`quiescent`): every broker up, no event queued, no request in flight, no ISR expansion
  pending. Faults and admin operations are bounded, so every run reaches such a state or keeps
  healing.
- `AlwaysStep` transition invariants over (state, action, next state). Some read what happened
  inside the step that the next state does not show (the elections made, the table edges taken):
  `observe` replays the step and returns those observations (`kcm.model.cluster.Edge`,
  `Election`).
- `Sometimes` goals: the model must reach them, or it is vacuous. A goal whose feature the config
  switches off (unclean election, a zero budget) is not listed.

`properties_for(config, observe)` builds the list for one config.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from kcm.checker.engine.contract import Always, AlwaysStep, Sometimes
from kcm.model.actions import ControllerProcessEvent, LeaderExpandIsr, NetworkDeliver
from kcm.model.cluster import (
    NO_REPLICA,
    NO_ZNODE,
    NONE,
    Cluster,
    Edge,
    Election,
    EventKind,
    Ghost,
    RequestKind,
    Shutdown,
    Zk,
    empty_context,
)
from kcm.model.config import ModelConfig
from kcm.model.state_machines import Strategy
from kcm.model.states import ReplicaState


def quiescent(s: Cluster) -> bool:
    """No healing action is enabled: `settled` with every broker up (so every session alive,
    nothing queued or in flight, no leader able to expand its ISR). Remembered for the last state
    asked about, as `settled` is."""
    global _last_quiescent
    last = _last_quiescent
    if last[0] is s:
        return last[1]
    answer = all(b.up for b in s.brokers) and settled(s)
    _last_quiescent = (s, answer)
    return answer


_last_quiescent: tuple = (None, False)


#: The last state `settled` judged, with its answer: a dozen quiescence and settled properties ask
#: about the same state in a row, and a `Cluster` is immutable, so its identity is the key (the
#: reference held keeps the id from being reused; the pair is replaced whole, so threads are safe).
_last_settled: tuple = (None, False)


def settled(s: Cluster) -> bool:
    """The cluster has settled around its faults: every healing action is done except restarting
    the dead brokers (`BrokerStart`), which may stay dead.

    Precisely: some broker is up; every broker that is up is connected, holds a live ZooKeeper
    session (no expiry it has not noticed), has no event queued (so no watch notification and no
    event of any controller is pending: the model delivers a watch by queueing its event at once)
    and no controlled shutdown under way; every dead broker's session has expired (its
    `/brokers/ids` znode is gone, so the failure is visible in ZooKeeper and its BrokerChange has
    been handled); no request is in flight to a broker that is up (a request queued for a dead
    broker cannot be delivered and waits for the controller's BrokerChange to drop it); and no
    leader can expand its ISR. `quiescent` is `settled` with every broker up."""
    global _last_settled
    last = _last_settled
    if last[0] is s:
        return last[1]
    answer = _settled(s)
    _last_settled = (s, answer)
    return answer


def _settled(s: Cluster) -> bool:
    up = False
    zk = s.zk
    for b, broker in enumerate(s.brokers):
        if not broker.up:
            if zk.session >> b & 1:
                return False
            continue
        up = True
        if broker.queue or not broker.connected or broker.shutdown is not Shutdown.NONE or not zk.session >> b & 1:
            return False
    if not up:
        return False
    n = len(s.brokers)
    for i, queue in enumerate(s.net):
        if queue and s.brokers[i % n].up:
            return False
    return not _isr_expansion_pending(s)


def _isr_expansion_pending(s: Cluster) -> bool:
    """Some leader can add a caught-up follower to its ISR (`LeaderExpandIsr` is enabled)."""
    zk = s.zk
    for b, broker in enumerate(s.brokers):
        for p, r in enumerate(broker.replicas):
            if r.leader == b and not r.stopped and zk.partitions[p].version == r.zk_version:
                for f in r.replicas:
                    if f not in r.isr:
                        fr = s.brokers[f].replicas[p]
                        if fr.leader == b and fr.leader_epoch == r.leader_epoch and not fr.stopped:
                            return True
    return False


def writes_fail(s: Cluster, b: int) -> bool:
    """Broker `b`'s ZooKeeper session has expired (and its controller may not have noticed yet):
    every ZooKeeper access it makes fails with SESSIONEXPIRED, and the state machines log each
    failed partition and go on (kafka@2.6.x:core/src/main/scala/kafka/controller/
    PartitionStateMachine.scala doHandleStateChanges, ReplicaStateMachine.scala
    doRemoveReplicasFromIsr), so an event it handles writes nothing; the Expire event that follows
    resigns. A property about what a controller event writes does not judge such an event."""
    return not s.zk.session >> b & 1


def _registered(s: Cluster) -> set[int]:
    return {b for b, e in enumerate(s.zk.broker_epochs) if e}


def _active(s: Cluster) -> list[int]:
    return [b for b, br in enumerate(s.brokers) if br.active]


# ---- state invariants --------------------------------------------------------------------------


def single_active_controller_per_epoch(s: Cluster) -> bool:
    epochs = [s.brokers[b].ctx.epoch for b in _active(s)]
    return len(epochs) == len(set(epochs))


def unique_epoch_sender(s: Cluster) -> bool:
    """No two brokers send requests stamped with the same controller epoch: among the requests in
    flight and the UpdateMetadata each broker last applied, one epoch means one sender."""
    sender: dict[int, int] = {}
    for b in s.brokers:
        if b.metadata_controller >= 0:
            sender[b.metadata_epoch] = b.metadata_controller
    for queue in s.net:
        for r in queue:
            if sender.setdefault(r.controller_epoch, r.controller_id) != r.controller_id:
                return False
    return True


def leader_in_isr_or_none(s: Cluster) -> bool:
    return all(z.leader == NONE or z.leader in z.isr for z in s.zk.partitions if z != NO_ZNODE)


def isr_non_empty(s: Cluster) -> bool:
    return all(z.isr for z in s.zk.partitions if z != NO_ZNODE)


def only_active_controller_acts(s: Cluster) -> bool:
    return not s.ghost & Ghost.ACTED_WHILE_INACTIVE


# ---- quiescence invariants (liveness, bounded) -------------------------------------------------


def eventually_one_active_controller(s: Cluster) -> bool:
    if not quiescent(s):
        return True
    active = _active(s)
    return len(active) == 1 and s.zk.controller == active[0]


def offline_partition_eventually_online(s: Cluster) -> bool:
    if not quiescent(s):
        return True
    live = _registered(s)
    return all(z.leader != NONE or not (set(z.isr) & live)
               for z in s.zk.partitions if z != NO_ZNODE)


def controlled_shutdown_eventually_completes(s: Cluster) -> bool:
    if not quiescent(s):
        return True
    return all(not s.brokers[b].ctx.shutting_down for b in _active(s))


def topic_deletion_eventually_completes(s: Cluster) -> bool:
    return not quiescent(s) or s.zk.delete_topics == 0


def reassignment_eventually_completes(s: Cluster) -> bool:
    zk = s.zk
    return not quiescent(s) or not (any(zk.reassign) or any(zk.adding) or any(zk.removing))


def cache_matches_zk(s: Cluster) -> bool:
    """Quiescent: the active controller's cached leadership of every partition (leader, leader
    epoch and ISR) equals the state znode. A leader's own ISR change reaches the cache through
    the ISR-change notification: `processIsrChangeNotification` -> `updateLeaderAndIsrCache`, its
    child watch armed at failover (`onControllerFailover`,
    `registerZNodeChildChangeHandler(isrChangeNotificationHandler)`) and re-armed by each read
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala)."""
    if not quiescent(s):
        return True
    for b in _active(s):
        ctx = s.brokers[b].ctx
        for p, z in enumerate(s.zk.partitions):
            c = ctx.leadership[p]
            if (z == NO_ZNODE) != (c == NO_ZNODE):
                return False
            if z != NO_ZNODE and (c.leader, c.leader_epoch, c.isr) != (z.leader, z.leader_epoch, z.isr):
                return False
    return True


def broker_incarnation_tracked(s: Cluster) -> bool:
    if not quiescent(s):
        return True
    zk = s.zk
    for b in _active(s):
        ctx = s.brokers[b].ctx
        if any(zk.broker_epochs[d] and ctx.broker_epochs[d] != zk.broker_epochs[d] for d in range(len(s.brokers))):
            return False
    return True


def at_most_one_believed_leader(s: Cluster) -> bool:
    """After quiescence, among the brokers in a partition's assignment (`/brokers/topics`) at most
    one believes it leads the partition, and that one is the ZooKeeper leader. A broker outside the
    assignment is not constrained: Kafka 2.6 can leave a replica that a reassignment removed
    believing it leads, for good (docs/model.md, Findings 4)."""
    if not quiescent(s):
        return True
    for p, z in enumerate(s.zk.partitions):
        believers = [b for b in s.zk.assignment[p]
                     if s.brokers[b].replicas[p].leader == b and not s.brokers[b].replicas[p].stopped]
        if len(believers) > 1 or (believers and believers[0] != z.leader):
            return False
    return True


def admin_znodes_consumed(s: Cluster) -> bool:
    """Quiescent: `/admin/preferred_replica_election`, `/admin/reassign_partitions` and
    `/admin/delete_topics` hold nothing: every request an operator wrote was carried out or refused
    and its entry deleted, whichever controller took it over
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    onReplicaElection's `removePartitionsFromPreferredReplicaElection`,
    `removePartitionsFromReassignedPartitions`, TopicDeletionManager `completeDeleteTopic`)."""
    if not quiescent(s):
        return True
    zk = s.zk
    return not zk.preferred and not any(zk.reassign) and not zk.delete_topics


# ---- settled invariants (liveness, bounded, judged with dead brokers left dead) ----------------


def _settled_under_a_controller(s: Cluster) -> bool:
    """Settled, and `/controller` names a live broker whose controller module is active: the
    settled properties judge what a controller did. Whether one always remains is
    ActiveControllerOnceSettled's business (Kafka 2.6 can be left without one: Findings 10)."""
    c = s.zk.controller
    return settled(s) and c != NONE and s.brokers[c].up and s.brokers[c].active


def active_controller_once_settled(s: Cluster) -> bool:
    """Settled: exactly one controller module is active, the one `/controller` names."""
    if not settled(s):
        return True
    active = _active(s)
    return len(active) == 1 and s.zk.controller == active[0]


def _judged_partitions(s: Cluster, ppt: int):
    """(p, znode) for each partition with a state znode whose topic is not queued for deletion.

    Topics queued for deletion are left out: Kafka 2.6 neither elects for them
    (`triggerOnlinePartitionStateChange` filters `isTopicQueuedUpForDeletion`) nor shrinks their
    ISR when a replica dies (`onReplicasBecomeOffline` sends their replicas to
    `failReplicaDeletion`, ReplicaDeletionIneligible, not to OfflineReplica): their dead leader
    stays in ZooKeeper until the broker comes back and the deletion completes
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala onReplicasBecomeOffline)."""
    deleting = s.zk.delete_topics
    for p, z in enumerate(s.zk.partitions):
        if z != NO_ZNODE and not deleting >> (p // ppt) & 1:
            yield p, z


def no_dead_leader_advertised(s: Cluster, ppt: int = 1) -> bool:
    """Settled: no partition state znode names a dead (unregistered) broker as leader. OfflineReplica
    sets the leader to -1 when it removes the leader from the ISR (`removeReplicasFromIsr`:
    `newLeader = if (replicaId == leader) NoLeader`)."""
    if not _settled_under_a_controller(s):
        return True
    live = _registered(s)
    return all(z.leader == NONE or z.leader in live for _, z in _judged_partitions(s, ppt))


def dead_replica_only_as_sole_isr_member(s: Cluster, ppt: int = 1) -> bool:
    """Settled: a dead replica is in a ZooKeeper ISR only as its sole member (KAFKA-708 keeps the
    last member: `adjustedIsr = if (isr.size == 1) isr else isr.filter(_ != replicaId)`,
    kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala doRemoveReplicasFromIsr)."""
    if not _settled_under_a_controller(s):
        return True
    live = _registered(s)
    return all(len(z.isr) == 1 or all(r in live for r in z.isr) for _, z in _judged_partitions(s, ppt))


def preferred_election_znode_consumed(s: Cluster, ppt: int = 1) -> bool:
    """Settled: `/admin/preferred_replica_election` is gone. A preferred election does not wait
    for a dead broker: it is refused for a partition whose preferred replica is dead and the znode
    is deleted in `onReplicaElection`'s `finally` (or by the next controller's
    `onControllerFailover`, which takes over pending elections)."""
    return not settled(s) or not s.zk.preferred


def offline_partition_with_live_isr_gets_leader(s: Cluster, ppt: int = 1) -> bool:
    """Settled: a partition without a leader has no live ISR member (else the OfflinePartition ->
    OnlinePartition election of `onReplicasBecomeOffline` / `onBrokerStartup` /
    `partitionStateMachine.startup` would have chosen it)."""
    if not _settled_under_a_controller(s):
        return True
    live = _registered(s)
    return all(z.leader != NONE or not (set(z.isr) & live) for _, z in _judged_partitions(s, ppt))


# ---- transition invariants ---------------------------------------------------------------------

_CONTROLLER_DATA = ("assignment", "adding", "removing", "partitions", "reassign", "preferred",
                    "delete_topics", "isr_changes")


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


def stale_controller_rejected(s: Cluster, a, t: Cluster) -> bool:
    """A broker's highest accepted controller epoch never goes back."""
    if type(a) is not NetworkDeliver:
        return True
    return t.brokers[a.dst].controller_epoch >= s.brokers[a.dst].controller_epoch


def zk_leader_epoch_monotonic(s: Cluster, a, t: Cluster) -> bool:
    if s.zk.partitions is t.zk.partitions:
        return True
    for before, after in zip(s.zk.partitions, t.zk.partitions):
        if before != NO_ZNODE and after != NO_ZNODE and after.leader_epoch < before.leader_epoch:
            return False
    return True


def controller_bumps_leader_epoch(s: Cluster, a, t: Cluster) -> bool:
    """Every controller write of a partition state bumps the leader epoch by exactly one (and the
    zkVersion by one), so over one event both grow by the same amount."""
    if type(a) is not ControllerProcessEvent:
        return True
    for before, after in zip(s.zk.partitions, t.zk.partitions):
        if before == NO_ZNODE or after == NO_ZNODE or before is after:
            continue
        if after.version - before.version != after.leader_epoch - before.leader_epoch:
            return False
    return True


def broker_leader_epoch_monotonic(s: Cluster, a, t: Cluster) -> bool:
    if type(a) is not NetworkDeliver:
        return True
    before, after = s.brokers[a.dst].replicas, t.brokers[a.dst].replicas
    if before is after:
        return True
    return all(y is x or y == NO_REPLICA or y.leader_epoch >= x.leader_epoch for x, y in zip(before, after))


def no_stale_broker_epoch_applied(s: Cluster, a, t: Cluster) -> bool:
    if type(a) is not NetworkDeliver:
        return True
    request = s.net[a.src * len(s.brokers) + a.dst][0]
    before, after = s.brokers[a.dst], t.brokers[a.dst]
    return request.broker_epoch >= before.epoch or (before.replicas == after.replicas
                                                    and before.metadata_epoch == after.metadata_epoch)


def metadata_before_leader_and_isr(s: Cluster, a, t: Cluster) -> bool:
    """A broker applies a LeaderAndIsr of controller epoch e only after an UpdateMetadata of epoch e."""
    if type(a) is not NetworkDeliver:
        return True
    request = s.net[a.src * len(s.brokers) + a.dst][0]
    if request.kind is not RequestKind.LeaderAndIsr or s.brokers[a.dst].replicas == t.brokers[a.dst].replicas:
        return True
    return s.brokers[a.dst].metadata_epoch >= request.controller_epoch


def no_shutting_down_joins_isr(s: Cluster, a, t: Cluster) -> bool:
    """A replica on a broker the active controller knows is shutting down does not join an ISR.
    Controlled shutdown moved leadership away and removed the replica from the ISR
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala doControlledShutdown);
    letting it back in makes it a leader candidate for a broker about to stop. Kafka 2.6 breaks
    it (docs/model.md, Findings 8); KIP-841 (3.4) fixed it (`isr_admission = "kip-841"`)."""
    if type(a) is not LeaderExpandIsr:
        return True
    p, f = a.partition, a.follower
    if f in s.zk.partitions[p].isr or f not in t.zk.partitions[p].isr:
        return True
    c = s.zk.controller
    return c == NONE or not s.brokers[c].active or not s.brokers[c].ctx.shutting_down >> f & 1


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
            if (c.leader, c.leader_epoch, c.isr, c.version) != (after.leader, after.leader_epoch, after.isr, after.version):
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


def no_stale_context_when_inactive(s: Cluster) -> bool:
    """A controller module that is not active holds the empty context (`onControllerResignation`
    ends with `controllerContext.resetContext()`), so nothing a resigned controller cached can leak
    into a later failover of the same broker."""
    empty = _empty_context(len(s.brokers), len(s.zk.partitions))
    return all(b.active or b.ctx == empty for b in s.brokers)


@functools.lru_cache(maxsize=16)
def _empty_context(nb: int, np_: int):
    return empty_context(nb, np_)


# ---- issue 13: properties the mutation triage asked for (docs/checking.md, "kcm mutate") --------


def replica_states_match_liveness(s: Cluster, ppt: int = 1) -> bool:
    """Quiescent (every broker up): the active controller holds every assigned replica of a topic
    not queued for deletion as OnlineReplica. A broker's failure moves its replicas to
    OfflineReplica and its startup back to OnlineReplica; a reassignment's new replicas go
    NewReplica -> OnlineReplica (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    onBrokerFailure / onReplicasBecomeOffline, onBrokerStartup, onPartitionReassignment;
    ReplicaStateMachine.scala startup)."""
    if not quiescent(s):
        return True
    for b in _active(s):
        ctx = s.brokers[b].ctx
        for p, assigned in enumerate(ctx.assignment):
            if ctx.topics_to_delete >> (p // ppt) & 1:
                continue
            if any(ctx.replica_states[p][r] is not ReplicaState.OnlineReplica for r in assigned):
                return False
    return True


def led_partitions(zk, ppt: int):
    """(partition, state znode) of every partition ZooKeeper names a leader for, of a topic not
    queued for deletion (its replicas are stopped on purpose): what the leader-side quiescence
    properties judge."""
    for p, z in enumerate(zk.partitions):
        if z != NO_ZNODE and z.leader != NONE and not zk.delete_topics >> (p // ppt) & 1:
            yield p, z


def brokers_follow_the_leader(s: Cluster, ppt: int = 1) -> bool:
    """Quiescent: every broker in a partition's assignment holds a replica, not stopped, that
    follows (or is) the state znode's leader at the znode's leader epoch. Every leader change the
    controller writes is sent to the assigned replicas as LeaderAndIsr, and a broker named in the
    request's replica list applies a newer leader epoch (kafka@2.6.x:core/src/main/scala/kafka/
    server/ReplicaManager.scala becomeLeaderOrFollower; core/src/main/scala/kafka/controller/
    ControllerChannelManager.scala addLeaderAndIsrRequestForBrokers). Topics queued for deletion
    are stopped on purpose, and a replica outside the assignment is not judged (Findings 4)."""
    if not quiescent(s):
        return True
    zk = s.zk
    for p, z in led_partitions(zk, ppt):
        for b in zk.assignment[p]:
            r = s.brokers[b].replicas[p]
            if r.leader != z.leader or r.leader_epoch != z.leader_epoch or r.stopped:
                return False
    return True


def preferred_election_moves_leader(elections) -> bool:
    """Every preferred replica election changes the leader: 2.6 elects only partitions whose
    leader is not the preferred replica (kafka@2.6.x:core/src/main/scala/kafka/controller/
    KafkaController.scala processReplicaLeaderElection's `partitionsWithoutPreferredLeader` filter,
    fetchPendingPreferredReplicaElections, checkAndTriggerAutoLeaderRebalance's
    `topicsNotInPreferredReplica`), so an election that keeps the leader is a needless
    leader-epoch bump and LeaderAndIsr round."""
    return all(e.chosen != e.old_leader for e in elections if e.strategy is Strategy.PREFERRED)


def offline_election_for_offline_leader(elections) -> bool:
    """An election with an offline strategy is for a partition whose leader is not online (-1, or
    dead or shutting down in the controller's view): `triggerOnlinePartitionStateChange` elects
    only New and Offline partitions, and a partition is Offline when its leader is not
    `isReplicaOnline` (kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
    triggerOnlinePartitionStateChange, partitionsWithOfflineLeader in KafkaController.scala
    onReplicasBecomeOffline; PartitionStateMachine.startup)."""
    offline = (Strategy.OFFLINE, Strategy.OFFLINE_ALLOW_UNCLEAN)
    return all(e.old_leader == NONE or not e.online >> e.old_leader & 1 for e in elections if e.strategy in offline)


def new_partition_from_live_replicas(s: Cluster, a, t: Cluster) -> bool:
    """A partition state znode the active controller creates names live replicas only: the ISR
    a subset of the assignment on brokers live and not shutting down in its view, the leader (at
    leader epoch 0) the first of them (kafka@2.6.x:core/src/main/scala/kafka/controller/
    PartitionStateMachine.scala initializeLeaderAndIsrForPartitions: `liveReplicas =
    replicas.filter(replica => controllerContext.isReplicaOnline(replica, partition))`, `leader =
    liveReplicas.head`, `isr = liveReplicas.toList`). Judged at the end of the event, in the
    controller's view then: a broker bounced in that event may be missing from the ISR, never the
    other way round, and a later election of the same event (a reassignment's) may have moved the
    leader and bumped the epoch, but only ever shrinks the ISR."""
    if type(a) is not ControllerProcessEvent or s.zk.partitions is t.zk.partitions:
        return True
    broker = t.brokers[a.broker]
    if not broker.active:
        return True
    ctx = broker.ctx
    online = ctx.live & ~ctx.shutting_down
    for p, (before, after) in enumerate(zip(s.zk.partitions, t.zk.partitions)):
        if before == NO_ZNODE and after != NO_ZNODE:
            if not after.isr or (after.leader_epoch == 0 and after.leader != after.isr[0]):
                return False
            if any(r not in ctx.assignment[p] or not online >> r & 1 for r in after.isr):
                return False
    return True


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
            i = c * n + b
            sent = t.net[i][len(s.net[i]):] if t.net[i][:len(s.net[i])] == s.net[i] else t.net[i]
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


def deleted_topic_leaves_no_replica(s: Cluster, a, t: Cluster) -> bool:
    """When a topic's deletion completes (its `/brokers/topics` assignment goes), no broker of its
    assignment still holds a replica of it: completion waits for every replica to be
    ReplicaDeletionSuccessful, which only the broker's answer to StopReplica(delete=true) makes
    (kafka@2.6.x:core/src/main/scala/kafka/controller/TopicDeletionManager.scala
    resumeDeletions / completeDeleteTopic, onPartitionDeletion; core/src/main/scala/kafka/server/
    ReplicaManager.scala stopReplicas). A broker that died lost its replicas with its memory."""
    if type(a) is not ControllerProcessEvent or s.zk.assignment is t.zk.assignment:
        return True
    for p, (x, y) in enumerate(zip(s.zk.assignment, t.zk.assignment)):
        if x and not y and any(t.brokers[b].replicas[p] != NO_REPLICA for b in x):
            return False
    return True


def reassignment_sets_disjoint(s: Cluster) -> bool:
    """In `/brokers/topics` every partition's adding and removing replicas (KIP-455's AR and RR)
    are disjoint and within its replicas: `ReplicaAssignment` derives them from the original and
    target replicas (`addingReplicas = targetReplicas -- originReplicas`, `removingReplicas =
    originReplicas -- targetReplicas`), and a resumed reassignment passes the stored ones on
    (kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerContext.scala ReplicaAssignment;
    KafkaController.scala maybeResumeReassignments, onPartitionReassignment)."""
    zk = s.zk
    for replicas, adding, removing in zip(zk.assignment, zk.adding, zk.removing):
        if (adding or removing) and (set(adding) & set(removing) or not set(adding) | set(removing) <= set(replicas)):
            return False
    return True


def _head_event(s: Cluster, a):
    queue = s.brokers[a.broker].queue
    return queue[0] if queue else None


def _controlled_shutdown_handled(s: Cluster, a):
    """The ControlledShutdown event step `a` handles, or None if it handles another one."""
    if type(a) is not ControllerProcessEvent:
        return None
    event = _head_event(s, a)
    return event if event is not None and event.kind is EventKind.ControlledShutdown else None


def controlled_shutdown_elects_another(observe):
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
        return all(e.chosen != event.a for e in _elections(observe, s, a)
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


def _kafka_2_6_choice(e: Election, assignment: tuple[int, ...], removing: tuple[int, ...]) -> int:
    """The leader Kafka 2.6's `PartitionLeaderElectionAlgorithms` picks for `e`'s strategy and
    inputs (the ISR read, the live and online brokers) over `assignment`; -1 for none
    (kafka@2.6.x:core/src/main/scala/kafka/controller/Election.scala,
    PartitionStateMachine.scala `PartitionLeaderElectionAlgorithms`)."""
    from kcm.model.cluster import bits
    from kcm.model.election import (
        controlled_shutdown_partition_leader_election,
        offline_partition_leader_election,
        preferred_replica_partition_leader_election,
        reassign_partition_leader_election,
    )
    live, online = frozenset(bits(e.live)), frozenset(bits(e.online))
    if e.strategy in (Strategy.OFFLINE, Strategy.OFFLINE_ALLOW_UNCLEAN):
        chosen = offline_partition_leader_election(assignment, e.isr, online, e.unclean_allowed)
    elif e.strategy is Strategy.REASSIGN:
        chosen = reassign_partition_leader_election(tuple(r for r in assignment if r not in removing), e.isr, online)
    elif e.strategy is Strategy.PREFERRED:
        chosen = preferred_replica_partition_leader_election(assignment, e.isr, online)
    else:
        chosen = controlled_shutdown_partition_leader_election(assignment, e.isr, live, live - online)
    return NONE if chosen is None else chosen


def _chosen_by_the_algorithm(e: Election, s: Cluster, a, t: Cluster) -> bool:
    """ElectionRuleConformance computed apart from the model's election code (whose `expected` is
    computed in the same branch as the choice, so a wrong branch would go unseen): the choice is
    what the algorithm of the observed strategy returns over the partition's assignment as the
    controller held it at the start of the event, as ZooKeeper had it then (a failover reads it),
    or at the end (a reassignment's election runs after the assignment became the target)."""
    p = e.partition
    before, after = s.brokers[a.broker], t.brokers[a.broker]
    candidates = [(s.zk.assignment[p], s.zk.removing[p])]
    if before.active:
        candidates.append((before.ctx.assignment[p], before.ctx.removing[p]))
    if after.active:
        candidates.append((after.ctx.assignment[p], after.ctx.removing[p]))
    return any(_kafka_2_6_choice(e, assignment, removing) == e.chosen for assignment, removing in candidates)


def _elections(observe, s, a) -> list[Election]:
    """The elections of step `a` from `s` (none unless it processes an event). A dozen transition
    invariants ask in a row, and the model's `observe` returns the very same list for the step
    last expanded, so the elections found in it are remembered for that list (shared: callers
    only read it)."""
    global _last_elections
    if type(a) is not ControllerProcessEvent:
        return []
    obs = observe(s, a)
    last = _last_elections
    if last[0] is obs:
        return last[1]
    out = [o for o in obs if type(o) is Election]
    _last_elections = (obs, out)
    return out


_last_elections: tuple = (None, [])


#: `AlwaysStep.judges` of the transition invariants that judge a controller event (they return
#: True at once on any other step, as `_elections` does) or a request's delivery.
_EVENT, _DELIVER = (ControllerProcessEvent,), (NetworkDeliver,)


def properties_for(cfg: ModelConfig, observe: Callable[[Cluster, object], list]) -> list:
    """Every property of the model for `cfg`; `observe(state, action)` gives a step's observations."""

    def leader_is_live(s, a, t):
        return all(e.live >> e.chosen & 1 for e in _elections(observe, s, a))

    def election_rule_conformance(s, a, t):
        elections = _elections(observe, s, a)
        return (all(e.chosen == e.expected for e in elections)
                and all(_chosen_by_the_algorithm(e, s, a, t) for e in elections))

    def clean_election_from_isr(s, a, t):
        for e in _elections(observe, s, a):
            if e.chosen not in e.isr:
                if not e.unclean_allowed or any(e.online >> r & 1 for r in e.isr):
                    return False
        return True

    def deposed_leader_notified(s, a, t):
        """The deposed leader, if live, is sent a LeaderAndIsr or a StopReplica for the partition
        in the same event (a reassignment stops the removed old leader instead of demoting it)."""
        n = len(s.brokers)
        for e in _elections(observe, s, a):
            old = e.old_leader
            if old >= 0 and old != e.chosen and e.live >> old & 1 and old not in e.recipients:
                i = a.broker * n + old
                sent = t.net[i][len(s.net[i]):] if t.net[i][:len(s.net[i])] == s.net[i] else t.net[i]
                if not any(part.partition == e.partition for r in sent for part in r.partitions):
                    return False
        return True

    def offline_replica_leaves_isr(s, a, t):
        """An OfflineReplica transition the controller took (the replica is OfflineReplica in its
        context after the event) for a partition with a state znode leaves the replica out of the
        ZooKeeper ISR, unless it is the sole member, whatever the cache said before
        (kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala
        doHandleStateChanges, case OfflineReplica: `removeReplicasFromIsr` re-reads the znodes)."""
        if type(a) is not ControllerProcessEvent:
            return True
        ctx = t.brokers[a.broker].ctx
        for o in observe(s, a):
            if (type(o) is Edge and o.valid and o.to is ReplicaState.OfflineReplica and o.machine == "replica"
                    and ctx.replica_states[o.partition][o.broker] is ReplicaState.OfflineReplica):
                z = t.zk.partitions[o.partition]
                if z != NO_ZNODE and o.broker in z.isr and len(z.isr) > 1:
                    return False
        return True

    props: list = [
        Always("SingleActiveControllerPerEpoch", single_active_controller_per_epoch,
               "no two active controller modules share an epoch"),
        Always("UniqueEpochSender", unique_epoch_sender,
               "requests of one controller epoch all come from one broker (V2)"),
        Always("LeaderInIsrOrNone", leader_in_isr_or_none, "ZK leader is -1 or in the ISR"),
        Always("IsrNonEmpty", isr_non_empty, "a partition state znode never has an empty ISR (V6)"),
        Always("OnlyActiveControllerActs", only_active_controller_acts,
               "only an active controller batches requests or writes controller znodes (V4)"),
        AlwaysStep("ZkWritesFenced", zk_writes_fenced, "controller writes happen at the current epoch (V3)",
                   judges=_EVENT),
        AlwaysStep("StaleControllerRejected", stale_controller_rejected,
                   "a broker's accepted controller epoch never goes back (V1)", judges=_DELIVER),
        AlwaysStep("ZkLeaderEpochMonotonic", zk_leader_epoch_monotonic, "ZK leader epochs never go back"),
        AlwaysStep("ControllerBumpsLeaderEpoch", controller_bumps_leader_epoch,
                   "each controller write bumps the leader epoch by one", judges=_EVENT),
        AlwaysStep("BrokerLeaderEpochMonotonic", broker_leader_epoch_monotonic,
                   "a broker's applied leader epochs never go back", judges=_DELIVER),
        AlwaysStep("NoStaleBrokerEpochApplied", no_stale_broker_epoch_applied,
                   "a request for an older incarnation is not applied (V5)", judges=_DELIVER),
        AlwaysStep("MetadataBeforeLeaderAndIsr", metadata_before_leader_and_isr,
                   "UpdateMetadata of an epoch arrives before its LeaderAndIsr", judges=_DELIVER),
        AlwaysStep("LeaderIsLive", leader_is_live, "an elected leader is live in the controller's view",
                   judges=_EVENT),
        AlwaysStep("ElectionRuleConformance", election_rule_conformance,
                   "the elected leader is what Kafka 2.6's algorithm returns (V7)", judges=_EVENT),
        AlwaysStep("CleanElectionFromIsr", clean_election_from_isr,
                   "a leader outside the ISR only when unclean election is enabled and no ISR member is live",
                   judges=_EVENT),
        AlwaysStep("DeposedLeaderNotified", deposed_leader_notified,
                   "a live deposed leader receives the LeaderAndIsr that deposes it (V8)", judges=_EVENT),
        AlwaysStep("NoShuttingDownJoinsIsr", no_shutting_down_joins_isr,
                   "no replica on a broker the controller knows is shutting down joins an ISR (2.6 breaks it)",
                   judges=(LeaderExpandIsr,)),
        AlwaysStep("CacheMatchesZkAfterWrite", cache_matches_zk_after_write,
                   "the active controller's cached leadership equals each partition znode it just wrote",
                   judges=_EVENT),
        AlwaysStep("ContextDerivedFromZk", context_derived_from_zk(cfg.topics, cfg.partitions),
                   "a new controller's context is a function of ZooKeeper when its failover ends", judges=_EVENT),
        Always("NoStaleContextWhenInactive", no_stale_context_when_inactive,
               "a controller module that is not active holds the empty context"),
        AlwaysStep("OfflineReplicaLeavesIsr", offline_replica_leaves_isr,
                   "an OfflineReplica transition removes the replica from the ZK ISR (sole member aside)",
                   judges=_EVENT),
    ]
    quiescence = [
        ("EventuallyOneActiveController", eventually_one_active_controller),
        ("OfflinePartitionEventuallyOnline", offline_partition_eventually_online),
        ("ControlledShutdownEventuallyCompletes", controlled_shutdown_eventually_completes),
        ("TopicDeletionEventuallyCompletes", topic_deletion_eventually_completes),
        ("ReassignmentEventuallyCompletes", reassignment_eventually_completes),
        ("CacheMatchesZk", cache_matches_zk),
        ("BrokerIncarnationTracked", broker_incarnation_tracked),
        ("AtMostOneBelievedLeaderAfterQuiescence", at_most_one_believed_leader),
    ]
    props += [Always(name, fn, "holds whenever no healing action is enabled", kind="quiescence")
              for name, fn in quiescence]
    props.append(Always("AdminZnodesConsumed", admin_znodes_consumed,
                        "admin znodes are consumed once their work is done or refused", kind="quiescence"))
    ppt = cfg.partitions
    settled_props = [
        ("ActiveControllerOnceSettled", lambda s, ppt: active_controller_once_settled(s),
         "one active controller, named in /controller, once the cluster has settled"),
        ("PreferredElectionZnodeConsumed", preferred_election_znode_consumed,
         "/admin/preferred_replica_election is gone once the cluster has settled"),
        ("NoDeadLeaderAdvertised", no_dead_leader_advertised,
         "no ZK leader is a dead broker once the cluster has settled around its faults"),
        ("DeadReplicaOnlyAsSoleIsrMember", dead_replica_only_as_sole_isr_member,
         "a dead replica stays in a ZK ISR only as its sole member"),
        ("OfflinePartitionWithLiveIsrGetsLeader", offline_partition_with_live_isr_gets_leader,
         "a partition with a live ISR member has a leader"),
    ]
    props += [Always(name, functools.partial(fn, ppt=ppt), doc, kind="settled") for name, fn, doc in settled_props]
    props += [
        # issue 13: the properties the mutation triage asked for (docs/checking.md, "kcm mutate")
        AlwaysStep("PreferredElectionMovesLeader",
                   lambda s, a, t: preferred_election_moves_leader(_elections(observe, s, a)),
                   "a preferred replica election changes the leader", judges=_EVENT),
        AlwaysStep("OfflineElectionForOfflineLeader",
                   lambda s, a, t: offline_election_for_offline_leader(_elections(observe, s, a)),
                   "an offline-strategy election is for a partition whose leader is not online", judges=_EVENT),
        AlwaysStep("NewPartitionFromLiveReplicas", new_partition_from_live_replicas,
                   "a new partition state znode names only live replicas, the first as leader", judges=_EVENT),
        AlwaysStep("ControlledShutdownLeavesBrokerClean", controlled_shutdown_leaves_broker_clean(ppt),
                   "a controlled shutdown answered with nothing left leaves the broker leading nothing, "
                   "out of the ISRs, its followed replicas stopped", judges=_EVENT),
        AlwaysStep("ControlledShutdownElectsAnother", controlled_shutdown_elects_another(observe),
                   "a controlled-shutdown election never chooses the broker shutting down", judges=_EVENT),
        AlwaysStep("ControlledShutdownRetriedOnlyWithPartitionsLeft",
                   controlled_shutdown_retried_only_with_partitions_left(ppt),
                   "an accepted controlled shutdown is answered with a retry only while the broker still leads",
                   judges=_EVENT),
        AlwaysStep("FailedBrokerReplicasOffline", failed_broker_replicas_offline(ppt),
                   "a broker's failure moves each of its replicas to OfflineReplica", judges=_EVENT),
        AlwaysStep("DeletedTopicLeavesNoReplica", deleted_topic_leaves_no_replica,
                   "a topic deletion completes only once its assigned brokers hold no replica of it",
                   judges=_EVENT),
        Always("ReassignmentSetsDisjoint", reassignment_sets_disjoint,
               "the adding and removing replicas in /brokers/topics are disjoint and among the replicas"),
        Always("ReplicaStatesMatchLiveness", functools.partial(replica_states_match_liveness, ppt=ppt),
               "holds whenever no healing action is enabled", kind="quiescence"),
        Always("BrokersFollowTheLeader", functools.partial(brokers_follow_the_leader, ppt=ppt),
               "holds whenever no healing action is enabled", kind="quiescence"),
    ]
    props += _full_run_triage_properties(cfg)
    # The properties of the session-6 triage live in their own modules, which read this one's
    # helpers: imported here, not at the top, so that neither import is circular.
    from kcm.model import (
        props_ctl_deletion,
        props_ctl_leadership,
        props_ctl_watches,
        props_rd_deletion,
        props_rd_reassignment,
        props_sm_deletion,
        props_sm_leader_isr,
        props_sm_replica_states,
        props_sm_transitions,
    )
    props += props_ctl_watches.properties(cfg)
    props += props_ctl_leadership.properties(cfg)
    props += props_ctl_deletion.properties(cfg)
    props += props_sm_replica_states.properties(cfg)
    props += props_sm_deletion.properties(cfg, observe)
    props += props_sm_transitions.properties(cfg, observe)
    props += props_sm_leader_isr.properties(cfg)
    props += props_rd_reassignment.properties(cfg)
    props += props_rd_deletion.properties(cfg)
    props += _goals(cfg, observe)
    return props


def _two_perturbations(cfg: ModelConfig) -> bool:
    """Whether a run may have two faults or admin operations (some goals need one to set up the other)."""
    return cfg.max_perturbations < 0 or cfg.max_perturbations >= 2


def _goals(cfg: ModelConfig, observe) -> list:
    def elected_with(strategy, unclean=None):
        def met(s, a, t):
            for e in _elections(observe, s, a):
                if e.strategy in strategy and (unclean is None or (e.chosen not in e.isr) == unclean):
                    return True
            return False
        return met

    goals = [
        Sometimes("ControllerFailsOver",
                  lambda s, a, t: any(b.active and b.ctx.epoch >= 2 for b in t.brokers),
                  "a second controller takes over"),
    ]
    # A partition loses its leader only when its last ISR member goes: one fault with RF 1, two
    # perturbations otherwise.
    if cfg.max_broker_crashes + cfg.max_session_expiries and (cfg.replication_factor == 1 or _two_perturbations(cfg)):
        goals.append(Sometimes("PartitionOfflineAndBack",
                               lambda s, a, t: s.zk.partitions is not t.zk.partitions and any(
                                   x != NO_ZNODE and y != NO_ZNODE and x.leader == NONE and y.leader >= 0
                                   for x, y in zip(s.zk.partitions, t.zk.partitions)),
                               "a partition without a leader gets one again"))
    if cfg.unclean_election:
        goals.append(Sometimes("UncleanElection", elected_with((Strategy.OFFLINE, Strategy.OFFLINE_ALLOW_UNCLEAN), True),
                               "a leader is elected from outside the ISR"))
    if cfg.max_topic_deletions:
        goals.append(Sometimes("TopicDeleted",
                               lambda s, a, t: s.zk.assignment is not t.zk.assignment and any(
                                   x and not y for x, y in zip(s.zk.assignment, t.zk.assignment)),
                               "a topic is fully deleted"))
    if cfg.max_reassignments:
        goals.append(Sometimes("ReassignmentCompletes",
                               lambda s, a, t: s.zk.reassign is not t.zk.reassign and any(
                                   x and not y and t.zk.assignment[p] == x
                                   for p, (x, y) in enumerate(zip(s.zk.reassign, t.zk.reassign))),
                               "a partition reaches its reassignment target"))
    if cfg.max_controlled_shutdowns:
        goals.append(Sometimes("ControlledShutdownMovesLeadership", elected_with((Strategy.CONTROLLED_SHUTDOWN,)),
                               "a controlled shutdown moves a leader away"))
    # The preferred replica leads until something moves leadership away: a second perturbation.
    if (cfg.max_preferred_elections or cfg.max_auto_rebalances) and _two_perturbations(cfg):
        goals.append(Sometimes("PreferredLeaderElected", elected_with((Strategy.PREFERRED,)),
                               "a preferred replica election moves the leader"))
    return goals



# ---- issue 13, the full mutation run's triage (docs/checking.md "Triage of the full run") -----


def created_partitions_have_state(s: Cluster, ppt: int = 1) -> bool:
    """Quiescent under an active controller: every partition assigned in `/brokers/topics/<t>`
    whose topic is not queued for deletion has its state znode. A new topic's partitions go
    NewPartition -> OnlinePartition in `onNewPartitionCreation`, which creates
    `/brokers/topics/<t>/partitions/<p>/state` (`initializeLeaderAndIsrForPartitions`); one left
    New (no live replica, a failed write) is retried by the next `triggerOnlinePartitionStateChange`
    or failover, and at quiescence every broker is up
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala onNewPartitionCreation,
    kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
    initializeLeaderAndIsrForPartitions)."""
    if not (quiescent(s) and _settled_under_a_controller(s)):
        return True
    zk = s.zk
    return all(z != NO_ZNODE for p, (assigned, z) in enumerate(zip(zk.assignment, zk.partitions))
               if assigned and not zk.delete_topics >> (p // ppt) & 1)


def preferred_election_znode_consumed_with_leadership(s: Cluster, ppt: int = 1) -> bool:
    """Settled under an active controller: `/admin/preferred_replica_election` is gone unless it
    names a partition of a live topic with no state znode. `processReplicaLeaderElection` elects
    for the partitions named, then `onReplicaElection`'s `finally` deletes the znode and re-puts the
    event (KAFKA-6146); only the partition without leadership, where `partitionLeadershipInfo(tp).get`
    throws before the `finally` is reached, leaves it behind (Findings 9, which
    PreferredElectionZnodeConsumed excuses on every config and so cannot see any other cause)
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    processReplicaLeaderElection, onReplicaElection)."""
    if not _settled_under_a_controller(s):
        return True
    zk = s.zk
    if not zk.preferred:
        return True
    return any(zk.assignment[p] and zk.partitions[p] == NO_ZNODE for p in range(len(zk.partitions))
               if zk.preferred >> p & 1)


def _full_run_triage_properties(cfg: ModelConfig) -> list:
    ppt = cfg.partitions
    return [
        Always("CreatedPartitionsHaveState", functools.partial(created_partitions_have_state, ppt=ppt),
               "holds whenever no healing action is enabled", kind="quiescence"),
        Always("PreferredElectionZnodeConsumedWithLeadership",
               functools.partial(preferred_election_znode_consumed_with_leadership, ppt=ppt),
               "/admin/preferred_replica_election is gone once settled, unless it names a partition "
               "without leadership (Findings 9)", kind="settled"),
    ]
