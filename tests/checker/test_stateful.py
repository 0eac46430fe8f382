"""The Hypothesis lock-step machine (`kcm.checker.stateful`) and `kcm fuzz`.

* Healthy configs run clean under the CI profile: the model's invariants hold and the
  implementation matches the model after every step of every example.
* Machines that must fail do (Hypothesis's own `bad_machines` idea): every variant V1-V9 from a
  fixed seed, with its own invariant, a shrunk trace no shorter than the explorer's shortest (a
  fuzzer shorter than BFS would mean one of them is wrong), an ITF file that `kcm trace show`
  renders and that replays to the violation; and an implementation made to differ from the model
  (one `ModelAlignment` switch off, or an exception), reported as a refinement failure whose trace
  replays through both to the same difference.
* `kcm fuzz`: exit codes, output, files.

The fuzz-vs-explorer lengths are printed at the end of the session (`conftest.py`).
"""

from __future__ import annotations

import json
import re
import runpy

import pytest
from hypothesis import settings
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.contract import KnownViolation
from kcm.checker.engine.replay import replay_itf
from kcm.checker.stateful import (
    CI_PROFILE,
    DEFAULT_EXAMPLES,
    DEFAULT_STEPS,
    REFINEMENT,
    VARIANT_EXAMPLES,
    VARIANT_STEPS,
    Failure,
    default_bounds,
    fuzz,
    machine_for,
    replay_lockstep,
    write_failure,
    write_known,
)
from kcm.impl.model_alignment import ModelAlignment
from kcm.impl.step_cluster import StepCluster
from kcm.model.catalogue.findings import LOST_CREATE_REPLY
from kcm.model.checking.kafka_model import KafkaModel, config_fields
from kcm.model.config import ModelConfig
from kcm.model.variants import VARIANTS

from kcm.cli import main
from kcm.config import load_preset

#: Two brokers, single-replica partitions: a controlled shutdown's /controller lookup re-arms the
#: broker's watch in Kafka (`ModelAlignment.watches_armed_only_where_model_arms`), two steps in.
RF1 = ModelConfig.from_mapping(dict(brokers=2, topics=1, partitions=2, replication_factor=1, max_broker_crashes=1,
                                    max_session_expiries=1, max_controlled_shutdowns=1, max_reassignments=1))

EVERYTHING = ModelConfig.from_mapping(dict(
    brokers=3, topics=2, partitions=2, replication_factor=2, initial_topics=1, max_broker_crashes=2,
    max_session_expiries=2, max_leader_isr_shrinks=2, max_controlled_shutdowns=2, max_preferred_elections=2,
    max_reassignments=2, max_topic_deletions=2, max_topic_creations=2, max_auto_rebalances=2,
    max_controller_moves=2, event_queue_capacity=8))


# ---- healthy configs run clean (the CI profile) ------------------------------------------------


class TestTinyLockStep(machine_for(load_preset("tiny")).TestCase):
    settings = settings.get_profile(CI_PROFILE)


class TestDefaultLockStep(machine_for(load_preset("default")).TestCase):
    settings = settings.get_profile(CI_PROFILE)


class TestEveryFeatureLockStep(machine_for(EVERYTHING).TestCase):
    settings = settings(settings.get_profile(CI_PROFILE), max_examples=15)


def test_a_seed_means_one_run():
    first, again = (fuzz(load_preset("tiny"), examples=20, steps=30, seed=7) for _ in range(2))
    assert first.ok and again.ok
    assert (first.stats.examples, first.stats.steps) == (again.stats.examples, again.stats.steps)
    assert first.stats.steps > 100  # it did walk


# ---- every variant is found, no shorter than the explorer's shortest ----------------------------


@pytest.fixture(scope="module")
def explorer_shortest():
    cache: dict[str, int] = {}

    def shortest(variant: str) -> int:
        if variant not in cache:
            v = VARIANTS[variant]
            result = explore(KafkaModel(load_preset(v.preset)), properties=[v.breaks])
            assert [x.name for x in result.violations] == [v.breaks]
            cache[variant] = result.violations[0].trace_length
        return cache[variant]

    return shortest


#: Per variant, from seed 0: (example of the first failing walk, its steps, the shrunk trace's steps).
FIRST_FAILING_WALK = {"V1": (27, 16, 8), "V2": (291, 21, 16), "V3": (284, 13, 7), "V4": (3, 16, 10),
                      "V5": (3, 9, 7), "V6": (9, 9, 4), "V7": (115, 21, 16), "V8": (1, 5, 5), "V9": (3, 9, 9)}


@pytest.mark.parametrize("variant", sorted(v for v in VARIANTS if VARIANTS[v].impl))  # lock-step needs impl support
def test_the_fuzzer_finds_each_variant_from_a_fixed_seed(variant, explorer_shortest, fuzz_vs_explorer, tmp_path):
    v = VARIANTS[variant]
    cfg = load_preset(v.preset)
    # The bounds `kcm fuzz --variant V` runs with when none are given: the command finds it too.
    assert default_bounds(cfg) == (VARIANT_EXAMPLES, VARIANT_STEPS)
    result = fuzz(cfg, examples=VARIANT_EXAMPLES, steps=VARIANT_STEPS, seed=0)
    failure = result.failure
    assert failure is not None, f"{variant}: no failure in {result.stats}"
    assert (failure.prop, failure.kind) == (v.breaks, _kind_of(v.breaks, cfg))
    # Seed 0, derandomized, no example database: the first failing walk is fixed, and pinned here
    # as docs/checking.md tabulates it (example, its steps, the shrunk length).
    assert (result.stats.first_example, result.stats.first, failure.length) == FIRST_FAILING_WALK[variant]
    shortest = explorer_shortest(variant)
    fuzz_vs_explorer[variant] = (v.breaks, failure.length, shortest, result.stats.first,
                                 result.stats.first_example, result.stats.examples)
    assert shortest <= failure.length <= VARIANT_STEPS
    # The program Hypothesis printed takes exactly the failing steps, and the trace replays.
    assert result.program[0] == "state = KafkaLockStep()" and result.program[-1] == "state.teardown()"
    assert len(result.program) == failure.length + 2
    paths = write_failure(result, tmp_path, preset=v.preset)
    actions, _ = replay_itf(paths["itf"])
    assert actions == [a for a, _ in failure.trace[1:]]
    assert main(["trace", "show", str(paths["itf"])]) == 0


def _kind_of(name: str, cfg: ModelConfig) -> str:
    return next(p.kind for p in KafkaModel(cfg).properties() if p.name == name)


# ---- disagreements and crashes of the implementation are found ---------------------------------


def test_a_kafka_behaviour_the_model_lacks_is_reported_as_a_refinement_failure(tmp_path):
    switch = "watches_armed_only_where_model_arms"
    result = fuzz(RF1, examples=100, steps=20, seed=0, alignment=ModelAlignment.model().only(switch, False))
    failure = result.failure
    assert failure is not None and (failure.prop, failure.kind) == (REFINEMENT, "refinement")
    assert [line.split(":")[0] for line in failure.details] == ["zk.watches"]
    paths = write_failure(result, tmp_path, preset="rf1")
    step, fields = replay_lockstep(paths["itf"])
    assert (step, [line.split(":")[0] for line in fields]) == (failure.length, ["zk.watches"])
    # The replay script written beside it does the same (it runs under python or pytest).
    assert runpy.run_path(str(paths["replay"]))["test_replay"]() == fields
    assert json.loads(paths["itf"].read_text())["#meta"]["config"]["alignment_off"] == [switch]
    # With the model's alignment the same config runs clean.
    assert fuzz(RF1, examples=30, steps=20, seed=0).ok


def test_an_implementation_crash_is_a_refinement_failure(monkeypatch):
    apply = StepCluster.apply

    def crash_on_shutdown_requests(self, action):
        if type(action).__name__ == "BrokerRequestControlledShutdown":
            raise RuntimeError("boom")
        apply(self, action)

    monkeypatch.setattr(StepCluster, "apply", crash_on_shutdown_requests)
    failure = fuzz(RF1, examples=100, steps=20, seed=0).failure
    assert failure is not None and failure.kind == "refinement"
    assert failure.details[0] == "the implementation raised RuntimeError: boom"
    assert type(failure.trace[-1][0]).__name__ == "BrokerRequestControlledShutdown"


def test_the_machine_rejects_an_unknown_invariant():
    with pytest.raises(ValueError, match="unknown invariant 'NoSuchThing'"):
        machine_for(load_preset("tiny"), invariants=["NoSuchThing"])


def test_a_failure_lists_its_steps_and_fields():
    failure = Failure("X", "refinement", [(None, 0), ("a1", 1), ("a2", 2)], ["zk.watches: model [] != impl [1]"])
    assert failure.length == 2
    assert str(failure).splitlines() == ["the implementation differs from the model after 2 steps:",
                                         "  1. 'a1'", "  2. 'a2'", "  zk.watches: model [] != impl [1]"]


# ---- kcm fuzz ----------------------------------------------------------------------------------


def test_kcm_fuzz_runs_a_healthy_preset_clean(capsys, tmp_path):
    assert main(["fuzz", "--preset", "tiny", "--examples", "10", "--steps", "20", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "checks every invariant and the implementation · seed 0 · 10 examples × 20 steps" in out
    assert "No failure: 10 examples" in out


def test_kcm_fuzz_runs_the_default_preset_clean_with_its_default_bounds(capsys, tmp_path):
    assert default_bounds(load_preset("default")) == (DEFAULT_EXAMPLES, DEFAULT_STEPS)
    assert main(["fuzz", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert (f"preset default · checks every invariant and the implementation · seed 0 · {DEFAULT_EXAMPLES} examples"
            in out)
    # Hypothesis may run a few examples beyond the bound (its replay phase), never fewer.
    ran = re.search(r"No failure: ([\d,]+) examples", out)
    assert ran and DEFAULT_EXAMPLES <= int(ran.group(1).replace(",", "")) <= DEFAULT_EXAMPLES + 5, out


def test_kcm_fuzz_with_a_variant_uses_its_preset_and_writes_the_trace(tmp_path, capsys):
    assert main(["fuzz", "--variant", "KAFKA-7482", "--out", str(tmp_path), "--shortest"]) == 1  # V8, by its JIRA key
    out = capsys.readouterr().out
    assert (f"preset v8 · variant V8 · checks DeposedLeaderNotified and the implementation · seed 0 · "
            f"{VARIANT_EXAMPLES} examples × {VARIANT_STEPS} steps") in out
    assert "Failure: transition invariant DeposedLeaderNotified is violated after 5 steps, shrunk by Hypothesis" in out
    assert "Shrunk by Hypothesis: 5 steps; the explorer's shortest: 5 steps" in out
    assert main(["trace", "show", str(tmp_path / "fuzz_DeposedLeaderNotified.itf.json")]) == 0
    assert "violates 'DeposedLeaderNotified'" in capsys.readouterr().out
    assert "KafkaLockStep = machine_for(" in out and "state.take(choice=" in out
    assert (tmp_path / "fuzz_DeposedLeaderNotified.itf.json").is_file()
    program = (tmp_path / "fuzz_DeposedLeaderNotified_program.py").read_text()
    with pytest.raises(Failure, match="DeposedLeaderNotified"):  # the printed program runs, and fails
        exec(compile(program, "program.py", "exec"), {})


def test_kcm_fuzz_as_kafka_reports_a_remaining_disagreement(tmp_path, capsys):
    toml = tmp_path / "rf1.toml"
    toml.write_text("".join(f"{k} = {v}\n" for k, v in dict(brokers=2, topics=1, partitions=2, replication_factor=1,
                                                           max_broker_crashes=1, max_session_expiries=1,
                                                           max_controlled_shutdowns=1).items()))
    assert main(["fuzz", "--config", str(toml), "--as-kafka", "--steps", "20", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "(as Kafka 2.6)" in out and "Failure: the implementation differs from the model" in out
    assert "zk.watches: model" in out


@pytest.mark.parametrize("args, message", [
    (["--variant", "V99"], "unknown variant 'V99'"),
    (["--preset", "nope"], "unknown preset 'nope'"),
    (["--examples", "0"], "Invalid value for '--examples'"),
    (["--preset", "tiny", "--config", "x.toml"], "not both"),
    (["--out", "README.md/sub"], "is not a directory"),
])
def test_kcm_fuzz_rejects_bad_input_in_one_line(args, message, capsys):
    assert main(["fuzz", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("kcm: error: ") and message in captured.err
    assert captured.err.count("\n") == 1


def test_overlapping_runs_are_walked_from_the_settled_cluster(tmp_path) -> None:
    """With overlapping runs, the first draw picks the run; the implementation is brought to the
    settled cluster by the same healing actions. V6 with no crash in the cold-start run breaks
    only in the overlapping run: found, shrunk to the explorer's shortest (3 steps from the
    settled cluster), and the ITF file names initial state 1 and replays."""
    cfg = ModelConfig.from_mapping({"variant": "V6", "brokers": 2, "replication_factor": 1, "max_broker_crashes": 0,
                                    "max_session_expiries": 0, "overlapping": [["broker_crash"]]})
    result = fuzz(cfg, examples=200, steps=25, seed=0)
    assert result.failure is not None and result.failure.prop == "IsrNonEmpty"
    assert result.failure.length == 3
    assert result.program[1] == "state.start_run(run=1)"
    explorer = explore(KafkaModel(cfg), properties=["IsrNonEmpty"])
    assert explorer.violations[0].trace_length == 3
    paths = write_failure(result, tmp_path, preset="v6-overlapping")
    assert json.loads(paths["itf"].read_text())["#meta"]["initial_index"] == 1
    replay_itf(paths["itf"])


def test_the_implementation_settles_where_each_overlapping_run_starts() -> None:
    cfg = load_preset("default")
    machine = machine_for(cfg)
    starts = KafkaModel(cfg).init_states()
    for run in (1, 2):
        m = machine()
        try:
            m.start_run(run)  # compares the implementation with the settled state; raises if they differ
            assert m.state == starts[run] and m.trace == [(None, starts[run])]
            for choice in (0, 1, 0, 0, 2):
                m.take(choice)
        finally:
            m.teardown()


def test_the_default_preset_fuzzes_clean_with_its_overlapping_runs() -> None:
    result = fuzz(load_preset("default"), examples=40, steps=40, seed=3)
    assert result.ok, result.failure and result.failure.details


def test_a_python_error_inside_a_controller_handler_fails_the_fuzz_run(monkeypatch):
    """A TypeError in an event handler is a bug of the implementation: the controller no longer
    logs and drops it as it does Kafka's own errors (`kcm.impl.kafka_exception`), so the fuzzer
    reports it."""
    from kcm.impl import controller_events as ev
    from kcm.impl.kafka_controller import KafkaController

    def broken(self, event):
        raise TypeError("a bug in the handler")

    monkeypatch.setitem(KafkaController._handlers, ev.BrokerChange, broken)
    failure = fuzz(RF1, examples=100, steps=20, seed=0).failure
    assert failure is not None and failure.kind == "refinement"
    assert failure.details[0] == "the implementation raised TypeError: a bug in the handler"


# ---- known Kafka 2.6 behaviours: excused by cause ----------------------------------------------

#: tiny with one lost reply: a lost reply to the partition-state create is Findings 7, which breaks
#: CacheMatchesZk and the properties around the stranded partition.
LOST_REPLY = ModelConfig.from_mapping({**config_fields(load_preset("tiny")), "max_lost_acks": 1})


def test_a_findings_violation_is_recorded_as_known_and_fails_nothing(tmp_path):
    result = fuzz(LOST_REPLY, examples=60, steps=20, seed=0)
    assert result.ok, result.failure
    # Walks of seed 0 meet two of its properties, each at the explorer's shortest length.
    assert {name: len(trace) - 1 for name, trace in result.known.items()} == {"CacheMatchesZk": 6,
                                                                             "BrokersFollowTheLeader": 6}
    assert set(result.known_reasons().values()) == {str(LOST_CREATE_REPLY)}
    written = write_known(result, tmp_path, preset="tiny-lost-reply")
    assert sorted(written) == sorted(result.known)
    for name, path in written.items():
        # Each file replays through the model to the violation its Finding excused, at the walk's length.
        actions, _ = replay_itf(path)
        assert len(actions) == len(result.known[name]) - 1, name

def test_a_violation_its_finding_does_not_match_fails_the_walk(monkeypatch):
    """The same walks, with Findings 7's matcher rejecting every violation: the first one fails."""
    listed = KafkaModel.known_violations

    def rejecting(self):
        return {name: KnownViolation(k.reason, lambda s, a, t, trace: False) for name, k in listed(self).items()}

    monkeypatch.setattr(KafkaModel, "known_violations", rejecting)
    result = fuzz(LOST_REPLY, examples=60, steps=20, seed=0)
    assert result.failure is not None and result.failure.prop in {"CacheMatchesZk", "OfflineReplicaLeavesIsr",
                                                                  "BrokersFollowTheLeader"}
    assert not result.known


def test_kcm_fuzz_reports_a_findings_violation_as_known(tmp_path, capsys):
    config = tmp_path / "lost-reply.toml"
    config.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in config_fields(LOST_REPLY).items()
                              if k not in ("overlapping", "description")))
    out = tmp_path / "out"
    assert main(["fuzz", "--config", str(config), "--examples", "60", "--steps", "20", "--out", str(out)]) == 0
    doc = json.loads((out / "report.json").read_text())
    known = {o["name"]: o for o in doc["outcomes"] if o["status"] == "known"}
    assert {n: o["steps"] for n, o in known.items()} == {"CacheMatchesZk": 6, "BrokersFollowTheLeader": 6}
    assert all(o["finding"] == str(LOST_CREATE_REPLY) for o in known.values())
    actions, _ = replay_itf(known["CacheMatchesZk"]["trace_file"])
    assert len(actions) == 6
    assert doc["verdict"] == "pass"
