"""Random simulation on Spark: the violation of the smallest run index with a trace that replays
and reproduces, coverage summed over executors, and results independent of the partitioning."""

from __future__ import annotations

import pytest
from kcm.checker.engine.replay import replay_trace, reproduces
from kcm.checker.engine.traces import write_counterexample
from kcm.spark_explore.simulate import SimulationSummary, SimulationTask, simulate_spark, walk
from kcm.spark_explore.spec import ModelSpec

from kcm.config import load_preset

GRID_BUG = ModelSpec.of("tests.checker.toys:grid", 4, bugs=((3, 2),), reset=False, terminal=True)


def local_walks(spec: ModelSpec, runs: int, depth: int, seed: int):
    """The same walks, one after the other in this process: (first violating run, summary)."""
    model = spec.build()
    task = SimulationTask(spec, depth, seed, None, True, True)
    summary = SimulationSummary()
    first = None
    for run in range(runs):
        if walk(model, task, run, summary).violation is not None and first is None:
            first = run
    return first, summary


def test_first_violation_is_the_smallest_run_and_its_trace_reproduces(spark, tmp_path):
    runs, depth, seed = 60, 12, 6
    result = simulate_spark(spark, GRID_BUG, runs, depth, seed, partitions=5)
    expected_run, _ = local_walks(GRID_BUG, runs, depth, seed)
    assert expected_run is not None and expected_run > 0  # not trivially run 0
    assert result.violation_run == expected_run
    violation = result.violation
    assert (violation.name, violation.kind, violation.trace_length) == ("not_3_2", "safety", 5)
    model = GRID_BUG.build()
    states = replay_trace(model, violation.trace)
    actions = [a for a, _ in violation.trace[1:]]
    assert reproduces(model, violation.name, violation.kind, states, actions)
    files = write_counterexample(model, violation.trace, tmp_path, invariant=violation.name,
                                 kind=violation.kind)
    assert files["itf"].exists()


def test_coverage_is_summed_across_executors(spark):
    spec = ModelSpec.kafka(load_preset("tiny"))
    runs, depth, seed = 24, 25, 3
    result = simulate_spark(spark, spec, runs, depth, seed, partitions=4)
    _, local = local_walks(spec, runs, depth, seed)
    taken = {a.name: a.new_states for a in result.coverage.actions}
    enabled = {a.name: a.evaluations for a in result.coverage.actions}
    assert taken == {k: v for k, v in local.taken.items()} and enabled == local.enabled
    assert set(result.coverage.edges_taken) == local.edges and local.edges
    # Every walk checks its initial state and one state per step.
    assert result.states_checked == local.states == runs + sum(taken.values())
    assert result.coverage.edges_total > 0


def test_results_do_not_depend_on_the_partitioning(spark):
    one = simulate_spark(spark, GRID_BUG, 30, 12, 11, partitions=1)
    three = simulate_spark(spark, GRID_BUG, 30, 12, 11, partitions=3)
    assert one.violation_run == three.violation_run
    assert one.violation == three.violation
    assert one.coverage == three.coverage and one.states_checked == three.states_checked
    assert {n: g.trace for n, g in one.goals.items()} == {n: g.trace for n, g in three.goals.items()}


def test_goals_and_deadlocks_in_walks(spark):
    two_phase = ModelSpec.of("tests.checker.toys:two_phase", 3)
    result = simulate_spark(spark, two_phase, 40, 20, 5, partitions=2)
    assert result.violation is None
    assert result.goals["abort agreement"].met
    witness = result.goals["abort agreement"].trace
    replay_trace(two_phase.build(), witness)
    deadlock = simulate_spark(spark, ModelSpec.of("tests.checker.toys:Philosophers", 3), 20, 50, 1)
    assert deadlock.violation is not None and deadlock.violation.kind == "deadlock"
    assert deadlock.violation.trace[-1][1] == (1, 1, 1)
    line = deadlock.summary_lines()[0]
    assert line.startswith("Progress: ") and "20 traces generated" in line


def test_unknown_property_is_refused(spark):
    from kcm.checker.engine.errors import UsageError

    with pytest.raises(UsageError, match="unknown property"):
        simulate_spark(spark, GRID_BUG, 2, 2, 0, properties=["nope"])
