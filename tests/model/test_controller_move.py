"""Kafka 2.6's controller-move loops, and the bound on controller epochs that keeps them finite.

A failover that throws ends in `triggerControllerMove` (kafka@2.6.x:core/src/main/scala/kafka/
controller/KafkaController.scala `elect`, lines 1364-1368; `triggerControllerMove`, 1308-1323): the
new controller resigns and deletes /controller, and the next one fails the same way while the cause
lasts. Two causes are modelled: a reassignment in progress of a partition without a state znode
(`maybeResumeReassignments` at failover, A1's `updateLeaderEpoch` throws) and a pending preferred
election of such a partition (`fetchPendingPreferredReplicaElections`). Each election is one
controller epoch higher; `ModelConfig.controller_epoch_bound` stops them.
"""

from __future__ import annotations

import pytest
from kcm.impl.abstraction import abstract
from kcm.impl.model_alignment import ModelAlignment
from kcm.impl.step_cluster import StepCluster
from kcm.model import actions as A
from kcm.model.cluster import NONE, EventKind
from kcm.model.config import ConfigError, ModelConfig
from kcm.model.spec import enabled_actions, init_states, step

#: Three brokers, two topics of two partitions: partition 2 is on brokers (2, 0).
BIG = dict(brokers=3, topics=2, partitions=2, replication_factor=2, max_broker_crashes=2, max_session_expiries=2,
           max_leader_isr_shrinks=2, max_controlled_shutdowns=2, max_preferred_elections=2, max_reassignments=2,
           max_topic_deletions=2, max_topic_creations=2, max_auto_rebalances=2, max_controller_moves=2,
           event_queue_capacity=8)


def _loop(cfg: ModelConfig, prefix: list, b: int) -> tuple[list, list]:
    """Apply `prefix`, then only broker `b`'s event processing; return (states, actions)."""
    state = init_states(cfg)[0]
    states, taken = [state], []
    for action in prefix:
        assert action in enabled_actions(cfg, state), action
        state = step(cfg, state, action)
        states.append(state)
        taken.append(action)
    while A.ControllerProcessEvent(b) in enabled_actions(cfg, state):
        nxt = step(cfg, state, A.ControllerProcessEvent(b))
        if nxt is None:
            break
        state = nxt
        states.append(state)
        taken.append(A.ControllerProcessEvent(b))
    return states, taken


#: Four brokers, one partition on (0, 1).
FOUR = dict(brokers=4, topics=1, partitions=1, replication_factor=2, max_broker_crashes=0, max_session_expiries=3,
            max_reassignments=1)
#: Brokers 0, 1 and 3 lose their sessions before anyone is controller, so partition 0 never gets a
#: state znode; broker 2 then fails over with partition 0's reassignment to (3, 0) requested: U1
#: writes RS = (3, 0, 1), A1 throws, and so does every later failover while 0, 1 and 3 are down.
REASSIGN = (FOUR, [A.AdminReassign(partition=0, target=(3, 0)), A.ZkSessionExpire(broker=0),
                   A.ZkSessionExpire(broker=1), A.ZkSessionExpire(broker=3)], 2)
#: Topic 1 queued for deletion and a preferred election of its partition 3 (on brokers 0 and 1, no
#: state znode: the partition state machine leaves a deleting topic alone) requested before broker 1's
#: first failover, with broker 0 (a replica, so the deletion is ineligible) and broker 2 down.
PREFERRED = (BIG, [A.AdminDeleteTopic(topic=1), A.AdminPreferredElection(partition=3),
                   A.ZkSessionExpire(broker=0), A.ZkSessionExpire(broker=2)], 1)


@pytest.mark.parametrize("config, prefix, b", [REASSIGN, PREFERRED], ids=["reassignment", "preferred"])
def test_every_failover_fails_and_moves_the_controller_up_to_the_epoch_bound(config, prefix, b) -> None:
    cfg = ModelConfig.from_mapping(dict(config, max_controller_epoch=4))
    states, _ = _loop(cfg, prefix, b)
    epochs = [s.zk.controller_epoch for s in states]
    assert sorted(set(epochs)) == [0, 1, 2, 3, 4]
    last = states[-1]
    # each winner resigned and deleted /controller: nobody is controller, the next election is due
    assert last.zk.controller == NONE and not any(x.active for x in last.brokers)
    assert EventKind.Reelect in [e.kind for e in last.brokers[b].queue]
    # and the election to epoch 5 is not taken (the bound, like a TLC state constraint)
    assert step(cfg, last, A.ControllerProcessEvent(b)) is None
    # a failover that moved the controller is no write by an inactive controller
    assert all(s.ghost == 0 for s in states)


def test_the_implementation_loops_the_same_way() -> None:
    """The implementation against the model after every action of the reassignment loop up to the
    bound, and on Kafka's settings (every alignment switch off) to the same epoch."""
    config, prefix, b = REASSIGN
    cfg = ModelConfig.from_mapping(dict(config, max_controller_epoch=4))
    states, taken = _loop(cfg, prefix, b)
    impl = StepCluster.initial(cfg, alignment=ModelAlignment.model())
    try:
        for action, expected in zip(taken, states[1:]):
            impl.apply(action)
            assert abstract(impl) == expected, action
    finally:
        impl.close()
    kafka = StepCluster.initial(cfg, alignment=ModelAlignment())
    try:
        for action in prefix:
            kafka.apply(action)
        epochs = set()
        for _ in range(40):
            kafka.apply(A.ControllerProcessEvent(b))
            epochs.add(abstract(kafka).zk.controller_epoch)
    finally:
        kafka.close()
    assert {1, 2, 3, 4, 5} <= epochs   # Kafka has no bound: it goes on moving


def test_a_reassignment_that_adds_a_live_broker_moves_the_controller_once() -> None:
    """When the target has a live broker, U1's write puts it into the assignment: the first
    failover throws and moves the controller, the next one's partition state machine elects that
    broker, and the resumed reassignment goes on."""
    cfg = ModelConfig.from_mapping(dict(BIG, max_controller_epoch=6))
    prefix = [A.AdminReassign(partition=2, target=(1, 2)), A.ZkSessionExpire(broker=0), A.ZkSessionExpire(broker=2)]
    states, _ = _loop(cfg, prefix, 1)
    assert sorted({s.zk.controller_epoch for s in states}) == [0, 1, 2]
    last = states[-1]
    assert last.brokers[1].active and last.zk.controller == 1
    assert last.zk.partitions[2].leader == 1 and last.zk.assignment[2] == (1, 2, 0)
    assert last.brokers[1].ctx.reassigning >> 2 & 1


def test_the_default_bound_counts_the_perturbations_that_can_move_the_controller() -> None:
    assert ModelConfig().controller_epoch_bound == 1 + (1 + 1) + 2   # a crash and an expiry by default
    cfg = ModelConfig.from_mapping(dict(max_broker_crashes=0, max_session_expiries=0,
                                        overlapping=[["broker_crash", "reassignment"]]))
    assert cfg.controller_epoch_bound == 1 + 1 + 2
    assert ModelConfig.from_mapping(dict(max_controller_epoch=3)).controller_epoch_bound == 3


@pytest.mark.parametrize("value", [-1, 33])
def test_an_out_of_range_epoch_bound_is_refused(value) -> None:
    with pytest.raises(ConfigError, match="max_controller_epoch"):
        ModelConfig.from_mapping(dict(max_controller_epoch=value))
