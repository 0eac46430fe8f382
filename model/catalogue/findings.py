"""The Findings: what Kafka 2.6 itself is known to violate, each declared once, with what its
violations look like.

The model states properties a controller expert expects; some of them the 2.6 code breaks by
design or by an unfixed bug (docs/model.md, "Findings"). A property's declaration names each
`Finding` that breaks it with the configs under which 2.6 can (`Declaration.findings`: one
property can be broken for several causes, one Finding each). Each Finding also says what its
violations look like, in Kafka's terms (`looks_like`), and checks it: for each property it
breaks, a matcher of the violating step (and, where the last state cannot tell, of the trace to
it). The checkers read the derived list (`kcm.model.catalogue.excused_violations`, handed to them
as the model's `known_violations`), and classify every violation of a listed property: one a
matcher of its Findings accepts is 2.6's behaviour, recorded with its shortest trace, and does
not fail the verdict; any other violation of the same property (a new bug breaking it another
way) fails it like any violation. The config
condition says where a Finding can occur at all; the matcher narrows it to its own violations.

The matchers read what the violating state keeps of the cause (a partition whose state znode the
controller does not cache, the budget of lost replies spent, a broker's own controlled shutdown);
six causes leave nothing in the last state: a preferred election that threw, a deletion of
`/controller` that no watch heard, an ISR admission the controller did not hold live, a deletion
started during its topic's reassignment, a reassignment written while its partition had no state
znode, and a reassignment completed while its new replicas were held dead. Those read the trace,
which the checkers rebuild only then.
Each Finding has a committed trace that shows it (read it with `kcm trace show`; `kcm list known`
lists the Findings, the properties each breaks and when), and tests/model/test_findings.py checks
that the trace still matches its Finding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kcm.model.actions import (
    AdminPreferredElection,
    ControllerProcessEvent,
    LeaderExpandIsr,
    NetworkDeliver,
    ZkConnectionLoss,
    ZkLoseReply,
)
from kcm.model.catalogue.settledness import Judge
from kcm.model.catalogue.views import (
    active_controllers,
    judged_partitions,
    led_partitions,
    misheld_replicas,
    registered,
    sent_in_step,
    uncreated_partitions,
)
from kcm.model.cluster import (
    NO_REPLICA,
    NO_ZNODE,
    NONE,
    Budget,
    Cluster,
    Edge,
    Event,
    EventKind,
    RequestKind,
    Shutdown,
    Watch,
    bits,
)
from kcm.model.config import ModelConfig
from kcm.model.states import PartitionState, ReplicaState

#: A trace, rebuilt on demand: `((None, s0), (a1, s1), ..., (an, sn))`.
LazyTrace = Callable[[], Sequence[tuple[Any, Cluster]]]
#: `matches(state, action, next_state, trace)`: whether a violation is the Finding's
#: (`kcm.checker.engine.contract.KnownViolation`).
Matcher = Callable[[Cluster, Any, Cluster, LazyTrace], bool]
#: How a property's matcher is built for one model.
MatcherFor = Callable[[ModelConfig, Judge], Matcher]


@dataclass(frozen=True)
class Finding:
    """A numbered Finding of docs/model.md with the committed trace (ITF) that shows it, and what
    its violations look like."""

    number: int
    title: str
    #: The trace, relative to the repository root.
    trace: str
    #: What a violation of a property it breaks looks like, in Kafka's terms: what `matchers` check.
    looks_like: str
    #: For each property it breaks (by name), how to build its matcher for one model.
    matchers: Mapping[str, MatcherFor] = field(compare=False)

    def __str__(self) -> str:
        return f"Findings {self.number}: {self.title}"

    def matcher(self, name: str, cfg: ModelConfig, judge: Judge) -> Matcher:
        """Property `name`'s matcher for the model of `cfg` (a KeyError if it breaks no such property)."""
        return self.matchers[name](cfg, judge)


def _built(fn: Callable[..., bool]) -> MatcherFor:
    """A matcher that needs nothing of the model."""
    return lambda cfg, judge: fn


def _per_topic(fn: Callable[..., bool]) -> MatcherFor:
    """A matcher that tells topics apart: `fn(state, action, next_state, trace, ppt)`."""
    return lambda cfg, judge: lambda s, a, t, trace: fn(s, a, t, trace, cfg.partitions)


# ---- Findings 4: a replica removed by a reassignment believes it leads, for good ------------------

def _stops(request: Any, p: int) -> bool:
    """`request` is a StopReplica for partition `p`."""
    return request.kind is RequestKind.StopReplica and any(part.partition == p for part in request.partitions)


def _stop_replica_missed(trace: Sequence[tuple[Any, Cluster]], p: int, b: int) -> bool:
    """The last step that took broker `b` out of partition `p`'s assignment was an event of the
    controller active after it (a failover included) that left `p` assigned: a reassignment, which
    completed with `b` among its removing replicas (B2) or replaced one whose target held `b`
    (`updateCurrentReassignment` stops the unneeded replicas at once,
    kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 619-621), not a
    topic deletion, which empties the assignment. The StopReplica it owed `b` for `p` (B4/B5,
    `stopRemovedReplicasOfReassignedPartition`) never took effect. Either the controller did not
    hold `b` live with a channel to it (its session had expired while its process ran on), so
    nothing was sent
    (kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerChannelManager.scala `sendRequest`:
    "Not sending request ... since it is offline"); or each StopReplica queued was lost: delivered
    while fenced (a broker epoch older than `b`'s, `b` having re-registered before the controller
    saw it bounce, or an older controller epoch:
    kafka@2.6.x:core/src/main/scala/kafka/server/KafkaApis.scala `handleStopReplicaRequest`), or
    dropped undelivered with the channel (`removeExistingBroker`, when the controller sees `b`
    bounce or shuts its channel manager down on resigning, or its process dies). Nothing sends
    another: the replica is NonExistentReplica to the controller and outside every
    `replicasOnBrokers` that a later failover, BrokerChange or broker startup reads
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala onBrokerStartup,
    onControllerFailover)."""
    for i in range(len(trace) - 1, 0, -1):
        before, (a, after) = trace[i - 1][1], trace[i]
        if b in before.zk.assignment[p] and b not in after.zk.assignment[p]:
            break
    else:
        return False
    if not (type(a) is ControllerProcessEvent and after.brokers[a.broker].active and after.zk.assignment[p]):
        return False
    channel = a.broker * len(after.brokers) + b
    queue = after.net[channel]
    kept = len(before.net[channel]) if queue[:len(before.net[channel])] == before.net[channel] else 0
    pending = [k for k in range(kept, len(queue)) if _stops(queue[k], p)]
    if not pending:
        ctx = after.brokers[a.broker].ctx
        return not (ctx.live >> b & 1 and ctx.channel >> b & 1)
    for j in range(i + 1, len(trace)):
        prior, (act, now) = trace[j - 1][1], trace[j]
        old, new = prior.net[channel], now.net[channel]
        if type(act) is NetworkDeliver and act.src * len(now.brokers) + act.dst == channel:
            if pending[0] == 0:
                head, broker = old[0], prior.brokers[b]
                if not (head.broker_epoch < broker.epoch or head.controller_epoch < broker.controller_epoch):
                    return False  # applied: another cause left the replica leading
                pending = pending[1:]
            pending = [k - 1 for k in pending]
        elif new[:len(old)] != old:
            pending = []  # the channel was dropped
        if not pending:
            return True
    return False


def _believers_outside_assignment(t: Cluster) -> list[tuple[int, int]] | None:
    """AtMostOneBelievedLeaderAfterQuiescence's violations that only brokers outside the
    assignment make: None if an assigned broker other than the znode's leader believes it leads a
    partition (no Finding's cause), else each (partition, broker) that believes it leads from
    outside the partition's assignment."""
    from kcm.model.catalogue.leadership import believed_leaders  # leadership.py names the Findings

    extra = []
    for p, z in enumerate(t.zk.partitions):
        believers = believed_leaders(t, p)
        assigned = [b for b in believers if b in t.zk.assignment[p]]
        if len(assigned) > 1 or (assigned and assigned[0] != z.leader):
            return None
        extra += [(p, b) for b in believers if b not in t.zk.assignment[p]]
    return extra


def _removed_replicas_believe_they_lead(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
    """AtMostOneBelievedLeaderAfterQuiescence: among each partition's assigned brokers at most one
    believes it leads, the znode's leader, and every other believer is outside the assignment, a
    replica a reassignment removed whose StopReplica never took effect (`_stop_replica_missed`)."""
    extra = _believers_outside_assignment(t)
    if not extra:
        return False
    steps = trace()
    return all(_stop_replica_missed(steps, p, b) for p, b in extra)


REMOVED_REPLICA_LEADS = Finding(
    4, "a replica removed by a reassignment can believe it leads, for good",
    "docs/findings/removed-replica-leads.itf.json",
    "at most one assigned broker believes it leads each partition, the znode's leader, and every "
    "other believer is a broker that a reassignment (not a topic deletion) took out of the "
    "assignment and whose StopReplica never took effect: the controller held it dead and sent none, "
    "or the StopReplica was refused for a stale broker or controller epoch or dropped undelivered "
    "with the channel",
    {"AtMostOneBelievedLeaderAfterQuiescence": _built(_removed_replicas_believe_they_lead)})


# ---- Findings 7: a lost reply to a partition-state create ------------------------------------------

def _reply_lost(s: Cluster) -> bool:
    """ZooKeeper lost a reply to a controller's write in this run (a lost reply or a connection
    loss: either way `retryRequestsUntilConnected` resends the write,
    kafka@2.6.x:core/src/main/scala/kafka/zk/KafkaZkClient.scala)."""
    return s.spent[Budget.LOST_ACKS] > 0 or s.spent[Budget.CONNECTION_LOSSES] > 0


def _stranded(s: Cluster, c: int, p: int) -> bool:
    """Controller `c` holds partition `p` NewPartition and caches no leadership for it while its
    state znode exists: the create whose reply was lost was applied, and its resend met NODEEXISTS
    (kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
    initializeLeaderAndIsrForPartitions)."""
    ctx = s.brokers[c].ctx
    return (s.zk.partitions[p] != NO_ZNODE and ctx.leadership[p] == NO_ZNODE
            and ctx.partition_states[p] is PartitionState.NewPartition)


def _only_stranded(s: Cluster, faulty: set[int]) -> bool:
    """After a lost reply, every partition the property faults is stranded at an active controller."""
    return _reply_lost(s) and any(all(_stranded(s, c, p) for p in faulty) for c in active_controllers(s))


def _cache_lacks_only_stranded(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
    """CacheMatchesZk: the active controller's cache differs from ZooKeeper only on stranded partitions."""
    # (leader, leader epoch, ISR): a znode and its absence (NO_ZNODE) always differ there.
    return _only_stranded(t, {p for c in active_controllers(t) for p, (z, cached)
                              in enumerate(zip(t.zk.partitions, t.brokers[c].ctx.leadership)) if z[:3] != cached[:3]})


def _unfollowed_only_stranded(s: Cluster, a: Any, t: Cluster, trace: LazyTrace, ppt: int) -> bool:
    """BrokersFollowTheLeader: only stranded partitions have an assigned broker not following
    their znode's leader (no LeaderAndIsr was ever sent for them)."""
    faulty = set()
    for p, z in led_partitions(t.zk, ppt):
        for b in t.zk.assignment[p]:
            r = t.brokers[b].replicas[p]
            if r.leader != z.leader or r.leader_epoch != z.leader_epoch or r.stopped:
                faulty.add(p)
    return _only_stranded(t, faulty)


def _dead_leader_only_stranded(s: Cluster, a: Any, t: Cluster, trace: LazyTrace, ppt: int) -> bool:
    """NoDeadLeaderAdvertised: only stranded partitions name a dead leader (the controller, with
    no leadership cached, does not elect for them when the leader dies)."""
    live = registered(t)
    return _only_stranded(t, {p for p, z in judged_partitions(t, ppt) if z.leader != NONE and z.leader not in live})


def _dead_isr_member_only_stranded(s: Cluster, a: Any, t: Cluster, trace: LazyTrace, ppt: int) -> bool:
    """DeadReplicaOnlyAsSoleIsrMember: only stranded partitions keep a dead replica beside others in their ISR."""
    live = registered(t)
    return _only_stranded(t, {p for p, z in judged_partitions(t, ppt)
                              if len(z.isr) != 1 and any(r not in live for r in z.isr)})


def _offline_isr_only_stranded(cfg: ModelConfig, judge: Judge) -> Matcher:
    """OfflineReplicaLeavesIsr: each replica the event took offline and left in the ISR is of a
    partition the controller held stranded when the event began (no leadership cached: the ISR
    shrink skips it)."""
    def matches(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
        if type(a) is not ControllerProcessEvent or not _reply_lost(s):
            return False
        c = a.broker
        ctx = t.brokers[c].ctx
        for o in judge.observe(s, a):
            if (type(o) is Edge and o.valid and o.to is ReplicaState.OfflineReplica and o.machine == "replica"
                    and ctx.replica_states[o.partition][o.broker] is ReplicaState.OfflineReplica):
                z = t.zk.partitions[o.partition]
                if z != NO_ZNODE and o.broker in z.isr and len(z.isr) > 1 and not _stranded(s, c, o.partition):
                    return False
        return True
    return matches


def _uncreated_only_stranded(s: Cluster, a: Any, t: Cluster, trace: LazyTrace, ppt: int) -> bool:
    """AddedPartitionsCreated: every partition it finds not created is stranded at an active
    controller (its create applied, the resend met NODEEXISTS, no LeaderAndIsr ever sent)."""
    return _only_stranded(t, uncreated_partitions(t, ppt))


def _leaderless_held_new(partitions: Callable[[Cluster], Any]) -> MatcherFor:
    """OfflinePartitionWithLiveIsrGetsLeader, OfflinePartitionEventuallyOnline: after a lost reply,
    each partition without a leader and with a live ISR member (among `partitions(state)`) is held
    NewPartition by an active controller while its state znode exists, leadership cached or not: a
    reassignment's A1 `updateLeaderEpoch` reads the znode and caches it
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 1003-1038), and
    its completion asks NewPartition -> OnlinePartition (`moveReassignedPartitionLeaderIfRequired`,
    lines 815-835), which only initializes a New partition (the create meets NODEEXISTS and fails)
    and never elects it, while B4 takes the old leader out of the ISR; every later trigger tries
    the initialization again
    (kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala lines 222-247)."""
    def matches(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
        live = registered(t)
        faulty = [p for p, z in partitions(t) if z.leader == NONE and set(z.isr) & live]
        return bool(faulty) and _reply_lost(t) and any(
            all(t.zk.partitions[p] != NO_ZNODE
                and t.brokers[c].ctx.partition_states[p] is PartitionState.NewPartition for p in faulty)
            for c in active_controllers(t))
    return lambda cfg, judge: matches


def _judged(cfg: ModelConfig) -> Callable[[Cluster], Any]:
    """The partitions the settled properties judge (`judged_partitions`) of a model."""
    return lambda t: judged_partitions(t, cfg.partitions)


LOST_CREATE_REPLY = Finding(
    7, "a lost reply to a partition-state create leaves the partition New and leaderless",
    "docs/findings/lost-create-reply.itf.json",
    "after ZooKeeper lost a reply in the run, the property fails only for partitions the active "
    "controller holds NewPartition with no leadership cached while their state znode exists, or, "
    "for a partition left without a leader with a live ISR member, held NewPartition with its "
    "leadership cached (a reassignment's A1 read it) while its state znode exists",
    {"CacheMatchesZk": _built(_cache_lacks_only_stranded),
     "OfflinePartitionWithLiveIsrGetsLeader": lambda cfg, judge: _leaderless_held_new(_judged(cfg))(cfg, judge),
     "OfflinePartitionEventuallyOnline": _leaderless_held_new(
         lambda t: [(p, z) for p, z in enumerate(t.zk.partitions) if z != NO_ZNODE]),
     "OfflineReplicaLeavesIsr": _offline_isr_only_stranded,
     "NoDeadLeaderAdvertised": _per_topic(_dead_leader_only_stranded),
     "DeadReplicaOnlyAsSoleIsrMember": _per_topic(_dead_isr_member_only_stranded),
     "BrokersFollowTheLeader": _per_topic(_unfollowed_only_stranded),
     "AddedPartitionsCreated": _per_topic(_uncreated_only_stranded)})


# ---- Findings 8: a shutting-down broker rejoins the ISR --------------------------------------------

def _shutting_down_follower_rejoins(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
    """The leader's own ISR expansion (`Partition.maybeExpandIsr`, which asks no controller in
    2.6) admits a follower whose broker has itself asked for a controlled shutdown and still runs,
    fetching from the leader the shutdown just elected."""
    return type(a) is LeaderExpandIsr and s.brokers[a.follower].shutdown is not Shutdown.NONE


def _dead_isr_member_admitted_unheld(s: Cluster, a: Any, t: Cluster, trace: LazyTrace, ppt: int) -> bool:
    """DeadReplicaOnlyAsSoleIsrMember: every dead member of a multi-member ISR was last added to
    that ISR by the leader's own expansion (`Partition.maybeExpandIsr`, which checks only the
    follower's offsets, kafka@2.6.x:core/src/main/scala/kafka/cluster/Partition.scala lines
    692-722) while the active controller did not hold the follower live, or held it shutting
    down (or there was no active controller). Its broker then stopped, or had already lost its
    registration to a session expiry, so no BrokerChange removes it: only the leader's lag-based
    shrink (`isr-expiration`, ReplicaManager.scala line 316) would."""
    live = registered(t)
    faulty = {(p, r) for p, z in judged_partitions(t, ppt) if len(z.isr) != 1 for r in z.isr if r not in live}
    if not faulty:
        return False
    steps = trace()
    for p, r in faulty:
        for i in range(len(steps) - 1, 0, -1):
            before, after = steps[i - 1][1], steps[i][1]
            zb, za = before.zk.partitions[p], after.zk.partitions[p]
            if za != NO_ZNODE and r in za.isr and (zb == NO_ZNODE or r not in zb.isr):
                act, c = steps[i][0], before.zk.controller
                ctx = before.brokers[c].ctx if c != NONE and before.brokers[c].active else None
                if not (type(act) is LeaderExpandIsr and act.follower == r and act.partition == p
                        and (ctx is None or not ctx.live >> r & 1 or ctx.shutting_down >> r & 1)):
                    return False
                break
        else:
            return False
    return True


SHUTTING_DOWN_REJOINS_ISR = Finding(
    8, "a shutting-down broker rejoins the ISR", "docs/findings/no-shutting-down-joins-isr.itf.json",
    "a partition leader's own ISR expansion admits a follower on a broker that has asked for a "
    "controlled shutdown and still runs; or every dead member of a multi-member ISR was last admitted "
    "so while the active controller held it shutting down or not live",
    {"NoShuttingDownJoinsIsr": _built(_shutting_down_follower_rejoins),
     "DeadReplicaOnlyAsSoleIsrMember": _per_topic(_dead_isr_member_admitted_unheld)})


# ---- Findings 9: a preferred election for a partition without leadership stays ----------------------

def _preferred_election_threw(trace: Sequence[tuple[Any, Cluster]], ppt: int) -> bool:
    """Since an operator last wrote `/admin/preferred_replica_election`, an active controller
    handled ReplicaLeaderElection while a partition the znode names (of a topic it does not
    delete) had no leadership in its context: `processReplicaLeaderElection`'s
    lookup `partitionLeadershipInfo(tp)` (a `mutable.Map`'s `apply`, line 1763) threw before
    `onReplicaElection`'s `finally` could delete the znode
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 717-720)."""
    for i in range(len(trace) - 1, 0, -1):
        a = trace[i][0]
        if type(a) is AdminPreferredElection:
            return False
        if type(a) is ControllerProcessEvent:
            s = trace[i - 1][1]
            b = s.brokers[a.broker]
            head = b.queue[0] if b.queue else None
            if b.active and head and head.kind is EventKind.ReplicaLeaderElection and head.a == NONE and any(
                    b.ctx.assignment[p] and not b.ctx.topics_to_delete >> (p // ppt) & 1
                    and b.ctx.leadership[p] == NO_ZNODE for p in bits(s.zk.preferred)):
                return True
    return False


def _preferred_znode_stays(s: Cluster, a: Any, t: Cluster, trace: LazyTrace, ppt: int) -> bool:
    """PreferredElectionZnodeConsumed: the znode left is one whose election threw."""
    return bool(t.zk.preferred) and _preferred_election_threw(trace(), ppt)


def _only_preferred_znode_stays(s: Cluster, a: Any, t: Cluster, trace: LazyTrace, ppt: int) -> bool:
    """AdminZnodesConsumed: no reassignment or deletion request is left, only a preferred
    election whose handling threw."""
    return not any(t.zk.reassign) and not t.zk.delete_topics and _preferred_znode_stays(s, a, t, trace, ppt)


PREFERRED_ELECTION_ZNODE_STAYS = Finding(
    9, "a preferred election for a partition without leadership stays in ZooKeeper",
    "docs/findings/preferred-election-znode-stays.itf.json",
    "/admin/preferred_replica_election is the only admin request left, and since it was written a "
    "controller handled it while a partition it names had no leadership (the lookup partitionLeadershipInfo(tp) threw)",
    {"AdminZnodesConsumed": _per_topic(_only_preferred_znode_stays),
     "PreferredElectionZnodeConsumed": _per_topic(_preferred_znode_stays)})


# ---- Findings 10: no controller after an operator's move -------------------------------------------

def _unheard_deletion(trace: Sequence[tuple[Any, Cluster]]) -> bool:
    """The last deletion of `/controller` (an operator's, the controller's session expiring, or
    its clean shutdown closing the session: `zkClient.close`,
    kafka@2.6.x:core/src/main/scala/kafka/server/KafkaServer.scala line 691) came while no broker
    still running with a live session after it had its one-shot watch on `/controller` armed:
    each had spent it on a creation whose ControllerChange it had not processed yet (only that
    processing re-arms it), so no Reelect was queued anywhere
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala ControllerChangeHandler,
    processControllerChange -> maybeResign). Who can hear is judged after the step: the watch of
    a broker whose session the deletion closes goes with it."""
    for i in range(len(trace) - 1, 0, -1):
        before, after = trace[i - 1][1], trace[i][1]
        if before.zk.controller != NONE and after.zk.controller == NONE:
            return not any(before.zk.watches[b] & Watch.CONTROLLER and broker.up and broker.connected
                           and after.zk.session >> b & 1 for b, broker in enumerate(after.brokers))
    return False


def _no_controller_after_unheard_deletion(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
    """No controller at all (none active, `/controller` absent), after a deletion nobody heard."""
    return t.zk.controller == NONE and not active_controllers(t) and _unheard_deletion(trace())


NO_CONTROLLER_AFTER_OPERATOR_MOVE = Finding(
    10, "/controller deleted while the controller's own watch is spent leaves no controller",
    "docs/findings/no-controller-after-operator-move.itf.json",
    "no controller module is active and /controller is absent, and its last deletion (an operator's, the "
    "controller's session expiring or its clean shutdown closing it) came while every broker still running "
    "with a session had its /controller watch spent",
    {"ActiveControllerOnceSettled": _built(_no_controller_after_unheard_deletion),
     "EventuallyOneActiveController": _built(_no_controller_after_unheard_deletion)})


# ---- Findings 11: a reassignment of a partition without a state znode is left half-done ------------

def _half_done(trace: Sequence[tuple[Any, Cluster]], p: int) -> bool:
    """A controller event wrote adding or removing replicas of partition `p` to `/brokers/topics`
    while `p` had no state znode, before and after it: U1 of `updateCurrentReassignment` was
    written and A1's `updateLeaderEpoch` threw "leaderAndIsr path is empty" before A2 started the
    adding replicas; the error was caught per partition and the request deleted, U1 left in place
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 554-567, 606-633,
    644-672, 1003-1038)."""
    for i in range(1, len(trace)):
        a, before, after = trace[i][0], trace[i - 1][1], trace[i][1]
        if (type(a) is ControllerProcessEvent and before.zk.partitions[p] == NO_ZNODE
                and after.zk.partitions[p] == NO_ZNODE and (after.zk.adding[p] or after.zk.removing[p])
                and (after.zk.adding[p], after.zk.removing[p]) != (before.zk.adding[p], before.zk.removing[p])):
            return True
    return False


def _never_started(s: Cluster, p: int) -> bool:
    """An active controller holds an adding replica of `p` as NonExistentReplica: A2
    (`startNewReplicasForReassignedPartition`) never ran for it."""
    return any(s.brokers[c].ctx.replica_states[p][r] is ReplicaState.NonExistentReplica
               for c in active_controllers(s) for r in s.zk.adding[p])


def _reassignment_left_half_done(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
    """ReassignmentEventuallyCompletes: every partition still being reassigned is no longer
    requested in `/admin/reassign_partitions`, has an adding replica never started, and its
    reassignment was written while it had no state znode."""
    zk = t.zk
    faulty = [p for p in range(len(zk.partitions)) if zk.reassign[p] or zk.adding[p] or zk.removing[p]]
    return (bool(faulty) and all(not zk.reassign[p] and _never_started(t, p) for p in faulty)
            and all(_half_done(trace(), p) for p in faulty))


def _replicas_never_started(s: Cluster, a: Any, t: Cluster, trace: LazyTrace, ppt: int) -> bool:
    """ReplicaStatesMatchLiveness: every assigned replica the active controller does not hold as
    OnlineReplica is NonExistentReplica (never started by A2), of a partition whose reassignment
    was written while it had no state znode."""
    faulty: set[int] = set()
    for c in active_controllers(t):
        ctx = t.brokers[c].ctx
        for p, assigned in enumerate(ctx.assignment):
            if ctx.topics_to_delete >> (p // ppt) & 1:
                continue
            for r in assigned:
                state = ctx.replica_states[p][r]
                if state is not ReplicaState.OnlineReplica:
                    if state is not ReplicaState.NonExistentReplica:
                        return False
                    faulty.add(p)
    return bool(faulty) and all(_half_done(trace(), p) for p in faulty)


def _deposed_never_started(cfg: ModelConfig, judge: Judge) -> Matcher:
    """DeposedLeaderNotified: each live deposed leader the event does not notify is a replica the
    electing controller held as NonExistentReplica when the event began (a reassignment's
    `stopRemovedReplicasOfReassignedPartition` cannot move it on: every transition from
    NonExistentReplica but to NewReplica is refused, ReplicaStateMachine.scala lines 450-483, so
    no StopReplica is sent), of a partition whose earlier reassignment was written while it had no
    state znode."""
    n = cfg.brokers

    def matches(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
        if type(a) is not ControllerProcessEvent:
            return False
        ctx = s.brokers[a.broker].ctx
        faulty: set[int] = set()
        for e in judge.elections(s, a):
            old = e.old_leader
            if old >= 0 and old != e.chosen and e.live >> old & 1 and old not in e.recipients:
                sent = sent_in_step(s, t, a.broker * n + old)
                if not any(part.partition == e.partition for r in sent for part in r.partitions):
                    if ctx.replica_states[e.partition][old] is not ReplicaState.NonExistentReplica:
                        return False
                    faulty.add(e.partition)
        return bool(faulty) and all(_half_done(trace(), p) for p in faulty)
    return matches


def _leaderless_outside_assignment(partitions: Callable[[Cluster], Any]) -> MatcherFor:
    """OfflinePartitionWithLiveIsrGetsLeader, OfflinePartitionEventuallyOnline: each partition
    without a leader and with a live ISR member (among `partitions(state)`) has no ISR member in
    its assignment (a replica the reverse reassignment removed, kept as the last ISR member,
    ReplicaStateMachine.scala lines 343-344), the active controller holds it OnlinePartition (a
    failed election keeps the state, PartitionStateMachine.scala lines 241-247, so no broker
    startup retries it), and its earlier reassignment was written while it had no state znode."""
    def matches(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
        live = registered(t)
        faulty = [p for p, z in partitions(t) if z.leader == NONE and set(z.isr) & live]
        return (bool(faulty)
                and all(not set(t.zk.partitions[p].isr) & set(t.zk.assignment[p]) and any(
                    t.brokers[c].ctx.partition_states[p] is PartitionState.OnlinePartition
                    for c in active_controllers(t)) for p in faulty)
                and all(_half_done(trace(), p) for p in faulty))
    return lambda cfg, judge: matches


def _deposed_believers_never_started(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
    """AtMostOneBelievedLeaderAfterQuiescence: among each partition's assigned brokers at most one
    believes it leads, the znode's leader, and every other believer is outside the assignment, held
    NonExistentReplica by an active controller, of a partition whose earlier reassignment was
    written while it had no state znode: the reverse reassignment removed it without a StopReplica,
    since every transition from NonExistentReplica but to NewReplica is refused
    (kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala lines 450-483), so
    the deposed leader is never told (the cause `_deposed_never_started` reads on the election)."""
    extra = _believers_outside_assignment(t)
    if not extra or not all(any(t.brokers[c].ctx.replica_states[p][b] is ReplicaState.NonExistentReplica
                                for c in active_controllers(t)) for p, b in extra):
        return False
    steps = trace()
    return all(_half_done(steps, p) for p, _ in extra)


def _request_dropped_without_state_znode(s: Cluster, a: Any, t: Cluster, trace: LazyTrace, ppt: int) -> bool:
    """AdminRequestCarriedOutOrRefused: every request the step deleted unanswered is a
    reassignment of a partition without a state znode, before and after, left with adding or
    removing replicas in `/brokers/topics`: the step wrote its U1 (a first request), or found the
    same target already written (a request repeated while the first is half-done), and A1 threw
    either way; the error was caught per partition as UNKNOWN_SERVER_ERROR and the request deleted
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 554-567, 654-662)."""
    from kcm.model.catalogue.admin import unanswered_requests  # admin.py names this Finding

    left = unanswered_requests(s, a, t, ppt)
    return bool(left) and all(
        kind == "reassignment" and s.zk.partitions[p] == NO_ZNODE == t.zk.partitions[p]
        and bool(t.zk.adding[p] or t.zk.removing[p])
        for kind, p in left)


REASSIGNMENT_WITHOUT_STATE_ZNODE = Finding(
    11, "a reassignment of a partition without a state znode is left half-done",
    "docs/findings/reassignment-without-state-znode.itf.json",
    "the partition's reassignment was written to /brokers/topics while it had no state znode (A1 threw "
    "before A2), and the property fails only for such partitions: the reassignment left with its "
    "request deleted and an adding replica never started, an assigned replica held NonExistentReplica, "
    "a deposed leader held NonExistentReplica (not told, or still believing it leads), or no leader "
    "with an ISR outside the assignment; or a step that handled a request for it deleted the request unanswered",
    {"ReassignmentEventuallyCompletes": _built(_reassignment_left_half_done),
     "AdminRequestCarriedOutOrRefused": _per_topic(_request_dropped_without_state_znode),
     "ReplicaStatesMatchLiveness": _per_topic(_replicas_never_started),
     "DeposedLeaderNotified": _deposed_never_started,
     "AtMostOneBelievedLeaderAfterQuiescence": _built(_deposed_believers_never_started),
     "OfflinePartitionWithLiveIsrGetsLeader":
         lambda cfg, judge: _leaderless_outside_assignment(_judged(cfg))(cfg, judge),
     "OfflinePartitionEventuallyOnline": _leaderless_outside_assignment(
         lambda t: [(p, z) for p, z in enumerate(t.zk.partitions) if z != NO_ZNODE])})


# ---- Findings 12: a StopReplica answer to an earlier attempt completes a retried deletion ----------

def _stale_answer_completes_deletion(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
    """DeletedTopicLeavesNoReplica: the step is an active controller's
    TopicDeletionStopReplicaResponseReceived (its callback checks only that the topic is still
    being deleted, kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerChannelManager.scala
    lines 559-565, and `processTopicDeletionStopReplicaResponseReceived` only that the controller
    is active, KafkaController.scala lines 1218-1237), and each broker of a partition the step
    deleted that still holds a replica of it has, from this controller, a StopReplica(delete) for
    it still queued: the answer was to an earlier attempt (before a failover or a bounce of the
    broker), and the retry's StopReplica, which removes the replica the retry's LeaderAndIsr
    re-created, has not arrived yet."""
    if type(a) is not ControllerProcessEvent:
        return False
    c = a.broker
    queue = s.brokers[c].queue
    if not queue or queue[0].kind is not EventKind.TopicDeletionStopReplicaResponseReceived:
        return False
    nb = len(t.brokers)
    for p, (before, after) in enumerate(zip(s.zk.assignment, t.zk.assignment)):
        if before and not after:
            for b in before:
                if t.brokers[b].replicas[p] != NO_REPLICA and not any(
                        r.kind is RequestKind.StopReplica and any(q.partition == p and q.delete for q in r.partitions)
                        for r in t.net[c * nb + b]):
                    return False
    return True


STALE_STOP_REPLICA_ANSWER = Finding(
    12, "a StopReplica answer to an earlier attempt completes a retried topic deletion",
    "docs/findings/stale-stop-replica-answer.itf.json",
    "an active controller's TopicDeletionStopReplicaResponseReceived deletes the topic while each broker "
    "still holding a replica of it has this controller's StopReplica(delete) for it still queued",
    {"DeletedTopicLeavesNoReplica": _built(_stale_answer_completes_deletion)})


# ---- Findings 5: a topic deletion requested during a reassignment starts at once -----------------

def _deleted_during_reassignment(trace: Sequence[tuple[Any, Cluster]], ppt: int) -> set[int]:
    """The topics whose TopicDeletion an active controller processed while one of their
    partitions was being reassigned in its context and the topic was not yet queued for
    deletion, and which it queued without marking them ineligible: `processTopicDeletion` marks
    the reassigning topics ineligible before it queues them, and `markTopicIneligibleForDeletion`
    marks only queued ones (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    lines 1515-1529, TopicDeletionManager.scala lines 170-177)."""
    topics: set[int] = set()
    for i in range(1, len(trace)):
        a = trace[i][0]
        if type(a) is not ControllerProcessEvent:
            continue
        s, t = trace[i - 1][1], trace[i][1]
        b = s.brokers[a.broker]
        if not b.active or not b.queue or b.queue[0].kind is not EventKind.TopicDeletion:
            continue
        ctx, after = b.ctx, t.brokers[a.broker].ctx
        for topic in bits(after.topics_to_delete & ~ctx.topics_to_delete & ~after.topics_ineligible):
            if any(ctx.reassigning >> p & 1 for p in range(topic * ppt, (topic + 1) * ppt)):
                topics.add(topic)
    return topics


def _only_deleted_during_reassignment(faulty: Callable[[Cluster, int], set[int] | None]) -> MatcherFor:
    """A matcher: the topics the property faults in the violating state (`faulty(state, ppt)`;
    None: not this Finding's) are all topics whose deletion started during their reassignment."""
    def build(cfg: ModelConfig, judge: Judge) -> Matcher:
        def matches(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
            topics = faulty(t, cfg.partitions)
            return bool(topics) and topics is not None and topics <= _deleted_during_reassignment(
                trace(), cfg.partitions)
        return matches
    return build


def _admin_requests_left(t: Cluster, ppt: int) -> set[int] | None:
    """AdminZnodesConsumed: the topics of the reassignment and deletion requests left (none of
    Findings 5 when a preferred election is left). Without a failover the deletion completes and
    leaves the reassignment request: `completeDeleteTopic` never touches
    `/admin/reassign_partitions` (TopicDeletionManager.scala lines 239-250)."""
    zk = t.zk
    if zk.preferred:
        return None
    return {p // ppt for p in range(len(zk.reassign)) if zk.reassign[p]} | set(bits(zk.delete_topics))


def _reassignments_left(t: Cluster, ppt: int) -> set[int]:
    """ReassignmentEventuallyCompletes: the topics of the partitions still requested or being reassigned."""
    zk = t.zk
    return {p // ppt for p in range(len(zk.assignment)) if zk.reassign[p] or zk.adding[p] or zk.removing[p]}


def _leaderless_with_live_isr(t: Cluster, ppt: int) -> set[int]:
    """OfflinePartitionEventuallyOnline: the topics of the partitions without a leader with a live ISR member."""
    live = registered(t)
    return {p // ppt for p, z in enumerate(t.zk.partitions) if z != NO_ZNODE and z.leader == NONE and set(z.isr) & live}


DELETION_DURING_REASSIGNMENT = Finding(
    5, "a topic deletion requested during a reassignment starts at once",
    "docs/findings/deletion-during-reassignment.itf.json",
    "every topic the property faults (a request left in the admin znodes, a reassignment left, a "
    "partition without a leader) had its deletion queued and started by an active controller while "
    "one of its partitions was being reassigned",
    {"AdminZnodesConsumed": _only_deleted_during_reassignment(_admin_requests_left),
     "ReassignmentEventuallyCompletes": _only_deleted_during_reassignment(_reassignments_left),
     "OfflinePartitionEventuallyOnline": _only_deleted_during_reassignment(_leaderless_with_live_isr)})

# ---- Findings 13: a reassignment completed while its new replicas are held dead ---------------------

def _completed_with_dead_targets(trace: Sequence[tuple[Any, Cluster]], p: int) -> bool:
    """The last step of the trace that turned partition `p`'s state znode from a leader to none
    (-1) was an active controller's event that completed `p`'s reassignment (before it
    `/admin/reassign_partitions` or the adding or removing replicas named `p`, after it none did)
    while that controller held none of the new assignment's replicas live: the target had joined
    the ISR by the leader's own expansion (`Partition.maybeExpandIsr` checks offsets only,
    kafka@2.6.x:core/src/main/scala/kafka/cluster/Partition.scala lines 692-722),
    `isReassignmentComplete` reads the ISR from ZooKeeper with no liveness check
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 803-813), the
    reassignment's leader election finds no live target in the ISR
    (kafka@2.6.x:core/src/main/scala/kafka/controller/Election.scala reassignPartitionLeaderElection)
    and fails, and B4 takes the old leader out of the ISR."""
    for i in range(len(trace) - 1, 0, -1):
        before, (a, after) = trace[i - 1][1], trace[i]
        zb, za = before.zk.partitions[p], after.zk.partitions[p]
        if zb != NO_ZNODE and za != NO_ZNODE and zb.leader != NONE and za.leader == NONE:
            zk, zk2 = before.zk, after.zk
            return (type(a) is ControllerProcessEvent and before.brokers[a.broker].active
                    and bool(zk.reassign[p] or zk.adding[p] or zk.removing[p])
                    and not (zk2.reassign[p] or zk2.adding[p] or zk2.removing[p])
                    and not any(before.brokers[a.broker].ctx.live >> r & 1 for r in zk2.assignment[p]))
    return False


def _leaderless_after_dead_completion(partitions: Callable[[Cluster], Any]) -> MatcherFor:
    """OfflinePartitionWithLiveIsrGetsLeader, OfflinePartitionEventuallyOnline: each partition
    without a leader and with a live ISR member (among `partitions(state)`) is held OnlinePartition
    by an active controller (a failed election keeps the state,
    kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala lines 241-247, and a
    broker's startup triggers only Offline and New partitions, lines 56-73), and lost its leader
    to a reassignment completed while its new replicas were held dead (`_completed_with_dead_targets`)."""
    def matches(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
        live = registered(t)
        faulty = [p for p, z in partitions(t) if z.leader == NONE and set(z.isr) & live]
        return (bool(faulty)
                and all(any(t.brokers[c].ctx.partition_states[p] is PartitionState.OnlinePartition
                            for c in active_controllers(t)) for p in faulty)
                and all(_completed_with_dead_targets(trace(), p) for p in faulty))
    return lambda cfg, judge: matches


REASSIGNMENT_COMPLETED_WITH_DEAD_TARGETS = Finding(
    13, "a reassignment completed while its new replicas are held dead leaves the partition without a leader",
    "docs/findings/reassigned-to-dead-target.itf.json",
    "every partition without a leader and with a live ISR member is held OnlinePartition by an "
    "active controller, and its leader was last removed by a controller's event that completed its "
    "reassignment while that controller held none of the new replicas live",
    {"OfflinePartitionWithLiveIsrGetsLeader":
         lambda cfg, judge: _leaderless_after_dead_completion(_judged(cfg))(cfg, judge),
     "OfflinePartitionEventuallyOnline": _leaderless_after_dead_completion(
         lambda t: [(p, z) for p, z in enumerate(t.zk.partitions) if z != NO_ZNODE])})


# ---- Findings 14: the scheduled rebalance skips every partition while a reassignment runs ----------

def _rebalance_during_reassignment(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
    """AutoRebalanceElectsPreferred: the step is an active controller's scheduled rebalance
    (AutoPreferredReplicaLeaderElection) while its context holds a partition being reassigned:
    `checkAndTriggerAutoLeaderRebalance` keeps a candidate only if
    `controllerContext.partitionsBeingReassigned.isEmpty`, a test of the whole cluster, not of the
    partition (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    checkAndTriggerAutoLeaderRebalance, lines 1064-1072), so every partition is left off its
    preferred replica until the next run of the task after the reassignment completes."""
    if type(a) is not ControllerProcessEvent:
        return False
    b = s.brokers[a.broker]
    return (b.active and bool(b.queue) and b.queue[0].kind is EventKind.AutoPreferredReplicaLeaderElection
            and b.ctx.reassigning != 0)


REBALANCE_SKIPPED_DURING_REASSIGNMENT = Finding(
    14, "the scheduled rebalance skips every partition while a reassignment is in progress",
    "docs/findings/rebalance-during-reassignment.itf.json",
    "the violating step is an active controller's scheduled rebalance while its context holds a "
    "partition being reassigned (any partition, not only the one left off its preferred replica)",
    {"AutoRebalanceElectsPreferred": _built(_rebalance_during_reassignment)})


# ---- Findings 15 and 16: an added partition taken out of /brokers/topics ----------------------------

def _taken_out(s: Cluster, t: Cluster, ppt: int) -> list[int]:
    """The partitions the step took out of a topic's `/brokers/topics` znode while the topic stayed."""
    before, after = s.zk.assignment, t.zk.assignment
    out = []
    for first in range(0, len(before), ppt):
        ps = range(first, first + ppt)
        if any(after[p] for p in ps):
            out += [p for p in ps if before[p] and not after[p]]
    return out


def _event_of(s: Cluster, a: Any) -> Event | None:
    """The controller event step `a` processes at its broker, or None for any other kind of step."""
    if not isinstance(a, (ControllerProcessEvent, ZkLoseReply, ZkConnectionLoss)) or not s.brokers[a.broker].queue:
        return None
    return s.brokers[a.broker].queue[0]


def _restored_during_deletion(s: Cluster, a: Any, t: Cluster, trace: LazyTrace, ppt: int) -> bool:
    """PartitionCountNeverDecreases: an active controller's `PartitionModifications(t)` for a topic
    it holds queued for deletion wrote the topic's old assignment back."""
    event = _event_of(s, a)
    return (event is not None and event.kind is EventKind.PartitionModifications and s.brokers[a.broker].active
            and bool(s.brokers[a.broker].ctx.topics_to_delete >> event.a & 1) and bool(_taken_out(s, t, ppt)))


ADDITION_RESTORED_DURING_DELETION = Finding(
    15, "partitions added to a topic queued for deletion are acknowledged, then written away by the controller",
    "docs/findings/addition-while-deleting.itf.json",
    "an active controller processing PartitionModifications for a topic it holds queued for deletion "
    "writes the topic's assignment back without the new partitions (restorePartitionReplicaAssignment)",
    {"PartitionCountNeverDecreases": _per_topic(_restored_during_deletion)})


def _written_away_from_context(s: Cluster, a: Any, t: Cluster, trace: LazyTrace, ppt: int) -> bool:
    """PartitionCountNeverDecreases: a controller event other than `PartitionModifications` wrote a
    topic's znode from the context (a reassignment's `updateReplicaAssignmentForPartition`), and every
    partition it took out is one that controller's context did not have yet."""
    event = _event_of(s, a)
    if event is None or event.kind is EventKind.PartitionModifications:
        return False
    gone = _taken_out(s, t, ppt)
    ctx = s.brokers[a.broker].ctx
    return bool(gone) and all(not ctx.assignment[p] for p in gone)


ADDITION_WRITTEN_AWAY_BY_REASSIGNMENT = Finding(
    16, "a reassignment started before the controller processed a partition addition writes the new partitions away",
    "docs/findings/addition-lost-to-reassignment.itf.json",
    "a controller event other than PartitionModifications writes the topic's assignment from the "
    "controller's context (updateReplicaAssignmentForPartition), without the partitions an admin "
    "added in ZooKeeper that the context does not have yet",
    {"PartitionCountNeverDecreases": _per_topic(_written_away_from_context)})


# ---- Findings 17: an ElectLeaders request left unanswered -----------------------------------------

def _elect_leaders_unanswered(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
    """ElectLeadersAnswered: the step processes an AdminClient's ReplicaLeaderElection and gives no
    answer, because the controller, active when it began, caches no leadership for the partition
    of a topic it knows and is not deleting (`partitionLeadershipInfo(partition)` throws), or was
    deposed in the step (a fenced write: ControllerMovedException, then `maybeResign`)."""
    if type(a) not in (ControllerProcessEvent, ZkLoseReply, ZkConnectionLoss):
        return False
    broker = s.brokers[a.broker]
    head = broker.queue[0] if broker.queue else None
    if head is None or head.kind is not EventKind.ReplicaLeaderElection or head.a == NONE or not broker.active:
        return False
    ctx = broker.ctx
    p = head.a
    no_leadership = bool(ctx.assignment[p]) and ctx.leadership[p] == NO_ZNODE
    deposed = not t.brokers[a.broker].active
    return no_leadership or deposed


ELECT_LEADERS_UNANSWERED = Finding(
    17, "an ElectLeaders request for a partition without cached leadership is never answered, "
        "nor one whose handling a controller move cuts short",
    "docs/findings/elect-leaders-unanswered.itf.json",
    "the controller, active when it took the AdminClient's ReplicaLeaderElection, answered nothing: "
    "it cached no leadership for the partition (partitionLeadershipInfo(tp) threw NoSuchElementException) "
    "or a fenced write deposed it (ControllerMovedException)",
    {"ElectLeadersAnswered": _built(_elect_leaders_unanswered)})


# ---- Findings 18: a replica a reassignment is adding is not asked about its failed log directory ----

def _adding_replica_on_failed_dir(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
    """OfflineDirsKnownOnceQuiescent: every replica whose failed log directory the active controller
    does not hold in `replicasOnOfflineDirs` is one a reassignment is adding (in the partition's
    `adding` replicas, NewReplica to the controller), and the controller holds no replica there
    whose directory did not fail. `onBrokerLogDirFailure` asks the broker with
    `handleStateChanges(replicasOnBrokers, OnlineReplica)`, and from NewReplica that transition sends
    no LeaderAndIsr (kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala
    lines 198-204; KafkaController.scala lines 325-330): the broker is never asked, never answers
    KAFKA_STORAGE_ERROR, and the reassignment waits for a replica that cannot join the ISR until
    the broker restarts."""
    explained = False
    for broker in t.brokers:
        if not broker.active:
            continue
        ctx = broker.ctx
        for p, assigned in enumerate(ctx.assignment):
            for b in assigned:
                failed, known = t.brokers[b].offline_dirs >> p & 1, ctx.offline_dirs[b] >> p & 1
                if known and not failed:
                    return False
                if failed and not known:
                    if b not in ctx.adding[p]:
                        return False
                    explained = True
    return explained


LOG_DIR_OF_ADDING_REPLICA = Finding(
    18, "a replica a reassignment is adding is never asked about its failed log directory",
    "docs/findings/log-dir-of-adding-replica.itf.json",
    "every replica whose failed directory the active controller does not know is one a reassignment "
    "is adding (NewReplica: onBrokerLogDirFailure's OnlineReplica transition sends it no LeaderAndIsr)",
    {"OfflineDirsKnownOnceQuiescent": _built(_adding_replica_on_failed_dir)})


# ---- Findings 19: a reassignment waits, until a restart, for a replica on a failed log directory ---

def _behind_failed_dirs(t: Cluster, p: int) -> bool:
    """Partition `p`'s reassignment waits for a failed log directory: a replica it is adding is
    outside the ISR on a failed directory, or the partition has no leader and every ISR member is
    on one (and no new replica has joined). `onPartitionReassignment` completes only once every
    target is in the ISR (`isReassignmentComplete`,
    kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 563-567 and
    803-812): a replica on a failed directory fetches nothing, and a partition whose last ISR
    member is on one keeps it (an `OfflinePartition` with unclean election off elects no one) and
    names no leader in A1's LeaderAndIsr, so the new replicas fetch from nobody. Only the broker's
    restart, which brings the directory back and resumes the reassignment (`onBrokerStartup`),
    ends the wait; whether the controller learnt of the failure does not matter (Findings 18 is
    the case where it did not). A crashed replica stalls a reassignment the same way, but a dead
    broker is never quiescent; a failed directory leaves its broker up, so the properties judge
    the wait."""
    zk = t.zk
    isr = zk.partitions[p].isr if zk.partitions[p] != NO_ZNODE else ()
    if any(t.brokers[r].offline_dirs >> p & 1 and r not in isr for r in zk.adding[p]):
        return True
    return (zk.partitions[p] != NO_ZNODE and zk.partitions[p].leader == NONE and bool(isr)
            and all(t.brokers[r].offline_dirs >> p & 1 for r in isr) and not set(zk.adding[p]) & set(isr))


def _stalled_reassignments(stalled: Callable[[Cluster, int], bool]) -> MatcherFor:
    """ReassignmentEventuallyCompletes: every partition still requested in
    `/admin/reassign_partitions` or being reassigned is `stalled`."""
    def matches(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
        zk = t.zk
        faulty = [p for p in range(len(zk.partitions)) if zk.reassign[p] or zk.adding[p] or zk.removing[p]]
        return bool(faulty) and all(stalled(t, p) for p in faulty)
    return lambda cfg, judge: matches


def _stalled_requests(stalled: Callable[[Cluster, int], bool]) -> MatcherFor:
    """AdminZnodesConsumed: the requests left are reassignments only (no preferred election, no
    deletion), each of a `stalled` partition: the request is deleted only when the reassignment
    completes (`removePartitionsFromReassignedPartitions`, KafkaController.scala B7)."""
    def matches(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
        zk = t.zk
        left = [p for p in range(len(zk.reassign)) if zk.reassign[p]]
        return not zk.preferred and not zk.delete_topics and bool(left) and all(stalled(t, p) for p in left)
    return lambda cfg, judge: matches


def _stalled_new_replicas(stalled: Callable[[Cluster, int], bool]) -> MatcherFor:
    """ReplicaStatesMatchLiveness: every assigned replica the active controller holds neither as
    OnlineReplica nor, on a failed directory it knows, as OfflineReplica is a NewReplica a
    reassignment is adding, of a `stalled` partition: A2 of `onPartitionReassignment` moves the
    targets to NewReplica and only the completion, B1, moves them to OnlineReplica
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 563-570)."""
    def build(cfg: ModelConfig, judge: Judge) -> Matcher:
        def matches(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
            faulty = list(misheld_replicas(t, cfg.partitions))
            return bool(faulty) and all(state is ReplicaState.NewReplica and r in t.zk.adding[p] and stalled(t, p)
                                        for _, p, r, state in faulty)
        return matches
    return build


LOG_DIRS_STALL_REASSIGNMENT = Finding(
    19, "a reassignment waits, until a restart, for a replica on a failed log directory",
    "docs/findings/reassignment-behind-failed-dirs.itf.json",
    "every reassignment left (with its request and its new replicas held NewReplica) is of a partition "
    "that has a new replica outside the ISR on a failed log directory, or no leader and an ISR all on "
    "failed log directories: isReassignmentComplete waits for every target to join the ISR",
    {"ReassignmentEventuallyCompletes": _stalled_reassignments(_behind_failed_dirs),
     "AdminZnodesConsumed": _stalled_requests(_behind_failed_dirs),
     "ReplicaStatesMatchLiveness": _stalled_new_replicas(_behind_failed_dirs)})


# ---- Findings 20: a second log-directory failure brings a known-offline replica back online ----

def _known_offline_held_online(cfg: ModelConfig, judge: Judge) -> Matcher:
    """ReplicaStatesMatchLiveness: every assigned replica the active controller does not hold as
    the property expects is OnlineReplica though in its `replicasOnOfflineDirs`, on a directory
    that did fail, of a broker with two failed directories or more. The broker's second failure
    makes `onBrokerLogDirFailure` move every replica on it to OnlineReplica, the one already
    offline too (`handleStateChanges(replicasOnBrokers, OnlineReplica)`,
    kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 325-330; the
    table allows OfflineReplica -> OnlineReplica, ReplicaStateMachine.scala line 457); the broker
    answers KAFKA_STORAGE_ERROR for both directories, but `processLeaderAndIsrResponseReceived`
    takes offline only `currentOfflineReplicas.diff(previousOfflineReplicas)` (lines 1207-1215),
    and the replica was already in the previous set: nothing moves it back to OfflineReplica
    until the broker restarts."""
    def matches(s: Cluster, a: Any, t: Cluster, trace: LazyTrace) -> bool:
        faulty = list(misheld_replicas(t, cfg.partitions))
        return bool(faulty) and all(
            state is ReplicaState.OnlineReplica and t.brokers[c].ctx.offline_dirs[r] >> p & 1
            and t.brokers[r].offline_dirs >> p & 1 and t.brokers[r].offline_dirs.bit_count() >= 2
            for c, p, r, state in faulty)
    return matches


SECOND_LOG_DIR_FAILURE = Finding(
    20, "a second log-directory failure on a broker brings its known-offline replica back online in the "
    "controller's view",
    "docs/findings/second-log-dir-failure.itf.json",
    "every replica the active controller holds wrongly is OnlineReplica though in its replicasOnOfflineDirs, "
    "on a failed directory of a broker whose directories failed twice or more: the second failure's "
    "onBrokerLogDirFailure moves it to OnlineReplica, and the answer names it as no new offline replica",
    {"ReplicaStatesMatchLiveness": _known_offline_held_online})


#: Every Finding a property names.
FINDINGS: tuple[Finding, ...] = (REMOVED_REPLICA_LEADS, DELETION_DURING_REASSIGNMENT, LOST_CREATE_REPLY,
                                 SHUTTING_DOWN_REJOINS_ISR,
                                 PREFERRED_ELECTION_ZNODE_STAYS, NO_CONTROLLER_AFTER_OPERATOR_MOVE,
                                 REASSIGNMENT_WITHOUT_STATE_ZNODE, STALE_STOP_REPLICA_ANSWER,
                                 REASSIGNMENT_COMPLETED_WITH_DEAD_TARGETS, REBALANCE_SKIPPED_DURING_REASSIGNMENT,
                                 ADDITION_RESTORED_DURING_DELETION, ADDITION_WRITTEN_AWAY_BY_REASSIGNMENT,
                                 ELECT_LEADERS_UNANSWERED, LOG_DIR_OF_ADDING_REPLICA,
                                 LOG_DIRS_STALL_REASSIGNMENT, SECOND_LOG_DIR_FAILURE)


# The configs under which 2.6 breaks a property (the conditions of `Declaration.findings`).

def lost_create_replies(cfg: ModelConfig) -> bool:
    """A reply to a partition-state create may be lost (`max_lost_acks` or `max_connection_losses`
    from the cold start, where the first controller creates every state znode, or a `lost_ack` or
    `connection_loss` in an overlapping run that also creates a topic, whose partitions' state
    znodes are created then). The partition stays
    New and uncached while ZooKeeper has its znode, and every property that compares the
    controller's view with ZooKeeper around that partition fails, as 2.6 does."""
    return (cfg.max_lost_acks > 0 or cfg.max_connection_losses > 0
            or any("topic_creation" in run and ("lost_ack" in run or "connection_loss" in run)
                   for run in cfg.overlapping))


def isr_admission_of_2_6(cfg: ModelConfig) -> bool:
    """The leader admits a shutting-down follower to the ISR (KIP-841 stopped it in 3.3.0, with
    KAFKA-14140 for ZooKeeper mode)."""
    return cfg.isr_admission == "2.6"


def _within(bound: int, need: int) -> bool:
    """A budget across kinds (-1: none) affords `need` perturbations."""
    return bound < 0 or bound >= need


def _pair(cfg: ModelConfig, first: bool, second: bool, admin_ops: int) -> bool:
    """From the cold start: both kinds have a budget and one run can afford both (`admin_ops` of
    the two are admin operations, the rest faults)."""
    return (first and second and _within(cfg.max_perturbations, 2) and _within(cfg.max_admin_ops, admin_ops)
            and _within(cfg.max_faults, 2 - admin_ops))


def reassignments_with_expiries(cfg: ModelConfig) -> bool:
    """A reassignment and a session expiry in one run, with 2.6's ISR admission: the expiry takes
    the target's registration while its process still fetches, and the leader admits it to the
    ISR, so the reassignment completes with its target held dead (KIP-841's admission, 3.3.0,
    refuses a follower that is not registered)."""
    return isr_admission_of_2_6(cfg) and (
        _pair(cfg, cfg.max_reassignments > 0, cfg.max_session_expiries > 0, 1)
        or any("reassignment" in run and "session_expiry" in run for run in cfg.overlapping))


def reassignments_with_lost_stop_replicas(cfg: ModelConfig) -> bool:
    """A reassignment and, in one run, what can lose the StopReplica sent to a replica it removes:
    a session expiry (the removed broker re-registers before the controller sees it bounce, or the
    controller's own session expires and it resigns), a crash or a controlled shutdown of the
    controller, or an operator's move of `/controller` (a resignation shuts the channel manager
    down with its queues)."""
    reassign = cfg.max_reassignments > 0
    cold = (_pair(cfg, reassign, cfg.max_session_expiries > 0, 1) or _pair(cfg, reassign, cfg.max_broker_crashes > 0, 1)
            or _pair(cfg, reassign, cfg.max_controller_moves > 0, 1)
            or _pair(cfg, reassign, cfg.max_controlled_shutdowns > 0, 2))
    losses = ("session_expiry", "broker_crash", "controller_move", "controlled_shutdown")
    return cold or any("reassignment" in run and any(kind in run for kind in losses) for run in cfg.overlapping)


def isr_admission_of_2_6_with_expiries(cfg: ModelConfig) -> bool:
    """The leader admits to the ISR a follower the controller holds shutting down or not live,
    and a session expiry in the run can take the follower's registration before its broker stops
    (2.6's admission; KIP-841 stopped it in 3.3.0). The stop is a controlled shutdown or a crash."""
    return isr_admission_of_2_6(cfg) and (
        cfg.max_session_expiries > 0 or any("session_expiry" in run for run in cfg.overlapping))


def deletions_with_failover_or_bounce(cfg: ModelConfig) -> bool:
    """A topic deletion in a run that can also bounce the replica's broker or fail the controller
    over (a session expiry or an operator's move of `/controller`): the deletion is retried while
    an answer to its first attempt is still queued."""
    cold = (_pair(cfg, cfg.max_topic_deletions > 0, cfg.max_session_expiries > 0, 1)
            or _pair(cfg, cfg.max_topic_deletions > 0, cfg.max_controller_moves > 0, 1))
    return cold or any("topic_deletion" in run and ("session_expiry" in run or "controller_move" in run)
                       for run in cfg.overlapping)


def deletions_and_reassignments(cfg: ModelConfig) -> bool:
    """A topic deletion and a reassignment in one run: the deletion of a topic being reassigned
    starts at once."""
    return _pair(cfg, cfg.max_topic_deletions > 0, cfg.max_reassignments > 0, 2) or any(
        "topic_deletion" in run and "reassignment" in run for run in cfg.overlapping)


def rebalances_and_reassignments(cfg: ModelConfig) -> bool:
    """A scheduled rebalance and a reassignment in one run: the rebalance can come while the
    reassignment is in progress, with a preferred replica online and in the ISR off the lead (the
    reassignment's own target, once it has joined the ISR, is the first replica of the full
    assignment)."""
    return _pair(cfg, cfg.max_auto_rebalances > 0, cfg.max_reassignments > 0, 2) or any(
        "auto_rebalance" in run and "reassignment" in run for run in cfg.overlapping)


def any_config(cfg: ModelConfig) -> bool:
    """Every config: 2.6 always has the behaviour, when a run reaches it."""
    return True


def controller_moves(cfg: ModelConfig) -> bool:
    """An operator may delete `/controller`, alone or in an overlapping run."""
    return bool(cfg.max_controller_moves) or any("controller_move" in run for run in cfg.overlapping)


def two_controller_moves(cfg: ModelConfig) -> bool:
    """An operator may delete `/controller` twice: with every broker up, the second deletion can
    come while both brokers' watches are spent, and the quiescent cluster has no controller."""
    return cfg.max_controller_moves >= 2


def elect_leaders_unanswered(cfg: ModelConfig) -> bool:
    """A run may send an ElectLeaders request and also lose a reply to a partition-state create
    (a lost reply or a connection loss), depose the controller that holds the request (a session
    expiry or an operator's controller move), or take every replica of a partition down (crashes
    and controlled shutdowns, one per replica) so that it has no state znode."""
    deposing = ("lost_ack", "connection_loss", "session_expiry", "controller_move")
    cold = cfg.max_elect_leaders > 0 and (
        cfg.max_lost_acks + cfg.max_connection_losses + cfg.max_session_expiries + cfg.max_controller_moves > 0
        or cfg.max_broker_crashes + cfg.max_controlled_shutdowns >= cfg.replication_factor)
    return cold or any("elect_leaders" in run and any(kind in run for kind in deposing) for run in cfg.overlapping)


def log_dir_failures_and_reassignments(cfg: ModelConfig) -> bool:
    """A log directory may fail and a reassignment add a replica in one run: the directory of the
    replica being added, or of the partition's last in-sync replica, can fail before the
    reassignment completes."""
    fails = cfg.max_log_dir_failures > 0
    return _pair(cfg, fails, cfg.max_reassignments > 0, 1) or any(
        "log_dir_failure" in run and "reassignment" in run for run in cfg.overlapping)


def second_log_dir_failures(cfg: ModelConfig) -> bool:
    """Two log directories of one broker may fail in one run (`max_log_dir_failures` of two or
    more, and a run that affords two faults; an overlapping run holds each kind once): the second
    failure brings the replica of the first back to OnlineReplica in the controller's view."""
    return (cfg.max_log_dir_failures >= 2 and _within(cfg.max_perturbations, 2)
            and _within(cfg.max_faults, 2))


def reassignment_without_state_znode(cfg: ModelConfig) -> bool:
    """An operator may reassign a partition that has no state znode: every replica of it down
    when a controller handled it, so that a broker outside them must be left to be the
    controller (`replication_factor < brokers`), and the run must afford a crash or session
    expiry of each replica and the reassignment. From the cold start the first controller can
    meet the replicas down; from the settled cluster every partition has its state znode, unless
    the run creates a topic while its replicas are down. (A dead broker's session expiry costs no
    budget: it only lets the expiry the crash implies come first.)"""
    if cfg.replication_factor >= cfg.brokers:
        return False
    rf = cfg.replication_factor

    def within(bound: int, need: int) -> bool:
        return bound < 0 or bound >= need

    cold = (cfg.max_reassignments > 0 and cfg.max_broker_crashes + cfg.max_session_expiries >= rf
            and within(cfg.max_faults, rf) and within(cfg.max_admin_ops, 1) and within(cfg.max_perturbations, rf + 1))
    overlapping = any("reassignment" in run and "topic_creation" in run
                      and sum(kind in ("broker_crash", "session_expiry") for kind in run) >= rf
                      for run in cfg.overlapping)
    return cold or overlapping


def _additions_with(cfg: ModelConfig, kind: str, budget: int) -> bool:
    """Partitions can be added in a run that also has `kind` (budget field value `budget` from the
    cold start, or both kinds in one overlapping run)."""
    return (_pair(cfg, cfg.max_partition_additions > 0, budget > 0, 2)
            or any("partition_addition" in run and kind in run for run in cfg.overlapping))


def additions_and_deletions(cfg: ModelConfig) -> bool:
    """A partition addition and a topic deletion in one run: the addition can reach a controller
    that holds the topic queued for deletion."""
    return _additions_with(cfg, "topic_deletion", cfg.max_topic_deletions)


def additions_and_reassignments(cfg: ModelConfig) -> bool:
    """A partition addition and a reassignment in one run: the reassignment can be queued before
    the addition's PartitionModifications."""
    return _additions_with(cfg, "reassignment", cfg.max_reassignments)
