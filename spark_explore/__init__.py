"""kcm.spark_explore: exhaustive exploration and simulation of the model on Spark.

The public API (imported lazily, so that `import kcm.spark_explore` does not load PySpark):

- `spark_session(master=None, ...)`: a quiet session (`session.py`).
- `ModelSpec.kafka(cfg, symmetry=...)`, `ModelSpec.of("module:factory", *args, **kwargs)`: which
  model executors build (`spec.py`).
- `explore_spark(spark, spec, SparkOptions(...)) -> CheckResult`: the distributed BFS, with the
  sequential explorer's results (`bfs.py`; the executor side is `level.py`, the visited set
  `fpset.py`, states on the wire `codec.py`, snapshots `checkpoint.py`, Spark figures `metrics.py`).
- `simulate_spark(spark, spec, runs, depth, seed) -> SimulationResult`: random walks (`simulate.py`).

See docs/spark.md for running on a cluster.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "spark_session": "kcm.spark_explore.session",
    "ModelSpec": "kcm.spark_explore.spec",
    "explore_spark": "kcm.spark_explore.bfs",
    "SparkOptions": "kcm.spark_explore.bfs",
    "LevelFigures": "kcm.spark_explore.bfs",
    "simulate_spark": "kcm.spark_explore.simulate",
    "SimulationResult": "kcm.spark_explore.simulate",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kcm.spark_explore' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)
