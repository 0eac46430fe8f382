"""Log-directory failure, the implementation and the model in lock-step: the broker's
`handle_log_dir_failure` (the replica offline, `/log_dir_event_notification/log_dir_event_<seq>`),
its KAFKA_STORAGE_ERROR answers to LeaderAndIsr and StopReplica, the controller's
`processLogDirEventNotification` and `processLeaderAndIsrResponseReceived`, and the directory back
with a restart."""

from __future__ import annotations

import random

import pytest
from kcm.checker.stateful import fuzz
from kcm.impl.zk_data import LogDirEventNotificationZNode, TopicPartition
from kcm.model import actions as a
from kcm.model.cluster import NONE
from kcm.model.config import ModelConfig
from kcm.model.spec import enabled_actions, step

from kcm.config import load_preset

CFG = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1, replication_factor=2, max_broker_crashes=1,
                                    max_session_expiries=0, max_leader_isr_shrinks=1, max_log_dir_failures=1,
                                    max_controller_moves=1, max_topic_deletions=1))
TP = TopicPartition("t00", 0)


def test_a_followers_failed_directory_takes_it_offline(lockstep):
    run = lockstep(CFG)
    run.drain()
    run.apply(a.BrokerFailLogDir(1, 0))
    assert run.impl.server(1).replica_manager.offline_partitions == {TP}
    assert run.impl.server(0).zk_client.get_children(LogDirEventNotificationZNode.path)
    run.drain()
    ctx = run.impl.server(0).controller.context
    assert ctx.replicas_on_offline_dirs == {1: {TP}}
    assert (run.state.zk.partitions[0].leader, run.state.zk.partitions[0].isr) == (0, (0,))


def test_the_sole_isr_members_failed_directory_leaves_the_partition_leaderless(lockstep):
    run = lockstep(CFG)
    run.drain()
    run.apply(a.LeaderShrinkIsr(0, 0, 1))
    run.apply(a.BrokerFailLogDir(0, 0))
    run.drain()
    z = run.state.zk.partitions[0]
    assert (z.leader, z.isr) == (NONE, (0,))


def test_a_new_controller_and_a_restart(lockstep):
    run = lockstep(CFG)
    run.drain()
    run.apply(a.BrokerFailLogDir(1, 0))
    run.drain()
    run.apply(a.AdminMoveController())
    run.drain()
    c = run.state.zk.controller
    assert run.impl.server(c).controller.context.replicas_on_offline_dirs == {1: {TP}}
    run.apply(a.BrokerCrash(1))
    run.apply(a.ZkSessionExpire(1))
    run.drain()
    run.apply(a.BrokerStart(1))
    run.drain()
    assert run.impl.server(1).replica_manager.offline_partitions == set()
    assert run.impl.server(c).controller.context.replicas_on_offline_dirs == {}
    assert run.state.zk.partitions[0].isr == (0, 1)


def test_a_deletion_meets_the_failed_directory(lockstep):
    run = lockstep(CFG)
    run.drain()
    run.apply(a.AdminDeleteTopic(0))
    run.apply(a.ControllerProcessEvent(0))
    run.apply(a.BrokerFailLogDir(1, 0))
    run.drain()
    assert run.state.zk.delete_topics == 1


def _walk(run, rng: random.Random, steps: int) -> int:
    """Random enabled actions in lock-step; returns how many log directories failed."""
    failures = 0
    for _ in range(steps):
        options = [x for x in enabled_actions(run.cfg, run.state) if step(run.cfg, run.state, x) is not None]
        if not options:
            break
        action = rng.choice(options)
        failures += type(action) is a.BrokerFailLogDir
        run.apply(action)
    return failures


@pytest.mark.parametrize("seed", range(8))
def test_random_walks_with_log_dir_failures_match_the_model(lockstep, seed):
    _walk(lockstep(CFG), random.Random(7000 + seed), 200)


def test_random_walks_fail_directories():
    """The walks above are not vacuous: over their seeds, directories fail."""
    from tests.impl.lockstep.conftest import LockStep

    failures = 0
    for seed in range(8):
        run = LockStep(CFG)
        try:
            failures += _walk(run, random.Random(7000 + seed), 200)
        finally:
            run.impl.close()
    assert failures > 0


def test_kcm_fuzz_draws_the_failure_on_the_logdir_preset_with_no_disagreement():
    result = fuzz(load_preset("logdir"), examples=80, steps=40, seed=1)
    assert result.failure is None
    assert result.stats.steps > 0
