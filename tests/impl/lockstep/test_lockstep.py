"""The stepped implementation and the model in lock-step: after every action, the implementation's
abstraction equals the model's next state (`kcm.impl.abstraction.abstract`).

A scripted scenario walks through the controller's main paths one phase at a time; random walks
on the `tiny` and `default` presets (and on a config with every feature and fault enabled) cover
the interleavings nobody scripted.
"""

from __future__ import annotations

import random

import pytest
from kcm.model import actions as a
from kcm.model.config import ModelConfig
from kcm.model.variants import Flags, flags_for

from kcm.config import load_preset

SCRIPTED = ModelConfig.from_mapping(dict(
    brokers=3, topics=1, partitions=1, replication_factor=2, max_broker_crashes=1, max_session_expiries=2,
    max_controlled_shutdowns=1, max_reassignments=1, max_topic_deletions=1, event_queue_capacity=8))

EVERYTHING = ModelConfig.from_mapping(dict(
    brokers=3, topics=2, partitions=2, replication_factor=2, initial_topics=1, max_broker_crashes=2,
    max_session_expiries=2, max_leader_isr_shrinks=2, max_controlled_shutdowns=2, max_preferred_elections=2,
    max_reassignments=2, max_topic_deletions=2, max_topic_creations=2, max_auto_rebalances=2,
    max_controller_moves=2, event_queue_capacity=8, reassign_partitions_at_once=2))


def test_a_scripted_scenario_matches_the_model_after_every_action(lockstep):
    run = lockstep(SCRIPTED)
    impl = run.impl
    # Three brokers have started with Startup queued; the first to process it wins /controller.
    run.drain()
    assert impl.server(0).controller.is_active and impl.server(0).controller.epoch == 1
    assert [impl.server(b).controller.is_active for b in (1, 2)] == [False, False]
    leader = run.state.zk.partitions[0].leader
    assert leader == 0 and run.state.zk.partitions[0].isr == (0, 1)

    # A follower crashes; ZooKeeper expires its session; the controller handles BrokerChange
    # (the replica goes offline and leaves the ISR) and the requests are delivered.
    run.apply(a.BrokerCrash(1))
    run.apply(a.ZkSessionExpire(1))
    run.drain()
    assert run.state.zk.partitions[0].isr == (0,)
    run.apply(a.BrokerStart(1))
    run.drain()   # back online, the follower fetches and the leader expands the ISR
    assert run.state.zk.partitions[0].isr == (0, 1)

    # The controller's own session expires: broker 0 notices, resigns, re-registers; another
    # broker wins the election with epoch 2 and re-elects the partition's leader from the ISR.
    run.apply(a.ZkSessionExpire(0))
    run.apply(a.ControllerProcessEvent(2))   # broker 2's Reelect runs before broker 0 notices anything
    run.drain()
    controller = run.state.zk.controller
    assert controller == 2 and run.state.zk.controller_epoch == 2
    assert impl.server(controller).controller.is_active and impl.server(controller).controller.epoch == 2
    assert not impl.server(0).controller.is_active
    assert run.state.zk.partitions[0].leader in run.state.zk.partitions[0].isr

    # A controlled shutdown of the partition's leader moves leadership away, then the broker stops.
    old_leader = run.state.zk.partitions[0].leader
    run.apply(a.BrokerRequestControlledShutdown(old_leader))
    run.drain()
    assert run.state.zk.partitions[0].leader not in (old_leader, -1)
    run.apply(a.BrokerShutdown(old_leader))
    run.drain()
    run.apply(a.BrokerStart(old_leader))
    run.drain()

    # A reassignment to brokers (2, 0) runs through its phases to completion.
    run.apply(a.AdminReassign(0, (2, 0)))
    run.drain()
    assert run.state.zk.assignment[0] == (2, 0) and not any(run.state.zk.reassign)

    # Deleting the topic removes every replica, then its znodes.
    run.apply(a.AdminDeleteTopic(0))
    run.drain()
    assert run.state.zk.assignment[0] == () and run.state.zk.delete_topics == 0
    assert all(not impl.server(b).replica_manager.all_partitions for b in range(3))
    # No invalid transition was requested on the way: the reassignment's StopReplica(delete) to the
    # removed replica is answered with no deletion event (its topic was not being deleted).
    assert all(impl.server(b).controller.invalid_transitions() == {} for b in range(3))


@pytest.mark.parametrize("preset", ["tiny", "default"])
def test_random_walks_match_the_model_after_every_action(lockstep, preset):
    """Seeded walks until quiescence (the presets bound faults and admin operations), over a
    thousand actions per preset in all (50 walks: about 1,300 on tiny, 1,200 on default)."""
    cfg = load_preset(preset)
    taken = 0
    for seed in range(50):
        run = lockstep(cfg)
        taken += run.walk(random.Random(seed), 300)
    assert taken >= 1000


@pytest.mark.parametrize("seed", range(6))
def test_random_walks_with_every_feature_match_the_model(lockstep, seed):
    run = lockstep(EVERYTHING)
    run.walk(random.Random(1000 + seed), 300)


@pytest.mark.parametrize("variant", [f"v{i}" for i in range(1, 10)])
@pytest.mark.parametrize("seed", range(3))
def test_the_implementation_honours_every_variant_flag(lockstep, variant, seed):
    """Each variant preset (`kcm/presets/v*.toml`) puts one historical bug back, in the model and in
    the implementation alike (the same `Flags`): they still agree after every action."""
    cfg = load_preset(variant)
    run = lockstep(cfg)
    assert run.impl.config.flags == flags_for(cfg.variant) != Flags()
    run.walk(random.Random(2000 + seed), 300)
