"""The Spark explorer against the sequential one: same counts, depth, verdict, violations with the
same (shortest) traces, goals and coverage, on the toys and the Kafka `tiny` preset, symmetry on and
off; the visited set never shuffled; a run interrupted and resumed from its snapshot."""

from __future__ import annotations

import gc

import pytest
from kcm.checker.engine.bfs import CheckOptions, explore
from kcm.checker.engine.errors import UsageError
from kcm.checker.engine.result import DEADLOCK
from kcm.spark_explore import checkpoint as snapshots
from kcm.spark_explore.bfs import SparkOptions, _SparkExplorer, explore_spark
from kcm.spark_explore.level import LOCALITY_PARTITIONS, is_visited, owner_of
from kcm.spark_explore.spec import ModelSpec
from pyspark.rdd import Partitioner

from kcm.config import load_preset
from tests.conftest import DEFAULT_DEPTH
from tests.spark.conftest import signature

TOYS = "tests.checker.toys"


def toy(name: str, *args, **kwargs) -> ModelSpec:
    return ModelSpec.of(f"{TOYS}:{name}", *args, **kwargs)


def both(spark, spec: ModelSpec, partitions: int = 2, **options):
    """The sequential and the Spark result for one spec and options (P = 2, lineage cut every 3)."""
    sequential = explore(spec.build(), CheckOptions(**options))
    distributed = explore_spark(spark, spec, SparkOptions(partitions=partitions, checkpoint_every=3, **options))
    return sequential, distributed


# ---- complete runs: everything equal ---------------------------------------------------------------

COMPLETE = {
    "grid": (toy("grid", 3), {}),
    "grid-terminal": (toy("grid", 3, reset=False, terminal=True), {}),
    "two-phase": (toy("two_phase", 3), {}),
    "two-phase-symmetric": (toy("two_phase", 3, symmetric=True), {}),
    "two-phase-symmetry-off": (toy("two_phase", 4, symmetric=True), {"symmetry": False}),
    "climbers-no-invariant": (toy("climbers", 6, symmetric=True), {"properties": [DEADLOCK]}),
    "lamp-unmet-goal": (ModelSpec.of(f"{TOYS}:Lamp"), {}),
    "grid-max-depth": (toy("grid", 3), {"max_depth": 2}),
    "grid-continue": (toy("grid", 3, bugs=((2, 0), (1, 2)), reset=False), {"stop_on_violation": False}),
    "epochs-continue": (toy("epochs"), {"stop_on_violation": False}),
}


@pytest.mark.parametrize("case", COMPLETE, ids=list(COMPLETE))
def test_complete_runs_match_the_sequential_explorer(spark, case):
    spec, options = COMPLETE[case]
    sequential, distributed = both(spark, spec, **options)
    assert signature(distributed) == signature(sequential)
    assert distributed.engine == "spark"


def test_the_cases_cover_every_verdict_and_symmetry():
    # Guard against the table above drifting into cases that cannot tell engines apart.
    verdicts = {case: explore(spec.build(), CheckOptions(**options)).verdict
                for case, (spec, options) in COMPLETE.items()}
    assert set(verdicts.values()) == {"pass", "violation", "incomplete"}
    sym = explore(toy("two_phase", 3, symmetric=True).build())
    assert sym.symmetry and sym.stats.distinct < explore(toy("two_phase", 3).build()).stats.distinct


# ---- runs that stop at a violation: the same violation and trace ----------------------------------

STOPPED = {
    "grid-bug": (toy("grid", 3, bugs=((2, 1),)), "not_2_1", 3),
    "grid-initial-bug": (toy("grid", 3, bugs=((0, 0),)), "not_0_0", 0),
    "grid-deadlock": (toy("grid", 3, reset=False), DEADLOCK, 6),
    "philosophers-deadlock": (ModelSpec.of(f"{TOYS}:Philosophers", 3), DEADLOCK, 3),
    "climbers-symmetric": (toy("climbers", 6, symmetric=True), "nobody_on_top", 3),
    "climbers-plain": (toy("climbers", 6, symmetric=False), "nobody_on_top", 3),
    "epochs-step-invariant": (toy("epochs"), "epoch_monotonic", 3),
    # A bad state one step away from init 0, and init 1 (later in level 0) is a deadlock: the
    # deadlock, 0 steps, wins, as sequentially.
    "shorter-deadlock-later": (ModelSpec.of(f"{TOYS}:DGraph", (0, 1), ((0, (2,)), (2, (2,))), bad=(2,)),
                               DEADLOCK, 0),
}


@pytest.mark.parametrize("case", STOPPED, ids=list(STOPPED))
def test_violations_match_the_sequential_explorer(spark, case):
    spec, name, length = STOPPED[case]
    sequential, distributed = both(spark, spec)
    (violation,) = distributed.violations
    assert (violation.name, violation.trace_length) == (name, length)
    assert signature(distributed, complete=False) == signature(sequential, complete=False)
    # The whole violating level is counted, never less than the sequential explorer's partial one.
    assert distributed.stats.generated >= sequential.stats.generated
    assert distributed.stats.distinct >= sequential.stats.distinct


# ---- the Kafka model ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("symmetry", "partitions"), [(True, 2), (False, 2), (True, LOCALITY_PARTITIONS + 1)],
                         ids=["symmetry", "no-symmetry", "owned-by-fingerprint"])
def test_kafka_tiny_matches_the_sequential_explorer(spark, symmetry, partitions):
    # On P = 2 states are owned by their ZooKeeper record (the model's locality), on more
    # partitions than LOCALITY_PARTITIONS by their fingerprint: both keyings give the same search.
    spec = ModelSpec.kafka(load_preset("tiny"), symmetry=symmetry)
    sequential, distributed = both(spark, spec, partitions)
    assert signature(distributed) == signature(sequential)
    assert distributed.stats.distinct > 1000  # the preset is not trivially small
    # How often each table edge was taken (report.html draws it): the same count on both engines.
    assert distributed.coverage.edge_counts == sequential.coverage.edge_counts
    assert sum(sequential.coverage.edge_counts.values()) > len(sequential.coverage.edge_counts)


def test_the_workers_freeze_what_the_level_tasks_leave(spark):
    """PySpark's daemon runs a full collection after every task of a reused worker; the level
    tasks leave the model and its caches frozen there (`pausing_collector`), out of its walk."""
    result = explore_spark(spark, ModelSpec.kafka(load_preset("tiny")), partitions=2)
    assert result.verdict == "pass"
    # The same session's workers, reused for a job of their own right after.
    counts = spark.sparkContext.parallelize(range(4), 2).map(lambda _: gc.get_freeze_count()).collect()
    assert max(counts) > 1000


@pytest.mark.slow
def test_kafka_default_matches_the_sequential_explorer_to_a_fixed_depth(spark, default_to_depth):
    """The CI gate's preset on Spark, cut at the same depth as the sequential run of the session
    (tests/conftest.py): the same distinct states at every level, the same generated count, queue,
    outdegrees, verdict, goals (with their witness traces) and coverage. The whole preset on
    Spark is `make run`'s and bench/'s job; its pinned totals are checked once, sequentially, in
    tests/model/test_default_preset.py."""
    spec = ModelSpec.kafka(load_preset("default"))
    distributed = explore_spark(spark, spec, SparkOptions(partitions=2, checkpoint_every=3, max_depth=DEFAULT_DEPTH))
    assert signature(distributed) == signature(default_to_depth)
    assert distributed.coverage.edge_counts == default_to_depth.coverage.edge_counts
    assert distributed.verdict == "incomplete" and distributed.reason == "max_depth"
    assert len(distributed.stats.frontier_sizes) == DEFAULT_DEPTH + 1
    assert sum(g.met for g in distributed.goals.values()) >= 3   # failover, shutdown, reassignment


def test_kafka_known_violations_match_the_sequential_explorer(spark):
    """A listed Kafka 2.6 violation (kcm.model.catalogue.findings) is recorded with its shortest trace and
    does not stop the run or fail the verdict, on Spark as sequentially."""
    from kcm.model.config import ModelConfig
    cfg = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 0,
                                    "max_session_expiries": 0, "max_controlled_shutdowns": 1})
    sequential, distributed = both(spark, ModelSpec.kafka(cfg))
    assert signature(distributed) == signature(sequential)
    assert distributed.verdict == sequential.verdict == "pass"
    assert ([(v.name, v.trace_length) for v in distributed.known_violations]
            == [(v.name, v.trace_length) for v in sequential.known_violations] == [("NoShuttingDownJoinsIsr", 14)])


def test_a_resumed_run_keeps_the_known_violations_found_before_its_snapshot(spark, tmp_path):
    """The snapshot carries the known violations found so far: a run interrupted after the
    14-step NoShuttingDownJoinsIsr and resumed still reports it, with the same trace."""
    from kcm.model.config import ModelConfig
    cfg = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 0,
                                    "max_session_expiries": 0, "max_controlled_shutdowns": 1})
    spec, folder = ModelSpec.kafka(cfg), str(tmp_path / "snapshots")

    def interrupt_at_level_18(progress):
        if progress.phase == "level" and progress.level == 18:
            raise KeyboardInterrupt

    first = explore_spark(spark, spec, partitions=2, checkpoint_every=4, checkpoint_dir=folder,
                          progress=interrupt_at_level_18)
    assert first.reason == "interrupted"
    resumed = explore_spark(spark, spec, partitions=2, checkpoint_every=4, checkpoint_dir=folder, resume_from=folder)
    assert resumed.extra["spark"]["resumed_from_level"] > 14
    assert resumed.verdict == "pass"
    assert [(v.name, v.trace_length) for v in resumed.known_violations] == [("NoShuttingDownJoinsIsr", 14)]
    assert resumed.known_violations[0].trace == first.known_violations[0].trace


# ---- the visited set stays where it is ---------------------------------------------------------------


def _lineage(jrdd, cross_shuffles: bool) -> tuple[set[int], int]:
    """Ids of the RDDs in `jrdd`'s lineage (itself included), crossing shuffles only if
    `cross_shuffles`, and the shuffle dependencies met on the way."""
    seen, todo, shuffles = set(), [jrdd], 0
    while todo:
        rdd = todo.pop()
        if rdd.id() in seen:
            continue
        seen.add(rdd.id())
        deps = rdd.dependencies()
        for i in range(deps.size()):
            dep = deps.apply(i)
            shuffle = "ShuffleDependency" in dep.getClass().getName()
            shuffles += shuffle
            if cross_shuffles or not shuffle:
                todo.append(dep.rdd())
    return seen, shuffles


def _narrow_ancestors(jrdd) -> set[int]:
    """Ids of the RDDs `jrdd` reads without crossing a shuffle (itself included)."""
    return _lineage(jrdd, cross_shuffles=False)[0]


def _shuffles(jrdd) -> int:
    """Shuffle dependencies anywhere in `jrdd`'s lineage."""
    return _lineage(jrdd, cross_shuffles=True)[1]


def test_visited_set_is_never_shuffled(spark):
    levels, P = 5, 3
    explorer = _SparkExplorer(spark, toy("two_phase", 3), SparkOptions(partitions=P, checkpoint_every=0))
    explorer._start()
    level0 = explorer.records._jrdd.rdd()
    for _ in range(levels):
        explorer._expand_level()
        assert explorer.records.getNumPartitions() == P
        assert explorer.records.partitioner == Partitioner(P, owner_of)
    visited = explorer.records.filter(is_visited)._jrdd.rdd()
    # The visited records of level 5 come from level 0's through narrow dependencies only...
    assert level0.id() in _narrow_ancestors(visited)
    # ...and the lineage holds one shuffle per level (the candidates) plus level 0's partitionBy.
    assert _shuffles(visited) == levels + 1
    for rdd in explorer.cached:
        rdd.unpersist()


def test_shuffle_bytes_follow_the_candidates_not_the_visited_set(spark):
    teeth, length = 20_000, 6
    bytes_by_level = {}
    for n in (0, teeth):
        result = explore_spark(spark, ModelSpec.of("tests.spark.models:Comb", n, length),
                               partitions=2, checkpoint_every=0)
        assert result.stats.distinct == 1 + n + length
        bytes_by_level[n] = [lv["shuffle_write_bytes"] for lv in result.extra["spark"]["levels"]]
    narrow, wide = bytes_by_level[0], bytes_by_level[teeth]
    assert len(narrow) == len(wide) == length + 1
    # The figures are read at all; the last level (the spine's end) has no candidate to move.
    assert all(b > 0 for b in wide[:-1]) and wide[-1] == narrow[-1] == 0
    # From level 2 on, each level moves one candidate in both runs; the wide run's visited set
    # holds 20,000 more fingerprints (320 kB), none of which may travel.
    for level in range(1, length + 1):
        assert abs(wide[level] - narrow[level]) < 1_000, (level, narrow, wide)


# ---- checkpoints and resume ----------------------------------------------------------------------------


def test_interrupted_run_resumes_from_its_snapshot(spark, tmp_path, monkeypatch):
    spec = toy("two_phase", 3)
    folder = str(tmp_path / "snapshots")

    def interrupt_at_level_7(progress):
        if progress.phase == "level" and progress.level == 7:
            raise KeyboardInterrupt

    first = explore_spark(spark, spec, partitions=2, checkpoint_every=2, checkpoint_dir=folder,
                          progress=interrupt_at_level_7)
    assert (first.verdict, first.reason) == ("incomplete", "interrupted")
    assert first.stats.depth == 7
    resumed = explore_spark(spark, spec, partitions=2, checkpoint_every=2, checkpoint_dir=folder,
                            resume_from=folder)
    assert resumed.extra["spark"]["resumed_from_level"] == 6
    assert signature(resumed) == signature(explore(spec.build()))
    with pytest.raises(UsageError, match="another model, by another kcm version or with other options"):
        explore_spark(spark, toy("two_phase", 4), partitions=2, resume_from=folder)
    monkeypatch.setattr(snapshots, "RECORDS_FORMAT", snapshots.RECORDS_FORMAT + 1)  # a newer kcm
    with pytest.raises(UsageError, match="by another kcm version"):
        explore_spark(spark, spec, partitions=2, resume_from=folder)
    with pytest.raises(UsageError, match="no complete snapshot"):
        explore_spark(spark, spec, resume_from=str(tmp_path / "empty"))


# ---- Ctrl-C wherever it lands --------------------------------------------------------------------------


@pytest.mark.parametrize("landing", ["between calls", "20 ms later", "during a job"])
def test_a_sigint_anywhere_in_a_level_ends_the_run_as_interrupted(spark, landing, caplog):
    """A real SIGINT sent to the driver's main thread: from the progress callback (it lands between
    two Spark calls), 20 ms after a level (most likely while the next level's RDDs are built, inside
    py4j), or once the status tracker shows the level's job running. Wherever it lands, the run
    ends with reason "interrupted" at a level it completed, and the Spark context still works.
    Before the interrupt was deferred, a SIGINT inside a py4j call broke the gateway connection and
    the cleanup's `cancelJobGroup` raised `Py4JNetworkError`; py4j logs every call cut in half."""
    import logging
    import signal
    import threading
    import time

    main = threading.main_thread().ident
    sc = spark.sparkContext

    def send_when_a_job_runs() -> None:
        deadline = time.monotonic() + 30
        while not sc.statusTracker().getActiveJobsIds() and time.monotonic() < deadline:
            time.sleep(0.002)
        signal.pthread_kill(main, signal.SIGINT)

    def interrupt_after_level_4(progress):
        if progress.phase != "level" or progress.level != 4:
            return
        if landing == "between calls":
            signal.pthread_kill(main, signal.SIGINT)
        elif landing == "20 ms later":
            threading.Timer(0.02, signal.pthread_kill, (main, signal.SIGINT)).start()
        else:
            threading.Thread(target=send_when_a_job_runs, daemon=True).start()

    caplog.set_level(logging.INFO, logger="py4j")
    spec, before = toy("grid", 6), signal.getsignal(signal.SIGINT)
    result = explore_spark(spark, spec, partitions=2, progress=interrupt_after_level_4)
    assert (result.verdict, result.reason) == ("incomplete", "interrupted")
    assert 3 <= result.stats.depth <= 6   # what the completed levels found, not a partial level
    assert not [r.getMessage() for r in caplog.records if r.name.startswith("py4j") and "Error while" in r.getMessage()]
    assert signal.getsignal(signal.SIGINT) is before   # the explorer's handler is gone
    assert signature(explore_spark(spark, spec, partitions=2)) == signature(explore(spec.build()))
