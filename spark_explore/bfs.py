"""Exhaustive exploration on Spark: `explore_spark(spark, model_spec, options) -> CheckResult`.

The same level-synchronous breadth-first search as `kcm.checker.engine.bfs`, with the state space spread
over Spark partitions, and the same result: distinct and generated counts, depth, outdegree,
coverage, goals, verdict, and the same shortest counterexample, step for step.

Layout: owner partitioning, as parallel Murphi, PReach and distributed TLC do (each state has one
owner, to which its duplicates are sent). Every state has one owner partition, `owner_of(key) % P`,
read from its key: its fingerprint, after its model's locality when it has one and P is small (the
Kafka model's ZooKeeper record, so commuting steps' duplicates meet in one partition; `level.py`).
Partition p of the level RDD holds p's share of the visited set, one sorted `FingerprintSet`
record, and the frontier states p owns. One level is one Spark job of two stages, each task one
Python pass:

    level RDD --expand_partition--> candidates --partitionBy(owner_of)--> shuffle (candidates only)
    level RDD ------------------------------union (co-partitioned, narrow)--> merge_partition
                                                -> new frontier + merged visited = next level RDD

- Only the candidates move. The visited record stays in its partition: the union of two RDDs with
  the same partitioner (same P, same partition function object) is Spark's
  `PartitionerAwareUnionRDD`, a narrow dependency, and `merge_partition` keeps the partitioning
  (`preservesPartitioning=True`). A test walks the lineage to check it.
- Duplicates within a level are merged before the visited check: first inside each frontier
  partition, then in `merge_partition`, keeping the candidate with the smallest path (see
  `level.py`: that is the sequential explorer's choice of parent, action and pre-canonical state).
- Properties are evaluated where states are generated (`expand_partition`): transition invariants
  and goals on every edge, state invariants on each partition's first candidate per fingerprint
  (except those its own visited record holds: they are dropped there, unencoded).
  `merge_partition` only reports which of those candidates were new.
- The level's one action is a JVM-side `count` of the persisted next level RDD: it fills the cache
  without a Python pass of its own. Each task adds its summary (counters, coverage, the first
  event of each kind) to an accumulator (`level.SummaryList`), keyed by (level, stage, partition)
  so that a task Spark runs twice counts once; the driver folds the level's summaries, and
  decides.

Stopping. The sequential explorer stops at the first violation in its expansion order; when that
is one step beyond the level being expanded it still looks for a deadlock in the rest of the level,
which would be shorter. Here the whole level is expanded, every event carries a key that sorts in
the sequential order, and the driver reports: the first deadlock of the level if there is one,
else the first event. Goals count when met before that first event. So the violation, its kind,
its trace (not only its length) and the goals met are those of the sequential explorer. When
several states violate at the same level, "first" is the smallest path, i.e. the state the
sequential explorer reaches first (not the smallest fingerprint: that would differ from it).

What differs, on purpose: a run that stops at a violation counts the whole level in which it was
found (generated, distinct, queue), where the sequential explorer stops in the middle; both report
the same depth (the violating level is not counted). Complete runs (pass, unmet goals, max_depth)
give identical statistics. Within a level there is no intermediate progress ("tick"); progress is
reported at the initial states, after each level and at the end, with TLC's line.

Lineage and restarts. Every `checkpoint_every` levels the level RDD is checkpointed (lineage cut,
reliable, partitioner kept) and, with `checkpoint_dir`, a snapshot is written that a later run
resumes from with `resume_from` (`checkpoint.py`). A resumed run ends with the same result as one
never stopped. An interruption (Ctrl-C, SIGTERM) cancels the level's jobs and returns what the completed
levels found, with the verdict "incomplete", like the sequential explorer; it is deferred to
between Spark calls, so that no py4j call is cut in half (`interrupts.py`).

Spark figures per level (`LevelFigures`, in `result.extra["spark"]["levels"]` and through
`on_level`): states expanded, candidates shuffled, new states, shuffle bytes written and read
(from Spark's status store, `metrics.py`), seconds, whether the lineage was cut.
"""

from __future__ import annotations

import contextlib
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import Any

from kcm.checker.engine.bfs import CheckOptions, select_properties, verdict_of
from kcm.checker.engine.contract import Always, AlwaysStep, Sometimes
from kcm.checker.engine.coverage import build_coverage
from kcm.checker.engine.errors import UsageError
from kcm.checker.engine.result import DEADLOCK, CheckResult, Goal, Violation
from kcm.checker.engine.stats import Outdegree, ProgressClock, Stats
from kcm.spark_explore import checkpoint as snapshots
from kcm.spark_explore.codec import state_codec
from kcm.spark_explore.fpset import FingerprintSet
from kcm.spark_explore.interrupts import DeferredInterrupt, Interrupted
from kcm.spark_explore.level import (
    DEADLOCK_PHASE,
    EXPAND,
    MERGE,
    LevelTask,
    SummaryList,
    expand_partition,
    fingerprint_of_key,
    key_function,
    merge_partition,
    owner_of,
    trace_of,
)
from kcm.spark_explore.metrics import job_group_figures
from kcm.spark_explore.spec import ModelSpec
from pyspark import StorageLevel
from pyspark.rdd import RDD


@dataclass(frozen=True)
class LevelFigures:
    """Spark's view of one BFS level (the expansion of TLC level `level`)."""

    level: int
    expanded: int
    generated: int
    #: Candidates written to the shuffle (after merging duplicates within each partition).
    candidates: int
    #: Candidates checked against the visited set (after `reduceByKey`).
    received: int
    new: int
    visited: int
    visited_bytes: int
    shuffle_write_bytes: int
    shuffle_read_bytes: int
    seconds: float
    checkpointed: bool
    #: Each task's own seconds (its Python pass), by partition: the expand stage's and the
    #: merge stage's. Against `seconds` they show the barriers: a stage lasts as long as its
    #: slowest task, and a core whose task ended first waits.
    expand_task_seconds: tuple[float, ...] = ()
    merge_task_seconds: tuple[float, ...] = ()


@dataclass(frozen=True)
class SparkOptions(CheckOptions):
    """`CheckOptions` (same meaning, same defaults) plus how to use Spark."""

    #: P, the number of owner partitions; default the default parallelism, one task per core and
    #: stage (at least 2). More partitions cost a task each per stage and merge fewer duplicates
    #: before the shuffle; give more when a partition's share of a level does not fit in memory.
    partitions: int | None = None
    #: Cut the lineage every this many levels (0: never, for tests of the lineage itself).
    checkpoint_every: int = 4
    #: Write a resumable snapshot here at each lineage cut (local path or Hadoop URI).
    checkpoint_dir: str | None = None
    #: Snapshots kept in `checkpoint_dir` (the newest).
    keep_checkpoints: int = 2
    #: Resume from the newest snapshot in this folder.
    resume_from: str | None = None
    #: Called with each level's `LevelFigures`.
    on_level: Callable[[LevelFigures], None] | None = None


class _Stop(Exception):
    """The run stops at a violation (raised after the level's counters are folded in)."""


def explore_spark(spark: Any, model_spec: ModelSpec, options: CheckOptions | None = None,
                  **overrides: Any) -> CheckResult:
    """Explore the model `model_spec` names, on the Spark session (or context) `spark`.

    `options` is a `SparkOptions` or a plain `CheckOptions`; `overrides` replace fields:
    `explore_spark(spark, spec, partitions=8, checkpoint_dir="ck")`. Raises `UsageError` for an
    unknown property name, a `resume_from` with no snapshot, or a snapshot of another model or
    other options.
    """
    opts = options or SparkOptions()
    if not isinstance(opts, SparkOptions):
        opts = SparkOptions(**{f: getattr(opts, f) for f in CheckOptions.__dataclass_fields__})
    if overrides:
        opts = replace(opts, **overrides)
    return _SparkExplorer(spark, model_spec, opts).run()


def _co_partitioned_union(records, candidates):
    """`records.union(candidates)` without a Python pass. Both hold pickled batches, but PySpark
    names their serializers differently (auto-batched vs batched) and its `union` would then
    re-serialize both sides through Python; the streams read alike, so the JVM union is taken as
    is. The two RDDs have equal partitioners, so Spark makes it a `PartitionerAwareUnionRDD`: the
    records' side is a narrow dependency, and the visited set does not move."""
    if records._jrdd_deserializer == candidates._jrdd_deserializer:
        return records.union(candidates)
    rdd = RDD(records._jrdd.union(candidates._jrdd), records.ctx, candidates._jrdd_deserializer)
    rdd.partitioner = records.partitioner
    return rdd


def _min(a: tuple | None, b: tuple) -> tuple:
    return b if a is None or b < a else a


#: The exceptions that say what is wrong with a file Spark failed to read, most telling first.
_CAUSES = re.compile(r"(?:\w+\.)*((?:ChecksumException|EOFException|UnpicklingError|PickleException|EOFError|"
                     r"IOException)\b:?[^\n]*)")


def _cause(exc: BaseException) -> str:
    """One line out of a py4j error's Java and Python stack traces: the exception that names the
    damage (a checksum error, a file cut short, bytes that are not a pickle)."""
    text = str(exc)
    found = _CAUSES.search(text)
    line = found.group(1) if found else next((x.strip() for x in text.splitlines() if x.strip()),
                                              type(exc).__name__)
    return line.strip()[:160]


class _SparkExplorer:
    """One run: the driver's counters, the level RDD, and the decisions."""

    def __init__(self, spark: Any, spec: ModelSpec, opts: SparkOptions) -> None:
        self.sc = getattr(spark, "sparkContext", spark)
        self.spec, self.opts = spec, opts
        self.model = model = spec.build()
        props, deadlock = select_properties(model, opts.properties)
        self.always = tuple(p for p in props if isinstance(p, Always))
        self.steps = tuple(p for p in props if isinstance(p, AlwaysStep))
        self.goals = tuple(p for p in props if isinstance(p, Sometimes))
        self.all_goals = self.goals
        self.kinds = {p.name: p.kind for p in props if not isinstance(p, Sometimes)} | {DEADLOCK: DEADLOCK}
        self.check_deadlock = opts.check_deadlock and deadlock
        self.checked = tuple(p.name for p in props) + ((DEADLOCK,) if self.check_deadlock else ())
        self.symmetric = opts.symmetry and model.has_symmetry
        self.stop = opts.stop_on_violation
        self.inits = list(model.init_states())
        self.partitions = opts.partitions or max(2, self.sc.defaultParallelism)
        self.run_id = uuid.uuid4().hex[:8]
        self.clock = ProgressClock()
        self.level = 0  # levels expanded so far: the index of the next level to expand
        self.frontier = 0
        self.queue = 0
        self.generated = self.distinct = 0
        self.cut = 0   # states a bound of the model left without successor (`Stats.cut`)
        self.frontier_sizes: list[int] = []
        self.outdegrees: dict[int, int] = {}
        self.evaluations: dict[str, int] = {}
        self.new_states: dict[str, int] = {}
        self.first_seen: dict[str, tuple] = {}
        self.edges: Counter = Counter()   # table edge -> transitions that took it
        self.witnesses: dict[str, tuple] = {}
        self.violations: list[tuple] = []
        self.known = dict(model.known_violations())
        self.known_found: list[tuple] = []
        self.levels: list[dict] = []
        self.elapsed_before = 0.0
        self.resumed_from: int | None = None
        self.reason = ""
        self.records = None  # the current level RDD: visited and frontier records
        self.cached: list = []  # level RDDs cached since the last lineage cut
        self.group = ""
        #: Where the level's tasks put their summaries (see `level.SummaryList`).
        self.summaries = self.sc.accumulator([], SummaryList())
        #: Ctrl-C: cancels the level's job group and stops between Spark calls (`interrupts.py`).
        self.interrupt = DeferredInterrupt(lambda: self.sc.cancelJobGroup(self.group) if self.group else None)

    def options_key(self) -> tuple:
        """The options a snapshot must share with the run that resumes it."""
        return (snapshots.RECORDS_FORMAT, self.symmetric, self.checked, self.stop, self.opts.table_coverage)

    # ---- the run -------------------------------------------------------------------------------

    def run(self) -> CheckResult:
        if self.opts.checkpoint_every and not self.sc.getCheckpointDir():
            raise UsageError("the Spark context has no checkpoint directory; create the session "
                             "with kcm.spark_explore.session.spark_session or call setCheckpointDir")
        with self.interrupt.installed():
            try:
                if self.opts.resume_from:
                    self._resume(self.opts.resume_from)
                else:
                    self._start()
                self._search()
            except _Stop:
                pass
            except (KeyboardInterrupt, Interrupted):
                self.reason = "interrupted"
                self.queue = self.frontier
                self._quietly(lambda: self.sc.cancelJobGroup(self.group) if self.group else None)
            finally:
                # After an interrupt the gateway may refuse these; what the run found stands.
                for rdd in self.cached:
                    self._quietly(rdd.unpersist)
                self.summaries.value = []
                self._quietly(lambda: self.sc.setLocalProperty("spark.jobGroup.id", None))
        return self._result()

    def _quietly(self, call: Callable[[], object]) -> None:
        if not self.interrupt.requested.is_set():
            call()
            return
        with contextlib.suppress(Exception):  # py4j errors after a cancelled job say nothing new
            call()

    def _start(self) -> None:
        """Level 0 on the driver, exactly as the sequential explorer does it."""
        key_of = key_function(self.model, self.symmetric, self.partitions)
        encode = state_codec(self.model).encode
        seen: set[bytes] = set()
        frontier = []
        for index, state in enumerate(self.inits):
            self.generated += 1
            f = key_of(state)
            if f in seen:
                continue
            seen.add(f)
            self.distinct += 1
            frontier.append((f, ((index,), encode(state))))
            self.queue = len(frontier)  # what a stop here leaves unexpanded, as sequentially
            for p in self.always:
                if not p.holds(state):
                    self._violated(p.name, p.kind, (index,), state)
            for g in self.goals:
                if g.met(state, None, state):
                    self._goal_met(g.name, (index,))
        self.frontier = self.queue = len(frontier)
        self.frontier_sizes.append(self.frontier)
        P = self.partitions
        owners: list[list[bytes]] = [[] for _ in range(P)]
        for f in seen:
            owners[owner_of(f) % P].append(fingerprint_of_key(f))
        visited = [(p, FingerprintSet.of(fps)) for p, fps in enumerate(owners)]
        self._adopt(self.sc.parallelize(visited + frontier, P).partitionBy(P, owner_of))
        self._report("init", 1, self.frontier)

    def _resume(self, root: str) -> None:
        path = snapshots.latest_snapshot(self.sc, root)
        if path is None:
            raise UsageError(f"no complete snapshot in '{root}' to resume from")
        state, records = self._read_snapshot(path)
        if state.spec != self.spec or state.options_key != self.options_key():
            raise UsageError(f"the snapshot in '{path}' was written for another model, by another kcm "
                             "version or with other options (symmetry, properties, stop on violation, "
                             "table coverage)")
        self.partitions = state.partitions
        self.level, self.frontier, self.queue = state.level, state.frontier, state.frontier
        self.generated, self.distinct, self.cut = state.generated, state.distinct, state.cut
        self.frontier_sizes = list(state.frontier_sizes)
        self.outdegrees, self.evaluations = dict(state.outdegrees), dict(state.evaluations)
        self.new_states, self.first_seen = dict(state.new_states), dict(state.first_seen)
        self.edges, self.witnesses = Counter(state.edges), dict(state.witnesses)
        self.violations, self.levels = list(state.violations), list(state.levels)
        self.known_found = list(state.known_found)
        self.always = tuple(p for p in self.always if p.name in state.active_always)
        self.steps = tuple(p for p in self.steps if p.name in state.active_steps)
        self.goals = tuple(g for g in self.goals if g.name not in self.witnesses)
        self.check_deadlock = state.check_deadlock
        self.elapsed_before = state.elapsed_s
        self.resumed_from = state.level
        self._adopt(records)
        self._report("init", len(self.frontier_sizes), self.frontier)

    def _search(self) -> None:
        max_depth = self.opts.max_depth
        while self.frontier:
            if max_depth is not None and self.level >= max_depth:
                self.reason = "max_depth"
                return
            self._expand_level()

    def _read_snapshot(self, path: str):
        """The snapshot at `path`, read in full now: a corrupt one (a garbage or truncated part
        file, with or without its `.crc`) is one `UsageError` line before the search starts, not
        a failed job later. Spark's own logging is off meanwhile: a failed read logs each task's
        Java and Python stack traces, which say nothing more than the line does."""
        try:
            level = str(self.sc._jvm.org.apache.logging.log4j.LogManager.getRootLogger().getLevel())
        except Exception:  # another logging backend: Spark's default is WARN here
            level = "WARN"
        self.sc.setLogLevel("OFF")
        try:
            state, records = snapshots.load_snapshot(self.sc, path)
            records.persist(StorageLevel.MEMORY_AND_DISK)
            records.count()
        except Exception as exc:  # py4j and Spark errors share no base class worth naming
            self.interrupt.check()
            # Spark's log stays off: the job's other tasks are still failing, and each would log.
            raise UsageError(f"--resume: the snapshot in '{path}' cannot be read ({_cause(exc)}); "
                             "remove that level folder to resume from the one before, or start again") from None
        self.sc.setLogLevel(level)
        return state, records

    def _adopt(self, rdd) -> None:
        rdd.persist(StorageLevel.MEMORY_AND_DISK)
        self.cached.append(rdd)
        self.records = rdd

    # ---- one level -----------------------------------------------------------------------------

    def _expand_level(self) -> None:
        self.interrupt.check()
        sc, P = self.sc, self.partitions
        task = LevelTask(
            self.spec, self.symmetric, tuple(p.name for p in self.always),
            tuple(p.name for p in self.steps), tuple(g.name for g in self.goals),
            self.check_deadlock, self.opts.table_coverage, self.stop, self.level + 1, P)
        self.group = f"kcm-{self.run_id}-level-{self.level + 1}"
        sc.setJobGroup(self.group, f"kcm: BFS level {self.level + 1}", True)
        started = time.monotonic()
        records, report = self.records, self.summaries.add
        candidates = (records.mapPartitionsWithIndex(partial(expand_partition, task, report))
                      .partitionBy(P, owner_of))  # the level's only shuffle
        merged = _co_partitioned_union(records, candidates).mapPartitionsWithIndex(
            partial(merge_partition, task, report), preservesPartitioning=True)
        merged.persist(StorageLevel.MEMORY_AND_DISK)
        cut = self.opts.checkpoint_every > 0 and (self.level + 1) % self.opts.checkpoint_every == 0
        if cut:
            merged.checkpoint()  # written after the action's job, from the cache
        self.summaries.value = []
        # The level's one action, run by the JVM: it fills the cache, and the summaries come back
        # through the accumulator, so no Python task reads the records again to collect them.
        self.interrupt.check()
        try:
            merged._jrdd.count()
        except Exception:
            self.interrupt.check()  # the job failed because Ctrl-C cancelled it
            raise
        self.interrupt.check()  # the level is dropped: the run reports the levels before it
        expanded_summaries, summaries = self._level_summaries(task.level)
        seconds = time.monotonic() - started
        shuffle = job_group_figures(sc, self.group)

        stopped = self._fold(task, expanded_summaries, summaries)
        expanded = self.frontier
        new = sum(m.new for m in summaries)
        self.level += 1
        self.distinct += new
        self.queue = new
        self.cached.append(merged)
        if stopped:
            raise _Stop
        self.frontier = new
        if new:
            self.frontier_sizes.append(new)
        self.records = merged
        if cut:  # everything before the cut is in the checkpoint now
            for rdd in self.cached[:-1]:
                rdd.unpersist()
            self.cached = [merged]
        figures = LevelFigures(
            level=self.level, expanded=expanded,
            generated=sum(e.generated for e in expanded_summaries),
            candidates=sum(e.candidates for e in expanded_summaries),
            received=sum(m.received for m in summaries), new=new,
            visited=sum(m.visited for m in summaries),
            visited_bytes=sum(m.visited_bytes for m in summaries),
            shuffle_write_bytes=shuffle.shuffle_write_bytes,
            shuffle_read_bytes=shuffle.shuffle_read_bytes, seconds=seconds, checkpointed=cut,
            expand_task_seconds=tuple(round(e.seconds, 4) for e in expanded_summaries),
            merge_task_seconds=tuple(round(m.seconds, 4) for m in summaries))
        self.levels.append(asdict(figures))
        if self.opts.on_level is not None:
            self.opts.on_level(figures)
        if cut and self.opts.checkpoint_dir:
            self._save()
        self._report("level", len(self.frontier_sizes), self.frontier)

    def _level_summaries(self, level: int) -> tuple[list, list]:
        """The level's expand and merge summaries, one per partition, in partition order."""
        found: dict[tuple, object] = {}
        for key, summary in self.summaries.value:
            if key[0] == level:
                found.setdefault(key, summary)
        P = self.partitions
        missing = [(stage, p) for stage in (EXPAND, MERGE) for p in range(P)
                   if (level, stage, p) not in found]
        if missing:
            raise RuntimeError(f"level {level}: no summary from tasks {missing}")
        return ([found[(level, EXPAND, p)] for p in range(P)],
                [found[(level, MERGE, p)] for p in range(P)])

    def _fold(self, task: LevelTask, expanded: list, summaries: list) -> bool:
        """Add a level's summaries to the counters and record what it found, in the sequential
        explorer's order; True when the run stops here."""
        step_events, goal_events, always_events, deadlock, known_events = self._fold_counters(expanded, summaries)
        events = [(key, name, self.kinds[name]) for name, key in step_events.items()]
        events += [(key, name, self.kinds[name]) for name, key in always_events.items()]
        if deadlock is not None:
            events.append((deadlock, DEADLOCK, DEADLOCK))
        events.sort()
        first = events[0][0] if events else None
        # Violations the model's known behaviour explains (`Model.known_violations`, classified on
        # the executors): record the first of each property and keep checking it, as the
        # sequential explorer does, which meets none past the violation it stops at.
        recorded = {name for name, _, _ in self.known_found}
        for key, name in sorted((key, name) for name, key in known_events.items()):
            if name not in recorded and not (self.stop and first is not None and first < key):
                self.known_found.append((name, self.kinds[name], self._path_of(key)))
        if self.stop and first is not None:
            # Goals met before the stop count; then the first deadlock of the level, which is a
            # step shorter, or else the first event.
            for name, key in sorted(goal_events.items(), key=lambda item: item[1]):
                if key < first:
                    self._goal_met(name, key[0])
            chosen = next((e for e in events if e[2] == DEADLOCK), events[0])
            self.violations.append((chosen[1], chosen[2], self._path_of(chosen[0])))
            return True
        for name, key in sorted(goal_events.items(), key=lambda item: item[1]):
            self._goal_met(name, key[0])
        for key, name, kind in events:  # -continue: one violation per property, in order
            self.violations.append((name, kind, self._path_of(key)))
            self._drop(name)
        return False

    def _fold_counters(self, expanded: list, summaries: list) -> tuple[dict, dict, dict, tuple | None, dict]:
        """Add a level's counts to the run's; the first key of each event the level saw (transition
        invariants, goals, state invariants), of a deadlock, and of each property's violations
        its known behaviour explains."""
        level_first: dict[str, tuple] = {}
        step_events: dict[str, tuple] = {}
        goal_events: dict[str, tuple] = {}
        always_events: dict[str, tuple] = {}
        known_events: dict[str, tuple] = {}
        deadlock = None
        for m in summaries:
            for name, count in m.new_states.items():
                self.new_states[name] = self.new_states.get(name, 0) + count
            for name, key in m.always_events.items():
                always_events[name] = _min(always_events.get(name), key)
            for name, key in m.known_events.items():
                known_events[name] = _min(known_events.get(name), key)
        for e in expanded:
            self.generated += e.generated
            self.cut += e.cut
            for degree, count in e.outdegrees.items():
                self.outdegrees[degree] = self.outdegrees.get(degree, 0) + count
            for name, count in e.evaluations.items():
                self.evaluations[name] = self.evaluations.get(name, 0) + count
            for name, key in e.first_seen.items():
                level_first[name] = _min(level_first.get(name), key)
            self.edges.update(e.edges)
            for name, key in e.step_events.items():
                step_events[name] = _min(step_events.get(name), key)
            for name, key in e.goal_events.items():
                goal_events[name] = _min(goal_events.get(name), key)
            for name, key in e.known_step_events.items():
                known_events[name] = _min(known_events.get(name), key)
            if e.deadlock is not None:
                deadlock = _min(deadlock, e.deadlock)
        for name, key in level_first.items():
            self.first_seen.setdefault(name, (self.level, key))
        return step_events, goal_events, always_events, deadlock, known_events

    @staticmethod
    def _path_of(key: tuple) -> tuple[int, ...]:
        """The path of the trace an event key stands for: the edge's, or the deadlocked state's."""
        return key[0][:-1] if key[1] == DEADLOCK_PHASE else key[0]

    # ---- violations, goals, snapshots, progress ---------------------------------------------------

    def _violated(self, name: str, kind: str, path: tuple[int, ...], state: Any) -> None:
        """Initial state `state` (at `path`) violates `name`; the executors classify the others."""
        known = self.known.get(name)
        if known is not None and known.matches(state, None, state, lambda: trace_of(self.model, self.inits, path)):
            if name not in {n for n, _, _ in self.known_found}:
                self.known_found.append((name, kind, path))
            return
        self.violations.append((name, kind, path))
        if self.stop:
            raise _Stop
        self._drop(name)

    def _drop(self, name: str) -> None:
        if name == DEADLOCK:
            self.check_deadlock = False
        self.always = tuple(p for p in self.always if p.name != name)
        self.steps = tuple(p for p in self.steps if p.name != name)

    def _goal_met(self, name: str, path: tuple[int, ...]) -> None:
        self.witnesses[name] = path
        self.goals = tuple(g for g in self.goals if g.name != name)

    def _save(self) -> None:
        state = snapshots.DriverState(
            spec=self.spec, options_key=self.options_key(), partitions=self.partitions,
            level=self.level, frontier=self.frontier, generated=self.generated,
            distinct=self.distinct, cut=self.cut, frontier_sizes=list(self.frontier_sizes),
            outdegrees=dict(self.outdegrees), evaluations=dict(self.evaluations),
            new_states=dict(self.new_states), first_seen=dict(self.first_seen),
            edges=Counter(self.edges), witnesses=dict(self.witnesses),
            violations=list(self.violations), active_always=tuple(p.name for p in self.always),
            active_steps=tuple(p.name for p in self.steps), check_deadlock=self.check_deadlock,
            levels=list(self.levels), known_found=list(self.known_found),
            elapsed_s=self.elapsed_before + self.clock.now() - self.clock.start)
        self.sc.setJobGroup(f"{self.group}-snapshot", "kcm: snapshot", True)
        snapshots.save_snapshot(self.sc, self.opts.checkpoint_dir, state,
                                self.records, keep=self.opts.keep_checkpoints)

    def _report(self, phase: str, level: int, queue: int) -> None:
        if self.opts.progress is not None:
            self.opts.progress(self.clock.snapshot(phase, level, self.generated, self.distinct, queue,
                                                   self.frontier_sizes))

    # ---- the result ------------------------------------------------------------------------------

    def _result(self) -> CheckResult:
        duration = self.clock.now() - self.clock.start
        model = self.model
        order = sorted(self.evaluations, key=lambda name: self.first_seen[name])
        coverage = build_coverage({n: self.evaluations[n] for n in order}, self.new_states,
                                  model.action_names(), self.edges,
                                  model.coverage_universe() if self.opts.table_coverage else ())
        goals = {g.name: Goal(g.name, g.name in self.witnesses,
                              trace_of(model, self.inits, self.witnesses[g.name])
                              if g.name in self.witnesses else None)
                 for g in self.all_goals}
        violations = [Violation(name, kind, trace_of(model, self.inits, path))
                      for name, kind, path in self.violations]
        verdict, violations = verdict_of(violations, self.reason, goals, self.opts.goals_required)
        stats = Stats(
            generated=self.generated, distinct=self.distinct, queue=self.queue,
            depth=len(self.frontier_sizes), frontier_sizes=tuple(self.frontier_sizes),
            outdegree=Outdegree.from_histogram(self.outdegrees), duration_s=duration, cut=self.cut)
        self._report("final", stats.depth, stats.queue)
        spark = {
            "master": self.sc.master, "partitions": self.partitions,
            "checkpoint_every": self.opts.checkpoint_every, "resumed_from_level": self.resumed_from,
            "elapsed_before_resume_s": self.elapsed_before, "levels": list(self.levels),
        }
        return CheckResult(
            model=model.name, verdict=verdict, violations=tuple(violations), goals=goals,
            stats=stats, coverage=coverage, symmetry=self.symmetric, checked=self.checked,
            reason=self.reason, engine="spark", extra={"spark": spark},
            known_violations=tuple(Violation(name, kind, trace_of(model, self.inits, path))
                                   for name, kind, path in self.known_found),
            known_reasons={name: self.known[name].reason for name, _, _ in self.known_found},
            known_as=model.known_as)
