"""What holds on a walk of `kcm serve`: each property judged where it can be, and the goals met.

- A state invariant (`Always`, kinds "safety", "quiescence", "settled") is judged on the state shown.
  The quiescence and settled kinds are the bounded forms of liveness properties: each holds
  trivially unless the state is quiescent (settled), so "holds" there often means "not yet asked".
- A transition invariant (`AlwaysStep`) is judged on the last step of the walk; at the start of a
  walk there is none.
- A goal (`Sometimes`) is met on the walk if some step of it meets it; an initial state is tested
  as the stuttering step `(init, None, init)`, as the explorer tests it
  (`kcm.checker.engine.contract.Sometimes`).
- Liveness properties (`kcm.checker.engine.liveness`) are about whole runs, not one state: they
  are listed as not judged here (`kcm explore --liveness` checks them).

A violation of a property the model lists as a known Kafka 2.6 behaviour (`known_violations`,
the catalogue's Findings) carries that Finding only when the Finding's matcher accepts it, as the
explorer decides (`kcm.checker.engine.contract.KnownViolation`): any other violation of the same
property is a violation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kcm.checker.engine.contract import Always, AlwaysStep, KnownViolation, Model, Sometimes
from kcm.checker.engine.liveness import LIVENESS_PROPERTIES
from kcm.serve.paths import Step

HOLDS, VIOLATED, NO_STEP = "holds", "violated", "no step yet"


@dataclass(frozen=True)
class Verdict:
    """One property at the page's state: `outcome` is HOLDS, VIOLATED or NO_STEP; `known` the
    Finding's reason when the violation is that known Kafka 2.6 behaviour."""

    name: str
    kind: str
    doc: str
    outcome: str
    known: str | None = None


@dataclass(frozen=True)
class Goal:
    """A goal and the first step of the walk that meets it (None: not met on this walk)."""

    name: str
    doc: str
    met_at: int | None


def judge(model: Model, steps: Sequence[Step], known: Mapping[str, KnownViolation]) -> list[Verdict]:
    """Every state and transition invariant at the walk's last state and last step, violations first."""
    last = steps[-1]
    prev = steps[-2] if len(steps) > 1 else None
    # The step into the last state; an initial state is the stuttering step (init, None, init).
    before, action = (prev.state, last.action) if prev is not None else (last.state, None)
    trace = [(s.action, s.state) for s in steps]
    out = []
    for prop in model.properties():
        if isinstance(prop, Always):
            outcome = HOLDS if prop.holds(last.state) else VIOLATED
        elif isinstance(prop, AlwaysStep):
            outcome = (NO_STEP if prev is None else
                       HOLDS if prop.holds(prev.state, last.action, last.state) else VIOLATED)
        else:
            continue
        finding = known.get(prop.name) if outcome == VIOLATED else None
        excused = finding is not None and finding.matches(before, action, last.state, lambda: trace)
        out.append(Verdict(prop.name, prop.kind, prop.doc, outcome, finding.reason if finding and excused else None))
    return sorted(out, key=lambda v: v.outcome != VIOLATED)   # stable: the catalogue's order within


def goals(model: Model, steps: Sequence[Step]) -> list[Goal]:
    """Every goal with the first step of the walk that meets it."""
    out = []
    for prop in model.properties():
        if not isinstance(prop, Sometimes):
            continue
        met_at = None
        for i, step in enumerate(steps):
            before = steps[i - 1].state if i else step.state
            if prop.met(before, step.action if i else None, step.state):
                met_at = i
                break
        out.append(Goal(prop.name, prop.doc, met_at))
    return out


def liveness_names() -> tuple[str, ...]:
    """The liveness properties, which no single state decides."""
    return LIVENESS_PROPERTIES
