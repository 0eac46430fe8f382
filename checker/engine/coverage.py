"""Coverage: which actions ran and what they found, and which state-table edges were taken.

Per action kind, TLC's `evaluations : new distinct states` pair (`-coverage`, see
`docs/module-coverage-statistics.md` in tlaplus): `evaluations` counts every generated edge of
that kind (one per expanded state where an action of that kind was enabled, per action), `new`
counts the edges that found a state not seen before. `0:0` cannot appear for a listed kind; a kind
the model declares (`Model.action_names`) but never enabled is listed in `never_enabled`, and
`k:0` (ran, never found anything new) is flagged by `unproductive`.

Per table edge: the model says which edges of its state tables a step takes
(`Model.edges_taken`) and which exist (`Model.coverage_universe`); the report lists the untaken
ones in universe order, plus any edge taken outside the universe (a model bug worth seeing).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum


@dataclass(frozen=True)
class ActionCoverage:
    """TLC's `evaluations:new` for one action kind."""

    name: str
    evaluations: int
    new_states: int


def format_edge(edge: Hashable) -> str:
    """`(A, B)` as `A -> B`, Enum members by name; anything else by `str`."""
    if isinstance(edge, tuple):
        return " -> ".join(format_edge(part) for part in edge)
    if isinstance(edge, Enum):
        return edge.name
    return str(edge)


@dataclass(frozen=True)
class Coverage:
    """Per-action and per-table-edge coverage of one run."""

    #: Action kinds in first-generated order.
    actions: tuple[ActionCoverage, ...] = ()
    #: Kinds the model declares (`Model.action_names`) that were never enabled.
    never_enabled: tuple[str, ...] = ()
    #: Table edges taken, in universe order, then any taken outside the universe.
    edges_taken: tuple[Hashable, ...] = ()
    edges_total: int = 0
    #: Universe edges never taken, in universe order.
    untaken: tuple[Hashable, ...] = ()
    #: Edges taken that the universe does not list.
    outside_universe: tuple[Hashable, ...] = ()
    #: How many generated transitions took each edge (both explorers count them). Not part of
    #: equality: a run resumed from an older snapshot may have counted less.
    edge_counts: Mapping[Hashable, int] = field(default_factory=dict, compare=False)

    @property
    def unproductive(self) -> tuple[str, ...]:
        """Action kinds that ran but never found a new state (TLC's `k:0`)."""
        return tuple(a.name for a in self.actions if a.new_states == 0)

    def action(self, name: str) -> ActionCoverage:
        for entry in self.actions:
            if entry.name == name:
                return entry
        return ActionCoverage(name, 0, 0)

    def lines(self) -> list[str]:
        """A TLC-like coverage listing."""
        out = ["Action coverage (evaluations : new distinct states):"]
        width = max((len(a.name) for a in self.actions), default=0)
        out += [f"  {a.name:<{width}}  {a.evaluations}:{a.new_states}" for a in self.actions]
        out += [f"  {name:<{width}}  never enabled" for name in self.never_enabled]
        if self.edges_total or self.outside_universe:
            taken = len(self.edges_taken) - len(self.outside_universe)
            out.append(f"Table edges taken: {taken} of {self.edges_total}")
            out += [f"  untaken: {format_edge(e)}" for e in self.untaken]
            out += [f"  outside the universe: {format_edge(e)}" for e in self.outside_universe]
        return out


def build_coverage(
    evaluations: Mapping[str, int],
    new_states: Mapping[str, int],
    declared: Sequence[str],
    taken: Iterable[Hashable],
    universe: Sequence[Hashable],
) -> Coverage:
    """Assemble a `Coverage` from the explorer's raw counters (kind name -> count)."""
    actions = tuple(ActionCoverage(n, c, new_states.get(n, 0)) for n, c in evaluations.items())
    never = tuple(n for n in declared if n not in evaluations)
    taken_set = set(taken)
    in_universe = set(universe)
    outside = tuple(sorted((e for e in taken_set if e not in in_universe), key=format_edge))
    ordered = tuple(e for e in universe if e in taken_set) + outside
    untaken = tuple(e for e in universe if e not in taken_set)
    counts = dict(taken) if isinstance(taken, Counter) else {}
    return Coverage(actions, never, ordered, len(universe), untaken, outside, counts)


@dataclass
class CoverageCounters:
    """The explorer's raw counters, keyed by whatever is cheapest in the hot loop (the action's
    type when the model keeps the default `action_name`), converted to names at the end."""

    evaluations: dict = field(default_factory=dict)
    new_states: dict = field(default_factory=dict)
    #: Table edge -> how many generated transitions took it (`update` counts, as a set merges).
    edges: Counter = field(default_factory=Counter)

    def named(self, name_of) -> tuple[dict[str, int], dict[str, int]]:
        evals: dict[str, int] = {}
        news: dict[str, int] = {}
        for key, count in self.evaluations.items():
            evals[name_of(key)] = evals.get(name_of(key), 0) + count
        for key, count in self.new_states.items():
            news[name_of(key)] = news.get(name_of(key), 0) + count
        return evals, news
