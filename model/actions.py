"""The model's actions, named Actor+Verb as in TLA+ specs; each is one atomic step of the cluster.

Healing actions (never bounded): `BrokerStart` (a restart), `ZkSessionExpire` of a dead broker's
session, `BrokerNoticeExpiry`, `ControllerProcessEvent`, `NetworkDeliver`, `LeaderExpandIsr`,
`BrokerShutdown` (finishing a controlled shutdown). Faults and admin operations, each bounded by
the config: `BrokerCrash`, `ZkSessionExpire` of a live broker, `LeaderShrinkIsr`,
`BrokerRequestControlledShutdown`, `AdminPreferredElection`, `AdminReassign`,
`AdminReassignPartitions`, `AdminDeleteTopic`, `AdminCreateTopic`, `AdminMoveController`,
`SchedulerAutoRebalance`, `ZkLoseReply`, `ZkConnectionLoss`.

Watch notifications have no action of their own: ZooKeeper notifies the watcher in the same step
as the write that fires the watch, and the watcher's ZooKeeper client thread only enqueues a
controller event (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala, the
handlers at the end). What the event does happens later, in `ControllerProcessEvent`, which is
where Kafka's interleavings are.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    re-registers them on reconnection, and `ZooKeeperClient` ignores Disconnected and SyncConnected,
    kafka@2.6.x:core/src/main/scala/kafka/zookeeper/ZooKeeperClient.scala `ZooKeeperClientWatcher`);
    the request in flight fails with CONNECTIONLOSS and `retryRequestsUntilConnected` resends it
    once connected. A request the server had not applied changes nothing; one it had applied is a
    lost reply, taken here on the event's first partition-state write, as `ZkLoseReply` (requests
    of a batch are sent one after another, so one request is in flight). The step is taken only
    if the event makes such a write."""

    broker: int


@dataclass(frozen=True, slots=True)
class SchedulerAutoRebalance:
    """The active controller `broker`'s scheduler fires the auto leader rebalance task."""

    broker: int


Action = (BrokerStart | BrokerCrash | ZkSessionExpire | BrokerNoticeExpiry | ControllerProcessEvent
          | NetworkDeliver | LeaderShrinkIsr | LeaderExpandIsr | BrokerRequestControlledShutdown
          | BrokerShutdown | AdminPreferredElection | AdminReassign | AdminDeleteTopic
          | AdminCreateTopic | AdminMoveController | SchedulerAutoRebalance)

ALL_ACTIONS = (BrokerStart, BrokerCrash, ZkSessionExpire, BrokerNoticeExpiry, ControllerProcessEvent,
               NetworkDeliver, LeaderShrinkIsr, LeaderExpandIsr, BrokerRequestControlledShutdown,
               BrokerShutdown, AdminPreferredElection, AdminReassign, AdminDeleteTopic, AdminCreateTopic, AdminMoveController,
               SchedulerAutoRebalance, ZkLoseReply, ZkConnectionLoss)
