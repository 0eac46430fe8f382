"""The reachable graph, drawn: the explored graph projected onto one partition's view.

The tables' diagrams (`kcm.checker.diagrams`) show every transition the state machines allow; this
one shows what the model actually reaches, seen from one partition. Each concrete state is mapped
to a small abstract view (`kafka_partition_view`):

- the partition's state in the active controller's context (`Online`, `Offline`, ...; "no
  controller" while none is active, the one whose epoch is /controller_epoch's if two think so);
- the states of its replicas there, in assignment order (the preferred replica first);
- its leader as ZooKeeper has it, by role: `preferred` (the first assigned replica), `other`,
  `none` (no leader), `no znode` (before the first controller creates it); and the ISR's size.

Abstract states are the nodes, labelled with how many concrete states each stands for. Every
explored edge whose view changes becomes an abstract edge; edges between the same two nodes are
merged and labelled with each action kind and how many concrete edges took it. An edge on which
a state machine was asked for a transition its table refuses (Kafka logs it and skips it, see
docs/model.md) for this partition is drawn red and names the refused request; such a request on a
step that leaves the view unchanged is drawn as a red self-loop. Initial views are green,
quiescent-only views have a double border.

The projection replays the explored graph in node order (`kcm.checker.engine.graph`), keeping a state
only until it is expanded, so it costs one `successors` call per state.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import graphviz
from kcm.checker.diagrams import Diagram, _finish
from kcm.checker.engine.contract import Model
from kcm.checker.engine.graph import NO_PARENT, ExploredGraph
from kcm.model.cluster import NO_ZNODE, NONE, Cluster, Edge


@dataclass
class Projection:
    """Abstract nodes with their concrete counts, and merged abstract edges."""

    nodes: Counter = field(default_factory=Counter)
    initial: set = field(default_factory=set)
    #: Views some quiescent state has, and views some non-quiescent state has.
    quiescent: set = field(default_factory=set)
    busy: set = field(default_factory=set)
    #: (from view, to view) -> Counter of action kinds
    edges: dict = field(default_factory=lambda: defaultdict(Counter))
    #: (from view, to view) -> Counter of refused requests ("partition Offline -> Online")
    invalid: dict = field(default_factory=lambda: defaultdict(Counter))


def project(model: Model, graph: ExploredGraph, view: Callable[[Any], Hashable],
            refused: Callable[[Any, Any], list[str]] | None = None) -> Projection:
    """Project the explored graph through `view`; `refused(state, action)` lists the refused
    requests a step makes that the drawing should mark."""
    out = Projection()
    inits = model.init_states()
    states: dict[int, Any] = {}
    offsets, targets = graph.offsets, graph.targets
    for v in range(graph.nodes):
        if graph.parent[v] == NO_PARENT:
            states[v] = inits[graph.parent_index[v]]
            out.initial.add(view(states[v]))
        s = states.pop(v)
        sv = view(s)
        out.nodes[sv] += 1
        (out.quiescent if graph.quiescent[v] else out.busy).add(sv)
        for index, (action, t) in enumerate(model.successors(s)):
            e = offsets[v] + index
            target = targets[e]
            if target > v and target not in states and graph.parent[target] == v \
                    and graph.parent_index[target] == index:
                states[target] = t
            tv = view(t)
            bad = refused(s, action) if refused is not None else []
            if tv != sv:
                out.edges[(sv, tv)][model.action_name(action)] += 1
            for request in bad:
                out.invalid[(sv, tv)][request] += 1
    return out


# ---- the Kafka partition view ------------------------------------------------------------------


def _short(name: str) -> str:
    return name.removesuffix("Partition").removesuffix("Replica")


def kafka_partition_view(partition: int) -> Callable[[Cluster], tuple]:
    """The view of `partition` (see the module docstring) as a tuple
    `(controller's partition state, replica states, leader role, ISR size)`."""

    def view(s: Cluster) -> tuple:
        zk = s.zk
        active = [b for b, br in enumerate(s.brokers) if br.active]
        current = [b for b in active if s.brokers[b].ctx.epoch == zk.controller_epoch]
        chosen = (current or active or [None])[0]
        assignment = zk.assignment[partition]
        if chosen is None:
            pstate, rstates = "no controller", ()
        else:
            ctx = s.brokers[chosen].ctx
            pstate = _short(ctx.partition_states[partition].name)
            rstates = tuple(_short(ctx.replica_states[partition][b].name) for b in assignment)
        z = zk.partitions[partition]
        if z == NO_ZNODE:
            leader, isr = "no znode", 0
        else:
            preferred = assignment and z.leader == assignment[0]
            leader = "none" if z.leader == NONE else "preferred" if preferred else "other"
            isr = len(z.isr)
        return pstate, rstates, leader, isr

    return view


def kafka_refused(model: Any, partition: int) -> Callable[[Any, Any], list[str]]:
    """The requests for `partition` that a step asks of a state machine and its table refuses."""

    def refused(s: Any, action: Any) -> list[str]:
        return [f"{o.machine} {_short(o.frm.name)} -> {_short(o.to.name)}"
                for o in model.observe(s, action) if type(o) is Edge and not o.valid and o.partition == partition]

    return refused


# ---- drawing -------------------------------------------------------------------------------------


def describe_partition_view(v: tuple) -> str:
    """A `kafka_partition_view` as a node label."""
    pstate, rstates, leader, isr = v
    replicas = ", ".join(rstates) if rstates else "-"
    isr_text = f"ISR {isr}" if leader != "no znode" else "no ISR"
    return f"{pstate}\nreplicas: {replicas}\nleader: {leader}, {isr_text}"


def reachable_diagram(projection: Projection, *, name: str, title: str,
                      describe: Callable[[Any], str] = str) -> Diagram:
    """The projection as a graphviz diagram (see the module docstring); `describe` labels a view."""
    g = graphviz.Digraph(name=name)
    g.attr(label=title, labelloc="t", fontname="Helvetica", fontsize="12", rankdir="TB")
    g.attr("node", shape="box", style="rounded,filled", fillcolor="#eef3fb", fontname="Helvetica", fontsize="10")
    g.attr("edge", fontname="Helvetica", fontsize="8")
    order = sorted(projection.nodes, key=lambda v: (v not in projection.initial, -projection.nodes[v], repr(v)))
    ids = {v: f"n{i}" for i, v in enumerate(order)}
    for v in order:
        attrs = {}
        if v in projection.initial:
            attrs["fillcolor"] = "#d9ead3"
        if v in projection.quiescent and v not in projection.busy:
            attrs["peripheries"] = "2"
        count = projection.nodes[v]
        g.node(ids[v], f"{describe(v)}\n{count:,} state{'s' if count != 1 else ''}", **attrs)
    keys = sorted(set(projection.edges) | set(projection.invalid), key=lambda k: (ids[k[0]], ids[k[1]]))
    for src, dst in keys:
        kinds = projection.edges.get((src, dst), Counter())
        bad = projection.invalid.get((src, dst), Counter())
        lines = [f"{kind} ×{n}" for kind, n in sorted(kinds.items(), key=lambda x: (-x[1], x[0]))]
        lines += [f"refused: {req} ×{n}" for req, n in sorted(bad.items())]
        attrs = {"color": "#cc0000", "fontcolor": "#cc0000", "penwidth": "1.5"} if bad else {}
        g.edge(ids[src], ids[dst], label="\n".join(lines), **attrs)
    return _finish(name, g)


def kafka_reachable(model: Any, graph: ExploredGraph, *, preset: str, partition: int = 0) -> tuple[Diagram, Projection]:
    """The reachable-graph diagram of `partition` for an explored Kafka preset."""
    projection = project(model, graph, kafka_partition_view(partition), kafka_refused(model, partition))
    title = (f"Reachable states of preset '{preset}' seen from partition {partition}: "
             f"{graph.nodes:,} states, {graph.edges:,} edges, {len(projection.nodes)} views "
             "(controller's partition state, its replica states, ZooKeeper leader and ISR size)")
    diagram = reachable_diagram(projection, name=f"reachable_{preset}_p{partition}", title=title,
                                describe=describe_partition_view)
    return diagram, projection
