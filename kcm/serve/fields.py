"""A state as a reviewer reads it: its leaves, named by dotted paths, in groups.

A state comes decoded from its ITF form (`Model.fields`, then `kcm.checker.engine.itf`): records,
maps and tuples nest. `leaves` flattens it down to values a person reads at once (a number, a name,
a set, a tuple of plain values), each named by the path `kcm.checker.engine.traces.diff_values`
names a change with (`broker1.ctx.live`, `zk.partitions[0].leader`), so a leaf and a change of it
carry the same name.

`groups` sorts the Kafka model's variables (`kcm.model.checking.kafka_model.state_fields`) the way
the controller is read: ZooKeeper's znodes; each broker (registered, connected, its broker epoch,
the replicas it hosts, what its metadata cache last heard); each broker's controller module (the
active controller's context and event queue first: an inactive module keeps only what it had when
it resigned); the requests in flight on each controller-to-broker channel; the budgets and
bookkeeping of the checker. A variable of another shape lands in "other".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kcm.checker.engine.itf import ItfList, ItfMap, Record
from kcm.checker.engine.traces import format_value

_BROKER = re.compile(r"broker([0-9]+)\Z")
#: A broker's controller module: what `KafkaController` keeps (its context) and its event queue.
CONTROLLER_KEYS = ("ctx", "queue")


def _nests(value: Any) -> bool:
    """Whether a value is shown by its parts: a record or map, or a tuple holding one."""
    if isinstance(value, Record):
        return not value.is_variant
    if isinstance(value, ItfMap):
        return True
    if isinstance(value, tuple | ItfList):
        return any(_nests(v) for v in value)
    return False


def leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    """`(path, value)` for each leaf of a decoded value, in order; a leaf path is the one
    `diff_values` gives a change of it (`.key` for a record, `[key]` for a map, `[i]` for a tuple)."""
    if isinstance(value, Record) and not value.is_variant:
        return [leaf for k, v in value.items() for leaf in leaves(v, f"{path}.{k}")]
    if isinstance(value, ItfMap):
        return [leaf for k, v in value.items() for leaf in leaves(v, f"{path}[{format_value(k)}]")]
    if isinstance(value, tuple | ItfList) and _nests(value):
        return [leaf for i, v in enumerate(value) for leaf in leaves(v, f"{path}[{i}]")]
    return [(path, value)]


def all_leaves(state: Mapping[str, Any]) -> dict[str, Any]:
    """Every leaf of a decoded state (variable name -> value), by path."""
    return {p: v for name, value in state.items() for p, v in leaves(value, name)}


@dataclass(frozen=True)
class Group:
    """A heading and the leaves under it (paths as in `all_leaves`); `open` is false for a group a
    reviewer looks at after the others (an inactive controller module while another is active)."""

    heading: str
    paths: tuple[str, ...]
    open: bool = True


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def groups(state: Mapping[str, Any]) -> list[Group]:
    """The leaves of a decoded Kafka model state in the groups of the module docstring."""
    by_var = {name: [p for p, _ in leaves(value, name)] for name, value in state.items()}
    zk = [p for name, ps in by_var.items() if name.startswith("zk.") or name == "zk" for p in ps]
    brokers, controllers = [], []
    for name, ps in by_var.items():
        match = _BROKER.match(name)
        if match is None:
            continue
        b = int(match.group(1))
        module = tuple(p for p in ps if any(_under(p, f"{name}.{k}") or _under(p, f"{name}[{k}]")
                                            for k in CONTROLLER_KEYS))
        brokers.append(Group(f"Broker {b}", tuple(p for p in ps if p not in module)))
        active = isinstance(state[name], Mapping) and state[name].get("active") is True
        heading = (f"Active controller: broker {b}'s context and event queue" if active else
                   f"Broker {b}'s controller module (inactive): context and event queue")
        controllers.append(Group(heading, module, active))
    controllers.sort(key=lambda g: not g.open)   # the active controller first
    if not any(g.open for g in controllers):     # no active controller: every module is worth a look
        controllers = [Group(g.heading, g.paths) for g in controllers]
    net = tuple(p for p in by_var.get("net", []))
    book = tuple(p for name in ("spent", "ghost", "scenario") for p in by_var.get(name, []))
    known = {"net", "spent", "ghost", "scenario"}
    other = tuple(p for name, ps in by_var.items()
                  if not (name.startswith("zk.") or name == "zk" or _BROKER.match(name) or name in known) for p in ps)
    out = [Group("ZooKeeper", tuple(zk))] if zk else []
    out += brokers + controllers
    out.append(Group("Channels: controller requests in flight (from->to, oldest first)", net))
    if book:
        out.append(Group("Budgets and bookkeeping (perturbations spent, ghost, run)", book))
    if other:
        out.append(Group("Other", other))
    return out
