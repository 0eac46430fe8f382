"""The model's actions, named Actor+Verb as in TLA+ specs; each is one atomic step of the cluster.

Each kind is declared once, in `KINDS` at the end: its class, its role (healing, fault or admin
operation), the `Budget` that bounds it and the config field and `overlapping` name of that
budget, its partial-order-reduction group (model/checking/footprints.py) and its counterpart in
the implementation (the `kcm.impl.step_cluster.StepCluster` method that performs it in
lock-step). Every other list of kinds is derived from `KINDS`, and the import checks that the
declaration is complete: a kind added here without its record fails at import.

Healing actions are never bounded: they take the cluster back to quiescence (`BrokerStart`, a
restart; `BrokerNoticeExpiry`, `ControllerProcessEvent`, `NetworkDeliver`, `LeaderExpandIsr`,
`BrokerShutdown`, finishing a controlled shutdown). Faults and admin operations each spend one
of their budget, but two of them spend it in some states only, and a step that spends nothing
heals (model/spec.py `_SPENDS_WHEN`, `heals`): `ZkSessionExpire` is a fault for a live broker and
healing for a dead one (the session of a dead broker always expires eventually), and
`BrokerRequestControlledShutdown` is an operation the first time and healing as the retry of a
refused request (the broker's own loop retries until `controlled.shutdown.max.retries`,
kafka@2.6.x:core/src/main/scala/kafka/server/KafkaServer.scala controlledShutdown).

Watch notifications have no action of their own: ZooKeeper notifies the watcher in the same step
as the write that fires the watch, and the watcher's ZooKeeper client thread only enqueues a
controller event (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala, the
handlers at the end). What the event does happens later, in `ControllerProcessEvent`, which is
where Kafka's interleavings are.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, is_dataclass
from enum import Enum

from kcm.model.cluster import Budget


@dataclass(frozen=True, slots=True)
class BrokerStart:
    """Broker `broker` starts: new session, `/brokers/ids/<id>` with a new czxid, Startup event.
    (kafka@2.6.x:core/src/main/scala/kafka/server/KafkaServer.scala `startup`)"""

    broker: int


@dataclass(frozen=True, slots=True)
class BrokerCrash:
    """Broker `broker`'s process dies; its ZooKeeper session lives on until it expires."""

    broker: int


@dataclass(frozen=True, slots=True)
class ZkSessionExpire:
    """ZooKeeper expires `broker`'s session and deletes its ephemeral znodes."""

    broker: int


@dataclass(frozen=True, slots=True)
class BrokerNoticeExpiry:
    """Broker `broker`'s ZooKeeper client learns its session expired: `clearAndPut(Expire)`."""

    broker: int


@dataclass(frozen=True, slots=True)
class ControllerProcessEvent:
    """The controller event thread of `broker` processes the head of its queue, whole."""

    broker: int


@dataclass(frozen=True, slots=True)
class NetworkDeliver:
    """The send thread of controller `src` delivers its oldest request to broker `dst`, which applies it."""

    src: int
    dst: int


@dataclass(frozen=True, slots=True)
class LeaderShrinkIsr:
    """Partition leader `broker` drops lagging `follower` from `partition`'s ISR (conditional ZK write)."""

    broker: int
    partition: int
    follower: int


@dataclass(frozen=True, slots=True)
class LeaderExpandIsr:
    """Partition leader `broker` adds caught-up `follower` to `partition`'s ISR (conditional ZK write)."""

    broker: int
    partition: int
    follower: int


@dataclass(frozen=True, slots=True)
class BrokerFailLogDir:
    """The log directory holding `broker`'s replica of `partition` fails (an IOException on it):
    `ReplicaManager.handleLogDirFailure` stops the fetcher, marks the partition
    `HostedPartition.Offline` and writes `/log_dir_event_notification/log_dir_event_<seq>` naming
    the broker (`propagateLogDirEvent`); the broker stays up, its other directories serving
    (kafka@2.6.x:core/src/main/scala/kafka/server/ReplicaManager.scala `handleLogDirFailure`,
    lines 1689-1723; kafka@2.6.x:core/src/main/scala/kafka/zk/KafkaZkClient.scala
    `propagateLogDirEvent`). The model gives each replica its own directory and the broker at
    least one more, so no failure is the broker's last (which halts it: a crash here)."""

    broker: int
    partition: int


@dataclass(frozen=True, slots=True)
class BrokerRequestControlledShutdown:
    """Broker `broker` sends ControlledShutdownRequest(id, brokerEpoch) to the controller."""

    broker: int


@dataclass(frozen=True, slots=True)
class BrokerShutdown:
    """Broker `broker` ends its controlled shutdown: the process stops and closes its session."""

    broker: int


@dataclass(frozen=True, slots=True)
class AdminPreferredElection:
    """An admin creates `/admin/preferred_replica_election` for `partition`."""

    partition: int


@dataclass(frozen=True, slots=True)
class AdminReassign:
    """An admin creates `/admin/reassign_partitions` moving `partition` to `target`."""

    partition: int
    target: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AdminReassignPartitions:
    """An admin creates `/admin/reassign_partitions` naming several partitions at once, as the legacy
    `kafka-reassign-partitions.sh --execute` does with a plan of several partitions: `targets` is
    ((partition, target), ...) in partition order. The controller starts each, rewrites the znode
    without each one that completes or fails, and deletes it with the last
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    `processZkPartitionReassignment`, lines 1538-1560; `maybeRemoveFromZkReassignment`, lines 935-958)."""

    targets: tuple[tuple[int, tuple[int, ...]], ...]


@dataclass(frozen=True, slots=True)
class AdminDeleteTopic:
    """An admin creates `/admin/delete_topics/<topic>`."""

    topic: int


@dataclass(frozen=True, slots=True)
class AdminCreateTopic:
    """An admin creates topic `topic` (`/brokers/topics/<t>`) with its partitions on `replicas`, one
    replica list per partition, a placement Kafka's creation can choose (model/placement.py); `()`
    stands for the spread of `default_assignment`."""

    topic: int
    replicas: tuple = ()


@dataclass(frozen=True, slots=True)
class AdminAddPartitions:
    """An admin adds partitions to existing topic `topic`: `replicas` are the new partitions' replica
    lists, in partition order after the topic's last assigned one. `AdminZkClient.addPartitions`
    rewrites `/brokers/topics/<t>` with the old assignment and the new partitions
    (`writeTopicPartitionAssignment(..., isUpdate = true)`, a `setData` at any version), which fires
    the controller's `PartitionModificationsHandler`
    (kafka@2.6.x:core/src/main/scala/kafka/zk/AdminZkClient.scala `addPartitions`, lines 184-223).
    The CreatePartitions request refuses a topic with a partition being reassigned and brokers not
    registered (kafka@2.6.x:core/src/main/scala/kafka/server/AdminManager.scala `createPartitions`,
    lines 265-304); it does not look at `/admin/delete_topics`."""

    topic: int
    replicas: tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True)
class AdminElectLeaders:
    """An operator asks for a leader election of `partition` through the AdminClient
    (`kafka-leader-election.sh --bootstrap-server`, KIP-460): `unclean` for
    `ElectionType.UNCLEAN`, else `ElectionType.PREFERRED`. No znode: the ElectLeaders request
    reaches the broker named in `/controller` (the AdminClient sends it to the controller its
    metadata names), whose `KafkaApis.handleElectReplicaLeader` calls `controller.electLeaders`,
    which puts `ReplicaLeaderElection(Some(partitions), electionType, AdminClientTriggered,
    callback)` on that broker's controller event queue
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala `electLeaders`,
    lines 1697-1703; kafka@2.6.x:core/src/main/scala/kafka/server/ReplicaManager.scala
    `electLeaders`). A request to a broker that is down is lost (the client times out)."""

    partition: int
    unclean: bool = False


@dataclass(frozen=True, slots=True)
class AdminEnableUncleanElection:
    """An operator switches `unclean.leader.election.enable` on for `topic` at run time
    (`kafka-configs.sh --alter --entity-type topics --add-config
    unclean.leader.election.enable=true`): `/config/topics/<t>` is rewritten and a change
    notification created; each broker's config-change listener (`TopicConfigHandler.processConfigChanges`,
    kafka@2.6.x:core/src/main/scala/kafka/server/ConfigHandler.scala) calls
    `kafkaController.enableTopicUncleanLeaderElection(topic)`, which puts
    `TopicUncleanLeaderElectionEnable(topic)` on the queue of a broker whose controller module is
    active (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 197-201).
    The notification is taken in the same step as the write, as a watch notification is."""

    topic: int


@dataclass(frozen=True, slots=True)
class AdminMoveController:
    """An operator deletes `/controller` to force a controller re-election."""


@dataclass(frozen=True, slots=True)
class ZkLoseReply:
    """Controller `broker` processes the head of its queue, and ZooKeeper loses the reply to the
    event's first partition-state write (create or conditional set): the write is applied, the
    client sees CONNECTIONLOSS and `retryRequestsUntilConnected` sends it again
    (kafka@2.6.x:core/src/main/scala/kafka/zk/KafkaZkClient.scala `retryRequestsUntilConnected`,
    lines 1693-1721). The step is taken only if the event makes such a write."""

    broker: int


@dataclass(frozen=True, slots=True)
class ZkConnectionLoss:
    """Controller `broker`'s connection to ZooKeeper drops while it processes the head of its queue
    and comes back within the session timeout: the session and its watches survive (the client
    library re-registers them on reconnection, `ClientCnxn.primeConnection`'s SetWatches, and
    `ZooKeeperClient` ignores Disconnected and SyncConnected,
    kafka@2.6.x:core/src/main/scala/kafka/zookeeper/ZooKeeperClient.scala `ZooKeeperClientWatcher`);
    the requests in flight fail with CONNECTIONLOSS and `retryRequestsUntilConnected` resends them
    once connected. A request the server had not applied changes nothing; one it had applied is a
    lost reply, taken here on the event's first partition-state write only, as `ZkLoseReply`
    (2.6 pipelines a batch, up to `zookeeper.max.in.flight.requests` at once,
    kafka@2.6.x:core/src/main/scala/kafka/zookeeper/ZooKeeperClient.scala `handleRequests`; the
    model loses one: docs/model.md, "Lost ZooKeeper replies"). The step is taken only if the
    event makes such a write."""

    broker: int


@dataclass(frozen=True, slots=True)
class SchedulerAutoRebalance:
    """The active controller `broker`'s scheduler fires the auto leader rebalance task."""

    broker: int


class Role(Enum):
    """What an action kind is to the checkers: healing steps are unbounded and assumed weakly fair
    (what `settle` takes), faults and admin operations are bounded, each by its own budget and
    together by `max_faults` and `max_admin_ops`."""

    HEALING = "healing"
    FAULT = "fault"
    ADMIN = "admin"


#: The partial-order-reduction groups of model/checking/footprints.py, by family: one per
#: broker's event thread (`cpe`), per broker (`broker`), per channel (`deliver`), per partition
#: leader (`leader`), per broker's log directories (`logdir`), and one for the admin operations
#: (`admin`).
GROUPS = ("cpe", "broker", "deliver", "leader", "logdir", "admin")


@dataclass(frozen=True, slots=True)
class ActionKind:
    """One kind of action, declared once (see the module docstring).

    `budget` is None for a healing kind. `overlap` is the name an `overlapping` run gives the budget
    (ModelConfig.overlapping), `budget_field` the config field that bounds it. `counterpart` is
    the `kcm.impl.step_cluster.StepCluster` method that performs the kind in the implementation,
    given the action's fields (partitions and topics as the implementation names them)."""

    cls: type
    role: Role
    group: str
    counterpart: str
    budget: Budget | None = None
    overlap: str | None = None
    budget_field: str | None = None

    @property
    def name(self) -> str:
        return self.cls.__name__


def _healing(cls: type, group: str, counterpart: str) -> ActionKind:
    return ActionKind(cls, Role.HEALING, group, counterpart)


def _bounded(cls: type, role: Role, group: str, counterpart: str, budget: Budget, overlap: str) -> ActionKind:
    return ActionKind(cls, role, group, counterpart, budget, overlap, f"max_{budget.name.lower()}")


def _fault(cls: type, group: str, counterpart: str, budget: Budget, overlap: str) -> ActionKind:
    return _bounded(cls, Role.FAULT, group, counterpart, budget, overlap)


def _admin(cls: type, group: str, counterpart: str, budget: Budget, overlap: str) -> ActionKind:
    return _bounded(cls, Role.ADMIN, group, counterpart, budget, overlap)


#: Every kind of action, in the order coverage lists them: class, group, counterpart, and for a
#: bounded kind its budget and the budget's name in `overlapping` runs.
KINDS = (
    _healing(BrokerStart, "broker", "start_broker"),
    _fault(BrokerCrash, "broker", "crash_broker", Budget.BROKER_CRASHES, "broker_crash"),
    _fault(ZkSessionExpire, "broker", "expire_session", Budget.SESSION_EXPIRIES, "session_expiry"),
    _healing(BrokerNoticeExpiry, "broker", "notice_expiry"),
    _healing(ControllerProcessEvent, "cpe", "run_event"),
    _healing(NetworkDeliver, "deliver", "deliver"),
    _fault(LeaderShrinkIsr, "leader", "shrink_isr", Budget.LEADER_ISR_SHRINKS, "leader_isr_shrink"),
    _healing(LeaderExpandIsr, "leader", "expand_isr"),
    _admin(BrokerRequestControlledShutdown, "broker", "request_controlled_shutdown", Budget.CONTROLLED_SHUTDOWNS,
           "controlled_shutdown"),
    _healing(BrokerShutdown, "broker", "finish_shutdown"),
    _admin(AdminPreferredElection, "admin", "admin_preferred_election", Budget.PREFERRED_ELECTIONS,
           "preferred_election"),
    _admin(AdminReassign, "admin", "admin_reassign", Budget.REASSIGNMENTS, "reassignment"),
    _admin(AdminReassignPartitions, "admin", "admin_reassign_partitions", Budget.REASSIGNMENTS, "reassignment"),
    _admin(AdminDeleteTopic, "admin", "admin_delete_topic", Budget.TOPIC_DELETIONS, "topic_deletion"),
    _admin(AdminCreateTopic, "admin", "admin_create_topic", Budget.TOPIC_CREATIONS, "topic_creation"),
    _admin(AdminAddPartitions, "admin", "admin_add_partitions", Budget.PARTITION_ADDITIONS, "partition_addition"),
    _fault(AdminMoveController, "admin", "admin_move_controller", Budget.CONTROLLER_MOVES, "controller_move"),
    _admin(SchedulerAutoRebalance, "broker", "auto_rebalance", Budget.AUTO_REBALANCES, "auto_rebalance"),
    _fault(ZkLoseReply, "cpe", "run_event_losing_reply", Budget.LOST_ACKS, "lost_ack"),
    _fault(ZkConnectionLoss, "cpe", "run_event_dropping_connection", Budget.CONNECTION_LOSSES, "connection_loss"),
    _admin(AdminElectLeaders, "admin", "admin_elect_leaders", Budget.ELECT_LEADERS, "elect_leaders"),
    _admin(AdminEnableUncleanElection, "admin", "admin_enable_unclean_election", Budget.UNCLEAN_ELECTION_ENABLES,
           "unclean_election_enable"),
    _fault(BrokerFailLogDir, "logdir", "fail_log_dir", Budget.LOG_DIR_FAILURES, "log_dir_failure"),
)

#: Every action class, in `KINDS`' order.
ALL_ACTIONS = tuple(k.cls for k in KINDS)
#: class -> its `ActionKind`.
KIND_OF: dict[type, ActionKind] = {k.cls: k for k in KINDS}

Action = (BrokerStart | BrokerCrash | ZkSessionExpire | BrokerNoticeExpiry | ControllerProcessEvent
          | NetworkDeliver | LeaderShrinkIsr | LeaderExpandIsr | BrokerRequestControlledShutdown
          | BrokerShutdown | AdminPreferredElection | AdminReassign | AdminReassignPartitions | AdminDeleteTopic
          | AdminCreateTopic | AdminAddPartitions | AdminMoveController | AdminElectLeaders
          | AdminEnableUncleanElection | SchedulerAutoRebalance | ZkLoseReply | ZkConnectionLoss | BrokerFailLogDir)


def kinds_of(*, role: Role | None = None, group: str | None = None) -> tuple[ActionKind, ...]:
    """The kinds of one role, or of one POR group family, in `KINDS`' order."""
    return tuple(k for k in KINDS if (role is None or k.role is role) and (group is None or k.group == group))


def budgets_of(kinds: tuple[ActionKind, ...]) -> tuple[Budget, ...]:
    """The budgets `kinds` spend, in `Budget` order."""
    return tuple(b for b in Budget if any(k.budget is b for k in kinds))


def _by_budget() -> dict[Budget, ActionKind]:
    """Per budget, the first kind that spends it (kinds sharing a budget share its names)."""
    out: dict[Budget, ActionKind] = {}
    for k in KINDS:
        if k.budget is not None:
            first = out.setdefault(k.budget, k)
            if (first.role, first.overlap, first.budget_field) != (k.role, k.overlap, k.budget_field):
                raise AssertionError(f"{k.name} and {first.name} share budget {k.budget.name} but not its names")
    return {b: out[b] for b in Budget if b in out}


#: Per `Budget`, in its order: the kind that spends it (whose names the budget goes by).
BY_BUDGET = _by_budget()
#: The config field that bounds each budget.
BUDGET_FIELDS: dict[Budget, str] = {b: typing.cast(str, k.budget_field) for b, k in BY_BUDGET.items()}
#: The kinds an `overlapping` run may list, and the budget field each stands for, in `Budget` order.
OVERLAP_KINDS: dict[str, str] = {typing.cast(str, k.overlap): BUDGET_FIELDS[b] for b, k in BY_BUDGET.items()}
#: The budgets of faults and of admin operations (`max_faults`, `max_admin_ops`).
FAULT_BUDGETS = frozenset(budgets_of(kinds_of(role=Role.FAULT)))
ADMIN_BUDGETS = frozenset(budgets_of(kinds_of(role=Role.ADMIN)))
#: The budgets of the admin group's operations (`AdminMoveController`, a fault, among them).
ADMIN_GROUP_BUDGETS = budgets_of(kinds_of(group="admin"))


def budget_of(kind: type) -> Budget:
    """The budget of a bounded kind."""
    budget = KIND_OF[kind].budget
    if budget is None:
        raise ValueError(f"{kind.__name__} is healing: it has no budget")
    return budget


def _check() -> None:
    """The declaration is complete and consistent; raises AssertionError naming what is wrong."""
    declared = {v for v in globals().values()
                if isinstance(v, type) and v.__module__ == __name__ and is_dataclass(v) and v is not ActionKind}
    for what, classes in (("the action classes", declared), ("the Action union", set(typing.get_args(Action)))):
        if classes != set(ALL_ACTIONS) or len(KIND_OF) != len(KINDS):
            differ = sorted(c.__name__ for c in classes ^ set(ALL_ACTIONS))
            raise AssertionError(f"KINDS and {what} differ: {differ}")
    missing = set(Budget) - set(BY_BUDGET)
    if missing:
        raise AssertionError(f"no action kind spends {sorted(b.name for b in missing)}")
    for k in KINDS:
        if k.group not in GROUPS:
            raise AssertionError(f"{k.name}: unknown group {k.group!r}")
        if (k.role is Role.HEALING) != (k.budget is None):
            raise AssertionError(f"{k.name}: a healing kind has no budget, every other one has")


_check()
