"""The Kafka model as a `ModelSpec`, the engine's one way to name a model another process builds.

Spark ships a spec, not a model, to its executors, and records it in a checkpoint
(`kcm.checker.engine.model_spec` says why). This module adds the spec of the Kafka controller
model, `ModelSpec.kafka(cfg, symmetry=...)`, for the Spark explorer and its callers; toys and
other models name their factory: `ModelSpec.of("tests.checker.toys:grid", 3, bugs=((2, 1),))`.
The factory must be importable in the executors' Python (an installed package, or a folder put on
`PYTHONPATH` with `spark_session(python_path=...)`).
"""

from __future__ import annotations

from typing import Any

from kcm.checker.engine import model_spec
from kcm.checker.engine.model_spec import load_model

__all__ = ["KAFKA_FACTORY", "ModelSpec", "load_model"]

KAFKA_FACTORY = "kcm.model.checking.kafka_model:KafkaModel"


class ModelSpec(model_spec.ModelSpec):
    """The engine's `ModelSpec`, with a constructor for the Kafka model."""

    @classmethod
    def kafka(cls, cfg: Any, *, symmetry: bool = True) -> ModelSpec:
        """The Kafka controller model for a `ModelConfig` (a frozen, picklable dataclass)."""
        return cls.of(KAFKA_FACTORY, cfg, symmetry=symmetry)
