"""Replaying traces: from action objects, from labels, from ITF files, and as a generated script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.contract import Model
from kcm.checker.engine.errors import UsageError
from kcm.checker.engine.itf import itf_document, parse_itf, write_itf
from kcm.checker.engine.model_spec import ModelSpec, load_factory
from kcm.checker.engine.replay import (
    ReplayError,
    assert_reproduces,
    replay,
    replay_itf,
    replay_labels,
    replay_script,
    replay_trace,
    reproduces,
)
from kcm.checker.engine.traces import write_counterexample

from tests.checker.toys import (
    BrokerStaleWrite,
    Climbers,
    ControllerBump,
    EpochModel,
    EpochState,
    GridCounter,
    IncX,
    Lamp,
    Philosophers,
    TwoPhaseCommit,
)

REPO = Path(__file__).resolve().parents[2]
FACTORY = "tests.checker.toys:epochs"


def epoch_violation():
    model = EpochModel()
    return model, explore(model).violations[0]


def test_replay_returns_the_states_and_checks_enabledness():
    model, violation = epoch_violation()
    actions = [a for a, _ in violation.trace[1:]]
    assert replay(model, actions) == [s for _, s in violation.trace]
    assert replay_trace(model, violation.trace)[-1] == EpochState(1, 1)
    with pytest.raises(ReplayError, match=r"step 4: BrokerStaleWrite\(broker=0\) is not enabled; enabled: "
                                          r"ControllerBump\(controller=0\), ControllerBump\(controller=1\)"):
        replay(model, actions + [BrokerStaleWrite(0)])
    assert replay(model, actions + [ControllerBump(0)])[-1] == EpochState(2, 0)


def test_replay_picks_the_initial_state_that_works():
    model = Climbers(6, symmetric=False)
    violation = explore(model).violations[0]
    states = replay(model, [a for a, _ in violation.trace[1:]])
    assert states == [s for _, s in violation.trace]
    with pytest.raises(ReplayError, match="no initial state replays the trace"):
        replay(model, [IncX()])


def test_replay_trace_notices_a_different_state():
    model, violation = epoch_violation()
    tampered = violation.trace[:2] + ((violation.trace[2][0], EpochState(9, 9)),) + violation.trace[3:]
    with pytest.raises(ReplayError, match="step 2: the replayed state differs"):
        replay_trace(model, tampered)


def test_replay_labels_errors():
    model = EpochModel()
    with pytest.raises(ReplayError, match=r"step 1: no enabled action is 'Nope'; enabled: "
                                          r"ControllerBump\(controller=0\), ControllerBump\(controller=1\)"):
        replay_labels(model, ["Nope"])

    class Vague(EpochModel):
        def format_action(self, action):
            return type(action).__name__

    with pytest.raises(ReplayError, match="matches several enabled actions with different effects"):
        replay_labels(Vague(), ["ControllerBump"])

    class Same(GridCounter):  # two actions, one label, same next state: not ambiguous
        def enabled_actions(self, s):
            return [IncX(), IncX()] if s.x < self.n else []

    actions, states = replay_labels(Same(3), ["IncX()", "IncX()"])
    assert [(s.x, s.y) for s in states] == [(0, 0), (1, 0), (2, 0)]


def test_reproduces_each_kind():
    model, violation = epoch_violation()
    actions = [a for a, _ in violation.trace[1:]]
    states = [s for _, s in violation.trace]
    assert reproduces(model, "epoch_monotonic", "transition", states, actions)
    assert not reproduces(model, "epoch_monotonic", "transition", states[:3], actions[:2])
    deadlocked = explore(Philosophers(3)).violations[0]
    d_states = [s for _, s in deadlocked.trace]
    assert reproduces(Philosophers(3), "deadlock", "deadlock", d_states, [a for a, _ in deadlocked.trace[1:]])
    assert not reproduces(Philosophers(3), "deadlock", "deadlock", d_states[:2], [])
    assert reproduces(Lamp(), "on", "sometimes", [False, True], ["toggle"])
    assert not reproduces(Lamp(), "on", "sometimes", [False], [])
    assert not reproduces(Lamp(), "boolean", "safety", [False], [])
    with pytest.raises(ReplayError, match="the model has no property 'ghost'"):
        reproduces(model, "ghost", "safety", states, actions)
    with pytest.raises(ReplayError, match="does not violate transition 'epoch_monotonic' after 2 steps"):
        assert_reproduces(model, "epoch_monotonic", "transition", states[:3], actions[:2])


def test_load_factory():
    assert load_factory(FACTORY) is not None
    with pytest.raises(UsageError, match="bad model factory 'nocolon'"):
        load_factory("nocolon")
    with pytest.raises(UsageError, match="cannot import model factory module 'kcm.nope'"):
        load_factory("kcm.nope:f")
    with pytest.raises(UsageError, match="is not a callable"):
        load_factory("tests.checker.toys:FACTORY")


def test_a_trace_names_its_model_by_the_spec_the_explorers_ship():
    spec = ModelSpec.of("tests.checker.toys:climbers", height=6)
    assert ModelSpec.from_meta(spec.to_meta()) == spec
    assert ModelSpec.from_meta(spec.to_meta()).build().height == 6
    with pytest.raises(ValueError, match="keyword arguments only"):
        ModelSpec.of("tests.checker.toys:grid", 3).to_meta()
    with pytest.raises(UsageError, match="does not name a model factory"):
        ModelSpec.from_meta({})


def write_epoch_itf(tmp_path, **meta):
    model, violation = epoch_violation()
    document = itf_document(model, violation.trace, invariant=violation.name, kind=violation.kind,
                            model_spec=ModelSpec.of(FACTORY, **meta.pop("model_args", {})), **meta)
    return document, write_itf(tmp_path / "epoch.itf.json", document)


def test_replay_itf_reproduces_the_violation(tmp_path):
    _, path = write_epoch_itf(tmp_path)
    actions, states = replay_itf(path)
    assert [EpochModel().format_action(a) for a in actions] == [
        "ControllerBump(controller=0)", "ControllerBump(controller=0)", "BrokerStaleWrite(broker=1)"]
    assert states[-1] == EpochState(1, 1)


def test_replay_itf_of_a_symmetric_run_starts_from_the_recorded_initial_state(tmp_path):
    model = Climbers(6, symmetric=True)
    violation = explore(model).violations[0]
    document = itf_document(model, violation.trace, invariant=violation.name, kind=violation.kind,
                            model_spec=ModelSpec.of("tests.checker.toys:climbers", height=6))
    _, states = replay_itf(write_itf(tmp_path / "c.itf.json", document))
    assert states == [s for _, s in violation.trace]
    del document["#meta"]["initial_index"]  # found by comparing the first state instead
    _, states = replay_itf(parse_itf(document))
    assert states == [s for _, s in violation.trace]


def test_replay_itf_detects_tampering(tmp_path):
    document, path = write_epoch_itf(tmp_path)
    document["states"][2]["epoch"] = {"#bigint": "5"}
    with pytest.raises(ReplayError, match=r"state 2 differs from the recorded one \(epoch\)"):
        replay_itf(parse_itf(document))
    document, _ = write_epoch_itf(tmp_path)
    document["#meta"]["invariant"], document["#meta"]["kind"] = "deadlock", "deadlock"
    with pytest.raises(ReplayError, match="does not violate deadlock 'deadlock'"):
        replay_itf(parse_itf(document))
    document, _ = write_epoch_itf(tmp_path)
    document["states"][1]["#meta"]["action"] = None
    document["#meta"]["actions"][1] = None
    with pytest.raises(ReplayError, match="does not record every action label"):
        replay_itf(parse_itf(document))
    document, _ = write_epoch_itf(tmp_path)
    document["#meta"].pop("initial_index")
    document["states"][0]["epoch"] = {"#bigint": "7"}
    with pytest.raises(ReplayError, match="first state is not an initial state"):
        replay_itf(parse_itf(document))
    document, _ = write_epoch_itf(tmp_path)
    del document["#meta"]["model_factory"]
    with pytest.raises(UsageError, match="does not name a model factory"):
        replay_itf(parse_itf(document))


def test_replay_itf_against_a_fixed_model_fails(tmp_path):
    _, path = write_epoch_itf(tmp_path)
    with pytest.raises(ReplayError, match="state 3 differs from the recorded one"):
        replay_itf(path, model=EpochModel(fixed=True))


def run_script(path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True, cwd=path.parent)


def test_generated_script_reproduces_and_fails_once_fixed(tmp_path):
    model, violation = epoch_violation()
    paths = write_counterexample(model, violation.trace, tmp_path, invariant=violation.name,
                                 kind=violation.kind, model_spec=ModelSpec.of(FACTORY))
    script = paths["replay"]
    text = script.read_text()
    assert "MODEL_FACTORY = 'tests.checker.toys:epochs'" in text
    assert "    'BrokerStaleWrite(broker=1)',\n]" in text
    out = run_script(script)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "reproduced: transition 'epoch_monotonic' after 3 steps\n"
    # The same script against the fixed model: the step still runs, the violation is gone.
    script.write_text(text.replace("MODEL_ARGS = {}", "MODEL_ARGS = {'fixed': True}"))
    out = run_script(script)
    assert out.returncode == 1
    assert "ReplayError: the replayed trace does not violate transition 'epoch_monotonic' after 3 steps" in out.stderr


def test_script_of_a_goal_witness_runs_under_pytest_collection_rules(tmp_path):
    model = TwoPhaseCommit(3)
    goal = explore(model).goals["commit agreement"]
    document = itf_document(model, goal.trace, invariant=goal.name, kind="sometimes",
                            model_spec=ModelSpec.of("tests.checker.toys:two_phase", rms=3))
    text = replay_script(parse_itf(document), "w.itf.json")
    namespace: dict = {"__name__": "replay_w"}
    exec(compile(text, "replay_w.py", "exec"), namespace)
    states = namespace["test_replay"]()
    assert len(states) == 11
    with pytest.raises(ValueError, match="needs #meta.model_factory"):
        replay_script(parse_itf(itf_document(model, goal.trace)))


def test_written_itf_round_trips_through_json(tmp_path):
    document, path = write_epoch_itf(tmp_path, config={"brokers": 2})
    assert json.loads(path.read_text()) == document


def test_models_without_fields_override_still_replay(tmp_path):
    class Bare(Model):
        name = "bare"

        def init_states(self):
            return (0,)

        def enabled_actions(self, s):
            return ("inc",) if s < 2 else ()

        def step(self, s, a):
            return s + 1

    model = Bare()
    violation = explore(model).violations[0]  # a deadlock at 2
    document = itf_document(model, violation.trace, invariant="deadlock", kind="deadlock")
    assert document["vars"] == ["state"]
    _, states = replay_itf(parse_itf(document), model=model)
    assert states == [0, 1, 2]
