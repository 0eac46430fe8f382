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

Each property checked has one outcome (`Outcome`, `CheckResult.outcomes`), computed here once and
rendered the same way by every output (the terminal, the JSON report, JUnit XML, the reviewer's
page):

- an invariant (safety, quiescence, transition, ...), `deadlock` or a liveness property either
  "held", was "violated", broke as a "known" behaviour of the modelled system (with its Finding;
  it does not fail the verdict), was "not violated in the explored part" of an incomplete run
  (`UNREFUTED`), or was "not judged" (the liveness check needs the whole graph);
- a goal (`Sometimes`) was "met", "not met" by a complete run, or "not reached" by an incomplete
  one, which says nothing about whether the model can reach it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kcm.checker.engine.contract import KnownAs
from kcm.checker.engine.coverage import Coverage
from kcm.checker.engine.stats import Stats

Step = tuple[Any, Any]
Trace = tuple[Step, ...]

#: The pseudo-property a deadlock violates; usable in the `properties` filter like any name.
DEADLOCK = "deadlock"

PASS, VIOLATION, INCOMPLETE = "pass", "violation", "incomplete"

#: A property's outcome (`Outcome.status`), the same word in every output.
HELD, VIOLATED, KNOWN, UNREFUTED, NOT_JUDGED = "held", "violated", "known", "not violated (incomplete)", "not judged"
MET, NOT_MET, NOT_REACHED = "met", "not met", "not reached (incomplete)"
#: What an outcome is about (`Outcome.category`): it decides which words and counts apply.
INVARIANT, GOAL, LIVENESS = "invariant", "goal", "liveness"


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
    #: What the model calls its known behaviours (`Model.known_as`), for the words of the outputs.
    known_as: KnownAs = KnownAs()

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
        known = self.known_as.words(brief=True)
        for v in self.known_violations:
            lines.append(f"  {known}: {v.kind} '{v.name}' violated, after {v.trace_length} steps"
                         f" ({self.known_reasons.get(v.name, 'listed as known')})")
        outcomes = self.outcomes()
        if outcomes:
            lines.append(f"  {count_text(outcomes)}")
        # The names of what held, wrapped: a preset checks about sixty properties.
        for status, heading in ((HELD, "held"), (UNREFUTED, "not violated in the explored part")):
            names = [o.name for o in outcomes if o.status == status and o.category != GOAL]
            if names:
                lines += textwrap.wrap(f"{heading}: {', '.join(names)}", 100, initial_indent="  ",
                                       subsequent_indent="    ", break_on_hyphens=False)
        for g in self.goals.values():
            lines.append(f"  goal '{g.name}': " + goal_outcome(g, self.complete))
        por = self.extra.get("por") if self.extra else None
        if por:
            lines.append(f"  partial-order reduction: {por['reduced']:,} of {por['states']:,} states expanded an "
                         f"ample set ({por['skipped_edges']:,} edges skipped); traces may be longer than the shortest")
        return lines + self.stats.summary_lines(complete=self.complete)

    def outcomes(self) -> tuple[Outcome, ...]:
        """Every property checked with its one outcome, in the order checked; then the goals."""
        return outcomes_of(self)

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


@dataclass(frozen=True)
class Outcome:
    """One property's outcome in a run: what every output says about it.

    `category` is `INVARIANT` (safety, quiescence, transition, deadlock, ...), `LIVENESS` or
    `GOAL`; `kind` the property's own kind as the checker knows it ("sometimes" for a goal);
    `status` one of the words above; `steps` the length of its trace (a violation's, a known
    behaviour's or a goal's witness), `loop` where a lasso's cycle starts, `finding` why a
    known behaviour is known (or why a property was not judged), and `known_as` what the model
    calls its known behaviours (`Model.known_as`), set on a known outcome."""

    name: str
    category: str
    kind: str
    status: str
    steps: int | None = None
    loop: int | None = None
    finding: str = ""
    known_as: KnownAs = KnownAs()

    @property
    def failed(self) -> bool:
        """Whether it fails the verdict: a violation, or a goal a complete run never met."""
        return self.status in (VIOLATED, NOT_MET)

    def text(self) -> str:
        """The outcome in words, the same on the terminal, in JUnit and on the page."""
        if self.status == VIOLATED:
            if self.loop is not None:
                return (f"violated by a lasso: {self.loop} steps to a cycle of {(self.steps or 0) - self.loop} "
                        f"back to state {self.loop}")
            return f"violated after {self.steps} steps" if self.steps is not None else "violated"
        if self.status == KNOWN:
            steps = f" after {self.steps} steps" if self.steps is not None else ""
            return f"{self.known_as.words()}{': ' + self.finding if self.finding else ''} (violated{steps})"
        if self.status == MET:
            return f"met in {self.steps} steps" if self.steps is not None else MET
        if self.status == UNREFUTED:
            return "not violated in the explored part (incomplete)"
        if self.status == NOT_JUDGED and self.finding:
            return f"{NOT_JUDGED}: {self.finding}"
        return self.status


def outcomes_of(result: CheckResult) -> tuple[Outcome, ...]:
    """Each property of `result.checked` with its outcome, then each goal.

    A liveness check (`result.extra["liveness"]`, a `kcm.checker.engine.liveness.LivenessResult`)
    judges the liveness properties: a property a known loop breaks is known (with the loop's
    Finding), and every one is not judged when the check could not run."""
    violated = {v.name: v for v in result.violations if v.kind != "sometimes"}
    known = {v.name: v for v in result.known_violations}
    from kcm.checker.engine.liveness import LIVENESS_PROPERTIES  # liveness.py imports this module

    live: Any = result.extra.get("liveness") if result.extra else None
    live_names = set(LIVENESS_PROPERTIES) if live is not None else set()
    loops: dict[str, Any] = {}
    for k in getattr(live, "known", ()):   # the first loop listed for each property it breaks
        loops.setdefault(k.breaks, k)
    complete = result.complete
    out: list[Outcome] = []
    for name in result.checked:
        if name in result.goals:
            continue
        category = LIVENESS if name in live_names else INVARIANT
        v = violated.get(name)
        if v is not None:
            out.append(Outcome(name, category, v.kind, VIOLATED, v.trace_length, v.loop))
        elif name in known:
            k = known[name]
            out.append(Outcome(name, category, k.kind, KNOWN, k.trace_length,
                               finding=result.known_reasons.get(name, ""), known_as=result.known_as))
        elif category == LIVENESS:
            if live.verdict == "not checked" or name not in live.checked:
                out.append(Outcome(name, category, "liveness", NOT_JUDGED, finding=live.reason))
            elif name in loops:
                loop = loops[name]
                out.append(Outcome(name, category, "liveness", KNOWN, len(loop.trace) - 1, loop.loop,
                                   finding=f"{loop.finding}, loop {loop.known}", known_as=result.known_as))
            else:
                out.append(Outcome(name, category, "liveness", HELD))
        else:
            kind = DEADLOCK if name == DEADLOCK else ""
            out.append(Outcome(name, category, kind, HELD if complete else UNREFUTED))
    for g in result.goals.values():
        status = MET if g.met else NOT_MET if complete else NOT_REACHED
        out.append(Outcome(g.name, GOAL, "sometimes", status, g.trace_length))
    return tuple(out)


def counts(outcomes: Iterable[Outcome]) -> dict[str, dict[str, int]]:
    """How many outcomes of each category have each status: {"invariant": {"held": 58, ...}, ...};
    `deadlock` is counted on its own, as "deadlock"."""
    table: dict[str, dict[str, int]] = {}
    for o in outcomes:
        group = table.setdefault(DEADLOCK if o.name == DEADLOCK else o.category, {})
        group[o.status] = group.get(o.status, 0) + 1
    return table


def count_text(outcomes: Iterable[Outcome]) -> str:
    """The counts in one line, e.g. "58 invariants held, 2 known behaviours, 2 goals met, no
    deadlock": what the terminal, the page and the summary say. The known behaviours are named as
    the known outcomes' `known_as` says, briefly ("known behaviours" when unnamed)."""
    outcomes = tuple(outcomes)
    table = counts(outcomes)
    known_as = next((o.known_as for o in outcomes if o.status == KNOWN), KnownAs())
    words = {HELD: "held", VIOLATED: "violated", UNREFUTED: "not violated in the explored part",
             NOT_JUDGED: "not judged", MET: "met", NOT_MET: "not met", NOT_REACHED: "not reached"}
    known = sum(group.get(KNOWN, 0) for group in table.values())
    parts: list[str] = []
    for category, one, many in ((INVARIANT, "invariant", "invariants"),
                                (LIVENESS, "liveness property", "liveness properties"), (GOAL, "goal", "goals")):
        group = table.get(category, {})
        parts += [f"{group[s]} {one if group[s] == 1 else many} {words[s]}"
                  for s in (VIOLATED, HELD, UNREFUTED, NOT_JUDGED, NOT_MET, MET, NOT_REACHED) if group.get(s)]
        if category == INVARIANT and known:
            parts.append(f"{known} {known_as.words('behaviour' if known == 1 else 'behaviours', brief=True)}")
    deadlock = next(iter(table.get(DEADLOCK, {})), None)
    if deadlock is not None:
        parts.append({HELD: "no deadlock", VIOLATED: "a deadlock", KNOWN: f"a deadlock ({known_as.words(brief=True)})",
                      UNREFUTED: "no deadlock in the explored part"}.get(deadlock, f"deadlock {deadlock}"))
    return ", ".join(parts)
