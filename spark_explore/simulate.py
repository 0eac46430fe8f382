"""Random simulation on Spark: `simulate_spark(spark, model_spec, runs, depth, seed)`.

TLC's advice for big models is "simulation first" (docs.tlapl.us, "Distributed TLC"): random
walks find deep bugs long before an exhaustive search ends. Here each run is one random walk of at
most `depth` steps, and runs are spread over Spark partitions; they share nothing, so the job is
one stage with no shuffle.

- Determinism. Run `r` draws from its own generator, `random.Random(f"kcm:{seed}:{r}")` (string
  seeds are hashed with SHA-512, the same in every process), and picks among `model.successors`
  in their fixed order. So a run's walk depends only on (model, seed, r, depth), not on the
  partition or executor it ran on, and the driver can replay it.
- Properties. Every state invariant on every state of the walk (the initial one included),
  every transition invariant and goal on every step; a state without successors that is not
  `is_terminal` is a deadlock. A walk stops at its first violation.
- What comes back. Per partition only counters: states checked, walk lengths, actions enabled
  and taken per kind, table edges taken, and per property the first (run, step) that violated
  it or met it. The driver keeps the violation of the smallest run index (ties: the earliest
  step, then property order), replays that one run to rebuild its trace, and does the same for
  each goal's earliest witness. Traces are `(action, state)` tuples as the explorers return, to be
  written with `kcm.checker.engine.traces.write_counterexample`.
- Coverage. A `kcm.checker.engine.coverage.Coverage` whose per-action pair is (times enabled, times
  taken) instead of the explorers' (evaluations, new distinct states): a simulation does not know
  which states are new. Table edges are the union over all executors.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from kcm.checker.engine.bfs import select_properties
from kcm.checker.engine.contract import Always, AlwaysStep, Model, Sometimes
from kcm.checker.engine.coverage import Coverage, build_coverage
from kcm.checker.engine.result import DEADLOCK, Goal, Trace, Violation
from kcm.spark_explore.spec import ModelSpec, load_model


@dataclass(frozen=True)
class SimulationTask:
    spec: ModelSpec
    depth: int
    seed: int
    properties: tuple[str, ...] | None
    check_deadlock: bool
    table_coverage: bool


@dataclass
class WalkOutcome:
    """One walk: its length, and the first violation (name, kind, step) if any."""

    length: int = 0
    violation: tuple[str, str, int] | None = None
    trace: list = field(default_factory=list)


@dataclass
class SimulationSummary:
    """One partition's runs, folded."""

    runs: int = 0
    states: int = 0
    length_sum: int = 0
    length_squares: int = 0
    enabled: dict[str, int] = field(default_factory=dict)
    taken: dict[str, int] = field(default_factory=dict)
    edges: set = field(default_factory=set)
    #: The first violation: (run, step, property order, name, kind).
    violation: tuple | None = None
    #: Goal name -> earliest (run, step) meeting it.
    goals: dict[str, tuple[int, int]] = field(default_factory=dict)


def rng_for(seed: int, run: int) -> random.Random:
    """Run `run`'s generator: the same in every process."""
    return random.Random(f"kcm:{seed}:{run}")


def _checks(model: Model, task: SimulationTask):
    props, deadlock = select_properties(model, task.properties)
    always = [p for p in props if isinstance(p, Always)]
    steps = [p for p in props if isinstance(p, AlwaysStep)]
    goals = [p for p in props if isinstance(p, Sometimes)]
    order = {p.name: i for i, p in enumerate(props)}
    order[DEADLOCK] = len(props)
    return always, steps, goals, deadlock and task.check_deadlock, order


def _first_failing(props: list, *args):
    """The first of `props` that does not hold on `args` (a state, or an edge), or None."""
    return next((p for p in props if not p.holds(*args)), None)


def _meet_goals(summary: SimulationSummary, goals: list, run: int, s, a, t, step: int) -> None:
    """Record the goals the edge `s -a-> t` meets that no walk of the summary met before."""
    for g in goals:
        if g.name not in summary.goals and g.met(s, a, t):
            summary.goals[g.name] = (run, step)


def _count_step(summary: SimulationSummary, model: Model, successors: list, s, a, t, edges_taken) -> None:
    """Count one step of a walk: the actions enabled in `s`, the one taken, the state, the table edges."""
    for b, _ in successors:
        kind = model.action_name(b)
        summary.enabled[kind] = summary.enabled.get(kind, 0) + 1
    kind = model.action_name(a)
    summary.taken[kind] = summary.taken.get(kind, 0) + 1
    summary.states += 1
    if edges_taken is not None:
        summary.edges.update(edges_taken(s, a, t))


def walk(model: Model, task: SimulationTask, run: int, summary: SimulationSummary | None = None,
         record: bool = False) -> WalkOutcome:
    """Random walk number `run`; counts into `summary` when given, keeps the trace when `record`."""
    always, steps, goals, deadlock, _ = _checks(model, task)
    edges_taken = model.edges_taken if task.table_coverage else None
    rng = rng_for(task.seed, run)
    out = WalkOutcome()
    inits = model.init_states()
    state = inits[rng.randrange(len(inits))]
    if record:
        out.trace.append((None, state))

    def met(s, a, t, step):
        if summary is not None:
            _meet_goals(summary, goals, run, s, a, t, step)

    def bad_state(t, step) -> bool:
        p = _first_failing(always, t)
        if p is not None:
            out.violation = (p.name, p.kind, step)
        return p is not None

    if summary is not None:
        summary.states += 1
    met(state, None, state, 0)
    if bad_state(state, 0):
        return out
    for step in range(1, task.depth + 1):
        successors = list(model.successors(state))
        if not successors:
            if deadlock and not model.is_terminal(state):
                out.violation = (DEADLOCK, DEADLOCK, step - 1)
            return out
        a, t = successors[rng.randrange(len(successors))]
        if summary is not None:
            _count_step(summary, model, successors, state, a, t, edges_taken)
        out.length = step
        if record:
            out.trace.append((a, t))
        failing = _first_failing(steps, state, a, t)
        if failing is not None:
            out.violation = (failing.name, failing.kind, step)
            return out
        met(state, a, t, step)
        state = t
        if bad_state(state, step):
            return out
    return out


def simulate_partition(task: SimulationTask, runs: Iterable[int]) -> Iterator[SimulationSummary]:
    """The runs of one partition, folded into one `SimulationSummary`."""
    model = load_model(task.spec)
    order = _checks(model, task)[4]
    summary = SimulationSummary()
    for run in runs:
        outcome = walk(model, task, run, summary)
        summary.runs += 1
        summary.length_sum += outcome.length
        summary.length_squares += outcome.length ** 2
        if outcome.violation is not None:
            name, kind, step = outcome.violation
            candidate = (run, step, order[name], name, kind)
            if summary.violation is None or candidate < summary.violation:
                summary.violation = candidate
    yield summary


@dataclass(frozen=True)
class SimulationResult:
    """What `simulate_spark` found; `violation` is None when no walk broke a property."""

    model: str
    runs: int
    depth: int
    seed: int
    states_checked: int
    length_mean: float
    length_variance: float
    violation: Violation | None
    violation_run: int | None
    goals: dict[str, Goal]
    coverage: Coverage
    duration_s: float

    def summary_lines(self) -> list[str]:
        """TLC's simulation line, then the violation or its absence, and the goals."""
        sd = math.sqrt(self.length_variance)
        lines = [f"Progress: {self.states_checked:,} states checked, {self.runs:,} traces generated "
                 f"(trace length: mean={self.length_mean:.0f}, var(x)={self.length_variance:.0f}, sd={sd:.0f})"]
        if self.violation is None:
            lines.append("No violation found by simulation.")
        else:
            lines.append(f"  {self.violation.kind} '{self.violation.name}' violated by run "
                         f"{self.violation_run}, after {self.violation.trace_length} steps")
        for g in self.goals.values():
            lines.append(f"  goal '{g.name}': " + (f"met in {g.trace_length} steps" if g.met else
                                                    "not reached (random walks prove no absence)"))
        return lines


def simulate_spark(spark: Any, model_spec: ModelSpec, runs: int, depth: int, seed: int = 0, *,
                   partitions: int | None = None, properties: Iterable[str] | None = None,
                   check_deadlock: bool = True, table_coverage: bool = True) -> SimulationResult:
    """`runs` random walks of at most `depth` steps of the model `model_spec` names, on Spark.

    `properties` limits the checks to those names ("deadlock" included), as the explorers do;
    `partitions` defaults to four per core of default parallelism.
    """
    started = time.monotonic()
    sc = getattr(spark, "sparkContext", spark)
    model = model_spec.build()
    task = SimulationTask(model_spec, depth, seed, None if properties is None else tuple(properties),
                          check_deadlock, table_coverage)
    all_goals = _checks(model, task)[2]  # also validates the property names
    slices = max(1, min(runs, partitions or 4 * sc.defaultParallelism))
    summaries = (sc.parallelize(range(runs), slices)
                 .mapPartitions(partial(simulate_partition, task))
                 .collect())
    total = SimulationSummary()
    for s in summaries:
        total.runs += s.runs
        total.states += s.states
        total.length_sum += s.length_sum
        total.length_squares += s.length_squares
        for name, count in s.enabled.items():
            total.enabled[name] = total.enabled.get(name, 0) + count
        for name, count in s.taken.items():
            total.taken[name] = total.taken.get(name, 0) + count
        total.edges |= s.edges
        if s.violation is not None and (total.violation is None or s.violation < total.violation):
            total.violation = s.violation
        for name, when in s.goals.items():
            if name not in total.goals or when < total.goals[name]:
                total.goals[name] = when

    violation = run = None
    if total.violation is not None:
        run, _, _, name, kind = total.violation
        violation = Violation(name, kind, _replay(model, task, run, total.violation[1]))
    goals = {g.name: Goal(g.name, g.name in total.goals,
                          _replay(model, task, *total.goals[g.name]) if g.name in total.goals else None)
             for g in all_goals}
    enabled = dict(sorted(total.enabled.items()))
    coverage = build_coverage(enabled, total.taken, model.action_names(), total.edges,
                              model.coverage_universe() if table_coverage else ())
    mean = total.length_sum / runs if runs else 0.0
    variance = total.length_squares / runs - mean ** 2 if runs else 0.0
    return SimulationResult(model.name, runs, depth, seed, total.states, mean, max(variance, 0.0),
                            violation, run, goals, coverage, time.monotonic() - started)


def _replay(model: Model, task: SimulationTask, run: int, step: int) -> Trace:
    """The first `step` steps of run `run`, replayed on the driver."""
    trace = walk(model, task, run, record=True).trace
    return tuple(trace[:step + 1])
