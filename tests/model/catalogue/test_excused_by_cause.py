"""A Kafka 2.6 Finding excuses only the violations that are its own.

A property a Finding breaks is listed as known where the Finding's config condition holds
(model/catalogue/findings.py); the checkers then excuse a violation of it only when the Finding's
matcher recognises it, and report any other violation of the property as a violation. For every
property the catalogue lists with a Finding (read from the catalogue, so that a new one cannot be
left out), a seeded mistake breaks it another way (tests/model/catches/bugs.py `NOT_THE_FINDING`)
on a config under which the Finding applies: the explorer reports it as a violation at its pinned
shortest length, beside the Finding's own violations it met first, and the clean model on the same
config gives no violation of it that deep. The engine's side (each violating state classified, the
first unexcused one reported, even after a shorter known one) is shown on a toy model through the
sequential explorer, the disjoint-runs pool and the Spark explorer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest
from kcm.checker import mutation as M
from kcm.checker.engine.bfs import CheckOptions, explore
from kcm.checker.engine.contract import Always, KnownViolation, Model
from kcm.checker.engine.runs import explore_runs
from kcm.model.catalogue import CATALOGUE
from kcm.model.checking.kafka_model import KafkaModel

from tests.model.catches.bugs import NOT_THE_FINDING
from tests.model.catches.test_catches import config_of

#: Every property the catalogue lists with a Finding.
WITH_FINDING = sorted(d.name for d in CATALOGUE if d.findings)

#: For each of them: the changes to its mistake's config under which its Finding applies, and the
#: Finding's own violations (name, length) the exploration meets before the mistake's.
APPLIES: dict[str, tuple[dict[str, int], list[tuple[str, int]]]] = {
    "CacheMatchesZk": ({"max_lost_acks": 1}, []),
    "OfflineReplicaLeavesIsr": ({"max_lost_acks": 1}, []),
    "NoDeadLeaderAdvertised": ({"max_lost_acks": 1}, []),
    "DeadReplicaOnlyAsSoleIsrMember": ({"max_lost_acks": 1}, []),
    "BrokersFollowTheLeader": ({"max_lost_acks": 1}, []),
    "NoShuttingDownJoinsIsr": ({"max_controlled_shutdowns": 1}, [("NoShuttingDownJoinsIsr", 11)]),
    "AdminZnodesConsumed": ({}, []),
    "PreferredElectionZnodeConsumed": ({}, []),
    "ActiveControllerOnceSettled": ({}, []),
    "EventuallyOneActiveController": ({"max_controller_moves": 2}, []),
    "ReassignmentEventuallyCompletes": ({"max_perturbations": -1}, []),
    "ReplicaStatesMatchLiveness": ({"max_perturbations": -1}, []),
    "DeposedLeaderNotified": ({"max_perturbations": -1}, []),
    # with a session expiry beside the crash and the reassignment: Findings 13 applies too
    "OfflinePartitionWithLiveIsrGetsLeader": ({"max_perturbations": -1, "max_session_expiries": 1}, []),
    "OfflinePartitionEventuallyOnline": ({"max_perturbations": -1, "max_session_expiries": 1}, []),
    "DeletedTopicLeavesNoReplica": ({"max_topic_deletions": 1, "max_controller_moves": 1, "max_perturbations": 2}, []),
    "AutoRebalanceElectsPreferred": ({"max_reassignments": 1}, []),
    "AdminRequestCarriedOutOrRefused": ({"max_perturbations": -1}, []),
    "AtMostOneBelievedLeaderAfterQuiescence": ({"max_perturbations": -1}, []),
    "PartitionCountNeverDecreases": ({}, []),
    "AddedPartitionsCreated": ({"max_lost_acks": 1}, []),
    "ElectLeadersAnswered": ({}, []),
    "OfflineDirsKnownOnceQuiescent": ({"max_reassignments": 1}, []),
}


def _config(name: str):
    changes, _ = APPLIES[name]
    return dataclasses.replace(config_of(NOT_THE_FINDING[name].config), **changes)


def test_every_property_with_a_finding_has_a_mistake_of_another_cause() -> None:
    assert sorted(NOT_THE_FINDING) == WITH_FINDING
    assert sorted(APPLIES) == WITH_FINDING


@pytest.mark.parametrize("name", WITH_FINDING)
def test_a_violation_not_of_the_findings_kind_is_reported_as_a_violation(name: str) -> None:
    bug = NOT_THE_FINDING[name]
    sources = M.read_sources()
    source = sources[bug.file]
    assert source.count(bug.old) == 1, f"model/{bug.file} no longer holds the text of {name}'s mistake once"
    loaded = M.load(source.replace(bug.old, bug.new), bug.file, sources)
    try:
        model = loaded.spec.KafkaModel(_config(name))
        assert name in model.known_violations(), "the Finding does not apply on this config"
        result = explore(model, properties=[name], goals_required=False)
    finally:
        M.unload(loaded)
    assert result.verdict == "violation", result.summary_lines()
    assert [(v.name, v.trace_length) for v in result.violations] == [(name, bug.length)]
    assert [(v.name, v.trace_length) for v in result.known_violations] == APPLIES[name][1]


@pytest.mark.parametrize("config", sorted({(NOT_THE_FINDING[n].config, tuple(APPLIES[n][0].items()))
                                           for n in WITH_FINDING}),
                         ids=lambda c: c[0] + "".join(f",{k}={v}" for k, v in c[1]))
def test_the_clean_model_violates_them_only_as_its_findings(config) -> None:
    """On the same configs the clean model's violations of these properties are all its Findings':
    the mistake, not the config, is caught. Explored one step beyond the longest pinned trace."""
    names = sorted(n for n in WITH_FINDING if (NOT_THE_FINDING[n].config, tuple(APPLIES[n][0].items())) == config)
    depth = max(NOT_THE_FINDING[n].length or 0 for n in names) + 1
    result = explore(KafkaModel(_config(names[0])), properties=names, stop_on_violation=False, goals_required=False,
                     max_depth=depth)
    assert result.verdict in ("pass", "incomplete") and not result.violations, result.summary_lines()


# ---- Findings 4: a believer outside the assignment is excused only for its own cause ---------------


def _findings_4_trace():
    """Findings 4's committed trace replayed: (model, steps, index of the step that completes the
    reassignment)."""
    from pathlib import Path

    from kcm.checker.engine.itf import read_itf
    from kcm.checker.engine.replay import model_from_meta, replay_itf
    from kcm.model.catalogue.findings import REMOVED_REPLICA_LEADS

    trace = read_itf(Path(__file__).resolve().parents[3] / REMOVED_REPLICA_LEADS.trace)
    model = model_from_meta(trace.meta)
    actions, states = replay_itf(trace, model)
    steps = [(None, states[0]), *zip(actions, states[1:])]
    done = next(i for i in range(1, len(steps)) if steps[i - 1][1].zk.assignment != steps[i][1].zk.assignment
                and not steps[i][1].zk.removing[0])
    return model, steps, done


def _matches(model, steps) -> bool:
    (_, before), (action, after) = steps[-2], steps[-1]
    return model.known_violations()["AtMostOneBelievedLeaderAfterQuiescence"].matches(
        before, action, after, lambda: steps)


def test_findings_4_trace_leaves_the_removed_replica_leading_and_is_excused() -> None:
    """Controller 0 completes the reassignment (0) -> (1) at step 11 and queues StopReplica for
    its own removed replica; its session expires and its resignation drops the queue (step 14).
    At quiescence broker 0 still believes it leads partition 0, at leader epoch 1, beside the
    leader 1 at leader epoch 3: the property fails, and Findings 4's matcher excuses it."""
    from kcm.model.catalogue.leadership import at_most_one_believed_leader, believed_leaders
    from kcm.model.catalogue.settledness import quiescent

    model, steps, done = _findings_4_trace()
    end = steps[-1][1]
    assert done == 11 and len(steps) == 24
    assert any(r.kind.name == "StopReplica" for r in steps[done][1].net[0])       # queued 0 -> 0
    assert quiescent(end) and not at_most_one_believed_leader(end)
    assert end.zk.assignment == ((1,),) and end.zk.partitions[0][:2] == (1, 3)
    assert believed_leaders(end, 0) == [0, 1] and end.brokers[0].replicas[0].leader_epoch == 1
    assert _matches(model, steps)


def test_a_removed_replica_whose_stop_replica_was_never_sent_to_a_live_broker_is_not_findings_4() -> None:
    """The same trace with the StopReplica never queued (broker 0 live to the controller): the
    removed replica was not stopped, a controller mistake, not Findings 4."""
    model, steps, done = _findings_4_trace()
    unsent = []
    for i, (a, s) in enumerate(steps):
        if i >= done:
            net = (tuple(r for r in s.net[0] if r.kind.name != "StopReplica"), *s.net[1:])
            s = s._replace(net=net)
        unsent.append((a, s))
    assert not _matches(model, unsent)


def test_a_believer_outside_the_assignment_that_no_reassignment_removed_is_not_findings_4() -> None:
    """The same trace with the step that took broker 0 out of the assignment emptying it, as a
    topic deletion does: a deleted topic's replica left believing it leads is not Findings 4."""
    model, steps, done = _findings_4_trace()
    deleted = [(a, s._replace(zk=s.zk._replace(assignment=((),))) if i >= done else s)
               for i, (a, s) in enumerate(steps)]
    assert not _matches(model, deleted)


def test_a_believer_inside_the_assignment_other_than_the_leader_is_not_findings_4() -> None:
    """The same last state with the znode's leader changed: the assigned believer, broker 1, is
    not the leader, whatever happened to broker 0."""
    model, steps, _ = _findings_4_trace()
    a, end = steps[-1]
    moved = end._replace(zk=end.zk._replace(partitions=(end.zk.partitions[0]._replace(leader=-1),)))
    assert not _matches(model, [*steps[:-1], (a, moved)])


def test_where_findings_4_applies() -> None:
    """A reassignment with what can lose its StopReplica in one run: a session expiry, a crash, a
    controlled shutdown or a move of /controller; not a reassignment alone, nor with a lost reply."""
    import dataclasses

    from kcm.model.catalogue.findings import reassignments_with_lost_stop_replicas as applies
    from kcm.model.config import ModelConfig

    from kcm.config import load_preset

    base = ModelConfig.from_mapping(dict(brokers=2, replication_factor=1, max_broker_crashes=0,
                                         max_session_expiries=0, max_reassignments=1, max_perturbations=2))
    assert not applies(base) and not applies(dataclasses.replace(base, max_lost_acks=1))
    for field in ("max_session_expiries", "max_broker_crashes", "max_controller_moves", "max_controlled_shutdowns"):
        assert applies(dataclasses.replace(base, **{field: 1})), field
        assert not applies(dataclasses.replace(base, **{field: 1}, max_perturbations=1)), field
    tiny = load_preset("tiny")
    assert applies(dataclasses.replace(tiny, overlapping=(("reassignment", "controller_move"),)))
    assert not applies(dataclasses.replace(tiny, overlapping=(("reassignment", "lost_ack"),)))
    presets = ("tiny", "default", "deep", "four", "large", "zkfaults")
    assert [n for n in presets if applies(load_preset(n))] == ["default", "deep", "large"]


# ---- the engine: every violating state classified ------------------------------------------------


class Counters(Model):
    """Two counters `x` and `y`, each stepped up to 3, in one run per initial `run` value. The
    property `Small` (x < 2 and y < 3) is known to break when only `x` was ever stepped (a matcher
    that reads the trace): its shortest violation, (2, 0) in 2 steps, is excused, and (2, 1) in 3
    steps (x, x, y), the first the matcher rejects, is a violation."""

    name = "counters"

    def __init__(self, runs: int = 1) -> None:
        self.runs = runs

    def init_states(self) -> Sequence[tuple[int, int, int]]:
        return [(0, 0, r) for r in range(self.runs)]

    def enabled_actions(self, s: tuple[int, int, int]) -> list[str]:
        return [a for a, v in (("x", s[0]), ("y", s[1])) if v < 3]

    def step(self, s: tuple[int, int, int], a: str) -> tuple[int, int, int]:
        return (s[0] + 1, s[1], s[2]) if a == "x" else (s[0], s[1] + 1, s[2])

    def run_of(self, s: tuple[int, int, int]) -> int:
        return s[2]

    def is_terminal(self, s: tuple[int, int, int]) -> bool:
        return True

    def properties(self) -> list[Always]:
        return [Always("Small", lambda s: s[0] < 2 and s[1] < 3)]

    def known_violations(self) -> dict[str, KnownViolation]:
        def only_x(s: Any, a: Any, t: Any, trace: Any) -> bool:
            return all(action == "x" for action, _ in trace()[1:])
        return {"Small": KnownViolation("only x stepped", only_x)}


def counters(runs: int = 1) -> Counters:
    """The factory the Spark executors import."""
    return Counters(runs)


def _classified(result) -> tuple:
    return ([(v.name, [a for a, _ in v.trace[1:]]) for v in result.violations],
            [(v.name, [a for a, _ in v.trace[1:]]) for v in result.known_violations],
            result.known_reasons)


EXPECTED = ([("Small", ["x", "x", "y"])], [("Small", ["x", "x"])], {"Small": "only x stepped"})


@pytest.mark.parametrize("stop", [True, False])
def test_the_first_unexcused_violation_is_reported_after_a_shorter_known_one(stop: bool) -> None:
    result = explore(Counters(), stop_on_violation=stop)
    assert result.verdict == "violation"
    assert _classified(result) == EXPECTED


def test_disjoint_runs_merge_what_each_run_classified() -> None:
    result = explore_runs(Counters(runs=2), CheckOptions(), jobs=2)
    assert result.verdict == "violation"
    assert _classified(result) == EXPECTED
    assert [v.trace[0][1] for v in (*result.violations, *result.known_violations)] == [(0, 0, 0)] * 2


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    from pathlib import Path

    from kcm.spark_explore.session import spark_session
    session = spark_session("local[2]", app_name="kcm-tests", python_path=(Path(__file__).resolve().parents[3],),
                            checkpoint_dir=str(tmp_path_factory.mktemp("spark-checkpoints")))
    yield session
    session.stop()


@pytest.mark.parametrize("stop", [True, False])
def test_the_spark_explorer_classifies_on_its_executors_alike(spark, stop: bool) -> None:
    from kcm.spark_explore.bfs import SparkOptions, explore_spark
    from kcm.spark_explore.spec import ModelSpec
    spec = ModelSpec.of("tests.model.catalogue.test_excused_by_cause:counters")
    result = explore_spark(spark, spec, SparkOptions(partitions=2, stop_on_violation=stop))
    assert result.verdict == "violation"
    assert _classified(result) == EXPECTED
