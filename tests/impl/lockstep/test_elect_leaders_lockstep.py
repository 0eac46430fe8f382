"""Leader elections on demand and unclean election switched on at run time, the implementation and
the model in lock-step: the AdminClient's ElectLeaders request handed to the controller named in
`/controller` (`KafkaController.elect_leaders`), `processReplicaLeaderElection`'s
AdminClient-triggered path with its answer per partition, the admin's write of
`/config/topics/<t>` and its change notification, the broker's config handler and
`processTopicUncleanLeaderElectionEnable`. Besides the states, the answers the implementation's
callback gives are compared with the model's (`ElectLeadersAnswer`), request by request."""

from __future__ import annotations

import random

import pytest
from kcm.checker.stateful import fuzz
from kcm.impl.requests import Errors
from kcm.impl.zk_data import TopicPartition
from kcm.model import actions as a
from kcm.model.cluster import NONE, ApiError, ElectLeadersAnswer
from kcm.model.config import ModelConfig
from kcm.model.spec import enabled_actions, step
from kcm.model.variants import flags_for
from kcm.model.world import World

from kcm.config import load_preset

CFG = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1, replication_factor=2, max_broker_crashes=1,
                                    max_session_expiries=1, max_leader_isr_shrinks=1, max_elect_leaders=2,
                                    max_unclean_election_enables=1))
TP = TopicPartition("t00", 0)


def _answers(run, action) -> tuple[list, list]:
    """`action` applied in lock-step; the model's answers and the implementation's new ones."""
    w = World(run.cfg, flags_for(run.cfg.variant), run.state)
    step(run.cfg, run.state, action, world=w)
    before = len(run.impl.elect_answers)
    run.apply(action)
    model = [o for o in w.obs if type(o) is ElectLeadersAnswer]
    impl = run.impl.elect_answers[before:]
    return model, impl


def _as_model(answer: dict) -> list[tuple[int, ApiError, int]]:
    """An implementation answer as the model's (partition, error, leader)."""
    out = []
    for tp, value in sorted(answer.items()):
        if isinstance(value, Errors):
            out.append((tp.partition, ApiError[value.name], NONE))
        else:
            out.append((tp.partition, ApiError.NONE, value))
    return out


def _walk_comparing_answers(run, rng: random.Random, steps: int) -> int:
    """Random enabled actions, the answers compared at each; returns how many requests were answered."""
    answered = 0
    for _ in range(steps):
        options = [x for x in enabled_actions(run.cfg, run.state) if step(run.cfg, run.state, x) is not None]
        if not options:
            break
        model, impl = _answers(run, rng.choice(options))
        assert [(o.partition, o.error, o.leader) for o in model] == [x for answer in impl for x in _as_model(answer)]
        answered += len(model)
    return answered


def _offline_with_live_replica(run) -> None:
    """Broker 0 (controller and leader) shrinks the ISR to itself and crashes; its session expires;
    broker 1 takes over with the partition Offline, ISR [0]."""
    run.drain()
    run.apply(a.LeaderShrinkIsr(0, 0, 1))
    run.apply(a.BrokerCrash(0))
    run.apply(a.ZkSessionExpire(0))
    while run.state.brokers[1].queue:
        run.apply(a.ControllerProcessEvent(1))
    z = run.state.zk.partitions[0]
    assert (run.state.zk.controller, z.leader, z.isr) == (1, NONE, (0,))


def test_an_unclean_request_elects_a_replica_outside_the_isr(lockstep):
    run = lockstep(CFG)
    _offline_with_live_replica(run)
    model, impl = _answers(run, a.AdminElectLeaders(0, True))
    assert model == [] and impl == []
    model, impl = _answers(run, a.ControllerProcessEvent(1))
    assert impl == [{TP: 1}] and _as_model(impl[0]) == [(o.partition, o.error, o.leader) for o in model]
    run.drain()
    z = run.state.zk.partitions[0]
    assert (z.leader, z.isr) == (1, (1,))


def test_switching_unclean_election_on_elects_through_the_topic_config(lockstep):
    run = lockstep(CFG)
    _offline_with_live_replica(run)
    run.apply(a.AdminEnableUncleanElection(0))
    assert run.impl.admin.get_topic_config("t00") == {"unclean.leader.election.enable": "true"}
    run.drain()
    assert run.state.zk.partitions[0].leader == 1


def test_a_request_for_a_partition_without_leadership_is_never_answered(lockstep):
    """Findings 17 in the implementation: the create's reply lost, the partition stays New and
    uncached, and `partitionLeadershipInfo(partition)` throws before the callback."""
    cfg = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1, replication_factor=2, max_broker_crashes=0,
                                        max_session_expiries=0, max_lost_acks=1, max_elect_leaders=1))
    run = lockstep(cfg)
    run.apply(a.ZkLoseReply(0))
    run.drain()
    model, impl = _answers(run, a.AdminElectLeaders(0, False))
    model, impl = _answers(run, a.ControllerProcessEvent(0))
    assert model == [] and impl == []
    assert run.impl.server(0).controller.context.partition_leadership_info.get(TP) is None


@pytest.mark.parametrize("seed", range(8))
def test_random_walks_with_elections_on_demand_match_the_model(lockstep, seed):
    run = lockstep(CFG)
    _walk_comparing_answers(run, random.Random(5000 + seed), 200)


def test_random_walks_answer_requests(lockstep):
    """The walks above are not vacuous: over their seeds the requests get answers."""
    answered = 0
    for seed in range(8):
        answered += _walk_comparing_answers(lockstep(CFG), random.Random(5000 + seed), 200)
    assert answered > 0


def test_kcm_fuzz_draws_the_new_actions_on_the_elect_preset_with_no_disagreement():
    result = fuzz(load_preset("elect"), examples=80, steps=40, seed=1)
    assert result.failure is None
    walk = result.stats.known["ElectLeadersAnswered"]     # Findings 17, met on the way
    assert any(type(action) is a.AdminElectLeaders for action, _ in walk)
