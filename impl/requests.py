"""The controller-to-broker requests and their responses, and the error codes the broker answers with.

kafka@2.6.x:clients/src/main/java/org/apache/kafka/common/requests/{LeaderAndIsr,UpdateMetadata,
StopReplica,ControlledShutdown}Request.java and their `*PartitionState` message classes, reduced to
the fields the controller and the replica manager read:

* Every control request (`AbstractControlRequest`) carries the sender's id, its controller epoch
  and the receiver's broker epoch as the sender knew it (KIP-380).
* `LeaderAndIsrRequest`: per partition the leader, leader epoch, ISR, the state znode's zkVersion,
  the full replica list (with the KIP-455 adding/removing replicas), `is_new`, and the epoch of the
  controller that made the leader decision (`controller_epoch`, which a leader keeps and writes
  back with its ISR changes).
* `UpdateMetadataRequest`: partition states for the metadata cache and the live brokers.
* `StopReplicaRequest` (v3, KIP-570): per partition the leader epoch (-2 while the topic is being
  deleted, -1 if unknown) and whether to delete it.
* `ControlledShutdownRequest(broker_id, broker_epoch)`, answered with the partitions the broker
  still leads.

Requests are immutable values; `Errors` are the codes of kafka@2.6.x:clients/.../protocol/Errors.java
that this code produces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from kcm.impl.zk_data import TopicPartition


class Errors(Enum):
    NONE = "NONE"
    STALE_CONTROLLER_EPOCH = "STALE_CONTROLLER_EPOCH"
    STALE_BROKER_EPOCH = "STALE_BROKER_EPOCH"
    FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
    KAFKA_STORAGE_ERROR = "KAFKA_STORAGE_ERROR"
    NOT_CONTROLLER = "NOT_CONTROLLER"
    BROKER_NOT_AVAILABLE = "BROKER_NOT_AVAILABLE"
    UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"
    # the per-partition answers of ElectLeaders (KIP-460)
    ELECTION_NOT_NEEDED = "ELECTION_NOT_NEEDED"
    PREFERRED_LEADER_NOT_AVAILABLE = "PREFERRED_LEADER_NOT_AVAILABLE"
    ELIGIBLE_LEADERS_NOT_AVAILABLE = "ELIGIBLE_LEADERS_NOT_AVAILABLE"
    INVALID_TOPIC_EXCEPTION = "INVALID_TOPIC_EXCEPTION"
    UNKNOWN_TOPIC_OR_PARTITION = "UNKNOWN_TOPIC_OR_PARTITION"


class ElectionType(Enum):
    """`org.apache.kafka.common.ElectionType`: what an ElectLeaders request asks for."""

    PREFERRED = 0
    UNCLEAN = 1


class ApiKeys(Enum):
    LEADER_AND_ISR = "LeaderAndIsr"
    UPDATE_METADATA = "UpdateMetadata"
    STOP_REPLICA = "StopReplica"
    CONTROLLED_SHUTDOWN = "ControlledShutdown"


@dataclass(frozen=True, slots=True)
class LeaderAndIsrPartitionState:
    topic_partition: TopicPartition
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    is_new: bool = False


@dataclass(frozen=True, slots=True)
class UpdateMetadataPartitionState:
    topic_partition: TopicPartition
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class StopReplicaPartitionState:
    topic_partition: TopicPartition
    leader_epoch: int
    delete_partition: bool


@dataclass(frozen=True, slots=True)
class LeaderAndIsrRequest:
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple[LeaderAndIsrPartitionState, ...]
    live_leaders: tuple[int, ...] = ()
    api_key: ApiKeys = field(default=ApiKeys.LEADER_AND_ISR, init=False)


@dataclass(frozen=True, slots=True)
class UpdateMetadataRequest:
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple[UpdateMetadataPartitionState, ...]
    live_brokers: tuple[int, ...]
    api_key: ApiKeys = field(default=ApiKeys.UPDATE_METADATA, init=False)

    def merged_with(self, later: UpdateMetadataRequest) -> UpdateMetadataRequest:
        """The one request whose application equals applying `self`, then `later` (same stamps).

        A broker applies UpdateMetadata by overwriting the partitions it names and replacing the
        live broker list, so the partitions of both, `later`'s winning, and `later`'s brokers."""
        states = {s.topic_partition: s for s in self.partition_states}
        states.update((s.topic_partition, s) for s in later.partition_states)
        return UpdateMetadataRequest(later.controller_id, later.controller_epoch, later.broker_epoch,
                                     tuple(states[tp] for tp in sorted(states)), later.live_brokers)


@dataclass(frozen=True, slots=True)
class StopReplicaRequest:
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple[StopReplicaPartitionState, ...]
    api_key: ApiKeys = field(default=ApiKeys.STOP_REPLICA, init=False)


ControlRequest = LeaderAndIsrRequest | UpdateMetadataRequest | StopReplicaRequest


@dataclass(frozen=True, slots=True)
class LeaderAndIsrResponse:
    error: Errors
    partition_errors: tuple[tuple[TopicPartition, Errors], ...] = ()


@dataclass(frozen=True, slots=True)
class UpdateMetadataResponse:
    error: Errors


@dataclass(frozen=True, slots=True)
class StopReplicaResponse:
    error: Errors
    partition_errors: tuple[tuple[TopicPartition, Errors], ...] = ()


ControlResponse = LeaderAndIsrResponse | UpdateMetadataResponse | StopReplicaResponse


@dataclass(frozen=True, slots=True)
class ControlledShutdownRequest:
    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class ControlledShutdownResponse:
    error: Errors
    partitions_remaining: frozenset[TopicPartition] = frozenset()
