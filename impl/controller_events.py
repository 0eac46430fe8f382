"""The controller events: what ZooKeeper watches, brokers and timers ask the controller to do.

kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala (the `ControllerEvent` case
classes at its end) and ControllerState.scala. ZooKeeper handlers, request callbacks and the
scheduler only *create* events; `KafkaController.process` runs them, one at a time, on the event
thread (`ControllerEventManager`). Events that carry a callback answer it from `preempt` when the
queue is cleared before they run (KAFKA-8294, in 2.3.0).

The set is the model's (`kcm.model.cluster.EventKind`), plus `ShutdownEventThread`. Kafka's events
for features outside the model are not implemented: log-dir failures (LogDirEventNotification,
LeaderAndIsrResponseReceived), broker endpoint changes (BrokerModifications), partition additions
(PartitionModifications), the reassignment APIs (ApiPartitionReassignment, ListPartitionReassignments)
and the cluster-wide unclean-election switch (UncleanLeaderElectionEnable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kcm.impl.requests import ElectionType, Errors
from kcm.impl.zk_data import TopicPartition


class ControllerEvent:
    """Base class; `name` is the event's name in Kafka and in `kcm.model.cluster.EventKind`."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return self.name


class Startup(ControllerEvent):
    __slots__ = ()


class Reelect(ControllerEvent):
    __slots__ = ()


class ControllerChange(ControllerEvent):
    __slots__ = ()


class Expire(ControllerEvent):
    __slots__ = ()


class RegisterBrokerAndReelect(ControllerEvent):
    __slots__ = ()


class BrokerChange(ControllerEvent):
    __slots__ = ()


class IsrChangeNotification(ControllerEvent):
    __slots__ = ()


class LogDirEventNotification(ControllerEvent):
    __slots__ = ()


class AutoPreferredReplicaLeaderElection(ControllerEvent):
    __slots__ = ()


class ZkPartitionReassignment(ControllerEvent):
    __slots__ = ()


class TopicDeletion(ControllerEvent):
    __slots__ = ()


class TopicChange(ControllerEvent):
    __slots__ = ()


class ShutdownEventThread(ControllerEvent):
    __slots__ = ()


@dataclass(frozen=True, repr=False)
class ReplicaLeaderElection(ControllerEvent):
    """`ReplicaLeaderElection(partitions, electionType, electionTrigger, callback)`: with no
    partitions, the ZooKeeper-triggered preferred election of `/admin/preferred_replica_election`
    (`ReplicaLeaderElection(None, PREFERRED, ZkTriggered)`); with partitions, an AdminClient's
    ElectLeaders request (`AdminClientTriggered`), whose `callback` gets, per partition, the new
    leader or the error."""

    partitions: frozenset[TopicPartition] | None = None
    election_type: ElectionType = ElectionType.PREFERRED
    callback: Callable[[dict[TopicPartition, int | Errors]], None] | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        if self.partitions is None:
            return "ReplicaLeaderElection"
        return f"ReplicaLeaderElection({sorted(map(str, self.partitions))}, {self.election_type.name})"


@dataclass(frozen=True, repr=False)
class TopicUncleanLeaderElectionEnable(ControllerEvent):
    """Unclean leader election switched on for `topic` at run time (a dynamic topic config)."""

    topic: str

    def __repr__(self) -> str:
        return f"TopicUncleanLeaderElectionEnable({self.topic})"


@dataclass(frozen=True, repr=False)
class ControlledShutdown(ControllerEvent):
    """Broker `id` (incarnation `broker_epoch`) asks to shut down; `callback` gets the partitions
    it still leads, or the exception that refused the request."""

    id: int
    broker_epoch: int
    callback: Callable[[frozenset[TopicPartition] | Exception], None] = field(compare=False)

    def __repr__(self) -> str:
        return f"ControlledShutdown({self.id})"


@dataclass(frozen=True, repr=False)
class PartitionReassignmentIsrChange(ControllerEvent):
    partition: TopicPartition

    def __repr__(self) -> str:
        return f"PartitionReassignmentIsrChange({self.partition})"


@dataclass(frozen=True, repr=False)
class PartitionModifications(ControllerEvent):
    """`/brokers/topics/<topic>` changed: partitions may have been added."""

    topic: str

    def __repr__(self) -> str:
        return f"PartitionModifications({self.topic})"


@dataclass(frozen=True, repr=False)
class LeaderAndIsrResponseReceived(ControllerEvent):
    """The answer of broker `broker_id` to a LeaderAndIsr: its top-level error and per-partition errors."""

    broker_id: int
    error: Errors
    partition_errors: tuple[tuple[TopicPartition, Errors], ...]

    def __repr__(self) -> str:
        return f"LeaderAndIsrResponseReceived({self.broker_id}, {self.error.name})"


@dataclass(frozen=True, repr=False)
class TopicDeletionStopReplicaResponseReceived(ControllerEvent):
    replica_id: int
    request_error: Errors
    partition_errors: tuple[tuple[TopicPartition, Errors], ...]

    def __repr__(self) -> str:
        return f"TopicDeletionStopReplicaResponseReceived({self.replica_id}, {self.request_error.name})"
