"""Which runs symmetry reduces, and which start from one initial state per orbit instead.

Two ways of using the broker renamings (model/checking/symmetry.py) keep every property's verdict:

- **reduction**: key every state by its orbit's representative, so that renamings of one another
  are explored once;
- **one initial state per orbit**: start from one initial state of each orbit and key states by
  themselves. The states reached from a renamed initial state are the renamed states, and no
  property names a broker, so every orbit of reachable states is still explored (what the
  liveness check does, `KafkaModel(initial_orbits=True)`).

The first merges more, the second costs nothing per state. Which merges more depends on where
renamings of one reachable state are reachable again, and that is a question of what tells the
brokers apart: their roles in the assignment (model/checking/symmetry.py, `_roles`), then their histories.

- Two brokers alike from the start (no topic yet, a replication factor that leaves two brokers
  out, a state that some renaming maps to itself) make the states reached come in renamings of
  one another: reduction merges them (`v4`, RF 1 on three brokers; a cluster with no topic).
- A topic deletion leaves no assignment, so the brokers' roles tie again, and a re-creation's
  placements are renamings of one another; a reassignment can leave two brokers with no replica
  when the topic uses two brokers fewer than the cluster has.
- Otherwise, from an initial state that only the identity maps to itself, each broker keeps a role
  no other has: two states that are renamings of one another need two histories that end alike up
  to the names, which the budgets spent, the epochs and the controller's place nearly always tell
  apart. `default`'s crash-then-reassignment and controller-move runs merge nothing, and
  reduction only costs them the renaming of every state generated; the mutation configs without
  deletion merge nothing either (the figures are in docs/benchmarks.md).

So a run (`Cluster.scenario`: the cold start, each overlapping run) is reduced when one of its
initial states, one per orbit, is fixed by a renaming other than the identity, or when the run
may delete a topic or leave two brokers out by a reassignment; each other run starts from one
initial state per orbit and computes no representative. Both choices are sound whatever the
run; the rule only decides which is cheaper, and a run it gets wrong is explored more slowly (or
with more states), never less completely.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from kcm.model.checking.symmetry import Symmetry
from kcm.model.cluster import Cluster
from kcm.model.config import ModelConfig


def fixed_by_a_renaming(state: Cluster, symmetry: Symmetry | None = None) -> bool:
    """Whether a renaming other than the identity maps `state` to itself (two brokers alike)."""
    n = len(state.brokers)
    sym = symmetry or Symmetry(n)
    return any(sym.permute(state, pi) == state for pi in itertools.permutations(range(n)) if pi != sym.identity)


def may_untie(cfg: ModelConfig, run: int) -> bool:
    """Whether a step of `run` may give two brokers the same roles: a topic deletion (no
    assignment left), or a reassignment where a topic's replicas leave two brokers out."""
    if run == 0:
        if cfg.max_perturbations == 0 or cfg.max_admin_ops == 0:
            return False
        deletes, reassigns = cfg.max_topic_deletions > 0, cfg.max_reassignments > 0
    else:
        kinds = cfg.overlapping[run - 1]
        deletes, reassigns = "topic_deletion" in kinds, "reassignment" in kinds
    return deletes or (reassigns and cfg.brokers - cfg.replication_factor >= 2)


def one_per_orbit(states: Sequence[Cluster], symmetry: Symmetry | None = None) -> list[Cluster]:
    """The first listed state of each orbit among `states`, in their order."""
    seen: set = set()
    kept: list[Cluster] = []
    if not states:
        return kept
    sym = symmetry or Symmetry(len(states[0].brokers))
    for s in states:
        rep = sym.representative(s)
        if rep not in seen:
            seen.add(rep)
            kept.append(s)
    return kept


def plan(cfg: ModelConfig, inits: Sequence[Cluster],
         symmetry: Symmetry | None = None) -> tuple[tuple[Cluster, ...], frozenset[int]]:
    """The initial states to explore from and the runs to reduce by symmetry: every initial
    state of a reduced run, one per orbit of each other run (first listed: the default spread),
    in their listed order. `symmetry`: the model's renamings (made here when not given)."""
    symmetry = symmetry or Symmetry(cfg.brokers)
    runs: dict[int, list[Cluster]] = {}
    for s in inits:
        runs.setdefault(s.scenario, []).append(s)
    reduced = set()
    kept: set[int] = set()
    for run, states in runs.items():
        firsts = one_per_orbit(states, symmetry)
        if may_untie(cfg, run) or any(fixed_by_a_renaming(s, symmetry) for s in firsts):
            reduced.add(run)
            kept.update(map(id, states))
        else:
            kept.update(map(id, firsts))
    return tuple(s for s in inits if id(s) in kept), frozenset(reduced)
