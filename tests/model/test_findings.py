"""docs/model.md, "Findings": each Finding's committed trace is of the kind its matcher recognises
(model/catalogue/findings.py), and Findings 5, replayed.

Findings 5: a topic deletion requested during a reassignment starts at once.

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

import dataclasses
from pathlib import Path

import pytest
from kcm.checker.engine.itf import read_itf
from kcm.checker.engine.replay import model_from_meta, replay_itf, reproduces
from kcm.impl.abstraction import abstract
from kcm.impl.model_alignment import ModelAlignment
from kcm.impl.step_cluster import StepCluster
from kcm.model import actions as A
from kcm.model.catalogue.findings import (
    FINDINGS,
    NO_CONTROLLER_AFTER_OPERATOR_MOVE,
    REASSIGNMENT_WITHOUT_STATE_ZNODE,
    SHUTTING_DOWN_REJOINS_ISR,
    STALE_STOP_REPLICA_ANSWER,
)
from kcm.model.catalogue.settledness import quiescent
from kcm.model.catalogue.views import registered
from kcm.model.cluster import NO_ZNODE, Watch
from kcm.model.config import ModelConfig
from kcm.model.spec import enabled_actions, init_states, settle, settle_path, step
from kcm.model.states import ReplicaState as R

REPO = Path(__file__).resolve().parents[2]

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


# ---- every Finding's committed trace is of its own kind ------------------------------------------


#: Further committed traces of a Finding, each of another property it breaks.
MORE_TRACES = {REASSIGNMENT_WITHOUT_STATE_ZNODE: ("docs/findings/reassignment-without-state-znode-deposed.itf.json",
                                                  "docs/findings/reassignment-without-state-znode-leaderless.itf.json",
                                                  # the request deleted unanswered (A1 threw)
                                                  "docs/findings/reassignment-without-state-znode-dropped.itf.json"),
               # the last deletion of /controller is the controller's own clean shutdown closing its session
               NO_CONTROLLER_AFTER_OPERATOR_MOVE: ("docs/findings/no-controller-after-clean-shutdown.itf.json",),
               # the leader admits a follower whose registration a session expiry took; it then shuts down
               SHUTTING_DOWN_REJOINS_ISR: ("docs/findings/unregistered-broker-joins-isr.itf.json",)}
TRACES = [(f, path) for f in FINDINGS for path in (f.trace, *MORE_TRACES.get(f, ()))]


@pytest.mark.parametrize(("finding", "path"), TRACES, ids=[Path(path).stem for _, path in TRACES])
def test_the_committed_trace_of_each_finding_matches_what_its_violations_look_like(finding, path: str) -> None:
    """Replayed through the model it was written from (checker/engine/replay.py), each Finding's
    trace ends in a violation of the property it names, listed as known on its config, and every
    property of the Finding that its last step violates is excused by the Finding's matcher: the
    predicate recognises the Finding's own behaviour (docs/model.md, "Findings")."""
    trace = read_itf(REPO / path)
    model = model_from_meta(trace.meta)
    actions, states = replay_itf(trace, model)
    steps = ((None, states[0]), *zip(actions, states[1:]))
    registered = {p.name for p in model.properties()}
    violated = [name for name in finding.matchers
                if name in registered and reproduces(model, name, "safety", states, actions)]
    assert trace.invariant in violated
    known = model.known_violations()
    for name in violated:
        assert str(finding) in known[name].reason.split(" or ")
        own = finding.matcher(name, model.cfg, model.judge)
        assert own(states[-2], actions[-1], states[-1], lambda: steps), name
        assert known[name].matches(states[-2], actions[-1], states[-1], lambda: steps), name


def test_a_findings_matcher_needs_its_cause_not_only_its_symptom() -> None:
    """Findings 10's last state with the deletion of `/controller` heard (the deleted controller's
    watch still armed when the operator deleted it) is no longer the Finding's: the same symptom,
    no controller, then comes from another cause."""
    trace = read_itf(REPO / NO_CONTROLLER_AFTER_OPERATOR_MOVE.trace)
    model = model_from_meta(trace.meta)
    actions, states = replay_itf(trace, model)
    matches = model.known_violations()["ActiveControllerOnceSettled"].matches
    steps = [(None, states[0]), *zip(actions, states[1:])]
    assert matches(states[-2], actions[-1], states[-1], lambda: steps)
    moved = next(i for i, a in enumerate(actions, 1) if type(a) is A.AdminMoveController)
    before = steps[moved - 1][1]
    armed = before._replace(zk=before.zk._replace(watches=tuple(w | Watch.CONTROLLER for w in before.zk.watches)))
    heard = [*steps[:moved - 1], (steps[moved - 1][0], armed), *steps[moved:]]
    assert not matches(states[-2], actions[-1], states[-1], lambda: heard)


# ---- Findings 11: a reassignment of a partition without a state znode --------------------------


def _replayed(path: str):
    trace = read_itf(REPO / path)
    model = model_from_meta(trace.meta)
    actions, states = replay_itf(trace, model)
    return model, actions, states


def test_a_reassignment_without_state_znode_is_left_half_done() -> None:
    """Findings 11's plain trace: the reassignment's U1 is in `/brokers/topics`, its request is
    gone, and the adding replica, now the leader, is still NonExistentReplica to the controller
    (A2 never ran), with every broker up and nothing left to do."""
    _, actions, states = _replayed(REASSIGNMENT_WITHOUT_STATE_ZNODE.trace)
    end = states[-1]
    assert quiescent(end)
    zk, ctx = end.zk, end.brokers[1].ctx
    assert (zk.assignment, zk.adding, zk.removing, zk.reassign) == (((1, 0),), ((1,),), ((0,),), ((),))
    assert zk.partitions[0].leader == 1 and end.brokers[1].active
    assert ctx.replica_states[0] == (R.OnlineReplica, R.NonExistentReplica)
    # the reassignment was written while the partition had no state znode
    written = next(i for i, s in enumerate(states) if s.zk.adding[0])
    assert states[written].zk.partitions[0] == NO_ZNODE == states[written - 1].zk.partitions[0]


def test_a_findings_11_matcher_needs_the_reassignment_written_without_a_state_znode() -> None:
    """The same last state, reached by a trace whose reassignment was written while the partition
    had its state znode, is not Findings 11's (a reassignment left half-done for another cause)."""
    model, actions, states = _replayed(REASSIGNMENT_WITHOUT_STATE_ZNODE.trace)
    matches = model.known_violations()["ReassignmentEventuallyCompletes"].matches
    steps = [(None, states[0]), *zip(actions, states[1:])]
    assert matches(states[-2], actions[-1], states[-1], lambda: steps)
    znode = states[-1].zk.partitions
    with_znode = [(a, s._replace(zk=s.zk._replace(partitions=znode))) for a, s in steps]
    assert not matches(states[-2], actions[-1], states[-1], lambda: with_znode)


def test_new_partition_from_live_replicas_judges_the_assignment_at_the_create() -> None:
    """In the failover of the leaderless trace (step 8) the controller creates partition 0's state
    znode from RS = (1, 0) with the live broker 1 as leader and ISR, as
    `initializeLeaderAndIsrForPartitions` does, and the same event then completes the
    reassignment back to (0): NewPartitionFromLiveReplicas holds, judged against the assignment
    when the znode was created. An ISR member outside that assignment, or a dead one, still
    violates it."""
    model, actions, states = _replayed("docs/findings/reassignment-without-state-znode-leaderless.itf.json")
    prop = next(p for p in model.properties() if p.name == "NewPartitionFromLiveReplicas")
    i = next(i for i, s in enumerate(states[1:], 1) if states[i - 1].zk.partitions[0] == NO_ZNODE != s.zk.partitions[0])
    before, action, after = states[i - 1], actions[i - 1], states[i]
    assert type(action) is A.ControllerProcessEvent and i == 8
    assert before.zk.assignment == ((1, 0),) and after.zk.assignment == ((0,),)
    z = after.zk.partitions[0]
    assert (z.leader, z.leader_epoch, z.isr) == (-1, 1, (1,))    # created (1, epoch 0, (1)), then 1 removed
    assert prop.holds(before, action, after)

    # broker 1 assigned neither before nor after the event: a create from an unassigned replica
    unassigned = before._replace(zk=before.zk._replace(assignment=((0,),)))
    assert not prop.holds(unassigned, action, after)
    # broker 0 is assigned but dead (crashed) at the create
    dead = after._replace(zk=after.zk._replace(partitions=(after.zk.partitions[0]._replace(leader=0, isr=(0,)),)))
    assert 0 not in registered(after) and not prop.holds(before, action, dead)


# ---- Findings 7: where a partition-state create can lose its reply --------------------------------


def test_findings_7_applies_wherever_a_create_can_lose_its_reply() -> None:
    """A connection loss resends the write as a lost reply does, and an overlapping run that creates
    a topic creates its state znodes; the settled cluster's lost replies without a creation meet
    every state znode already there."""
    from kcm.model.catalogue.findings import lost_create_replies

    from kcm.config import load_preset

    tiny = load_preset("tiny")
    assert not lost_create_replies(tiny) and not lost_create_replies(load_preset("zkfaults"))
    assert lost_create_replies(dataclasses.replace(tiny, max_lost_acks=1))
    assert lost_create_replies(dataclasses.replace(tiny, max_connection_losses=1))
    for fault in ("lost_ack", "connection_loss"):
        assert lost_create_replies(dataclasses.replace(tiny, overlapping=(("topic_creation", fault),)))
        assert not lost_create_replies(dataclasses.replace(tiny, overlapping=(("broker_crash", fault),)))


def test_a_cold_start_connection_loss_breaks_only_findings_7s_properties() -> None:
    """`tiny` with one connection loss from the cold start: the five properties of Findings 7 are
    broken as with a lost reply, each listed and excused, and nothing else fails."""
    from kcm.checker.engine.bfs import explore
    from kcm.model.checking.kafka_model import KafkaModel

    from kcm.config import load_preset

    cfg = dataclasses.replace(load_preset("tiny"), max_lost_acks=0, max_connection_losses=1)
    result = explore(KafkaModel(cfg), goals_required=False)
    assert result.verdict == "pass", result.summary_lines()
    assert sorted((v.name, v.trace_length) for v in result.known_violations) == [
        ("BrokersFollowTheLeader", 6), ("CacheMatchesZk", 6), ("DeadReplicaOnlyAsSoleIsrMember", 7),
        ("NoDeadLeaderAdvertised", 7), ("OfflineReplicaLeavesIsr", 6)]


def test_findings_11_applies_where_a_partition_can_be_reassigned_without_its_state_znode() -> None:
    """Its committed config and the same with the topic created later; not where every replica's
    broker cannot be down with another broker left to lead, nor where a run cannot afford the
    crash and the reassignment together (every preset)."""
    from kcm.model.catalogue.findings import reassignment_without_state_znode as applies
    from kcm.model.config import ModelConfig

    from kcm.config import load_preset

    cfg = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1, replication_factor=1,
                                        max_broker_crashes=1, max_session_expiries=0, max_reassignments=1))
    assert applies(cfg)
    assert applies(dataclasses.replace(cfg, initial_topics=0, max_topic_creations=1))
    assert not applies(dataclasses.replace(cfg, max_reassignments=0))
    assert not applies(dataclasses.replace(cfg, replication_factor=2))          # no broker left to lead
    assert not applies(dataclasses.replace(cfg, max_perturbations=1))           # the crash or the reassignment
    assert applies(dataclasses.replace(cfg, initial_topics=0, max_reassignments=0, max_broker_crashes=0,
                                       overlapping=(("topic_creation", "broker_crash", "reassignment"),)))
    assert not any(applies(load_preset(name)) for name in ("tiny", "default", "deep", "four", "large", "zkfaults"))


# ---- Findings 12 and Findings 8 with a session expiry: the cause, not the symptom ------------------


def test_a_deletion_completed_with_no_retry_on_its_way_is_not_findings_12() -> None:
    """The committed trace's last step completes the deletion while broker 0 holds the replica its
    failover re-created and the retry's StopReplica(delete) is still queued to it: Findings 12.
    With that request gone from the channel, the replica would stay: another cause."""
    model, actions, states = _replayed(STALE_STOP_REPLICA_ANSWER.trace)
    matches = model.known_violations()["DeletedTopicLeavesNoReplica"].matches
    steps = [(None, states[0]), *zip(actions, states[1:])]
    before, action, after = states[-2], actions[-1], states[-1]
    assert after.zk.assignment == ((),) and after.brokers[0].replicas[0].replicas == (0,)
    assert matches(before, action, after, lambda: steps)
    channel = action.broker * len(after.brokers)
    assert any(r.kind.name == "StopReplica" for r in after.net[channel])
    lost = after._replace(net=(*after.net[:channel], (), *after.net[channel + 1:]))
    assert not matches(before, action, lost, lambda: steps)


def test_a_dead_isr_member_the_controller_held_live_at_its_admission_is_not_findings_8() -> None:
    """In the committed trace the leader admits broker 0 while the active controller holds it not
    live (its session expired): Findings 8. Had the controller held it live at the admission, a
    BrokerChange would have been due when it stopped: another cause."""
    model, actions, states = _replayed("docs/findings/unregistered-broker-joins-isr.itf.json")
    matches = model.known_violations()["DeadReplicaOnlyAsSoleIsrMember"].matches
    steps = [(None, states[0]), *zip(actions, states[1:])]
    assert matches(states[-2], actions[-1], states[-1], lambda: steps)
    i = next(i for i, a in enumerate(actions, 1) if type(a) is A.LeaderExpandIsr)
    before = states[i - 1]
    c = before.zk.controller
    ctx = before.brokers[c].ctx
    assert not ctx.live & 1                                  # broker 0 not live to the controller
    held = before._replace(brokers=tuple(b._replace(ctx=ctx._replace(live=ctx.live | 1, shutting_down=0))
                                         if j == c else b for j, b in enumerate(before.brokers)))
    live = [*steps[:i - 1], (steps[i - 1][0], held), *steps[i:]]
    assert not matches(states[-2], actions[-1], states[-1], lambda: live)


def test_where_findings_5_8_and_12_apply() -> None:
    """Findings 5 needs a deletion and a reassignment in one run, Findings 12 a deletion with a
    session expiry or a move of /controller, and Findings 8's dead ISR member a session expiry
    under 2.6's ISR admission; a run of one perturbation (`default`, `four`) meets neither pair."""
    from kcm.model.catalogue.findings import (
        deletions_and_reassignments,
        deletions_with_failover_or_bounce,
        isr_admission_of_2_6_with_expiries,
    )

    from kcm.config import load_preset

    presets = ("tiny", "default", "deep", "four", "large", "zkfaults")
    assert [n for n in presets if deletions_and_reassignments(load_preset(n))] == ["deep"]
    assert [n for n in presets if deletions_with_failover_or_bounce(load_preset(n))] == ["deep", "large"]
    assert [n for n in presets if isr_admission_of_2_6_with_expiries(load_preset(n))] == [
        "deep", "four", "large", "zkfaults"]
    tiny = load_preset("tiny")
    assert deletions_and_reassignments(dataclasses.replace(tiny, overlapping=(("reassignment", "topic_deletion"),)))
    for other, applies in (("session_expiry", True), ("controller_move", True), ("broker_crash", False)):
        cfg = dataclasses.replace(tiny, overlapping=(("topic_deletion", other),))
        assert deletions_with_failover_or_bounce(cfg) == applies, other
    assert not isr_admission_of_2_6_with_expiries(dataclasses.replace(load_preset("four"), isr_admission="kip-841"))


# ---- Findings 13: a reassignment completed while its new replicas are held dead ------------------


def test_a_reassignment_completed_with_its_target_held_dead_leaves_the_partition_leaderless() -> None:
    """Findings 13's trace: the active controller completes the reassignment (0) -> (1) at step 20
    while it holds broker 1 dead (its session expired, but its process fetched and leader 0 admitted
    it to the ISR); the election fails and B4 leaves leader -1, ISR (1). Broker 1 registers again,
    and the controller, holding the partition OnlinePartition, elects nothing."""
    from kcm.model.catalogue.findings import REASSIGNMENT_COMPLETED_WITH_DEAD_TARGETS as F13
    from kcm.model.states import PartitionState

    _, actions, states = _replayed(F13.trace)
    completed = next(i for i in range(1, len(states))
                     if states[i - 1].zk.partitions[0].leader == 0 and states[i].zk.partitions[0].leader == -1)
    assert completed == 20 and actions[completed - 1] == A.ControllerProcessEvent(0)
    before, after = states[completed - 1], states[completed]
    assert before.zk.adding == ((1,),) and before.zk.partitions[0].isr == (0, 1)
    assert not before.brokers[0].ctx.live >> 1 & 1        # the target held dead by the controller
    assert (after.zk.assignment, after.zk.adding, after.zk.removing) == (((1,),), ((),), ((),))
    end = states[-1]
    assert end.zk.partitions[0][:3] == (-1, 2, (1,)) and 1 in registered(end)
    assert end.brokers[0].active and end.brokers[0].ctx.partition_states[0] is PartitionState.OnlinePartition


def test_a_findings_13_matcher_needs_the_target_held_dead_at_the_completion() -> None:
    """The same last state, reached by a trace whose completing controller held the target live,
    is not Findings 13's (a reassignment that left the partition leaderless for another cause)."""
    from kcm.model.catalogue.findings import REASSIGNMENT_COMPLETED_WITH_DEAD_TARGETS as F13

    model, actions, states = _replayed(F13.trace)
    steps = [(None, states[0]), *zip(actions, states[1:])]
    for name in ("OfflinePartitionEventuallyOnline", "OfflinePartitionWithLiveIsrGetsLeader"):
        own = F13.matcher(name, model.cfg, model.judge)
        assert own(states[-2], actions[-1], states[-1], lambda: steps), name
        live = []
        for a, s in steps:
            brokers = tuple(b._replace(ctx=b.ctx._replace(live=b.ctx.live | 2)) for b in s.brokers)
            live.append((a, s._replace(brokers=brokers)))
        assert not own(states[-2], actions[-1], states[-1], lambda live=live: live), name


def test_where_findings_13_applies() -> None:
    """A reassignment and a session expiry in one run, under 2.6's ISR admission: its committed
    config, an overlapping run of both; not KIP-841's admission, nor a crash instead of the expiry."""
    from kcm.model.catalogue.findings import reassignments_with_expiries as applies

    from kcm.config import load_config_file, load_preset

    cfg = load_config_file(REPO / "docs/findings/reassigned-to-dead-target.toml")
    assert applies(cfg)
    assert not applies(dataclasses.replace(cfg, isr_admission="kip-841"))
    assert not applies(dataclasses.replace(cfg, max_session_expiries=0, max_broker_crashes=1))
    assert not applies(dataclasses.replace(cfg, max_perturbations=1))
    tiny = load_preset("tiny")
    assert applies(dataclasses.replace(tiny, overlapping=(("reassignment", "session_expiry"),)))
    assert not applies(dataclasses.replace(tiny, overlapping=(("reassignment", "broker_crash"),)))
    presets = ("tiny", "default", "deep", "four", "large", "zkfaults")
    assert [n for n in presets if applies(load_preset(n))] == ["deep", "large"]


# ---- Findings 14: the scheduled rebalance skips every partition while a reassignment runs --------


def test_the_rebalance_during_a_reassignment_leaves_an_eligible_preferred_replica_off_the_lead() -> None:
    """Findings 14's trace: the reassignment (0, 1) -> (1, 2) is in progress (broker 2 not yet in
    the ISR), so the full assignment is (1, 2, 0) and broker 1, its preferred replica, is live and
    in the ISR; the scheduled rebalance at step 7 elects nothing and broker 0 keeps the lead."""
    from kcm.model.catalogue.findings import REBALANCE_SKIPPED_DURING_REASSIGNMENT as F14

    model, actions, states = _replayed(F14.trace)
    before, action, after = states[-2], actions[-1], states[-1]
    assert len(actions) == 7 and type(action) is A.ControllerProcessEvent
    assert before.brokers[action.broker].queue[0].kind.name == "AutoPreferredReplicaLeaderElection"
    assert before.zk.assignment == ((1, 2, 0),) and before.zk.adding == ((2,),)
    assert before.zk.partitions[0].isr == (0, 1) and before.zk.partitions[0].leader == 0
    assert after.zk.partitions[0] == before.zk.partitions[0]
    # the same step with the reassignment done is not the Finding's
    matches = F14.matcher("AutoRebalanceElectsPreferred", model.cfg, model.judge)
    steps = [(None, states[0]), *zip(actions, states[1:])]
    assert matches(before, action, after, lambda: steps)
    c = action.broker
    done = before._replace(brokers=tuple(b._replace(ctx=b.ctx._replace(reassigning=0)) if j == c else b
                                         for j, b in enumerate(before.brokers)))
    assert not matches(done, action, after, lambda: steps)


def test_where_findings_14_applies() -> None:
    """A scheduled rebalance and a reassignment in one run; no preset has both."""
    from kcm.model.catalogue.findings import rebalances_and_reassignments as applies

    from kcm.config import load_config_file, load_preset

    cfg = load_config_file(REPO / "docs/findings/rebalance-during-reassignment.toml")
    assert applies(cfg)
    assert not applies(dataclasses.replace(cfg, max_reassignments=0))
    assert not applies(dataclasses.replace(cfg, max_auto_rebalances=0))
    assert not applies(dataclasses.replace(cfg, max_perturbations=1))
    assert not applies(dataclasses.replace(cfg, max_admin_ops=1))
    tiny = load_preset("tiny")
    assert applies(dataclasses.replace(tiny, overlapping=(("reassignment", "auto_rebalance"),)))
    presets = ("tiny", "default", "deep", "four", "large", "zkfaults")
    assert not any(applies(load_preset(n)) for n in presets)


# ---- Findings 11, reversed: every violation on its committed config is Findings 11's --------------


def test_the_reversed_reassignment_config_breaks_only_what_findings_11_and_4_list() -> None:
    """docs/findings/reassignment-without-state-znode-reversed.toml explored whole: every property
    it breaks is excused by its cause, among them a repeated request for the target already
    half-written (A1 throws again and the request is deleted unanswered: Findings 11) and the
    deposed leader the reverse reassignment leaves believing it leads (Findings 11, the replica held
    NonExistentReplica, and it is no case of Findings 4's lost StopReplica)."""
    from kcm.checker.engine.bfs import explore
    from kcm.model.checking.kafka_model import KafkaModel

    from kcm.config import load_config_file

    cfg = load_config_file(REPO / "docs/findings/reassignment-without-state-znode-reversed.toml")
    result = explore(KafkaModel(cfg), stop_on_violation=False)
    assert result.verdict == "pass" and result.stats.distinct == 137_306
    assert {v.name: v.trace_length for v in result.known_violations} == {
        "AdminRequestCarriedOutOrRefused": 7, "DeposedLeaderNotified": 11, "ReassignmentEventuallyCompletes": 17,
        "OfflinePartitionWithLiveIsrGetsLeader": 17, "ReplicaStatesMatchLiveness": 17,
        "AtMostOneBelievedLeaderAfterQuiescence": 22, "OfflinePartitionEventuallyOnline": 23}
    assert "Findings 11" in KafkaModel(cfg).known_violations()["AtMostOneBelievedLeaderAfterQuiescence"].reason
