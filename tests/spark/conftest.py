"""A module-scoped `local[2]` Spark session for the Spark tests, and result comparisons.

Executors import the toy models (`tests.checker.toys`, `tests.spark.models`) from the repository
root, put on their `PYTHONPATH`. One session per test module: PySpark keeps one JVM per process,
so the second and later sessions start in a second or two.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.spark_explore.session import spark_session

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = spark_session(
        "local[2]", app_name="kcm-tests", python_path=(REPO_ROOT,),
        checkpoint_dir=str(tmp_path_factory.mktemp("spark-checkpoints")))
    yield session
    session.stop()


def signature(result, complete: bool = True) -> dict:
    """What two engines must agree on. A run stopped at a violation counts its last level whole on
    Spark and partly sequentially, so its counters are left out (`complete=False`)."""
    out = {
        "verdict": result.verdict,
        "reason": result.reason,
        "violations": [(v.name, v.kind, v.trace) for v in result.violations],
        "goals": {name: (g.met, g.trace) for name, g in result.goals.items()},
        "depth": result.stats.depth,
        "symmetry": result.symmetry,
        "checked": result.checked,
    }
    if complete:
        s = result.stats
        out.update(generated=s.generated, distinct=s.distinct, queue=s.queue,
                   frontier_sizes=s.frontier_sizes, outdegree=s.outdegree, coverage=result.coverage)
    return out
