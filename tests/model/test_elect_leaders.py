"""Leader elections on demand (the ElectLeaders API, KIP-460) and unclean election switched on at
run time, in the model.

`AdminElectLeaders` puts `ReplicaLeaderElection(Some(partitions), electionType,
AdminClientTriggered, callback)` on the queue of the broker `/controller` names, and
`processReplicaLeaderElection` answers per partition
(kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 1726-1799);
`AdminEnableUncleanElection` writes `/config/topics/<t>` and the active controller's
`TopicUncleanLeaderElectionEnable` elects the topic's Offline partitions, now allowing an unclean
leader (lines 1103-1107). The `elect` preset is explored completely with its counts pinned.
"""

from __future__ import annotations

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model import actions as A
from kcm.model.checking import codec
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import NONE, ApiError, ElectionType, ElectLeadersAnswer, Event, EventKind
from kcm.model.config import ModelConfig
from kcm.model.spec import enabled_actions, init_states, settle, step
from kcm.model.variants import flags_for
from kcm.model.world import World

from kcm import config as presets
from kcm.cli import main

#: Two brokers, one partition on both; the operator may ask one election and switch unclean
#: election on once; a leader may shrink its ISR and a broker crash.
CFG = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1, replication_factor=2, max_broker_crashes=1,
                                    max_session_expiries=0, max_leader_isr_shrinks=1, max_elect_leaders=1,
                                    max_unclean_election_enables=1))


def _step(state, action, cfg: ModelConfig = CFG):
    """`action` taken (it must be enabled), and what the step observed."""
    assert action in enabled_actions(cfg, state), action
    w = World(cfg, flags_for(cfg.variant), state)
    after = step(cfg, state, action, world=w)
    assert after is not None
    return after, w.obs


def _drain(state, b: int):
    """Broker `b` processes its queue; the answers its ElectLeaders callbacks gave."""
    answers = []
    while state.brokers[b].queue:
        state, obs = _step(state, A.ControllerProcessEvent(b))
        answers += [o for o in obs if type(o) is ElectLeadersAnswer]
    return state, answers


def _leaderless_with_live_replica():
    """Settled, broker 0 controller and leader; broker 0 shrinks the ISR to itself and crashes:
    broker 1 takes over, the partition is Offline with ISR [0], and broker 1 is live outside it."""
    state = settle(CFG, init_states(CFG)[0])
    assert state.zk.controller == 0 and state.zk.partitions[0].leader == 0
    state, _ = _step(state, A.LeaderShrinkIsr(0, 0, 1))
    state, _ = _step(state, A.BrokerCrash(0))
    state, _ = _step(state, A.ZkSessionExpire(0))
    while state.brokers[1].queue or not state.brokers[1].active:
        state, _ = _step(state, A.ControllerProcessEvent(1))
    z = state.zk.partitions[0]
    assert (state.zk.controller, z.leader, z.isr) == (1, NONE, (0,))
    return state


def test_the_request_is_an_event_on_the_controllers_queue_and_touches_no_znode() -> None:
    state = settle(CFG, init_states(CFG)[0])
    after, _ = _step(state, A.AdminElectLeaders(0, True))
    assert after.zk == state.zk
    assert after.brokers[0].queue == (Event(EventKind.ReplicaLeaderElection, 0, ElectionType.UNCLEAN),)


def test_an_unclean_request_elects_a_live_replica_outside_the_isr_and_answers_with_it() -> None:
    state = _leaderless_with_live_replica()
    state, _ = _step(state, A.AdminElectLeaders(0, True))
    state, answers = _drain(state, 1)
    assert answers == [ElectLeadersAnswer(0, ElectionType.UNCLEAN, ApiError.NONE, 1)]
    z = state.zk.partitions[0]
    assert (z.leader, z.isr) == (1, (1,))   # leaderForOffline: an unclean leader's ISR is itself


def test_a_preferred_request_for_a_dead_preferred_replica_says_why_not() -> None:
    state = _leaderless_with_live_replica()
    state, _ = _step(state, A.AdminElectLeaders(0, False))
    state, answers = _drain(state, 1)
    assert answers == [ElectLeadersAnswer(0, ElectionType.PREFERRED, ApiError.PREFERRED_LEADER_NOT_AVAILABLE, NONE)]
    assert state.zk.partitions[0].leader == NONE


def test_a_request_for_a_partition_with_a_live_leader_needs_no_election() -> None:
    state = settle(CFG, init_states(CFG)[0])
    for unclean in (False, True):
        after, _ = _step(state, A.AdminElectLeaders(0, unclean))
        after, answers = _drain(after, 0)
        election_type = ElectionType.UNCLEAN if unclean else ElectionType.PREFERRED
        assert answers == [ElectLeadersAnswer(0, election_type, ApiError.ELECTION_NOT_NEEDED, NONE)]
        assert after.zk.partitions == state.zk.partitions


def test_switching_unclean_election_on_elects_the_offline_partition() -> None:
    state = _leaderless_with_live_replica()
    state, _ = _step(state, A.AdminEnableUncleanElection(0))
    assert state.zk.unclean_topics == 1
    assert state.brokers[1].queue == (Event(EventKind.TopicUncleanLeaderElectionEnable, 0),)
    state, _ = _drain(state, 1)
    z = state.zk.partitions[0]
    assert (z.leader, z.isr) == (1, (1,))


def test_a_switch_no_controller_hears_is_read_at_the_next_election() -> None:
    """No active controller queues the event, and the next offline election reads the topic's
    config (`collectUncleanLeaderElectionState`): broker 0 crashed after the switch with an ISR of
    itself, broker 1 takes over and elects itself, outside the ISR."""
    state = settle(CFG, init_states(CFG)[0])
    state, _ = _step(state, A.LeaderShrinkIsr(0, 0, 1))
    state, _ = _step(state, A.BrokerCrash(0))
    state, _ = _step(state, A.AdminEnableUncleanElection(0))
    assert not state.brokers[1].queue   # broker 0, the active one, is down: nobody queued the event
    state, _ = _step(state, A.ZkSessionExpire(0))
    while state.brokers[1].queue:
        state, _ = _step(state, A.ControllerProcessEvent(1))
    z = state.zk.partitions[0]
    assert (state.zk.controller, z.leader, z.isr) == (1, 1, (1,))


def test_an_inactive_broker_answers_not_controller() -> None:
    state = settle(CFG, init_states(CFG)[0])
    queued = state._replace(brokers=tuple(
        b._replace(queue=(Event(EventKind.ReplicaLeaderElection, 0, ElectionType.PREFERRED),)) if i == 1 else b
        for i, b in enumerate(state.brokers)))
    _, obs = _step(queued, A.ControllerProcessEvent(1))
    assert [o for o in obs if type(o) is ElectLeadersAnswer] == [
        ElectLeadersAnswer(0, ElectionType.PREFERRED, ApiError.NOT_CONTROLLER, NONE)]


def test_a_preempted_request_answers_not_controller() -> None:
    """A session expiry noticed with the request queued: `clearAndPut(Expire)` preempts it."""
    cfg = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1, replication_factor=2, max_broker_crashes=0,
                                        max_session_expiries=1, max_elect_leaders=1))
    state = settle(cfg, init_states(cfg)[0])
    state, _ = _step(state, A.AdminElectLeaders(0, False), cfg)
    state, _ = _step(state, A.ZkSessionExpire(0), cfg)
    _, obs = _step(state, A.BrokerNoticeExpiry(0), cfg)
    assert [o for o in obs if type(o) is ElectLeadersAnswer] == [
        ElectLeadersAnswer(0, ElectionType.PREFERRED, ApiError.NOT_CONTROLLER, NONE)]


def test_the_state_codec_keeps_the_switch_and_the_request() -> None:
    """A state with a topic's unclean election switched on and a request queued survives the
    codec the distributed explorers ship states with (model/checking/codec.py)."""
    state = _leaderless_with_live_replica()
    state, _ = _step(state, A.AdminEnableUncleanElection(0))
    state, _ = _step(state, A.AdminElectLeaders(0, True))
    assert state.zk.unclean_topics == 1 and len(state.brokers[1].queue) == 2
    assert codec.decode(codec.encode(state)) == state


def test_the_new_actions_are_offered_only_within_their_budgets() -> None:
    state = settle(CFG, init_states(CFG)[0])
    offered = [a for a in enabled_actions(CFG, state) if type(a) in (A.AdminElectLeaders, A.AdminEnableUncleanElection)]
    assert offered == [A.AdminElectLeaders(0, False), A.AdminElectLeaders(0, True), A.AdminEnableUncleanElection(0)]
    tiny = presets.load_preset("tiny")
    assert not [a for a in enabled_actions(tiny, settle(tiny, init_states(tiny)[0]))
                if type(a) in (A.AdminElectLeaders, A.AdminEnableUncleanElection)]
    switched, _ = _step(state, A.AdminEnableUncleanElection(0))
    assert A.AdminEnableUncleanElection(0) not in enabled_actions(CFG, switched)


def test_the_elect_preset_is_explored_completely_with_pinned_counts() -> None:
    result = explore(KafkaModel(presets.load_preset("elect")))
    assert result.verdict == "pass", result.summary_lines()
    assert (result.stats.distinct, result.stats.generated, result.stats.depth) == (15_397, 48_079, 31)
    assert sorted((v.name, v.trace_length) for v in result.known_violations) == [
        ("BrokersFollowTheLeader", 6), ("CacheMatchesZk", 6), ("ElectLeadersAnswered", 5)]
    for goal in ("UncleanElectionOnDemand", "UncleanElectionSwitchedOn", "ControllerFailsOver"):
        assert result.goals[goal].met, goal


@pytest.mark.parametrize(("field", "value", "allowed"), [("max_elect_leaders", 3, "0..2"),
                                                          ("max_unclean_election_enables", 2, "0..1")])
def test_the_budgets_are_validated_through_the_command_line(tmp_path, capsys, field: str, value: int,
                                                            allowed: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(f"brokers = 2\ntopics = 1\n{field} = {value}\n")
    assert main(["explore", "--config", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kcm: error:") and f"`{field}` = {value}" in err[0], err
    assert err[0].endswith(f"allowed {allowed}")
