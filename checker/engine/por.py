"""Partial-order reduction for the sequential explorer: ample sets computed as stubborn sets.

What is reduced. In a state `s`, instead of every enabled action the explorer may expand only an
*ample set* `ample(s)`, a subset of the enabled actions that satisfies the four conditions of
Clarke, Grumberg and Peled (Model Checking, ch. 10; Peled 1993):

- C0: `ample(s)` is empty only if nothing is enabled (so deadlocks stay deadlocks);
- C1: along every path from `s` in the *full* graph, no action that is dependent on an action of
  `ample(s)` runs before some action of `ample(s)` does;
- C2: if `ample(s)` is not every enabled action, each of its actions is invisible to every
  property checked (it cannot change what any of them reads, and no transition property or goal
  judges its steps);
- C3 (cycle proviso, the BFS form): if an ample successor of `s` was found at `s`'s BFS level or
  before, `s` is fully expanded. Every cycle of the reduced graph then has a fully expanded state:
  an edge raises the level of its target by at most one over its source, so going round a cycle
  some edge does not raise it, and its source sees that target already found at its level or
  before. (Successors first found at the next level, through other states of this level, are
  only diamonds, not cycles.)

Why it is sound for what the explorer checks. Under C0-C3 every path of the full graph from an
initial state to a state violating an `Always` (or to a deadlock) has a path of the reduced graph
that runs the same visible actions in the same order, with some invisible actions moved earlier
or added; each moved or added action is independent of the visible ones it passes, so the state
before a visible action differs from the original one only in components no property reads.
Hence the same `Always` fails, and a deadlock is reached exactly (C0 and C1 alone keep deadlocks).
A transition invariant or goal (`AlwaysStep`, `Sometimes`) declares the state components it reads
and the action kinds whose steps it judges (`PropertyReads`); those kinds are visible, so their
steps are never moved, and they run from a state that agrees with the original one on everything
the action and the property read, which gives the same next state there and the same verdict.
With symmetry on, the explorer reduces the quotient graph: the ample set is computed on the
concrete state it holds and the proviso asks about orbits (a visited orbit), which is at least as
often as about states; the argument above applies step by step after renaming the rest of the
path onto the held state, since the properties are symmetric (docs/checking.md, "Partial-order
reduction").

How C1 is met. The model declares its actions in *groups* (a group key is a tuple `(kind, *ids)`),
each with a static footprint: the named state components its actions may read (guards included:
whether an action is enabled may depend only on what it reads) and may write, over every state.
Two groups are dependent when one writes what the other reads or writes. The ample set is a
stubborn set (Valmari): start from one enabled invisible group; add, for an enabled group in the
set, every group dependent on it, and for a disabled one every group that writes one of its
*necessary enabling* components (a set of components one of which must change before any of its
actions can be enabled: by default everything it reads; a model may name a smaller set per state,
read off a false conjunct of the guard, or several, of which the cheapest is taken); stop when
nothing is added. The enabled actions of the groups in the set then satisfy C0 and C1. Among the
seeds the smallest result wins, and a result with a visible group in it, or with every enabled
group, means full expansion. A group may depend on the state (`group_of(state, action)`) when the
groups are finer action classes whose guards read what tells them apart.
Footprints must over-approximate; the tests check every declared write, the commutation of every
pair of enabled actions declared independent, and every enabling set, on every reachable state of
small presets.

Traces. The explorer records the index of each action in the *full* `model.successors(s)`, so
traces replay as before; they are real paths but may be longer than the shortest, which the
result says (`extra["por"]`).

Not for liveness: the reduced graph's cycles are not the full graph's, so the explorer refuses POR
together with `keep_graph`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kcm.checker.engine.contract import Footprint, Independence, Model, PropertyReads

__all__ = ["Footprint", "Independence", "PropertyReads", "Reducer", "dependent"]


def dependent(f: Footprint, g: Footprint) -> bool:
    """Whether two footprints conflict: one writes what the other reads or writes."""
    return bool(f.writes & (g.reads | g.writes)) or bool(g.writes & f.reads)


@dataclass
class PorStats:
    """Counters of one reduced run."""

    states: int = 0          # states expanded
    reduced: int = 0         # states expanded with a proper ample set
    proviso: int = 0         # states fully expanded by the cycle proviso (C3)
    skipped: int = 0         # enabled actions not expanded
    reduced_by_kind: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"states": self.states, "reduced": self.reduced, "proviso": self.proviso,
                "skipped_edges": self.skipped, "traces": "may be longer than the shortest"}


class Reducer:
    """Ample sets for one run: `expand(state, visited, fingerprint)` gives the edges to explore."""

    def __init__(self, model: Model, properties: Sequence[Any]) -> None:
        info = model.por_info()
        if info is None:
            raise ValueError(f"model '{model.name}' declares no independence (Model.por_info)")
        self.model = model
        self.group_of = info.group_of
        groups = dict(info.groups)
        self.groups = groups
        keys = list(groups)
        self.visible = frozenset(self._visible(info, groups, properties))
        #: No invisible group: no proper ample set can exist, and states are expanded in full.
        self.all_visible = self.visible >= frozenset(groups)
        self.deps = {g: frozenset(h for h in keys if dependent(groups[g], groups[h])) for g in keys}
        self.enablers = {g: frozenset(h for h in keys if groups[h].writes & groups[g].reads) for g in keys}
        self.writers: dict[Hashable, set] = {}
        for h in keys:
            for c in groups[h].writes:
                self.writers.setdefault(c, set()).add(h)
        self.nes = info.enablers
        self._state: Any = None
        self._level = -1
        #: Fingerprints of the states found at the level after the one being expanded.
        self._next_level: set = set()
        self._cache: dict[frozenset, frozenset | None] = {}
        self.stats = PorStats()
        #: For the state last expanded: the index in the full successors list of each edge returned.
        self.indices: list[int] = []

    @staticmethod
    def _visible(info: Independence, groups: Mapping, properties: Sequence[Any]) -> Iterable[Hashable]:
        reads = []
        for p in properties:
            r = info.property_reads(p.name)
            if r is None:
                return groups  # a property that may read anything: every group is visible
            reads.append(r)
        return [g for g, fp in groups.items()
                if any(fp.writes & r.components or g[0] in r.kinds for r in reads)]

    def ample_groups(self, enabled: frozenset, state: Any = None) -> frozenset | None:
        """The groups of a proper ample set among the `enabled` groups, or None (expand all).
        With state-dependent enabling sets (`Independence.enablers`) the answer depends on `state`."""
        self._state = state
        self._nes: dict = {}
        if self.nes is None and enabled in self._cache:
            return self._cache[enabled]
        best: frozenset | None = None
        for seed in sorted(enabled - self.visible, key=repr):
            found = self._closure(seed, enabled, best)
            if found is not None:
                best = found
                if len(best) == 1:
                    break  # nothing smaller exists
        if self.nes is None:
            self._cache[enabled] = best
        return best

    def _enablers_of(self, g: Hashable, members: set, enabled: frozenset) -> frozenset:
        """The groups that may enable the disabled group `g` (in the state being expanded). A
        model may offer several necessary enabling sets; the one adding the fewest enabled groups
        not yet in the closure (`members`) is taken."""
        if self.nes is None:
            return self.enablers[g]
        options = self._nes.get(g)
        if options is None:
            comps = self.nes(self._state, g)
            if comps is None:
                options = (self.enablers[g],)
            else:
                alternatives = comps if isinstance(comps, tuple) else (comps,)
                options = tuple(frozenset(h for c in alt for h in self.writers.get(c, ())) for alt in alternatives)
            self._nes[g] = options
        if len(options) == 1:
            return options[0]
        return min(options, key=lambda o: (len((o - members) & enabled), len(o - members)))

    def _closure(self, seed: Hashable, enabled: frozenset, best: frozenset | None) -> frozenset | None:
        limit = len(enabled) if best is None else len(best)
        members = {seed}
        hit = {seed}
        todo = [seed]
        while todo:
            g = todo.pop()
            for h in (self.deps[g] if g in enabled else self._enablers_of(g, members, enabled)):
                if h in members:
                    continue
                if h in enabled:
                    if h in self.visible:
                        return None
                    hit.add(h)
                    if len(hit) >= limit:
                        return None
                members.add(h)
                todo.append(h)
        return frozenset(hit) if len(hit) < limit else None

    def expand(self, state: Any, visited: Mapping[bytes, Any], fingerprint: Callable[[Any], bytes],
               level: int) -> list:
        """The (action, next state) pairs to explore from `state`, found at BFS `level`;
        `self.indices` their indices in the full successors list."""
        if level != self._level:
            self._level, self._next_level = level, set()
        succ = list(self.model.successors(state))
        stats = self.stats
        stats.states += 1
        edges = succ
        self.indices = list(range(len(succ)))
        if self.all_visible:
            return succ
        if len(succ) > 1:
            group_of = self.group_of
            kinds = [group_of(state, a) for a, _ in succ]
            ample = self.ample_groups(frozenset(kinds), state)
            if ample is not None:
                chosen = [i for i, g in enumerate(kinds) if g in ample]
                fps = [fingerprint(succ[i][1]) for i in chosen]
                # C3: an ample successor found at this level or before closes a cycle, maybe
                if any(f in visited and f not in self._next_level for f in fps):
                    stats.proviso += 1
                else:
                    stats.reduced += 1
                    stats.skipped += len(succ) - len(chosen)
                    self.indices = chosen
                    self._next_level.update(fps)
                    return [succ[i] for i in chosen]
        self._next_level.update(fingerprint(t) for _, t in edges)
        return edges
