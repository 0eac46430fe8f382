"""Counterexamples for people: readable text, a graphviz sequence diagram, and all four outputs at once.

Everything here renders a decoded ITF trace (`kcm.checker.engine.itf.ItfTrace`), so a trace looks the
same whether it comes straight from the explorer (`format_trace(model, trace)` encodes it first)
or from a file written earlier (`kcm trace show FILE.itf.json`, which needs no model).

Text. The initial state in full, then for each step its action (the description the model gives
of it, `Model.describe_action`, when the file has one; else its label) and only what changed:
records, maps, tuples and sequences are compared element-wise down to the changed leaves, named by
dotted paths (`brokers[2].isr`, `zk.partitions[(0, 1)].leader`); a set is a leaf, shown old -> new
with what it gained and lost. The last step of a violation is marked with the property it breaks.

Sequence diagram (DOT). One lifeline per actor, steps top to bottom, the violating step in red.
Actors come from each action's kind and fields (recorded in the ITF state `#meta`), following the
Actor+Verb naming of actions:

1. a field whose role (its name, `from_`/`to_` stripped, plural `s` dropped; src/dst-like names
   are "node") equals the kind's first word (`ControllerElect(controller=1)`) is the source;
2. otherwise a `src`/`sender`/`from_*` field is the source;
3. otherwise a first word that names a usual actor (`Zk`, `Network`, `Admin`, `Tm`, ...) is a
   lifeline of its own and the source (`ZkDeliverWatch(broker=2)`: zk -> broker 2);
4. otherwise the first actor field is the source; without any, the "environment" lifeline.

The remaining actor fields are the targets: one arrow per target, or a box on the source's lifeline
when there is none. Actor fields are those whose role is in `ACTOR_ROLES`, with a scalar value (or,
for a plural name, a set or tuple of scalars).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kcm.checker.engine.itf import (
    ItfList,
    ItfMap,
    ItfTrace,
    Record,
    Unserializable,
    itf_document,
    parse_itf,
    write_itf,
)

# ---- values -------------------------------------------------------------------------------------

_BARE = re.compile(r"[A-Za-z0-9_.:/-]+\Z")


def format_value(value: Any) -> str:
    """A decoded ITF value as short readable text."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value if _BARE.match(value) else json.dumps(value)
    if isinstance(value, Unserializable):
        return value.text
    if isinstance(value, Record):
        if value.is_variant:
            inner = value["value"]
            if isinstance(inner, Record) and not inner.is_variant:
                return f"{value['tag']}(" + ", ".join(f"{k}={format_value(v)}" for k, v in inner.items()) + ")"
            return f"{value['tag']}({format_value(inner)})"
        return "{" + ", ".join(f"{k}: {format_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, ItfMap):
        return "{" + ", ".join(f"{format_value(k)}: {format_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, ItfList):
        return "[" + ", ".join(map(format_value, value)) + "]"
    if isinstance(value, tuple):
        items = list(map(format_value, value))
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(map(format_value, value))) + "}"
    return repr(value)


def diff_values(old: Any, new: Any, path: str) -> list[tuple[str, Any, Any]]:
    """The changed leaves between two decoded values, as `(dotted path, old, new)`."""
    if old == new:
        return []
    if type(old) is type(new):
        if isinstance(old, Record):
            out: list[tuple[str, Any, Any]] = []
            for key in list(old) + [k for k in new if k not in old]:
                out += diff_values(old.get(key, ABSENT), new.get(key, ABSENT), f"{path}.{key}")
            return out
        if isinstance(old, ItfMap):
            out = []
            for key in list(old) + [k for k in new if k not in old]:
                out += diff_values(old.get(key, ABSENT), new.get(key, ABSENT), f"{path}[{format_value(key)}]")
            return out
        if isinstance(old, tuple) and len(old) == len(new):  # tuples and ItfList
            out = []
            for i, (a, b) in enumerate(zip(old, new)):
                out += diff_values(a, b, f"{path}[{i}]")
            return out
    return [(path, old, new)]


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()


def format_change(path: str, old: Any, new: Any) -> str:
    """One changed field of a step, as a trace lists it: `  path: old -> new`."""
    show = lambda v: "(absent)" if v is ABSENT else format_value(v)  # noqa: E731
    line = f"  {path}: {show(old)} -> {show(new)}"
    if isinstance(old, frozenset) and isinstance(new, frozenset):
        gained = sorted(map(format_value, new - old))
        lost = sorted(map(format_value, old - new))
        delta = [f"+{g}" for g in gained] + [f"-{x}" for x in lost]
        line += "  (" + ", ".join(delta) + ")"
    return line


# ---- text ---------------------------------------------------------------------------------------


def _steps(n: int, word: str = "step") -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def title(trace: ItfTrace) -> str:
    """One line saying what the trace shows."""
    name, kind, steps = trace.invariant, trace.kind, len(trace.states) - 1
    model = trace.meta.get("model")
    where = f" in model '{model}'" if model else ""
    if name is None:
        return f"Trace of {steps} steps{where}"
    if kind == "deadlock":
        return f"Deadlock after {steps} steps{where}: no action is enabled in the last state"
    if kind == "sometimes":
        return f"Witness for goal '{name}' in {steps} steps{where}"
    if kind == "liveness" and trace.loop is not None:
        settling = "EventuallySettled" in f"{name} {trace.meta.get('description') or ''}"
        return (f"Livelock ('{name}' violated){where}: {_steps(trace.loop)} to a cycle of "
                f"{_steps(steps - trace.loop, 'healing step')} that repeats forever without "
                + ("settling" if settling else "reaching quiescence"))
    if kind == "liveness":
        return (f"Liveness property '{name}' violated after {steps} steps{where}: from the last state no run "
                "of healing actions reaches a quiescent state")
    if kind == "transition":
        return f"Transition invariant '{name}' violated by step {steps}{where}"
    return f"Invariant '{name}' ({kind}) violated after {steps} steps{where}"


def render_text(trace: ItfTrace) -> str:
    """The trace as text: title, initial state in full, then each step's action and changes."""
    lines = [title(trace), ""]
    first = trace.states[0]
    lines.append("State 0 (initial)" + ("   <-- the cycle starts here" if trace.loop == 0 else ""))
    lines += [f"  {name} = {format_value(first[name])}" for name in trace.vars]
    last = len(trace.states) - 1
    for i in range(1, len(trace.states)):
        label = trace.described(i) or "(action not recorded)"
        marker = ""
        if trace.loop is not None:
            if i == trace.loop:
                marker = "   <-- the cycle starts here"
            elif i == last:
                marker = f"   <-- back to state {trace.loop}: the cycle repeats forever"
        elif i == last and trace.invariant is not None and trace.kind != "sometimes":
            marker = f"   <-- violates '{trace.invariant}'"
        elif i == last and trace.kind == "sometimes":
            marker = f"   <-- meets '{trace.invariant}'"
        lines += ["", f"Step {i}: {label}{marker}"]
        changes = []
        for name in trace.vars:
            changes += diff_values(trace.states[i - 1][name], trace.states[i][name], name)
        lines += [format_change(*c) for c in changes] or ["  (no change)"]
    if trace.kind == "deadlock":
        lines += ["", "No action is enabled in this state, and it is not a legal end state."]
    if trace.loop is not None:
        repeat = f"step {last} repeats" if last == trace.loop + 1 else f"steps {trace.loop + 1}-{last} repeat"
        # A model explored modulo controller epochs (its name says so) closes a cycle on a state
        # equal to the loop's up to a renaming of those epochs.
        equal = ("equals it up to a renaming of controller epochs"
                 if "modulo controller epochs" in str(trace.meta.get("model") or "") else "equals it")
        settling = "EventuallySettled" in f"{trace.invariant} {trace.meta.get('description') or ''}"
        lines += ["", f"Back to state {trace.loop} (the state after step {last} {equal}): {repeat} forever, "
                  + ("each healing action but restarts enabled all along the cycle is taken on it (weak fairness "
                     "holds; a dead broker may stay dead), and no state on it is settled." if settling else
                     "each healing action enabled all along the cycle is taken on it (weak fairness holds), "
                     "and no state on it is quiescent.")]
    return "\n".join(lines) + "\n"


def to_itf_trace(model: Any, trace: Sequence[tuple[Any, Any]], **meta: Any) -> ItfTrace:
    """A model trace (`(action, state)` pairs) as a decoded ITF trace; `meta` as for `itf_document`."""
    return parse_itf(itf_document(model, trace, **meta))


def format_trace(model: Any, trace: Sequence[tuple[Any, Any]], **meta: Any) -> str:
    """A model trace as text (see `render_text`); `meta`: invariant=, kind=, ... as for `itf_document`."""
    return render_text(to_itf_trace(model, trace, **meta))


# ---- sequence diagram ---------------------------------------------------------------------------

ACTOR_ROLES = frozenset({
    "broker", "controller", "node", "rm", "tm", "process", "server", "client", "replica", "leader",
    "follower", "peer", "actor", "agent", "member", "coordinator", "philosopher", "climber",
})
SOURCE_NAMES = frozenset({"src", "source", "sender", "from"})
TARGET_NAMES = frozenset({"dst", "dest", "destination", "target", "receiver", "to"})
KNOWN_ACTORS = frozenset({
    "zk", "zookeeper", "network", "admin", "tm", "rm", "client", "server", "controller", "broker",
    "leader", "follower", "node", "replica", "scheduler", "timer", "user", "env", "environment",
    "coordinator", "producer", "consumer", "operator",
})
ENVIRONMENT = "environment"


def _scalar(value: Any) -> bool:
    return isinstance(value, int | str) and not isinstance(value, bool)


def _actor_fields(fields: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """`(direction, role, lifeline)` for each actor field; direction "source", "target" or ""."""
    out = []
    for name, value in fields.items():
        direction = ""
        base = name
        if name in SOURCE_NAMES or name in TARGET_NAMES:
            direction = "source" if name in SOURCE_NAMES else "target"
            base = "node"
        elif name.startswith(("from_", "to_")):
            direction = "source" if name.startswith("from_") else "target"
            base = name.split("_", 1)[1]
        plural = base.endswith("s") and base[:-1] in ACTOR_ROLES
        role = base[:-1] if plural else base
        if role not in ACTOR_ROLES and base != "node":
            continue
        if plural and isinstance(value, frozenset | tuple):
            values = sorted((v for v in value if _scalar(v)), key=str)
        elif _scalar(value):
            values = [value]
        else:
            continue
        out += [(direction, role, f"{role} {v}") for v in values]
    return out


def actors_of(kind: str | None, fields: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The source lifeline and the target lifelines of one action (see the module docstring)."""
    actors = _actor_fields(fields)
    word = re.match(r"[A-Z][a-z0-9]*", kind or "")
    prefix = word.group(0).lower() if word else ""
    source: str | None = None
    for direction, role, lifeline in actors:
        if role == prefix and direction != "target":
            source = lifeline
            break
    if source is None:
        source = next((lf for d, _, lf in actors if d == "source"), None)
    if source is None and prefix in KNOWN_ACTORS:
        source = prefix
    if source is None:
        source = actors[0][2] if actors else ENVIRONMENT
    targets = []
    for _, _, lifeline in actors:
        if lifeline != source and lifeline not in targets:
            targets.append(lifeline)
    return source, targets


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def sequence_diagram(trace: ItfTrace) -> str:
    """The trace as a graphviz (DOT) sequence diagram."""
    steps = []
    lifelines: list[str] = []
    for i in range(1, len(trace.states)):
        source, targets = actors_of(trace.action_kinds[i], trace.action_fields[i])
        for lf in [source, *targets]:
            if lf not in lifelines:
                lifelines.append(lf)
        steps.append((i, trace.described(i) or f"step {i}", source, targets))
    if not lifelines:
        lifelines.append(ENVIRONMENT)
    bad = (len(trace.states) - 1 if trace.invariant is not None and trace.kind != "sometimes"
           and trace.loop is None else None)
    loop = trace.loop
    col = {lf: n for n, lf in enumerate(lifelines)}
    out = [
        "digraph trace {",
        f"  graph [label={_q(title(trace))}, labelloc=t, fontname=Helvetica, fontsize=12, "
        "rankdir=TB, splines=false, nodesep=0.5, ranksep=0.3, newrank=true, forcelabels=true];",
        "  node [fontname=Helvetica, fontsize=10];",
        "  edge [fontname=Helvetica, fontsize=9];",
        "  { rank=same; step_0 [shape=plaintext, label=\"step\"];",
    ]
    out += [f"    h{n} [shape=box, style=\"rounded,filled\", fillcolor=\"#eeeeee\", label={_q(lf)}];"
            for n, lf in enumerate(lifelines)]
    out.append("  }")
    # Keep the columns in first-appearance order.
    out.append("  " + " -> ".join(["step_0"] + [f"h{n}" for n in range(len(lifelines))]) + " [style=invis];")
    for i, label, source, targets in steps:
        red = i == bad
        in_cycle = loop is not None and i > loop
        color = (', color="#cc0000", fontcolor="#cc0000", penwidth=2' if red
                 else ', color="#1f5fbf", fontcolor="#1f5fbf", penwidth=2' if in_cycle else "")
        step_color = ', fontcolor="#cc0000"' if red else ', fontcolor="#1f5fbf"' if in_cycle else ""
        cells = [f"step_{i} [shape=plaintext, label={_q(str(i))}{step_color}];"]
        for n, lf in enumerate(lifelines):
            if lf == source and not targets:
                cells.append(f"p{n}_{i} [shape=box, label={_q(label)}{color}];")
            else:
                cells.append(f"p{n}_{i} [shape=point, width=0.06{color if lf in (source, *targets) else ''}];")
        out.append("  { rank=same; " + " ".join(cells) + " }")
        for t in targets:
            out.append(f"  p{col[source]}_{i} -> p{col[t]}_{i} [xlabel={_q(label)}, constraint=false{color}];")
    for n in range(len(lifelines)):
        chain = [f"h{n}"] + [f"p{n}_{i}" for i, *_ in steps]
        if len(chain) > 1:
            out.append("  " + " -> ".join(chain) + " [style=dashed, arrowhead=none, color=gray60, weight=100];")
    if steps:
        out.append("  " + " -> ".join(f"step_{i}" for i in range(len(steps) + 1)) + " [style=invis, weight=100];")
    if loop is not None and steps:
        # The lasso's cycle (blue) closes at its last step: the next step is step loop + 1 again.
        repeat = (f"step {len(steps)} repeats" if len(steps) == loop + 1
                  else f"steps {loop + 1}-{len(steps)} repeat")
        label = _q(f"back to state {loop}: {repeat} forever")
        out.append(f"  loop_back [shape=plaintext, fontcolor=\"#1f5fbf\", label={label}];")
        out.append(f"  step_{len(steps)} -> loop_back [style=invis, weight=100];")
        out.append(f"  loop_back -> step_{loop + 1} [color=\"#1f5fbf\", style=dashed, constraint=false];")
    out.append("}")
    return "\n".join(out) + "\n"


# ---- all outputs at once ------------------------------------------------------------------------


def file_stem(name: str) -> str:
    """The file name a counterexample's files get for a property name (`write_counterexample`)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "trace"


def write_counterexample(
    model: Any,
    trace: Sequence[tuple[Any, Any]],
    out_dir: str | Path,
    *,
    invariant: str,
    kind: str,
    stem: str | None = None,
    **meta: Any,
) -> dict[str, Path]:
    """Write a trace as `<stem>.itf.json`, `<stem>.txt`, `<stem>.dot` and, when `model_spec`
    is given in `meta`, a runnable `replay_<stem>.py`; returns {"itf", "text", "dot", "replay"}
    -> path. `meta` as for `itf_document` (config=, model_spec=, source=)."""
    from kcm.checker.engine.replay import replay_script  # replay imports this module

    out_dir = Path(out_dir)
    stem = file_stem(stem or invariant)
    document = itf_document(model, trace, invariant=invariant, kind=kind, **meta)
    decoded = parse_itf(document)
    paths = {"itf": write_itf(out_dir / f"{stem}.itf.json", document)}
    paths["text"] = out_dir / f"{stem}.txt"
    paths["text"].write_text(render_text(decoded), encoding="utf-8")
    paths["dot"] = out_dir / f"{stem}.dot"
    paths["dot"].write_text(sequence_diagram(decoded), encoding="utf-8")
    if meta.get("model_spec") is not None:
        paths["replay"] = out_dir / f"replay_{stem}.py"
        paths["replay"].write_text(replay_script(decoded, paths["itf"].name), encoding="utf-8")
    return paths
