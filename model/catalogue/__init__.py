"""The property catalogue: every property the Kafka model is checked against, declared once.

Each property is a `Declaration` (`declaration.py`: name, meaning, kind, where it is judged, what
it reads, the action kinds it judges, when it is listed, the Kafka 2.6 Findings that break it) in
the module of what it checks:

- `controller`: one active controller, its epoch, its fenced writes;
- `metadata`: the controller's context against ZooKeeper;
- `requests`: the requests controllers send and brokers apply;
- `leadership`: leaders, elections and ISRs;
- `shutdown`: controlled shutdown;
- `reassignment`: partition reassignment (KIP-455);
- `partitions`: partitions added to a topic;
- `deletion`: topic deletion;
- `admin`: the admin znodes an operator writes;
- `elect_leaders`: leader elections on demand (ElectLeaders) and unclean election switched on;
- `log_dirs`: replicas on a failed log directory (JBOD);
- `watches`: the ZooKeeper watches a settled controller holds;
- `tables`: the replica state machine's transitions and states;
- `goals`: what the model must reach.

They share `settledness` (where the liveness properties are judged, and the per-model `Judge`
that remembers it), `views` (what several of them read of a state or a step) and `findings` (the
Findings, each declared once). Everything else is derived from the declarations: the checkers'
list (`properties_for`), the known Kafka 2.6 violations (`known_violations`, and what the
checkers excuse of them, `excused_violations`), partial-order
reduction's property reads (model/checking/footprints.py `property_reads`), the meanings the
reports print, and the properties that read the armed watches (`READS_WATCHES`).
"""

from __future__ import annotations

from collections.abc import Callable

from kcm.checker.engine.contract import KnownViolation, Property
from kcm.model.catalogue import (
    admin,
    controller,
    deletion,
    elect_leaders,
    goals,
    leadership,
    log_dirs,
    metadata,
    partitions,
    reassignment,
    requests,
    shutdown,
    tables,
    watches,
)
from kcm.model.catalogue.declaration import Declaration, Kind, Part
from kcm.model.catalogue.settledness import Judge
from kcm.model.cluster import Cluster
from kcm.model.config import ModelConfig

#: Every declaration, module by module, goals last.
CATALOGUE: tuple[Declaration, ...] = (
    *controller.DECLARATIONS, *metadata.DECLARATIONS, *requests.DECLARATIONS, *leadership.DECLARATIONS,
    *shutdown.DECLARATIONS, *reassignment.DECLARATIONS, *partitions.DECLARATIONS, *deletion.DECLARATIONS,
    *admin.DECLARATIONS, *elect_leaders.DECLARATIONS, *log_dirs.DECLARATIONS, *watches.DECLARATIONS,
    *tables.DECLARATIONS, *goals.DECLARATIONS,
)

#: The order in which the checkers list the invariants: the order they joined the model, which
#: reports, traces and pinned results follow (when several properties fail in one state, the
#: first listed is reported). An invariant declared later is listed after these, in `CATALOGUE`
#: order; the goals come last, in `goals` order.
LISTING: tuple[str, ...] = (
    "SingleActiveControllerPerEpoch", "UniqueEpochSender", "LeaderInIsrOrNone", "IsrNonEmpty",
    "OnlyActiveControllerActs", "ZkWritesFenced", "StaleControllerRejected", "ZkLeaderEpochMonotonic",
    "ControllerBumpsLeaderEpoch", "BrokerLeaderEpochMonotonic", "NoStaleBrokerEpochApplied",
    "MetadataBeforeLeaderAndIsr", "LeaderIsLive", "ElectionRuleConformance", "CleanElectionFromIsr",
    "DeposedLeaderNotified", "NoShuttingDownJoinsIsr", "CacheMatchesZkAfterWrite", "ContextDerivedFromZk",
    "NoStaleContextWhenInactive", "OfflineReplicaLeavesIsr", "EventuallyOneActiveController",
    "OfflinePartitionEventuallyOnline", "ControlledShutdownEventuallyCompletes", "TopicDeletionEventuallyCompletes",
    "ReassignmentEventuallyCompletes", "CacheMatchesZk", "BrokerIncarnationTracked",
    "AtMostOneBelievedLeaderAfterQuiescence", "AdminZnodesConsumed", "ActiveControllerOnceSettled",
    "PreferredElectionZnodeConsumed", "NoDeadLeaderAdvertised", "DeadReplicaOnlyAsSoleIsrMember",
    "OfflinePartitionWithLiveIsrGetsLeader", "PreferredElectionMovesLeader", "OfflineElectionForOfflineLeader",
    "NewPartitionFromLiveReplicas", "ControlledShutdownLeavesBrokerClean", "ControlledShutdownElectsAnother",
    "ControlledShutdownRetriedOnlyWithPartitionsLeft", "FailedBrokerReplicasOffline", "DeletedTopicLeavesNoReplica",
    "ReassignmentSetsDisjoint", "ReplicaStatesMatchLiveness", "BrokersFollowTheLeader", "CreatedPartitionsHaveState",
    "ControllerWatchesArmed", "ControlledShutdownMovesLeadership",
    "AutoRebalanceElectsPreferred", "DeletionRequestDroppedWithTopic", "RemovedReplicasForgotten",
    "NoElectionForDeletingTopic", "ReplicaTransitionsValid", "LeaderIsrMatchesZk",
    "ReassignmentCompletionRemovesRequest", "ReassignmentDeletesRemovedReplicas", "DeletionQueuesEmptyWhenQuiescent",
)


def _listing_order() -> tuple[Declaration, ...]:
    invariants = [d for d in CATALOGUE if d.kind is not Kind.GOAL]
    rank = {name: i for i, name in enumerate(LISTING)}
    unknown = set(LISTING) - {d.name for d in invariants}
    if unknown:
        raise ValueError(f"LISTING names invariants the catalogue does not declare: {sorted(unknown)}")
    ordered = sorted(invariants, key=lambda d: rank.get(d.name, len(rank)))  # stable: later ones in CATALOGUE order
    return (*ordered, *(d for d in CATALOGUE if d.kind is Kind.GOAL))


#: The declarations in the order the checkers list them.
LISTED: tuple[Declaration, ...] = _listing_order()

#: The properties that read the armed watches, which a client of a real ZooKeeper cannot list
#: (`kcm simulate --zk` leaves them unjudged).
READS_WATCHES: frozenset[str] = frozenset(d.name for d in CATALOGUE if d.reads is not None and Part.WATCHES in d.reads)


def properties_for(cfg: ModelConfig, observe: Callable[[Cluster, object], list],
                   judge: Judge | None = None) -> list[Property]:
    """Every property of the model for `cfg`, in listing order; `observe(state, action)` gives a
    step's observations. The properties share one `Judge` (`judge`, or a new one on `observe`),
    which the caller's model owns."""
    if judge is None:
        judge = Judge(observe)
    return [d.build(cfg, judge) for d in LISTED if d.listed(cfg)]


def known_violations(cfg: ModelConfig) -> dict[str, str]:
    """The properties Kafka 2.6 is known to break under `cfg`: name -> its Findings that apply."""
    return {d.name: " or ".join(str(f) for f in d.findings_for(cfg)) for d in LISTED if d.broken_by_kafka(cfg)}


def excused_violations(cfg: ModelConfig, judge: Judge) -> dict[str, KnownViolation]:
    """The same properties, each with its Finding and the matcher of the violations it explains
    (findings.py), for the model of `cfg` whose judge is `judge`: what the model hands the
    checkers as its `known_violations`."""
    return {d.name: d.excused(cfg, judge) for d in LISTED if d.broken_by_kafka(cfg)}
