"""The oracle's properties (the settled ones, the transition invariants a reviewer checks a
controller change against, the known Kafka 2.6 violations): each fails on a small hand-made
violation and holds on the clean model; `settled` judges with dead brokers left dead."""

from __future__ import annotations

import contextlib

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.catalogue import CATALOGUE, properties_for
from kcm.model.catalogue.controller import active_controller_once_settled
from kcm.model.catalogue.leadership import (
    dead_replica_only_as_sole_isr_member,
    no_dead_leader_advertised,
    offline_partition_with_live_isr_gets_leader,
)
from kcm.model.catalogue.metadata import (
    cache_matches_zk_after_write,
    context_derived_from_zk,
    no_stale_context_when_inactive,
)
from kcm.model.catalogue.settledness import quiescent, settled
from kcm.model.catalogue.shutdown import no_shutting_down_joins_isr
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import NONE, Cluster, Event, EventKind, put
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle

SMALL = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1,
                                  "max_session_expiries": 0})


@pytest.fixture(scope="module")
def calm() -> Cluster:
    """The settled cluster of SMALL: broker 0 controller and leader of partition 0, ISR (0, 1)."""
    s = settle(SMALL, init_states(SMALL)[0])
    assert s.zk.partitions[0].leader == 0 and set(s.zk.partitions[0].isr) == {0, 1}
    return s


def dead(s: Cluster, b: int) -> Cluster:
    """`s` with broker `b`'s process dead and its session expired (its registration gone)."""
    zk = s.zk._replace(session=s.zk.session & ~(1 << b), broker_epochs=put(s.zk.broker_epochs, b, 0))
    return s._replace(zk=zk, brokers=put(s.brokers, b, s.brokers[b]._replace(up=False, connected=False, queue=())))


def with_znode(s: Cluster, p: int, **fields) -> Cluster:
    zk = s.zk
    return s._replace(zk=zk._replace(partitions=put(zk.partitions, p, zk.partitions[p]._replace(**fields))))


# ---- settled ---------------------------------------------------------------------------------


def test_settled_allows_dead_brokers_but_nothing_pending(calm) -> None:
    assert quiescent(calm) and settled(calm)
    gone = dead(calm, 1)
    assert settled(gone) and not quiescent(gone)
    # the process died but its session lives: the failure is not visible yet
    crashed = gone._replace(zk=gone.zk._replace(session=calm.zk.session))
    assert not settled(crashed)
    # an event queued at a live broker (a watch fired, not handled)
    change = (Event(EventKind.BrokerChange),)
    queued = gone._replace(brokers=put(gone.brokers, 0, gone.brokers[0]._replace(queue=change)))
    assert not settled(queued)
    # a live broker whose session expired and who has not noticed
    expired = gone._replace(zk=gone.zk._replace(session=0))
    assert not settled(expired)
    # nobody up: nothing is judged
    assert not settled(dead(gone, 0))


# ---- the settled invariants: a hand-made violation each -------------------------------------


def test_no_dead_leader_advertised(calm) -> None:
    gone = with_znode(dead(calm, 1), 0, leader=1)
    assert not no_dead_leader_advertised(gone)  # broker 1 dead, still the leader in ZooKeeper
    assert no_dead_leader_advertised(with_znode(gone, 0, leader=0, isr=(0,)))
    # a topic queued for deletion keeps its dead leader in 2.6 (failReplicaDeletion, no election)
    assert no_dead_leader_advertised(gone._replace(zk=gone.zk._replace(delete_topics=1)))
    # not settled: not judged
    assert no_dead_leader_advertised(gone._replace(zk=gone.zk._replace(session=calm.zk.session)))


def test_dead_replica_only_as_sole_isr_member(calm) -> None:
    gone = dead(calm, 1)
    assert not dead_replica_only_as_sole_isr_member(gone)  # ISR (0, 1) with broker 1 dead
    assert dead_replica_only_as_sole_isr_member(with_znode(gone, 0, isr=(0,)))
    # the sole member may stay (KAFKA-708: an ISR is never emptied)
    assert dead_replica_only_as_sole_isr_member(with_znode(gone, 0, leader=NONE, isr=(1,)))


def test_offline_partition_with_live_isr_gets_leader(calm) -> None:
    gone = dead(calm, 1)
    assert not offline_partition_with_live_isr_gets_leader(with_znode(gone, 0, leader=NONE, isr=(0,)))
    assert offline_partition_with_live_isr_gets_leader(with_znode(gone, 0, leader=NONE, isr=(1,)))
    assert offline_partition_with_live_isr_gets_leader(gone)


SETTLED = ["NoDeadLeaderAdvertised", "DeadReplicaOnlyAsSoleIsrMember", "OfflinePartitionWithLiveIsrGetsLeader"]


@pytest.mark.parametrize("fields", [
    {"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1, "max_session_expiries": 0},
    {"brokers": 2, "replication_factor": 1, "max_broker_crashes": 1, "max_session_expiries": 1,
     "max_perturbations": 2},
    {"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1, "max_session_expiries": 0,
     "max_topic_deletions": 1},
])
def test_the_settled_invariants_hold_on_the_clean_model(fields) -> None:
    model = KafkaModel(ModelConfig.from_mapping(fields))
    assert [p.kind for p in model.properties() if p.name in SETTLED] == ["settled"] * 3
    result = explore(model, properties=SETTLED, goals_required=False)
    assert result.verdict == "pass", result.summary_lines()


# ---- transition invariants -------------------------------------------------------------------


def _prop(cfg: ModelConfig, name: str, observations: list):
    """Property `name` of `cfg` with `observe` answering `observations` for any step."""
    return next(p for p in properties_for(cfg, lambda s, a: observations) if p.name == name)


def _offline(s: Cluster, p: int, b: int) -> Cluster:
    """`s` with the controller (broker 0) holding replica (p, b) as OfflineReplica."""
    from kcm.model.states import ReplicaState
    ctrl = s.brokers[0]
    rs = put(ctrl.ctx.replica_states, p, put(ctrl.ctx.replica_states[p], b, ReplicaState.OfflineReplica))
    return s._replace(brokers=put(s.brokers, 0, ctrl._replace(ctx=ctrl.ctx._replace(replica_states=rs))))


def test_offline_replica_leaves_isr(calm) -> None:
    from kcm.model.actions import ControllerProcessEvent
    from kcm.model.cluster import Edge
    from kcm.model.states import ReplicaState
    edge = Edge("replica", ReplicaState.OnlineReplica, ReplicaState.OfflineReplica, 0, 1, True)
    prop = _prop(SMALL, "OfflineReplicaLeavesIsr", [edge])
    a = ControllerProcessEvent(0)
    t = _offline(calm, 0, 1)
    assert not prop.holds(calm, a, t)                         # ISR (0, 1) kept broker 1
    assert prop.holds(calm, a, with_znode(t, 0, isr=(0,)))    # removed
    assert prop.holds(calm, a, with_znode(t, 0, leader=NONE, isr=(1,)))  # the sole member stays
    assert prop.holds(calm, a, calm)                          # the transition did not take (write fenced)
    refused = _prop(SMALL, "OfflineReplicaLeavesIsr", [edge._replace(valid=False)])
    assert refused.holds(calm, a, t)


STEP_PROPS = ["OfflineReplicaLeavesIsr"]


@pytest.mark.parametrize("fields", [
    {"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1, "max_session_expiries": 0},
    {"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1, "max_session_expiries": 0,
     "max_topic_deletions": 1},
    pytest.param({"brokers": 3, "replication_factor": 2, "max_broker_crashes": 0, "max_session_expiries": 0,
                  "max_reassignments": 1, "reassign_targets": "replace-one"}, marks=pytest.mark.slow),
])
def test_the_transition_invariants_hold_on_the_clean_model(fields) -> None:
    result = explore(KafkaModel(ModelConfig.from_mapping(fields)), properties=STEP_PROPS, goals_required=False)
    assert result.verdict == "pass", result.summary_lines()


# ---- ISR admission and the known Kafka 2.6 violations ----------------------------------------

SHUTDOWN = {"brokers": 2, "replication_factor": 2, "max_broker_crashes": 0, "max_session_expiries": 0,
            "max_controlled_shutdowns": 1}
FINDINGS = __import__("pathlib").Path(__file__).parents[2] / "docs" / "findings"


def test_no_shutting_down_joins_isr_on_a_hand_made_step(calm) -> None:
    from kcm.model.actions import LeaderExpandIsr
    shrunk = with_znode(calm, 0, isr=(0,))
    ctrl = shrunk.brokers[0]
    shutting = shrunk._replace(brokers=put(shrunk.brokers, 0, ctrl._replace(ctx=ctrl.ctx._replace(shutting_down=0b10))))
    a = LeaderExpandIsr(0, 0, 1)
    assert not no_shutting_down_joins_isr(shutting, a, with_znode(shutting, 0, isr=(0, 1)))
    assert no_shutting_down_joins_isr(shrunk, a, with_znode(shrunk, 0, isr=(0, 1)))  # not shutting down
    assert no_shutting_down_joins_isr(shutting, a, shutting)  # the write failed


def test_kafka_2_6_breaks_no_shutting_down_joins_isr_as_a_known_finding() -> None:
    """One controlled shutdown on two brokers: the ex-leader, a follower now, is added back to the
    ISR by the new leader (14 steps). The run stays green and reports it as known 2.6 behaviour."""
    result = explore(KafkaModel(ModelConfig.from_mapping(SHUTDOWN)))
    assert result.verdict == "pass", result.summary_lines()
    assert [(v.name, v.trace_length) for v in result.known_violations] == [("NoShuttingDownJoinsIsr", 14)]
    assert any("known 2.6 behaviour" in line for line in result.summary_lines())


def test_under_kip_841_no_shutting_down_joins_isr_holds_and_is_not_excused() -> None:
    model = KafkaModel(ModelConfig.from_mapping({**SHUTDOWN, "isr_admission": "kip-841"}))
    assert "NoShuttingDownJoinsIsr" not in model.known_violations()
    result = explore(model)
    assert result.verdict == "pass" and not result.known_violations, result.summary_lines()


def test_a_known_violation_does_not_stop_exploration_or_hide_others() -> None:
    """With the V8 variant on the same config, the known 2.6 violation is recorded and the
    variant's DeposedLeaderNotified still fails the run."""
    result = explore(KafkaModel(ModelConfig.from_mapping({**SHUTDOWN, "variant": "V8"})),
                     stop_on_violation=False)
    assert result.verdict == "violation"
    assert "DeposedLeaderNotified" in [v.name for v in result.violations]
    assert "NoShuttingDownJoinsIsr" not in [v.name for v in result.violations]


def test_the_json_report_lists_known_violations() -> None:
    import json
    from pathlib import Path

    import jsonschema
    from kcm.checker.engine.report import build
    result = explore(KafkaModel(ModelConfig.from_mapping(SHUTDOWN)))
    doc = build(result, [], preset="test")
    schema = json.loads((Path(__file__).parents[2] / "docs" / "report-schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert doc["verdict"] == "pass"
    assert [(k["invariant"], k["trace_length"]) for k in doc["known_violations"]] == [("NoShuttingDownJoinsIsr", 14)]


@pytest.mark.parametrize("stem, prop", [("no-shutting-down-joins-isr", "NoShuttingDownJoinsIsr"),
                                         ("no-controller-after-operator-move", "ActiveControllerOnceSettled"),
                                         ("preferred-election-znode-stays", "PreferredElectionZnodeConsumed"),
                                         ("lost-create-reply", "CacheMatchesZk")])
def test_every_known_violation_has_a_committed_trace_that_replays(stem, prop) -> None:
    from kcm.checker.engine.replay import replay_itf
    assert any(d.name == prop and f.trace.endswith(f"{stem}.itf.json") for d in CATALOGUE for f, _ in d.findings)
    replay_itf(FINDINGS / f"{stem}.itf.json")  # raises unless it reaches the same violation


def test_the_preferred_election_finding_is_reached_in_eight_steps() -> None:
    """RF 1 on two brokers: broker 0 crashes before the controller creates its partition's state;
    a preferred election then finds no leadership (`partitionLeadershipInfo(...).get` throws in
    2.6) and the znode stays (docs/model.md Findings 9)."""
    cfg = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 1, "max_broker_crashes": 1,
                                    "max_session_expiries": 0, "max_preferred_elections": 1, "max_perturbations": 2})
    result = explore(KafkaModel(cfg), properties=["PreferredElectionZnodeConsumed", "AdminZnodesConsumed"],
                     goals_required=False)
    assert result.verdict == "pass"
    assert [(v.name, v.trace_length) for v in result.known_violations][0] == ("PreferredElectionZnodeConsumed", 8)


# ---- false alarms ----------------------------------------------------------------------------


def test_an_election_whose_write_is_fenced_is_not_observed(calm) -> None:
    """A deposed controller that has not processed its Reelect yet elects, and its write fails the
    /controller_epoch fence: nothing was elected, so no `Election` is observed (DeposedLeaderNotified
    used to fire on it)."""
    from kcm.model.cluster import Election
    from kcm.model.controller import Controller
    from kcm.model.state_machines import Strategy
    from kcm.model.variants import flags_for
    from kcm.model.world import ControllerMoved, World
    for epoch, observed in ((calm.zk.controller_epoch, 1), (calm.zk.controller_epoch + 1, 0)):
        w = World(SMALL, flags_for(""), calm._replace(zk=calm.zk._replace(controller_epoch=epoch)))
        c = Controller(w, 0)
        with contextlib.suppress(ControllerMoved):
            c.elect_leader_for_partitions([0], Strategy.OFFLINE)
        assert sum(type(o) is Election for o in w.obs) == observed


def test_cache_matches_zk_after_write(calm) -> None:
    from kcm.model.actions import ControllerProcessEvent
    a = ControllerProcessEvent(0)
    z = calm.zk.partitions[0]
    written = with_znode(calm, 0, leader=1, leader_epoch=z.leader_epoch + 1, version=z.version + 1)
    assert not cache_matches_zk_after_write(calm, a, written)  # ZK changed, the cache did not
    ctrl = written.brokers[0]
    cached = written._replace(brokers=put(written.brokers, 0, ctrl._replace(
        ctx=ctrl.ctx._replace(leadership=(written.zk.partitions[0],)))))
    assert cache_matches_zk_after_write(calm, a, cached)
    assert cache_matches_zk_after_write(calm, a, calm)  # nothing written


def test_reorder_targets() -> None:
    from kcm.model.spec import reassignment_targets
    cfg = ModelConfig.from_mapping({"brokers": 3, "reassign_targets": "replace-one-or-reorder"})
    assert sorted(reassignment_targets(cfg, (0, 1))) == [(0, 2), (1, 0), (2, 1)]


def test_cache_matches_zk_after_write_holds_with_reorders() -> None:
    cfg = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 0,
                                    "max_session_expiries": 0, "max_reassignments": 1,
                                    "reassign_targets": "replace-one-or-reorder"})
    result = explore(KafkaModel(cfg), properties=["CacheMatchesZkAfterWrite", "CacheMatchesZk"], goals_required=False)
    assert result.verdict == "pass", result.summary_lines()


def test_active_controller_once_settled(calm) -> None:
    gone = dead(calm, 1)
    assert active_controller_once_settled(gone)
    resigned = gone._replace(zk=gone.zk._replace(controller=NONE),
                             brokers=put(gone.brokers, 0, gone.brokers[0]._replace(active=False)))
    assert not active_controller_once_settled(resigned)
    # without a controller the other settled properties do not judge (Findings 10 is reported once)
    assert no_dead_leader_advertised(with_znode(resigned, 0, leader=1))


def test_the_controller_hole_is_known_only_with_operator_moves() -> None:
    assert "ActiveControllerOnceSettled" not in KafkaModel(SMALL).known_violations()
    moves = ModelConfig.from_mapping({**{"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1,
                                        "max_session_expiries": 0}, "max_controller_moves": 1})
    result = explore(KafkaModel(moves), properties=["ActiveControllerOnceSettled"], goals_required=False)
    assert result.verdict == "pass"
    assert [(v.name, v.trace_length) for v in result.known_violations] == [("ActiveControllerOnceSettled", 6)]


# ---- the context is derived from ZooKeeper ---------------------------------------------------


def test_context_derived_from_zk_at_failover(calm) -> None:
    from kcm.model.actions import ControllerProcessEvent
    holds = context_derived_from_zk(SMALL.topics, SMALL.partitions)
    a = ControllerProcessEvent(0)
    before = calm._replace(brokers=put(calm.brokers, 0, calm.brokers[0]._replace(active=False)))
    assert holds(before, a, calm)  # the settled controller's context is what ZooKeeper says
    ctrl = calm.brokers[0]
    stale = calm._replace(brokers=put(calm.brokers, 0, ctrl._replace(ctx=ctrl.ctx._replace(live=0b1))))
    assert not holds(before, a, stale)  # broker 1 is registered but not in the context
    z = ctrl.ctx.leadership[0]
    old = calm._replace(brokers=put(calm.brokers, 0, ctrl._replace(
        ctx=ctrl.ctx._replace(leadership=(z._replace(leader_epoch=z.leader_epoch - 1),)))))
    assert not holds(before, a, old)  # a leadership it did not read
    assert holds(calm, a, stale)  # not a failover step: not judged


def test_no_stale_context_when_inactive(calm) -> None:
    assert no_stale_context_when_inactive(calm)
    b1 = calm.brokers[1]
    leaked = calm._replace(brokers=put(calm.brokers, 1, b1._replace(ctx=b1.ctx._replace(live=0b11))))
    assert not no_stale_context_when_inactive(leaked)


@pytest.mark.parametrize("fields", [
    {"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1, "max_session_expiries": 0},
    {"brokers": 2, "replication_factor": 1, "max_broker_crashes": 0, "max_session_expiries": 1},
])
def test_the_context_properties_hold_on_the_clean_model(fields) -> None:
    result = explore(KafkaModel(ModelConfig.from_mapping(fields)),
                     properties=["ContextDerivedFromZk", "NoStaleContextWhenInactive"], goals_required=False)
    assert result.verdict == "pass", result.summary_lines()
