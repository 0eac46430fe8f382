"""States as bytes between Spark stages: the model's own codec, else pickle keeping the identity
of the model's constants.

A model may say how its states become bytes (`Model.encode_state` / `decode_state`; the Kafka
model does, in `model/checking/codec.py`: a tuple of its records' marshals, faster than the
pickle below, which calls Python code for every record, and shared between a state and its
successors, so that PySpark's pickled batches write a shared record once). `state_codec(model)`
takes those when the model overrides them, and falls back to `StateCodec`, described here, for
other models.

A state crosses a process boundary twice per level (a candidate to its owner, a frontier state to
the next expansion), so it travels as bytes: `pickle`, protocol 5. Pickles need not be canonical
here (identity comes from `model.fingerprint`), but decoding must give back a state that behaves
exactly as the original in the model's code, and plain pickling does not quite: it rebuilds every
object, so a module-level sentinel such as the Kafka model's `NO_ZNODE` (a record compared with
`is`) comes back as an equal but different object, and `z is NO_ZNODE` turns false. The Spark run
then explores a different graph (it did, on `tiny`).

So the codec pickles the module-level constants of the model's package by reference: when it
meets an object that *is* one of them, it writes "attribute `name` of module `m`" and decoding
returns that very object; equal copies that were not the constant stay copies. Identity is then
what it was in the process that made the state, which is all a model can rely on. The constants
are the records (namedtuples, dataclass instances and other non-builtin values, Enum members
aside, which pickle by name anyway) bound at module level in the model class's package
(`kcm.model.*` for the Kafka model). Pickle's `reducer_override` hook is not called for builtin
values (ints, strings, plain tuples, ...), so the check costs one dictionary lookup per record.
"""

from __future__ import annotations

import importlib
import io
import pickle
import sys
import types
from enum import Enum
from typing import Any

# Exact builtin types: pickle never offers their values to `reducer_override`, and (small ints,
# strings) their identity is no model's business.
_BUILTIN = frozenset({int, float, complex, str, bytes, bytearray, bool, type(None), tuple, frozenset,
                      list, dict, set})


def _is_record(value: Any) -> bool:
    return not (type(value) in _BUILTIN or isinstance(value, (Enum, type, types.ModuleType))
                or callable(value))


def constant(module: str, name: str) -> Any:
    """The module-level object `module.name` (what a pickled constant decodes to)."""
    return getattr(sys.modules.get(module) or importlib.import_module(module), name)


def _package_of(model: Any) -> str:
    module = type(model).__module__
    return module.rpartition(".")[0] or module


def model_constants(model: Any) -> dict[int, tuple[str, str]]:
    """`id(obj) -> (module, name)` for the record constants of the model's loaded modules."""
    package = _package_of(model)
    found: dict[int, tuple[str, str]] = {}
    for module_name, module in sorted(sys.modules.items()):
        if module is None or not (module_name == package or module_name.startswith(package + ".")):
            continue
        for name, value in vars(module).items():
            if not name.startswith("__") and _is_record(value):
                found.setdefault(id(value), (module_name, name))
    return found


class _Pickler(pickle.Pickler):
    """A protocol-5 pickler writing the objects in `constants` as references."""

    def __init__(self, buffer: io.BytesIO, constants: dict[int, tuple[str, str]]) -> None:
        super().__init__(buffer, protocol=5)
        self.constants = constants

    def reducer_override(self, obj: Any) -> Any:
        ref = self.constants.get(id(obj))
        return NotImplemented if ref is None else (constant, ref)


class StateCodec:
    """`encode(state) -> bytes` and `decode(bytes) -> state` for one model (see the docstring)."""

    def __init__(self, model: Any) -> None:
        self._constants = model_constants(model)
        # Keep the constants alive, so that their ids stay theirs.
        self._keep = [constant(m, n) for m, n in self._constants.values()]

    def encode(self, state: Any) -> bytes:
        if not self._constants:
            return pickle.dumps(state, protocol=5)
        buffer = io.BytesIO()
        _Pickler(buffer, self._constants).dump(state)
        return buffer.getvalue()

    @staticmethod
    def decode(data: bytes) -> Any:
        return pickle.loads(data)


class ModelCodec:
    """The model's own `encode_state` / `decode_state`, with `StateCodec`'s interface."""

    def __init__(self, model: Any) -> None:
        self.encode = model.encode_state
        self.decode = model.decode_state


def has_own_codec(model: Any) -> bool:
    """Whether the model overrides `Model.encode_state` and `Model.decode_state`."""
    from kcm.checker.engine.contract import Model

    cls = type(model)
    return (getattr(cls, "encode_state", Model.encode_state) is not Model.encode_state
            and getattr(cls, "decode_state", Model.decode_state) is not Model.decode_state)


def state_codec(model: Any) -> ModelCodec | StateCodec:
    """The codec for the model's states: its own when it has one, else `StateCodec(model)`."""
    return ModelCodec(model) if has_own_codec(model) else StateCodec(model)
