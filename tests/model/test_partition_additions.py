"""Adding partitions to a topic: `AdminAddPartitions`, the controller's data watch on
`/brokers/topics/<t>` and `processPartitionModifications` (docs/model.md, "Adding partitions"),
the two properties of model/catalogue/partitions.py on hand-made states, the Findings 2.6 breaks
one of them with, and the `addparts` preset explored completely."""

from __future__ import annotations

import dataclasses

import pytest
from kcm.checker import mutation as M
from kcm.checker.engine.bfs import explore
from kcm.model import actions as A
from kcm.model.catalogue import known_violations
from kcm.model.catalogue.findings import (
    ADDITION_RESTORED_DURING_DELETION,
    ADDITION_WRITTEN_AWAY_BY_REASSIGNMENT,
    additions_and_deletions,
    additions_and_reassignments,
)
from kcm.model.catalogue.partitions import added_partitions_created, partition_count_never_decreases
from kcm.model.catalogue.watches import controller_watches_armed
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import NO_ZNODE, Budget, EventKind, put, topic_watch
from kcm.model.config import ConfigError, ModelConfig
from kcm.model.spec import enabled_actions, heals, init_states, settle, step

from kcm import cli, config
from tests.model.catches.bugs import Bug
from tests.model.catches.test_catches import explore_with

CFG = config.load_preset("addparts")
#: Run 3 of the preset: the settled cluster, an addition first (then a broker crash).
SETTLED = init_states(CFG)[3]


def _run(cfg: ModelConfig, state, *actions):
    for action in actions:
        assert action in enabled_actions(cfg, state), action
        state = step(cfg, state, action)
    return state


def _drain(cfg: ModelConfig, state, b: int = 0):
    """Broker `b` processes every event it has queued."""
    while state.brokers[b].queue:
        state = _run(cfg, state, A.ControllerProcessEvent(b))
    return state


def test_a_topic_is_created_with_created_partitions_and_the_controller_watches_it() -> None:
    assert SETTLED.scenario == 3
    assert SETTLED.zk.assignment == ((0, 1), ())
    assert SETTLED.zk.partitions[1] == NO_ZNODE
    # armed at failover (`registerPartitionModificationsHandlers` and the read of the znode)
    assert SETTLED.zk.watches[0] & topic_watch(0) and not SETTLED.zk.watches[1] & topic_watch(0)
    # an addition to any registered brokers, in either order (RF 2): two lists
    adds = [a for a in enabled_actions(CFG, SETTLED) if type(a) is A.AdminAddPartitions]
    assert adds == [A.AdminAddPartitions(0, ((0, 1),)), A.AdminAddPartitions(0, ((1, 0),))]


def test_an_added_partition_is_created_on_its_replicas_and_the_watch_armed_again() -> None:
    added = _run(CFG, SETTLED, A.AdminAddPartitions(0, ((1, 0),)))
    assert added.zk.assignment[1] == (1, 0)
    assert not added.zk.watches[0] & topic_watch(0)                       # one-shot: spent
    assert [(e.kind, e.a) for e in added.brokers[0].queue] == [(EventKind.PartitionModifications, 0)]
    done = settle(CFG, added)
    z = done.zk.partitions[1]
    assert (z.leader, z.isr) == (1, (1, 0))                               # the first live replica leads
    assert done.zk.watches[0] & topic_watch(0)                            # re-armed by the handler's read
    assert all(b.replicas[1].leader == 1 and b.replicas[1].leader_epoch == z.leader_epoch for b in done.brokers)
    assert added_partitions_created(done, ppt=2)


def test_an_addition_to_a_topic_queued_for_deletion_is_written_back_then_ignored() -> None:
    cfg = config.load_config_file("docs/findings/addition-while-deleting.toml")
    s = init_states(cfg)[1]
    s = _drain(cfg, _run(cfg, s, A.AdminDeleteTopic(0)))
    assert s.brokers[0].ctx.topics_to_delete == 1
    s = _run(cfg, s, A.AdminAddPartitions(0, ((0, 1),)))
    restored = _run(cfg, s, A.ControllerProcessEvent(0))
    assert restored.zk.assignment == ((0, 1), ())                          # restorePartitionReplicaAssignment
    assert restored.brokers[0].ctx.assignment[1] == ()                    # "Skipping adding partitions"
    # the restore's own write fires the watch the handler's read armed: "Ignoring partition change"
    assert [e.kind for e in restored.brokers[0].queue] == [EventKind.PartitionModifications]
    ignored = _run(cfg, restored, A.ControllerProcessEvent(0))
    assert ignored.zk.assignment == restored.zk.assignment and ignored.brokers[0].ctx == restored.brokers[0].ctx
    assert not partition_count_never_decreases(2)(s, A.ControllerProcessEvent(0), restored)


def test_a_reassignment_queued_before_an_addition_writes_the_new_partition_away() -> None:
    cfg = config.load_config_file("docs/findings/addition-lost-to-reassignment.toml")
    s = _run(cfg, init_states(cfg)[1], A.AdminReassign(0, (1, 0)), A.AdminAddPartitions(0, ((0, 1),)))
    gone = _run(cfg, s, A.ControllerProcessEvent(0))                       # ZkPartitionReassignment
    assert gone.zk.assignment == ((1, 0), ())
    done = settle(cfg, gone)
    assert done.zk.assignment[1] == () and done.zk.partitions[1] == NO_ZNODE


def test_partition_count_never_decreases_on_hand_made_steps() -> None:
    holds = partition_count_never_decreases(2)
    two = SETTLED._replace(zk=SETTLED.zk._replace(assignment=((0, 1), (1, 0))))
    assert not holds(two, None, SETTLED)                                  # partition 1 taken out
    assert holds(SETTLED, None, two)                                      # an addition
    gone = SETTLED._replace(zk=SETTLED.zk._replace(assignment=((), ())))
    assert holds(two, None, gone)                                         # the whole topic deleted
    assert holds(two, None, two)


def test_added_partitions_created_on_hand_made_quiescent_states() -> None:
    assert added_partitions_created(SETTLED, ppt=2)
    unborn = SETTLED._replace(zk=SETTLED.zk._replace(assignment=((0, 1), (0, 1))))
    assert not added_partitions_created(unborn, ppt=2)                    # no state znode
    z = SETTLED.zk.partitions[0]
    outside = SETTLED._replace(zk=SETTLED.zk._replace(partitions=put(SETTLED.zk.partitions, 0, z._replace(leader=2))))
    assert not added_partitions_created(outside, ppt=2)                   # a leader outside its replicas
    b1 = SETTLED.brokers[1]
    stale = b1.replicas[0]._replace(leader_epoch=-1)
    untold = SETTLED._replace(brokers=(SETTLED.brokers[0], b1._replace(replicas=put(b1.replicas, 0, stale))))
    assert not added_partitions_created(untold, ppt=2)                    # a replica never told
    deleting = unborn._replace(zk=unborn.zk._replace(delete_topics=1))
    assert added_partitions_created(deleting, ppt=2)                      # a topic being deleted is not judged


def test_where_findings_15_and_16_apply() -> None:
    assert additions_and_deletions(CFG) and additions_and_reassignments(CFG)
    only = dataclasses.replace(CFG, overlapping=(("partition_addition",),))
    assert not additions_and_deletions(only) and not additions_and_reassignments(only)
    cold = dataclasses.replace(only, overlapping=(), max_partition_additions=1, max_reassignments=1)
    assert additions_and_reassignments(cold) and not additions_and_deletions(cold)
    assert not additions_and_reassignments(dataclasses.replace(cold, max_perturbations=1))
    assert known_violations(CFG)["PartitionCountNeverDecreases"] == (f"{ADDITION_RESTORED_DURING_DELETION} or "
                                                                     f"{ADDITION_WRITTEN_AWAY_BY_REASSIGNMENT}")
    assert "AddedPartitionsCreated" not in known_violations(CFG)


def test_configs_that_cannot_add_partitions_keep_no_topic_watch() -> None:
    tiny = config.load_preset("tiny")
    assert not tiny.adds_partitions and tiny.created_count == tiny.partitions
    s = settle(tiny, init_states(tiny)[0])
    assert all(w < topic_watch(0) for w in s.zk.watches)
    names = {p.name for p in KafkaModel(tiny).properties()}
    assert not names & {"PartitionCountNeverDecreases", "AddedPartitionsCreated"}


def test_the_addparts_preset_is_explored_completely_with_pinned_counts() -> None:
    result = explore(KafkaModel(CFG))
    assert result.verdict == "pass" and not result.violations, result.summary_lines()
    assert (result.stats.distinct, result.stats.generated, result.stats.depth) == (7_708, 22_960, 25)
    assert [(v.name, v.trace_length) for v in result.known_violations] == [("PartitionCountNeverDecreases", 3)]
    assert result.goals["ControllerFailsOver"].met


@pytest.mark.parametrize(("text", "needle"), [
    ("partitions = 2\ncreated_partitions = 0\n", "field `created_partitions` = 0; a topic has at least one partition"),
    ("partitions = 2\ncreated_partitions = 3\n", "field `created_partitions` = 3 is out of range; allowed -1..2"),
    ("max_partition_additions = 3\n", "field `max_partition_additions` = 3 is out of range; allowed 0..2"),
])
def test_bad_partition_fields_are_one_error_line(tmp_path, capsys, text: str, needle: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    assert cli.main(["explore", "--config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kcm: error: ") and needle in err[0], err
    with pytest.raises(ConfigError):
        ModelConfig.from_mapping(config.parse_toml(text, "bad.toml"))


def test_a_settled_controller_watches_every_topic_it_knows_where_partitions_can_be_added() -> None:
    assert controller_watches_armed(SETTLED, topics_of=2)
    w = SETTLED.zk.watches
    lost = SETTLED._replace(zk=SETTLED.zk._replace(watches=(w[0] & ~topic_watch(0),) + w[1:]))
    assert not controller_watches_armed(lost, topics_of=2)
    assert controller_watches_armed(lost)                     # where partitions cannot be added: not required
    # through the explorer: the handler's read no longer re-arms the watch
    bug = Bug("controller.py", "            w.arm(self.me, topic_watch(t))\n", "            pass\n", "m-addparts.toml")
    result = explore_with(bug, "ControllerWatchesArmed", goals_required=False)
    assert [(v.name, v.trace_length) for v in result.violations] == [("ControllerWatchesArmed", 5)]


# ---- the rules of a resigned controller and of budgets, on the new action and event -------------


def _seeded(old: str, new: str, cfg: ModelConfig, name: str):
    """The model with `old` replaced by `new` in model/controller.py, explored for `name` alone."""
    sources = M.read_sources()
    source = sources["controller.py"]
    assert source.count(old) == 1, old
    loaded = M.load(source.replace(old, new), "controller.py", sources)
    try:
        return explore(loaded.spec.KafkaModel(cfg), properties=[name], goals_required=False)
    finally:
        M.unload(loaded)


def test_the_properties_of_operator_requests_and_resignation_are_judged_where_partitions_are_added() -> None:
    names = {p.name for p in KafkaModel(CFG).properties()}
    assert {"AdminRequestCarriedOutOrRefused", "NoQueuedRequestsWhenInactive", "NoControllerWatchesWhenInactive",
            "PartitionCountNeverDecreases", "AddedPartitionsCreated"} <= names


def test_a_resignation_unregisters_the_partition_modification_handlers() -> None:
    """`onControllerResignation` unregisters every `PartitionModificationsHandler`
    (`unregisterPartitionModificationsHandlers`, kafka@2.6.x:core/src/main/scala/kafka/controller/
    KafkaController.scala onControllerResignation): a resignation that kept the per-topic watches
    leaves a broker that is not the controller holding one."""
    result = _seeded("CONTROLLER_WATCHES | (w.zk.watches[self.me] & _ALL_PARTITION_WATCHES)",
                     "CONTROLLER_WATCHES | (w.zk.watches[self.me] & _ALL_PARTITION_WATCHES & ((1 << TOPIC_SHIFT) - 1))",
                     CFG, "NoControllerWatchesWhenInactive")
    assert [(v.name, v.trace_length) for v in result.violations] == [("NoControllerWatchesWhenInactive", 4)]


#: An operator's move of `/controller` before the addition: the new controller fails over while the
#: old one, which has not yet heard of the move, still holds its topic watch, so the addition
#: queues a PartitionModifications at both, and the old one processes it after resigning.
MOVE_THEN_ADD = dataclasses.replace(CFG, overlapping=(("controller_move", "partition_addition"),))


def test_partition_modifications_at_a_resigned_controller_is_dropped() -> None:
    """`processPartitionModifications` begins with `if (!isActive) return` (kafka@2.6.x:core/src/
    main/scala/kafka/controller/KafkaController.scala lines 1463-1505): the resigned controller
    neither reads the znode (which would arm its watch again) nor creates anything. The clean
    model holds every property on the config that reaches it; without that check the resigned
    broker's read arms a watch it may not hold."""
    clean = explore(KafkaModel(MOVE_THEN_ADD))
    assert clean.verdict == "pass" and not clean.violations and not clean.known_violations, clean.summary_lines()
    assert (clean.stats.distinct, clean.stats.depth) == (3_119, 18)
    result = _seeded("        if not self.active:                                         # if (!isActive) return\n"
                     "            return\n        w = self.w\n        t = event.a\n",
                     "        w = self.w\n        t = event.a\n", MOVE_THEN_ADD, "NoControllerWatchesWhenInactive")
    assert [(v.name, v.trace_length) for v in result.violations] == [("NoControllerWatchesWhenInactive", 5)]
    kinds = [type(a).__name__ for a, _ in result.violations[0].trace[1:]]
    assert kinds == ["AdminMoveController", "ControllerProcessEvent", "AdminAddPartitions", "ControllerProcessEvent",
                     "ControllerProcessEvent"]


def test_an_addition_spends_its_budget_and_its_event_heals() -> None:
    """CreatePartitions is one request, refused before anything is written (the action's guards)
    and not retried by the tool, so every addition spends its budget (model/spec.py `heals` has no
    rule for it); its PartitionModifications is processed like every controller event, a healing step."""
    add = A.AdminAddPartitions(0, ((0, 1),))
    assert not heals(SETTLED, add)
    added = _run(CFG, SETTLED, add)
    assert added.spent[Budget.PARTITION_ADDITIONS] == 1 and sum(added.spent) == 1
    assert [e.kind for e in added.brokers[0].queue] == [EventKind.PartitionModifications]
    assert heals(added, A.ControllerProcessEvent(0))
    assert not [a for a in enabled_actions(CFG, added) if type(a) is A.AdminAddPartitions]   # budget spent
