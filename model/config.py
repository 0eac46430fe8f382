"""The model's configuration: the size of the cluster, the bounds on faults and admin operations, the
features switched on, and the bug variant, if any.

Like a TLC `.cfg` file next to a spec, a `ModelConfig` is kept apart from the model: the same
transition relation is checked under many configs. Faults (broker crashes, session expiries of
live brokers, leader-driven ISR shrinks, controller moves, lost ZooKeeper replies, ZooKeeper
connection losses) and admin operations (controlled shutdowns, preferred elections,
reassignments, topic deletions, topic creations, auto rebalances) are bounded here, one `max_*`
field per budget (model/actions.py declares which kind spends which); healing actions
(deliveries, event processing, restarts, expiries of dead brokers' sessions) are not bounded, as
in Vanlightly's Kafka specs.

`ModelConfig.from_mapping` validates a plain mapping (a parsed TOML preset) and raises
`ConfigError` naming the field, the bad value and the allowed range. Loading files is the shell's
job (`kcm.config`): this module does no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from kcm.model.actions import BUDGET_FIELDS, OVERLAP_KINDS
from kcm.model.variants import ALL_VARIANTS

#: The allowed values of the enumerated fields.
REASSIGN_TARGETS = ("all", "replace-one", "replace-one-or-reorder")
ISR_ADMISSIONS = ("2.6", "kip-841")


class ConfigError(ValueError):
    """A config field is missing, unknown, of the wrong type or out of range."""


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """One model instance: sizes, bounds and features. Every field is validated by `from_mapping`."""

    #: Number of brokers; ids are 0 .. brokers-1.
    brokers: int = 3
    #: Number of topics; each has `partitions` partitions of `replication_factor` replicas.
    topics: int = 1
    #: How many of the topics exist at the start; the others can be created (`max_topic_creations`).
    initial_topics: int = -1
    #: Partitions per topic: the most a topic can have.
    partitions: int = 1
    #: How many of its `partitions` a topic has when it is created (and at the start); the others
    #: can be added (`max_partition_additions`). -1: all of them.
    created_partitions: int = -1
    #: Replicas per partition (`replication.factor`), placed on distinct brokers.
    replication_factor: int = 2
    #: `unclean.leader.election.enable` per topic (one value applies to every topic) at the start;
    #: an operator can switch it on for a topic at run time (`max_unclean_election_enables`).
    unclean_election: bool = False
    # Faults, each bounded.
    #: Broker crashes (`BrokerCrash`): the process dies, its ZooKeeper session lives on until it
    #: expires.
    max_broker_crashes: int = 1
    #: ZooKeeper session expiries of a live broker (`ZkSessionExpire`): its ephemeral znodes go.
    max_session_expiries: int = 1
    #: Lost ZooKeeper replies (`ZkLoseReply`): a controller's partition-state write applied but
    #: answered CONNECTIONLOSS, then retried (docs/model.md, "Lost ZooKeeper replies").
    max_lost_acks: int = 0
    #: Connection losses without expiry (`ZkConnectionLoss`): the session survives, its watches
    #: too, the request in flight fails with CONNECTIONLOSS and is retried.
    max_connection_losses: int = 0
    #: ISR shrinks a partition leader makes on its own (`LeaderShrinkIsr`: a lagging follower leaves).
    max_leader_isr_shrinks: int = 0
    # Admin operations, each bounded.
    #: Controlled shutdowns a broker asks the controller for (`BrokerRequestControlledShutdown`).
    max_controlled_shutdowns: int = 0
    #: Preferred leader elections an operator asks for (`/admin/preferred_replica_election`).
    max_preferred_elections: int = 0
    #: Partition reassignments an operator asks for (`/admin/reassign_partitions`).
    max_reassignments: int = 0
    #: Topic deletions an operator asks for (`/admin/delete_topics`).
    max_topic_deletions: int = 0
    #: Which reassignment targets an admin may ask for: "all" ordered lists of RF brokers, or
    #: "replace-one" (one replica replaced in place: both the leader-moves and leader-stays paths),
    #: or "replace-one-or-reorder" (also the same replicas in another order, (0, 1) -> (1, 0):
    #: a reassignment that removes no replica, so no OfflineReplica re-reads the znode).
    reassign_targets: str = "all"
    #: How many partitions one admin reassignment may name: 1 is `AdminReassign` alone; 2 or more
    #: adds `AdminReassignPartitions`, one `/admin/reassign_partitions` znode listing that many
    #: partitions, which the controller rewrites as each completes (each costs one reassignment).
    reassign_partitions_at_once: int = 1
    #: Who may join an ISR: "2.6" (the leader adds any caught-up follower, even one on a broker
    #: the controller knows is shutting down: Kafka 2.6, docs/model.md Findings 8) or "kip-841"
    #: (the controller admits only live replicas not shutting down, as AlterPartition does since
    #: 3.3.0, KIP-841, KAFKA-14140). A model option, not a bug variant; the implementation honours "2.6" only.
    isr_admission: str = "2.6"
    #: Topic creations (a topic not yet created, or a deleted one created again), each on a
    #: placement Kafka's creation can choose (model/placement.py).
    max_topic_creations: int = 0
    #: Partition additions (`AdminAddPartitions`: `kafka-topics.sh --alter --partitions`) to a
    #: topic that has fewer than `partitions`; the controller's per-topic watch on
    #: `/brokers/topics/<t>` is modelled in the configs that may add partitions (docs/model.md,
    #: "Adding partitions").
    max_partition_additions: int = 0
    #: Auto leader rebalance (`auto.leader.rebalance.enable`), bounded like an admin operation.
    max_auto_rebalances: int = 0
    #: An operator deleting `/controller` to force a re-election (the V4 scenario needs it).
    max_controller_moves: int = 0
    #: Leader elections an operator asks for through the AdminClient (`AdminElectLeaders`, the
    #: ElectLeaders API of KIP-460), each of one partition, preferred or unclean.
    max_elect_leaders: int = 0
    #: Topics an operator switches `unclean.leader.election.enable` on for at run time
    #: (`AdminEnableUncleanElection`, a dynamic topic config).
    max_unclean_election_enables: int = 0
    #: Log directories that fail on a running broker (`BrokerFailLogDir`, JBOD), each holding one
    #: replica; the broker stays up and gets the directory back when it restarts.
    max_log_dir_failures: int = 0
    #: `controlled.shutdown.max.retries` (Kafka's default is 3; small values keep the space small).
    controlled_shutdown_max_retries: int = 1
    #: Bounds across kinds: how many faults (broker crash, session expiry, leader ISR shrink,
    #: controller move, lost ack, that is a lost ZooKeeper reply, connection loss and log dir
    #: failure, of one replica's log directory) and how
    #: many admin operations (controlled shutdown, preferred election, reassignment, topic
    #: deletion, topic creation, partition addition, auto rebalance, elect leaders, unclean election
    #: enable: switching it on) one run may have in all; -1 for no bound beyond
    #: the per-kind ones. They keep "every feature on" configs exhaustible.
    max_faults: int = -1
    #: Admin operations in all; -1 for no bound beyond the per-kind ones.
    max_admin_ops: int = -1
    #: Faults and admin operations together.
    max_perturbations: int = -1
    #: Extra runs in which perturbations overlap, each a list of kinds (`OVERLAP_KINDS`, declared
    #: with the action kinds in model/actions.py): the run
    #: starts from the settled cluster (startup done, broker 0 controller, nothing in flight), each
    #: listed kind may happen once, the first at once and every later one before the cluster has
    #: settled again. They reach what needs two perturbations at the same time (a crash during
    #: a topic deletion or a reassignment) without the cost of two perturbations anywhere in the
    #: run. The config's own budgets apply to the cold-start run beside them.
    overlapping: tuple[tuple[str, ...], ...] = ()
    #: Capacity of each broker's controller event queue (Kafka's is unbounded; the model's is not).
    event_queue_capacity: int = 8
    #: The highest controller epoch an election may reach; an election beyond it is not taken, like
    #: a TLC state constraint. Kafka 2.6's failover can throw and move the controller
    #: (`triggerControllerMove`), and every successor can do the same while the cause lasts (a
    #: controller-move loop), each election one epoch higher: without a bound the state space
    #: would be infinite. 0 (the default) derives it from the budgets: one election at the cold
    #: start, one per perturbation that can delete `/controller` (crash, session expiry, lost
    #: acknowledgement, controller move, controlled shutdown), and two more, so that a loop shows
    #: two elections past the last one the budgets allow. `controller_epoch_bound` is the value used.
    max_controller_epoch: int = 0
    #: Optional data: per replica a log end offset and high watermark, up to `max_offset`.
    data: bool = False
    #: The highest log offset when `data` is on.
    max_offset: int = 0
    #: The historical bug to reproduce (a name from `kcm.model.variants`), or "" for Kafka 2.6.
    variant: str = ""
    #: Free text shown in reports.
    description: str = field(default="", compare=False)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], *, where: str = "config") -> ModelConfig:
        """Validate `values` and build a config; the error names `where`, the field and the fix."""
        known = {f.name: f for f in fields(cls)}
        for key in values:
            if key not in known:
                close = ", ".join(sorted(known))
                raise ConfigError(f"{where}: unknown field `{key}`; known fields are {close}")
        kwargs: dict[str, Any] = {}
        for name, f in known.items():
            if name not in values:
                continue
            value = values[name]
            expected = type(f.default)
            if name == "overlapping":
                kwargs[name] = _overlapping(value, where)
                continue
            if expected is bool:
                if not isinstance(value, bool):
                    raise ConfigError(f"{where}: field `{name}` = {value!r} must be true or false")
            elif expected is int:
                if isinstance(value, bool) or not isinstance(value, int):
                    raise ConfigError(f"{where}: field `{name}` = {value!r} must be a whole number")
            elif not isinstance(value, expected):
                raise ConfigError(f"{where}: field `{name}` = {value!r} must be a {expected.__name__}")
            kwargs[name] = value
        config = cls(**kwargs)
        config.validate(where=where)
        return config

    @property
    def controller_epoch_bound(self) -> int:
        """`max_controller_epoch`, or the bound derived from the budgets when it is 0."""
        if self.max_controller_epoch:
            return self.max_controller_epoch
        moving = ("broker_crash", "session_expiry", "controller_move", "controlled_shutdown")
        own = (self.max_broker_crashes + self.max_session_expiries + self.max_lost_acks
               + self.max_controller_moves + self.max_controlled_shutdowns)
        runs = [sum(kind in moving for kind in run) for run in self.overlapping]
        return 1 + max([own, *runs]) + _LOOP_SLACK

    @property
    def created_count(self) -> int:
        """The partitions a topic has when created (`created_partitions`, all of them when -1)."""
        return self.partitions if self.created_partitions < 0 else self.created_partitions

    @property
    def adds_partitions(self) -> bool:
        """Some run of this config may add partitions: only then does the controller's watch on
        each `/brokers/topics/<t>` matter (docs/model.md, "Adding partitions")."""
        return self.max_partition_additions > 0 or any("partition_addition" in run for run in self.overlapping)

    @property
    def existing_topics(self) -> int:
        """The topics that exist at the start (`initial_topics`, all of them when -1)."""
        return self.topics if self.initial_topics < 0 else self.initial_topics

    def validate(self, *, where: str = "config") -> None:
        """Check every range, and the relations between fields; raise `ConfigError` on the first problem."""
        for name, (lo, hi) in _RANGES.items():
            value = getattr(self, name)
            hi_value = hi(self) if callable(hi) else hi
            if not lo <= value <= hi_value:
                raise ConfigError(
                    f"{where}: field `{name}` = {value} is out of range; allowed {lo}..{hi_value}"
                    + (_RANGE_WHY.get(name, "")))
        if self.created_partitions == 0:
            raise ConfigError(f"{where}: field `created_partitions` = 0; a topic has at least one partition "
                              f"(allowed 1..partitions, or -1 for all {self.partitions})")
        if self.variant and self.variant not in ALL_VARIANTS:
            raise ConfigError(f"{where}: field `variant` = {self.variant!r} is not a known variant; "
                              f"choose one of {', '.join(ALL_VARIANTS)} or leave it empty")
        if self.reassign_targets not in REASSIGN_TARGETS:
            raise ConfigError(f"{where}: field `reassign_targets` = {self.reassign_targets!r}; "
                              "allowed \"all\", \"replace-one\" or \"replace-one-or-reorder\"")
        if self.isr_admission not in ISR_ADMISSIONS:
            raise ConfigError(f"{where}: field `isr_admission` = {self.isr_admission!r}; "
                              "allowed \"2.6\" or \"kip-841\"")
        # Accepted but never read, a field would promise a check that is not made: until the model
        # has log offsets, `data` and `max_offset` are refused.
        for name, off in (("data", False), ("max_offset", 0)):
            if getattr(self, name) != off:
                raise ConfigError(f"{where}: field `{name}` does nothing yet (the model has no log offsets); "
                                  "leave it out")


def _overlapping(value: Any, where: str) -> tuple[tuple[str, ...], ...]:
    """`overlapping` as a tuple of runs, each a tuple of distinct known kinds."""
    allowed = ", ".join(OVERLAP_KINDS)
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"{where}: field `overlapping` = {value!r} must be a list of lists of kinds ({allowed})")
    runs = []
    for run in value:
        if not isinstance(run, (list, tuple)) or not run:
            raise ConfigError(f"{where}: field `overlapping` has {run!r}; "
                              f"each run is a non-empty list of kinds ({allowed})")
        for kind in run:
            if kind not in OVERLAP_KINDS:
                raise ConfigError(f"{where}: field `overlapping` names unknown kind {kind!r}; allowed {allowed}")
        if len(set(run)) != len(run):
            raise ConfigError(f"{where}: field `overlapping` repeats a kind in {list(run)}; "
                              "each kind happens once per run")
        runs.append(tuple(run))
    return tuple(runs)


#: Elections past the budgets' last one that `max_controller_epoch` = 0 allows (a controller-move loop's).
_LOOP_SLACK = 2
_MAX_BROKERS = 5
_MAX_OFFSET = 3
_RANGES: dict[str, tuple[int, Any]] = {
    "brokers": (1, _MAX_BROKERS),
    "topics": (1, 3),
    "initial_topics": (-1, lambda c: c.topics),
    "partitions": (1, 3),
    "created_partitions": (-1, lambda c: c.partitions),
    "replication_factor": (1, lambda c: c.brokers),
    "max_broker_crashes": (0, 4),
    "max_session_expiries": (0, 4),
    "max_lost_acks": (0, 2),
    "max_connection_losses": (0, 2),
    "max_leader_isr_shrinks": (0, 4),
    "max_controlled_shutdowns": (0, 3),
    "max_preferred_elections": (0, 3),
    "max_reassignments": (0, 2),
    "reassign_partitions_at_once": (1, lambda c: min(3, c.topics * c.partitions)),
    "max_topic_deletions": (0, lambda c: c.topics),
    "max_topic_creations": (0, lambda c: c.topics),
    "max_partition_additions": (0, 2),
    "max_auto_rebalances": (0, 3),
    "max_controller_moves": (0, 2),
    "max_elect_leaders": (0, 2),
    "max_unclean_election_enables": (0, lambda c: c.topics),
    "max_log_dir_failures": (0, 2),
    "controlled_shutdown_max_retries": (0, 3),
    "event_queue_capacity": (1, 16),
    "max_controller_epoch": (0, 32),
    "max_faults": (-1, 8),
    "max_admin_ops": (-1, 8),
    "max_perturbations": (-1, 8),
    "max_offset": (0, _MAX_OFFSET),
}
_RANGE_WHY = {
    "replication_factor": " (no more replicas than brokers)",
    "max_topic_deletions": " (each topic is deleted at most once)",
    "max_controller_epoch": " (0 derives the bound from the budgets)",
    "reassign_partitions_at_once": " (no more than the partitions, and at most 3)",
}
#: The upper bounds that depend on other fields, as the config reference prints them.
_BOUND_TEXT = {
    "initial_topics": "topics",
    "created_partitions": "partitions",
    "replication_factor": "brokers",
    "reassign_partitions_at_once": "min(3, topics × partitions)",
    "max_topic_deletions": "topics",
    "max_topic_creations": "topics",
    "max_unclean_election_enables": "topics",
}


def range_text(name: str) -> str | None:
    """The allowed range of the integer field `name`, as `lo..hi` (a bound that depends on other
    fields is named), or None for a field without a range."""
    if name not in _RANGES:
        return None
    lo, hi = _RANGES[name]
    return f"{lo}..{_BOUND_TEXT[name] if callable(hi) else hi}"


def _check_bound_texts() -> None:
    """Every bound that depends on other fields is named for the config reference."""
    unnamed = sorted(set(n for n, (_, hi) in _RANGES.items() if callable(hi)) ^ set(_BOUND_TEXT))
    if unnamed:
        raise AssertionError(f"_BOUND_TEXT and the callable bounds of _RANGES differ: {unnamed}")


_check_bound_texts()


def _check_budget_fields() -> None:
    """Every budget of model/actions.py is bounded by an integer field of `ModelConfig` with a
    range (the description of `max_faults` names each, tests/model/actions checks it)."""
    known = {f.name: f for f in fields(ModelConfig)}
    for budget, name in BUDGET_FIELDS.items():
        if name not in known or known[name].type != "int" or name not in _RANGES:
            raise AssertionError(f"budget {budget.name}: no bounded integer config field `{name}`")


_check_budget_fields()
