"""The liveness checker on toy models: a livelock caught with a pinned lasso, weak fairness that
breaks it, an operator's cycle not reported, a healing deadlock, a cycle a bound cut left
undecided, and the compact-array algorithms against networkx on random graphs."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.errors import UsageError
from kcm.checker.engine.graph import ExploredGraph, nx_reaching, nx_scc, reaching, tarjan_scc
from kcm.checker.engine.liveness import EVENTUALLY_QUIESCENT, QUIESCENCE_REACHABLE, check_liveness
from kcm.model.known_loops import KnownLoop

from tests.checker.toys import DGraph, Elect, Failover, Resume, TwoPhaseCommit, grid


def live(model, backend="auto", **options):
    result = explore(model, keep_graph=True, symmetry=False, stop_on_violation=False, **options)
    return result, check_liveness(model, result.extra.get("graph"), backend=backend)


@pytest.mark.parametrize("backend", ["nx", "arrays"])
def test_a_livelock_is_caught_with_its_shortest_lasso(backend) -> None:
    _, res = live(Failover(), backend)
    assert res.verdict == "violation"
    v = next(x for x in res.violations if x.name == EVENTUALLY_QUIESCENT)
    assert v.kind == "liveness"
    assert v.loop == 1 and v.trace_length == 3  # 1 step to the cycle, a cycle of 2
    assert [s for _, s in v.trace] == ["start", "elected", "resigned", "elected"]
    assert [type(a) for a, _ in v.trace[1:]] == [Elect, Resume, Elect]
    assert (res.cyclic_components, res.fair_components) == (1, 1)
    # From `start` no healing run settles (the only way out is the loop): the shallowest such state.
    stuck = next(x for x in res.violations if x.name == QUIESCENCE_REACHABLE)
    assert [s for _, s in stuck.trace] == ["start"] and stuck.loop is None
    assert res.unsettleable_states == 3  # start, elected, resigned


@pytest.mark.parametrize("backend", ["nx", "arrays"])
def test_weak_fairness_of_an_action_enabled_along_the_whole_cycle_breaks_it(backend) -> None:
    _, res = live(Failover(escape="always"), backend)
    assert res.verdict == "pass", res.summary_lines()
    assert (res.cyclic_components, res.fair_components) == (1, 0)


@pytest.mark.parametrize("backend", ["nx", "arrays"])
def test_an_action_enabled_in_part_of_the_cycle_does_not_break_it(backend) -> None:
    """Weak fairness, not strong: Complete is enabled infinitely often, never continuously."""
    _, res = live(Failover(escape="elected"), backend)
    assert [v.name for v in res.violations] == [EVENTUALLY_QUIESCENT]
    assert res.violations[0].loop == 1 and res.violations[0].trace_length == 3
    assert res.unsettleable_states == 0  # a quiescent state stays reachable from everywhere


def test_a_cycle_of_operator_actions_is_not_a_livelock() -> None:
    model = Failover(escape="always")
    result, res = live(model)
    graph = result.extra["graph"]
    # The full graph has the poke cycle (poked <-> poked2) off the quiescent state ...
    unsettled = bytearray(1 - q for q in graph.quiescent)
    assert {"poked", "poked2"} in [{_phase(model, graph, v) for v in c} for c in nx_scc(graph, unsettled, None)]
    # ... but only healing cycles are judged: the healing subgraph has one cycle, and it is unfair.
    assert res.verdict == "pass" and res.cyclic_components == 1


def _phase(model, graph, node):
    from kcm.checker.engine.liveness import _replay
    return _replay(model, graph, graph.path_to(node))[-1][1]


def test_an_operator_cycle_is_judged_only_when_it_heals() -> None:
    """0 -> 1 <-> 2 with nothing else: a livelock if those steps heal; if they are an operator's,
    no livelock, but no healing run settles state 0 either."""
    edges = {0: [1], 1: [2], 2: [1]}
    _, res = live(DGraph([0], edges))
    assert [v.name for v in res.violations] == [EVENTUALLY_QUIESCENT, QUIESCENCE_REACHABLE]

    class Operator(DGraph):
        def is_healing(self, s, a):
            return False

    _, res = live(Operator([0], edges))
    assert [v.name for v in res.violations] == [QUIESCENCE_REACHABLE]
    assert res.cyclic_components == 0


def test_a_healing_deadlock_fails_only_reachability() -> None:
    model = DGraph([0], {0: [1, 2], 1: [], 2: []}, terminal=[2])
    _, res = live(model)
    assert [v.name for v in res.violations] == [QUIESCENCE_REACHABLE]
    assert [s for _, s in res.violations[0].trace] == [0, 1]
    assert res.cyclic_components == 0


def test_a_self_loop_is_a_cycle() -> None:
    # 1 -> 1 with an exit Go(2) enabled in 1, the cycle's only state: weak fairness takes it.
    _, res = live(DGraph([0], {0: [1], 1: [1, 2], 2: []}, terminal=[2]))
    assert res.verdict == "pass" and (res.cyclic_components, res.fair_components) == (1, 0)
    # Without the exit the self-loop is a livelock: a prefix of 1 step, a cycle of 1.
    _, res = live(DGraph([0], {0: [1], 1: [1]}))
    v = res.violations[0]
    assert v.name == EVENTUALLY_QUIESCENT and (v.loop, v.trace_length) == (1, 2)


def test_the_lasso_is_extended_until_the_cycle_is_fair() -> None:
    """Each `Go(t)` is one action, enabled where an edge leads to t. Component {1, 2, 3} with
    1 -> 2, 2 -> 1, 1 -> 3, 2 -> 3, 3 -> 1: the shortest cycle through 1 is 1 -> 2 -> 1, on which
    Go(3) is enabled in both states and never taken, so that cycle is unfair; the component is
    fair (nothing is enabled in all three states), and the lasso takes the detour 1 -> 3 -> 1."""
    _, res = live(DGraph([0], {0: [1], 1: [2, 3], 2: [1, 3], 3: [1]}))
    v = res.violations[0]
    assert v.name == EVENTUALLY_QUIESCENT
    assert [s for _, s in v.trace] == [0, 1, 3, 1, 2, 1] and v.loop == 1


def test_an_exit_enabled_in_every_state_of_a_component_makes_it_unfair() -> None:
    # 1 <-> 2 <-> 3 with an edge to the quiescent 4 from each: Go(4) is enabled everywhere.
    _, res = live(DGraph([0], {0: [1], 1: [2, 4], 2: [1, 3, 4], 3: [2, 4], 4: []}, terminal=[4]))
    assert res.verdict == "pass" and (res.cyclic_components, res.fair_components) == (1, 0)


class Cut(DGraph):
    """A `DGraph` in which a bound left a healing step out of the states in `cut` (`Model.pruned`)."""

    def __init__(self, inits, edges, cut) -> None:
        super().__init__(inits, edges)
        self.cut = frozenset(cut)

    def pruned(self, s) -> bool:
        return s in self.cut


@pytest.mark.parametrize("backend", ["nx", "arrays"])
@pytest.mark.parametrize("cut", [{2}, {1}, {1, 2}])
def test_a_cycle_a_bound_cut_in_any_of_its_states_is_undecided_never_reported(backend, cut) -> None:
    """0 -> 1 <-> 2 is a fair livelock. With a healing step of one of its states cut by a bound,
    the cut step might leave the cycle: the component is undecided, whether the bound cut one of
    its states or all of them, and so is every state that cannot settle but reaches a cut one."""
    model = Cut([0], {0: [1], 1: [2], 2: [1]}, cut)
    _, res = live(model, backend)
    assert res.verdict == "pass", res.summary_lines()
    assert res.violations == () and res.livelocks == ()
    assert (res.cyclic_components, res.fair_components, res.undecided_components) == (1, 0, 1)
    assert (res.pruned_states, res.unsettleable_states, res.undecided_states) == (len(cut), 0, 3)
    # Told nothing of the bound, the same graph has the livelock.
    _, res = live(DGraph([0], model.edges), backend)
    assert [v.name for v in res.violations] == [EVENTUALLY_QUIESCENT, QUIESCENCE_REACHABLE]
    assert (res.fair_components, res.undecided_components) == (1, 0)


def test_a_replayed_lasso_reproduces_only_if_it_is_a_fair_livelock() -> None:
    from kcm.checker.engine.liveness import reproduces_liveness

    states = ["start", "elected", "resigned", "elected"]
    actions = [Elect(), Resume(), Elect()]
    assert reproduces_liveness(Failover(), states, actions)
    assert reproduces_liveness(Failover(escape="elected"), states, actions)
    assert not reproduces_liveness(Failover(escape="always"), states, actions)  # Complete is forced
    # Not a lasso: judged by whether healing can settle the last state.
    assert reproduces_liveness(Failover(), ["start"], [])
    assert not reproduces_liveness(Failover(escape="elected"), ["start"], [])


def test_known_loops_are_listed_not_failed() -> None:
    class Known(Failover):
        def known_loops(self):
            return (KnownLoop("ResumeThrows", "F99", EVENTUALLY_QUIESCENT,
                              lambda cycle: any(isinstance(a, Resume) for a, _ in cycle)),)

    _, res = live(Known(escape="elected"))
    assert res.verdict == "pass", res.summary_lines()
    assert [(k.known, k.finding, k.prefix_length, k.cycle_length) for k in res.known] == [
        ("ResumeThrows", "F99", 1, 2)]
    # Without the escape the loop's states cannot settle either: still explained by the known loop.
    _, res = live(Known())
    assert res.verdict == "pass" and res.unsettleable_states == 3


def test_the_graph_needs_symmetry_off_and_a_complete_run() -> None:
    with pytest.raises(UsageError, match="symmetry off"):
        explore(TwoPhaseCommit(3, symmetric=True), keep_graph=True)
    cut = explore(Failover(), keep_graph=True, symmetry=False, max_depth=1)
    assert check_liveness(Failover(), cut.extra["graph"]).verdict == "not checked"
    stopped = explore(grid(3, bugs=[(1, 1)]), keep_graph=True, symmetry=False)
    assert check_liveness(grid(3), stopped.extra["graph"]).verdict == "not checked"


def test_the_graph_records_every_edge_in_successor_order() -> None:
    model = TwoPhaseCommit(3)
    result = explore(model, keep_graph=True, symmetry=False)
    g = result.extra["graph"]
    assert (g.nodes, g.edges) == (288, result.stats.generated - 1)
    assert g.nbytes() == 6 * g.edges + 17 * g.nodes + 8
    # Replaying each node's BFS path lands on a state whose successors are its row, in order.
    from kcm.checker.engine.liveness import _replay
    for v in random.Random(1).sample(range(g.nodes), 40):
        state = _replay(model, g, g.path_to(v))[-1][1]
        assert [a for a, _ in model.successors(state)] == [g.action(e) for e in g.out_edges(v)]


# ---- the array algorithms against networkx ---------------------------------------------------------


def random_graph(rng: random.Random, n: int, m: int) -> ExploredGraph:
    g = ExploredGraph()
    rows = [sorted(rng.randrange(n) for _ in range(rng.randint(0, 2 * m // n))) for _ in range(n)]
    for v in range(n):
        g.add_node(0 if v else 0xFFFFFFFF, 0, rng.random() < 0.1)
    for v in range(n):
        g.begin(v)
        for t in rows[v]:
            g.add_edge(t, ("go", t), rng.random() < 0.8)
    g.finish(True)
    return g


@pytest.mark.parametrize("seed", range(40))
def test_tarjan_and_reverse_reachability_agree_with_networkx(seed) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 60)
    g = random_graph(rng, n, rng.randint(0, 3 * n))
    node_ok = bytearray(rng.random() < 0.85 for _ in range(n))
    edge_ok = g.healing_mask()
    for nodes, edges in ((None, None), (node_ok, edge_ok)):
        ours = {frozenset(c) for c in tarjan_scc(g, nodes, edges)}
        theirs = {frozenset(c) for c in nx_scc(g, nodes, edges)}
        assert ours == theirs
        # networkx straight, not through our conversion's helpers
        direct = nx.DiGraph()
        direct.add_nodes_from(v for v in range(n) if nodes is None or nodes[v])
        for v in range(n):
            for e in g.out_edges(v):
                t = g.targets[e]
                if (edges is None or edges[e]) and (nodes is None or (nodes[v] and nodes[t])):
                    direct.add_edge(v, t)
        assert ours == {frozenset(c) for c in nx.strongly_connected_components(direct)}
    goal = bytearray(g.quiescent)
    assert reaching(g, goal, edge_ok) == nx_reaching(g, goal, edge_ok)


@pytest.mark.parametrize("seed", range(15))
def test_both_backends_give_the_same_verdicts_on_random_models(seed) -> None:
    rng = random.Random(100 + seed)
    n = rng.randint(2, 25)
    edges = {v: sorted({rng.randrange(n) for _ in range(rng.randint(0, 3))}) for v in range(n)}
    model = DGraph([0], edges, terminal=[v for v in range(n) if rng.random() < 0.2])
    _, a = live(model, "nx")
    _, b = live(model, "arrays")
    assert (a.verdict, a.cyclic_components, a.fair_components, a.unsettleable_states) == (
        b.verdict, b.cyclic_components, b.fair_components, b.unsettleable_states)
    assert [(v.name, v.trace, v.loop) for v in a.violations] == [(v.name, v.trace, v.loop) for v in b.violations]
