"""Which model: a `ModelSpec`, the one way the engine names a model it did not build itself.

A model object is a poor thing to hand to another process or to write into a file: it may hold
caches, its properties are closures, and its classes must be importable on the other side anyway.
So whatever needs a model elsewhere carries a small description instead, `ModelSpec(factory,
args, kwargs)`: a "package.module:callable" path and the arguments to call it with.

- Spark ships a spec to its executors (pickled; frozen and hashable, so each executor process
  builds the model once and keeps it, `load_model`) and records it in a checkpoint, so that a
  resumed run can refuse a checkpoint written for another model.
- A trace file names its model by a spec (`to_meta`, `from_meta`) so that a replay rebuilds it:
  ITF's `#meta.model_factory` is the factory, `#meta.model_args` the keyword arguments as plain
  JSON (a spec written to a trace takes keyword arguments only, and each must survive JSON).

The factory must be importable where the model is built: an installed package, or a folder put
on `PYTHONPATH`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Self

from kcm.checker.engine.contract import Model
from kcm.checker.engine.errors import UsageError


@dataclass(frozen=True)
class ModelSpec:
    """A model as `factory(*args, **dict(kwargs))`; frozen and hashable, so executors cache by it."""

    #: "package.module:callable", a class or a function returning a `Model`.
    factory: str
    args: tuple = ()
    #: Keyword arguments as sorted (name, value) pairs (a dict would not be hashable).
    kwargs: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, factory: str, *args: Any, **kwargs: Any) -> Self:
        """`ModelSpec.of("pkg.mod:make", 3, symmetric=True)` for `make(3, symmetric=True)`."""
        return cls(factory, tuple(args), tuple(sorted(kwargs.items())))

    def build(self) -> Model:
        """A fresh model (a process that builds it more than once goes through `load_model`)."""
        module_name, sep, attr = self.factory.partition(":")
        if not sep or not module_name or not attr:
            raise ValueError(f"model factory '{self.factory}' is not of the form 'module:callable'")
        return load_factory(self.factory)(*self.args, **dict(self.kwargs))

    def to_meta(self) -> dict[str, Any]:
        """The spec as a trace's `#meta` names it: `model_factory` and `model_args`."""
        if self.args:
            raise ValueError(f"a trace names its model by keyword arguments only; '{self.factory}' has {self.args!r}")
        return {"model_factory": self.factory, "model_args": dict(self.kwargs)}

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> Self:
        """The spec a trace's `#meta` names; `UsageError` if it names none."""
        factory = meta.get("model_factory")
        if not isinstance(factory, str):
            raise UsageError("the trace does not name a model factory (#meta.model_factory)")
        return cls.of(factory, **(meta.get("model_args") or {}))


def load_factory(name: str) -> Callable[..., Model]:
    """The callable named by "package.module:function"; `UsageError` if it cannot be found."""
    module_name, _, attr = name.partition(":")
    if not module_name or not attr:
        raise UsageError(f"bad model factory '{name}' (expected 'package.module:function')")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"cannot import model factory module '{module_name}': {exc}") from None
    for part in attr.split("."):
        target = getattr(target, part, None)
    if not callable(target):
        raise UsageError(f"model factory '{name}' is not a callable in '{module_name}'")
    return target


# One model per spec per process: executors rebuild nothing between tasks or levels.
_MODELS: dict[ModelSpec, Model] = {}


def load_model(spec: ModelSpec) -> Model:
    """The model for `spec`, built on first use in this process and kept."""
    model = _MODELS.get(spec)
    if model is None:
        model = _MODELS[spec] = spec.build()
    return model
