"""Z3 proofs of Kafka's election rules, for every input up to a number of brokers.

What is proved is the code that runs: the functions of `kcm.model.election` (the four algorithms of
kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala, the wrappers of
kafka@2.6.x:core/src/main/scala/kafka/controller/Election.scala and the ISR shrink of
kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala), run on symbolic inputs
through the Z3 backend of their collection algebra (`kcm.checker.z3ops`). Nothing is transcribed.

For `n` brokers (ids 0..n-1) the inputs are symbolic:

- the assignment (and the reassignment target): a list of 1..n distinct ids in any order, i.e. any
  replication factor;
- the ISR: any subset of the brokers *in any order*, so that a rule that scans the ISR instead of
  the assignment is caught; it need not lie within the assignment (Kafka's does not, during a
  reassignment), and a property that needs it to says so in its statement;
- the live, online, live-or-shutting-down and shutting-down sets: any subsets; the unclean flag;
  the old leader (-1 or a broker), leader epoch and zkVersion; the replica the ISR shrink removes.

Each property is a precondition and a postcondition over the inputs and the function's result. It
is proved by asserting the precondition and the *negation* of the postcondition and getting
`unsat`; `sat` is a counterexample, read back from Z3's model as concrete lists. The
postconditions are written directly in Z3 (e.g. "the leader is eligible and no earlier replica
is"), never through `Ops`, so that a bug in the algebra cannot prove itself correct.

A variant (`rules_named`: the model's V6 and V7, and the proof-only KAFKA-1503) swaps in a historical
rule; the properties it is known to break are listed with it (`Rules.breaks`), and the tests check
that exactly those fail, with the counterexample Z3 finds.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any

import z3
from kcm.checker.z3ops import (
    Z3,
    MaskedList,
    Option,
    and_,
    concrete,
    contains,
    exactly,
    implies,
    is_empty,
    none_or,
    not_,
    or_,
    some_and,
    subset,
)
from kcm.model import variants as model_variants
from kcm.model.election import (
    NO_LEADER,
    LeaderAndIsr,
    controlled_shutdown_leader_election_isr_order,
    controlled_shutdown_partition_leader_election,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassign,
    offline_leader_election_isr_order,
    offline_partition_leader_election,
    preferred_replica_partition_leader_election,
    reassign_partition_leader_election,
    remove_replica_from_isr,
)

# An interruption (Ctrl-C, or SIGTERM in the proof stage of `kcm check`) that lands inside
# `z3.Context.__init__` leaves a context without its `owner` attribute, and its finalizer then
# prints a traceback ("Exception ignored in ... Context.__del__: AttributeError") after the
# command has said its one line. As a class default, `owner = False` makes such a half-made
# context skip freeing a C context it never finished taking; a whole one sets its own `owner`.
z3.Context.owner = False

#: Broker counts `kcm prove` accepts. Each proof is a small SMT query; 8 is the documented bound.
MIN_BROKERS, MAX_BROKERS, DEFAULT_BROKERS = 1, 12, 8
#: Per-query solver timeout; a query that hits it is reported "unknown" (incomplete, exit 3).
TIMEOUT_MS = 60_000


# --------------------------------------------------------------------------------------------------
# The rules under proof: Kafka 2.6, or a historical variant.


@dataclass(frozen=True)
class Rules:
    """Which election rules run: Kafka 2.6's, or a historical bug's (`breaks`: the properties it fails)."""

    name: str
    doc: str
    offline: Callable[..., Any] = offline_partition_leader_election
    controlled_shutdown: Callable[..., Any] = controlled_shutdown_partition_leader_election
    keep_sole_member: bool = True
    breaks: frozenset[str] = frozenset()

    @property
    def changes_election(self) -> bool:
        """Whether these rules differ from Kafka 2.6's in anything the proofs run."""
        return (self.offline, self.controlled_shutdown, self.keep_sole_member) != (
            KAFKA_2_6.offline, KAFKA_2_6.controlled_shutdown, KAFKA_2_6.keep_sole_member)


KAFKA_2_6 = Rules("kafka-2.6", "Kafka 2.6's election rules")

#: The properties each model variant (`kcm.model.variants`) must break; the others must still hold.
_BREAKS = {
    "V6": frozenset({"remove_replica_from_isr.isr_never_emptied"}),
    "V7": frozenset({"controlled_shutdown.leader_is_live_replica",
                     "controlled_shutdown.first_eligible_in_assignment_order",
                     "leader_for_controlled_shutdown.leader_online_and_assigned"}),
}

#: KAFKA-1503 is a balance bug, not a safety bug, so the model has no variant for it; the proofs do.
KAFKA_1503 = Rules("KAFKA-1503", "KAFKA-1503 (fixed in 0.8.2.0): the offline election takes the first live ISR "
                   "member in ISR order, so leadership piles onto one broker",
                   offline=offline_leader_election_isr_order,
                   breaks=frozenset({"offline.first_eligible_in_assignment_order"}))


def variant_names() -> tuple[str, ...]:
    """Every name `rules_named` accepts besides Kafka 2.6: the model's variants, then proof-only ones."""
    return (*model_variants.VARIANTS, KAFKA_1503.name)


def rules_named(name: str | None) -> Rules:
    """The election rules of a variant: a model variant name ("V7") or its JIRA key ("KAFKA-3670"),
    or "KAFKA-1503"; None, "" or "kafka-2.6" is Kafka 2.6. Case-insensitive; ValueError if unknown."""
    if not name or name.lower() == KAFKA_2_6.name:
        return KAFKA_2_6
    key = name.upper()
    if key == KAFKA_1503.name:
        return KAFKA_1503
    if key in model_variants.SYNTHETIC_VARIANTS:
        return KAFKA_2_6  # a synthetic variant (a livelock) changes no election rule
    key = {v.jira: v.name for v in model_variants.VARIANTS.values()}.get(key, key)
    if key not in model_variants.VARIANTS:
        raise ValueError(f"unknown variant '{name}'; choose one of {', '.join(variant_names())}")
    variant, flags = model_variants.VARIANTS[key], model_variants.flags_for(key)
    return Rules(
        key, f"{key} ({variant.jira}, fixed in {variant.fixed_in}): {variant.changes}",
        controlled_shutdown=(controlled_shutdown_leader_election_isr_order if flags.shutdown_election_isr_order
                             else controlled_shutdown_partition_leader_election),
        keep_sole_member=not flags.isr_shrink_empties,
        breaks=_BREAKS.get(key, frozenset()))


# --------------------------------------------------------------------------------------------------
# Symbolic inputs.


@dataclass(frozen=True, eq=False)
class Inputs:
    """Every input of every property, for `brokers` brokers, and the constraints that bound them."""

    brokers: int
    assignment: MaskedList
    target_replicas: MaskedList
    isr: MaskedList
    live: MaskedList
    online: MaskedList
    live_or_shutting_down: MaskedList
    shutting_down: MaskedList
    unclean_enabled: z3.BoolRef
    leader: z3.ArithRef
    leader_epoch: z3.ArithRef
    zk_version: z3.ArithRef
    replica: z3.ArithRef
    domain: tuple[z3.BoolRef, ...]

    @property
    def leader_and_isr(self) -> LeaderAndIsr:
        return LeaderAndIsr(self.leader, self.leader_epoch, self.isr, self.zk_version)


def _ordered_ids(name: str, n: int, *, prefix: bool) -> tuple[MaskedList, list[z3.BoolRef]]:
    """n slots of ids in 0..n-1, distinct where present: any order. `prefix`: a non-empty prefix is
    present (a replica list of any length 1..n); otherwise any subset is present."""
    values = [z3.Int(f"{name}[{i}]") for i in range(n)]
    present = [z3.Bool(f"{name}?{i}") for i in range(n)]
    domain = [z3.And(v >= 0, v < n) for v in values]
    # Distinct only where both are present: requiring the values to be a permutation (`Distinct` of
    # all n) is a pigeonhole constraint, which CDCL solvers refute slowly; the absent slots are never read.
    domain += [z3.Implies(z3.And(present[i], present[j]), values[i] != values[j])
               for i in range(n) for j in range(i + 1, n)]
    if prefix:
        domain.append(present[0])
        domain += [z3.Implies(present[i + 1], present[i]) for i in range(n - 1)]
    return MaskedList(tuple(zip(present, values))), domain


def _broker_set(name: str, n: int) -> MaskedList:
    """Any subset of 0..n-1: slot i holds broker i (sets have no order to vary)."""
    return MaskedList(tuple((z3.Bool(f"{name}[{i}]"), i) for i in range(n)))


@functools.cache
def inputs(n: int) -> Inputs:
    """The symbolic inputs for `n` brokers (cached: terms are immutable and reused by every property)."""
    assignment, d1 = _ordered_ids("assignment", n, prefix=True)
    target, d2 = _ordered_ids("target_replicas", n, prefix=True)
    isr, d3 = _ordered_ids("isr", n, prefix=False)
    leader, replica = z3.Int("leader"), z3.Int("replica")
    domain = [*d1, *d2, *d3, z3.And(leader >= NO_LEADER, leader < n), z3.And(replica >= 0, replica < n)]
    return Inputs(brokers=n, assignment=assignment, target_replicas=target, isr=isr,
                  live=_broker_set("live", n), online=_broker_set("online", n),
                  live_or_shutting_down=_broker_set("live_or_shutting_down", n),
                  shutting_down=_broker_set("shutting_down", n),
                  unclean_enabled=z3.Bool("unclean_enabled"), leader=leader,
                  leader_epoch=z3.Int("leader_epoch"), zk_version=z3.Int("zk_version"), replica=replica,
                  domain=tuple(domain))


# --------------------------------------------------------------------------------------------------
# Specifications, written directly in Z3 (not through `Ops`).


def _eligible_exists(coll: MaskedList, eligible: Callable[[Any], Any]) -> Any:
    return or_(*(and_(p, eligible(v)) for p, v in coll.slots))


def _is_first_eligible(coll: MaskedList, eligible: Callable[[Any], Any], x: Any) -> Any:
    """`x` is an eligible member of `coll` and no member before it is eligible."""
    return or_(*(and_(p, eligible(v), v == x, *(not_(and_(q, eligible(w))) for q, w in coll.slots[:k]))
                 for k, (p, v) in enumerate(coll.slots)))


def _elects_first_eligible(leader: Option, coll: MaskedList, eligible: Callable[[Any], Any]) -> Any:
    """A leader is returned iff an eligible member exists, and it is the first one in `coll`'s order."""
    return and_(_iff(leader.is_some, _eligible_exists(coll, eligible)),
                none_or(leader, lambda ld: _is_first_eligible(coll, eligible, ld)))


def _as_bool(x: Any) -> Any:
    return z3.BoolVal(x) if isinstance(x, bool) else x


def _iff(a: Any, b: Any) -> Any:
    return _as_bool(a) == _as_bool(b)


def _in_both(a: MaskedList, b: MaskedList) -> Callable[[Any], Any]:
    return lambda x: and_(contains(a, x), contains(b, x))


# --------------------------------------------------------------------------------------------------
# The properties.


Built = tuple[Any, Any, dict[str, Any]]  # (precondition, postcondition, outputs shown in a counterexample)


@dataclass(frozen=True)
class Property:
    """A named pre/postcondition over one election function's inputs and result."""

    name: str
    statement: str
    #: The inputs a counterexample shows (attributes of `Inputs`).
    shows: tuple[str, ...]
    build: Callable[[Inputs, Rules], Built] = field(repr=False)


PROPERTIES: list[Property] = []


def _property(name: str, statement: str, shows: Sequence[str]) -> Callable[[Callable[[Inputs, Rules], Built]], None]:
    def register(build: Callable[[Inputs, Rules], Built]) -> None:
        PROPERTIES.append(Property(name, statement, tuple(shows), build))
    return register


_LIVE_CONTRACT = "live ⊆ assignment: Kafka passes liveReplicas = assignment ∩ online"

# -- offline_partition_leader_election ----------------------------------------------------------

_OFFLINE = ("assignment", "isr", "live", "unclean_enabled")


def _offline(x: Inputs, r: Rules) -> Option:
    return r.offline(x.assignment, x.isr, x.live, x.unclean_enabled, Z3)


@_property("offline.leader_is_live_replica",
           f"the offline election returns a live assigned replica, or nothing (given {_LIVE_CONTRACT})", _OFFLINE)
def _(x: Inputs, r: Rules) -> Built:
    leader = _offline(x, r)
    return subset(x.live, x.assignment), none_or(leader, _in_both(x.assignment, x.live)), {"leader": leader}


@_property("offline.leader_outside_isr_only_when_unclean",
           "the offline election returns an ISR member, unless unclean election is enabled and no live "
           f"ISR member is assigned (given {_LIVE_CONTRACT})", _OFFLINE)
def _(x: Inputs, r: Rules) -> Built:
    leader = _offline(x, r)
    no_live_isr = not_(_eligible_exists(x.assignment, _in_both(x.live, x.isr)))
    post = none_or(leader, lambda ld: or_(contains(x.isr, ld), and_(x.unclean_enabled, no_live_isr)))
    return subset(x.live, x.assignment), post, {"leader": leader}


@_property("offline.first_eligible_in_assignment_order",
           "the offline election returns a leader iff an assigned replica is eligible, and then the first "
           "eligible one in assignment order (eligible: live and in the ISR; if none is, and unclean election "
           f"is enabled: live; given {_LIVE_CONTRACT})", _OFFLINE)
def _(x: Inputs, r: Rules) -> Built:
    leader = _offline(x, r)
    clean = _in_both(x.live, x.isr)
    post = z3.If(_as_bool(_eligible_exists(x.assignment, clean)),
                 _as_bool(_elects_first_eligible(leader, x.assignment, clean)),
                 z3.If(x.unclean_enabled,
                       _as_bool(_elects_first_eligible(leader, x.assignment, lambda b: contains(x.live, b))),
                       _as_bool(not_(leader.is_some))))
    return subset(x.live, x.assignment), post, {"leader": leader}


# -- reassign_partition_leader_election -----------------------------------------------------------

_REASSIGN = ("target_replicas", "isr", "live")


def _reassign(x: Inputs, r: Rules) -> Option:
    return reassign_partition_leader_election(x.target_replicas, x.isr, x.live, Z3)


@_property("reassign.leader_is_live_target_replica",
           "the reassign election returns a live replica of the reassignment target, or nothing (given live ⊆ "
           "target replicas: Kafka passes targetReplicas ∩ online)", _REASSIGN)
def _(x: Inputs, r: Rules) -> Built:
    leader = _reassign(x, r)
    return (subset(x.live, x.target_replicas), none_or(leader, _in_both(x.target_replicas, x.live)),
            {"leader": leader})


@_property("reassign.leader_in_isr", "the reassign election returns an ISR member, or nothing", _REASSIGN)
def _(x: Inputs, r: Rules) -> Built:
    leader = _reassign(x, r)
    return True, none_or(leader, lambda ld: contains(x.isr, ld)), {"leader": leader}


@_property("reassign.first_eligible_in_target_order",
           "the reassign election returns a leader iff a target replica is live and in the ISR, and then the "
           "first such in target order (given live ⊆ target replicas)", _REASSIGN)
def _(x: Inputs, r: Rules) -> Built:
    leader = _reassign(x, r)
    post = _elects_first_eligible(leader, x.target_replicas, _in_both(x.live, x.isr))
    return subset(x.live, x.target_replicas), post, {"leader": leader}


# -- preferred_replica_partition_leader_election --------------------------------------------------

_PREFERRED = ("assignment", "isr", "live")


def _preferred(x: Inputs, r: Rules) -> Option:
    return preferred_replica_partition_leader_election(x.assignment, x.isr, x.live, Z3)


@_property("preferred.leader_is_first_assigned",
           "the preferred election returns the first assigned replica, or nothing", _PREFERRED)
def _(x: Inputs, r: Rules) -> Built:
    leader = _preferred(x, r)
    return True, none_or(leader, lambda ld: _is_first_eligible(x.assignment, lambda _: True, ld)), {"leader": leader}


@_property("preferred.elected_iff_first_assigned_eligible",
           "the preferred election returns a leader iff the first assigned replica is live and in the ISR",
           _PREFERRED)
def _(x: Inputs, r: Rules) -> Built:
    leader = _preferred(x, r)
    p0, first = x.assignment.slots[0]  # the assignment is never empty (replication factor >= 1)
    return True, _iff(leader.is_some, and_(p0, contains(x.live, first), contains(x.isr, first))), {"leader": leader}


@_property("preferred.leader_is_live_replica",
           f"the preferred election returns a live assigned replica, or nothing (given {_LIVE_CONTRACT})",
           _PREFERRED)
def _(x: Inputs, r: Rules) -> Built:
    leader = _preferred(x, r)
    return subset(x.live, x.assignment), none_or(leader, _in_both(x.assignment, x.live)), {"leader": leader}


# -- controlled_shutdown_partition_leader_election ------------------------------------------------

_SHUTDOWN = ("assignment", "isr", "live", "shutting_down")


def _shutdown(x: Inputs, r: Rules) -> Option:
    return r.controlled_shutdown(x.assignment, x.isr, x.live, x.shutting_down, Z3)


@_property("controlled_shutdown.leader_is_live_replica",
           "the controlled-shutdown election returns a live assigned replica, or nothing (given live ⊆ "
           "assignment: Kafka passes assignment ∩ live-or-shutting-down)", _SHUTDOWN)
def _(x: Inputs, r: Rules) -> Built:
    leader = _shutdown(x, r)
    return subset(x.live, x.assignment), none_or(leader, _in_both(x.assignment, x.live)), {"leader": leader}


@_property("controlled_shutdown.leader_not_shutting_down",
           "the controlled-shutdown election never returns a shutting-down broker", _SHUTDOWN)
def _(x: Inputs, r: Rules) -> Built:
    leader = _shutdown(x, r)
    return True, none_or(leader, lambda ld: not_(contains(x.shutting_down, ld))), {"leader": leader}


@_property("controlled_shutdown.leader_in_isr",
           "the controlled-shutdown election returns an ISR member, or nothing", _SHUTDOWN)
def _(x: Inputs, r: Rules) -> Built:
    leader = _shutdown(x, r)
    return True, none_or(leader, lambda ld: contains(x.isr, ld)), {"leader": leader}


@_property("controlled_shutdown.first_eligible_in_assignment_order",
           "the controlled-shutdown election returns a leader iff an assigned replica is live, in the ISR and "
           "not shutting down, and then the first such in assignment order (given live ⊆ assignment)",
           _SHUTDOWN)
def _(x: Inputs, r: Rules) -> Built:
    leader = _shutdown(x, r)
    eligible = lambda b: and_(contains(x.live, b), contains(x.isr, b), not_(contains(x.shutting_down, b)))  # noqa: E731
    return subset(x.live, x.assignment), _elects_first_eligible(leader, x.assignment, eligible), {"leader": leader}


# -- The wrappers (Election.scala) ----------------------------------------------------------------


@dataclass(frozen=True)
class _Wrapper:
    name: str
    #: The replica list the wrapper scans ("assignment" or "target_replicas").
    scope: str
    shows: tuple[str, ...]
    call: Callable[[Inputs, Rules], Any]


_WRAPPERS = (
    _Wrapper("leader_for_offline", "assignment", ("assignment", "isr", "online", "unclean_enabled"),
             lambda x, r: leader_for_offline(x.assignment, x.leader_and_isr, x.online, x.unclean_enabled, Z3,
                                             algorithm=r.offline)),
    _Wrapper("leader_for_reassign", "target_replicas", ("target_replicas", "isr", "online"),
             lambda x, r: leader_for_reassign(x.target_replicas, x.leader_and_isr, x.online, Z3)),
    _Wrapper("leader_for_preferred_replica", "assignment", ("assignment", "isr", "online"),
             lambda x, r: leader_for_preferred_replica(x.assignment, x.leader_and_isr, x.online, Z3)),
    _Wrapper("leader_for_controlled_shutdown", "assignment",
             ("assignment", "isr", "live_or_shutting_down", "shutting_down"),
             lambda x, r: leader_for_controlled_shutdown(x.assignment, x.leader_and_isr, x.live_or_shutting_down,
                                                         x.shutting_down, Z3, algorithm=r.controlled_shutdown)),
)


def _register_wrapper_properties(w: _Wrapper) -> None:
    scope_text = w.scope.replace("_", " ")

    @_property(f"{w.name}.leader_in_new_isr", f"{w.name}: the new leader is a member of the new ISR", w.shows)
    def _(x: Inputs, r: Rules) -> Built:
        elected = w.call(x, r).leader_and_isr
        return True, none_or(elected, lambda new: contains(new.isr, new.leader)), {"elected": elected}

    @_property(f"{w.name}.leader_epoch_bumped_by_one",
               f"{w.name}: the new leader epoch is the old one plus one, and the zkVersion is kept "
               "(the conditional ZooKeeper write bumps it)", (*w.shows, "leader_epoch", "zk_version"))
    def _(x: Inputs, r: Rules) -> Built:
        elected = w.call(x, r).leader_and_isr
        post = none_or(elected, lambda new: and_(new.leader_epoch == x.leader_epoch + 1,
                                                 new.zk_version == x.zk_version))
        return True, post, {"elected": elected}

    @_property(f"{w.name}.new_isr_within_{w.scope}",
               f"{w.name}: the new ISR is within the {scope_text} (given the old ISR within the {scope_text}; "
               "Kafka's ISR need not be, e.g. during a reassignment)", w.shows)
    def _(x: Inputs, r: Rules) -> Built:
        scope = getattr(x, w.scope)
        elected = w.call(x, r).leader_and_isr
        return subset(x.isr, scope), none_or(elected, lambda new: subset(new.isr, scope)), {"elected": elected}

    @_property(f"{w.name}.new_isr_within_old_isr_plus_leader",
               f"{w.name}: the new ISR is within the old ISR plus the new leader", w.shows)
    def _(x: Inputs, r: Rules) -> Built:
        elected = w.call(x, r).leader_and_isr
        post = none_or(elected, lambda new: and_(*(implies(p, or_(contains(x.isr, v), v == new.leader))
                                                   for p, v in new.isr.slots)))
        return True, post, {"elected": elected}


_OFFLINE_W, _REASSIGN_W, _PREFERRED_W, _SHUTDOWN_W = _WRAPPERS


def _unclean(result: Any) -> Any:
    """The `unclean` flag of an offline `ElectionResult`: an option (set only when a leader is elected)."""
    flag = result.unclean
    return some_and(flag, lambda u: u) if isinstance(flag, Option) else flag


_register_wrapper_properties(_OFFLINE_W)


@_property("leader_for_offline.leader_online_and_assigned",
           "leader_for_offline: the new leader is an assigned, online broker", _OFFLINE_W.shows)
def _(x: Inputs, r: Rules) -> Built:
    elected = _OFFLINE_W.call(x, r).leader_and_isr
    return True, none_or(elected, lambda new: _in_both(x.assignment, x.online)(new.leader)), {"elected": elected}


@_property("leader_for_offline.unclean_only_when_enabled_and_no_live_isr_member",
           "leader_for_offline: an election is unclean only if unclean election is enabled and no assigned "
           "ISR member is online", _OFFLINE_W.shows)
def _(x: Inputs, r: Rules) -> Built:
    result = _OFFLINE_W.call(x, r)
    no_live_isr = not_(_eligible_exists(x.assignment, _in_both(x.online, x.isr)))
    return (True, implies(_unclean(result), and_(x.unclean_enabled, no_live_isr)),
            {"elected": result.leader_and_isr, "unclean": _unclean(result)})


@_property("leader_for_offline.unclean_iff_leader_outside_isr",
           "leader_for_offline: the election is flagged unclean iff the new leader is outside the old ISR",
           _OFFLINE_W.shows)
def _(x: Inputs, r: Rules) -> Built:
    result = _OFFLINE_W.call(x, r)
    elected = result.leader_and_isr
    post = _iff(_unclean(result), some_and(elected, lambda new: not_(contains(x.isr, new.leader))))
    return True, post, {"elected": elected, "unclean": _unclean(result)}


@_property("leader_for_offline.clean_new_isr_is_online_old_isr",
           "leader_for_offline: after a clean election the new ISR is the online part of the old ISR (so within "
           "the old ISR); after an unclean one it is [leader]", _OFFLINE_W.shows)
def _(x: Inputs, r: Rules) -> Built:
    result = _OFFLINE_W.call(x, r)
    elected = result.leader_and_isr

    def isr_ok(new: LeaderAndIsr) -> Any:
        online_old = and_(*(implies(p, _iff(contains(new.isr, v), contains(x.online, v)))
                            for p, v in x.isr.slots))
        clean = and_(subset(new.isr, x.isr), online_old)
        return z3.If(_as_bool(_unclean(result)), _as_bool(exactly(new.isr, new.leader)), _as_bool(clean))
    return True, none_or(elected, isr_ok), {"elected": elected, "unclean": _unclean(result)}


_register_wrapper_properties(_REASSIGN_W)


@_property("leader_for_reassign.leader_online_in_target",
           "leader_for_reassign: the new leader is an online target replica", _REASSIGN_W.shows)
def _(x: Inputs, r: Rules) -> Built:
    elected = _REASSIGN_W.call(x, r).leader_and_isr
    return True, none_or(elected, lambda new: _in_both(x.target_replicas, x.online)(new.leader)), \
        {"elected": elected}


_register_wrapper_properties(_PREFERRED_W)


@_property("leader_for_preferred_replica.leader_is_first_assigned_and_online",
           "leader_for_preferred_replica: the new leader is the first assigned replica, and online",
           _PREFERRED_W.shows)
def _(x: Inputs, r: Rules) -> Built:
    elected = _PREFERRED_W.call(x, r).leader_and_isr
    post = none_or(elected, lambda new: and_(_is_first_eligible(x.assignment, lambda _: True, new.leader),
                                             contains(x.online, new.leader)))
    return True, post, {"elected": elected}


_register_wrapper_properties(_SHUTDOWN_W)


@_property("leader_for_controlled_shutdown.leader_online_and_assigned",
           "leader_for_controlled_shutdown: the new leader is assigned, live and not shutting down",
           _SHUTDOWN_W.shows)
def _(x: Inputs, r: Rules) -> Built:
    elected = _SHUTDOWN_W.call(x, r).leader_and_isr
    post = none_or(elected, lambda new: and_(contains(x.assignment, new.leader),
                                             contains(x.live_or_shutting_down, new.leader),
                                             not_(contains(x.shutting_down, new.leader))))
    return True, post, {"elected": elected}


@_property("leader_for_controlled_shutdown.new_isr_excludes_shutting_down",
           "leader_for_controlled_shutdown: no shutting-down broker is in the new ISR", _SHUTDOWN_W.shows)
def _(x: Inputs, r: Rules) -> Built:
    elected = _SHUTDOWN_W.call(x, r).leader_and_isr
    post = none_or(elected, lambda new: and_(*(implies(p, not_(contains(x.shutting_down, v)))
                                               for p, v in new.isr.slots)))
    return True, post, {"elected": elected}


# -- remove_replica_from_isr (ReplicaStateMachine.doRemoveReplicasFromIsr) --------------------------

_SHRINK = ("leader", "isr", "replica")


def _shrink(x: Inputs, r: Rules) -> LeaderAndIsr:
    return remove_replica_from_isr(x.leader_and_isr, x.replica, Z3, keep_sole_member=r.keep_sole_member)


@_property("remove_replica_from_isr.isr_never_emptied",
           "the controller's ISR shrink never empties a non-empty ISR", _SHRINK)
def _(x: Inputs, r: Rules) -> Built:
    new = _shrink(x, r)
    return not_(is_empty(x.isr)), not_(is_empty(new.isr)), {"new": new}


@_property("remove_replica_from_isr.no_leader_iff_leader_removed",
           "the controller's ISR shrink sets the leader to -1 exactly when it removes the leader (or there was "
           "none), and otherwise keeps it (given the old leader is -1 or a broker)", _SHRINK)
def _(x: Inputs, r: Rules) -> Built:
    new = _shrink(x, r)
    post = z3.If(z3.Or(x.leader == x.replica, x.leader == NO_LEADER), new.leader == NO_LEADER, new.leader == x.leader)
    return True, post, {"new": new}


@_property("remove_replica_from_isr.removes_replica_unless_sole_member",
           "the controller's ISR shrink removes the replica from the ISR, unless it is the sole member, and "
           "keeps everything else", _SHRINK)
def _(x: Inputs, r: Rules) -> Built:
    new = _shrink(x, r)
    sole = exactly(x.isr, x.replica)
    others_kept = and_(*(implies(and_(p, v != x.replica), contains(new.isr, v)) for p, v in x.isr.slots))
    post = and_(subset(new.isr, x.isr), others_kept, or_(not_(contains(new.isr, x.replica)), sole))
    return True, post, {"new": new}


@_property("remove_replica_from_isr.leader_epoch_bumped_by_one",
           "the controller's ISR shrink bumps the leader epoch by exactly one", (*_SHRINK, "leader_epoch"))
def _(x: Inputs, r: Rules) -> Built:
    new = _shrink(x, r)
    return True, new.leader_epoch == x.leader_epoch + 1, {"new": new}


@_property("remove_replica_from_isr.leader_in_isr_or_none",
           "after the controller's ISR shrink the leader is -1 or in the ISR (given it was before)", _SHRINK)
def _(x: Inputs, r: Rules) -> Built:
    new = _shrink(x, r)
    pre = or_(x.leader == NO_LEADER, contains(x.isr, x.leader))
    return pre, or_(new.leader == NO_LEADER, contains(new.isr, new.leader)), {"new": new}


PROPERTY_NAMES: tuple[str, ...] = tuple(p.name for p in PROPERTIES)
assert len(set(PROPERTY_NAMES)) == len(PROPERTY_NAMES), "property names must be unique"


# --------------------------------------------------------------------------------------------------
# Running the proofs.


@dataclass(frozen=True)
class ProofResult:
    """One property for one broker count: "proved", "failed" (with a counterexample) or "unknown"."""

    property: str
    brokers: int
    result: str
    seconds: float
    statement: str = ""
    variant: str = KAFKA_2_6.name
    #: For a failure: {"inputs": the inputs the property shows, "outputs": what the function returned},
    #: as concrete values (lists, ints, booleans, None, and dicts for a LeaderAndIsr).
    counterexample: dict[str, Any] | None = None


_SETS = frozenset({"live", "online", "live_or_shutting_down", "shutting_down"})


def _plain(value: Any) -> Any:
    """A concrete value as JSON-friendly data: tuples become lists, dataclasses dicts."""
    if is_dataclass(value):
        value = asdict(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def counterexample(model: z3.ModelRef, x: Inputs, prop: Property, outputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs `prop` shows and its outputs, read from `model`: sets sorted, lists in their order."""
    shown = {}
    for name in prop.shows:
        value = concrete(model, getattr(x, name))
        shown[name] = sorted(value) if name in _SETS else value
    return {"inputs": _plain(shown), "outputs": _plain({k: concrete(model, v) for k, v in outputs.items()})}


def prove(prop: Property, brokers: int, rules: Rules = KAFKA_2_6, timeout_ms: int = TIMEOUT_MS) -> ProofResult:
    """Prove `prop` for every input with `brokers` brokers: assert pre ∧ ¬post and require `unsat`."""
    start = time.perf_counter()
    x = inputs(brokers)
    pre, post, outputs = prop.build(x, rules)
    # The plain `smt` tactic: Z3's default solver first runs QF_LIA preprocessing that costs more than
    # solving these small problems. `TryFor` turns a timeout into `unknown`.
    solver = z3.TryFor(z3.Tactic("smt"), timeout_ms).solver()
    solver.add(*x.domain)
    solver.add(_as_bool(pre), z3.Not(_as_bool(post)))
    verdict = solver.check()
    example = None
    if verdict == z3.unsat:
        result = "proved"
    elif verdict == z3.sat:
        result = "failed"
        example = counterexample(solver.model(), x, prop, outputs)
    else:
        result = "unknown"
    return ProofResult(prop.name, brokers, result, time.perf_counter() - start, prop.statement, rules.name, example)


def run(brokers: Iterable[int] = range(MIN_BROKERS, DEFAULT_BROKERS + 1), variant: str | None = None,
        names: Iterable[str] | None = None, timeout_ms: int = TIMEOUT_MS,
        on_result: Callable[[ProofResult], None] | None = None) -> list[ProofResult]:
    """Every property (or those in `names`) for every broker count, in that order; ValueError on bad input."""
    rules = rules_named(variant)
    counts = list(brokers)
    for n in counts:
        if not MIN_BROKERS <= n <= MAX_BROKERS:
            raise ValueError(f"broker count {n} is out of range; allowed {MIN_BROKERS}..{MAX_BROKERS}")
    selected = PROPERTIES
    if names is not None:
        wanted = list(names)
        unknown = [n for n in wanted if n not in PROPERTY_NAMES]
        if unknown:
            raise ValueError(f"unknown property '{unknown[0]}'")
        selected = [p for p in PROPERTIES if p.name in wanted]
    results = []
    for prop in selected:
        for n in counts:
            result = prove(prop, n, rules, timeout_ms)
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results
