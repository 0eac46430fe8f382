"""The sequential explorer: level-synchronous breadth-first search over any `Model`.

Algorithm. The frontier holds the states at BFS distance `d`; expanding all of them (in discovery
order) produces the frontier at `d + 1`. Because a whole level is expanded before the next one,
the first time a state is found it is found along a shortest path, so every trace the explorer
rebuilds is a shortest one for its property (TLC's multi-worker BFS does not guarantee this: its
workers share one queue, so a state may first be found along a longer path). When the run stops
at the first violation and that violation is one step longer than the level being expanded, the
rest of the level is still scanned for a deadlock (cheaply, with `enabled_actions` only): a
deadlock there would be one step shorter, and the reported counterexample is then the shortest
over all properties.

Visited set and traces. States are identified by a 128-bit `model.fingerprint` (of
`model.representative(state)` when symmetry is on); the visited set is a dict from fingerprint to
a parent pointer `(parent fingerprint, index of the action in model.successors(parent))`, with
`(None, i)` for the i-th initial state. No state is stored for a visited fingerprint: a trace is
rebuilt by replaying the indices from the initial state through `successors`, which the model
contract makes deterministic. With symmetry the search continues from the state it generated,
not the canonical one (as stateright does): the frontier's states, and hence the replayed traces,
are real executions. A replay that does not land on the expected fingerprint means the model is
not deterministic and is reported as such.

Properties. Every `Always` on every new state (initial states included); every `AlwaysStep` and
`Sometimes` on every generated edge, edges to visited states included (a bad step can lead back
to a known state). Initial states count as the edge `(init, None, init)` for goals. A state with
no successor is a deadlock unless `model.is_terminal` says it is a legal end (TLC: on by default,
`-deadlock` disables it) or `model.pruned` says a bound of the model cut its healing steps (a state
constraint stopped the search there, not the system: counted as `Stats.cut`, asked of such states
only, so it costs nothing elsewhere); "deadlock" is a property name like the others for the `properties`
filter. By default the run stops at the first violation; with `stop_on_violation=False` (TLC
`-continue`) it records one violation per property and keeps going.

Known violations. A property the model says the modelled system itself breaks
(`Model.known_violations`) is still checked everywhere, and each of its violations is classified
as it is found: one the property's `KnownViolation.matches` accepts is the known behaviour (the
first, hence shortest, is recorded; the run neither stops nor drops the property), any other is a
violation like any property's. So the shortest violation of a property may be a known one and a
longer one still fail the run. Matchers read the violating step, and the trace only on demand.

Cost. The inner loop does, per edge: one fingerprint, one dict lookup, two counter increments and
the property calls; per new state, the `Always` calls and one append. Only the transition
invariants that judge the action's kind are called (`AlwaysStep.judges`; a tuple per action type,
built at its first edge): most of the Kafka model's judge controller events only (a minority of
its edges), four of them request deliveries. Everything else (names, traces, coverage
assembly) happens at violations or at the end. Per-action counters are keyed by
the action's type when the model keeps the default `action_name` (no call per edge), and table
edges are only asked for when the model overrides `edges_taken`.

Graph. With `keep_graph` the explorer also records the whole graph it explores in compact arrays
(`kcm.checker.engine.graph.ExploredGraph`, returned as `result.extra["graph"]`), for the liveness checker:
one node per distinct state in discovery order, one edge per generated edge, each labelled with
its action's id and whether it heals (`Model.is_healing`), and each node whether it is quiescent
(`Model.is_quiescent`). Node ids need one state per node, so it refuses symmetry reduction, as TLC
warns against symmetry with liveness: a cycle of the quotient graph need not be a cycle of the
real one, and weak fairness is per action instance, which a renaming of ids does not keep.

Partial-order reduction (`por`, off by default): each state expands an ample set of its enabled
actions (`kcm.checker.engine.por`); parent pointers keep the index in the full `successors` list, so
traces replay as before, but they are no longer guaranteed shortest.

Interruption (KeyboardInterrupt) and `max_depth` end the run with the verdict "incomplete" and
everything computed so far.

Runs. `initial` explores from some of the initial states only, `depth_bound` stops the search
below a violation found elsewhere, and `should_stop` interrupts it from outside: what
`kcm.checker.engine.runs` uses to explore a model's disjoint runs (`Model.run_of`) in several processes
and merge them into this explorer's result.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from kcm.checker.engine.collector import paused_collector
from kcm.checker.engine.contract import Always, AlwaysStep, Model, Sometimes
from kcm.checker.engine.coverage import CoverageCounters, build_coverage
from kcm.checker.engine.errors import UsageError
from kcm.checker.engine.graph import NO_PARENT, ExploredGraph
from kcm.checker.engine.result import (
    DEADLOCK,
    INCOMPLETE,
    PASS,
    VIOLATION,
    CheckResult,
    Goal,
    Trace,
    Violation,
)
from kcm.checker.engine.stats import Outdegree, Progress, ProgressClock, Stats


@dataclass(frozen=True)
class CheckOptions:
    """How to explore; every option has TLC's default where TLC has one."""

    #: Reduce by `model.representative` when the model has a symmetry.
    symmetry: bool = True
    #: Report states with no enabled action (and not `is_terminal`) as deadlocks (TLC `-deadlock` off).
    check_deadlock: bool = True
    #: Stop at the first violation; False records one per property and goes on (TLC `-continue`).
    stop_on_violation: bool = True
    #: Expand states at most this many steps from an initial state; a run cut by it is incomplete.
    max_depth: int | None = None
    #: Check only these property names ("deadlock" included); None checks all.
    properties: Collection[str] | None = None
    #: Collect per-table-edge coverage (`model.edges_taken`).
    table_coverage: bool = True
    #: A complete run that leaves a `Sometimes` goal unmet is a violation (the model is vacuous).
    goals_required: bool = True
    #: Called with a `Progress` at the initial states, after each level, every
    #: `progress_interval` seconds within a level, and at the end.
    progress: Callable[[Progress], None] | None = None
    progress_interval: float = 5.0
    #: Record the explored graph (`result.extra["graph"]`) for the liveness checker; needs symmetry off.
    keep_graph: bool = False
    #: Partial-order reduction (`kcm.checker.engine.por`): expand ample sets only. Traces may be longer
    #: than the shortest; needs `Model.por_info()`; not with `keep_graph`.
    por: bool = False
    #: Explore from these initial states only (indices into `model.init_states()`, which parent
    #: pointers and traces keep): one run of the model's (`Model.run_of`; `kcm.checker.engine.runs`).
    initial: Collection[int] | None = None
    #: Asked before each level: the length of a violation another run has found, or None. The
    #: search stops with the reason "bounded" before expanding a level deeper than it (nothing
    #: found there could be shorter); it still expands the level at that depth, whose deadlocks
    #: would tie (`kcm.checker.engine.runs`).
    depth_bound: Callable[[], int | None] | None = None
    #: Asked before each level and every 64 states: True ends the run as an interruption
    #: (KeyboardInterrupt) does, for a caller that cannot raise one in it (`kcm.checker.engine.runs`).
    should_stop: Callable[[], bool] | None = None


#: How many rebuilt traces (prefixes included) `_trace_to` keeps: enough for the prefixes a level's
#: violations share, bounded since a trace holds a state per step.
TRACES_KEPT = 1 << 12


class _Stop(Exception):
    """Raised in the hot loop at the first violation when stopping; carries the trace length."""

    def __init__(self, length: int) -> None:
        self.length = length


def explore(model: Model, options: CheckOptions | None = None, **overrides: Any) -> CheckResult:
    """Explore `model` breadth-first and check its properties; see the module docstring.

    `overrides` replace fields of `options`: `explore(m, max_depth=5, check_deadlock=False)`.
    Raises `UsageError` for an unknown name in `properties`.
    """
    opts = options or CheckOptions()
    if overrides:
        opts = replace(opts, **overrides)
    return _Explorer(model, opts).run()


def select_properties(model: Model, names: Collection[str] | None) -> tuple[list, bool]:
    """The model's properties filtered to `names`, and whether "deadlock" is selected."""
    props = list(model.properties())
    if names is None:
        return props, True
    known = [p.name for p in props] + [DEADLOCK]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown property '{unknown[0]}'; the model has: {', '.join(known)}")
    wanted = set(names)
    return [p for p in props if p.name in wanted], DEADLOCK in wanted


def verdict_of(violations: list[Violation], reason: str, goals: dict[str, Goal],
               goals_required: bool) -> tuple[str, list[Violation]]:
    """The verdict and its violations: those found, else INCOMPLETE if stopped early, else unmet goals."""
    if violations:
        return VIOLATION, violations
    if reason:
        return INCOMPLETE, violations
    unmet = [g for g in goals.values() if not g.met] if goals_required else []
    return (VIOLATION if unmet else PASS), [Violation(g.name, "sometimes", None) for g in unmet]


class _Explorer:
    """One run: the visited set, the counters and the violations found so far."""

    def __init__(self, model: Model, opts: CheckOptions) -> None:
        self.model, self.opts = model, opts
        props, deadlock = select_properties(model, opts.properties)
        self.always = tuple(p for p in props if isinstance(p, Always))
        self.step_props = tuple(p for p in props if isinstance(p, AlwaysStep))
        #: The step properties that judge each action type (`AlwaysStep.judges`), filled lazily
        #: and emptied when a property leaves `step_props`.
        self.step_props_of: dict[type, tuple] = {}
        self.goals = tuple(p for p in props if isinstance(p, Sometimes))
        self.all_goals = self.goals
        self.check_deadlock = opts.check_deadlock and deadlock
        self.checked = tuple(p.name for p in props) + ((DEADLOCK,) if self.check_deadlock else ())
        self.symmetric = opts.symmetry and model.has_symmetry
        self.stop = opts.stop_on_violation
        self.parents: dict[bytes, tuple[bytes | None, int]] = {}
        self.inits: list = []
        self.violations: list[Violation] = []
        #: Properties the model lists as known behaviour of the system, and their violations found.
        self.known = dict(model.known_violations())
        self.known_found: list[Violation] = []
        self.known_names: set[str] = set()
        #: Traces rebuilt so far, by fingerprint, each prefix included (`_trace_to`), at most
        #: `TRACES_KEPT`: the violations of a property a matcher classifies by its trace share
        #: most of their prefixes, so each one costs a few steps of replay, not a whole trace.
        self.traces: dict[bytes, Trace] = {}
        self.witnesses: dict[str, Trace] = {}
        self.counters = CoverageCounters()
        self.outdegrees: dict[int, int] = {}
        self.frontier_sizes: list[int] = []
        self.generated = 0
        self.queue_left = 0
        self.cut = 0  # states with no successor because a bound cut their healing steps
        self.reason = ""
        self.clock = ProgressClock()
        self.stopped = False
        self.graph: ExploredGraph | None = None
        self.ids: dict[bytes, int] = {}
        if opts.keep_graph:
            if self.symmetric:
                raise UsageError("keeping the explored graph (liveness) needs symmetry off")
            self.graph = ExploredGraph()
        self.por = None
        if opts.por:
            if opts.keep_graph:
                raise UsageError("partial-order reduction keeps no liveness graph (its cycles are not the model's)")
            if model.por_info() is None:
                raise UsageError(f"model '{model.name}' declares no independence for partial-order reduction")
            from kcm.checker.engine.por import Reducer
            self.por = Reducer(model, props)

    # ---- the search ---------------------------------------------------------------------------

    def run(self) -> CheckResult:
        try:
            with paused_collector():  # the search makes no reference cycles (checker/engine/collector.py)
                self._search()
        except _Stop:
            self.stopped = True
        except KeyboardInterrupt:
            self.reason = "interrupted"
        return self._result()

    def _fingerprint_fn(self) -> Callable[[Any], bytes]:
        fingerprint = self.model.fingerprint
        if not self.symmetric:
            return fingerprint
        representative = self.model.representative
        return lambda state: fingerprint(representative(state))

    # One function on purpose: the explorer's inner loop, with its lookups hoisted into locals and
    # its calls inlined, is where the run's time goes; split up, every edge would pay for the calls.
    def _search(self) -> None:  # noqa: C901
        model, parents, counters = self.model, self.parents, self.counters
        fp_of = self._fingerprint_fn()
        # Inlined in the edge loop below (one call less per edge): the fingerprint of the
        # representative when reducing by symmetry, of the state itself otherwise.
        fingerprint = model.fingerprint
        representative = model.representative if self.symmetric else None
        successors = model.successors
        # Per-action counters keyed by type unless the model names actions itself.
        action_name = None if type(model).action_name is Model.action_name else model.action_name
        edges_taken = (model.edges_taken if self.opts.table_coverage
                       and type(model).edges_taken is not Model.edges_taken else None)
        evals, news, edges = counters.evaluations, counters.new_states, counters.edges
        outdegrees = self.outdegrees
        progress, interval = self.opts.progress, self.opts.progress_interval
        frontier: list = []
        next_frontier: list = []
        por = self.por
        idx = None  # with POR: the full successor index of each edge explored
        pos = -1  # the index of the state being expanded; -1 between levels
        graph, ids = self.graph, self.ids
        if graph is not None:
            add_node, add_edge, begin = graph.add_node, graph.add_edge, graph.begin
            is_healing, is_quiescent = model.is_healing, model.is_quiescent
            # Asked only of a model that can prune (`Model.pruned`), right after its successors.
            pruned = None if type(model).pruned is Model.pruned else model.pruned
            is_settled = None if type(model).is_settled is Model.is_settled else model.is_settled

        try:
            # Level 0: the initial states.
            self.inits = list(model.init_states())
            initial = self.opts.initial
            for index, state in enumerate(self.inits):
                if initial is not None and index not in initial:
                    continue
                self.generated += 1
                f = fp_of(state)
                if f in parents:
                    continue
                parents[f] = (None, index)
                if graph is not None:
                    ids[f] = add_node(NO_PARENT, index, is_quiescent(state),
                                      None if is_settled is None else is_settled(state))
                frontier.append((state, f))
                for p in self.always:
                    if not p.holds(state):
                        self._violated(p.name, p.kind, partial(self._trace_to, f), 0, state, None, state)
                for g in self.goals:
                    if g.met(state, None, state):
                        self._goal_met(g, self._trace_to(f))
            self.frontier_sizes.append(len(frontier))
            self._report(progress, "init", 1, len(frontier))

            level = 0
            max_depth, depth_bound, should_stop = self.opts.max_depth, self.opts.depth_bound, self.opts.should_stop
            next_tick = self.clock.start + interval
            while frontier:
                if max_depth is not None and level >= max_depth:
                    self.reason = "max_depth"
                    break
                if should_stop is not None and should_stop():
                    raise KeyboardInterrupt
                if depth_bound is not None:
                    bound = depth_bound()
                    if bound is not None and level > bound:
                        self.reason = "bounded"
                        break
                next_frontier = []
                always, step_props_of, goals = self.always, self.step_props_of, self.goals
                try:
                    for pos, (s, f) in enumerate(frontier):
                        n = 0
                        if graph is not None:
                            sid = ids[f]
                            begin(sid)
                        if por is not None:
                            ample = por.expand(s, parents, fp_of, level)
                            idx = por.indices
                        for a, t in (successors(s) if por is None else ample):
                            tf = fingerprint(t if representative is None else representative(t))
                            kind = type(a)
                            k = kind if action_name is None else action_name(a)
                            evals[k] = evals.get(k, 0) + 1
                            step_props = step_props_of.get(kind)
                            if step_props is None:
                                step_props = self._step_props_judging(kind)
                            for p in step_props:
                                if not p.holds(s, a, t):
                                    self._violated(p.name, p.kind,
                                                   partial(self._trace_edge, f, n if idx is None else idx[n]),
                                                   level + 1, s, a, t)
                                    step_props_of = self.step_props_of
                            for g in goals:
                                if g.met(s, a, t):
                                    self._goal_met(g, self._trace_edge(f, n if idx is None else idx[n]))
                                    goals = self.goals
                            if edges_taken is not None:
                                taken = edges_taken(s, a, t)
                                if taken:
                                    edges.update(taken)
                            if tf not in parents:
                                parents[tf] = (f, n if idx is None else idx[n])
                                if graph is not None:
                                    ids[tf] = add_node(sid, n, is_quiescent(t),
                                                       None if is_settled is None else is_settled(t))
                                news[k] = news.get(k, 0) + 1
                                next_frontier.append((t, tf))
                                for p in always:
                                    if not p.holds(t):
                                        self._violated(p.name, p.kind, partial(self._trace_to, tf), level + 1,
                                                       s, a, t)
                                        always = self.always
                            if graph is not None:
                                add_edge(ids[tf], a, is_healing(s, a))
                            n += 1
                        self.generated += n
                        if graph is not None and pruned is not None and pruned(s):
                            graph.mark_pruned(sid)
                        outdegrees[n] = outdegrees.get(n, 0) + 1
                        if n == 0 and self.check_deadlock and not model.is_terminal(s):
                            if model.pruned(s):
                                self.cut += 1
                            else:
                                self._violated(DEADLOCK, DEADLOCK, partial(self._trace_to, f), level, s, None, s)
                        # Ask whether to stop and look at the clock every 64 states only.
                        if (pos & 63) == 0:
                            if should_stop is not None and should_stop():
                                raise KeyboardInterrupt
                            if progress is not None and self.clock.now() >= next_tick:
                                queue = len(frontier) - pos - 1 + len(next_frontier)
                                self._report(progress, "tick", level + 1, queue, pos + 1)
                                next_tick = self.clock.now() + interval
                except _Stop as stop:
                    if stop.length > level:
                        # Stopped inside the edge loop: count the edges of the state cut short.
                        self.generated += n + 1
                        if self.check_deadlock:
                            self._shorter_deadlock(frontier[pos + 1:], level)
                    raise
                frontier, next_frontier, pos = next_frontier, [], -1
                level += 1
                if frontier:
                    self.frontier_sizes.append(len(frontier))
                self._report(progress, "level", len(self.frontier_sizes), len(frontier))
        finally:
            # States found but not (fully) expanded: when cut in the middle of a level, the state
            # being expanded, the rest of the level and the next level found so far.
            self.queue_left = len(frontier) - max(pos, 0) + len(next_frontier)

    def _shorter_deadlock(self, rest: list, level: int) -> None:
        """After a violation one step longer than `level`, look for a deadlock in the rest of the
        level: it would be a shorter counterexample, and replaces the one found."""
        model = self.model
        for s, f in rest:
            if not model.enabled_actions(s) and not model.is_terminal(s) and not model.pruned(s):
                self.violations[-1:] = [Violation(DEADLOCK, DEADLOCK, self._trace_to(f))]
                return

    def _report(self, progress, phase: str, level: int, queue: int, expanded: int = 0) -> None:
        if progress is not None:
            progress(self.clock.snapshot(phase, level, self.generated, len(self.parents), queue,
                                         self.frontier_sizes, expanded))

    # ---- violations and goals ------------------------------------------------------------------

    def _violated(self, name: str, kind: str, trace: Callable[[], Trace], length: int,
                  state: Any, action: Any, next_state: Any) -> None:
        """A violation of `name` on the edge (state, action, next_state), its trace built on demand."""
        built: list[Trace] = []

        def lazy() -> Trace:   # built once, if at all
            if not built:
                built.append(trace())
            return built[0]

        known = self.known.get(name)
        if known is not None and known.matches(state, action, next_state, lazy):
            # Known behaviour of the modelled system (one the model lists): keep its first,
            # hence shortest, trace; it neither stops the run nor hides others, and the
            # property stays checked, since a later violation of it may be another one.
            if name not in self.known_names:
                self.known_names.add(name)
                self.known_found.append(Violation(name, kind, lazy()))
            return
        self.violations.append(Violation(name, kind, lazy()))
        if self.stop:
            raise _Stop(length)
        # -continue: one violation per property, so stop checking this one.
        if kind == DEADLOCK:
            self.check_deadlock = False
        self.always = tuple(p for p in self.always if p.name != name)
        self.step_props = tuple(p for p in self.step_props if p.name != name)
        self.step_props_of = {}

    def _step_props_judging(self, kind: type) -> tuple:
        """The step properties that may fail on a step of action type `kind`, in `step_props` order."""
        props = self.step_props_of[kind] = tuple(
            p for p in self.step_props if p.may_fail_on(kind))
        return props

    def _goal_met(self, goal: Sometimes, trace: Trace) -> None:
        self.witnesses[goal.name] = trace
        self.goals = tuple(g for g in self.goals if g.name != goal.name)

    # ---- traces --------------------------------------------------------------------------------

    def _trace_to(self, fp: bytes) -> Trace:
        """Replay the parent pointers from an initial state (or from the longest prefix rebuilt
        before, `traces`) to the state with fingerprint `fp`."""
        kept = self.traces
        if fp in kept:
            return kept[fp]
        path: list[tuple[bytes, int]] = []   # (fingerprint, successor index), up to a kept prefix or an init
        at = fp
        parent, index = self.parents[at]
        while parent is not None and parent not in kept:
            path.append((at, index))
            at = parent
            parent, index = self.parents[at]
        if parent is None:
            trace: Trace = ((None, self.inits[index]),)
        else:
            path.append((at, index))
            trace = kept[parent]
        state = trace[-1][1]
        for at, i in reversed(path):
            action, state = next(itertools.islice(self.model.successors(state), i, None))
            trace += ((action, state),)
            if len(kept) >= TRACES_KEPT:
                del kept[next(iter(kept))]   # the oldest
            kept[at] = trace
        if not path:   # `fp` is an initial state
            kept[fp] = trace
        if self._fingerprint_fn()(state) != fp:
            raise RuntimeError(
                f"model '{self.model.name}' is not deterministic: replaying the parent pointers "
                "did not reach the same state (successors order or step results differ between calls)"
            )
        return trace

    def _trace_edge(self, fp: bytes, index: int) -> Trace:
        """The trace to the state `fp`, extended by its `index`-th successor."""
        trace = self._trace_to(fp)
        step = next(itertools.islice(self.model.successors(trace[-1][1]), index, None))
        return trace + (step,)

    # ---- the result ----------------------------------------------------------------------------

    def _result(self) -> CheckResult:
        duration = self.clock.now() - self.clock.start
        model = self.model
        if type(model).action_name is Model.action_name:
            evals, news = self.counters.named(lambda k: k.__name__)
        else:
            evals, news = self.counters.named(lambda k: k)
        coverage = build_coverage(evals, news, model.action_names(), self.counters.edges,
                                  model.coverage_universe() if self.opts.table_coverage else ())
        goals = {g.name: Goal(g.name, g.name in self.witnesses, self.witnesses.get(g.name))
                 for g in self.all_goals}
        verdict, violations = verdict_of(list(self.violations), self.reason, goals, self.opts.goals_required)
        stats = Stats(
            generated=self.generated,
            distinct=len(self.parents),
            queue=self.queue_left,
            depth=len(self.frontier_sizes),
            frontier_sizes=tuple(self.frontier_sizes),
            outdegree=Outdegree.from_histogram(self.outdegrees),
            duration_s=duration,
            cut=self.cut,
        )
        self._report(self.opts.progress, "final", stats.depth, stats.queue)
        extra: dict[str, Any] = {}
        if self.graph is not None:
            self.graph.finish(complete=not self.stopped and not self.reason and self.queue_left == 0)
            extra["graph"] = self.graph
        if self.por is not None:
            extra["por"] = self.por.stats.as_dict()
        return CheckResult(
            model=model.name, verdict=verdict, violations=tuple(violations), goals=goals,
            stats=stats, coverage=coverage, symmetry=self.symmetric, checked=self.checked,
            reason=self.reason, extra=extra, known_violations=tuple(self.known_found),
            known_reasons={v.name: self.known[v.name].reason for v in self.known_found},
            known_as=model.known_as,
        )
