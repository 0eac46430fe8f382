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
- C3 (cycle proviso, the BFS form): if an ample successor of `s` has been visited already, `s`
  is fully expanded. Every cycle of the reduced graph then has a fully expanded state: in BFS the
  state of a cycle expanded last finds its successor on the cycle visited.

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
set, every group dependent on it, and for a disabled one every group that writes what it reads (a
necessary enabling set: nothing else can enable it); stop when nothing is added. The enabled
actions of the groups in the set satisfy C0 and C1. Among the seeds the smallest result wins,
and a result with a visible group in it, or with every enabled group, means full expansion.
Footprints must over-approximate; the tests check every declared write and the commutation of
every pair of enabled actions declared independent on every reachable state of small presets.

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

from kcm.model.properties import Footprint, Independence, Model, PropertyReads

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
        self.deps = {g: frozenset(h for h in keys if dependent(groups[g], groups[h])) for g in keys}
        self.enablers = {g: frozenset(h for h in keys if groups[h].writes & groups[g].reads) for g in keys}
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

    def ample_groups(self, enabled: frozenset) -> frozenset | None:
        """The groups of a proper ample set among the `enabled` groups, or None (expand all)."""
        if enabled in self._cache:
            return self._cache[enabled]
        best: frozenset | None = None
        for seed in sorted(enabled - self.visible, key=repr):
            found = self._closure(seed, enabled, best)
            if found is not None:
                best = found
                if len(best) == 1:
                    break  # nothing smaller exists
        self._cache[enabled] = best
        return best

    def _closure(self, seed: Hashable, enabled: frozenset, best: frozenset | None) -> frozenset | None:
        limit = len(enabled) if best is None else len(best)
        members = {seed}
        hit = {seed}
        todo = [seed]
        while todo:
            g = todo.pop()
            for h in (self.deps[g] if g in enabled else self.enablers[g]):
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

    def expand(self, state: Any, visited: Mapping[bytes, Any], fingerprint: Callable[[Any], bytes]) -> list:
        """The (action, next state) pairs to explore from `state`; `self.indices` their full indices."""
        succ = list(self.model.successors(state))
        stats = self.stats
        stats.states += 1
        full = range(len(succ))
        if len(succ) > 1:
            group_of = self.group_of
            kinds = [group_of(state, a) for a, _ in succ]
            ample = self.ample_groups(frozenset(kinds))
            if ample is not None:
                chosen = [i for i, g in enumerate(kinds) if g in ample]
                if any(fingerprint(succ[i][1]) in visited for i in chosen):
                    stats.proviso += 1  # C3
                else:
                    stats.reduced += 1
                    stats.skipped += len(succ) - len(chosen)
                    self.indices = chosen
                    return [succ[i] for i in chosen]
        self.indices = list(full)
        return succ
