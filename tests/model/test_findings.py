"""docs/model.md, Findings 5: a topic deletion requested during a reassignment starts at once.

`processTopicDeletion` marks the topics being reassigned ineligible *before* it queues them
(kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala `processTopicDeletion`,
lines 1521-1529), and `markTopicIneligibleForDeletion` only marks topics already queued
(TopicDeletionManager.scala lines 170-177): for a topic not queued yet the mark does nothing, and
`enqueueTopicsForDeletion` starts the deletion beside the reassignment. A new controller then marks
the topic ineligible (`fetchTopicDeletionsInProgress`: a reassignment is in progress), and the
cluster settles with the deletion and the reassignment both stuck. Replayed from the settled
cluster in the model and in the implementation on Kafka 2.6's settings.
"""

from __future__ import annotations

from kcm.impl.abstraction import abstract
from kcm.impl.model_alignment import ModelAlignment
from kcm.impl.step_cluster import StepCluster
from kcm.model import actions as A
from kcm.model.catalogue.settledness import quiescent
from kcm.model.config import ModelConfig
from kcm.model.spec import enabled_actions, init_states, settle, settle_path, step
from kcm.model.states import ReplicaState as R

CFG = ModelConfig.from_mapping(dict(brokers=3, topics=1, partitions=1, replication_factor=2, max_broker_crashes=0,
                                    max_session_expiries=0, max_reassignments=1, max_topic_deletions=1,
                                    max_controller_moves=1))


def _run(state, actions):
    for action in actions:
        assert action in enabled_actions(CFG, state), action
        state = step(CFG, state, action)
    return state


def _drain(state, b: int):
    """Broker `b` processes every event it has queued (the other brokers do nothing)."""
    taken = []
    while state.brokers[b].queue:
        state = _run(state, [A.ControllerProcessEvent(b)])
        taken.append(A.ControllerProcessEvent(b))
    return state, taken


def _replay():
    """The settled cluster, the reassignment of partition 0 from (0, 1) to (2, 1) and the deletion of
    topic 0, each processed by controller 0 before anything is delivered; (state, actions after settling)."""
    state = settle(CFG, init_states(CFG)[0])
    assert state.brokers[0].active and state.zk.assignment == ((0, 1),)
    actions = [A.AdminReassign(partition=0, target=(2, 1))]
    state = _run(state, actions)
    state, taken = _drain(state, 0)
    actions += taken + [A.AdminDeleteTopic(topic=0)]
    state = _run(state, actions[-1:])
    state, taken = _drain(state, 0)
    return state, actions + taken


def test_a_deletion_requested_during_a_reassignment_starts_at_once() -> None:
    state, _ = _replay()
    ctx = state.brokers[0].ctx
    assert ctx.reassigning == 0b1                     # the reassignment is still in progress
    assert ctx.topics_to_delete == 0b1 and ctx.topics_ineligible == 0   # and the topic is not halted
    assert ctx.topics_deletion_started == 0b1
    assert ctx.replica_states[0] == (R.ReplicaDeletionStarted,) * 3


def test_after_a_controller_move_both_stay_stuck_in_the_model_and_in_kafka() -> None:
    state, actions = _replay()
    moved = _run(state, [A.AdminMoveController()])
    settled = settle(CFG, moved)
    assert quiescent(settled)
    c = settled.zk.controller
    ctx = settled.brokers[c].ctx
    # the new controller found the reassignment in /brokers/topics and marked the topic ineligible
    assert ctx.reassigning == 0b1 and ctx.topics_to_delete == 0b1 and ctx.topics_ineligible == 0b1
    # nothing completes: the topic is still there and queued, the reassignment still half done,
    # and the partition has no leader (its replicas went offline for the deletion)
    zk = settled.zk
    assert zk.delete_topics == 0b1 and zk.assignment == ((2, 1, 0),)
    assert (zk.adding, zk.removing) == (((2,),), ((0,),))
    assert zk.partitions[0].leader == -1

    # Kafka 2.6 (the implementation with every alignment switch off) settles the same way
    kafka = StepCluster.initial(CFG, alignment=ModelAlignment())
    try:
        for action in settle_path(CFG, init_states(CFG)[0]) + actions + [A.AdminMoveController()]:
            kafka.apply(action)
        kafka.scheduler.run_until_quiet()
        end = abstract(kafka)
    finally:
        kafka.close()
    assert quiescent(end)
    assert end.zk.delete_topics == 0b1 and end.zk.assignment == ((2, 1, 0),)
    assert (end.zk.adding, end.zk.removing) == (((2,),), ((0,),))
    assert end.zk.partitions[0].leader == -1


def test_a_deposed_controller_that_forgets_a_topic_keeps_it_queued_for_deletion() -> None:
    """2.6's `removeTopic` (ControllerContext.scala lines 283-290) clears neither
    `topicsToBeDeleted` nor `topicsWithDeletionStarted` (KAFKA-10040 moved that there in 2.7). Broker
    0, deposed by broker 1, which then deleted topic 0, processes the TopicChange: it forgets the
    topic's assignment and keeps it queued for deletion."""
    from tests.impl.lockstep.test_model_disagreements import CONFIGS, FORMER

    _, config, actions = next(f for f in FORMER if f[0] == "topic_change_keeps_deleted_topics")
    cfg = ModelConfig.from_mapping(CONFIGS[config])
    state = init_states(cfg)[0]
    for action in actions[:43]:
        state = step(cfg, state, action)
    assert state.zk.controller == 1 and state.brokers[0].active            # deposed, not resigned yet
    assert [e.kind.name for e in state.brokers[0].queue][0] == "TopicChange"
    before = state.brokers[0].ctx
    assert before.topics_to_delete == 0b1 and before.assignment[:2] == ((0, 1), (1, 2))
    after = step(cfg, state, actions[43]).brokers[0].ctx
    assert after.assignment[:2] == ((), ())                                 # the topic is forgotten
    assert after.topics_to_delete == 0b1                                    # but still queued (2.6)
