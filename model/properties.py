"""What a checkable model is: the interface between a model and the checkers.

A model is a transition system given by three pure functions, as in stateright and TLA+:
`init_states()`, `enabled_actions(state)` (guards only, in a deterministic order, so that traces
replay) and `step(state, action)` (effects only). On top of them it names its properties:

- `Always`: a state invariant, checked on every reachable state (TLA+ `[]P`).
- `AlwaysStep`: a transition invariant over (state, action, next state), checked on every edge
  (TLA+ `[][A]_v`): leader epochs never go back, a clean election picks from the old ISR, ...
- `Sometimes`: a reachability goal; some reachable state (or edge) must satisfy it, or the model
  is vacuous (stateright `Property::sometimes`).

An `Always` whose kind is "quiescence" is the bounded form of a liveness property: the model
states it as "in a state where no healing action is enabled, P holds". The checkers treat it as
any other invariant and only report the kind.

A checker needs a few more things from a model, with defaults in `Model` below: `successors`
(enabled actions and their next states at once, which a model may compute faster), a 128-bit
`fingerprint` (deterministic across processes, so Spark executors agree), `representative` for
symmetry reduction (the canonical member of the state's orbit under permutations of
interchangeable ids; the identity when the model has no symmetry), the table edges an action takes
(`edges_taken`, for coverage), and a readable and an ITF rendering of states and actions.

This module is pure and stdlib-only like the rest of `kcm.model`; the Kafka model implements the
interface in `spec.py`, and the tests implement it with toy models.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

State = TypeVar("State", bound=Hashable)
Action = TypeVar("Action", bound=Hashable)


@dataclass(frozen=True)
class Always(Generic[State]):
    """A state invariant: `holds(state)` must be true in every reachable state."""

    name: str
    holds: Callable[[Any], bool]
    doc: str = ""
    #: "safety", or "quiescence" for the bounded form of a liveness property.
    kind: str = "safety"


@dataclass(frozen=True)
class AlwaysStep(Generic[State, Action]):
    """A transition invariant: `holds(state, action, next_state)` must be true on every reachable edge."""

    name: str
    holds: Callable[[Any, Any, Any], bool]
    doc: str = ""
    kind: str = "transition"


@dataclass(frozen=True)
class Sometimes(Generic[State, Action]):
    """A reachability goal: some reachable edge (state, action, next_state) must satisfy `met`.

    Goals about a single state test `next_state` (and the initial states, with `action` None).
    """

    name: str
    met: Callable[[Any, Any, Any], bool]
    doc: str = ""


Property = Always | AlwaysStep | Sometimes


def fingerprint_of(value: Any) -> bytes:
    """A 128-bit fingerprint of a value built from tuples, ints, bools, strings and frozen dataclasses.

    Deterministic across processes (pickle of these types does not depend on hash seeds); models
    with a faster encoding override `Model.fingerprint`.
    """
    return hashlib.blake2b(pickle.dumps(value, protocol=5), digest_size=16).digest()


class Model(Generic[State, Action]):
    """Base class of a checkable model; subclasses define the three functions and `properties`."""

    #: Shown in reports and traces.
    name: str = "model"
    #: Whether `representative` is a real symmetry reduction (reports say so; tests compare counts).
    has_symmetry: bool = False

    def init_states(self) -> Sequence[State]:
        raise NotImplementedError

    def enabled_actions(self, state: State) -> Sequence[Action]:
        raise NotImplementedError

    def step(self, state: State, action: Action) -> State:
        raise NotImplementedError

    def properties(self) -> Sequence[Property]:
        return ()

    # ---- what checkers need beyond the transition relation, with defaults --------------------

    def successors(self, state: State) -> Iterable[tuple[Action, State]]:
        """Every enabled action with its next state, in `enabled_actions` order."""
        return [(a, self.step(state, a)) for a in self.enabled_actions(state)]

    def fingerprint(self, state: State) -> bytes:
        """128 bits (16 bytes) identifying `state`; equal states give equal fingerprints in any process."""
        return fingerprint_of(state)

    def representative(self, state: State) -> State:
        """The canonical member of `state`'s symmetry orbit; the identity without symmetry."""
        return state

    def action_name(self, action: Action) -> str:
        """The action's kind, for per-action coverage (the class name, Actor+Verb)."""
        return type(action).__name__

    def format_action(self, action: Action) -> str:
        """A readable one-line rendering of `action` (its repr by default)."""
        return repr(action)

    def edges_taken(self, state: State, action: Action, next_state: State) -> Iterable[Hashable]:
        """The state-table edges this step takes, for coverage (none by default)."""
        return ()

    def coverage_universe(self) -> Sequence[Hashable]:
        """Every table edge the model could take; coverage reports the ones never taken."""
        return ()

    def fields(self, state: State) -> dict[str, Any]:
        """The state as named variables (ITF `vars`), for readable traces and ITF files."""
        return {"state": state}
