"""Livelocks Kafka 2.6 is known to have, as data: the liveness checker lists them, not fails on them.

The liveness checker (`kcm.checker.engine.liveness`) reports every fair cycle of healing actions that
never reaches quiescence as a lasso. Some of those cycles are Kafka 2.6's own behaviour, read from
its code and recorded as Findings in docs/model.md (the controller-move loops: a failover that
resumes a reassignment of a partition without a state znode, a pending preferred election on a
leaderless partition that throws, the next controller doing the same). A known loop is listed in
`known_loops_for(partitions_per_topic)` with:

- `name`: a short CamelCase name of the loop;
- `finding`: the Finding that explains it (docs/model.md, "Findings");
- `property`: the liveness property it breaks ("EventuallyQuiescent", "EventuallySettled" or
  "QuiescenceAlwaysReachable", see `kcm.checker.engine.liveness`);
- `matches(cycle)`: whether a lasso's cycle is this loop; `cycle` is `[(None, entry), (action,
  state), ...]`: the loop's entry state, then each step of the cycle (the action taken into the
  state), the last state equal to the entry (up to the quotient the graph was explored modulo). A
  predicate on what the cycle does (the events it processes, the znodes it reads) rather than on
  one exact state, so that it recognises the loop in every config that has it;
- `doc`: one paragraph, the why.

The gate stays green on a known loop, and its lasso is still written out, so that the behaviour
stays visible. A loop that only some configs reach is matched the same way: the list is per model,
not per preset.

Both of Kafka 2.6's controller-move loops (docs/model.md, Findings 6) break `EventuallySettled`, not
`EventuallyQuiescent`: they last while every replica of the partition is down (or, for the
preferred one, while its topic is queued for deletion), so a fair restart of one of those brokers
ends the first kind; a broker that stays down (a dead machine) keeps them going, and the
cluster has no working controller meanwhile. Each turn wins `/controller` again, one controller
epoch higher, so they are cycles only of the graph explored modulo controller epochs
(`kcm.model.checking.epoch_quotient`), which `kcm explore --liveness` uses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from kcm.model.cluster import NO_ZNODE, Cluster


class KnownLoop(NamedTuple):
    """A livelock the modelled Kafka version has (see the module docstring)."""

    name: str
    finding: str
    property: str
    matches: Callable[[Sequence[tuple[Any, Any]]], bool]
    doc: str = ""


def _moves_the_controller(cycle: Sequence[tuple[Any, Cluster]]) -> bool:
    """Each turn of the cycle elects a controller: its last state holds a higher /controller_epoch
    than its entry (equal up to the renaming of controller epochs)."""
    return cycle[-1][1].zk.controller_epoch > cycle[0][1].zk.controller_epoch


def _stateless_with_no_live_replica(s: Cluster) -> list[int]:
    """The partitions that exist in /brokers/topics, have no state znode, and none of whose
    replicas (the full assignment, adding ones included) is registered in /brokers/ids."""
    zk = s.zk
    return [p for p, znode in enumerate(zk.partitions)
            if zk.assignment[p] and znode == NO_ZNODE and not any(zk.broker_epochs[b] for b in zk.assignment[p])]


def _resumed_reassignment(cycle: Sequence[tuple[Any, Cluster]]) -> bool:
    s = cycle[0][1]
    return _moves_the_controller(cycle) and any(
        s.zk.adding[p] or s.zk.removing[p] for p in _stateless_with_no_live_replica(s))


def _pending_preferred_election(ppt: int) -> Callable[[Sequence[tuple[Any, Cluster]]], bool]:
    """The preferred loop's matcher for a model of `ppt` partitions per topic: a partition named by
    `/admin/preferred_replica_election` has no state znode, and either no live replica or a topic
    queued for deletion (`/admin/delete_topics`): the failover's partition state machine startup
    skips a topic being deleted (kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
    lines 66-73), so even a live replica gets no leadership before the lookup throws."""
    def matches(cycle: Sequence[tuple[Any, Cluster]]) -> bool:
        s = cycle[0][1]
        zk = s.zk
        stuck = set(_stateless_with_no_live_replica(s)) | {
            p for p, znode in enumerate(zk.partitions)
            if zk.assignment[p] and znode == NO_ZNODE and zk.delete_topics >> (p // ppt) & 1}
        return _moves_the_controller(cycle) and any(zk.preferred >> p & 1 for p in stuck)
    return matches


def known_loops_for(partitions_per_topic: int) -> tuple[KnownLoop, ...]:
    """Kafka 2.6's known livelocks (see the module docstring) in a model of `partitions_per_topic`
    partitions per topic (what tells a partition's topic); a variant adds none."""
    return (
        KnownLoop(
            "ResumedReassignmentWithoutStateZnode", "Findings 6", "EventuallySettled", _resumed_reassignment,
            "A partition being reassigned (adding or removing replicas in /brokers/topics) has no state "
            "znode and no live replica: every failover's `initializePartitionReassignments` -> "
            "`maybeResumeReassignments` -> `onPartitionReassignment` -> A1 `updateLeaderEpoch` throws "
            "IllegalStateException (\"leaderAndIsr path is empty\"), uncaught, so `elect` calls "
            "`triggerControllerMove` (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala "
            "lines 216-262, 376-387, 774-781, 1003-1038, 1308-1323, 1334-1370)."),
        KnownLoop(
            "PendingPreferredElectionWithoutLeadership", "Findings 6", "EventuallySettled",
            _pending_preferred_election(partitions_per_topic),
            "/admin/preferred_replica_election names a partition with no state znode and either no live "
            "replica or a topic queued for deletion (the failover's partition state machine startup skips "
            "such a topic, PartitionStateMachine.scala lines 66-73, so its live replica gets no leadership "
            "either): every failover's `fetchPendingPreferredReplicaElections` evaluates "
            "`controllerContext.partitionLeadershipInfo(partition)` (a mutable.Map's apply) before its "
            "topic-deletion filter and throws NoSuchElementException, so `elect` calls "
            "`triggerControllerMove` (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala "
            "lines 250-252, 750-770, 1334-1370; ControllerContext.scala line 85). With a deletion queued "
            "the loop has no end even with every broker live: the deletion's StopReplica answers are "
            "dropped by a controller that has resigned (`if (!isActive) return`, line 1221)."),
    )
