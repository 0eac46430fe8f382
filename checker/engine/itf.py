"""The Informal Trace Format (ITF, `.itf.json`): writing counterexamples and reading them back.

The format is Apalache's ADR-015 (`ADR_URL` below): a JSON object with `vars`
(the variable names every state sets), `states` (one object per state) and an optional `#meta`.
Values are encoded as the ADR says:

| Python value                       | ITF                                                  |
|------------------------------------|------------------------------------------------------|
| bool                               | `true` / `false`                                     |
| int (any size)                     | `{"#bigint": "-12"}` (never a plain JSON number)     |
| str                                | a JSON string                                        |
| Enum member (IntEnum included)     | its name, a JSON string (an uninterpreted value)     |
| tuple                              | `{"#tup": [...]}`                                    |
| list                               | a JSON array (an ITF sequence)                       |
| frozenset / set                    | `{"#set": [...]}`, elements in a canonical order     |
| dict / other mapping               | `{"#map": [[k, v], ...]}`                            |
| dataclass, named tuple             | a record `{"field": ...}`                            |
| dataclass with `__itf_variant__`   | a variant `{"tag": "ClassName", "value": record}`    |
| None                               | `{"#unserializable": "None"}` (our documented choice)|
| anything else                      | `{"#unserializable": repr(value)}`                   |

Records carry no class name; a class that is one member of a sum type (a message kind in a
network queue, say) sets the class attribute `__itf_variant__ = True` so that the kind survives.

`#meta` (free-form in the ADR) holds: `format` "ITF", `format-description` (the ADR's address),
`source`, `checker` "kcm", `model`, `invariant` and `kind` (the violated property; the ADR
suggests it, apalache#1728 asks for it), `actions` (the action label per state, `null` for the
initial one), `trace_length`, `initial_index` (the position of the first state in
`Model.init_states()`), `config`, `loop` for a lasso (also ADR-015's top-level `loop`: the index of
the state where the cycle starts; the last state equals it), and for replay the model's
`ModelSpec` as `model_factory` ("module:function") with `model_args` (keyword arguments;
`kcm.checker.engine.model_spec`). Each state's `#meta` holds `index`, `action` (the label, as
`Model.format_action` renders it), `action_kind` and `action_fields` (the action's own fields as an
ITF record, which the sequence diagram reads its actors from), and `action_description` when
`Model.describe_action` says more than the label (`ControllerProcessEvent(broker=0): Startup`):
the text traces show it, readers of other ITF producers' files ignore it, and replay keeps
matching the label.

Reading (`read_itf`) decodes values back to plain, hashable Python: ints, bools, strings, tuples
(`#tup`), `ItfList` (JSON arrays), frozensets (`#set`), `ItfMap` (`#map`), `Record` (records and
variants), None (`#unserializable` "None") and `Unserializable`. Every problem with a file (missing,
not JSON, not ITF, a bad value) raises `kcm.checker.engine.errors.UsageError` with one line naming the file and the
problem. Plain JSON integers (ITF before 2023-09-14) are accepted; other numbers are not.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from kcm.checker.engine.errors import UsageError
from kcm.checker.engine.model_spec import ModelSpec

ADR_URL = "https://apalache-mc.org/docs/adr/015adr-trace.html"
_BIGINT = re.compile(r"-?[0-9]+\Z")
_TAGS = ("#bigint", "#tup", "#set", "#map", "#unserializable")


# ---- decoded values ---------------------------------------------------------------------------


class _FrozenMapping(Mapping):
    """An immutable, hashable mapping; equal only to a mapping of the same class."""

    __slots__ = ("_items", "_hash")

    def __init__(self, items: Sequence[tuple[Any, Any]] = ()) -> None:
        self._items = dict(items)
        self._hash: int | None = None

    def __getitem__(self, key: Any) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._items == other._items

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((type(self).__name__, frozenset(self._items.items())))
        return self._hash

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._items!r})"


class Record(_FrozenMapping):
    """An ITF record (a JSON object); variants are records with the fields `tag` and `value`."""

    __slots__ = ()

    @property
    def is_variant(self) -> bool:
        return set(self._items) == {"tag", "value"} and isinstance(self._items["tag"], str)


class ItfMap(_FrozenMapping):
    """An ITF map (`#map`): keys may be any value."""

    __slots__ = ()


class ItfList(tuple):
    """An ITF sequence (a JSON array), kept apart from tuples (`#tup`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ItfList({list(self)!r})"


@dataclass(frozen=True)
class Unserializable:
    """An `#unserializable` value other than "None": only its text is known."""

    text: str

    def __str__(self) -> str:
        return self.text


# ---- encoding ---------------------------------------------------------------------------------


def _set_key(encoded: Any) -> str:
    return json.dumps(encoded, sort_keys=True, separators=(",", ":"))


def encode_value(value: Any) -> Any:
    """A Python value as an ITF expression (see the table in the module docstring)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, int):
        return {"#bigint": str(int(value))}
    if isinstance(value, str):
        return value
    if value is None:
        return {"#unserializable": "None"}
    if isinstance(value, Unserializable):
        return {"#unserializable": value.text}
    if isinstance(value, Record):
        return {str(k): encode_value(v) for k, v in value.items()}
    if isinstance(value, Mapping):
        return {"#map": [[encode_value(k), encode_value(v)] for k, v in value.items()]}
    if isinstance(value, ItfList | list):
        return [encode_value(v) for v in value]
    if isinstance(value, tuple):
        if hasattr(value, "_fields"):  # a named tuple is a record
            return {name: encode_value(v) for name, v in zip(value._fields, value)}
        return {"#tup": [encode_value(v) for v in value]}
    if isinstance(value, frozenset | set):
        return {"#set": sorted((encode_value(v) for v in value), key=_set_key)}
    if is_dataclass(value) and not isinstance(value, type):
        record = {f.name: encode_value(getattr(value, f.name)) for f in fields(value)}
        if getattr(type(value), "__itf_variant__", False):
            return {"tag": type(value).__name__, "value": record}
        return record
    return {"#unserializable": repr(value)}


def action_fields(action: Any) -> Any:
    """An action's own fields as an ITF record ({} for an action without fields or not a dataclass)."""
    if is_dataclass(action) and not isinstance(action, type):
        return {f.name: encode_value(getattr(action, f.name)) for f in fields(action)}
    return {}


def _plain_json(value: Any) -> Any:
    """A config or argument value as plain JSON for `#meta` (free-form, read by people)."""
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain_json(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | frozenset | set):
        items = [_plain_json(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, frozenset | set) else items
    return repr(value)


def itf_document(
    model: Any,
    trace: Sequence[tuple[Any, Any]],
    *,
    invariant: str | None = None,
    kind: str | None = None,
    source: str | None = None,
    config: Any = None,
    model_spec: ModelSpec | None = None,
    description: str | None = None,
    loop: int | None = None,
) -> dict:
    """The ITF document (a JSON-ready dict) of `trace`, a sequence of `(action, state)` whose
    first action is None. States become `model.fields(state)`; every state must set the same
    variables. A lasso (a livelock) gives `loop`, the index of the state its cycle starts at; its
    last state equals that one (the last step closes the cycle, so its action is recorded).
    `model_spec` names the model for a replay."""
    if not trace:
        raise ValueError("an ITF trace needs at least the initial state")
    states, labels = [], []
    names: list[str] | None = None
    describe = getattr(model, "describe_action", None)  # a model need not derive from `Model`
    for index, (action, state) in enumerate(trace):
        variables = model.fields(state)
        if names is None:
            names = list(variables)
        elif list(variables) != names:
            raise ValueError(f"state {index} sets {sorted(variables)}, the first state {sorted(names)}")
        label = None if action is None else model.format_action(action)
        labels.append(label)
        meta: dict[str, Any] = {"index": index, "action": label}
        if action is not None:
            meta["action_kind"] = model.action_name(action)
            meta["action_fields"] = action_fields(action)
            description = describe(trace[index - 1][1], action) if describe is not None else label
            if description != label:
                meta["action_description"] = description
        states.append({"#meta": meta, **{name: encode_value(v) for name, v in variables.items()}})
    top: dict[str, Any] = {
        "format": "ITF",
        "format-description": ADR_URL,
        "source": source or getattr(model, "name", "model"),
        "checker": "kcm",
        "model": getattr(model, "name", "model"),
    }
    if description:
        top["description"] = description
    if invariant is not None:
        top["invariant"] = invariant
        top["kind"] = kind
    top["actions"] = labels
    top["trace_length"] = len(trace) - 1
    if loop is not None:
        top["loop"] = loop
    # Which initial state, so that a replay by labels starts from the right one.
    with contextlib.suppress(ValueError):
        top["initial_index"] = list(model.init_states()).index(trace[0][1])
    if config is not None:
        top["config"] = _plain_json(config)
    if model_spec is not None:
        named = model_spec.to_meta()
        top["model_factory"] = named["model_factory"]
        top["model_args"] = _plain_json(named["model_args"])
    document: dict[str, Any] = {"#meta": top, "vars": names, "states": states}
    if loop is not None:
        document["loop"] = loop  # ADR-015's own field; `#meta.loop` repeats it for readers of #meta
    return document


def write_itf(path: str | Path, document: Mapping) -> Path:
    """Write an ITF document (from `itf_document`) to `path`; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path


# ---- decoding ---------------------------------------------------------------------------------


class _Bad(Exception):
    """A decoding problem; `read_itf` turns it into one UsageError line with the file name."""


def decode_value(expr: Any, where: str = "value") -> Any:
    """An ITF expression as a plain, hashable Python value; raises `ValueError` naming `where`."""
    try:
        return _decode(expr, where)
    except _Bad as exc:
        raise ValueError(str(exc)) from None


def _decode(expr: Any, where: str) -> Any:
    if isinstance(expr, bool | str):
        return expr
    if isinstance(expr, int):
        return expr  # a plain JSON integer: ITF before rev 2023-09-14
    if isinstance(expr, float):
        raise _Bad(f"{where}: the number {expr} is not an ITF value (integers are {{\"#bigint\": ...}})")
    if isinstance(expr, list):
        return ItfList(_decode(e, f"{where}[{i}]") for i, e in enumerate(expr))
    if not isinstance(expr, dict):
        raise _Bad(f"{where}: {type(expr).__name__} is not an ITF value")
    tags = [k for k in expr if k.startswith("#")]
    if not tags:
        return Record([(k, _decode(v, f"{where}.{k}")) for k, v in expr.items()])
    tag = tags[0]
    if len(expr) != 1 or tag not in _TAGS:
        raise _Bad(f"{where}: unknown ITF form with keys {sorted(expr)}")
    return _decode_tagged(tag, expr[tag], where)


def _decode_tagged(tag: str, body: Any, where: str) -> Any:
    """The value of a tagged ITF form `{tag: body}` (one of `_TAGS`)."""
    if tag == "#bigint":
        if not isinstance(body, str) or not _BIGINT.match(body):
            raise _Bad(f"{where}: bad #bigint {body!r}")
        return int(body)
    if tag == "#unserializable":
        if not isinstance(body, str):
            raise _Bad(f"{where}: #unserializable must hold a string")
        return None if body == "None" else Unserializable(body)
    if not isinstance(body, list):
        raise _Bad(f"{where}: {tag} must hold a JSON array")
    if tag == "#tup":
        return tuple(_decode(e, f"{where}[{i}]") for i, e in enumerate(body))
    if tag == "#set":
        return frozenset(_decode(e, f"{where}{{{i}}}") for i, e in enumerate(body))
    pairs = []
    for i, pair in enumerate(body):
        if not isinstance(pair, list) or len(pair) != 2:
            raise _Bad(f"{where}: #map entry {i} is not a [key, value] pair")
        pairs.append((_decode(pair[0], f"{where}<key {i}>"), _decode(pair[1], f"{where}<value {i}>")))
    return ItfMap(pairs)


@dataclass(frozen=True)
class ItfTrace:
    """A decoded ITF trace: variable names, states (variable -> plain value), per-state action
    labels (None where unknown, always for state 0), per-state action fields, `#meta`, and per
    state the action's description where the file has one (`described` reads it)."""

    vars: tuple[str, ...]
    states: tuple[dict[str, Any], ...]
    actions: tuple[str | None, ...]
    action_fields: tuple[Record, ...]
    action_kinds: tuple[str | None, ...]
    meta: dict[str, Any]
    loop: int | None = None
    descriptions: tuple[str | None, ...] = ()

    def described(self, i: int) -> str | None:
        """Step `i`'s action as a reader wants it: its description (`Model.describe_action`) when
        the file has one, else its label (None when neither is recorded)."""
        text = self.descriptions[i] if i < len(self.descriptions) else None
        return text if text is not None else self.actions[i]

    @property
    def invariant(self) -> str | None:
        return self.meta.get("invariant")

    @property
    def kind(self) -> str | None:
        return self.meta.get("kind")


def parse_itf(document: Any) -> ItfTrace:
    """Check and decode a parsed ITF JSON document; raises `ValueError` naming the problem."""
    try:
        return _parse(document)
    except _Bad as exc:
        raise ValueError(str(exc)) from None


def _parse(doc: Any) -> ItfTrace:
    if not isinstance(doc, dict):
        raise _Bad("not an ITF trace (the top level is not a JSON object)")
    for key in ("vars", "states"):
        if key not in doc:
            raise _Bad(f"not an ITF trace ('{key}' is missing)")
    names = doc["vars"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _Bad("'vars' must be an array of strings")
    meta = doc.get("#meta", {})
    if not isinstance(meta, dict):
        raise _Bad("'#meta' must be an object")
    loop = doc.get("loop", meta.get("loop"))
    if loop is not None and (not isinstance(loop, int) or isinstance(loop, bool)):
        raise _Bad("'loop' must be an integer")
    raw_states = doc["states"]
    if not isinstance(raw_states, list) or not raw_states:
        raise _Bad("'states' must be a non-empty array")
    # A lasso's last state equals state `loop`, so its cycle of at least one step starts before the last.
    if loop is not None and not 0 <= loop < len(raw_states) - 1:
        raise _Bad(f"'loop' {loop} is not a state a cycle of this trace can start at "
                   f"({f'0 to {len(raw_states) - 2}' if len(raw_states) > 1 else 'it has one state'})")
    states, labels, kinds, afields, descriptions = [], [], [], [], []
    top_labels = meta.get("actions") if isinstance(meta.get("actions"), list) else None
    for index, raw in enumerate(raw_states):
        if not isinstance(raw, dict):
            raise _Bad(f"state {index} is not an object")
        missing = [n for n in names if n not in raw]
        if missing:
            raise _Bad(f"state {index}: variable '{missing[0]}' is missing")
        extra = [k for k in raw if k != "#meta" and k not in names]
        if extra:
            raise _Bad(f"state {index}: '{extra[0]}' is not in 'vars'")
        smeta = raw.get("#meta", {})
        if not isinstance(smeta, dict):
            raise _Bad(f"state {index}: '#meta' must be an object")
        states.append({n: _decode(raw[n], f"state {index}, {n}") for n in names})
        label = smeta.get("action")
        if label is None and top_labels is not None and index < len(top_labels):
            label = top_labels[index]
        labels.append(label if isinstance(label, str) else None)
        kinds.append(smeta.get("action_kind") if isinstance(smeta.get("action_kind"), str) else None)
        description = smeta.get("action_description")
        descriptions.append(description if isinstance(description, str) else None)
        fields_expr = smeta.get("action_fields", {})
        decoded = _decode(fields_expr, f"state {index}, #meta.action_fields")
        afields.append(decoded if isinstance(decoded, Record) else Record())
    return ItfTrace(tuple(names), tuple(states), tuple(labels), tuple(afields), tuple(kinds), meta, loop,
                    tuple(descriptions))


def read_itf(path: str | Path) -> ItfTrace:
    """Read and decode an `.itf.json` file; any problem raises one `UsageError` line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not an ITF file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    try:
        return _parse(document)
    except _Bad as exc:
        raise UsageError(f"{path}: {exc}") from None
    except RecursionError:
        raise UsageError(f"{path}: values nested too deeply") from None
