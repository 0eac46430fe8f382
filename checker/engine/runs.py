"""A model's disjoint runs, explored side by side on the machine's cores.

Some models start from initial states that never reach one another's states: `Model.run_of` reads
a value that no step changes. The Kafka model's cold start and each of its config's `overlapping`
runs (`Cluster.scenario`) are such runs; `default` has four, of 237,656, 21,971, 497,766 and 224,789
distinct states (982,182 in all). The visited set of all of them is the disjoint union of theirs,
so each run can be explored on its own, by the sequential explorer, in its own process, and what
they found merged into the `CheckResult` that one exploration of all of them gives:

- counts add up: distinct, generated and queued states, distinct states per level (level by level),
  the outdegree histogram, the coverage counters (per action, per table edge); with every run
  complete they are exactly the single explorer's (coverage lists action kinds in the model's
  declared order, not as first generated);
- a goal is met when some run meets it, with the single explorer's witness (the shortest; on a
  tie, the one from the earlier initial state), and a goal no run meets is judged on the union:
  unmet (a violation) only if every run completed;
- violations: when the search stops at the first, the first over the runs in the single explorer's
  order (`_order`: the shortest, then from the earlier initial state), which is the very one it
  reports, a shortest counterexample over all properties (each run's is the first of its own).
  To get there sooner, the length of the shortest found so far bounds the other runs
  (`CheckOptions.depth_bound`): they stop before a level deeper than it, so a violating run's
  counts depend on timing (as TLC's with several workers), its counterexample does not. With
  `stop_on_violation=False`, the first of each property. Known violations likewise: each run
  has already classified its own (`Model.known_violations`), so a run's violation its model's
  matcher did not excuse is among the violations, and only excused ones are merged here.

Workers. `jobs` processes, forked after the model has computed its initial states (the model, its
caches and the options are inherited; nothing is pickled on the way out). Each takes the next run
from a shared counter, in the order the initial states list them, until none is left, and sends
back progress snapshots and each run's result (traces hold real states, pickled) through one
queue. The parent prints one progress line for all: the sums of the runs' latest snapshots.

Interruption. Ctrl-C reaches every process of the terminal's group, SIGTERM (what a CI timeout
sends) perhaps the parent alone. No process raises KeyboardInterrupt for them, since it could land
anywhere: between receiving a result and keeping it, in an at-fork hook (where Python only prints
it), inside the result queue's lock (which then hangs the worker's exit). The parent records the
signal and sets a shared `stop` flag; a worker records its own; the explorer polls them every 64
states (`CheckOptions.should_stop`) and ends the run as an interruption ends the single explorer's
(verdict "incomplete", everything so far kept), and the worker takes no other run. A worker whose
parent died stops the same way. A second interruption of the parent kills the workers. The merged
result is "incomplete" ("interrupted") and keeps what every run found.

Not for the liveness check, which needs one graph of every state (`keep_graph`), nor for the
Spark explorer, which partitions all runs' states at once (`kcm.spark_explore`).
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import queue as queue_module
import signal
import threading
import time
import traceback
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from itertools import zip_longest
from operator import itemgetter
from typing import Any

from kcm.checker.engine.bfs import CheckOptions, explore, verdict_of
from kcm.checker.engine.contract import Model
from kcm.checker.engine.coverage import build_coverage
from kcm.checker.engine.result import DEADLOCK, INCOMPLETE, CheckResult, Goal, Violation
from kcm.checker.engine.stats import Outdegree, ProgressClock, Stats

#: How long the parent waits on its queue before looking at its workers again (seconds).
_POLL = 0.2
#: The signals that interrupt a run (the command line turns SIGTERM into the same KeyboardInterrupt).
_INTERRUPTS = (signal.SIGINT, signal.SIGTERM)
#: Orders (order key, violation) pairs by their key.
_KEY = itemgetter(0)


def runs_of(model: Model) -> list[tuple[int, ...]]:
    """The indices of `model.init_states()` grouped by run (`Model.run_of`), runs in the order
    their first initial state is listed."""
    groups: dict[Any, list[int]] = {}
    for index, state in enumerate(model.init_states()):
        groups.setdefault(model.run_of(state), []).append(index)
    return [tuple(indices) for indices in groups.values()]


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def explore_runs(model: Model, options: CheckOptions | None = None, *, jobs: int | None = None,
                 **overrides: Any) -> CheckResult:
    """Explore `model` as `kcm.checker.engine.bfs.explore` does, its disjoint runs in up to `jobs`
    processes (default: one per usable core). One process, the single explorer itself, when the
    model has one run, with `jobs=1`, to keep the graph (liveness), or inside a daemonic process."""
    opts = options or CheckOptions()
    if overrides:
        opts = replace(opts, **overrides)
    runs = runs_of(model)
    workers = min(jobs or usable_cores(), len(runs))
    # A daemonic process (a multiprocessing pool's worker) may not start processes of its own.
    if workers <= 1 or opts.keep_graph or opts.initial is not None or multiprocessing.current_process().daemon:
        return explore(model, opts)
    return _Farm(model, opts, runs, workers).run()


class _Farm:
    """The parent's side: starts the workers, relays progress, collects and merges the results."""

    def __init__(self, model: Model, opts: CheckOptions, runs: list[tuple[int, ...]], workers: int) -> None:
        self.model, self.opts, self.runs, self.workers = model, opts, runs, workers
        ctx = multiprocessing.get_context("fork")
        self.ctx = ctx
        self.queue = ctx.Queue()
        self.next_run = ctx.Value("i", 0)
        self.bound = ctx.Value("i", -1)   # the shortest violation's length so far; -1: none
        self.stop = ctx.Value("b", 0)
        self.results: list[CheckResult | None] = [None] * len(runs)
        #: Each run's latest (level, generated, distinct, queue): from its progress, then its result.
        self.latest: dict[int, tuple[int, int, int, int]] = {}
        #: Each unfinished run's latest outlook (`kcm.checker.engine.stats.outlook`).
        self.outlooks: dict[int, str] = {}
        self.clock = ProgressClock()
        self.last_report = self.clock.start
        self.interrupted = self.killed = False
        self.error: str | None = None
        #: The interruptions the parent has received (signal numbers), and how many it handled.
        self.signals: list[int] = []
        self.handled = 0

    def run(self) -> CheckResult:
        procs = [self.ctx.Process(target=_work, name=f"kcm-run-worker-{w}", daemon=True,
                                  args=(self.model, self.opts, self.runs, self.next_run, self.bound, self.stop,
                                        self.queue, os.getpid()))
                 for w in range(self.workers)]
        with _interrupts_recorded(self.signals):
            for p in procs:
                p.start()
            self._report("init")
            while self._receive(procs):
                while self.handled < len(self.signals):
                    self.handled += 1
                    self._interrupt(procs)
        for p in procs:
            p.join()
        if self.error is not None:
            raise RuntimeError(f"a worker exploring one of the model's runs failed:\n{self.error}")
        result = merge(self.model, self.opts, self.results, interrupted=self.interrupted,
                       duration_s=self.clock.now() - self.clock.start)
        result.extra["processes"] = self.workers
        self._report("final", result.stats)
        return result

    def _receive(self, procs) -> bool:
        """Take the next message from the workers, if one comes soon; False once every worker
        has exited and its last message was read, or once they were killed (a message cut in the
        middle would block the read)."""
        if self.killed:
            return False
        try:
            kind, run, payload = self.queue.get(timeout=_POLL)
        except queue_module.Empty:
            return any(p.is_alive() for p in procs)
        if kind == "progress":
            self.latest[run] = (payload.level, payload.generated, payload.distinct, payload.queue)
            self.outlooks[run] = payload.outlook
            if time.monotonic() - self.last_report >= self.opts.progress_interval:
                self.last_report = time.monotonic()
                self._report("tick")
        elif kind == "done":
            self.results[run] = payload
            s = payload.stats
            self.latest[run] = (s.depth, s.generated, s.distinct, s.queue)
            self.outlooks.pop(run, None)
        elif kind == "error":
            self.error = self.error or payload
            self.stop.value = 1
        return True

    def _interrupt(self, procs) -> None:
        """The first interruption asks every worker to stop (they return what they have); a second
        one stops them at once."""
        self.stop.value = 1
        if self.interrupted:
            for p in procs:
                p.kill()
            self.killed = True
        self.interrupted = True

    def _report(self, phase: str, stats: Stats | None = None) -> None:
        progress = self.opts.progress
        if progress is None:
            return
        if stats is not None:
            level, generated, distinct, queued = stats.depth, stats.generated, stats.distinct, stats.queue
        else:   # the deepest run's level, and the sums of the runs' counts
            snaps = list(self.latest.values()) or [(1, 0, 0, 0)]
            level = max(snap[0] for snap in snaps)
            generated, distinct, queued = (sum(snap[i] for snap in snaps) for i in (1, 2, 3))
        progress(self.clock.snapshot(phase, level, generated, distinct, queued, note=self._note(phase)))

    def _note(self, phase: str) -> str:
        """The runs' outlook: how many are done, and what each run under way says of itself
        (levels of different runs do not add up to a trend)."""
        if phase == "final":
            return ""
        done = sum(r is not None for r in self.results)
        parts = [f"{done} of {len(self.runs)} runs done"]
        parts += [f"run {run}: {text[:1].lower()}{text[1:]}" for run, text in sorted(self.outlooks.items()) if text]
        return "; ".join(parts)


@contextlib.contextmanager
def _interrupts_recorded(record: list[int]):
    """While the parent waits for its workers, an interruption is recorded, not raised: a
    KeyboardInterrupt could land anywhere, in an at-fork hook (where Python only prints it) or
    between receiving a result and keeping it. Outside the main thread, where no handler can be
    set and none runs, it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, lambda signum, frame: record.append(signum)) for sig in _INTERRUPTS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def _work(model: Model, opts: CheckOptions, runs, next_run, bound, stop, out, parent: int) -> None:
    """A worker: explore runs, taken one at a time from `next_run`, until none is left or it is
    told to stop: by the parent's `stop`, by a signal of its own, or by its parent's death."""
    # The collector stays off for good: the search makes no reference cycles (checker/engine/collector.py),
    # and the worker ends with its process. Turned back on after a run, its first pass would walk
    # every record the model's caches keep.
    gc.disable()
    signalled = []
    # An interruption sets a flag that the explorer polls (`should_stop`): raised as a
    # KeyboardInterrupt it could land inside the result queue's lock and hang the exit.
    for sig in _INTERRUPTS:
        signal.signal(sig, lambda signum, frame: signalled.append(signum))

    def should_stop() -> bool:
        return bool(signalled or stop.value) or os.getppid() != parent

    def depth_bound():
        return None if bound.value < 0 else bound.value

    run = -1
    try:
        while not should_stop():
            with next_run.get_lock():
                run = next_run.value
                next_run.value += 1
            if run >= len(runs):
                break
            progress = None
            if opts.progress is not None:
                def progress(p, run=run):
                    out.put(("progress", run, p))
            result = explore(model, replace(opts, initial=runs[run], progress=progress, depth_bound=depth_bound,
                                            should_stop=should_stop))
            if opts.stop_on_violation:
                lengths = [v.trace_length for v in result.violations if v.trace_length is not None]
                if lengths:
                    with bound.get_lock():
                        if bound.value < 0 or min(lengths) < bound.value:
                            bound.value = min(lengths)
            out.put(("done", run, result))
    except BaseException:  # noqa: BLE001 -- reported to the parent, which raises it
        out.put(("error", run, traceback.format_exc()))
    if os.getppid() != parent:
        out.cancel_join_thread()   # nobody reads any more: do not wait to flush at exit


def merge(model: Model, opts: CheckOptions, results: Sequence[CheckResult | None], *,
          interrupted: bool = False, duration_s: float = 0.0) -> CheckResult:
    """One result from the results of a model's runs (None: a run never explored, which only an
    interruption leaves); see the module docstring for how each part adds up."""
    done = [(i, r) for i, r in enumerate(results) if r is not None]
    if not done:   # interrupted before any run was explored: an empty, incomplete result
        empty = explore(model, replace(opts, initial=(), progress=None))
        return replace(empty, verdict=INCOMPLETE, violations=(), reason="interrupted")
    first = done[0][1]

    inits = list(model.init_states())

    def root(trace) -> int:
        """The index of the initial state a trace starts from (found by value: it crossed a pipe)."""
        return inits.index(trace[0][1])

    found = [(_order(v, root(v.trace)), v) for _, r in done for v in r.violations if v.trace is not None]
    violations = ([min(found, key=_KEY)[1]] if found else []) if opts.stop_on_violation else _shortest_per_name(found)
    known = _shortest_per_name([(_order(v, root(v.trace)), v) for _, r in done for v in r.known_violations])

    goals: dict[str, Goal] = {}
    for name in first.goals:
        met = [r.goals[name] for _, r in done if r.goals[name].met]
        goals[name] = (min(met, key=lambda g: (g.trace_length, root(g.trace))) if met
                       else Goal(name, False, None))

    reasons = {r.reason for _, r in done}
    if interrupted or "interrupted" in reasons or len(done) < len(results):
        reason = "interrupted"
    elif "max_depth" in reasons:
        reason = "max_depth"
    else:
        reason = ""   # "bounded" runs stopped below a violation, which is the verdict
    verdict, violations = verdict_of(violations, reason, goals, opts.goals_required)

    histogram: Counter = Counter()
    for _, r in done:
        histogram.update(r.stats.outdegree.histogram)
    levels = [sum(sizes) for sizes in zip_longest(*(r.stats.frontier_sizes for _, r in done), fillvalue=0)]
    stats = Stats(generated=sum(r.stats.generated for _, r in done), distinct=sum(r.stats.distinct for _, r in done),
                  queue=sum(r.stats.queue for _, r in done), depth=len(levels), frontier_sizes=tuple(levels),
                  outdegree=Outdegree.from_histogram(histogram), duration_s=duration_s,
                  cut=sum(r.stats.cut for _, r in done))

    evaluations: dict[str, int] = {}
    new_states: dict[str, int] = {}
    edges: Counter = Counter()
    for _, r in done:
        for a in r.coverage.actions:
            evaluations[a.name] = evaluations.get(a.name, 0) + a.evaluations
            new_states[a.name] = new_states.get(a.name, 0) + a.new_states
        for edge in r.coverage.edges_taken:
            edges[edge] += r.coverage.edge_counts.get(edge, 0)
    # Action kinds in the model's declared order (the single explorer lists them as first
    # generated, an order the runs' interleaving does not keep), then any it does not declare.
    declared = list(model.action_names())
    order = {name: i for i, name in enumerate(declared)}
    evaluations = dict(sorted(evaluations.items(), key=lambda item: order.get(item[0], len(order))))
    coverage = build_coverage(evaluations, new_states, declared, edges,
                              model.coverage_universe() if opts.table_coverage else ())

    extra: dict[str, Any] = {"runs": [
        {"run": i, "initial_states": r.stats.frontier_sizes[0] if r.stats.frontier_sizes else 0,
         "distinct": r.stats.distinct, "generated": r.stats.generated, "depth": r.stats.depth,
         "seconds": round(r.stats.duration_s, 2), "verdict": r.verdict}
        for i, r in done]}
    pors = [r.extra["por"] for _, r in done if "por" in r.extra]
    if pors:
        extra["por"] = {k: (sum(p[k] for p in pors) if isinstance(pors[0][k], int) else pors[0][k]) for k in pors[0]}
    return CheckResult(
        model=first.model, verdict=verdict, violations=tuple(violations), goals=goals, stats=stats,
        coverage=coverage, symmetry=first.symmetry, checked=first.checked, reason=reason, engine=first.engine,
        extra=extra, known_violations=tuple(known),
        known_reasons={k: v for _, r in done for k, v in r.known_reasons.items()}, known_as=model.known_as,
    )


def _order(v: Violation, root: int) -> tuple[int, bool, int]:
    """Which of two violations the single explorer finds first: the shorter; of two as long, the
    one found on an edge or a new state (while expanding the level before) before a deadlock
    (found expanding the level itself); then the one whose trace starts from the earlier initial
    state (`root`), since each level keeps its parents' order, so lists its states by the initial
    state they were first reached from. (Two as long from one initial state are in one run, whose
    explorer has already picked the first.)"""
    return (v.trace_length if v.trace_length is not None else -1, v.kind == DEADLOCK, root)


def _shortest_per_name(found: list[tuple[tuple[int, bool, int], Violation]]) -> list[Violation]:
    """The first violation of each property in the single explorer's order (`_order`), in that order."""
    best: dict[str, tuple[tuple[int, bool, int], Violation]] = {}
    for item in found:
        name = item[1].name
        if name not in best or item[0] < best[name][0]:
            best[name] = item
    return [v for _, v in sorted(best.values(), key=_KEY)]
