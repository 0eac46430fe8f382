"""Goals: what the model must reach, or it is vacuous.

A goal is met by some reachable edge (state, action, next state); the explorer fails a run that
meets none of them (stateright's `sometimes`). Each checks that a feature the config switches on
is exercised: a controller fails over, a partition goes offline and back, an unclean election, a
topic deletion, a reassignment completing, a controlled shutdown moving a leader, a preferred
election, an unclean election on demand or after unclean election is switched on, a replica taken
offline for its failed log directory. A goal whose
feature the config switches off (unclean election, a zero budget) or that
needs more perturbations than the config allows is not listed (`Declaration.listed`).
"""

from __future__ import annotations

from collections.abc import Callable

from kcm.model.actions import ControllerProcessEvent
from kcm.model.catalogue.declaration import Declaration, Kind, as_is, from_judge
from kcm.model.catalogue.elect_leaders import requests_elections, switches_unclean_election
from kcm.model.catalogue.log_dirs import fails_log_dirs
from kcm.model.catalogue.settledness import Judge
from kcm.model.cluster import NO_ZNODE, NONE, Cluster, EventKind
from kcm.model.config import ModelConfig
from kcm.model.state_machines import Strategy


def _two_perturbations(cfg: ModelConfig) -> bool:
    """Whether a run may have two faults or admin operations (some goals need one to set up the other)."""
    return cfg.max_perturbations < 0 or cfg.max_perturbations >= 2


def elected_with(strategy: tuple[Strategy, ...], unclean: bool | None = None) -> Callable[[Judge], Callable]:
    """Goal builder: the step elects a leader with one of `strategy`, from outside the ISR when
    `unclean` is True, from the ISR when False, either when None."""
    def build(judge: Judge) -> Callable[[Cluster, object, Cluster], bool]:
        def met(s, a, t):
            for e in judge.elections(s, a):
                if e.strategy in strategy and (unclean is None or (e.chosen not in e.isr) == unclean):
                    return True
            return False
        return met
    return build


def controller_fails_over(s: Cluster, a, t: Cluster) -> bool:
    return any(b.active and b.ctx.epoch >= 2 for b in t.brokers)


def partition_offline_and_back(s: Cluster, a, t: Cluster) -> bool:
    return s.zk.partitions is not t.zk.partitions and any(
        x != NO_ZNODE and y != NO_ZNODE and x.leader == NONE and y.leader >= 0
        for x, y in zip(s.zk.partitions, t.zk.partitions))


def topic_deleted(s: Cluster, a, t: Cluster) -> bool:
    return s.zk.assignment is not t.zk.assignment and any(x and not y for x, y in zip(s.zk.assignment, t.zk.assignment))


def reassignment_completes(s: Cluster, a, t: Cluster) -> bool:
    return s.zk.reassign is not t.zk.reassign and any(
        x and not y and t.zk.assignment[p] == x for p, (x, y) in enumerate(zip(s.zk.reassign, t.zk.reassign)))


def _leaderless_reachable(cfg: ModelConfig) -> bool:
    """A partition loses its leader only when its last ISR member goes: one fault with RF 1, two
    perturbations otherwise."""
    return bool(cfg.max_broker_crashes + cfg.max_session_expiries) and (
        cfg.replication_factor == 1 or _two_perturbations(cfg))


def _preferred_moves_reachable(cfg: ModelConfig) -> bool:
    """The preferred replica leads until something moves leadership away: a second perturbation."""
    return bool(cfg.max_preferred_elections or cfg.max_auto_rebalances) and _two_perturbations(cfg)


def replica_offline_on_live_broker(s: Cluster, a, t: Cluster) -> bool:
    """An active controller's `replicasOnOfflineDirs` gains a replica of a broker that is up."""
    if type(a) is not ControllerProcessEvent:
        return False
    before, after = s.brokers[a.broker].ctx.offline_dirs, t.brokers[a.broker].ctx.offline_dirs
    return t.brokers[a.broker].active and any(
        y & ~x and t.brokers[b].up for b, (x, y) in enumerate(zip(before, after, strict=True)))


def unclean_election_switched_on(judge: Judge) -> Callable[[Cluster, object, Cluster], bool]:
    """Goal builder: the controller handles unclean election switched on for a topic and elects a
    leader from outside the ISR."""
    elected = elected_with((Strategy.OFFLINE,), True)(judge)

    def met(s: Cluster, a, t: Cluster) -> bool:
        if type(a) is not ControllerProcessEvent:
            return False
        queue = s.brokers[a.broker].queue
        return bool(queue) and queue[0].kind is EventKind.TopicUncleanLeaderElectionEnable and elected(s, a, t)
    return met


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("ControllerFailsOver", "a second controller takes over", Kind.GOAL, as_is(controller_fails_over)),
    Declaration("PartitionOfflineAndBack", "a partition without a leader gets one again", Kind.GOAL,
                as_is(partition_offline_and_back), listed=_leaderless_reachable),
    Declaration("UncleanElection", "a leader is elected from outside the ISR", Kind.GOAL,
                from_judge(elected_with((Strategy.OFFLINE, Strategy.OFFLINE_ALLOW_UNCLEAN), True)),
                listed=lambda cfg: bool(cfg.unclean_election)),
    Declaration("TopicDeleted", "a topic is fully deleted", Kind.GOAL, as_is(topic_deleted),
                listed=lambda cfg: bool(cfg.max_topic_deletions)),
    Declaration("ReassignmentCompletes", "a partition reaches its reassignment target", Kind.GOAL,
                as_is(reassignment_completes), listed=lambda cfg: bool(cfg.max_reassignments)),
    Declaration("ControlledShutdownMovesLeadership", "a controlled shutdown moves a leader away", Kind.GOAL,
                from_judge(elected_with((Strategy.CONTROLLED_SHUTDOWN,))),
                listed=lambda cfg: bool(cfg.max_controlled_shutdowns)),
    Declaration("PreferredLeaderElected", "a preferred replica election moves the leader", Kind.GOAL,
                from_judge(elected_with((Strategy.PREFERRED,))), listed=_preferred_moves_reachable),
    Declaration("UncleanElectionOnDemand", "an unclean ElectLeaders request elects a leader from outside the ISR",
                Kind.GOAL, from_judge(elected_with((Strategy.OFFLINE_ALLOW_UNCLEAN,), True)),
                listed=requests_elections),
    Declaration("UncleanElectionSwitchedOn",
                "switching unclean election on elects a leader from outside the ISR for an offline partition",
                Kind.GOAL, from_judge(unclean_election_switched_on), listed=switches_unclean_election),
    Declaration("ReplicaOfflineOnLiveBroker",
                "the controller takes a replica offline for its failed log directory while its broker runs",
                Kind.GOAL, as_is(replica_offline_on_live_broker), listed=fails_log_dirs),
)
