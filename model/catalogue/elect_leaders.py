"""Leader elections on demand (the ElectLeaders API, KIP-460) and unclean election switched on at
run time.

Since 2.4 an operator asks the controller for a leader election of chosen partitions through the
AdminClient (`kafka-leader-election.sh --bootstrap-server --election-type preferred|unclean`): the
request becomes `ReplicaLeaderElection(Some(partitions), electionType, AdminClientTriggered,
callback)` on the controller's queue, and the callback answers per partition, with the new leader
or an error saying why not (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
`processReplicaLeaderElection`, lines 1726-1799). A preferred election moves leadership to the
first assigned replica if it is live and in the ISR; an unclean one elects only for a partition
whose leader is -1 or not live, with `OfflinePartitionLeaderElectionStrategy(allowUnclean =
true)`: the first live ISR replica, else the first live assigned replica (lines 684-700;
PartitionStateMachine.scala `offlinePartitionLeaderElection`). And `unclean.leader.election.enable`
switched on for a topic at run time makes the controller elect its New and Offline partitions
again (`processTopicUncleanLeaderElectionEnable`, lines 1103-1107), now reading the topic's
config as allowing an unclean election.

What an operator expects of them: a leader comes from outside the ISR only where it was asked
for, by an unclean ElectLeaders request naming the partition or by the topic's config (that no
ISR member is live then is CleanElectionFromIsr's, in leadership.py); a processed ElectLeaders
request is answered for its partition, a success with the new leader, which for a preferred
election is the preferred replica, an error with a reason the controller's view shows; and once
settled, a partition of a topic whose unclean election is on has a leader when one of its
replicas is live. Kafka 2.6 leaves a request unanswered in two ways (Findings 17). They are
listed only for the configs that may make such a request or switch.
"""

from __future__ import annotations

from collections.abc import Callable

from kcm.model.actions import ControllerProcessEvent, ZkConnectionLoss, ZkLoseReply
from kcm.model.catalogue import findings
from kcm.model.catalogue.declaration import Declaration, Judged, Kind, per_topic_with_judge
from kcm.model.catalogue.settledness import AFRESH, Judge, Settledness, settled_under_a_controller
from kcm.model.catalogue.views import judged_partitions, online_to, registered
from kcm.model.cluster import (
    NONE,
    ApiError,
    Cluster,
    ElectionType,
    ElectLeadersAnswer,
    Event,
    EventKind,
)
from kcm.model.config import ModelConfig
from kcm.model.state_machines import Strategy

#: The steps that process the head of a controller queue.
PROCESSING = (ControllerProcessEvent, ZkLoseReply, ZkConnectionLoss)


def elect_leaders_request(s: Cluster, a) -> Event | None:
    """The AdminClient's ReplicaLeaderElection that step `a` processes, or None."""
    if type(a) not in PROCESSING:
        return None
    queue = s.brokers[a.broker].queue
    if queue and queue[0].kind is EventKind.ReplicaLeaderElection and queue[0].a != NONE:
        return queue[0]
    return None


def unclean_on(cfg: ModelConfig, s: Cluster, topic: int) -> bool:
    """`unclean.leader.election.enable` of `topic`: the static default or `/config/topics/<t>`."""
    return cfg.unclean_election or bool(s.zk.unclean_topics >> topic & 1)


def unclean_election_only_where_allowed(cfg: ModelConfig, judge: Judge) -> Callable[[Cluster, object, Cluster], bool]:
    """Transition invariant: every leader elected from outside the ISR is either the answer to an
    unclean ElectLeaders request naming its partition, processed in this step, or of a topic whose
    `unclean.leader.election.enable` is on; and the strategy that allows an unclean election
    regardless of the config is used only for such a request's partition."""
    ppt = cfg.partitions

    def holds(s: Cluster, a, t: Cluster) -> bool:
        elections = judge.elections(s, a)
        if not elections:
            return True
        request = elect_leaders_request(s, a)
        asked = NONE if request is None or request.b != ElectionType.UNCLEAN else request.a
        for e in elections:
            on_demand = e.strategy is Strategy.OFFLINE_ALLOW_UNCLEAN
            if on_demand and e.partition != asked:
                return False
            if e.chosen not in e.isr and not on_demand and not unclean_on(cfg, s, e.partition // ppt):
                return False
        return True
    return holds


def _why_not(s: Cluster, a, answer: ElectLeadersAnswer, ppt: int) -> bool:
    """The answer's error has its reason in the controller's view at the start of the step."""
    broker = s.brokers[a.broker]
    ctx = broker.ctx
    p = answer.partition
    error = answer.error
    if error is ApiError.NOT_CONTROLLER:
        return not broker.active
    if not broker.active:
        return False
    assigned = ctx.assignment[p]
    if error is ApiError.UNKNOWN_TOPIC_OR_PARTITION:
        return not assigned
    if error is ApiError.INVALID_TOPIC_EXCEPTION:
        return bool(ctx.topics_to_delete >> (p // ppt) & 1)
    if error is ApiError.UNKNOWN_SERVER_ERROR:
        return not s.zk.session >> a.broker & 1
    if not assigned:
        return False
    # `liveBrokerIds` decides whether an unclean election is needed; the election itself counts the
    # replicas `isReplicaOnline` holds (a replica on a failed log directory is not)
    live = ctx.live & ~ctx.shutting_down
    online = online_to(ctx, p)
    leader = ctx.leadership[p].leader
    isr = s.zk.partitions[p].isr
    if error is ApiError.ELECTION_NOT_NEEDED:
        if answer.election_type is ElectionType.PREFERRED:
            return leader == assigned[0]
        return leader != NONE and bool(live >> leader & 1)
    if error is ApiError.PREFERRED_LEADER_NOT_AVAILABLE:
        return answer.election_type is ElectionType.PREFERRED and (
            not online >> assigned[0] & 1 or assigned[0] not in isr)
    if error is ApiError.ELIGIBLE_LEADERS_NOT_AVAILABLE:
        return answer.election_type is ElectionType.UNCLEAN and not any(online >> r & 1 for r in assigned)
    return False


def elect_leaders_answered(cfg: ModelConfig, judge: Judge) -> Callable[[Cluster, object, Cluster], bool]:
    """Transition invariant: an ElectLeaders request the controller processes is answered once, for
    its partition and election type; a success names the partition's leader in ZooKeeper after
    the step, for a preferred election the preferred replica (the first assigned); an error has
    its reason in the controller's view (`_why_not`)."""
    ppt = cfg.partitions

    def holds(s: Cluster, a, t: Cluster) -> bool:
        request = elect_leaders_request(s, a)
        if request is None:
            return True
        answers = [o for o in judge.observe(s, a) if type(o) is ElectLeadersAnswer]
        if len(answers) != 1:
            return False
        answer = answers[0]
        if answer.partition != request.a or answer.election_type != request.b:
            return False
        if answer.error is ApiError.NONE:
            p = answer.partition
            if t.zk.partitions[p].leader != answer.leader or answer.leader == NONE:
                return False
            preferred = s.brokers[a.broker].ctx.assignment[p][:1]
            return answer.election_type is ElectionType.UNCLEAN or (answer.leader,) == preferred
        return _why_not(s, a, answer, ppt)
    return holds


def unclean_partition_with_live_replica_gets_leader(s: Cluster, ppt: int = 1, unclean: bool = False,
                                                    judge: Settledness = AFRESH) -> bool:
    """Settled: a partition of a topic whose `unclean.leader.election.enable` is on (`unclean`, the
    static default, or `/config/topics/<t>`) has a leader when one of its assigned replicas is
    online, registered and not on a failed log directory: the offline election allows an unclean
    leader among the online replicas (`isReplicaOnline`,
    kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerContext.scala lines 205-211;
    Election.scala line 34), and switching the config on elects the topic's Offline partitions
    (`processTopicUncleanLeaderElectionEnable`)."""
    if not settled_under_a_controller(s, judge):
        return True
    live = registered(s)
    zk = s.zk
    for p, z in judged_partitions(s, ppt):
        if (z.leader == NONE and (unclean or zk.unclean_topics >> (p // ppt) & 1)
                and any(r in live and not s.brokers[r].offline_dirs >> p & 1 for r in zk.assignment[p])):
            return False
    return True


def requests_elections(cfg: ModelConfig) -> bool:
    """Some run of `cfg` may send an ElectLeaders request."""
    return cfg.max_elect_leaders > 0 or any("elect_leaders" in run for run in cfg.overlapping)


def switches_unclean_election(cfg: ModelConfig) -> bool:
    """Some run of `cfg` may switch unclean election on at run time."""
    return cfg.max_unclean_election_enables > 0 or any("unclean_election_enable" in run for run in cfg.overlapping)


def _unclean_gets_leader(cfg: ModelConfig, judge: Judge) -> Callable[[Cluster], bool]:
    settled = per_topic_with_judge(unclean_partition_with_live_replica_gets_leader)(cfg, judge)
    return lambda s: settled(s, unclean=cfg.unclean_election)


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("UncleanElectionOnlyWhereAllowed",
                "a leader comes from outside the ISR only where an unclean ElectLeaders request or the "
                "topic's config allows it",
                Kind.TRANSITION, unclean_election_only_where_allowed, judges=PROCESSING,
                listed=lambda cfg: requests_elections(cfg) or switches_unclean_election(cfg)),
    Declaration("ElectLeadersAnswered",
                "an ElectLeaders request is answered: the new leader, the preferred replica for a preferred "
                "election, or an error whose reason holds",
                Kind.TRANSITION, elect_leaders_answered, judges=PROCESSING, listed=requests_elections,
                findings=((findings.ELECT_LEADERS_UNANSWERED, findings.elect_leaders_unanswered),)),
    Declaration("UncleanPartitionWithLiveReplicaGetsLeader",
                "once settled, a partition of a topic with unclean election on has a leader if a replica is live",
                Kind.LIVENESS, _unclean_gets_leader, where=Judged.SETTLED, listed=switches_unclean_election),
)
