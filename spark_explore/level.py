"""What the executors run for one BFS level: `expand_partition` and `merge_partition`.

These are the top-level pure functions Spark ships (with a small `LevelTask` and a `report`
callable); the driver loop is in `bfs.py`. Records are pairs, all partitioned by `owner_of` on
their key:

    frontier   (key: bytes, (path, state_data))                 a state found at this level
    candidate  (key: bytes, (path, kind, state_data, failed))   a successor, before the visited check
    visited    (p: int >= 0, FingerprintSet)                    partition p's share of the visited set

A state's key is its fingerprint, after 8 bytes of its `Model.locality` when the model has one
and P is at most `LOCALITY_PARTITIONS` (`key_function`). The owner is read from the key's first 8
bytes (`owner_of`), so on a few partitions the Kafka model's states are owned by their ZooKeeper
record: the two orders of a pair of steps that leave ZooKeeper alone (deliveries to different
brokers, brokers' own work) lead to states owned by one partition, and when both are expanded
there the second copy is dropped before it is encoded and shuffled. On more partitions the states
of a few busy ZooKeeper records would load their owners unevenly, so states are owned by their
fingerprint. Identity is the fingerprint alone: the locality is a function of the state, so equal
fingerprints come with equal keys, and the visited sets hold fingerprints.

A level RDD holds partition p's visited record and the frontier records p owns. Summaries (each
partition's counters and first events) do not travel as records: each task hands its summary to
`report` (a Spark accumulator's `add` in `bfs.py`) as `((level, EXPAND | MERGE, p), summary)`,
and the driver reads them after the level's one action, with no pass over the level's records.

Paths. A state's `path` is the tuple of indices that reach it from the initial states: the index
of the initial state, then for each step the index of the action in `model.successors` (the
sequential explorer's parent pointers, written out). Paths decide everything that must be
deterministic:

- The sequential explorer expands a level in discovery order and keeps, for each new state, the
  first edge that found it. Discovery order is the lexicographic order of paths (by induction:
  level 0 is in initial-state order; a state at level d+1 is first found from the earliest state
  of level d, by its earliest action). So keeping, for each fingerprint, the candidate with the
  smallest path picks exactly the parent, the action and the (pre-canonical) state the
  sequential explorer keeps, and the Spark run finds the same traces, not just traces of the same
  length. This is the "smallest (parent, action index)" rule with the parent's position in BFS
  order instead of its fingerprint.
- A trace is rebuilt by replaying the path from its initial state (`trace_of`), as the
  sequential explorer replays its parent pointers; no distributed lookup of parent links is
  needed, and nothing per visited state is kept but its 16-byte fingerprint. A pickled path costs
  about two bytes per step and lives only in the frontier and the candidates.
- Every property event (an `AlwaysStep` or `Always` failing, a goal met, a deadlock) is reported
  with an event key `(edge path, phase, index)`: phase 0 for a transition invariant, 1 for a goal,
  2 for an invariant of the new state, 3 for a deadlock (whose "edge path" is the state's path
  followed by `DEADLOCK_SLOT`, after all its edges), and the property's index in the level's
  list. Sorting events by key replays the order in which the sequential explorer meets them, so
  the driver picks the same first violation (`bfs.py`).
- A violation of a property the model lists as known behaviour of the system
  (`Model.known_violations`) is classified where it is found, by the property's
  `KnownViolation.matches` on the violating edge (a deadlock's is `(state, None, state)`; the
  trace, if it asks, replayed from the path): excused ones are reported apart
  (`known_step_events`, `known_events`, the first of each property), any other as a violation,
  and the property stays checked either way.

Stages. `expand_partition` (the map side of the level's one shuffle) sorts its frontier by path,
and for each state decodes it and calls `model.successors` once; per edge it checks the transition
invariants that judge its action's kind (`AlwaysStep.judges`) and the unmet goals and counts
coverage, and for the first candidate of each fingerprint in the partition (which, the partition
being in path order, has the smallest path there) it checks the state invariants and encodes the
state, unless the partition owns that key itself and its visited record already holds its
fingerprint (then the merge would drop it; here it is dropped before its encoding, its invariants
and the shuffle). So every property is evaluated in the stage that generates the states, and
duplicates within a partition never leave it. The candidates are shuffled to their owners
(`partitionBy`).
`merge_partition` runs on each owner partition, where the co-partitioned level record (the
visited set; the frontier just expanded is skipped) and the candidates meet without moving the
visited set; it keeps, per fingerprint, the candidate with the smallest path (what
`reduceByKey(keep_first)` did, without a Python pass of its own), drops the visited ones, and
emits the new frontier and the merged `FingerprintSet`.

States travel encoded (`codec.py`: the model's own codec, `Model.encode_state`, when it has one,
the Kafka model's a tuple of its records' bytes; else pickle keeping the identity of the model's
constants). Encodings need not be canonical: identity comes from `model.fingerprint` (of
`model.representative` with symmetry), computed where states are made.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from kcm.checker.engine.collector import pausing_collector
from kcm.checker.engine.contract import Always, AlwaysStep, KnownViolation, Model, Sometimes
from kcm.checker.engine.result import DEADLOCK, Trace
from kcm.spark_explore.codec import ModelCodec, StateCodec, state_codec
from kcm.spark_explore.fpset import FingerprintSet
from kcm.spark_explore.spec import ModelSpec, load_model

#: Where a deadlock sits among the edges of its state: after all of them.
DEADLOCK_SLOT = sys.maxsize
STEP, GOAL, ALWAYS, DEADLOCK_PHASE = 0, 1, 2, 3


def owner_of(key: Any) -> int:
    """The partition function (before `% P`): keys by their first 8 bytes (the locality, or the
    fingerprint's high word), the visited record of partition `p` to `p`. One module-level
    function object, so every RDD partitioned with it has an equal partitioner and co-partitioned
    unions stay narrow."""
    if type(key) is bytes:
        return int.from_bytes(key[:8], "big")
    return key


def is_frontier(record: tuple) -> bool:
    return type(record[0]) is bytes and len(record[1]) == 2


def is_candidate(record: tuple) -> bool:
    return type(record[0]) is bytes and len(record[1]) == 4


def is_visited(record: tuple) -> bool:
    return type(record[0]) is int


def keep_first(a: tuple, b: tuple) -> tuple:
    """Of two candidates of one fingerprint, the one with the smaller path (paths of one
    fingerprint differ, so the choice does not depend on the order they arrive in)."""
    return a if a[0] <= b[0] else b


#: The second part of a summary's key: which stage reported it.
EXPAND, MERGE = 0, 1


class SummaryList:
    """The accumulator parameter for summaries (`sc.accumulator([], SummaryList())`): a list of
    `((level, stage, partition), summary)` entries, added up by concatenation. A task Spark runs
    twice (a retry, a lost cached partition recomputed later) reports twice; the driver keeps one
    entry per key of the level at hand (the summaries of a deterministic task are equal)."""

    def zero(self, value: list) -> list:
        return []

    def addInPlace(self, value1: list, value2: list) -> list:  # PySpark's name
        value1.extend(value2)
        return value1


# One codec per model per process, like the models themselves.
_CODECS: dict[ModelSpec, ModelCodec | StateCodec] = {}


def codec_for(spec: ModelSpec) -> ModelCodec | StateCodec:
    """The state codec of the model `spec` names, built after the model (see `codec.py`): the
    model's own (`Model.encode_state`) when it has one, else the generic pickle codec."""
    codec = _CODECS.get(spec)
    if codec is None:
        codec = _CODECS[spec] = state_codec(load_model(spec))
    return codec


@dataclass(frozen=True)
class LevelTask:
    """What a level's executors need besides the records: the model and the live properties (by
    name, in the model's order; `bfs.py` drops the ones already decided)."""

    spec: ModelSpec
    symmetric: bool
    always: tuple[str, ...]
    steps: tuple[str, ...]
    goals: tuple[str, ...]
    deadlock: bool
    table_coverage: bool
    #: Stop at the first violation: a state needs only its first failing invariant.
    stop: bool
    #: The level being expanded (1 for the expansion of the initial states), to key summaries.
    level: int = 0
    #: P, the number of owner partitions (0: unknown, no candidate is dropped on the map side).
    #: With it, `expand_partition` drops the candidates its own visited record already holds.
    partitions: int = 0


@dataclass
class ExpandSummary:
    """One frontier partition's expansion: counters, and the first event of each kind in it."""

    partition: int
    states: int = 0
    generated: int = 0
    candidates: int = 0
    outdegrees: dict[int, int] = field(default_factory=dict)
    evaluations: dict[str, int] = field(default_factory=dict)
    #: Action kind -> the smallest edge path where it was generated (coverage lists kinds in
    #: first-generated order, as the sequential explorer does).
    first_seen: dict[str, tuple] = field(default_factory=dict)
    #: Table edge -> how many of the partition's generated transitions took it.
    edges: Counter = field(default_factory=Counter)
    #: Property name -> smallest event key.
    step_events: dict[str, tuple] = field(default_factory=dict)
    #: Property name -> smallest event key of a violation its known behaviour explains.
    known_step_events: dict[str, tuple] = field(default_factory=dict)
    goal_events: dict[str, tuple] = field(default_factory=dict)
    deadlock: tuple | None = None
    #: States with no successor only because a bound of the model cut their steps (`Model.pruned`).
    cut: int = 0
    seconds: float = 0.0


@dataclass
class MergeSummary:
    """One owner partition's visited check."""

    partition: int
    received: int = 0
    new: int = 0
    new_states: dict[str, int] = field(default_factory=dict)
    always_events: dict[str, tuple] = field(default_factory=dict)
    #: Property name -> smallest event key of a violation its known behaviour explains.
    known_events: dict[str, tuple] = field(default_factory=dict)
    visited: int = 0
    visited_bytes: int = 0
    seconds: float = 0.0


def _selected(model, names: tuple[str, ...], kind: type) -> tuple:
    by_name = {p.name: p for p in model.properties() if isinstance(p, kind)}
    return tuple(by_name[n] for n in names)


#: The most owner partitions on which states are owned by their model's locality. The Kafka
#: model's busiest ZooKeeper records hold many states, so the largest owner's share of a level
#: grows with P, where owners by fingerprint stay near an even share (docs/benchmarks.md, "Owners
#: that keep duplicates together, built"). A stage lasts as long as its largest task, so beyond a
#: few partitions the duplicates saved cost more than they save.
LOCALITY_PARTITIONS = 4


def uses_locality(model, partitions: int) -> bool:
    """Whether states are owned by `model.locality` on `partitions` owner partitions (0: unknown)."""
    return type(model).locality is not Model.locality and partitions <= LOCALITY_PARTITIONS


def key_function(model, symmetric: bool, partitions: int):
    """A state's key on `partitions` owner partitions: the `model.locality` of its representative
    (itself without symmetry), then the representative's 16-byte fingerprint, as the sequential
    explorer fingerprints it. `owner_of` reads the first 8 bytes, so states are owned by their
    locality, or by their fingerprint when the model has none or P is above `LOCALITY_PARTITIONS`
    (the key is then the fingerprint alone); identity is the last 16 bytes (`fingerprint_of_key`),
    and the locality, a function of the state, adds none. A snapshot keeps its P, so a resumed run
    keys its states as the run that wrote it."""
    fingerprint, locality = model.fingerprint, model.locality
    if not uses_locality(model, partitions):
        if not symmetric:
            return fingerprint
        representative = model.representative
        return lambda state: fingerprint(representative(state))
    if not symmetric:
        def key(state):
            fp = fingerprint(state)   # first: the Kafka model's locality finds what it cached
            return locality(state) + fp
        return key

    representative = model.representative

    def key_of_representative(state):
        r = representative(state)
        fp = fingerprint(r)
        return locality(r) + fp
    return key_of_representative


def fingerprint_of_key(key: bytes) -> bytes:
    """The fingerprint a key ends with (the key itself when the model has no locality)."""
    return key[-16:]


def _keep_min(events: dict, name: str, key: tuple) -> None:
    old = events.get(name)
    if old is None or key < old:
        events[name] = key


def _frontier_and_visited(records: Iterable[tuple]) -> tuple[list, FingerprintSet | None]:
    """A level partition's records: its frontier (keyed by state) and its visited record, if any."""
    frontier: list = []
    visited: FingerprintSet | None = None
    for key, value in records:
        if type(key) is bytes:
            frontier.append(value)
        else:
            visited = value
    return frontier, visited


def trace_of(model: Model, inits: Sequence, path: tuple[int, ...]) -> Trace:
    """Replay `path` (initial-state index, then action indices) into a trace, as the sequential
    explorer replays its parent pointers."""
    state = inits[path[0]]
    trace = [(None, state)]
    for i in path[1:]:
        step = next(itertools.islice(model.successors(state), i, None), None)
        if step is None:
            raise RuntimeError(
                f"model '{model.name}' is not deterministic: replaying a path found on an executor "
                "did not find the same action (successors order or step results differ)")
        trace.append(step)
        state = step[1]
    return tuple(trace)


def _excused(model: Model, known: KnownViolation, s: object, a: object, t: object, path: tuple[int, ...]) -> bool:
    """Whether the model's known behaviour explains this violation (the edge `path` ends with)."""
    return known.matches(s, a, t, lambda: trace_of(model, model.init_states(), path))


def _step_violated(model: Model, known: KnownViolation | None, name: str, event: tuple,
                   s: object, a: object, t: object, out: ExpandSummary) -> None:
    """Transition invariant `name` fails on the edge `event` stands for: a violation, unless the
    model's known behaviour explains it (then the partition's first such one is kept apart)."""
    if known is None or not _excused(model, known, s, a, t, event[0]):
        out.step_events[name] = event
    elif name not in out.known_step_events:
        out.known_step_events[name] = event


def _failed(model: Model, always: Sequence, known: dict, s: object, a: object, t: object, path: tuple[int, ...],
            stop: bool) -> tuple[int, ...]:
    """The indexes of the state invariants `t` breaks, `~i` for one the model's known behaviour
    explains (`known`: by name); up to the first other one only when the run stops at one."""
    failed: tuple[int, ...] = ()
    for i, p in enumerate(always):
        if not p.holds(t):
            k = known.get(p.name)
            if k is not None and _excused(model, k, s, a, t, path):
                failed += (~i,)
                continue
            failed += (i,)
            if stop:
                break
    return failed


@pausing_collector
def expand_partition(task: LevelTask, report: Callable[[list], None], index: int,
                     records: Iterable[tuple]) -> Iterator[tuple]:
    """Expand the frontier records of one level partition (its visited record is skipped); yields
    the candidates, then reports `[((task.level, EXPAND, index), ExpandSummary)]`."""
    started = time.perf_counter()
    model = load_model(task.spec)
    codec = codec_for(task.spec)
    encode, decode = codec.encode, codec.decode
    key_of = key_function(model, task.symmetric, task.partitions)
    always = _selected(model, task.always, Always)
    steps = list(enumerate(_selected(model, task.steps, AlwaysStep)))
    # The step properties that judge each action type (`AlwaysStep.judges`), filled lazily.
    steps_of: dict[type, list] = {}
    goals = list(enumerate(_selected(model, task.goals, Sometimes)))
    edges_taken = model.edges_taken if task.table_coverage else None
    action_name, successors, stop = model.action_name, model.successors, task.stop
    known = dict(model.known_violations())
    out = ExpandSummary(index)
    evals, first_seen, outdegrees = out.evaluations, out.first_seen, out.outdegrees
    step_events, goal_events = out.step_events, out.goal_events
    seen: set[bytes] = set()
    frontier, visited = _frontier_and_visited(records)
    # A candidate this partition owns and has visited is dropped here, before its state is
    # encoded, judged by the state invariants and shuffled: the merge would drop it anyway.
    P = task.partitions if visited is not None and len(visited) else 0
    contains = visited.contains_split if P else None
    # Path order: the first candidate of a fingerprint met here has its smallest path here.
    frontier.sort(key=itemgetter(0))
    for path, data in frontier:
        s = decode(data)
        n = 0
        for a, t in successors(s):
            key = path + (n,)
            kind = action_name(a)
            if kind in evals:
                evals[kind] += 1
            else:
                evals[kind] = 1
                first_seen[kind] = key
            judged = steps_of.get(type(a))
            if judged is None:
                judged = steps_of[type(a)] = [(i, p) for i, p in steps if p.may_fail_on(type(a))]
            for i, p in judged:
                if p.name not in step_events and not p.holds(s, a, t):
                    _step_violated(model, known.get(p.name), p.name, (key, STEP, i), s, a, t, out)
            if goals:
                for i, g in goals:
                    if g.met(s, a, t):
                        goal_events[g.name] = (key, GOAL, i)
                # A goal met in this partition is met earliest at its first edge here.
                goals = [(i, g) for i, g in goals if g.name not in goal_events]
            if edges_taken is not None:
                out.edges.update(edges_taken(s, a, t))
            tk = key_of(t)
            if tk not in seen:
                seen.add(tk)
                if P and int.from_bytes(tk[:8], "big") % P == index:
                    fp = tk[-16:]
                    if contains(int.from_bytes(fp[:8], "big"), int.from_bytes(fp[8:], "big")):
                        n += 1
                        continue
                out.candidates += 1
                yield tk, (key, kind, encode(t), _failed(model, always, known, s, a, t, key, stop))
            n += 1
        out.states += 1
        out.generated += n
        outdegrees[n] = outdegrees.get(n, 0) + 1
        if n == 0 and task.deadlock:
            _dead_end(model, known.get(DEADLOCK), s, path, out)
    out.seconds = time.perf_counter() - started
    report([((task.level, EXPAND, index), out)])


def _dead_end(model, known: KnownViolation | None, s, path: tuple, out: ExpandSummary) -> None:
    """State `s` (at `path`) has no successor: a deadlock unless it is terminal or a bound of the
    model cut every healing step of it, a state constraint (`Model.pruned`) that is counted, as the
    sequential explorer counts it (`Stats.cut`), and is not a deadlock. A deadlock the model's
    known behaviour explains (`known`, asked of the edge `(s, None, s)` as sequentially) is kept
    apart, the partition's first one, like a transition invariant's."""
    if model.is_terminal(s):
        return
    if model.pruned(s):
        out.cut += 1
        return
    event = (path + (DEADLOCK_SLOT,), DEADLOCK_PHASE, 0)
    if known is not None and _excused(model, known, s, None, s, path):
        out.known_step_events.setdefault(DEADLOCK, event)
    elif out.deadlock is None:
        out.deadlock = event


@pausing_collector
def merge_partition(task: LevelTask, report: Callable[[list], None], index: int,
                    records: Iterable[tuple]) -> Iterator[tuple]:
    """Check one owner partition's candidates against its visited set. `records` are the level
    partition's (its visited record, and the frontier just expanded, skipped) and the candidates
    shuffled to it, in any order. Yields the new frontier records, in path order, then
    `(index, merged FingerprintSet)`; reports `[((task.level, MERGE, index), MergeSummary)]`."""
    started = time.perf_counter()
    out = MergeSummary(index)
    visited: FingerprintSet | None = None
    best: dict[bytes, tuple] = {}
    for key, value in records:
        if type(key) is bytes:
            if len(value) == 4:  # a candidate (a frontier record is a pair)
                old = best.get(key)
                if old is None or value[0] < old[0]:
                    best[key] = value
        else:
            visited = value
    if visited is None:  # a partition with no visited record is empty (never happens in bfs.py)
        visited = FingerprintSet()
    out.received = len(best)
    news, always_events, known_events, names = out.new_states, out.always_events, out.known_events, task.always
    new = sorted(((c[0], key, c) for key, c in best.items() if key[-16:] not in visited), key=itemgetter(0))
    for path, key, (_, kind, data, failed) in new:
        news[kind] = news.get(kind, 0) + 1
        for i in failed:
            if i >= 0:
                _keep_min(always_events, names[i], (path, ALWAYS, i))
            else:
                _keep_min(known_events, names[~i], (path, ALWAYS, ~i))
        yield key, (path, data)
    merged = visited.merged(key[-16:] for _, key, _ in new)
    out.new = len(new)
    out.visited, out.visited_bytes = len(merged), merged.nbytes
    out.seconds = time.perf_counter() - started
    yield index, merged
    report([((task.level, MERGE, index), out)])
