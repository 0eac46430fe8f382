"""The run of one scope: a complete exploration of its config, as `kcm explore` does it.

The same model (`KafkaModel`, symmetry on) and the same properties as `kcm explore`, with the
sequential explorer in the calling process (`kcm.checker.engine.bfs.explore`): a sweep's
parallelism is one scope per process or Spark task, not one scope over several. The search does
not stop at the first violation (TLC's `-continue`): it records the first, hence shortest,
violation of each property, so a scope says every property it breaks. A goal (`Sometimes`) is not
judged per scope, where a small config may well not reach it, but over the grid
(`kcm.sweep.report`): the scope says which goals it met. Known Kafka 2.6 behaviours
are classified by the explorer (`Model.known_violations`) and come back apart.

Budget. The explorer polls `should_stop` every 64 states; it answers yes once the scope has more
distinct states than `max_states` (as last reported by the progress callback) or has run longer
than `seconds`, or when the caller's `stop` says so (an interruption). A scope cut by its budget
ends with the reason "budget", one interrupted with "interrupted"; neither proves anything beyond
the part explored.

Liveness (`liveness=True`, `kcm sweep --liveness`). A scope whose safety search finished is then
judged as `kcm explore --liveness` judges a config: its graph explored again modulo controller
epochs (`EpochQuotientModel`, symmetry off: cycles and weak fairness need real broker ids), kept
whole, and checked by `kcm.checker.engine.liveness.check_liveness` for EventuallyQuiescent,
EventuallySettled and QuiescenceAlwaysReachable. The second search checks no safety property
(the first did, with symmetry); the graph it keeps is the one `kcm explore --liveness` keeps. Its
fair livelocks come back as violations (a lasso: `Broken.loop` is where the cycle starts), the
lassos a known Kafka 2.6 loop matches as known, the shortest of each loop with its Finding.
The liveness search has the scope's budget again, counted afresh: cut, the scope ends with the
reason "budget" and its liveness is not judged (a partial graph proves nothing), as it is not
when the safety search was cut.

The outcome (`ScopeOutcome`) carries the traces themselves (real states): the caller, which may be
on another machine than a Spark executor, writes them. Its liveness result keeps only what the
record needs (one lasso per property and per known loop), not the graph.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from kcm.checker.engine.bfs import explore
from kcm.checker.engine.liveness import LIVENESS, LivenessResult, check_liveness
from kcm.checker.engine.result import INCOMPLETE, VIOLATION, CheckResult, Trace
from kcm.model.checking.epoch_quotient import EpochQuotientModel
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.config import ModelConfig
from kcm.sweep.grid import Budget, Scope

#: Why a scope's run ended early (`ScopeOutcome.reason`); "" for a complete run.
BUDGET, INTERRUPTED = "budget", "interrupted"


@dataclass(frozen=True)
class Broken:
    """One property a scope breaks: its kind, its shortest trace (None for an unmet goal) and, for
    a known Kafka 2.6 behaviour, why it is known. A liveness violation that is a lasso has `loop`,
    the index of the state its cycle starts at (the last state equals it); a known loop of Kafka
    2.6 is named by `known_loop` (`name` is then the property it breaks)."""

    name: str
    kind: str
    trace: Trace | None
    finding: str = ""
    loop: int | None = None
    known_loop: str = ""

    @property
    def steps(self) -> int | None:
        return None if self.trace is None else len(self.trace) - 1


@dataclass(frozen=True)
class ScopeOutcome:
    """What one scope's run found."""

    scope: str
    verdict: str
    reason: str
    distinct: int
    generated: int
    depth: int
    seconds: float
    checked: tuple[str, ...]
    #: The CPU time of the process that ran the scope, for the scope alone: on a loaded machine
    #: `seconds` (wall) says how long it waited, this what it cost (what a cluster is sized by).
    cpu_seconds: float = 0.0
    #: Each goal (`Sometimes`) of the model, and whether this scope met it.
    goals: dict[str, bool] = field(default_factory=dict)
    violations: tuple[Broken, ...] = ()
    known: tuple[Broken, ...] = ()
    #: Anything else; "cut_in": "liveness" when the budget cut the liveness search, not the safety one.
    extra: dict[str, Any] = field(default_factory=dict)
    #: With liveness asked: what the liveness check found (verdict "not checked" with its reason
    #: when it could not judge), else None. Its violations are in `violations` too, its known
    #: loops in `known`.
    liveness: LivenessResult | None = None


def run_scope(scope: Scope, budget: Budget, stop: Callable[[], bool] | None = None,
              liveness: bool = False) -> ScopeOutcome:
    """Explore `scope` completely (or until `budget` is spent or `stop` says so); with `liveness`,
    then judge its liveness on the graph explored modulo controller epochs (module docstring)."""
    cfg = scope.config()
    started, cpu_started = time.monotonic(), time.process_time()
    result, cut = _within(budget, stop, lambda **budgeted: explore(
        KafkaModel(cfg), stop_on_violation=False, goals_required=False, **budgeted))
    outcome = outcome_of(scope, result, BUDGET if cut else result.reason, 0.0)
    if liveness:
        outcome = _with_liveness(outcome, cfg, budget, stop)
    return replace(outcome, seconds=round(time.monotonic() - started, 2),
                   cpu_seconds=round(time.process_time() - cpu_started, 2))


def _within(budget: Budget, stop: Callable[[], bool] | None,
            search: Callable[..., CheckResult]) -> tuple[CheckResult, bool]:
    """`search(should_stop=..., progress=..., ...)` stopped once `budget` is spent or `stop` says
    so; returns its result and whether the budget cut it."""
    deadline = None if budget.seconds is None else time.monotonic() + budget.seconds
    distinct = [0]
    cut = [False]

    def progress(p) -> None:
        distinct[0] = p.distinct

    def should_stop() -> bool:
        if stop is not None and stop():
            return True
        if ((budget.max_states is not None and distinct[0] > budget.max_states)
                or (deadline is not None and time.monotonic() > deadline)):
            cut[0] = True
        return cut[0]

    result = search(should_stop=should_stop, progress=progress if budget.max_states is not None else None,
                    progress_interval=0.25)
    return result, cut[0]


def _with_liveness(outcome: ScopeOutcome, cfg: ModelConfig, budget: Budget,
                   stop: Callable[[], bool] | None) -> ScopeOutcome:
    """`outcome` judged by liveness too (see the module docstring)."""
    if outcome.reason:
        why = "the safety search was cut by the scope's budget" if outcome.reason == BUDGET else outcome.reason
        return replace(outcome, liveness=LivenessResult("not checked", reason=why))
    model = EpochQuotientModel(cfg)
    # As `kcm explore --liveness` explores (kcm.exploration.run_exploration): the whole graph kept,
    # symmetry off; no safety property, which the first search judged.
    result, cut = _within(budget, stop, lambda **budgeted: explore(
        model, symmetry=False, keep_graph=True, stop_on_violation=False, properties=(), check_deadlock=False,
        goals_required=False, table_coverage=False, **budgeted))
    if result.reason:
        reason = BUDGET if cut else result.reason
        why = (f"the liveness search was cut by the scope's budget after {result.stats.distinct:,} states "
               "modulo controller epochs" if cut else f"the liveness search ended early ({result.reason})")
        return replace(outcome, reason=reason, verdict=VIOLATION if outcome.violations else INCOMPLETE,
                       liveness=LivenessResult("not checked", reason=why, nodes=result.stats.distinct),
                       extra={**outcome.extra, "cut_in": "liveness"})
    live = check_liveness(model, result.extra.get("graph"))
    shortest: dict[str, Any] = {}
    for k in live.known:   # one lasso per known loop, the shortest
        name = k.known or ""
        if name not in shortest or len(k.trace) < len(shortest[name].trace):
            shortest[name] = k
    live = replace(live, known=tuple(shortest.values()), livelocks=())
    broken = tuple(Broken(v.name, LIVENESS, v.trace, loop=v.loop) for v in live.violations)
    known = tuple(Broken(k.breaks, LIVENESS, k.trace, k.finding or "", loop=k.loop, known_loop=k.known or "")
                  for k in live.known)
    return replace(outcome, verdict=VIOLATION if broken else outcome.verdict, violations=outcome.violations + broken,
                   known=outcome.known + known, checked=outcome.checked + live.checked, liveness=live)


def outcome_of(scope: Scope, result: CheckResult, reason: str, seconds: float,
               cpu_seconds: float = 0.0) -> ScopeOutcome:
    """The outcome of `scope` from its exploration's result."""
    return ScopeOutcome(
        scope=scope.name, verdict=result.verdict, reason=reason, distinct=result.stats.distinct,
        generated=result.stats.generated, depth=result.stats.depth, seconds=round(seconds, 2),
        cpu_seconds=round(cpu_seconds, 2),
        checked=tuple(n for n in result.checked if n not in result.goals),
        goals={name: g.met for name, g in result.goals.items()},
        violations=tuple(Broken(v.name, v.kind, v.trace) for v in result.violations),
        known=tuple(Broken(v.name, v.kind, v.trace, result.known_reasons.get(v.name, ""))
                    for v in result.known_violations))
