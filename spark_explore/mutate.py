"""Mutation testing on Spark: one mutant per task.

The driver generates the mutants (kcm.checker.mutation), explores the clean model on every config
(the baselines, with the lines each run executed), and broadcasts what an executor needs to rebuild
any mutant: the model's source files as the driver read them, the files and operators asked for,
the configs, the baselines and the budget. A task receives a mutant's id only; the executor
regenerates the mutants of those sources (once per Python worker, cached), picks the one with that
id, loads it as its own package and explores it exactly as the sequential engine does
(`run_mutant`). So the executors need not have the same model sources installed as the driver,
only the same kcm checker.

Each mutant is its own one-task job, submitted from a pool of driver threads as wide as the
cluster's default parallelism: outcomes come back as mutants finish (progress), and the table is
put back in generation order, so it is the sequential engine's table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed

from kcm.checker.mutation import TIMED_OUT, Baseline, Budget, Mutant, Outcome, mutant_by_id, run_mutant


def _run_task(shared: Mapping, mutant_id: str) -> Outcome:
    m = mutant_by_id(shared["sources"], mutant_id, shared["files"], shared["operators"])
    return run_mutant(m, shared["configs"], shared["bases"], shared["budget"], shared["sources"])


def run_spark(spark, mutants: list[Mutant], configs: list, bases: list[Baseline], budget: Budget,
              sources: Mapping[str, str], files, operators,
              on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Explore every mutant in its own Spark task; the outcomes in the order of `mutants`."""
    sc = spark.sparkContext
    shared = sc.broadcast({"sources": dict(sources), "files": tuple(files or ()), "operators": tuple(operators or ()),
                           "configs": list(configs), "bases": list(bases), "budget": budget})

    def one(mutant_id: str) -> Outcome:
        rdd = sc.parallelize([mutant_id], 1)
        return rdd.map(lambda mid: _run_task(shared.value, mid)).collect()[0]

    by_id: dict[str, Outcome] = {}
    try:
        with ThreadPoolExecutor(max_workers=max(1, sc.defaultParallelism)) as pool:
            futures = {pool.submit(one, m.id): m for m in mutants}
            for future in as_completed(futures):
                try:
                    outcome = future.result()
                except Exception as exc:  # a lost executor or a killed worker
                    # Not the mutant's doing (run_mutant catches what a mutant raises): the mutant
                    # was not judged, which makes the run incomplete, like a timeout.
                    m = futures[future]
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
                    outcome = Outcome(m.id, m.file, m.line, m.operator, TIMED_OUT, error=f"Spark task failed: {first}")
                by_id[outcome.id] = outcome
                if on_done is not None:
                    on_done(outcome)
    finally:
        shared.unpersist()
    return [by_id[m.id] for m in mutants]
