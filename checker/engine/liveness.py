"""Liveness on the explored graph: runs of healing actions that never settle, found as cycles.

The bounded checks (`quiescence` invariants, deadlocks) judge the states where healing has
stopped. A run that heals forever without ever stopping is judged by nothing there; with the
config's budgets the state space is finite, so such a run ends in a cycle of the explored graph and
can be found exactly, as TLC checks temporal properties on its behaviour graph. The explorer keeps
the graph (`CheckOptions.keep_graph`, `kcm.checker.engine.graph`); this module checks two properties on it.

**EventuallyQuiescent** (TLA+: `Fairness => <>Quiescent`): every run that, from some point on,
takes healing actions only (`Model.is_healing`; faults and operator requests have budgets, so every
infinite run does) and is weakly fair to each healing action reaches a quiescent state
(`Model.is_quiescent`). Weak fairness is per action instance (`ControllerProcessEvent(1)` and
`ControllerProcessEvent(2)` are two actions, as `\\A b: WF_vars(Process(b))` in TLA+): a run is
unfair to action A if, from some point on, A is enabled in every state and never taken.

A violation is a cycle, and the check is on strongly connected components, as TLC's liveness
checker does (tlaplus `tlatools/.../tlc2/tool/liveness/LiveWorker.java`: `checkSccs` runs an
iterative Tarjan over the behaviour graph and `checkComponent` tests each SCC against the fairness
conditions, `[]<>(~ENABLED A \\/ <A>_v)` for each `WF_vars(A)`, before printing the shortest
prefix and a cycle through the SCC). Take the subgraph H of healing edges between non-quiescent states (a run that
reaches a quiescent state satisfies the property, so those states are removed first: a cycle that
avoids them may still exist in a component that contains one). A component C of H with a cycle is
a **fair livelock** iff for every healing action A enabled (by a healing edge, to anywhere) in
*every* state of C, some edge of C inside C takes A. Why this is exact for weak fairness:

- if C passes, the run that goes round all of C's states and edges forever is fair: each A is
  either disabled somewhere on it (not continuously enabled) or taken infinitely often;
- if C fails for some A, every run staying in C from some point on has A enabled in every state
  and never takes A (no edge of C takes it), so it is unfair: fairness makes it take A, leaving C.
  No sub-cycle of C helps, since a sub-cycle has A enabled everywhere too and no A edge either.
  (Strong fairness would need TLC's recursive decomposition into sub-components; weak does not.)

A healing action enabled only in some states of the cycle does not break it: fairness forces an
action continuously enabled, not one enabled infinitely often (that is strong fairness).

**QuiescenceAlwaysReachable** (CTL `AG EF Quiescent` over healing steps): from every reachable
state some run of healing actions reaches a quiescent state, by reverse reachability from the
quiescent states along healing edges. A failing state leads, by healing steps, into a bottom
component with no quiescent state: a fair livelock (reported above) or a state where no healing
action is enabled and that is not quiescent (a healing deadlock, which only this property sees).

**EventuallySettled** (for a model that tells settled states, `Model.is_settled`): the same check
with the settled states as the goal and the healing actions `Model.is_unforced` says fairness does
not force (restarting a dead broker: a dead machine may stay dead) left out of the fairness
condition. A cycle that only a restart would leave is a livelock here, not for EventuallyQuiescent.

**Pruned states.** A state one of whose healing steps a bound of the model cut (`Model.pruned`: an
event queue's capacity, an epoch bound; a TLC state constraint) has a future the graph does not
show. Such a state is never blamed: a fair component containing one is undecided, not reported,
and a state that cannot settle except through one is undecided, not a QuiescenceAlwaysReachable
failure. The summary counts them. (A model explored modulo a quotient, such as the Kafka model
modulo controller epochs, identifies states by `Model.fingerprint`; the lasso's last state then
equals its loop state up to the quotient.)

**Lassos.** Each fair livelock is reported as a lasso: the shortest prefix (the BFS tree path) to
the component's shallowest state (its smallest node id), then a cycle from that state back to it
through the component: the shortest cycle, extended by a detour through an edge of each healing
action that is enabled in every state of the cycle but not yet taken, until the cycle itself is
fair. The trace is replayed through `Model.successors` (the edge's position in its row is the
successor index), so it is a real execution; its last state equals the state at index `loop`, which
the text marks "back to state N" as TLC does, and ITF records as `loop`. A lasso that a model's
`known_loops` entry matches is listed as known (with its Finding), not as a violation.

Size: the algorithms run on networkx while the subgraph is small and on the compact arrays beyond
(`kcm.checker.engine.graph.choose_backend`); both give the same components.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kcm.checker.engine.contract import KnownAs, Model
from kcm.checker.engine.graph import (
    ExploredGraph,
    choose_backend,
    nontrivial,
    nx_reaching,
    nx_scc,
    reaching,
    shortest_path,
    tarjan_scc,
)
from kcm.checker.engine.result import Trace, Violation

EVENTUALLY_QUIESCENT = "EventuallyQuiescent"
EVENTUALLY_SETTLED = "EventuallySettled"
QUIESCENCE_REACHABLE = "QuiescenceAlwaysReachable"
LIVENESS_PROPERTIES = (EVENTUALLY_QUIESCENT, EVENTUALLY_SETTLED, QUIESCENCE_REACHABLE)
LIVENESS = "liveness"
#: At most this many lassos are kept per class (known, unknown); every fair component is still
#: classified, so one beyond the cap can fail the check.
MAX_LASSOS = 50


@dataclass(frozen=True)
class Lasso:
    """A fair livelock: `trace` is the prefix then the cycle; `trace[loop]` is the cycle's first
    state and the last state equals it. `known` names the `KnownLoop` it matches, if any."""

    trace: Trace
    loop: int
    states: int
    #: The node id of the cycle's first state.
    entry: int
    known: str | None = None
    finding: str | None = None
    #: The property it breaks (EventuallyQuiescent or EventuallySettled).
    breaks: str = EVENTUALLY_QUIESCENT

    @property
    def prefix_length(self) -> int:
        return self.loop

    @property
    def cycle_length(self) -> int:
        return len(self.trace) - 1 - self.loop


@dataclass(frozen=True)
class LivenessResult:
    """What the liveness pass found, and what it cost."""

    #: "pass", "violation", or "not checked" (the exploration was incomplete).
    verdict: str
    violations: tuple[Violation, ...] = ()
    #: Fair livelocks matched by a known loop of the model (listed, not violations).
    known: tuple[Lasso, ...] = ()
    #: Fair livelocks not matched by a known loop (the violation shows the shortest).
    livelocks: tuple[Lasso, ...] = ()
    #: Components of the healing subgraph (off the quiescent states) that have a cycle.
    cyclic_components: int = 0
    #: Of those, the fair ones (livelocks), lassos built or not.
    fair_components: int = 0
    #: States from which no quiescent state is reachable by healing steps.
    unsettleable_states: int = 0
    #: States a bound left a healing step out of (`Model.pruned`): their future is not known.
    pruned_states: int = 0
    #: Fair components with a pruned state: neither passed nor reported (the bound may hide a way out).
    undecided_components: int = 0
    #: States that cannot settle as far as the graph shows, but reach a pruned state: not reported.
    undecided_states: int = 0
    #: What states are identified by (`Model.quotient`, e.g. "controller epochs"), or "".
    quotient: str = ""
    #: The liveness properties checked (EventuallySettled only for a model with `is_settled`).
    checked: tuple[str, ...] = (EVENTUALLY_QUIESCENT, QUIESCENCE_REACHABLE)
    nodes: int = 0
    edges: int = 0
    healing_edges: int = 0
    graph_bytes: int = 0
    backend: str = ""
    duration_s: float = 0.0
    reason: str = ""
    #: What the model calls its known behaviours (`Model.known_as`): the words its known loops are listed with.
    known_as: KnownAs = KnownAs()

    def summary_lines(self) -> list[str]:
        if self.verdict == "not checked":
            return [f"Liveness not checked: {self.reason}."]
        lines = [f"Liveness ({self.backend}, {self.duration_s:.1f} s): {self.nodes:,} states"
                 + (f" (modulo {self.quotient})" if self.quotient else "")
                 + f", {self.edges:,} edges ({self.healing_edges:,} healing) "
                 f"kept in {self.graph_bytes / 2**20:.1f} MiB; "
                 f"{self.cyclic_components} cyclic healing components, {self.fair_components} fair; "
                 f"{self.unsettleable_states} states cannot settle."]
        if self.pruned_states:
            lines.append(f"  {self.pruned_states:,} states had a healing step cut by a bound "
                         "(an event queue's capacity or the controller epoch bound): "
                         "liveness is undecided there, not failed; "
                         f"{self.undecided_components} fair components and {self.undecided_states:,} states that "
                         "settle only through such a state are not reported.")
        for name in self.checked:
            v = next((x for x in self.violations if x.name == name), None)
            lines.append(f"  liveness '{name}': " + ("holds" if v is None else (
                f"violated by a lasso: {_n(v.loop)} to a cycle of {_n((v.trace_length or 0) - v.loop)}"
                if v.loop is not None
                else f"violated: no healing run settles the state reached in {_n(v.trace_length or 0)}")))
        for k in self.known:
            lines.append(f"  {self.known_as.words('loop', brief=True)} '{k.known}' ({k.finding}, breaks {k.breaks}): "
                         f"{_n(k.prefix_length)} to a cycle of {_n(k.cycle_length)} (listed, not a violation)")
        return lines


def _n(steps: int) -> str:
    return f"{steps} step{'' if steps == 1 else 's'}"


def check_liveness(model: Model, graph: ExploredGraph | None, *, backend: str = "auto",
                   max_lassos: int = MAX_LASSOS) -> LivenessResult:
    """Check `EventuallyQuiescent` and `QuiescenceAlwaysReachable` on the explored graph (see the
    module docstring). The graph must be complete: a partial graph proves nothing."""
    if graph is None:
        return LivenessResult("not checked", reason="the explored graph was not kept")
    if not graph.complete:
        return LivenessResult("not checked", reason="the exploration did not expand every state",
                              nodes=graph.nodes, edges=graph.edges, graph_bytes=graph.nbytes())
    started = time.perf_counter()
    healing = graph.healing_mask()
    pruned = graph.pruned
    healing_edges = sum(healing)
    chosen = choose_backend(healing_edges, backend)

    # EventuallyQuiescent: the fair components of the healing subgraph off the quiescent states;
    # EventuallySettled: the same off the settled states, restarts not forced by fairness.
    checked = [EVENTUALLY_QUIESCENT]
    goals: dict[str, tuple[Any, frozenset[int]]] = {EVENTUALLY_QUIESCENT: (graph.quiescent, frozenset())}
    if type(model).is_settled is not Model.is_settled:
        checked.append(EVENTUALLY_SETTLED)
        goals[EVENTUALLY_SETTLED] = (graph.settled, frozenset(
            i for i, a in enumerate(graph.actions) if model.is_unforced(a)))
    checked.append(QUIESCENCE_REACHABLE)
    known_loops = tuple(model.known_loops())
    known: list[Any] = []
    unknown: list[Any] = []
    known_entries: set[int] = set()
    violations = []
    cyclic_count = fair_count = undecided_count = 0
    for prop, (goal, unforced) in goals.items():
        off_goal = bytearray(1 - g for g in goal)
        components = (nx_scc if chosen == "nx" else tarjan_scc)(graph, off_goal, healing)
        cyclic = [c for c in components if nontrivial(graph, c, healing)]
        fair = sorted((c for c in cyclic if _is_fair(graph, c, healing, unforced)), key=min)
        # A bound cut a healing step out of some state of the component: that step might leave it,
        # or break its fairness. Undecided, never reported (`Model.pruned`).
        undecided = [c for c in fair if any(pruned[v] for v in c)]
        fair = [c for c in fair if not any(pruned[v] for v in c)]
        if prop == EVENTUALLY_QUIESCENT:
            cyclic_count, fair_count, undecided_count = len(cyclic), len(fair), len(undecided)
        prop_unknown: list[Any] = []
        unknown_count = 0
        for component in fair:
            lasso = _lasso(model, graph, component, healing, unforced, prop)
            # the entry state (no action), then each step of the cycle
            cycle = ((None, lasso.trace[lasso.loop][1]),) + lasso.trace[lasso.loop + 1:]
            match = next((k for k in known_loops if k.property == prop and k.matches(cycle)), None)
            if match is None:
                unknown_count += 1
                if len(prop_unknown) < max_lassos:
                    prop_unknown.append(lasso)
            else:
                if prop == EVENTUALLY_QUIESCENT:
                    known_entries.add(lasso.entry)
                if len(known) < max_lassos:
                    known.append(Lasso(lasso.trace, lasso.loop, lasso.states, lasso.entry, match.name, match.finding,
                                       prop))
        if unknown_count:
            first = min(prop_unknown, key=lambda x: (len(x.trace), x.loop))
            violations.append(Violation(prop, LIVENESS, first.trace, first.loop))
        unknown += prop_unknown

    reach = nx_reaching if chosen == "nx" else reaching
    stuck, undecided_states, unexplained = _unsettleable(graph, healing, reach, fair, known_entries)
    if unexplained:
        v = unexplained[0]  # the smallest id: a shallowest such state
        violations.append(Violation(QUIESCENCE_REACHABLE, LIVENESS, _replay(model, graph, graph.path_to(v))))
    return LivenessResult(
        verdict="violation" if violations else "pass", violations=tuple(violations), known=tuple(known),
        livelocks=tuple(unknown), cyclic_components=cyclic_count, fair_components=fair_count,
        unsettleable_states=len(stuck), pruned_states=sum(pruned), undecided_components=undecided_count,
        checked=tuple(checked), undecided_states=undecided_states, quotient=getattr(model, "quotient", ""),
        nodes=graph.nodes, edges=graph.edges, healing_edges=healing_edges,
        graph_bytes=graph.nbytes(), backend=chosen, duration_s=time.perf_counter() - started,
        known_as=model.known_as,
    )


def _unsettleable(graph: ExploredGraph, healing: bytearray, reach: Any, fair: list[list[int]],
                  known_entries: set[int]) -> tuple[list[int], int, list[int]]:
    """QuiescenceAlwaysReachable: reverse reachability from the quiescent states. Returns the
    states that cannot settle, how many more are undecided, and those of the first that no known
    loop explains. A known loop's states cannot settle either; reaching one counts as settling
    here, so that a known loop fails neither property, and any other state that cannot settle
    still does. A pruned state may settle by the step the bound cut: reaching one is undecided,
    not a failure."""
    pruned = graph.pruned
    can_settle = reach(graph, graph.quiescent, healing)
    stuck = [v for v in range(graph.nodes) if not can_settle[v]]
    undecided_states = 0
    if stuck and any(pruned):
        maybe = reach(graph, bytearray(q | p for q, p in zip(graph.quiescent, pruned)), healing)
        undecided_states = sum(1 for v in stuck if maybe[v])
        stuck = [v for v in stuck if not maybe[v]]
    if not (stuck and known_entries):
        return stuck, undecided_states, stuck
    goal = bytearray(graph.quiescent)
    for c in fair:
        if min(c) in known_entries:
            for v in c:
                goal[v] = 1
    excused = reach(graph, goal, healing)
    return stuck, undecided_states, [v for v in stuck if not excused[v]]


def _is_fair(graph: ExploredGraph, component: list[int], healing: bytearray, unforced: frozenset = frozenset()) -> bool:
    """Whether every healing action enabled in every state of `component` is taken by one of its
    inner edges (see the module docstring); actions with an id in `unforced` are not assumed fair."""
    inside = set(component)
    labels, targets = graph.labels, graph.targets
    always: set[int] | None = None
    taken: set[int] = set()
    for v in component:
        here = set()
        for e in graph.out_edges(v):
            if healing[e]:
                here.add(labels[e] >> 1)
                if targets[e] in inside:
                    taken.add(labels[e] >> 1)
        always = here if always is None else always & here
    return not (always or set()) - taken - unforced


def _lasso(model: Model, graph: ExploredGraph, component: list[int], healing: bytearray,
           unforced: frozenset = frozenset(), prop: str = EVENTUALLY_QUIESCENT) -> Lasso:
    """The lasso of a fair component (see the module docstring)."""
    entry = min(component)
    inside = bytearray(graph.nodes)
    for v in component:
        inside[v] = 1
    targets, labels = graph.targets, graph.labels
    cycle = shortest_path(graph, entry, lambda e: targets[e] == entry, inside, healing)
    assert cycle is not None, "a component with a cycle has one through each of its states"
    while True:
        nodes = [entry] + [targets[e] for e in cycle[:-1]]
        enabled: set[int] | None = None
        for v in nodes:
            here = {labels[e] >> 1 for e in graph.out_edges(v) if healing[e]}
            enabled = here if enabled is None else enabled & here
        missing = sorted((enabled or set()) - {labels[e] >> 1 for e in cycle} - unforced)
        if not missing:
            break
        want = missing[0]
        to_edge = shortest_path(graph, entry, lambda e, w=want: labels[e] >> 1 == w and healing[e], inside, healing)
        assert to_edge is not None, "every action enabled throughout the cycle is taken inside the component"
        back = ([] if targets[to_edge[-1]] == entry else
                shortest_path(graph, targets[to_edge[-1]], lambda e: targets[e] == entry, inside, healing))
        assert back is not None, "a component is strongly connected"
        cycle = to_edge + back + cycle
    steps = graph.path_to(entry)
    prefix_length = len(steps) - 1
    node = entry
    for e in cycle:
        steps.append((targets[e], e - graph.offsets[node]))
        node = targets[e]
    trace = _replay(model, graph, steps)
    # Equal fingerprints: equal states, or, for a model explored modulo a quotient (the controller
    # epochs), equal up to it.
    if model.fingerprint(trace[-1][1]) != model.fingerprint(trace[prefix_length][1]):
        raise RuntimeError(f"model '{model.name}' is not deterministic: replaying a cycle did not return "
                           "to its first state")
    return Lasso(trace, prefix_length, len(component), entry, breaks=prop)


def _replay(model: Model, graph: ExploredGraph, steps: list[tuple[int, int]]) -> Trace:
    """The trace of `graph.path_to`-style steps, replayed through `model.successors`."""
    state = model.init_states()[steps[0][1]]
    trace = [(None, state)]
    for _, index in steps[1:]:
        action, state = next(itertools.islice(model.successors(state), index, None))
        trace.append((action, state))
    return tuple(trace)


def reproduces_liveness(model: Model, states: Sequence[Any], actions: Sequence[Any], limit: int = 1_000_000,
                        prop: str = EVENTUALLY_QUIESCENT) -> bool:
    """Whether a replayed trace shows its liveness violation, judged on the trace alone (for
    `kcm.checker.engine.replay`). A lasso (its last state appears earlier; the first such index is the
    loop) must be a fair cycle of healing steps through non-quiescent states. Any other trace must
    end in a state from which no run of healing steps reaches a quiescent state (searched forward,
    up to `limit` states)."""
    last = model.fingerprint(states[-1])
    loop = next((i for i, s in enumerate(states[:-1]) if model.fingerprint(s) == last), None)
    if loop is not None:
        cycle = list(zip(states[loop:-1], actions[loop:]))
        goal = model.is_settled if prop == EVENTUALLY_SETTLED else model.is_quiescent
        if any(goal(s) or not model.is_healing(s, a) for s, a in cycle):
            return False
        enabled: set[Any] | None = None
        for s, _ in cycle:
            here = {a for a, _ in model.successors(s) if model.is_healing(s, a)
                    and not (prop == EVENTUALLY_SETTLED and model.is_unforced(a))}
            enabled = here if enabled is None else enabled & here
        return not (enabled or set()) - {a for _, a in cycle}
    fp = model.fingerprint
    seen, todo = {last}, [states[-1]]
    while todo and len(seen) <= limit:
        s = todo.pop()
        if model.is_quiescent(s):
            return False
        for a, t in model.successors(s):
            if model.is_healing(s, a) and fp(t) not in seen:
                seen.add(fp(t))
                todo.append(t)
    return not todo

