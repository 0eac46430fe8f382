"""Lost ZooKeeper replies: the model (`ZkLoseReply`) and the implementation on the embedded
ZooKeeper (`lose_next_ack` on the first partition-state write of the event) agree after every
action, on each kind of write Kafka 2.6 retries (kafka@2.6.x:core/src/main/scala/kafka/zk/
KafkaZkClient.scala `retryRequestsUntilConnected`, lines 1693-1721).
"""

from __future__ import annotations

import random

import pytest
from kcm.model import actions as a
from kcm.model.config import ModelConfig
from kcm.model.spec import enabled_actions, settle_path, step

from kcm.config import load_preset

TWO = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1, replication_factor=2,
                                    max_broker_crashes=1, max_session_expiries=0, max_lost_acks=1,
                                    max_controlled_shutdowns=1, max_perturbations=2))


def settle(run) -> None:
    for action in settle_path(run.cfg, run.state):
        run.apply(action)


def test_a_lost_reply_to_the_state_znode_create_leaves_the_partition_new(lockstep):
    """The first controller's create of the partition state: applied, its retry answers NODEEXISTS,
    and Kafka 2.6 logs a failed state change (PartitionStateMachine.scala
    `initializeLeaderAndIsrForPartitions`, lines 259-271): the partition stays New, uncached, and
    no LeaderAndIsr is sent, in the model and in the implementation alike."""
    run = lockstep(TWO)
    run.apply(a.ZkLoseReply(0))   # Startup: broker 0 wins, fails over, creates the state znode
    s = run.state
    assert s.zk.partitions[0].leader == 0 and s.zk.partitions[0].version == 0
    assert s.brokers[0].ctx.partition_states[0].name == "NewPartition"
    assert s.brokers[0].ctx.leadership[0].leader == -1
    assert not any(r.kind.name == "LeaderAndIsr" for q in s.net for r in q)
    run.drain()
    # Quiescent, and still New: nothing retries the create until a failover.
    assert run.state.brokers[0].ctx.partition_states[0].name == "NewPartition"
    assert all(b.replicas[0].leader == -1 for b in run.state.brokers)


def test_a_lost_reply_to_an_election_write_bumps_the_leader_epoch_twice(lockstep):
    """A controlled shutdown of the leader: the election's conditional setData is applied, its
    retry answers BADVERSION, `electLeaderForPartitions` retries the partition from a fresh read
    of the controller's own write and writes again (leader epoch + 2)."""
    run = lockstep(TWO)
    settle(run)
    before = run.state.zk.partitions[0]
    leader = before.leader
    run.apply(a.BrokerRequestControlledShutdown(leader))
    controller = run.state.zk.controller
    run.apply(a.ZkLoseReply(controller))
    after = run.state.zk.partitions[0]
    assert after.leader != leader
    assert (after.leader_epoch, after.version) == (before.leader_epoch + 2, before.version + 2)
    run.drain()


def test_a_lost_reply_to_an_isr_shrink_is_settled_by_the_re_read(lockstep):
    """A follower crashes: `removeReplicasFromIsr` writes the shrunk ISR, loses the reply, gets
    BADVERSION on the retry, re-reads its own write (the replica is no longer in the ISR) and caches
    it without writing again (ReplicaStateMachine.scala `doRemoveReplicasFromIsr`)."""
    run = lockstep(TWO)
    settle(run)
    before = run.state.zk.partitions[0]
    follower = next(r for r in before.isr if r != before.leader)
    controller = run.state.zk.controller
    # The crash must leave the controller running: broker 0 controls and leads, broker 1 follows.
    assert (controller, before.leader, follower) == (0, 0, 1), (controller, before)
    run.apply(a.BrokerCrash(follower))
    run.apply(a.ZkSessionExpire(follower))
    run.apply(a.ZkLoseReply(controller))   # BrokerChange
    after = run.state.zk.partitions[0]
    assert after.isr == (before.leader,) and after.version == before.version + 1
    assert run.state.brokers[controller].ctx.leadership[0].isr == (before.leader,)


def test_a_lost_reply_to_update_leader_epoch_writes_it_again(lockstep):
    """A reassignment's phase A1 (`updateLeaderEpoch`, kafka@2.6.x:core/src/main/scala/kafka/
    controller/KafkaController.scala lines 1003-1038): BADVERSION after the lost reply is
    `case None => false`, so the loop re-reads its own write and bumps the leader epoch again."""
    cfg = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1, replication_factor=1,
                                        max_broker_crashes=0, max_session_expiries=0, max_lost_acks=1,
                                        max_reassignments=1, max_perturbations=2))
    run = lockstep(cfg)
    settle(run)
    before = run.state.zk.partitions[0]
    run.apply(a.AdminReassign(0, (1,)))
    run.apply(a.ZkLoseReply(run.state.zk.controller))   # ZkPartitionReassignment: U1-U3, A1
    after = run.state.zk.partitions[0]
    assert (after.leader, after.isr) == (before.leader, before.isr)
    assert (after.leader_epoch, after.version) == (before.leader_epoch + 2, before.version + 2)
    run.drain()
    assert run.state.zk.assignment[0] == (1,)


def test_zk_lose_reply_is_not_taken_for_an_event_that_writes_no_partition_state():
    """After an operator deletes /controller, each broker's Reelect elects and fails over without
    writing any partition state (every partition already has its leader): the lost reply has
    nothing to hit, so the step is not taken (it would duplicate ControllerProcessEvent)."""
    from kcm.model.spec import init_states
    from kcm.model.spec import settle as settled
    cfg = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1, replication_factor=2,
                                        max_broker_crashes=0, max_session_expiries=0, max_lost_acks=1,
                                        max_controller_moves=1))
    s = step(cfg, settled(cfg, init_states(cfg)[0]), a.AdminMoveController())
    assert a.ZkLoseReply(0) in enabled_actions(cfg, s)
    assert step(cfg, s, a.ZkLoseReply(0)) is None
    assert step(cfg, s, a.ControllerProcessEvent(0)).zk.controller == 0


@pytest.mark.parametrize("seed", range(8))
def test_random_walks_with_lost_replies_match_the_model(lockstep, seed):
    run = lockstep(load_preset("zkfaults"))
    taken = run.walk(random.Random(seed), 200)
    assert taken > 0


def test_random_walks_draw_lost_replies(lockstep):
    """The walks above do exercise the fault: over these seeds some walk takes `ZkLoseReply`."""
    cfg = TWO
    drawn = 0
    for seed in range(20):
        run = lockstep(cfg)
        rng = random.Random(seed)
        for _ in range(60):
            options = [x for x in enabled_actions(cfg, run.state) if step(cfg, run.state, x) is not None]
            if not options:
                break
            choice = rng.choice(options)
            drawn += isinstance(choice, a.ZkLoseReply)
            run.apply(choice)
    assert drawn >= 5


def test_kcm_fuzz_draws_both_zookeeper_faults_and_finds_no_disagreement(monkeypatch):
    """`kcm fuzz --preset zkfaults`: Hypothesis's walks take `ZkLoseReply` and `ZkConnectionLoss`,
    and the implementation on the embedded ZooKeeper agrees with the model after every step."""
    from kcm.checker.stateful import fuzz
    from kcm.impl.step_cluster import StepCluster

    drawn: list[bool] = []
    original = StepCluster.run_event_losing_reply

    def counting(self, b, **kwargs):
        drawn.append(kwargs.get("drop_connection", False))
        return original(self, b, **kwargs)

    monkeypatch.setattr(StepCluster, "run_event_losing_reply", counting)
    result = fuzz(load_preset("zkfaults"), examples=300, steps=40, seed=0)
    assert result.ok, result.failure
    assert drawn.count(False) >= 3 and drawn.count(True) >= 3, drawn
