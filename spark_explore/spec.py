"""Which model to explore, said in a way an executor can act on: a `ModelSpec`.

Spark ships functions and their arguments to executor processes by pickling them. A model object
is a poor thing to ship: it may hold caches (the Kafka model caches fingerprints by record), its
properties are lambdas, and its classes must be importable on the other side anyway. So the driver
ships a small description instead, `ModelSpec(factory, args, kwargs)`: a "module:callable" path and
the (picklable, hashable) arguments to call it with. Each executor process builds the model once
and keeps it (`load_model`), so caches warm up across tasks and levels, since Spark reuses its
Python workers.

`ModelSpec.kafka(cfg, symmetry=...)` names the Kafka model; toys and other models name their
factory: `ModelSpec.of("tests.checker.toys:grid", 3, bugs=((2, 1),))`. The factory must be
importable in the executors' Python (an installed package, or a folder put on `PYTHONPATH` with
`spark_session(python_path=...)`).

The spec is also what a checkpoint records, so a resumed run can refuse a checkpoint written for
another model, and what a trace file can name to rebuild the model (`as_meta`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from kcm.checker.engine.contract import Model

KAFKA_FACTORY = "kcm.model.checking.kafka_model:KafkaModel"


@dataclass(frozen=True)
class ModelSpec:
    """A model as `factory(*args, **dict(kwargs))`; frozen and hashable, so executors cache by it."""

    #: "package.module:callable", a class or a function returning a `Model`.
    factory: str
    args: tuple = ()
    #: Keyword arguments as sorted (name, value) pairs (a dict would not be hashable).
    kwargs: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, factory: str, *args: Any, **kwargs: Any) -> ModelSpec:
        """`ModelSpec.of("pkg.mod:make", 3, symmetric=True)` for `make(3, symmetric=True)`."""
        return cls(factory, tuple(args), tuple(sorted(kwargs.items())))

    @classmethod
    def kafka(cls, cfg: Any, *, symmetry: bool = True) -> ModelSpec:
        """The Kafka controller model for a `ModelConfig` (a frozen, picklable dataclass)."""
        return cls.of(KAFKA_FACTORY, cfg, symmetry=symmetry)

    def build(self) -> Model:
        """A fresh model (the driver calls this; executors go through `load_model`)."""
        module_name, sep, attr = self.factory.partition(":")
        if not sep or not module_name or not attr:
            raise ValueError(f"model factory '{self.factory}' is not of the form 'module:callable'")
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
        return target(*self.args, **dict(self.kwargs))

    def as_meta(self) -> dict[str, Any]:
        """The factory and arguments as text, for reports."""
        return {"model_factory": self.factory, "args": repr(self.args), "kwargs": dict(self.kwargs)}


# One model per spec per process: executors rebuild nothing between tasks or levels.
_MODELS: dict[ModelSpec, Model] = {}


def load_model(spec: ModelSpec) -> Model:
    """The model for `spec`, built on first use in this process and kept."""
    model = _MODELS.get(spec)
    if model is None:
        model = _MODELS[spec] = spec.build()
    return model
