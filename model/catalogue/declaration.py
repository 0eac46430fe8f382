"""One declaration per property: everything the checkers, the reduction and the reports know of it.

A `Declaration` names a property and says, once:

- `meaning`: one line of its own, what an operator of the cluster expects to hold. The reports
  print it beside the name (the `doc` of the engine's `Always`, `AlwaysStep` or `Sometimes`).
- `kind`: a `state` invariant (every reachable state), a `transition` invariant (every edge: what a
  step did), a `goal` (some reachable edge must meet it, or the model is vacuous), or `liveness`:
  the bounded form of a liveness property, an invariant judged only where the cluster has stopped
  healing.
- `judged`: where it is judged: every state (a state invariant), every step (a transition
  invariant or a goal), or, for a liveness property, which says so (`where`), `settled` (every
  healing action done but restarting the dead brokers) or `quiescent` (settled with every broker
  up); see `settledness`.
- `predicate`: how to build the predicate for one model, from the config and the model's `Judge`
  (which remembers settledness and a step's elections for the predicates that share them).
- `reads`: the parts of the state the predicate reads (`Part`), for partial-order reduction;
  None when not declared, which the reduction takes as "reads everything" (every step is visible
  to the property). `model/checking/footprints.py` expands the parts for a config.
- `judges`: the action kinds whose steps a transition invariant can fail on (it holds at once on
  any other step); None for every kind.
- `listed`: the configs under which the property is listed (a goal whose feature the config
  switches off would be unreachable).
- `findings`: the Kafka 2.6 Findings (docs/model.md, "Findings") that break the property, each
  with the configs under which it can (its condition): one pair per Finding, as several causes
  in 2.6 can break one property. Each Finding says what its violations of this property look like
  (`Finding.matchers`, which must name the property); the checkers record a violation that one of
  the Findings applying to the config matches as known 2.6 behaviour instead of failing the
  verdict, and fail on any other violation of the property (`excused`).
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kcm.checker.engine.contract import Always, AlwaysStep, KnownViolation, Property, Sometimes
from kcm.model.actions import ControllerProcessEvent, NetworkDeliver
from kcm.model.catalogue.findings import Finding
from kcm.model.catalogue.settledness import Judge
from kcm.model.config import ModelConfig


class Kind(enum.Enum):
    """What a property constrains."""

    STATE = "state"
    TRANSITION = "transition"
    GOAL = "goal"
    LIVENESS = "liveness"


class Judged(enum.Enum):
    """Where a property is judged."""

    EVERY_STATE = "every state"
    EVERY_STEP = "every step"
    SETTLED = "settled"
    QUIESCENT = "quiescent"


#: Where each kind may be judged.
JUDGED_FOR_KIND: dict[Kind, frozenset[Judged]] = {
    Kind.STATE: frozenset({Judged.EVERY_STATE}),
    Kind.TRANSITION: frozenset({Judged.EVERY_STEP}),
    Kind.GOAL: frozenset({Judged.EVERY_STEP}),
    Kind.LIVENESS: frozenset({Judged.SETTLED, Judged.QUIESCENT}),
}


class Part(enum.Enum):
    """The parts of a `Cluster` a predicate may read, named for every broker or channel at once."""

    ZOOKEEPER = "ZooKeeper"
    #: The armed watches (`Zk.watches`), part of ZooKeeper. Only the model and the embedded
    #: ZooKeeper know them: a client of a real ZooKeeper cannot list watches.
    WATCHES = "ZooKeeper's armed watches"
    CONTROLLER_MODULES = "every controller module"
    REPLICA_MANAGERS = "every broker's replicas"
    BROKER_LIVES = "every broker's life"
    #: The epochs of the last controller and UpdateMetadata each broker accepted.
    ACCEPTED_EPOCHS = "every broker's accepted epochs"
    CHANNELS = "every channel"
    GHOST = "the ghost bits"


def everywhere(cfg: ModelConfig) -> bool:
    """Listed under every config."""
    return True


#: The engine's `Always.kind` for each place an invariant is judged.
_ENGINE_KIND = {Judged.EVERY_STATE: "safety", Judged.QUIESCENT: "quiescence", Judged.SETTLED: "settled"}


def _judged_where(where: Callable[[Any], bool], holds: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """`holds`, asked only where the property is judged. The predicate tests that itself (so it
    can be called alone); asking the judge first spares the call in the many states where the
    cluster is still healing."""
    return lambda s: not where(s) or holds(s)


@dataclass(frozen=True)
class Declaration:
    """A property of the model (see the module docstring)."""

    name: str
    meaning: str
    kind: Kind
    #: (config, judge) -> the predicate: `holds(state)`, `holds(state, action, next)` or `met(...)`.
    predicate: Callable[[ModelConfig, Judge], Callable[..., bool]]
    reads: frozenset[Part] | None = None
    judges: tuple[type, ...] | None = None
    listed: Callable[[ModelConfig], bool] = everywhere
    #: (Finding, condition) pairs: each Finding that breaks the property, and the configs under which it can.
    findings: tuple[tuple[Finding, Callable[[ModelConfig], bool]], ...] = ()
    #: Where a liveness property is judged (settled or quiescent); every other kind is judged
    #: where its kind says (`JUDGED_FOR_KIND`), and leaves this out.
    where: Judged | None = None

    def __post_init__(self) -> None:
        if (self.where is None) != (self.kind is not Kind.LIVENESS):
            raise ValueError(f"{self.name}: a liveness property, and only one, says where it is judged")
        for finding, _ in self.findings:
            if self.name not in finding.matchers:
                raise ValueError(f"{self.name}: {finding} does not say what its violations of it look like")

    @property
    def judged(self) -> Judged:
        """Where the property is judged."""
        if self.where is not None:
            return self.where
        (judged,) = JUDGED_FOR_KIND[self.kind]
        return judged

    def build(self, cfg: ModelConfig, judge: Judge) -> Property:
        """The engine's property for one model."""
        fn: Any = self.predicate(cfg, judge)
        if self.kind is Kind.GOAL:
            return Sometimes(self.name, fn, self.meaning)
        if self.kind is Kind.TRANSITION:
            return AlwaysStep(self.name, fn, self.meaning, judges=self.judges)
        if self.kind is Kind.LIVENESS:
            fn = _judged_where(judge.quiescent if self.judged is Judged.QUIESCENT else judge.settled, fn)
        return Always(self.name, fn, self.meaning, kind=_ENGINE_KIND[self.judged])

    def findings_for(self, cfg: ModelConfig) -> tuple[Finding, ...]:
        """The Findings that break this property under `cfg` (those whose condition holds)."""
        return tuple(finding for finding, when in self.findings if when(cfg))

    def broken_by_kafka(self, cfg: ModelConfig) -> bool:
        """Whether Kafka 2.6 breaks this property under `cfg` (one of its Findings applies)."""
        return bool(self.findings_for(cfg))

    def excused(self, cfg: ModelConfig, judge: Judge) -> KnownViolation:
        """What the checkers excuse of this property's violations for one model: those one of the
        Findings applying under `cfg` accepts (the OR of their matchers). Only for a property
        Kafka 2.6 breaks under `cfg` (`broken_by_kafka`)."""
        applying = self.findings_for(cfg)
        assert applying
        matchers = tuple(finding.matcher(self.name, cfg, judge) for finding in applying)
        if len(matchers) == 1:
            return KnownViolation(str(applying[0]), matchers[0])
        return KnownViolation(" or ".join(str(f) for f in applying),
                              lambda s, a, t, trace: any(m(s, a, t, trace) for m in matchers))


# ---- how a predicate is built for one model (`Declaration.predicate`) ----------------------------

#: `judges` of the transition invariants about what a controller event did, or a delivery.
CONTROLLER_EVENTS: tuple[type, ...] = (ControllerProcessEvent,)
DELIVERIES: tuple[type, ...] = (NetworkDeliver,)


def as_is(fn: Callable[..., bool]) -> Callable[[ModelConfig, Judge], Callable[..., bool]]:
    """The predicate needs nothing of the model."""
    return lambda cfg, judge: fn


def with_judge(fn: Callable[..., bool]) -> Callable[[ModelConfig, Judge], Callable[..., bool]]:
    """A liveness predicate `fn(state, judge=...)`: it asks the model's judge where it is judged."""
    return lambda cfg, judge: functools.partial(fn, judge=judge)


def per_topic_with_judge(fn: Callable[..., bool]) -> Callable[[ModelConfig, Judge], Callable[..., bool]]:
    """A liveness predicate `fn(state, ppt=..., judge=...)` that tells topics apart (partitions per topic)."""
    return lambda cfg, judge: functools.partial(fn, ppt=cfg.partitions, judge=judge)


def per_topic(builder: Callable[[int], Callable[..., bool]]) -> Callable[[ModelConfig, Judge], Callable[..., bool]]:
    """A transition invariant built from the partitions per topic."""
    return lambda cfg, judge: builder(cfg.partitions)


def from_judge(builder: Callable[[Judge], Callable[..., bool]]) -> Callable[[ModelConfig, Judge], Callable[..., bool]]:
    """A transition invariant built on the judge (the step's elections or observations)."""
    return lambda cfg, judge: builder(judge)
