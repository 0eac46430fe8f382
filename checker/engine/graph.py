"""The explored state graph, kept in compact arrays, and the graph algorithms liveness needs on it.

The sequential explorer (`kcm.checker.engine.bfs`, option `keep_graph`) records every state it finds and
every edge it generates. Node ids are the discovery order, which is breadth-first: a smaller id is
never deeper, so the smallest id of a set of states is one of its shallowest. Because the explorer
expands states in that same order and lists a state's edges in `Model.successors` order, the edges
are stored grouped by source (compressed sparse rows):

- `offsets` (`array('Q')`, one per node plus a sentinel): node v's out-edges are the edge indices
  `offsets[v] .. offsets[v+1] - 1`, and edge e is the `(e - offsets[v])`-th successor of v: what a
  trace replays through `Model.successors`, with no action stored per edge;
- `targets` (`array('I')`, one per edge): the edge's target node;
- `labels` (`array('H')`, one per edge): the action's id (an index into `actions`, the distinct
  action values seen) shifted left by one, with the low bit set when the step heals
  (`Model.is_healing`);
- per node: the BFS parent and the successor index that found it (`parent`, `parent_index`; the
  initial state's index in `Model.init_states()` for roots), whether it is quiescent
  (`quiescent`, a `bytearray`), settled (`settled`) and whether a bound left out one of its
  healing steps (`pruned`).

That is 6 bytes per edge and 17 per node, beside the explorer's visited set. A networkx `DiGraph`
of the same edges costs far more per edge (docs/benchmarks.md, "Liveness"), so the algorithms
below have two backends: networkx (`nx`) while the graph is small (`NX_EDGE_LIMIT`), and
equivalents on the arrays (`arrays`) beyond: an iterative Tarjan for strongly connected components
and a breadth-first search on the reversed edges for reverse reachability. The tests check both
backends against each other and networkx on random graphs.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Hashable, Iterable, Sequence

#: The `parent` of an initial state.
NO_PARENT = 0xFFFFFFFF
#: Above this many edges of the subgraph, the array backend is used instead of networkx.
NX_EDGE_LIMIT = 250_000


class GraphTooLarge(Exception):
    """More nodes or distinct actions than the compact arrays hold."""


class ExploredGraph:
    """The explored graph in compact arrays (see the module docstring)."""

    def __init__(self) -> None:
        self.offsets = array("Q")
        self.targets = array("I")
        self.labels = array("H")
        self.parent = array("I")
        self.parent_index = array("H")
        self.quiescent = bytearray()
        #: Per node, 1 if it is settled (`Model.is_settled`; the quiescent flag unless told).
        self.settled = bytearray()
        #: Per node, 1 if a bound left out one of its healing steps (`Model.pruned`).
        self.pruned = bytearray()
        #: The distinct actions, by id.
        self.actions: list[Hashable] = []
        self._action_ids: dict[Hashable, int] = {}
        #: Whether every discovered state was expanded (the explorer sets it).
        self.complete = False

    # ---- building (the explorer calls these) ----------------------------------------------------

    def add_node(self, parent: int, index: int, quiescent: bool, settled: bool | None = None) -> int:
        """A newly discovered state; returns its id. `settled` defaults to `quiescent`."""
        node = len(self.parent)
        if node >= NO_PARENT:
            raise GraphTooLarge("more than 2**32 - 1 states")
        self.parent.append(parent)
        self.parent_index.append(index)
        self.quiescent.append(1 if quiescent else 0)
        self.pruned.append(0)
        self.settled.append(1 if (quiescent if settled is None else settled) else 0)
        return node

    def mark_pruned(self, node: int) -> None:
        """A bound left out one of `node`'s healing steps (`Model.pruned`)."""
        self.pruned[node] = 1

    def begin(self, node: int) -> None:
        """The explorer starts expanding `node` (always the next one in id order)."""
        if node != len(self.offsets):
            raise ValueError(f"nodes must be expanded in discovery order (got {node}, expected {len(self.offsets)})")
        self.offsets.append(len(self.targets))

    def add_edge(self, target: int, action: Hashable, healing: bool) -> None:
        """The next out-edge of the node being expanded."""
        ids = self._action_ids
        aid = ids.get(action)
        if aid is None:
            aid = ids[action] = len(self.actions)
            if aid >= 1 << 15:
                raise GraphTooLarge("more than 32767 distinct actions")
            self.actions.append(action)
        self.targets.append(target)
        self.labels.append(aid << 1 | (1 if healing else 0))

    def finish(self, complete: bool) -> None:
        """Close the rows: nodes never expanded get no edges, and the sentinel is appended."""
        while len(self.offsets) < len(self.parent) + 1:
            self.offsets.append(len(self.targets))
        self.complete = complete

    # ---- reading ----------------------------------------------------------------------------------

    @property
    def nodes(self) -> int:
        return len(self.parent)

    @property
    def edges(self) -> int:
        return len(self.targets)

    def out_edges(self, node: int) -> range:
        return range(self.offsets[node], self.offsets[node + 1])

    def source_of(self, edge: int) -> int:
        """The node whose row holds `edge` (binary search on `offsets`)."""
        lo, hi = 0, len(self.offsets) - 2
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.offsets[mid] <= edge:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def healing(self, edge: int) -> bool:
        return bool(self.labels[edge] & 1)

    def action(self, edge: int) -> Hashable:
        return self.actions[self.labels[edge] >> 1]

    def path_to(self, node: int) -> list[tuple[int, int]]:
        """The BFS tree path to `node` as `(node, successor index)` steps after the root:
        `[(root, init index), (n1, i1), ...]` where n_k is the i_k-th successor of n_{k-1}."""
        steps = []
        while self.parent[node] != NO_PARENT:
            steps.append((node, self.parent_index[node]))
            node = self.parent[node]
        steps.append((node, self.parent_index[node]))
        return steps[::-1]

    def nbytes(self) -> int:
        """Bytes held by the arrays (not the `actions` list, a few hundred values)."""
        arrays = (self.offsets, self.targets, self.labels, self.parent, self.parent_index)
        return sum(a.itemsize * len(a) for a in arrays) + len(self.quiescent) + len(self.pruned) + len(self.settled)

    def healing_mask(self) -> bytearray:
        """One byte per edge: 1 for a healing step."""
        return bytearray(label & 1 for label in self.labels)


# ---- algorithms on the arrays ---------------------------------------------------------------------


def tarjan_scc(graph: ExploredGraph, node_ok: bytearray | None = None,
               edge_ok: bytearray | None = None) -> list[list[int]]:
    """Strongly connected components of the subgraph of nodes with `node_ok[v]` and edges with
    `edge_ok[e]` (all when None), by Tarjan's algorithm without recursion; every kept node is in
    exactly one component. Memory: 9 bytes per node plus the stacks."""
    n = graph.nodes
    offsets, targets = graph.offsets, graph.targets
    index = array("i", [-1]) * n
    low = array("I", [0]) * n
    on_stack = bytearray(n)
    stack: list[int] = []
    components: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] != -1 or (node_ok is not None and not node_ok[root]):
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = 1
        work_node = [root]
        work_edge = [offsets[root]]
        while work_node:
            v = work_node[-1]
            e = work_edge[-1]
            end = offsets[v + 1]
            descended = False
            while e < end:
                if edge_ok is None or edge_ok[e]:
                    w = targets[e]
                    if node_ok is None or node_ok[w]:
                        if index[w] == -1:
                            work_edge[-1] = e + 1
                            index[w] = low[w] = counter
                            counter += 1
                            stack.append(w)
                            on_stack[w] = 1
                            work_node.append(w)
                            work_edge.append(offsets[w])
                            descended = True
                            break
                        if on_stack[w] and index[w] < low[v]:
                            low[v] = index[w]
                e += 1
            if descended:
                continue
            work_node.pop()
            work_edge.pop()
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack[w] = 0
                    component.append(w)
                    if w == v:
                        break
                components.append(component)
            if work_node:
                u = work_node[-1]
                if low[v] < low[u]:
                    low[u] = low[v]
    return components


def reaching(graph: ExploredGraph, goal: bytearray, edge_ok: bytearray | None = None) -> bytearray:
    """One byte per node: 1 if some node with `goal[v]` is reachable from it along edges with
    `edge_ok[e]` (breadth-first on the reversed edges, built as compressed rows by counting)."""
    n, m = graph.nodes, graph.edges
    offsets, targets = graph.offsets, graph.targets
    counts = array("Q", [0]) * (n + 1)
    for e in range(m):
        if edge_ok is None or edge_ok[e]:
            counts[targets[e] + 1] += 1
    for v in range(n):
        counts[v + 1] += counts[v]
    sources = array("I", [0]) * counts[n]
    fill = array("Q", counts)
    for v in range(n):
        for e in range(offsets[v], offsets[v + 1]):
            if edge_ok is None or edge_ok[e]:
                t = targets[e]
                sources[fill[t]] = v
                fill[t] += 1
    seen = bytearray(goal)
    queue = deque(v for v in range(n) if goal[v])
    while queue:
        v = queue.popleft()
        for i in range(counts[v], counts[v + 1]):
            u = sources[i]
            if not seen[u]:
                seen[u] = 1
                queue.append(u)
    return seen


def shortest_path(graph: ExploredGraph, start: int, goal_edge, node_ok: bytearray,
                  edge_ok: bytearray | None = None) -> list[int] | None:
    """The shortest list of edges from `start` ending with an edge e where `goal_edge(e)` holds,
    through nodes with `node_ok` and edges with `edge_ok`; None if there is none."""
    offsets, targets = graph.offsets, graph.targets
    via: dict[int, int | None] = {start: None}  # node -> edge it was reached by
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for e in range(offsets[v], offsets[v + 1]):
            if edge_ok is not None and not edge_ok[e]:
                continue
            w = targets[e]
            if not node_ok[w]:
                continue
            if goal_edge(e):
                path = [e]
                back = via[v]
                while back is not None:
                    path.append(back)
                    v = graph.source_of(back)
                    back = via[v]
                return path[::-1]
            if w not in via:
                via[w] = e
                queue.append(w)
    return None


# ---- the same on networkx -------------------------------------------------------------------------


def to_networkx(graph: ExploredGraph, node_ok: bytearray | None = None, edge_ok: bytearray | None = None):
    """The (sub)graph as a networkx DiGraph (parallel edges merged)."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(v for v in range(graph.nodes) if node_ok is None or node_ok[v])
    g.add_edges_from(_kept_edges(graph, node_ok, edge_ok))
    return g


def _kept_edges(graph: ExploredGraph, node_ok, edge_ok) -> Iterable[tuple[int, int]]:
    offsets, targets = graph.offsets, graph.targets
    for v in range(graph.nodes):
        if node_ok is not None and not node_ok[v]:
            continue
        for e in range(offsets[v], offsets[v + 1]):
            if (edge_ok is None or edge_ok[e]) and (node_ok is None or node_ok[targets[e]]):
                yield v, targets[e]


def nx_scc(graph: ExploredGraph, node_ok: bytearray | None = None,
           edge_ok: bytearray | None = None) -> list[list[int]]:
    """`tarjan_scc` by networkx."""
    import networkx as nx

    return [sorted(c) for c in nx.strongly_connected_components(to_networkx(graph, node_ok, edge_ok))]


def nx_reaching(graph: ExploredGraph, goal: bytearray, edge_ok: bytearray | None = None) -> bytearray:
    """`reaching` by networkx: the ancestors of a sink every goal node points to."""
    import networkx as nx

    g = to_networkx(graph, None, edge_ok)
    sink = -1
    g.add_node(sink)
    g.add_edges_from((v, sink) for v in range(graph.nodes) if goal[v])
    ancestors = nx.ancestors(g, sink)
    return bytearray(1 if v in ancestors or goal[v] else 0 for v in range(graph.nodes))


def choose_backend(edges: int, backend: str = "auto") -> str:
    """"nx" while the subgraph has at most `NX_EDGE_LIMIT` edges, else "arrays"."""
    if backend not in ("auto", "nx", "arrays"):
        raise ValueError(f"unknown graph backend '{backend}'")
    if backend != "auto":
        return backend
    return "nx" if edges <= NX_EDGE_LIMIT else "arrays"


def nontrivial(graph: ExploredGraph, component: Sequence[int], edge_ok: bytearray | None) -> bool:
    """A component with a cycle: two nodes or more, or one node with a kept self-loop."""
    if len(component) > 1:
        return True
    v = component[0]
    return any(graph.targets[e] == v and (edge_ok is None or edge_ok[e]) for e in graph.out_edges(v))
