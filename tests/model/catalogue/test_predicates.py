"""The properties the mutation triage added (docs/checking.md "kcm mutate"): each fails
on a small hand-made violation and holds on the clean model, on the mutation suite's configs
(`bench/mutation/*.toml`, the smallest configs that reach each feature)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.actions import ControllerProcessEvent
from kcm.model.catalogue.deletion import deleted_topic_leaves_no_replica
from kcm.model.catalogue.leadership import (
    brokers_follow_the_leader,
    created_partitions_have_state,
    new_partition_from_live_replicas,
    offline_election_for_offline_leader,
    preferred_election_moves_leader,
)
from kcm.model.catalogue.metadata import cache_matches_zk
from kcm.model.catalogue.reassignment import reassignment_sets_disjoint
from kcm.model.catalogue.settledness import Judge
from kcm.model.catalogue.shutdown import (
    controlled_shutdown_elects_another,
    controlled_shutdown_leaves_broker_clean,
    controlled_shutdown_retried_only_with_partitions_left,
)
from kcm.model.catalogue.tables import failed_broker_replicas_offline, replica_states_match_liveness
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import (
    NO_REPLICA,
    NO_ZNODE,
    NONE,
    Cluster,
    Election,
    Event,
    EventKind,
    Request,
    RequestKind,
    Shutdown,
    StopReplicaPartition,
    put,
)
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle
from kcm.model.state_machines import Strategy
from kcm.model.states import ReplicaState

from kcm import config

SMALL = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1,
                                  "max_session_expiries": 0})
SUITE = Path(__file__).parents[3] / "bench" / "mutation"
NEW = ["CacheMatchesZk", "ElectionRuleConformance", "ReplicaStatesMatchLiveness", "BrokersFollowTheLeader",
       "PreferredElectionMovesLeader", "OfflineElectionForOfflineLeader", "NewPartitionFromLiveReplicas",
       "ControlledShutdownLeavesBrokerClean", "DeletedTopicLeavesNoReplica", "ControlledShutdownElectsAnother",
       "ControlledShutdownRetriedOnlyWithPartitionsLeft", "FailedBrokerReplicasOffline", "ReassignmentSetsDisjoint",
       "CreatedPartitionsHaveState"]


@pytest.fixture(scope="module")
def calm() -> Cluster:
    """The settled cluster of SMALL: broker 0 controller and leader of partition 0, ISR (0, 1)."""
    s = settle(SMALL, init_states(SMALL)[0])
    assert s.zk.controller == 0 and s.zk.partitions[0].leader == 0 and s.zk.partitions[0].isr == (0, 1)
    return s


def with_znode(s: Cluster, p: int, **fields) -> Cluster:
    zk = s.zk
    return s._replace(zk=zk._replace(partitions=put(zk.partitions, p, zk.partitions[p]._replace(**fields))))


def with_broker(s: Cluster, b: int, **fields) -> Cluster:
    return s._replace(brokers=put(s.brokers, b, s.brokers[b]._replace(**fields)))


def with_ctx(s: Cluster, b: int, **fields) -> Cluster:
    return with_broker(s, b, ctx=s.brokers[b].ctx._replace(**fields))


def with_replica(s: Cluster, b: int, p: int, replica) -> Cluster:
    return with_broker(s, b, replicas=put(s.brokers[b].replicas, p, replica))


def election(strategy, chosen: int, old: int, online: int = 0b11) -> Election:
    return Election(0, strategy, chosen, chosen, old, (0, 1), 0b11, online, (0, 1), False)


# ---- quiescence -----------------------------------------------------------------------------


def test_cache_matches_zk_compares_the_isr(calm) -> None:
    assert cache_matches_zk(calm)
    # a leader shrank the ISR and the controller never refreshed its cache (no notification read)
    assert not cache_matches_zk(with_znode(calm, 0, isr=(0,), version=calm.zk.partitions[0].version + 1))


def test_replica_states_match_liveness(calm) -> None:
    assert replica_states_match_liveness(calm)
    rs = calm.brokers[0].ctx.replica_states
    offline = with_ctx(calm, 0, replica_states=put(rs, 0, put(rs[0], 1, ReplicaState.OfflineReplica)))
    assert not replica_states_match_liveness(offline)          # broker 1 is up, its replica left Offline
    assert replica_states_match_liveness(with_ctx(offline, 0, topics_to_delete=1))  # a deletion: not judged


def test_brokers_follow_the_leader(calm) -> None:
    assert brokers_follow_the_leader(calm)
    follower = calm.brokers[1].replicas[0]
    assert follower.leader == 0
    assert not brokers_follow_the_leader(with_replica(calm, 1, 0, NO_REPLICA))      # never got LeaderAndIsr
    assert not brokers_follow_the_leader(with_replica(calm, 1, 0, follower._replace(stopped=True)))
    stale = with_znode(calm, 0, leader_epoch=calm.zk.partitions[0].leader_epoch + 1)
    assert not brokers_follow_the_leader(stale)                                     # an epoch nobody applied
    assert brokers_follow_the_leader(with_replica(calm._replace(zk=calm.zk._replace(delete_topics=1)), 1, 0,
                                                  follower._replace(stopped=True)))  # being deleted


# ---- elections ------------------------------------------------------------------------------


def test_preferred_election_moves_leader() -> None:
    assert preferred_election_moves_leader([election(Strategy.PREFERRED, 0, 1)])
    assert not preferred_election_moves_leader([election(Strategy.PREFERRED, 0, 0)])   # a needless bump
    assert preferred_election_moves_leader([election(Strategy.CONTROLLED_SHUTDOWN, 0, 0)])  # not preferred


def test_offline_election_for_offline_leader() -> None:
    assert offline_election_for_offline_leader([election(Strategy.OFFLINE, 0, NONE)])
    assert offline_election_for_offline_leader([election(Strategy.OFFLINE, 0, 1, online=0b01)])  # 1 is down
    assert not offline_election_for_offline_leader([election(Strategy.OFFLINE, 0, 1, online=0b11)])
    assert not offline_election_for_offline_leader([election(Strategy.OFFLINE_ALLOW_UNCLEAN, 1, 1)])
    assert offline_election_for_offline_leader([election(Strategy.PREFERRED, 0, 1)])


def test_election_rule_conformance_recomputes_the_choice(calm) -> None:
    """The model's `expected` comes from the same branch as its choice; the property also asks
    the algorithm of the observed strategy, so a choice from the wrong branch is seen."""
    from kcm.model.catalogue import properties_for

    def prop(e: Election):
        return next(p for p in properties_for(SMALL, lambda s, a: [e]) if p.name == "ElectionRuleConformance")

    a = ControllerProcessEvent(0)
    assert calm.brokers[0].ctx.assignment[0] == (0, 1)
    assert prop(election(Strategy.OFFLINE, 0, NONE)).holds(calm, a, calm)
    # broker 1 chosen and "expected" by the same (wrong) branch: offline picks the first live ISR member, 0
    assert not prop(election(Strategy.OFFLINE, 1, NONE)).holds(calm, a, calm)
    assert not prop(election(Strategy.PREFERRED, 1, 0)).holds(calm, a, calm)
    assert prop(election(Strategy.CONTROLLED_SHUTDOWN, 1, 0, online=0b10)).holds(calm, a, calm)  # 0 shutting down
    assert not prop(election(Strategy.CONTROLLED_SHUTDOWN, 0, 1, online=0b10)).holds(calm, a, calm)


def test_new_partition_from_live_replicas(calm) -> None:
    a = ControllerProcessEvent(0)
    before = with_znode(calm, 0, **NO_ZNODE._asdict())
    created = with_znode(calm, 0, leader_epoch=0)
    assert new_partition_from_live_replicas(before, a, created)
    assert not new_partition_from_live_replicas(before, a, with_ctx(created, 0, live=0b01))   # 1 is dead
    assert not new_partition_from_live_replicas(before, a, with_ctx(created, 0, shutting_down=0b10))
    assert not new_partition_from_live_replicas(before, a, with_znode(created, 0, leader=1))  # not the first
    assert not new_partition_from_live_replicas(before, a, with_ctx(created, 0, assignment=((0,),)))
    # re-elected later in the same event (a reassignment's): only the ISR is judged
    assert new_partition_from_live_replicas(before, a, with_znode(created, 0, leader=1, leader_epoch=1))
    assert new_partition_from_live_replicas(calm, a, created)   # not a creation


# ---- controlled shutdown and deletion -------------------------------------------------------


def test_controlled_shutdown_leaves_broker_clean(calm) -> None:
    holds = controlled_shutdown_leaves_broker_clean(1)
    a = ControllerProcessEvent(0)
    s = with_broker(calm, 1, shutdown=Shutdown.AWAITING)
    done = with_broker(calm, 1, shutdown=Shutdown.DONE)
    z = calm.zk.partitions[0]
    stop = Request(RequestKind.StopReplica, 0, calm.zk.controller_epoch, calm.brokers[1].epoch,
                   (StopReplicaPartition(0, z.leader_epoch, False),))
    clean = with_znode(done, 0, isr=(0,), leader_epoch=z.leader_epoch + 1, version=z.version + 1)
    clean = clean._replace(net=put(clean.net, 0 * 2 + 1, clean.net[1] + (stop,)))
    assert holds(s, a, clean)
    assert not holds(s, a, with_znode(clean, 0, isr=(0, 1)))          # still in the ISR
    assert not holds(s, a, clean._replace(net=calm.net))              # its follower never stopped
    assert not holds(s, a, with_znode(clean, 0, leader=1, isr=(1, 0)))  # still leads
    assert holds(clean, a, clean)                                     # not the step that answered
    assert holds(s, a, with_broker(clean, 1, shutdown=Shutdown.RETRY))  # partitions remain: retried


def shutdown_asked(s: Cluster, b: int) -> Cluster:
    """`s` with broker `b`'s ControlledShutdown at the head of the controller's (broker 0's) queue."""
    s = with_broker(s, b, shutdown=Shutdown.AWAITING)
    return with_broker(s, 0, queue=(Event(EventKind.ControlledShutdown, b, s.brokers[b].epoch),))


def test_controlled_shutdown_elects_another(calm) -> None:
    holds = controlled_shutdown_elects_another(Judge(lambda s, a: observed))
    a = ControllerProcessEvent(0)
    s = shutdown_asked(calm, 0)
    observed = [election(Strategy.CONTROLLED_SHUTDOWN, 1, 0)]
    assert holds(s, a, calm)
    observed = [election(Strategy.CONTROLLED_SHUTDOWN, 0, 0)]      # the broker shutting down re-elected
    assert not holds(s, a, calm)
    assert holds(calm, a, calm)                                     # not a ControlledShutdown event


def test_controlled_shutdown_retried_only_with_partitions_left(calm) -> None:
    holds = controlled_shutdown_retried_only_with_partitions_left(1)
    a = ControllerProcessEvent(0)
    s = shutdown_asked(calm, 1)                                     # broker 1 follows partition 0
    accepted = with_ctx(calm, 0, shutting_down=0b10)
    assert not holds(s, a, with_broker(accepted, 1, shutdown=Shutdown.RETRY))   # nothing left, told to retry
    assert holds(s, a, with_broker(accepted, 1, shutdown=Shutdown.DONE))
    assert holds(s, a, with_broker(calm, 1, shutdown=Shutdown.RETRY))            # refused: not accepted
    s0 = shutdown_asked(calm, 0)                                    # broker 0 leads partition 0
    assert holds(s0, a, with_broker(with_ctx(calm, 0, shutting_down=0b01), 0, shutdown=Shutdown.RETRY))


def test_failed_broker_replicas_offline(calm) -> None:
    holds = failed_broker_replicas_offline(1)
    a = ControllerProcessEvent(0)
    gone = with_ctx(calm, 0, live=0b01)
    assert not holds(calm, a, gone)                                 # broker 1's replica left OnlineReplica
    rs = calm.brokers[0].ctx.replica_states
    offline = with_ctx(gone, 0, replica_states=put(rs, 0, put(rs[0], 1, ReplicaState.OfflineReplica)))
    assert holds(calm, a, offline)
    assert holds(calm, a, with_ctx(gone, 0, topics_to_delete=1))    # being deleted: ineligible instead
    assert holds(calm, a, calm)                                     # nobody failed


def test_reassignment_sets_disjoint(calm) -> None:
    assert reassignment_sets_disjoint(calm)
    zk = calm.zk
    moving = calm._replace(zk=zk._replace(assignment=((1, 0),), adding=((1,),), removing=((0,),)))
    assert reassignment_sets_disjoint(moving)
    assert not reassignment_sets_disjoint(moving._replace(zk=moving.zk._replace(adding=((0,),))))   # AR = RR
    assert not reassignment_sets_disjoint(moving._replace(zk=moving.zk._replace(adding=((2,),))))   # not a replica


def test_deleted_topic_leaves_no_replica(calm) -> None:
    a = ControllerProcessEvent(0)
    gone = calm._replace(zk=calm.zk._replace(assignment=((),), partitions=(NO_ZNODE,)))
    assert not deleted_topic_leaves_no_replica(calm, a, gone)         # both brokers still hold it
    emptied = with_replica(with_replica(gone, 0, 0, NO_REPLICA), 1, 0, NO_REPLICA)
    assert deleted_topic_leaves_no_replica(calm, a, emptied)
    assert not deleted_topic_leaves_no_replica(calm, a, with_replica(gone, 0, 0, NO_REPLICA))


def test_created_partitions_have_state(calm) -> None:
    # The full run's triage: a created topic's partition never got its state znode
    # (`controller:617` / `controller:619`, onNewPartitionCreation's state changes deleted).
    assert created_partitions_have_state(calm)
    missing = calm._replace(zk=calm.zk._replace(partitions=(NO_ZNODE,)))
    assert not created_partitions_have_state(missing)
    # a topic queued for deletion is the deletion's business; an unassigned partition has no znode
    assert created_partitions_have_state(missing._replace(zk=missing.zk._replace(delete_topics=1)))
    assert created_partitions_have_state(missing._replace(zk=missing.zk._replace(assignment=((),))))
    # judged only at quiescence: with a broker down, a creation may wait for it
    assert created_partitions_have_state(with_broker(missing, 1, up=False))


# ---- the clean model ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["m-reassign", "m-delete", "m-overlap", "m-move", "m-shutdown", "tiny"])
def test_the_new_properties_hold_on_the_mutation_suite(name) -> None:
    cfg = config.load_preset("tiny") if name == "tiny" else config.load_config_file(SUITE / f"{name}.toml")
    model = KafkaModel(cfg)
    # Every one is registered on every config of the suite: one that is not fails here, not silently.
    missing = set(NEW) - {p.name for p in model.properties()}
    assert not missing, f"not registered on {name}: {sorted(missing)}"
    result = explore(model, properties=NEW, goals_required=False)
    assert result.verdict == "pass" and not result.violations, result.summary_lines()


def test_v10_breaks_failed_broker_replicas_offline_first() -> None:
    """V10's failover leaves a dead broker's replicas ReplicaDeletionIneligible. A controller moved by
    an operator that wins again in the same event fails over with the dead broker gone from its
    view: FailedBrokerReplicasOffline sees the replica not OfflineReplica in 7 steps, before
    DeadReplicaOnlyAsSoleIsrMember (V10's named property, 9 steps, tests/model/test_variants.py)."""
    result = explore(KafkaModel(config.load_preset("v10")))
    assert [(v.name, v.trace_length) for v in result.violations] == [("FailedBrokerReplicasOffline", 7)]
