"""Log-directory failure (JBOD) in the model.

`BrokerFailLogDir` takes one replica's directory from a running broker: the replica stops, and
`/log_dir_event_notification` fires the controller's `LogDirEventNotification`, whose
`onBrokerLogDirFailure` asks the broker about its replicas with LeaderAndIsr; the broker answers
KAFKA_STORAGE_ERROR for the failed one, and `LeaderAndIsrResponseReceived` records it in
`replicasOnOfflineDirs` and takes it offline (kafka@2.6.x:core/src/main/scala/kafka/controller/
KafkaController.scala lines 1187-1216 and 1451-1461). A restart brings the directory back. The
`logdir` preset is explored completely with its counts pinned.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model import actions as A
from kcm.model.catalogue.findings import LOG_DIRS_STALL_REASSIGNMENT, SECOND_LOG_DIR_FAILURE, second_log_dir_failures
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.checking.labels import event_text
from kcm.model.cluster import NONE, Event, EventKind, Watch
from kcm.model.config import ModelConfig
from kcm.model.spec import enabled_actions, init_states, settle, step
from kcm.model.states import ReplicaState as R

from kcm import config as presets
from kcm.cli import main

REPO = Path(__file__).resolve().parents[2]

#: Two brokers, one partition on both, broker 0 the controller and leader once settled.
CFG = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1, replication_factor=2, max_broker_crashes=1,
                                    max_session_expiries=0, max_leader_isr_shrinks=1, max_log_dir_failures=1,
                                    max_controller_moves=1, max_topic_deletions=1))


def _step(state, action):
    assert action in enabled_actions(CFG, state), action
    after = step(CFG, state, action)
    assert after is not None
    return after


def _settled():
    state = settle(CFG, init_states(CFG)[0])
    assert state.zk.controller == 0 and state.zk.partitions[0].leader == 0 and state.zk.partitions[0].isr == (0, 1)
    return state


def test_no_failure_without_a_budget():
    cfg = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1, replication_factor=2))
    state = settle(cfg, init_states(cfg)[0])
    assert not any(type(a) is A.BrokerFailLogDir for a in enabled_actions(cfg, state))


def test_the_failure_stops_the_replica_and_notifies_the_controller():
    state = _step(_settled(), A.BrokerFailLogDir(1, 0))
    broker = state.brokers[1]
    assert broker.up and broker.offline_dirs == 1
    assert broker.replicas[0].stopped and broker.replicas[0].leader == NONE
    assert state.zk.log_dir_events == 1 << 1
    assert state.brokers[0].queue == (Event(EventKind.LogDirEventNotification),)
    # a second failure of the same directory is not offered
    assert A.BrokerFailLogDir(1, 0) not in enabled_actions(CFG, state)


def test_a_followers_failed_directory_takes_it_out_of_the_isr():
    state = _step(_settled(), A.BrokerFailLogDir(1, 0))
    state = _step(state, A.ControllerProcessEvent(0))          # LogDirEventNotification
    assert state.zk.log_dir_events == 0
    assert state.brokers[0].ctx.offline_dirs == (0, 0)        # not known yet: asked by LeaderAndIsr
    state = settle(CFG, state)
    ctx = state.brokers[0].ctx
    assert ctx.offline_dirs == (0, 1)
    assert ctx.replica_states[0][1] is R.OfflineReplica
    assert state.zk.partitions[0].leader == 0 and state.zk.partitions[0].isr == (0,)
    assert state.brokers[1].up and state.brokers[1].replicas[0].stopped


def test_the_leaders_failed_directory_moves_leadership():
    state = settle(CFG, _step(_settled(), A.BrokerFailLogDir(0, 0)))
    z = state.zk.partitions[0]
    assert (z.leader, z.isr) == (1, (1,))
    assert state.brokers[0].ctx.offline_dirs == (1, 0)
    assert state.brokers[1].replicas[0].leader == 1


def test_the_sole_isr_member_stays_in_the_isr_without_leading():
    state = _step(_settled(), A.LeaderShrinkIsr(0, 0, 1))
    state = settle(CFG, _step(state, A.BrokerFailLogDir(0, 0)))
    z = state.zk.partitions[0]
    assert (z.leader, z.isr) == (NONE, (0,))     # KAFKA-708: the last member stays; no clean leader


def test_a_restart_brings_the_directory_back():
    state = settle(CFG, _step(_settled(), A.BrokerFailLogDir(1, 0)))
    state = settle(CFG, _step(state, A.BrokerCrash(1)))
    assert state.brokers[1].offline_dirs == 0
    assert state.brokers[0].ctx.offline_dirs == (0, 0)   # forgotten at onBrokerFailure / onBrokerStartup
    assert state.zk.partitions[0].isr == (0, 1)
    assert state.brokers[0].ctx.replica_states[0][1] is R.OnlineReplica


def test_a_new_controller_learns_from_the_answers_to_its_startup_requests():
    state = settle(CFG, _step(_settled(), A.BrokerFailLogDir(1, 0)))
    state = _step(state, A.AdminMoveController())
    state = settle(CFG, state)
    c = state.zk.controller
    assert state.brokers[c].ctx.offline_dirs == (0, 1)
    assert state.zk.partitions[0].isr == (0,)
    assert state.zk.watches[c] & Watch.LOG_DIR_EVENT


def test_a_deletion_waits_for_the_failed_directory():
    state = settle(CFG, _step(_settled(), A.BrokerFailLogDir(1, 0)))
    state = settle(CFG, _step(state, A.AdminDeleteTopic(0)))
    # broker 1's replica is not online: never asked to delete, the topic is ineligible and waits
    assert state.zk.delete_topics == 1 and state.zk.assignment == ((0, 1),)
    assert state.brokers[0].ctx.replica_states[0][0] is R.ReplicaDeletionSuccessful
    assert state.brokers[0].ctx.replica_states[0][1] is R.OfflineReplica
    assert state.brokers[1].replicas[0].stopped
    state = settle(CFG, _step(state, A.BrokerCrash(1)))     # the restart resumes the deletion
    assert state.zk.delete_topics == 0 and state.zk.assignment == ((),)


def test_the_events_name_their_arguments():
    assert event_text(Event(EventKind.LeaderAndIsrResponseReceived, 1, 0b101)) == (
        "LeaderAndIsrResponseReceived(brokerId=1, KAFKA_STORAGE_ERROR {0, 2})")
    assert event_text(Event(EventKind.TopicDeletionStopReplicaResponseReceived, 1, 0b10 | 0b1 << 9)) == (
        "TopicDeletionStopReplicaResponseReceived(replicaId=1, partitions {1}, KAFKA_STORAGE_ERROR {0})")


def test_the_logdir_preset_is_explored_completely():
    result = explore(KafkaModel(presets.load_preset("logdir")))
    assert result.verdict == "pass", result.summary_lines()
    assert (result.stats.distinct, result.stats.generated, result.stats.depth) == (16_662, 57_806, 31)
    names = {p.name for p in KafkaModel(presets.load_preset("logdir")).properties()}
    assert {"OfflineDirReplicaNotLeader", "OfflineDirsKnownOnceQuiescent"} <= names
    assert not {"OfflineDirReplicaNotLeader", "OfflineDirsKnownOnceQuiescent"} & {
        p.name for p in KafkaModel(presets.load_preset("tiny")).properties()}


@pytest.mark.parametrize("value", ["3", "-1"])
def test_a_budget_out_of_range_is_refused(tmp_path, capsys, value):
    path = tmp_path / "c.toml"
    path.write_text(f"brokers = 2\nmax_log_dir_failures = {value}\n")
    assert main(["explore", "--config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kcm: error:") and "max_log_dir_failures" in err[0]


def test_a_stop_replica_on_the_failed_directory_fails_the_replicas_deletion():
    state = _step(_settled(), A.AdminDeleteTopic(0))
    state = _step(state, A.ControllerProcessEvent(0))          # TopicDeletion: StopReplica to both
    state = _step(state, A.BrokerFailLogDir(1, 0))            # before broker 1 takes it
    answers = []
    while not (state.brokers[0].queue == () and not any(state.net) and state.zk.log_dir_events == 0):
        action = next(a for a in enabled_actions(CFG, state) if type(a) in (A.ControllerProcessEvent, A.NetworkDeliver))
        queue = state.brokers[0].queue
        if (type(action) is A.ControllerProcessEvent
                and queue[0].kind is EventKind.TopicDeletionStopReplicaResponseReceived):
            answers.append(event_text(queue[0]))
        state = _step(state, action)
    assert "TopicDeletionStopReplicaResponseReceived(replicaId=1, partitions {}, KAFKA_STORAGE_ERROR {0})" in answers
    assert state.zk.delete_topics == 1


# ---- Findings 19: a reassignment waits, until a restart, for a replica on a failed log directory ----

STALLED = ("ReassignmentEventuallyCompletes", "AdminZnodesConsumed", "ReplicaStatesMatchLiveness")


def _finding_config(name: str):
    return presets.load_config_file(REPO / "docs" / "findings" / f"{name}.toml")


def test_a_reassignment_behind_a_failed_sole_replica_is_findings_19() -> None:
    """Findings 19's config: broker 0's sole replica loses its directory, then the partition is
    reassigned to broker 1. Every violation of the three properties the wait breaks is excused as
    Findings 19's, each first met at the end of the same 18 steps; no other property fails."""
    result = explore(KafkaModel(_finding_config("reassignment-behind-failed-dirs")), stop_on_violation=False,
                     goals_required=False)
    assert not result.violations, result.summary_lines()
    assert sorted((v.name, v.trace_length) for v in result.known_violations) == sorted(
        (name, 18) for name in STALLED)
    model = KafkaModel(_finding_config("reassignment-behind-failed-dirs"))
    for v in result.known_violations:
        own = LOG_DIRS_STALL_REASSIGNMENT.matcher(v.name, model.cfg, model.judge)
        assert v.trace is not None
        steps = v.trace
        assert own(steps[-2][1], steps[-1][0], steps[-1][1], functools.partial(tuple, steps)), v.name


def test_a_reassignment_waiting_for_its_own_failed_replica_is_findings_19_too() -> None:
    """Findings 18's config (the directory of the replica being added fails): the reassignment
    it leaves is Findings 19's, whether the controller was told of the failure (the
    LeaderAndIsr of the reassignment still on its way when the directory failed) or not."""
    result = explore(KafkaModel(_finding_config("log-dir-of-adding-replica")), stop_on_violation=False,
                     goals_required=False)
    assert not result.violations, result.summary_lines()
    assert sorted((v.name, v.trace_length) for v in result.known_violations) == [
        ("AdminZnodesConsumed", 19), ("OfflineDirsKnownOnceQuiescent", 19),
        ("ReassignmentEventuallyCompletes", 19), ("ReplicaStatesMatchLiveness", 25)]


def test_the_same_stalled_reassignment_without_a_failed_directory_is_not_findings_19() -> None:
    """Findings 19's last state with broker 0's directory back (the same leaderless partition,
    the same reassignment left) is no longer the Finding's: a controller that leaves a
    reassignment of a partition whose ISR member is live is a violation."""
    from kcm.checker.engine.itf import read_itf
    from kcm.checker.engine.replay import model_from_meta, replay_itf

    trace = read_itf(REPO / LOG_DIRS_STALL_REASSIGNMENT.trace)
    model = model_from_meta(trace.meta)
    actions, states = replay_itf(trace, model)
    steps = [(None, states[0]), *zip(actions, states[1:])]
    known = model.known_violations()
    last = states[-1]
    healed = last._replace(brokers=tuple(b._replace(offline_dirs=0) for b in last.brokers))
    for name in STALLED:
        assert known[name].matches(states[-2], actions[-1], last, lambda: steps), name
        assert not known[name].matches(states[-2], actions[-1], healed, lambda: steps), name


def test_unclean_election_needs_a_replica_off_the_failed_directories() -> None:
    """UncleanPartitionWithLiveReplicaGetsLeader asks for a leader only where an assigned replica
    is online: registered and not on a failed log directory, as 2.6's `isReplicaOnline` reads it.
    The sole replica's directory failed, unclean election switched on: no leader, and that holds;
    the same state with the directory back (a registered replica that could lead) violates it."""
    from kcm.model.catalogue.elect_leaders import unclean_partition_with_live_replica_gets_leader

    cfg = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=1, replication_factor=1, max_broker_crashes=0,
                                        max_session_expiries=0, max_leader_isr_shrinks=0,
                                        overlapping=[["log_dir_failure", "unclean_election_enable"]]))
    state = settle(cfg, init_states(cfg)[0])
    owner = state.zk.assignment[0][0]
    state = settle(cfg, step(cfg, state, A.BrokerFailLogDir(owner, 0)))
    state = settle(cfg, step(cfg, state, A.AdminEnableUncleanElection(0)))
    assert state.zk.partitions[0].leader == NONE and state.zk.unclean_topics == 1
    assert unclean_partition_with_live_replica_gets_leader(state)
    healed = state._replace(brokers=tuple(b._replace(offline_dirs=0) for b in state.brokers))
    assert not unclean_partition_with_live_replica_gets_leader(healed)


# ---- Findings 20: a second log-directory failure brings a known-offline replica back online ----

def test_a_second_failure_on_one_broker_is_findings_20() -> None:
    """Findings 20's config: one broker, two partitions; both directories fail in turn. The only
    property broken is ReplicaStatesMatchLiveness, excused as Findings 20's after 20 steps."""
    result = explore(KafkaModel(_finding_config("second-log-dir-failure")), stop_on_violation=False,
                     goals_required=False)
    assert not result.violations, result.summary_lines()
    assert [(v.name, v.trace_length) for v in result.known_violations] == [("ReplicaStatesMatchLiveness", 20)]


def test_the_second_failure_brings_the_first_replica_back_online() -> None:
    """The steps of 2.6: the second notification moves the replica known offline to OnlineReplica
    (`onBrokerLogDirFailure`), and the answer, KAFKA_STORAGE_ERROR for both, takes offline only
    the new one (`newOfflineReplicas`)."""
    cfg = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=2, replication_factor=2, max_broker_crashes=0,
                                        max_session_expiries=0, max_leader_isr_shrinks=0, max_log_dir_failures=2))
    state = settle(cfg, init_states(cfg)[0])
    state = settle(cfg, step(cfg, state, A.BrokerFailLogDir(0, 0)))
    ctx = state.brokers[state.zk.controller].ctx
    assert ctx.replica_states[0][0] is R.OfflineReplica and ctx.offline_dirs[0] == 0b01
    state = settle(cfg, step(cfg, state, A.BrokerFailLogDir(0, 1)))
    ctx = state.brokers[state.zk.controller].ctx
    assert state.brokers[0].offline_dirs == 0b11 and ctx.offline_dirs[0] == 0b11
    assert ctx.replica_states[0][0] is R.OnlineReplica and ctx.replica_states[1][0] is R.OfflineReplica


def test_findings_20_applies_where_one_run_can_fail_two_directories() -> None:
    """A run fails two directories only with a budget of two (an overlapping run holds each kind
    once), and one that affords two perturbations."""
    base = dict(brokers=2, topics=1, partitions=2, replication_factor=2)
    assert second_log_dir_failures(ModelConfig.from_mapping(dict(base, max_log_dir_failures=2)))
    assert not second_log_dir_failures(ModelConfig.from_mapping(dict(base, max_log_dir_failures=1)))
    assert not second_log_dir_failures(ModelConfig.from_mapping(dict(base, max_log_dir_failures=2,
                                                                      max_perturbations=1)))
    assert not second_log_dir_failures(ModelConfig.from_mapping(
        dict(base, overlapping=[["log_dir_failure", "reassignment"]])))
    assert not second_log_dir_failures(presets.load_config_file(
        REPO / "docs" / "findings" / "reassignment-behind-failed-dirs.toml"))


def test_a_replica_held_online_after_one_failure_is_not_findings_20() -> None:
    """Findings 20's last state is its own; the same replica held OnlineReplica while only its own
    directory failed (no second failure on the broker), or held OnlineReplica though the
    controller does not know its directory failed, is a violation the Finding does not excuse."""
    from kcm.checker.engine.itf import read_itf
    from kcm.checker.engine.replay import model_from_meta, replay_itf

    trace = read_itf(REPO / SECOND_LOG_DIR_FAILURE.trace)
    model = model_from_meta(trace.meta)
    actions, states = replay_itf(trace, model)
    steps = [(None, states[0]), *zip(actions, states[1:])]
    known = model.known_violations()["ReplicaStatesMatchLiveness"]
    last = states[-1]
    assert known.matches(states[-2], actions[-1], last, lambda: steps)
    one_failure = last._replace(brokers=tuple(b._replace(offline_dirs=0b01) for b in last.brokers))
    assert not known.matches(states[-2], actions[-1], one_failure, lambda: steps)
    ctx = last.brokers[0].ctx
    unknown = last._replace(brokers=(last.brokers[0]._replace(ctx=ctx._replace(offline_dirs=(0b10,))),))
    assert not known.matches(states[-2], actions[-1], unknown, lambda: steps)


def test_a_delete_of_the_log_dir_notifications_is_a_fenced_write() -> None:
    """ZkWritesFenced watches `/log_dir_event_notification` as it watches the other controller
    data: the active controller's delete is at the current epoch; the same delete by a broker
    whose controller module holds no current epoch is an unfenced write."""
    from kcm.model.catalogue.controller import zk_writes_fenced

    before = _step(_settled(), A.BrokerFailLogDir(1, 0))
    assert before.zk.log_dir_events == 0b10 and before.brokers[0].queue[0].kind is EventKind.LogDirEventNotification
    after = _step(before, A.ControllerProcessEvent(0))
    assert after.zk.log_dir_events == 0
    assert zk_writes_fenced(before, A.ControllerProcessEvent(0), after)
    assert before.brokers[1].ctx.epoch != before.zk.controller_epoch
    assert not zk_writes_fenced(before, A.ControllerProcessEvent(1), after)
