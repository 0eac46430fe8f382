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

The outcome (`ScopeOutcome`) carries the traces themselves (real states): the caller, which may be
on another machine than a Spark executor, writes them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kcm.checker.engine.bfs import explore
from kcm.checker.engine.result import CheckResult, Trace
from kcm.model.checking.kafka_model import KafkaModel
from kcm.sweep.grid import Budget, Scope

#: Why a scope's run ended early (`ScopeOutcome.reason`); "" for a complete run.
BUDGET, INTERRUPTED = "budget", "interrupted"


@dataclass(frozen=True)
class Broken:
    """One property a scope breaks: its kind, its shortest trace (None for an unmet goal) and, for
    a known Kafka 2.6 behaviour, why it is known."""

    name: str
    kind: str
    trace: Trace | None
    finding: str = ""

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
    extra: dict[str, Any] = field(default_factory=dict)


def run_scope(scope: Scope, budget: Budget, stop: Callable[[], bool] | None = None) -> ScopeOutcome:
    """Explore `scope` completely (or until `budget` is spent or `stop` says so)."""
    model = KafkaModel(scope.config())
    started, cpu_started = time.monotonic(), time.process_time()
    deadline = None if budget.seconds is None else started + budget.seconds
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

    result = explore(model, stop_on_violation=False, goals_required=False, should_stop=should_stop,
                     progress=progress if budget.max_states is not None else None, progress_interval=0.25)
    return outcome_of(scope, result, BUDGET if cut[0] else result.reason, time.monotonic() - started,
                      time.process_time() - cpu_started)


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
