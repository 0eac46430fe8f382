"""Overlapping runs (`ModelConfig.overlapping`): from the settled cluster, perturbations in the order
listed, each next one before the cluster has settled again."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jsonschema
import pytest
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.model_spec import ModelSpec
from kcm.checker.engine.replay import replay_itf
from kcm.checker.engine.traces import write_counterexample
from kcm.model import actions as A
from kcm.model.catalogue.settledness import quiescent
from kcm.model.checking.kafka_model import KafkaModel, config_fields
from kcm.model.config import ConfigError, ModelConfig
from kcm.model.spec import enabled_actions, init_states, settle_path, step

from kcm import config
from kcm.exploration import MODEL_FACTORY

ITF_SCHEMA = json.loads((Path(__file__).parents[1] / "checker" / "itf.schema.json").read_text())
TINY = config.load_preset("tiny")
# tiny without its own perturbations, plus one overlapping run: a crash, then an ISR shrink.
CRASH_THEN_SHRINK = dataclasses.replace(TINY, max_broker_crashes=0, max_leader_isr_shrinks=0,
                                        overlapping=(("broker_crash", "leader_isr_shrink"),))

_PERTURBATIONS = (A.BrokerCrash, A.LeaderShrinkIsr, A.AdminDeleteTopic, A.AdminReassign, A.AdminCreateTopic,
                  A.AdminPreferredElection, A.AdminMoveController, A.SchedulerAutoRebalance,
                  A.BrokerRequestControlledShutdown)


def test_the_field_is_validated_with_one_line_naming_the_problem() -> None:
    ok = ModelConfig.from_mapping({"overlapping": [["broker_crash", "reassignment"]]})
    assert ok.overlapping == (("broker_crash", "reassignment"),)
    for bad, words in [({"overlapping": "broker_crash"}, "must be a list of lists"),
                       ({"overlapping": [[]]}, "non-empty list"),
                       ({"overlapping": [["broker_crash", "fire"]]}, "unknown kind 'fire'"),
                       ({"overlapping": [["broker_crash", "broker_crash"]]}, "repeats a kind")]:
        with pytest.raises(ConfigError, match=words) as err:
            ModelConfig.from_mapping(bad)
        assert "\n" not in str(err.value) and "`overlapping`" in str(err.value)


def test_each_run_starts_from_the_one_settled_cluster() -> None:
    cold, *runs = init_states(CRASH_THEN_SHRINK)
    assert cold.scenario == 0 and not quiescent(cold)
    # After the default spread's states come the other placements' cold starts (model/placement.py).
    others = runs[1:]
    runs = runs[:1]
    assert others and all(s.scenario == 0 and not quiescent(s) for s in others)
    assert [r.scenario for r in runs] == [1]
    settled = runs[0]
    assert quiescent(settled)
    # The path `settle_path` reports (what the fuzzer replays on the implementation) leads there.
    s = cold
    for action in settle_path(CRASH_THEN_SHRINK, cold):
        s = step(CRASH_THEN_SHRINK, s, action)
    assert s._replace(scenario=1) == settled
    assert settled.zk.controller == 0 and settled.zk.partitions[0].isr == (0, 1)
    # No healing action is enabled there, and only the run's first kind of perturbation is.
    assert {type(a) for a in enabled_actions(CRASH_THEN_SHRINK, settled)} == {A.BrokerCrash}
    # The cold start of the same config has no perturbation at all.
    assert not any(isinstance(a, _PERTURBATIONS) for a in enabled_actions(CRASH_THEN_SHRINK, cold))


def test_the_next_kind_comes_only_before_the_cluster_settles_again() -> None:
    settled = init_states(CRASH_THEN_SHRINK)[1]
    crashed = step(CRASH_THEN_SHRINK, settled, A.BrokerCrash(1))
    assert crashed.spent[0] == 1 and not quiescent(crashed)
    # Broker 0 leads with broker 1 in its ISR: the shrink is now enabled (the crash is spent).
    kinds = {type(a) for a in enabled_actions(CRASH_THEN_SHRINK, crashed)}
    assert A.LeaderShrinkIsr in kinds and A.BrokerCrash not in kinds
    # Heal without the shrink until quiescent: nothing is enabled any more.
    s = crashed
    while not quiescent(s):
        s = step(CRASH_THEN_SHRINK, s, next(a for a in enabled_actions(CRASH_THEN_SHRINK, s)
                                            if not isinstance(a, _PERTURBATIONS)))
    assert enabled_actions(CRASH_THEN_SHRINK, s) == []


def test_an_overlapping_run_is_explored_with_the_cold_run_and_pinned() -> None:
    model = KafkaModel(CRASH_THEN_SHRINK)
    result = explore(model, goals_required=False)
    assert result.verdict == "pass"
    assert (result.stats.distinct, result.stats.depth) == (OVERLAP_DISTINCT, OVERLAP_DEPTH)
    # The cold run alone has no perturbation: what the overlapping run adds is the crash and
    # the shrink while the crash is being handled.
    cold_only = explore(KafkaModel(dataclasses.replace(CRASH_THEN_SHRINK, overlapping=())), goals_required=False)
    assert cold_only.stats.distinct < result.stats.distinct
    assert result.coverage.action("LeaderShrinkIsr").new_states > 0


OVERLAP_DISTINCT, OVERLAP_DEPTH = 1322, 24


def test_a_counterexample_in_an_overlapping_run_starts_settled_and_replays(tmp_path) -> None:
    """V6 with no crash in the cold-start run: only the overlapping run can crash the leader. The
    shortest counterexample starts from the settled cluster (initial state 1), and its ITF file
    validates, names that initial state, and replays to the violation."""
    cfg = ModelConfig.from_mapping({"variant": "V6", "brokers": 2, "replication_factor": 1, "max_broker_crashes": 0,
                                    "max_session_expiries": 0, "overlapping": [["broker_crash"]]})
    model = KafkaModel(cfg)
    result = explore(model, properties=["IsrNonEmpty"])
    assert [v.name for v in result.violations] == ["IsrNonEmpty"]
    trace = result.violations[0].trace
    assert len(trace) - 1 == 3 and trace[0][1].scenario == 1 and quiescent(trace[0][1])
    assert type(trace[1][0]) is A.BrokerCrash
    paths = write_counterexample(model, trace, tmp_path, invariant="IsrNonEmpty", kind="safety",
                                 config=config_fields(cfg),
                                 model_spec=ModelSpec.of(MODEL_FACTORY, symmetry=True, **config_fields(cfg)))
    document = json.loads(paths["itf"].read_text())
    jsonschema.validate(document, ITF_SCHEMA)
    assert document["#meta"]["initial_index"] == 1
    replay_itf(paths["itf"])  # raises unless the replay reaches the same violation
