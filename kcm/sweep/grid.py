"""Grids: named, versioned sets of small scopes (`kcm/grids/*.toml`), and their expansion.

A grid file declares its `version`, a `description`, a `base` config (`ModelConfig` fields every
scope shares, with every perturbation budget at 0 unless it says otherwise), a per-run `budget`
(`max_states`, `seconds`), extra config fields a perturbation kind needs (`[kinds.KIND]`, e.g. a
topic not yet created for `topic_creation`) and one or more blocks of **axes** (`[[axes]]`); the
grid is the union of its blocks. In a block:

- any config field (`brokers`, `replication_factor`, `partitions`, `unclean_election`,
  `isr_admission`, ...) is an axis: a list of values, every combination taken;
- `kinds` lists perturbation kinds (the names of `overlapping`, `OVERLAP_KINDS`) and `combine` the
  sizes of the sets of them a scope gets (`[1, 2]`: each kind alone and each pair);
- `start` is `cold` (the cold start, each kind of the set with a budget of one and
  `max_perturbations` the set's size: any order, any time) and/or `settled` (one overlapping run
  from the settled cluster listing the set's kinds in the block's order: the first at once, the
  next before the cluster has settled again; docs/model.md, "Bounds: budgets and overlapping
  runs"). A set of two from the cold start covers each kind alone as well, since budgets are upper
  bounds; a settled pair covers its first kind alone.

A combination the model refuses (`ModelConfig.validate`: a replication factor above the broker
count, a deletion budget above the topics, ...) is dropped and counted by its reason; a grid whose
every combination is refused, or whose base or budget is malformed, is one `UsageError` line.
Each scope has a readable name, unique in the grid: `b2-rf1-p1-crash+reassign-cold`; an axis that
takes other values than its base's adds a part (`unclean`, `kip841`, `key=value`).
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field, replace
from dataclasses import fields as dataclass_fields
from importlib import resources
from pathlib import Path
from typing import Any

from kcm.checker.engine.errors import UsageError
from kcm.config import parse_toml, read_toml_file
from kcm.model.actions import OVERLAP_KINDS
from kcm.model.config import ConfigError, ModelConfig

#: Short names of the perturbation kinds in scope names.
SHORT = {"broker_crash": "crash", "session_expiry": "expiry", "leader_isr_shrink": "shrink",
         "controlled_shutdown": "shutdown", "preferred_election": "preferred", "reassignment": "reassign",
         "topic_deletion": "delete", "auto_rebalance": "rebalance", "controller_move": "move",
         "topic_creation": "create", "lost_ack": "lostack", "connection_loss": "connloss",
         "partition_addition": "addparts", "elect_leaders": "elect", "unclean_election_enable": "unclean",
         "log_dir_failure": "logdir"}
STARTS = ("cold", "settled")
#: The keys a grid file and a block of axes may have (config fields aside).
GRID_KEYS = {"version", "description", "base", "budget", "kinds", "axes"}
SPECIAL_AXES = {"kinds", "combine", "start"}
BUDGET_KEYS = {"max_states", "seconds"}


@dataclass(frozen=True)
class Budget:
    """What one scope's run may cost: distinct states and seconds (None: no bound)."""

    max_states: int | None = None
    seconds: float | None = None


@dataclass(frozen=True)
class Scope:
    """One run of the sweep: a name and the config fields it explores."""

    name: str
    fields: dict[str, Any] = field(hash=False)

    def config(self) -> ModelConfig:
        return ModelConfig.from_mapping(self.fields, where=f"scope {self.name}")


@dataclass(frozen=True)
class Grid:
    """A loaded grid: its name, version, description, budget and scopes, and what was dropped."""

    name: str
    version: int
    description: str
    budget: Budget
    scopes: tuple[Scope, ...]
    #: Why combinations were dropped -> how many.
    dropped: dict[str, int]


def grid_names() -> tuple[str, ...]:
    """The names of the shipped grids, sorted."""
    folder = resources.files("kcm") / "grids"
    return tuple(sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml")))


def load(name: str | None = None, path: str | Path | None = None) -> Grid:
    """The shipped grid `name`, or the grid file `path`, expanded."""
    if path is not None:
        values, where = read_toml_file(path, "grid file")
        return expand(Path(path).stem, values, where)
    if name not in grid_names():
        raise UsageError(f"unknown grid '{name}'; choose one of {', '.join(grid_names())}")
    text = (resources.files("kcm") / "grids" / f"{name}.toml").read_text(encoding="utf-8")
    where = f"grid '{name}'"
    return expand(str(name), parse_toml(text, where), where)


def expand(name: str, values: dict, where: str) -> Grid:
    """The scopes of a grid file's table `values` (module docstring); errors name `where`."""
    unknown = sorted(set(values) - GRID_KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key `{unknown[0]}`; a grid has {', '.join(sorted(GRID_KEYS))}")
    version = values.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise UsageError(f"{where}: `version` must be a whole number from 1 (got {version!r})")
    base = _table(values, "base", where)
    budget = _budget(_table(values, "budget", where), where)
    kind_fields = _table(values, "kinds", where)
    for kind, extra in kind_fields.items():
        _kind(kind, where, "[kinds]")
        if not isinstance(extra, dict):
            raise UsageError(f"{where}: [kinds.{kind}] must be a table of config fields")
    # Every budget at 0 unless the base says otherwise: a scope's perturbations are its kinds.
    zero = {budget_field: 0 for budget_field in OVERLAP_KINDS.values()}
    try:
        ModelConfig.from_mapping({**zero, **base}, where=f"{where} [base]")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    blocks = values.get("axes")
    if not isinstance(blocks, list) or not blocks or not all(isinstance(b, dict) for b in blocks):
        raise UsageError(f"{where}: needs at least one [[axes]] block")
    dropped: Counter = Counter()
    scopes: dict[str, Scope] = {}
    for number, block in enumerate(blocks, 1):
        for scope in _block_scopes(block, {**zero, **base}, kind_fields, f"{where} [[axes]] block {number}", dropped):
            scopes.setdefault(scope.name, scope)   # blocks may overlap: each scope once
    if not scopes:
        raise UsageError(f"{where}: every combination of its axes is refused by the model "
                         f"({'; '.join(f'{n}: {why}' for why, n in sorted(dropped.items()))})")
    return Grid(name, version, str(values.get("description", "")), budget, tuple(scopes.values()), dict(dropped))


def _table(values: dict, key: str, where: str) -> dict:
    table = values.get(key, {})
    if not isinstance(table, dict):
        raise UsageError(f"{where}: `{key}` must be a table")
    return table


def _budget(table: dict, where: str) -> Budget:
    unknown = sorted(set(table) - BUDGET_KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown budget key `{unknown[0]}`; a budget has max_states, seconds")
    states, seconds = table.get("max_states"), table.get("seconds")
    if states is not None and (isinstance(states, bool) or not isinstance(states, int) or states < 1):
        raise UsageError(f"{where}: budget `max_states` must be a whole number from 1 (got {states!r})")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0):
        raise UsageError(f"{where}: budget `seconds` must be a positive number (got {seconds!r})")
    return Budget(states, None if seconds is None else float(seconds))


def _kind(kind: Any, where: str, what: str) -> str:
    if kind not in OVERLAP_KINDS:
        raise UsageError(f"{where}: {what}: unknown perturbation kind {kind!r}; choose from {', '.join(OVERLAP_KINDS)}")
    return kind


def _axis(block: dict, key: str, where: str) -> list:
    values = block[key]
    if not isinstance(values, list) or not values:
        raise UsageError(f"{where}: axis `{key}` must be a non-empty list")
    return values


def _block_scopes(block: dict, base: dict, kind_fields: dict, where: str, dropped: Counter) -> list[Scope]:
    kinds = [_kind(k, where, "kinds") for k in _axis(block, "kinds", where)] if "kinds" in block else []
    combine = _axis(block, "combine", where) if "combine" in block else [1 if kinds else 0]
    if any(isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= len(kinds) for n in combine):
        raise UsageError(f"{where}: `combine` lists set sizes from 0 to the number of kinds ({len(kinds)})")
    starts = _axis(block, "start", where) if "start" in block else ["cold"]
    bad = [s for s in starts if s not in STARTS]
    if bad:
        raise UsageError(f"{where}: unknown start {bad[0]!r}; choose from {', '.join(STARTS)}")
    axes = {k: _axis(block, k, where) for k in block if k not in SPECIAL_AXES}
    unknown = sorted(set(axes) - {f.name for f in dataclass_fields(ModelConfig)})
    if unknown:
        raise UsageError(f"{where}: unknown axis `{unknown[0]}`; an axis is a config field (kcm list config) "
                         f"or one of {', '.join(sorted(SPECIAL_AXES))}")
    varying = {k for k, v in axes.items() if len(set(map(repr, v))) > 1 or v[0] != base.get(k, v[0])}
    sets = [tuple(c) for n in combine for c in itertools.combinations(kinds, n)]
    out = []
    for values in itertools.product(*axes.values()):
        point = dict(zip(axes, values, strict=True))
        for kind_set in sets:
            for start in starts:
                fields = _scope_fields(base, point, kind_set, start, kind_fields)
                name = _name(fields, point, varying, kind_set, start)
                try:
                    ModelConfig.from_mapping(fields, where=name)
                except ConfigError as exc:
                    dropped[_reason(str(exc), name)] += 1
                    continue
                out.append(Scope(name, fields))
    return out


def _scope_fields(base: dict, point: dict, kinds: tuple[str, ...], start: str, kind_fields: dict) -> dict:
    fields = {**base, **point}
    for kind in kinds:
        fields.update(kind_fields.get(kind, {}))
    if start == "cold":
        for kind in kinds:
            fields[OVERLAP_KINDS[kind]] = 1
        fields["max_perturbations"] = len(kinds)
    elif kinds:
        fields["overlapping"] = [list(kinds)]
    return fields


def _name(fields: dict, point: dict, varying: set[str], kinds: tuple[str, ...], start: str) -> str:
    parts = [f"b{fields.get('brokers', 3)}", f"rf{fields.get('replication_factor', 2)}",
             f"p{fields.get('partitions', 1)}"]
    for key in sorted(varying - {"brokers", "replication_factor", "partitions"}):
        value = point[key]
        if key == "unclean_election":
            parts += ["unclean"] if value else []
        elif key == "isr_admission":
            parts += [] if value == "2.6" else [str(value).replace("-", "")]
        else:
            parts.append(f"{key}={value}")
    parts.append("+".join(SHORT[k] for k in kinds) or "none")
    parts.append(start)
    return "-".join(parts)


def _reason(message: str, name: str) -> str:
    """A refusal's reason without the scope's name, so that equal reasons are counted together."""
    return message.removeprefix(f"{name}: ")


def with_variant(g: Grid, variant: str) -> Grid:
    """`g` with the historical bug `variant` (its name, as `kcm variants` lists them) put back in
    every scope: how a sweep shows which scopes catch a bug."""
    return replace(g, scopes=tuple(Scope(s.name, {**s.fields, "variant": variant}) for s in g.scopes))
