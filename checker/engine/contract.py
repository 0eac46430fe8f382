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
(`edges_taken`, for coverage), whether a state with no enabled action is a legal end
(`is_terminal`, else it is a deadlock), which steps heal and which states are settled
(`is_healing`, `is_quiescent`, for the liveness checker) and the livelocks known in the modelled
system (`known_loops`), what the reports call the known behaviours (`known_as`: the system and
version they belong to, which the engine itself never names), the action kinds (`action_names`,
so that coverage lists the ones never enabled), and a readable and an ITF rendering of states and
actions.

This module is pure and stdlib-only, like everything of the engine it belongs to; the Kafka model
implements the interface, and so do the tests' toy models.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from enum import Enum
from operator import attrgetter
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
    """A transition invariant: `holds(state, action, next_state)` must be true on every reachable edge.

    `judges` names the action kinds (types) whose steps it can fail on, when `holds` returns True
    at once for every other kind (most read what a controller event did); None means any kind. A
    checker may then skip the call on the other edges (`kcm.checker.engine.bfs`); `holds` keeps its own
    early return, for the checkers that call it on every edge."""

    name: str
    holds: Callable[[Any, Any, Any], bool]
    doc: str = ""
    kind: str = "transition"
    #: The action kinds whose steps this invariant can fail on; None: every kind.
    judges: tuple[type, ...] | None = None

    def may_fail_on(self, kind: type) -> bool:
        """Whether a step of action type `kind` can fail this invariant (`judges`)."""
        return self.judges is None or kind in self.judges


@dataclass(frozen=True)
class Sometimes(Generic[State, Action]):
    """A reachability goal: some reachable edge (state, action, next_state) must satisfy `met`.

    Goals about a single state test `next_state`. Initial states are tested as the stuttering edge
    `(init, None, init)`: `action` is None and both states are the initial state, so a goal that
    reads `state` does not fail on them.
    """

    name: str
    met: Callable[[Any, Any, Any], bool]
    doc: str = ""


Property = Always | AlwaysStep | Sometimes


#: A violation's trace, rebuilt on demand: `((None, s0), (a1, s1), ..., (an, sn))`.
LazyTrace = Callable[[], Sequence[tuple[Any, Any]]]


@dataclass(frozen=True)
class KnownViolation:
    """A property the modelled system itself breaks (`Model.known_violations`), and how to tell
    its violations from any other violation of the same property.

    `matches(state, action, next_state, trace)` is asked of each violation: for a transition
    invariant the violating edge; for a state invariant `next_state` is the violating state and
    `(state, action)` the step into it (`(init, None, init)` for an initial state, as for goals).
    `trace()` rebuilds the whole trace to the violation, which costs a replay: a matcher asks for
    it only when the last step cannot decide. A violation it accepts is the known behaviour;
    any other is reported as a violation."""

    #: Why the system breaks it (the model's finding), printed beside each violation excused.
    reason: str
    matches: Callable[[Any, Any, Any, LazyTrace], bool]


@dataclass(frozen=True)
class KnownAs:
    """What the behaviours a model lists as known (`known_violations`, `known_loops`) are the
    behaviour of, in the words every report uses (`Model.known_as`): `name` where one outcome is
    said ("known <name> behaviour: <the Finding>"), `brief` where a line counts or lists them
    ("2 known <brief> behaviours", "known <brief> loop"); `name` when `brief` is empty. A model
    that names nothing gets "known behaviour" and "known loop"."""

    name: str = ""
    brief: str = ""

    def words(self, what: str = "behaviour", *, brief: bool = False) -> str:
        """"known <name> <what>", or with `brief` the brief label; "known <what>" unnamed."""
        label = (self.brief or self.name) if brief else self.name
        return f"known {label} {what}" if label else f"known {what}"


# ---- what partial-order reduction needs (`Model.por_info`, `kcm.checker.engine.por`) -----------------


@dataclass(frozen=True)
class Footprint:
    """The state components a group of actions may read (guards included) and may write, in any state."""

    reads: frozenset
    writes: frozenset


@dataclass(frozen=True)
class PropertyReads:
    """What a property depends on: the state components it reads (of `state` and, for a transition
    invariant or goal, of `next_state`), and the action kinds (`group[0]`) whose steps it judges.
    Contract: on a step whose group is not of one of `kinds` and writes none of `components`, an
    `AlwaysStep` holds and a `Sometimes` is not met."""

    components: frozenset
    kinds: frozenset = frozenset()


@dataclass(frozen=True)
class Independence:
    """What a model gives for partial-order reduction (`Model.por_info()`)."""

    #: Every group any action can belong to, with its footprint (the universe, static).
    groups: Mapping[Hashable, Footprint]
    #: The group of an action in a state. It may depend on the state when the groups are finer
    #: action classes whose guards read what tells them apart.
    group_of: Callable[[Any, Any], Hashable]
    #: What a property reads, or None: it may read anything (every action is visible to it).
    property_reads: Callable[[str], PropertyReads | None]
    #: Optional necessary enabling sets: for a group with no enabled action in `state`, components
    #: one of which must be written before any of its actions can be enabled (None: its reads),
    #: or a tuple of such sets, any of which is necessary (the reduction takes the cheapest).
    enablers: Callable[[Any, Hashable], frozenset | tuple | None] | None = None


# ---- fingerprints -----------------------------------------------------------------------------
#
# A fingerprint must be equal for equal states, in any process. Pickling the state directly is
# not enough, for two reasons: equal frozensets (and dicts) may iterate in different orders (built
# by different insertion sequences, or, for strings and Enums, under different hash seeds), and
# pickle's memo writes an object seen twice as a back-reference, so `(x, x)` and `(x, copy(x))`
# pickle differently. So a state is first rewritten to a canonical value made of tuples, ints,
# strings, bools, floats, bytes and None only (dataclasses become `(class token, *fields)`, Enums
# `(class token, name)`, sets and dicts tagged tuples in sorted order), then pickled without memo
# (`Pickler.fast`). Handlers are cached per type, so the rewrite costs one dict lookup and one
# call per node; pickling builtins is C.

_ATOMS = frozenset({int, str, bool, float, bytes, type(None)})
_SET, _DICT = "\x00set", "\x00dict"
_HANDLERS: dict[type, Callable[[Any], Any]] = {}


def _dumps(value: Any) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = True  # no memo: shared and equal-but-distinct sub-values pickle alike
    pickler.dump(value)
    return buffer.getvalue()


def _sorted(items: list) -> tuple:
    try:
        return tuple(sorted(items))
    except TypeError:  # mixed types (or None): order by the canonical pickle instead
        return tuple(sorted(items, key=_dumps))


def _token(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _handler_for(cls: type) -> Callable[[Any], Any]:
    handler: Callable[[Any], Any]
    token: str | None
    if issubclass(cls, Enum):
        token = _token(cls)
        by_id = {id(member): (token, member.name) for member in cls}
        handler = lambda v: by_id.get(id(v)) or (token, v.name)  # noqa: E731
    elif issubclass(cls, (frozenset, set)):
        handler = lambda v: (_SET, _sorted([canonical(x) for x in v]))  # noqa: E731
    elif issubclass(cls, dict):
        handler = lambda v: (_DICT, _sorted([(canonical(k), canonical(x)) for k, x in v.items()]))  # noqa: E731
    elif is_dataclass(cls):
        token = _token(cls)
        names = tuple(f.name for f in fields(cls))
        if not names:
            handler = lambda v: (token,)  # noqa: E731
        elif len(names) == 1:
            get_one = attrgetter(names[0])
            handler = lambda v: (token, canonical(get_one(v)))  # noqa: E731
        else:
            get_all = attrgetter(*names)
            handler = lambda v: (token, *map(canonical, get_all(v)))  # noqa: E731
    elif issubclass(cls, tuple):
        token = None if cls is tuple else _token(cls)  # named tuples keep their class
        handler = ((lambda v: tuple(map(canonical, v))) if token is None
                   else (lambda v: (token, *map(canonical, v))))
    elif issubclass(cls, (int, str, float, bytes)):
        handler = lambda v: v  # noqa: E731
    else:
        raise TypeError(f"cannot fingerprint a {cls.__qualname__}; override Model.fingerprint")
    _HANDLERS[cls] = handler
    return handler


def canonical(value: Any) -> Any:
    """`value` rewritten to builtins in a canonical form (see the comment above): equal values give
    equal canonical values with equal pickles, in any process."""
    cls = type(value)
    if cls in _ATOMS:
        return value
    handler = _HANDLERS.get(cls)
    if handler is None:
        handler = _handler_for(cls)
    return handler(value)


def fingerprint_of(value: Any) -> bytes:
    """A 128-bit fingerprint of a value built from tuples, frozensets, dicts, ints, bools,
    strings, Enums and frozen dataclasses: blake2b-128 of the memo-free pickle of its `canonical`
    form. Equal values give equal fingerprints in any process; models with a faster encoding
    override `Model.fingerprint`.
    """
    return hashlib.blake2b(_dumps(canonical(value)), digest_size=16).digest()


class Model(Generic[State, Action]):
    """Base class of a checkable model; subclasses define the three functions and `properties`."""

    #: Shown in reports and traces.
    name: str = "model"
    #: Whether `representative` is a real symmetry reduction (reports say so; tests compare counts).
    has_symmetry: bool = False
    #: What its known behaviours are the behaviour of, as reports say it (`KnownAs`).
    known_as: KnownAs = KnownAs()

    def init_states(self) -> Sequence[State]:
        raise NotImplementedError

    def enabled_actions(self, state: State) -> Sequence[Action]:
        raise NotImplementedError

    def step(self, state: State, action: Action) -> State:
        raise NotImplementedError

    def properties(self) -> Sequence[Property]:
        return ()

    def known_violations(self) -> Mapping[str, KnownViolation]:
        """Properties the modelled system itself is known to break, each with why and which of its
        violations are that behaviour (`KnownViolation`). Checkers classify every violation of such
        a property: one its `matches` accepts is recorded (the shortest trace of each property) and
        does not fail the verdict; any other is a violation like any property's. None by default."""
        return {}

    # ---- what checkers need beyond the transition relation, with defaults --------------------

    def successors(self, state: State) -> Iterable[tuple[Action, State]]:
        """Every enabled action with its next state, in `enabled_actions` order.

        Checkers record an action as its index in this sequence and rebuild traces by replaying
        those indices, so an override must keep the order deterministic and equal to
        `enabled_actions`.
        """
        return [(a, self.step(state, a)) for a in self.enabled_actions(state)]

    def fingerprint(self, state: State) -> bytes:
        """128 bits (16 bytes) identifying `state`; equal states give equal fingerprints in any process."""
        return fingerprint_of(state)

    def representative(self, state: State) -> State:
        """The canonical member of `state`'s symmetry orbit; the identity without symmetry."""
        return state

    def locality(self, state: State) -> bytes:
        """8 bytes that a state shares with the states its commuting steps lead to, or b"" (the
        default). The Spark explorer gives each state to the partition these bytes name (its
        fingerprint's when empty), so the two orders of a commuting pair of steps are more often
        expanded in one partition, where the second copy is dropped before it is encoded and
        shuffled; only on a few partitions (`LOCALITY_PARTITIONS` in `spark_explore/level.py`),
        since a locality shared by many states loads its owner unevenly. Called on
        representatives; it must depend on the state alone. It decides only where a state is
        checked, never whether two states are the same."""
        return b""

    def run_of(self, state: State) -> int:
        """Which of the model's disjoint runs `state` belongs to: a value no step changes, so that
        the states reached from initial states of different runs never meet and each run can be
        explored apart, on its own core (`kcm.checker.engine.runs`). Called on initial states; must be
        the same for a state and its representative. One run (0) by default."""
        return 0

    def is_terminal(self, state: State) -> bool:
        """Whether `state` is a legal end (no enabled action is then not a deadlock); False by default."""
        return False

    def is_healing(self, state: State, action: Action) -> bool:
        """Whether taking `action` in `state` is a healing step: one the system takes on its own,
        without a budget (event processing, deliveries, restarts), as opposed to a fault or an
        operator's request. The liveness checker assumes weak fairness of the healing actions and
        looks for cycles of them only (`kcm.checker.engine.liveness`). Every action by default."""
        return True

    def is_quiescent(self, state: State) -> bool:
        """Whether `state` is settled: the goal every fair run of healing actions must reach
        (`kcm.checker.engine.liveness`). `is_terminal` by default."""
        return self.is_terminal(state)

    def is_settled(self, state: State) -> bool:
        """Whether `state` has settled around its faults (the goal of `EventuallySettled`, where
        the `is_unforced` healing steps, such as restarting a dead broker, are not assumed fair).
        A model that leaves this default is checked for `EventuallyQuiescent` only."""
        return self.is_quiescent(state)

    def is_unforced(self, action: Action) -> bool:
        """Whether `action` is a healing step that `EventuallySettled` does not assume weakly fair
        (a dead broker may stay dead). None by default."""
        return False

    def pruned(self, state: State) -> bool:
        """Whether some healing step from `state` was left out of `successors` by a bound of the
        model (a capacity, an epoch bound: a TLC state constraint), so that what the liveness
        checker sees of `state`'s future is incomplete: it treats such a state as undecided, never
        as a failure. False by default."""
        return False

    def known_loops(self) -> Sequence[Any]:
        """Livelocks the modelled system is known to have, each with a `name`, the `finding` that
        documents it, the `property` it breaks and `matches(cycle)`: the liveness checker lists a
        lasso they match as known instead of a violation. None by default."""
        return ()

    def action_names(self) -> Sequence[str]:
        """Every action kind (`action_name` values) the model has, so coverage can list the ones
        never enabled; unknown (empty) by default."""
        return ()

    def action_name(self, action: Action) -> str:
        """The action's kind, for per-action coverage (the class name, Actor+Verb)."""
        return type(action).__name__

    def format_action(self, action: Action) -> str:
        """A readable one-line rendering of `action` (its repr by default)."""
        return repr(action)

    def describe_action(self, state: State, action: Action) -> str:
        """`action` taken in `state`, in one line for a reader: what it does there (the event a
        controller processes, the request delivered), which the label alone may not say. Traces
        show it beside the label; replay still matches steps by `format_action`. The label by
        default."""
        return self.format_action(action)

    def edges_taken(self, state: State, action: Action, next_state: State) -> Iterable[Hashable]:
        """The state-table edges this step takes, for coverage (none by default)."""
        return ()

    def coverage_universe(self) -> Sequence[Hashable]:
        """Every table edge the model could take; coverage reports the ones never taken."""
        return ()

    def fields(self, state: State) -> dict[str, Any]:
        """The state as named variables (ITF `vars`), for readable traces and ITF files."""
        return {"state": state}

    def por_info(self) -> Any:
        """What partial-order reduction needs (`kcm.checker.engine.por.Independence`): the action groups
        with their read and write footprints, the group of an action, and what each property reads.
        None by default: the model cannot be reduced."""
        return None

    # ---- optional: states as bytes, for checkers that ship them between processes ------------

    def encode_state(self, state: State) -> bytes | tuple:
        """The state as bytes (or a tuple of bytes and plain values, which a pickle of many states
        writes once where they share a bytes object) that `decode_state` turns back into an equal
        state that behaves exactly like it (same types, same identity for the constants the model
        compares with `is`), in any process running the same code. Optional: the default raises
        NotImplementedError and the Spark explorer then uses its generic pickle codec
        (`kcm.spark_explore.codec`). Override both methods or neither."""
        raise NotImplementedError

    def decode_state(self, data: bytes | tuple) -> State:
        """The state `encode_state` wrote (see there)."""
        raise NotImplementedError
