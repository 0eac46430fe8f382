"""Leadership and ISR: who leads each partition, who may, and who believes it does.

In Kafka 2.6 a partition's leadership lives in its state znode
(`/brokers/topics/<t>/partitions/<p>/state`: leader, leader epoch, ISR, written with its
zkVersion). The controller creates it (`initializeLeaderAndIsrForPartitions`: the live replicas,
the first as leader), elects a new leader with one of `PartitionLeaderElectionAlgorithms`
(offline, reassignment, preferred, controlled shutdown), each write bumping the leader epoch, and
removes a dead replica from the ISR (`removeReplicasFromIsr`, keeping the last member, KAFKA-708);
the leader itself grows and shrinks the ISR, conditionally on its cached zkVersion
(`Partition.updateIsr`); every broker applies a LeaderAndIsr only with a newer leader epoch
(kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala,
kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala,
kafka@2.6.x:core/src/main/scala/kafka/cluster/Partition.scala,
kafka@2.6.x:core/src/main/scala/kafka/server/ReplicaManager.scala).

So, on every state: the leader is in the ISR or none, and no ISR is empty. On every step: leader
epochs never go back and each controller write bumps the epoch once; an election chooses what
Kafka 2.6's algorithm returns, a live leader, from the ISR unless unclean election is allowed; a
preferred election moves the leader, an offline one is for a partition whose leader is offline;
a new partition starts from live replicas; an OfflineReplica transition leaves the ISR; the
scheduled rebalance elects every eligible preferred replica (2.6 skips them all while a
reassignment is in progress, Findings 14). Once settled (dead brokers left
dead), no dead broker leads and a dead replica is in an ISR only as its sole member, and a
partition with a live ISR member has a leader; once quiescent, every partition with a registered
ISR member has a leader, at most one broker believes it leads (Kafka 2.6 can leave a replica a
reassignment removed believing it, Findings 4), every assigned broker follows the znode's
leader, the leader caches the znode's ISR and zkVersion, and every assigned partition has its
state znode. Topics queued for deletion are left out of the settled and
quiescent ones (`views.judged_partitions`). Kafka 2.6 breaks some of them after a lost reply to
a partition-state create (Findings 7).
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
    from_judge,
    per_topic,
    per_topic_with_judge,
    with_judge,
)
from kcm.model.catalogue.settledness import AFRESH, Judge, Settledness, settled_under_a_controller
from kcm.model.catalogue.views import (
    agreed,
    handled,
    judged_partitions,
    led_partitions,
    online_replicas,
    online_to,
    waiting_for_failed_dirs,
)
from kcm.model.cluster import NO_ZNODE, NONE, Cluster, Edge, Election, EventKind, bits
from kcm.model.election import (
    controlled_shutdown_partition_leader_election,
    offline_partition_leader_election,
    preferred_replica_partition_leader_election,
    reassign_partition_leader_election,
)
from kcm.model.state_machines import Strategy
from kcm.model.states import ReplicaState


def leader_in_isr_or_none(s: Cluster) -> bool:
    return all(z.leader == NONE or z.leader in z.isr for z in s.zk.partitions if z != NO_ZNODE)


def isr_non_empty(s: Cluster) -> bool:
    return all(z.isr for z in s.zk.partitions if z != NO_ZNODE)


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


def leader_is_live(judge: Judge) -> Callable[[Cluster, object, Cluster], bool]:
    """Transition invariant builder: every leader elected is live in the electing controller's
    view."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        return all(e.live >> e.chosen & 1 for e in judge.elections(s, a))
    return holds


def _kafka_2_6_choice(e: Election, assignment: tuple[int, ...], removing: tuple[int, ...]) -> int:
    """The leader Kafka 2.6's `PartitionLeaderElectionAlgorithms` picks for `e`'s strategy and
    inputs (the ISR read, the live and online brokers) over `assignment`; -1 for none
    (kafka@2.6.x:core/src/main/scala/kafka/controller/Election.scala,
    PartitionStateMachine.scala `PartitionLeaderElectionAlgorithms`)."""
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


def election_rule_conformance(judge: Judge) -> Callable[[Cluster, object, Cluster], bool]:
    """Transition invariant builder: every leader elected is the one Kafka 2.6's algorithm returns
    for the election's inputs, by the model's own computation (`expected`) and computed apart
    (`_chosen_by_the_algorithm`)."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        elections = judge.elections(s, a)
        return (all(e.chosen == e.expected for e in elections)
                and all(_chosen_by_the_algorithm(e, s, a, t) for e in elections))
    return holds


def clean_election_from_isr(judge: Judge) -> Callable[[Cluster, object, Cluster], bool]:
    """Transition invariant builder: a leader is elected from outside the ISR only when unclean
    election is allowed and no ISR member is online."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        for e in judge.elections(s, a):
            if e.chosen not in e.isr and (not e.unclean_allowed or any(e.online >> r & 1 for r in e.isr)):
                return False
        return True
    return holds


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
    liveReplicas.head`, `isr = liveReplicas.toList`). The replicas are those of the assignment
    when the znode is created: the controller's at the end of the event, or, when the event
    rewrote the partition's assignment in `/brokers/topics`, also the one from before it: a
    failover creates the znode from RS, then completes a reassignment to TRS
    (KafkaController.scala `onControllerFailover` lines 244-249), so the end of that event alone
    does not say which replicas were assigned at the create. Liveness is judged at the end of the
    event, in the controller's view then: a broker bounced in that event may be missing from the
    ISR, never the other way round, and a later election of the same event (a reassignment's) may
    have moved the leader and bumped the epoch, but only ever shrinks the ISR."""
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
            rewritten = s.zk.assignment[p] != t.zk.assignment[p]
            assigned = (*ctx.assignment[p], *(s.zk.assignment[p] if rewritten else ()))
            if any(r not in assigned or not online >> r & 1 for r in after.isr):
                return False
    return True


def offline_replica_leaves_isr(judge: Judge) -> Callable[[Cluster, object, Cluster], bool]:
    """Transition invariant builder: an OfflineReplica transition the controller took (the replica
    is OfflineReplica in its context after the event) for a partition with a state znode leaves the
    replica out of the ZooKeeper ISR, unless it is the sole member, whatever the cache said before
    (kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala
    doHandleStateChanges, case OfflineReplica: `removeReplicasFromIsr` re-reads the znodes)."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        if type(a) is not ControllerProcessEvent:
            return True
        ctx = t.brokers[a.broker].ctx
        for o in judge.observe(s, a):
            if (type(o) is Edge and o.valid and o.to is ReplicaState.OfflineReplica and o.machine == "replica"
                    and ctx.replica_states[o.partition][o.broker] is ReplicaState.OfflineReplica):
                z = t.zk.partitions[o.partition]
                if z != NO_ZNODE and o.broker in z.isr and len(z.isr) > 1:
                    return False
        return True
    return holds


def auto_rebalance_elects_preferred(ppt: int):
    """Transition invariant builder: the scheduled rebalance leaves every partition whose
    preferred replica was online and in the ISR (topic not queued for deletion) led by its
    preferred replica: what `auto.leader.rebalance.enable` promises an operator. Kafka 2.6 skips
    every partition while any reassignment is in progress (Findings 14)."""
    def holds(s: Cluster, a, t: Cluster) -> bool:
        if handled(s, a, t, EventKind.AutoPreferredReplicaLeaderElection) is None:
            return True
        ctx = s.brokers[a.broker].ctx
        for p, assigned in enumerate(ctx.assignment):
            if not assigned or ctx.topics_to_delete >> (p // ppt) & 1:
                continue
            z = agreed(s, ctx, p)
            preferred = assigned[0]
            online = online_to(ctx, p)
            if z is None or z.leader == preferred or not online >> preferred & 1 or preferred not in z.isr:
                continue
            if t.zk.partitions[p].leader != preferred:
                return False
        return True
    return holds


def no_dead_leader_advertised(s: Cluster, ppt: int = 1, judge: Settledness = AFRESH) -> bool:
    """Settled: no partition state znode names a dead (unregistered) broker as leader, nor one whose
    replica is on a failed log directory. OfflineReplica sets the leader to -1 when it removes the
    leader from the ISR (`removeReplicasFromIsr`: `newLeader = if (replicaId == leader) NoLeader`)."""
    if not settled_under_a_controller(s, judge):
        return True
    return all(z.leader == NONE or z.leader in online_replicas(s, p) for p, z in judged_partitions(s, ppt))


def dead_replica_only_as_sole_isr_member(s: Cluster, ppt: int = 1, judge: Settledness = AFRESH) -> bool:
    """Settled: a dead replica, or one on a failed log directory, is in a ZooKeeper ISR only as its
    sole member (KAFKA-708 keeps the last member: `adjustedIsr = if (isr.size == 1) isr else
    isr.filter(_ != replicaId)`, kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala
    doRemoveReplicasFromIsr; a failed directory's replica goes OfflineReplica through
    `onReplicasBecomeOffline` as a dead broker's does)."""
    if not settled_under_a_controller(s, judge):
        return True
    return all(len(z.isr) == 1 or all(r in online_replicas(s, p) for r in z.isr) for p, z in judged_partitions(s, ppt))


def offline_partition_with_live_isr_gets_leader(s: Cluster, ppt: int = 1, judge: Settledness = AFRESH) -> bool:
    """Settled: a partition without a leader has no live ISR member (else the OfflinePartition ->
    OnlinePartition election of `onReplicasBecomeOffline` / `onBrokerStartup` /
    `partitionStateMachine.startup` would have chosen it). A member is live when its broker is
    registered and its replica's log directory has not failed (`isReplicaOnline`)."""
    if not settled_under_a_controller(s, judge):
        return True
    return all(z.leader != NONE or not (set(z.isr) & online_replicas(s, p)) for p, z in judged_partitions(s, ppt))


def offline_partition_eventually_online(s: Cluster, ppt: int = 1, judge: Settledness = AFRESH) -> bool:
    """Quiescent: a partition with a live ISR member has a leader, but in a topic whose deletion
    waits for a failed log directory (`waiting_for_failed_dirs`)."""
    if not judge.quiescent(s):
        return True
    waiting = waiting_for_failed_dirs(s, ppt)
    return all(z.leader != NONE or not (set(z.isr) & online_replicas(s, p)) or waiting >> (p // ppt) & 1
               for p, z in enumerate(s.zk.partitions) if z != NO_ZNODE)


def believed_leaders(s: Cluster, p: int) -> list[int]:
    """The live brokers that believe they lead partition `p`: their replica names themselves as
    leader and is not stopped (what `ReplicaManager` holds after a LeaderAndIsr that made it
    leader, until a newer LeaderAndIsr or a StopReplica reaches it)."""
    return [b for b, broker in enumerate(s.brokers)
            if broker.up and broker.replicas[p].leader == b and not broker.replicas[p].stopped]


def at_most_one_believed_leader(s: Cluster, judge: Settledness = AFRESH) -> bool:
    """After quiescence, at most one broker believes it leads a partition, and that one is the
    ZooKeeper leader: what an operator expects once nothing is left to heal, since a second
    believer accepts produce requests from clients with stale metadata (with acks=1) beside the
    real leader. Every live broker counts, in the partition's assignment or not: a replica the
    controller removed must have been stopped (StopReplica) or told of the new leader
    (LeaderAndIsr). Kafka 2.6 can leave a replica that a reassignment removed believing it leads
    for good (Findings 4)."""
    if not judge.quiescent(s):
        return True
    for p, z in enumerate(s.zk.partitions):
        believers = believed_leaders(s, p)
        if len(believers) > 1 or (believers and believers[0] != z.leader):
            return False
    return True


def brokers_follow_the_leader(s: Cluster, ppt: int = 1, judge: Settledness = AFRESH) -> bool:
    """Quiescent: every broker in a partition's assignment holds a replica, not stopped, that
    follows (or is) the state znode's leader at the znode's leader epoch. Every leader change the
    controller writes is sent to the assigned replicas as LeaderAndIsr, and a broker named in the
    request's replica list applies a newer leader epoch (kafka@2.6.x:core/src/main/scala/kafka/
    server/ReplicaManager.scala becomeLeaderOrFollower; core/src/main/scala/kafka/controller/
    ControllerChannelManager.scala addLeaderAndIsrRequestForBrokers). Topics queued for deletion
    are stopped on purpose. A replica outside the assignment has no leader to follow: what an
    operator expects of it is that the controller stops and deletes it (StopReplica with
    delete=true: ReassignmentDeletesRemovedReplicas, DeletedTopicLeavesNoReplica) and that it does
    not believe it leads (AtMostOneBelievedLeaderAfterQuiescence). A replica on a failed log
    directory takes no LeaderAndIsr (KAFKA_STORAGE_ERROR) and follows no one until its broker restarts."""
    if not judge.quiescent(s):
        return True
    zk = s.zk
    for p, z in led_partitions(zk, ppt):
        for b in zk.assignment[p]:
            if s.brokers[b].offline_dirs >> p & 1:
                continue
            r = s.brokers[b].replicas[p]
            if r.leader != z.leader or r.leader_epoch != z.leader_epoch or r.stopped:
                return False
    return True


def leader_isr_matches_zk(s: Cluster, ppt: int = 1, judge: Settledness = AFRESH) -> bool:
    """Quiescent: the znode's leader, at the znode's leader epoch, caches the znode's ISR and zkVersion."""
    if not judge.quiescent(s):
        return True
    for p, z in led_partitions(s.zk, ppt):
        r = s.brokers[z.leader].replicas[p]
        if (r.leader == z.leader and r.leader_epoch == z.leader_epoch and not r.stopped
                and (r.isr != z.isr or r.zk_version != z.version)):
            return False
    return True


def created_partitions_have_state(s: Cluster, ppt: int = 1, judge: Settledness = AFRESH) -> bool:
    """Quiescent under an active controller: every partition assigned in `/brokers/topics/<t>`
    whose topic is not queued for deletion has its state znode. A new topic's partitions go
    NewPartition -> OnlinePartition in `onNewPartitionCreation`, which creates
    `/brokers/topics/<t>/partitions/<p>/state` (`initializeLeaderAndIsrForPartitions`); one left
    New (no live replica, a failed write) is retried by the next `triggerOnlinePartitionStateChange`
    or failover, and at quiescence every broker is up
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala onNewPartitionCreation,
    kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
    initializeLeaderAndIsrForPartitions)."""
    if not (judge.quiescent(s) and settled_under_a_controller(s, judge)):
        return True
    zk = s.zk
    return all(z != NO_ZNODE for p, (assigned, z) in enumerate(zip(zk.assignment, zk.partitions))
               if assigned and not zk.delete_topics >> (p // ppt) & 1)


def _preferred_election_moves_leader(cfg, judge: Judge) -> Callable[[Cluster, object, Cluster], bool]:
    return lambda s, a, t: preferred_election_moves_leader(judge.elections(s, a))


def _offline_election_for_offline_leader(cfg, judge: Judge) -> Callable[[Cluster, object, Cluster], bool]:
    return lambda s, a, t: offline_election_for_offline_leader(judge.elections(s, a))


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("LeaderInIsrOrNone", "a partition znode's leader is -1 or a member of its ISR",
                Kind.STATE, as_is(leader_in_isr_or_none), reads=frozenset({Part.ZOOKEEPER})),
    Declaration("IsrNonEmpty", "a partition state znode never has an empty ISR",
                Kind.STATE, as_is(isr_non_empty), reads=frozenset({Part.ZOOKEEPER})),
    Declaration("ZkLeaderEpochMonotonic", "no partition znode's leader epoch ever goes back",
                Kind.TRANSITION, as_is(zk_leader_epoch_monotonic),
                reads=frozenset({Part.ZOOKEEPER})),
    Declaration("ControllerBumpsLeaderEpoch",
                "each controller write of a partition znode bumps its leader epoch by one",
                Kind.TRANSITION, as_is(controller_bumps_leader_epoch),
                reads=frozenset({Part.ZOOKEEPER}), judges=CONTROLLER_EVENTS),
    Declaration("LeaderIsLive", "an elected leader is live in the electing controller's view",
                Kind.TRANSITION, from_judge(leader_is_live), judges=CONTROLLER_EVENTS),
    Declaration("ElectionRuleConformance", "the elected leader is the one Kafka 2.6's election algorithm returns",
                Kind.TRANSITION, from_judge(election_rule_conformance), judges=CONTROLLER_EVENTS),
    Declaration("CleanElectionFromIsr",
                "a leader comes from outside the ISR only when unclean election is on and no ISR member is live",
                Kind.TRANSITION, from_judge(clean_election_from_isr), judges=CONTROLLER_EVENTS),
    Declaration("OfflineReplicaLeavesIsr",
                "an OfflineReplica transition removes the replica from the ZooKeeper ISR, unless it is the sole member",
                Kind.TRANSITION, from_judge(offline_replica_leaves_isr), judges=CONTROLLER_EVENTS,
                findings=((findings.LOST_CREATE_REPLY, findings.lost_create_replies),)),
    Declaration("PreferredElectionMovesLeader", "a preferred replica election changes the partition's leader",
                Kind.TRANSITION, _preferred_election_moves_leader, judges=CONTROLLER_EVENTS),
    Declaration("OfflineElectionForOfflineLeader",
                "an offline-strategy election is only for a partition whose leader is not online",
                Kind.TRANSITION, _offline_election_for_offline_leader, judges=CONTROLLER_EVENTS),
    Declaration("NewPartitionFromLiveReplicas",
                "a new partition state znode names only live replicas, the first of them as leader",
                Kind.TRANSITION, as_is(new_partition_from_live_replicas), judges=CONTROLLER_EVENTS),
    Declaration("AutoRebalanceElectsPreferred",
                "the scheduled rebalance elects every preferred replica that is online and in the ISR",
                Kind.TRANSITION, per_topic(auto_rebalance_elects_preferred),
                judges=CONTROLLER_EVENTS,
                findings=((findings.REBALANCE_SKIPPED_DURING_REASSIGNMENT, findings.rebalances_and_reassignments),)),
    Declaration("NoDeadLeaderAdvertised", "once settled, no partition znode names a dead broker as its leader",
                Kind.LIVENESS, per_topic_with_judge(no_dead_leader_advertised), where=Judged.SETTLED,
                findings=((findings.LOST_CREATE_REPLY, findings.lost_create_replies),)),
    Declaration("DeadReplicaOnlyAsSoleIsrMember",
                "once settled, a dead replica stays in a ZooKeeper ISR only as its sole member",
                Kind.LIVENESS, per_topic_with_judge(dead_replica_only_as_sole_isr_member), where=Judged.SETTLED,
                findings=((findings.LOST_CREATE_REPLY, findings.lost_create_replies),
                          (findings.SHUTTING_DOWN_REJOINS_ISR, findings.isr_admission_of_2_6_with_expiries))),
    Declaration("OfflinePartitionWithLiveIsrGetsLeader",
                "once settled, a partition with a live ISR member has a leader, dead brokers left dead",
                Kind.LIVENESS, per_topic_with_judge(offline_partition_with_live_isr_gets_leader),
                where=Judged.SETTLED,
                findings=((findings.REASSIGNMENT_WITHOUT_STATE_ZNODE, findings.reassignment_without_state_znode),
                          (findings.LOST_CREATE_REPLY, findings.lost_create_replies),
                          (findings.REASSIGNMENT_COMPLETED_WITH_DEAD_TARGETS, findings.reassignments_with_expiries))),
    Declaration("OfflinePartitionEventuallyOnline",
                "with every broker up and nothing left to heal, a partition with a registered ISR member "
                "has a leader",
                Kind.LIVENESS, per_topic_with_judge(offline_partition_eventually_online), where=Judged.QUIESCENT,
                findings=((findings.REASSIGNMENT_WITHOUT_STATE_ZNODE, findings.reassignment_without_state_znode),
                          (findings.DELETION_DURING_REASSIGNMENT, findings.deletions_and_reassignments),
                          (findings.LOST_CREATE_REPLY, findings.lost_create_replies),
                          (findings.REASSIGNMENT_COMPLETED_WITH_DEAD_TARGETS, findings.reassignments_with_expiries))),
    Declaration("AtMostOneBelievedLeaderAfterQuiescence",
                "once quiescent, at most one broker believes it leads a partition, and that one is its leader",
                Kind.LIVENESS, with_judge(at_most_one_believed_leader), where=Judged.QUIESCENT,
                findings=((findings.REMOVED_REPLICA_LEADS, findings.reassignments_with_lost_stop_replicas),
                          (findings.REASSIGNMENT_WITHOUT_STATE_ZNODE, findings.reassignment_without_state_znode))),
    Declaration("BrokersFollowTheLeader",
                "once quiescent, every assigned broker follows its partition znode's leader at the znode's "
                "leader epoch",
                Kind.LIVENESS, per_topic_with_judge(brokers_follow_the_leader), where=Judged.QUIESCENT,
                findings=((findings.LOST_CREATE_REPLY, findings.lost_create_replies),)),
    Declaration("LeaderIsrMatchesZk", "once quiescent, each partition's leader caches its znode's ISR and zkVersion",
                Kind.LIVENESS, per_topic_with_judge(leader_isr_matches_zk), where=Judged.QUIESCENT),
    Declaration("CreatedPartitionsHaveState",
                "once quiescent, every assigned partition of a topic not being deleted has its state znode",
                Kind.LIVENESS, per_topic_with_judge(created_partitions_have_state), where=Judged.QUIESCENT),
)
