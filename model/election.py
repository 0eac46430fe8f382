"""Partition leader election: Kafka's four algorithms, the wrappers around them, and the ISR shrink.

Kafka 2.x elects leaders with four one-expression functions in `PartitionLeaderElectionAlgorithms`
(kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala), for example

    assignment.find(id => liveReplicas.contains(id) && isr.contains(id))

The scan is always in *assignment* (replica-list) order, never in ISR order. Around them,
`Election.scala` (kafka@2.6.x:core/src/main/scala/kafka/controller/Election.scala) fixes for each
strategy which replicas count as live, the new ISR, the leader-epoch bump and the recipients of the
LeaderAndIsr request:

| strategy            | live passed                        | new ISR                      | recipients          |
|---------------------|------------------------------------|------------------------------|---------------------|
| offline, clean      | assignment ∩ online                | live part of the ISR         | live assigned       |
| offline, unclean    | same                               | [leader]                     | live assigned       |
| reassign            | target replicas ∩ online           | unchanged                    | target replicas     |
| preferred           | assignment ∩ online                | unchanged                    | full assignment     |
| controlled shutdown | assignment ∩ (online ∪ shutting)   | ISR − shutting down          | live or shutting    |

Every wrapper bumps the leader epoch by exactly one (`LeaderAndIsr.newLeaderAndIsr`). "Online" is
Kafka's `isReplicaOnline`: the broker is live and not shutting down.

One abstraction, for the proofs: the functions are written over a tiny collection algebra, `Ops`
(`find`, `contains`, `filter`, `or_else`, ...), exactly as Kafka writes them over Scala collections.
`PY` runs them on tuples and sets: that is what the model and the implementation call. The Z3
backend in `kcm.checker.proofs` runs the *same* functions on symbolic terms, so the proofs are
about the code that runs, not about a transcription of it. Option values are `None` or a value.
Nothing here logs, counts metrics or touches a context object (Kafka's offline election marks the
unclean-election rate; we return `ElectionResult.unclean` instead).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

# kafka@2.6.x:core/src/main/scala/kafka/api/LeaderAndIsr.scala
NO_LEADER = -1
NO_EPOCH = -1
LEADER_DURING_DELETE = -2
EPOCH_DURING_DELETE = -2
INITIAL_LEADER_EPOCH = 0
INITIAL_ZK_VERSION = 0


class Ops(Protocol):
    """The collection algebra the election functions are written in.

    `Coll` is an ordered collection of broker ids (a sequence; sets are collections whose order does
    not matter), `B` a boolean, `Opt` an optional value. The concrete backend uses Python values;
    the Z3 backend uses masked lists of symbolic integers and symbolic booleans.
    """

    def contains(self, coll: Any, x: Any) -> Any: ...
    def and_(self, a: Any, b: Any) -> Any: ...
    def not_(self, a: Any) -> Any: ...
    def eq(self, a: Any, b: Any) -> Any: ...
    def find(self, coll: Any, pred: Callable[[Any], Any]) -> Any: ...
    def head_option(self, coll: Any) -> Any: ...
    def filter_option(self, opt: Any, pred: Callable[[Any], Any]) -> Any: ...
    def or_else(self, opt: Any, alternative: Callable[[], Any]) -> Any: ...
    def when(self, cond: Any, then: Callable[[], Any]) -> Any: ...
    def map_option(self, opt: Any, f: Callable[[Any], Any]) -> Any: ...
    def filter(self, coll: Any, pred: Callable[[Any], Any]) -> Any: ...
    def singleton(self, x: Any) -> Any: ...
    def size_is_one(self, coll: Any) -> Any: ...
    def ite(self, cond: Any, then: Any, otherwise: Any) -> Any: ...


class PythonOps:
    """`Ops` over Python values: tuples, sets and frozensets of ints, `None` for an empty option."""

    @staticmethod
    def contains(coll: Collection[int], x: int) -> bool:
        return x in coll

    @staticmethod
    def and_(a: bool, b: bool) -> bool:
        return a and b

    @staticmethod
    def not_(a: bool) -> bool:
        return not a

    @staticmethod
    def eq(a: int, b: int) -> bool:
        return a == b

    @staticmethod
    def find(coll: Sequence[int], pred: Callable[[int], bool]) -> int | None:
        for x in coll:
            if pred(x):
                return x
        return None

    @staticmethod
    def head_option(coll: Sequence[int]) -> int | None:
        return coll[0] if coll else None

    @staticmethod
    def filter_option(opt: Any, pred: Callable[[Any], bool]) -> Any:
        return opt if opt is not None and pred(opt) else None

    @staticmethod
    def or_else(opt: Any, alternative: Callable[[], Any]) -> Any:
        return opt if opt is not None else alternative()

    @staticmethod
    def when(cond: bool, then: Callable[[], Any]) -> Any:
        return then() if cond else None

    @staticmethod
    def map_option(opt: Any, f: Callable[[Any], Any]) -> Any:
        return None if opt is None else f(opt)

    @staticmethod
    def filter(coll: Sequence[int], pred: Callable[[int], bool]) -> tuple[int, ...]:
        return tuple(x for x in coll if pred(x))

    @staticmethod
    def singleton(x: int) -> tuple[int, ...]:
        return (x,)

    @staticmethod
    def size_is_one(coll: Collection[int]) -> bool:
        return len(coll) == 1

    @staticmethod
    def ite(cond: bool, then: Any, otherwise: Any) -> Any:
        return then if cond else otherwise


PY: Ops = PythonOps()


# --------------------------------------------------------------------------------------------------
# The four algorithms (kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala,
# object PartitionLeaderElectionAlgorithms). Arguments in Kafka's order; `live` is Kafka's
# `liveReplicas`. Each returns a broker id or None.


def offline_partition_leader_election(assignment, isr, live, unclean_enabled, ops: Ops = PY):
    """First live ISR member in assignment order; else, if unclean is enabled, the first live replica."""
    return ops.or_else(
        ops.find(assignment, lambda b: ops.and_(ops.contains(live, b), ops.contains(isr, b))),
        lambda: ops.when(unclean_enabled, lambda: ops.find(assignment, lambda b: ops.contains(live, b))))


def reassign_partition_leader_election(reassignment, isr, live, ops: Ops = PY):
    """First live ISR member of the reassignment target, in target order."""
    return ops.find(reassignment, lambda b: ops.and_(ops.contains(live, b), ops.contains(isr, b)))


def preferred_replica_partition_leader_election(assignment, isr, live, ops: Ops = PY):
    """The first assigned replica, if it is live and in the ISR."""
    return ops.filter_option(ops.head_option(assignment),
                             lambda b: ops.and_(ops.contains(live, b), ops.contains(isr, b)))


def controlled_shutdown_partition_leader_election(assignment, isr, live, shutting_down, ops: Ops = PY):
    """First live ISR member not shutting down, in assignment order."""
    return ops.find(assignment, lambda b: ops.and_(ops.and_(ops.contains(live, b), ops.contains(isr, b)),
                                                   ops.not_(ops.contains(shutting_down, b))))


# --------------------------------------------------------------------------------------------------
# Historical selectors, kept to reproduce old bugs (model variants and failing proofs).


def controlled_shutdown_leader_election_isr_order(assignment, isr, live, shutting_down, ops: Ops = PY):
    """Before KAFKA-3670 (kafka#51f7a35c929, fixed in 0.10.1.0): `(isr -- shuttingDown).headOption`.

    ISR order and no liveness filter: a dead ISR member can be chosen (variant V7).
    """
    return ops.find(isr, lambda b: ops.not_(ops.contains(shutting_down, b)))


def offline_leader_election_isr_order(assignment, isr, live, unclean_enabled, ops: Ops = PY):
    """Before KAFKA-1503 (kafka#2a4718c1a7e, fixed in 0.8.2.0): `liveBrokersInIsr.head`, in ISR order.

    A balance bug, not a safety bug: leadership piles onto one broker.
    """
    return ops.or_else(
        ops.find(isr, lambda b: ops.contains(live, b)),
        lambda: ops.when(unclean_enabled, lambda: ops.find(assignment, lambda b: ops.contains(live, b))))


# --------------------------------------------------------------------------------------------------
# The wrappers (kafka@2.6.x:core/src/main/scala/kafka/controller/Election.scala).


@dataclass(frozen=True, slots=True)
class LeaderAndIsr:
    """A partition's leadership: Kafka's `LeaderAndIsr(leader, leaderEpoch, isr, zkVersion)`."""

    leader: Any
    leader_epoch: Any
    isr: Any
    zk_version: Any = INITIAL_ZK_VERSION

    def new_leader_and_isr(self, leader, isr) -> LeaderAndIsr:
        """Every controller-made change bumps the leader epoch by one (kafka@2.6.x:.../api/LeaderAndIsr.scala)."""
        return LeaderAndIsr(leader, self.leader_epoch + 1, isr, self.zk_version)

    def new_leader(self, leader) -> LeaderAndIsr:
        return self.new_leader_and_isr(leader, self.isr)


@dataclass(frozen=True, slots=True)
class ElectionResult:
    """Kafka's `ElectionResult`: the new leadership (None if no leader could be elected), the
    recipients of the LeaderAndIsr request, and whether the leader was chosen outside the ISR."""

    leader_and_isr: LeaderAndIsr | None
    recipients: Any
    unclean: Any = False


def leader_for_offline(assignment, leader_and_isr: LeaderAndIsr, online, unclean_enabled,
                       ops: Ops = PY, algorithm: Callable[..., Any] = offline_partition_leader_election
                       ) -> ElectionResult:
    """`Election.leaderForOffline`: clean from the live ISR, unclean resets the ISR to [leader]."""
    isr = leader_and_isr.isr
    live = ops.filter(assignment, lambda b: ops.contains(online, b))
    leader = algorithm(assignment, isr, live, unclean_enabled, ops)
    new = ops.map_option(leader, lambda r: leader_and_isr.new_leader_and_isr(
        r, ops.ite(ops.contains(isr, r), ops.filter(isr, lambda b: ops.contains(online, b)), ops.singleton(r))))
    unclean = ops.map_option(leader, lambda r: ops.not_(ops.contains(isr, r)))
    return ElectionResult(new, live, unclean if unclean is not None else False)


def leader_for_reassign(target_replicas, leader_and_isr: LeaderAndIsr, online, ops: Ops = PY) -> ElectionResult:
    """`Election.leaderForReassign`: scan the target replicas; the ISR is unchanged."""
    live = ops.filter(target_replicas, lambda b: ops.contains(online, b))
    leader = reassign_partition_leader_election(target_replicas, leader_and_isr.isr, live, ops)
    return ElectionResult(ops.map_option(leader, leader_and_isr.new_leader), target_replicas)


def leader_for_preferred_replica(assignment, leader_and_isr: LeaderAndIsr, online, ops: Ops = PY) -> ElectionResult:
    """`Election.leaderForPreferredReplica`: the first replica or nothing; the ISR is unchanged."""
    live = ops.filter(assignment, lambda b: ops.contains(online, b))
    leader = preferred_replica_partition_leader_election(assignment, leader_and_isr.isr, live, ops)
    return ElectionResult(ops.map_option(leader, leader_and_isr.new_leader), assignment)


def leader_for_controlled_shutdown(assignment, leader_and_isr: LeaderAndIsr, live_or_shutting_down, shutting_down,
                                   ops: Ops = PY,
                                   algorithm: Callable[..., Any] = controlled_shutdown_partition_leader_election
                                   ) -> ElectionResult:
    """`Election.leaderForControlledShutdown`: the shutting-down brokers leave the ISR.

    Recipients are the live-or-shutting-down assigned replicas, so the deposed leader hears of its
    demotion (KAFKA-7482, variant V8, removed the shutting-down brokers from this list).
    """
    isr = leader_and_isr.isr
    live = ops.filter(assignment, lambda b: ops.contains(live_or_shutting_down, b))
    leader = algorithm(assignment, isr, live, shutting_down, ops)
    new_isr = ops.filter(isr, lambda b: ops.not_(ops.contains(shutting_down, b)))
    return ElectionResult(ops.map_option(leader, lambda r: leader_and_isr.new_leader_and_isr(r, new_isr)), live)


def remove_replica_from_isr(leader_and_isr: LeaderAndIsr, replica, ops: Ops = PY,
                            keep_sole_member: bool = True) -> LeaderAndIsr:
    """The controller's ISR shrink when `replica` goes offline (`doRemoveReplicasFromIsr`).

    kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala: the leader becomes
    NoLeader (-1) when it is the replica removed; a sole ISR member is kept, so the ISR is never
    emptied (KAFKA-5642, 1.1+; variant V6 removes the rule). The leader epoch is bumped.
    """
    new_leader = ops.ite(ops.eq(leader_and_isr.leader, replica), NO_LEADER, leader_and_isr.leader)
    isr = leader_and_isr.isr
    without = ops.filter(isr, lambda b: ops.not_(ops.eq(b, replica)))
    adjusted_isr = ops.ite(ops.size_is_one(isr), isr, without) if keep_sole_member else without
    return leader_and_isr.new_leader_and_isr(new_leader, adjusted_isr)
