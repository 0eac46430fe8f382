"""Historical controller bugs, as named variants of the model (V1-V13; docs/checking.md lists their verdicts).

Each variant is a flag that puts back exactly the rule the bug had, in the model and (V1-V9) in
the implementation alike, and names the invariant it must break; V10-V13, bug classes found by
comparing the model with Kafka's history, are in the model only (`Variant.impl`). The model without a variant is Kafka
2.6 and breaks nothing. The variants are first-class citizens, like `Kip101`/`Kip320` next to
`KafkaReplication` in hachikuji/kafka-specification: tests assert, for each, which invariant the
explorer finds violated and the length of the shortest counterexample.

Some bugs need an action the healthy presets do not enable (an admin forcing a controller move
for V4, a fast restart for V5); the variant's preset (`kcm/presets/v*.toml`) enables it. The
bug itself is only the flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Variant:
    name: str
    jira: str
    fixed_in: str
    changes: str
    breaks: str
    preset: str
    #: The `Flags` field the variant switches on.
    flag: str
    #: Whether the implementation (`impl/`) honours the flag too (V1-V9 do; later ones are model only).
    impl: bool = True


_VARIANTS = (
    Variant("V1", "KAFKA-532", "0.8.0",
            "brokers apply requests from any controller epoch (no STALE_CONTROLLER_EPOCH check)",
            "StaleControllerRejected", "v1", "no_broker_controller_epoch_check"),
    Variant("V2", "KAFKA-1096", "0.8.2.0",
            "every active controller module adopts /controller_epoch when it changes (ControllerEpochListener)",
            "UniqueEpochSender", "v2", "controller_epoch_listener"),
    Variant("V3", "KAFKA-6082", "2.1.0",
            "controller ZooKeeper writes are not fenced by the /controller_epoch zkVersion CheckOp",
            "ZkWritesFenced", "v3", "no_zk_epoch_fence"),
    Variant("V4", "KAFKA-4447", "0.10.2.0",
            "the BrokerChange handler runs without the isActive guard",
            "OnlyActiveControllerActs", "v4", "no_is_active_guard"),
    Variant("V5", "KAFKA-7235", "2.2.0",
            "BrokerChange compares broker ids only (no bounce detection) and brokers ignore the broker epoch",
            "NoStaleBrokerEpochApplied", "v5", "broker_change_by_id_only"),
    Variant("V6", "KAFKA-708", "0.8.0 / 1.1.0",
            "the controller's ISR shrink removes the last ISR member too",
            "IsrNonEmpty", "v6", "isr_shrink_empties"),
    Variant("V7", "KAFKA-3670", "0.10.1.0",
            "controlled-shutdown election picks the first ISR member not shutting down, without a liveness filter",
            "ElectionRuleConformance", "v7", "shutdown_election_isr_order"),
    Variant("V8", "KAFKA-7482", "2.1.0",
            "controlled-shutdown LeaderAndIsr recipients exclude the shutting-down brokers",
            "DeposedLeaderNotified", "v8", "shutdown_recipients_exclude_shutting"),
    Variant("V9", "KAFKA-6650", "2.0.0",
            "OfflineReplica only moves replicas of partitions with leadership info",
            "TopicDeletionEventuallyCompletes", "v9", "offline_replica_needs_leadership"),
    # Bug classes found by comparing the model with Kafka's history. V10: KAFKA-3143 ("Controller
    # should transition offline replicas on startup": d77bac1c930 on trunk, cherry-picked as
    # 423610f3d08 into 2.3.0).
    Variant("V10", "KAFKA-3143", "2.3.0",
            "controller failover moves replicas on dead brokers to ReplicaDeletionIneligible only, "
            "never to OfflineReplica, so their ISR membership is left alone (model only; impl/ does not honour it)",
            "DeadReplicaOnlyAsSoleIsrMember", "v10", "failover_leaves_offline_replicas", impl=False),
    # V11-V13: each the Kafka code before the commit that fixed it
    # (keys and releases read from Kafka's git history: the first release tag whose history has the
    # fix, cherry-picks included: KAFKA-1170 32aae7202ce; KAFKA-5310 beeddc25d6b, 69970630ba9 on
    # 0.11.0; KAFKA-9212 5d0cb1419cd, 522b5177fd7 on 2.4). Model only.
    Variant("V11", "KAFKA-1170", "0.8.1",
            "OfflineReplica shrinks the ISR only when the controller's cached ISR holds the replica; "
            "otherwise the replica goes OfflineReplica with ZooKeeper's ISR untouched (model only)",
            "OfflineReplicaLeavesIsr", "v11", "offline_replica_trusts_cached_isr", impl=False),
    Variant("V12", "KAFKA-5310", "0.11.0.0",
            "controller resignation resets only the epoch, the channel manager, the state machines and "
            "the deletion manager: live brokers, assignments, leadership, shutting-down brokers and "
            "partitions being reassigned stay cached, and the next failover adds ZooKeeper's "
            "reassignments to the stale ones (model only)",
            "NoStaleContextWhenInactive", "v12", "resignation_keeps_context", impl=False),
    Variant("V13", "KAFKA-9212", "2.4.0",
            "a reassignment's leader-epoch bump (updateLeaderEpoch) is written to ZooKeeper and sent "
            "in LeaderAndIsr but not cached in partitionLeadershipInfo (model only)",
            "CacheMatchesZkAfterWrite", "v13", "leader_epoch_bump_not_cached", impl=False),
)

#: The variants by name.
VARIANTS = MappingProxyType({v.name: v for v in _VARIANTS})

#: Synthetic variants: not a Kafka bug, a plausible mistake put in to show a checker catching its
#: class of failure (here a livelock, which only `kcm explore --liveness` sees: `breaks` names a
#: liveness property of `kcm.checker.engine.liveness`, not a model invariant). Kept apart from `VARIANTS`,
#: whose every entry is a historical bug with a pinned safety counterexample.
_SYNTHETIC = (
    Variant("L1", "synthetic", "-",
            "ReplicaLeaderElection re-puts itself even when /admin/preferred_replica_election is absent "
            "(KAFKA-6146's watch re-registration made unconditional): the controller spins forever",
            "EventuallyQuiescent", "l1", "replica_election_always_reput", impl=False),
)
SYNTHETIC_VARIANTS = MappingProxyType({v.name: v for v in _SYNTHETIC})
#: Every variant a config may name.
ALL_VARIANTS = MappingProxyType({**VARIANTS, **SYNTHETIC_VARIANTS})


@dataclass(frozen=True, slots=True)
class Flags:
    """The rules a variant changes, resolved once per config (all False: Kafka 2.6)."""

    no_broker_controller_epoch_check: bool = False   # V1
    controller_epoch_listener: bool = False          # V2
    no_zk_epoch_fence: bool = False                  # V3
    no_is_active_guard: bool = False                 # V4
    broker_change_by_id_only: bool = False           # V5
    isr_shrink_empties: bool = False                 # V6
    shutdown_election_isr_order: bool = False        # V7
    shutdown_recipients_exclude_shutting: bool = False  # V8
    offline_replica_needs_leadership: bool = False   # V9
    failover_leaves_offline_replicas: bool = False   # V10 (model only)
    offline_replica_trusts_cached_isr: bool = False  # V11 (model only)
    resignation_keeps_context: bool = False          # V12 (model only)
    leader_epoch_bump_not_cached: bool = False       # V13 (model only)
    replica_election_always_reput: bool = False      # L1 (synthetic, liveness)


#: The flags of each variant, and of none (""), made once: a step reads them, never builds them.
_FLAGS = MappingProxyType({"": Flags(), **{name: Flags(**{v.flag: True}) for name, v in ALL_VARIANTS.items()}})


def flags_for(variant: str) -> Flags:
    """The flags of `variant` ("" for none); an unknown name raises KeyError."""
    return _FLAGS[variant]
