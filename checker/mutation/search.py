"""Exploring one model within a mutant's budget: exhaustively, by random walks, or for liveness.

A budget (`Budget`) bounds the distinct states per config and the seconds a mutant may take. The
exhaustive search (`explore_with_budget`) is `kcm explore` with every property, stopped at the
first violation or when the budget is spent, and gives the digest of the fingerprint set it
generated (what equivalence with the clean model is judged by). Random walks (`random_walks`)
stand in for it on configs too big to explore; the liveness pass (`liveness_verdict`) is
`kcm explore --liveness`.
"""

from __future__ import annotations

import hashlib
import random
import time
from dataclasses import dataclass

from kcm.checker.engine.bfs import explore, select_properties
from kcm.checker.engine.contract import Always, AlwaysStep
from kcm.checker.engine.liveness import check_liveness


@dataclass(frozen=True)
class Budget:
    """What one mutant may cost: distinct states per config and seconds in all (None: no bound)."""

    max_states: int | None = None
    timeout_s: float | None = None
    #: Random walks per config instead of exhaustive search (for configs too big to explore):
    #: `walks` walks of at most `depth` steps, seeded by `seed`. A walk finds violations but
    #: proves nothing, so a mutant no walk kills is `survived`, never `equivalent`.
    walks: int | None = None
    depth: int = 50
    seed: int = 0
    #: Judge a mutant that survives the safety search by liveness too (`liveness_verdict`): on every
    #: config where its states differ from the clean model's, explore it modulo controller epochs
    #: and check EventuallyQuiescent, EventuallySettled and QuiescenceAlwaysReachable.
    liveness: bool = False
    #: Every goal of a config must be met (a preset meets its goals: one not met is a violation).
    #: False for a grid's small scopes, each meeting only the goals its perturbations can: a
    #: mutant then fails a goal only where the clean model meets it (`runner.py`).
    goals_required: bool = True



def _fingerprints_digest(fps: set[bytes]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for fp in sorted(fps):
        h.update(fp)
    return h.hexdigest()


def _explore_within(model, budget: Budget, deadline: float | None, **options):
    """`explore(model, **options)` stopped when the budget is spent (more distinct states than
    `max_states`, or past `deadline`). Returns (CheckResult, cut short?); a real interruption
    (Ctrl-C) is raised again."""
    cut = [False]

    def progress(p) -> None:
        if p.phase == "final":
            return  # the run is over: nothing left to cut
        if ((budget.max_states is not None and p.distinct > budget.max_states)
                or (deadline is not None and time.monotonic() > deadline)):
            cut[0] = True
            raise KeyboardInterrupt  # the explorer's own way to stop early: the verdict is incomplete

    watch = budget.max_states is not None or deadline is not None
    result = explore(model, progress=progress if watch else None, progress_interval=0.0, **options)
    if result.verdict == "incomplete" and not cut[0]:
        raise KeyboardInterrupt  # a real interruption
    return result, cut[0]


def explore_with_budget(model, budget: Budget, deadline: float | None = None):
    """Explore `model` with every property (as `kcm explore` does), stopping at the first
    violation or when the budget is spent. Returns (CheckResult, digest of the fingerprint set or
    None if cut short, cut short?)."""
    seen: set[bytes] = set()
    fingerprint = model.fingerprint

    def recording(state):
        fp = fingerprint(state)
        seen.add(fp)
        return fp

    model.fingerprint = recording  # the explorer fingerprints every state it generates
    result, _ = _explore_within(model, budget, deadline, goals_required=budget.goals_required)
    complete = result.verdict != "incomplete"
    return result, (_fingerprints_digest(seen) if complete else None), not complete


@dataclass(frozen=True)
class _WalkResult:
    """What `random_walks` found, shaped like the part of a CheckResult the runner reads."""

    verdict: str
    violations: tuple
    distinct: int

    @property
    def stats(self):
        return self


@dataclass(frozen=True)
class _WalkViolation:
    name: str
    trace_length: int


def random_walks(model, budget: Budget, deadline: float | None = None) -> _WalkResult:
    """`budget.walks` random walks of at most `budget.depth` steps (walk i seeded by
    `random.Random(f"kcm-mutate:{seed}:{i}")`), checking every `Always` on each state, every
    `AlwaysStep` on each step and deadlocks, as `kcm explore --simulate` does (goals need a
    complete search and are not checked). Stops at the first violation."""
    props, deadlock = select_properties(model, None)
    always = [p for p in props if isinstance(p, Always)]
    steps = [p for p in props if isinstance(p, AlwaysStep)]
    seen: set[bytes] = set()
    inits = model.init_states()
    for i in range(budget.walks or 0):
        if deadline is not None and time.monotonic() > deadline:
            return _WalkResult("incomplete", (), len(seen))
        rng = random.Random(f"kcm-mutate:{budget.seed}:{i}")
        state = inits[rng.randrange(len(inits))]
        seen.add(model.fingerprint(state))
        bad: Always | AlwaysStep | None = next((p for p in always if not p.holds(state)), None)
        if bad is not None:
            return _WalkResult("violation", (_WalkViolation(bad.name, 0),), len(seen))
        for step in range(1, budget.depth + 1):
            successors = list(model.successors(state))
            if not successors:
                if deadlock and not model.is_terminal(state):
                    return _WalkResult("violation", (_WalkViolation("deadlock", step - 1),), len(seen))
                break
            a, t = successors[rng.randrange(len(successors))]
            bad = next((p for p in steps if not p.holds(state, a, t)), None) or next(
                (p for p in always if not p.holds(t)), None)
            if bad is not None:
                return _WalkResult("violation", (_WalkViolation(bad.name, step),), len(seen))
            state = t
            seen.add(model.fingerprint(state))
    return _WalkResult("pass", (), len(seen))


def liveness_verdict(model, budget: Budget, deadline: float | None = None):
    """The liveness pass of `kcm explore --liveness` on `model` (an `EpochQuotientModel`): the
    graph explored modulo controller epochs, no safety property, then `check_liveness`. None when
    the budget cut the graph (a partial graph proves nothing). Components the checker leaves
    undecided (a bound pruned a healing step on them) are not violations, as in `kcm explore`."""
    result, cut = _explore_within(model, budget, deadline, symmetry=False, keep_graph=True, stop_on_violation=False,
                                  properties=(), check_deadlock=False, goals_required=False, table_coverage=False)
    if cut:
        return None
    live = check_liveness(model, result.extra.get("graph"))
    return live if live.verdict != "not checked" else None
