"""`ControllerBrokerRequestBatch`: the requests one state change produces, collected, then sent together.

kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerChannelManager.scala
(`AbstractControllerBrokerRequestBatch`). Every state-machine operation is
`new_batch() -> add_* ... -> send_requests_to_brokers(epoch)`; the batch is what the step computed
(the `records` of a KRaft `ControllerResult`) and `send_requests_to_brokers` is its apply step.

* `new_batch` raises `IllegalStateException` if the previous batch was not sent: a state change that
  forgot to send would otherwise leak requests into the next one (style rule 8). `clear()` drops a
  batch abandoned by an exception (Kafka's `handleIllegalState`, and `KafkaController.process`
  here).
* `add_leader_and_isr_request_for_brokers` also adds UpdateMetadata for the partition to every
  live-or-shutting-down broker, and keeps `is_new` once set for a partition (`alreadyNew`).
* `add_stop_replica_request_for_brokers` stamps the partition's leader epoch, or -2 while its topic
  is queued for deletion (KIP-570).
* `send_requests_to_brokers` sends, in this order, LeaderAndIsr, then UpdateMetadata, then
  StopReplica, each only to live-or-shutting-down brokers and stamped with the receiver's broker
  epoch; broker ids below 0 (no leader) are never recipients. A StopReplica that deletes partitions
  carries the deletion callback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kcm.impl.channel_manager import ControllerChannelManager
from kcm.impl.controller_context import ControllerContext
from kcm.impl.kafka_exception import KafkaException
from kcm.impl.requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from kcm.impl.zk_data import LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from kcm.model.election import EPOCH_DURING_DELETE, LEADER_DURING_DELETE, NO_EPOCH


class IllegalStateException(KafkaException):
    """Kafka's `IllegalStateException` from `newBatch`."""


class ControllerBrokerRequestBatch:
    def __init__(self, controller_id: int, context: ControllerContext, channel_manager: ControllerChannelManager,
                 stop_replica_callback: Callable[[int, StopReplicaRequest], Callable | None],
                 before_send: Callable[[], None],
                 leader_and_isr_callback: Callable[[int], Callable | None] = lambda broker_id: None) -> None:
        self.controller_id = controller_id
        self._context = context
        self._channel_manager = channel_manager
        #: Builds the response callback of a StopReplica for a broker (None: no callback).
        self._stop_replica_callback = stop_replica_callback
        #: Called before a non-empty batch is sent (the controller notes it if it is not active).
        self._before_send = before_send
        #: Builds the response callback of a LeaderAndIsr for a broker (`LeaderAndIsrResponseReceived`).
        self._leader_and_isr_callback = leader_and_isr_callback
        self.leader_and_isr_request_map: dict[int, dict[TopicPartition, LeaderAndIsrPartitionState]] = {}
        self.stop_replica_request_map: dict[int, dict[TopicPartition, StopReplicaPartitionState]] = {}
        self.update_metadata_request_broker_set: set[int] = set()
        self.update_metadata_request_partition_info_map: dict[TopicPartition, UpdateMetadataPartitionState] = {}

    def is_empty(self) -> bool:
        """No request to send (UpdateMetadata partition infos without recipients send nothing)."""
        return not (self.leader_and_isr_request_map or self.stop_replica_request_map
                    or self.update_metadata_request_broker_set)

    def new_batch(self) -> None:
        if self.leader_and_isr_request_map:
            raise IllegalStateException("Controller to broker state change requests batch is not empty while creating "
                                        f"a new one. Some LeaderAndIsr state changes {self.leader_and_isr_request_map} "
                                        "might be lost")
        if self.stop_replica_request_map:
            raise IllegalStateException("Controller to broker state change requests batch is not empty while "
                                        "creating a new one. Some StopReplica state changes "
                                        f"{self.stop_replica_request_map} might be lost")
        if self.update_metadata_request_broker_set:
            raise IllegalStateException("Controller to broker state change requests batch is not empty while "
                                        "creating a new one. Some UpdateMetadata state changes to brokers "
                                        f"{self.update_metadata_request_broker_set} with partition info "
                                        f"{self.update_metadata_request_partition_info_map} might be lost")

    def clear(self) -> None:
        self.leader_and_isr_request_map.clear()
        self.stop_replica_request_map.clear()
        self.update_metadata_request_broker_set.clear()
        self.update_metadata_request_partition_info_map.clear()

    def add_leader_and_isr_request_for_brokers(self, broker_ids: Iterable[int], tp: TopicPartition,
                                               info: LeaderIsrAndControllerEpoch, assignment: ReplicaAssignment,
                                               is_new: bool) -> None:
        lai = info.leader_and_isr
        for broker_id in broker_ids:
            if broker_id < 0:
                continue
            per_broker = self.leader_and_isr_request_map.setdefault(broker_id, {})
            already_new = tp in per_broker and per_broker[tp].is_new
            per_broker[tp] = LeaderAndIsrPartitionState(
                tp, info.controller_epoch, lai.leader, lai.leader_epoch, tuple(lai.isr), lai.zk_version,
                assignment.replicas, assignment.adding_replicas, assignment.removing_replicas, is_new or already_new)
        self.add_update_metadata_request_for_brokers(self._context.live_or_shutting_down_broker_ids, {tp})

    def add_stop_replica_request_for_brokers(self, broker_ids: Iterable[int], tp: TopicPartition,
                                             delete_partition: bool) -> None:
        # A topic queued for deletion is stopped whatever its leader epoch (KIP-570).
        if self._context.is_topic_queued_up_for_deletion(tp.topic):
            leader_epoch = EPOCH_DURING_DELETE
        else:
            info = self._context.partition_leadership_info.get(tp)
            leader_epoch = info.leader_and_isr.leader_epoch if info is not None else NO_EPOCH
        for broker_id in broker_ids:
            if broker_id < 0:
                continue
            per_broker = self.stop_replica_request_map.setdefault(broker_id, {})
            already_delete = tp in per_broker and per_broker[tp].delete_partition
            per_broker[tp] = StopReplicaPartitionState(tp, leader_epoch, delete_partition or already_delete)

    def add_update_metadata_request_for_brokers(self, broker_ids: Iterable[int],
                                                partitions: Iterable[TopicPartition] = ()) -> None:
        self.update_metadata_request_broker_set.update(b for b in broker_ids if b >= 0)
        ctx = self._context
        for tp in partitions:
            info = ctx.partition_leadership_info.get(tp)
            if info is None:
                continue   # "Leader not yet assigned for partition ... Skip sending UpdateMetadataRequest"
            lai = info.leader_and_isr
            replicas = ctx.partition_replica_assignment(tp)
            being_deleted = ctx.is_topic_queued_up_for_deletion(tp.topic)
            leader, leader_epoch = (LEADER_DURING_DELETE, EPOCH_DURING_DELETE) if being_deleted else (lai.leader,
                                                                                                     lai.leader_epoch)
            self.update_metadata_request_partition_info_map[tp] = UpdateMetadataPartitionState(
                tp, info.controller_epoch, leader, leader_epoch, tuple(lai.isr), lai.zk_version, replicas,
                tuple(r for r in replicas if not ctx.is_replica_online(r, tp)))

    def send_requests_to_brokers(self, controller_epoch: int) -> None:
        if self.is_empty():
            self.clear()
            return
        self._before_send()
        try:
            self._send_leader_and_isr_requests(controller_epoch)
            self._send_update_metadata_requests(controller_epoch)
            self._send_stop_replica_requests(controller_epoch)
        finally:
            self.clear()

    def _send_leader_and_isr_requests(self, controller_epoch: int) -> None:
        live = self._context.live_or_shutting_down_broker_ids
        for broker_id in sorted(self.leader_and_isr_request_map):
            if broker_id not in live:
                continue
            states = self.leader_and_isr_request_map[broker_id]
            leaders = tuple(sorted({s.leader for s in states.values()} & live))
            request = LeaderAndIsrRequest(self.controller_id, controller_epoch,
                                          self._context.live_broker_epoch(broker_id),
                                          tuple(states[tp] for tp in sorted(states)), leaders)
            self._channel_manager.send_request(broker_id, request, self._leader_and_isr_callback(broker_id))

    def _send_update_metadata_requests(self, controller_epoch: int) -> None:
        live = self._context.live_or_shutting_down_broker_ids
        states = tuple(self.update_metadata_request_partition_info_map[tp]
                       for tp in sorted(self.update_metadata_request_partition_info_map))
        for broker_id in sorted(self.update_metadata_request_broker_set & live):
            request = UpdateMetadataRequest(self.controller_id, controller_epoch,
                                            self._context.live_broker_epoch(broker_id), states, tuple(sorted(live)))
            self._channel_manager.send_request(broker_id, request)

    def _send_stop_replica_requests(self, controller_epoch: int) -> None:
        live = self._context.live_or_shutting_down_broker_ids
        for broker_id in sorted(self.stop_replica_request_map):
            if broker_id not in live:
                continue
            states = self.stop_replica_request_map[broker_id]
            request = StopReplicaRequest(self.controller_id, controller_epoch,
                                         self._context.live_broker_epoch(broker_id),
                                         tuple(states[tp] for tp in sorted(states)))
            self._channel_manager.send_request(broker_id, request, self._stop_replica_callback(broker_id, request))
