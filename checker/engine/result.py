"""What a check returns: the verdict, the violations with their traces, the goals, statistics and
coverage. The sequential explorer (`bfs.py`) and the Spark explorer return the same classes, so
reports and traces do not care which engine ran.

A trace is a tuple of steps `(action, state)`; the first step is `(None, initial_state)`, so a
trace of `k` steps has `k + 1` entries and `trace_length` is `k`. States in a trace are real
states of an execution (with symmetry on, the explorer continues from the state it generated, not
from the canonical representative), so the trace replays with `Model.step`.

Verdicts (the `kcm` exit codes 0 / 1 / 3):

- "violation": some property failed (an invariant, a transition invariant, a deadlock), or the
  run was complete and a `Sometimes` goal was never met (the model is vacuous for it);
- "incomplete": no violation, but the run was cut (`max_depth`, an interruption), so the absence
  of violations and unmet goals means nothing beyond the explored part;
- "pass": the whole reachable state space was explored, every property held and every goal was met.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kcm.checker.engine.coverage import Coverage
from kcm.checker.engine.stats import Stats

Step = tuple[Any, Any]
Trace = tuple[Step, ...]

#: The pseudo-property a deadlock violates; usable in the `properties` filter like any name.
DEADLOCK = "deadlock"

PASS, VIOLATION, INCOMPLETE = "pass", "violation", "incomplete"


@dataclass(frozen=True)
class Violation:
    """One failed property. `kind` is the property's kind ("safety", "quiescence",
    "transition"), "deadlock", "liveness" (`kcm.checker.engine.liveness`), or "sometimes" for a goal a
    complete run never met (no trace). A livelock's trace is a lasso: `loop` is the index of the
    state where its cycle starts, and the last state equals that one (the last step closes the
    cycle); None for every other trace."""

    name: str
    kind: str
    trace: Trace | None
    loop: int | None = None

    @property
    def trace_length(self) -> int | None:
        """Steps in the trace (entries minus the initial state); None when there is no trace."""
        return None if self.trace is None else len(self.trace) - 1


@dataclass(frozen=True)
class Goal:
    """A `Sometimes` goal: whether it was met, with a shortest witness trace when it was."""

    name: str
    met: bool
    trace: Trace | None = None

    @property
    def trace_length(self) -> int | None:
        return None if self.trace is None else len(self.trace) - 1


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one exploration."""

    model: str
    verdict: str
    violations: tuple[Violation, ...]
    goals: dict[str, Goal]
    stats: Stats
    coverage: Coverage
    symmetry: bool
    #: Names of the properties checked (after the `properties` filter), "deadlock" included if on.
    checked: tuple[str, ...] = ()
    #: Why an incomplete run stopped: "max_depth" or "interrupted" ("bounded": one run of several
    #: cut below another run's violation, `kcm.checker.engine.runs`); "" otherwise.
    reason: str = ""
    #: The engine's name, for reports.
    engine: str = "bfs"
    #: Violations of properties the model lists as known behaviour of the modelled system (its
    #: known violations), each with its shortest trace; they do not fail the verdict.
    known_violations: tuple[Violation, ...] = ()
    #: Why each of them is known (property name -> the Finding).
    known_reasons: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.verdict == PASS

    def violation(self, name: str) -> Violation | None:
        """The violation of property `name`, if any."""
        return next((v for v in self.violations if v.name == name), None)

    def summary_lines(self) -> list[str]:
        """A short human summary: the verdict line, each violation, each goal, then TLC's stats."""
        head = {
            PASS: "Model checking completed. No error has been found.",
            VIOLATION: "Model checking found a violation.",
            INCOMPLETE: f"Model checking is incomplete ({self.reason or 'cut short'}).",
        }[self.verdict]
        lines = [head]
        for v in self.violations:
            where = f"after {v.trace_length} steps" if v.trace is not None else "never met"
            if v.loop is not None:
                cycle = (v.trace_length or 0) - v.loop
                where = (f"by a lasso: {v.loop} step{'' if v.loop == 1 else 's'} to a cycle of {cycle} "
                         f"step{'' if cycle == 1 else 's'} back to state {v.loop}")
            lines.append(f"  {v.kind} '{v.name}' violated, {where}")
        for v in self.known_violations:
            lines.append(f"  known 2.6 behaviour: {v.kind} '{v.name}' violated, after {v.trace_length} steps"
                         f" ({self.known_reasons.get(v.name, 'listed as known')})")
        if self.verdict == PASS and self.checked:
            lines.append(f"  {len(self.checked)} properties held: {', '.join(self.checked)}")
        elif self.checked:
            violated = {v.name for v in self.violations}
            held = [name for name in self.checked if name not in violated]
            if held:
                lines.append(f"  {len(held)} properties not violated"
                             f"{'' if self.complete else ' in the explored part'}: " + ", ".join(held))
        for g in self.goals.values():
            lines.append(f"  goal '{g.name}': " + goal_outcome(g, self.complete))
        por = self.extra.get("por") if self.extra else None
        if por:
            lines.append(f"  partial-order reduction: {por['reduced']:,} of {por['states']:,} states expanded an "
                         f"ample set ({por['skipped_edges']:,} edges skipped); traces may be longer than the shortest")
        return lines + self.stats.summary_lines(complete=self.complete)

    @property
    def complete(self) -> bool:
        """Whether the whole reachable state space was explored (no bound, no interruption, and no
        violation that stopped the search early)."""
        return self.verdict == PASS or (self.verdict == VIOLATION and not self.reason
                                        and self.stats.queue == 0)


def goal_outcome(goal: Goal, complete: bool) -> str:
    """A goal's outcome in words: a goal not met by a partial run was not *reached*, which says
    nothing about whether the model can reach it."""
    if goal.met:
        return f"met in {goal.trace_length} steps"
    return "not met" if complete else "not reached (incomplete)"
