"""Partition reassignment through /admin/reassign_partitions: the controller's part, in Kafka 2.6's phases.

kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala (`onPartitionReassignment` and
its helpers; KIP-455), mixed into `KafkaController`. RS = the partition's replicas, ORS = the
original ones, TRS = the target, AR = adding (TRS - ORS), RR = removing (ORS - TRS). `/brokers/topics/<t>`
persists RS, AR and RR, so that a new controller can resume a reassignment.

    U1-U2  ZooKeeper, then memory: RS = TRS + ORS, AR, RR; register the partition's
           PartitionReassignmentIsrChangeHandler (whose watch the next read of the state znode arms)
    A1-A2  (TRS not yet all in the ISR) bump the leader epoch; LeaderAndIsr to RS (isNew = false);
           AR -> NewReplica
    B1-B8  (TRS all in the ISR) AR -> Online; RS = TRS in memory; move the leader into TRS (or bump
           the epoch); RR -> Offline -> DeletionStarted -> DeletionSuccessful -> NonExistent;
           ZooKeeper RS = TRS; unregister the handler and remove the partition from
           /admin/reassign_partitions; UpdateMetadata

Completion is noticed through the state znode's data watch (PartitionReassignmentIsrChange) when a
leader writes an ISR that contains TRS.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from kcm.impl import controller_events as ev
from kcm.impl.controller_context import (
    PartitionAndReplica,
    is_being_reassigned,
    reassign_to,
    target_replicas,
)
from kcm.impl.controller_zk_handlers import PartitionReassignmentIsrChangeHandler
from kcm.impl.kafka_exception import KafkaException
from kcm.impl.kafka_zk_client import ControllerMovedException
from kcm.impl.logs import get_logger
from kcm.impl.partition_state_machine import PartitionLeaderElectionStrategy as Strategy
from kcm.impl.zk.protocol import NoNodeError
from kcm.impl.zk_data import (
    LeaderIsrAndControllerEpoch,
    ReassignPartitionsZNode,
    ReplicaAssignment,
    TopicPartition,
    TopicPartitionStateZNode,
)
from kcm.model.states import PartitionState as P
from kcm.model.states import ReplicaState as R

if TYPE_CHECKING:
    from kcm.impl.controller_context import ControllerContext
    from kcm.impl.controller_event_manager import ControllerEventManager
    from kcm.impl.controller_zk_client import ControllerZkClient
    from kcm.impl.controller_zk_handlers import PartitionReassignmentHandler
    from kcm.impl.partition_state_machine import PartitionStateMachine
    from kcm.impl.replica_state_machine import ReplicaStateMachine
    from kcm.impl.request_batch import ControllerBrokerRequestBatch
    from kcm.impl.timeline import Timeline
    from kcm.impl.topic_deletion_manager import TopicDeletionManager

log = get_logger(__name__)


class _Controller(Protocol):
    """What the reassignment handlers use of `KafkaController`, whose methods they are in Kafka."""

    broker_id: int
    context: ControllerContext
    event_manager: ControllerEventManager
    replica_state_machine: ReplicaStateMachine
    partition_state_machine: PartitionStateMachine
    topic_deletion_manager: TopicDeletionManager
    broker_request_batch: ControllerBrokerRequestBatch
    partition_reassignment_handler: PartitionReassignmentHandler
    partition_reassignment_isr_change_handlers: dict[TopicPartition, PartitionReassignmentIsrChangeHandler]
    _zk: ControllerZkClient
    _timeline: Timeline
    _watch_like_kafka: bool

    @property
    def is_active(self) -> bool: ...
    def send_update_metadata_request(self, brokers: Iterable[int], partitions: Iterable[TopicPartition]) -> None: ...


# The mixin's base: the Protocol for the type checker (so that `self` has the controller's fields),
# `object` at run time.
if TYPE_CHECKING:
    _ControllerBase = _Controller
else:
    _ControllerBase = object


class ReassignmentMixin(_ControllerBase):
    """The reassignment handlers of `KafkaController` (which provides the attributes used here)."""

    @staticmethod
    def _target_of(assignment: ReplicaAssignment) -> tuple[int, ...]:
        return target_replicas(assignment)

    # ---- events --------------------------------------------------------------------------------

    def _process_zk_partition_reassignment_event(self, _: ev.ZkPartitionReassignment) -> None:
        self._process_zk_partition_reassignment()

    def _process_zk_partition_reassignment(self) -> set[TopicPartition]:
        """`processZkPartitionReassignment`: start every reassignment /admin/reassign_partitions asks
        for (checking existence re-arms its watch); drop the ones that fail from the znode."""
        if not (self.is_active
                and self._zk.register_znode_change_handler_and_check_existence(self.partition_reassignment_handler)):
            return set()
        ctx = self.context
        failed: set[TopicPartition] = set()
        started: set[TopicPartition] = set()
        for tp, target in sorted(self._zk.get_partition_reassignment().items()):
            if self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic):
                failed.add(tp)   # UNKNOWN_TOPIC_OR_PARTITION: the topic is being deleted
                continue
            if not ctx.partition_replica_assignment(tp):
                failed.add(tp)   # UNKNOWN_TOPIC_OR_PARTITION: the partition does not exist
                continue
            reassignment = reassign_to(ctx.partition_full_replica_assignment(tp), target)
            try:
                self._on_partition_reassignment(tp, reassignment)
                started.add(tp)
            except ControllerMovedException:
                raise
            except KafkaException as error:
                log.error("Error completing reassignment of partition %s: %r", tp, error)
                failed.add(tp)   # UNKNOWN_SERVER_ERROR
        if failed:
            self._maybe_remove_from_zk_reassignment(lambda tp, replicas: tp in failed)
        return started

    def _process_partition_reassignment_isr_change(self, event: ev.PartitionReassignmentIsrChange) -> None:
        if not self.is_active:
            return
        tp = event.partition
        if tp in self.context.partitions_being_reassigned:
            if not self._watch_like_kafka:
                # The model (re-)arms the partition's watch here, before reading; its handler may
                # not be registered yet when the reassignment was loaded at failover.
                self._register_partition_reassignment_isr_change_handler(tp)
                self._zk.watch_topic_partition_state(tp)
            self._maybe_complete_reassignment(tp)

    def _initialize_partition_reassignments(self) -> None:
        """At failover: reassignments from /admin/reassign_partitions, then those in progress in
        /brokers/topics/<t> that the znode did not name."""
        resumed = self._process_zk_partition_reassignment()
        # kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
        # `initializePartitionReassignments`, lines 774-781
        self._maybe_resume_reassignments(lambda tp, _: tp not in resumed)

    def _maybe_resume_reassignments(self, should_resume: Callable[[TopicPartition, ReplicaAssignment], bool]) -> None:
        ctx = self.context
        for tp in sorted(ctx.partitions_being_reassigned):
            if tp not in ctx.partitions_being_reassigned:
                continue   # completed by an earlier one in this loop
            assignment = ctx.partition_full_replica_assignment(tp)
            if should_resume(tp, assignment):
                self._on_partition_reassignment(tp, assignment)

    def _maybe_complete_reassignment(self, tp: TopicPartition) -> None:
        assignment = self.context.partition_full_replica_assignment(tp)
        if self._is_reassignment_complete(tp, assignment):
            self._on_partition_reassignment(tp, assignment)

    # ---- the phases ----------------------------------------------------------------------------

    def _on_partition_reassignment(self, tp: TopicPartition, reassignment: ReplicaAssignment) -> None:
        ctx = self.context
        self.topic_deletion_manager.mark_topic_ineligible_for_deletion({tp.topic}, "topic reassignment in progress")
        self._update_current_reassignment(tp, reassignment)
        if not self._is_reassignment_complete(tp, reassignment):
            self._update_leader_epoch_and_send_request(tp, reassignment)                          # A1
            for replica in reassignment.adding_replicas:                                          # A2
                self.replica_state_machine.handle_state_changes([PartitionAndReplica(tp, replica)], R.NewReplica)
        else:
            self.replica_state_machine.handle_state_changes(                                      # B1
                [PartitionAndReplica(tp, r) for r in reassignment.adding_replicas], R.OnlineReplica)
            completed = ReplicaAssignment(target_replicas(reassignment))
            ctx.update_partition_full_replica_assignment(tp, completed)                           # B2
            self._move_reassigned_partition_leader_if_required(tp, completed)                    # B3
            self._stop_removed_replicas_of_reassigned_partition(tp, reassignment.removing_replicas)  # B4-B5
            self._update_replica_assignment_for_partition(tp, completed)                         # B6
            self._remove_partition_from_reassigning_partitions(tp, completed)                    # B7
            self.send_update_metadata_request(ctx.live_or_shutting_down_broker_ids, [tp])        # B8
            self.topic_deletion_manager.resume_deletion_for_topics({tp.topic})

    def _update_current_reassignment(self, tp: TopicPartition, reassignment: ReplicaAssignment) -> None:
        ctx = self.context
        current = ctx.partition_full_replica_assignment(tp)
        if current != reassignment:
            self._update_replica_assignment_for_partition(tp, reassignment)                      # U1
            ctx.update_partition_full_replica_assignment(tp, reassignment)                       # U2
            unneeded = [r for r in current.replicas if r not in reassignment.replicas]            # U3
            if unneeded:
                self._stop_removed_replicas_of_reassigned_partition(tp, unneeded)
        self._register_partition_reassignment_isr_change_handler(tp)
        if not self._watch_like_kafka:
            self._zk.watch_topic_partition_state(tp)   # the model arms the watch here
        ctx.partitions_being_reassigned.add(tp)

    def _is_reassignment_complete(self, tp: TopicPartition, assignment: ReplicaAssignment) -> bool:
        if not is_being_reassigned(assignment):
            return True
        state = self._zk.get_topic_partition_states([tp], watch=self._watch_like_kafka).get(tp)
        return state is not None and set(target_replicas(assignment)) <= set(state.leader_and_isr.isr)

    def _update_leader_epoch_and_send_request(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        info = self._update_leader_epoch(tp)
        batch = self.broker_request_batch
        batch.new_batch()
        # to every replica of RS with isNew = false (kafka@2.6.x:core/src/main/scala/kafka/controller/
        # KafkaController.scala `updateLeaderEpochAndSendRequest`, lines 879-882)
        batch.add_leader_and_isr_request_for_brokers(assignment.replicas, tp, info, assignment, is_new=False)
        batch.send_requests_to_brokers(self.context.epoch)

    def _update_leader_epoch(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch:
        """`updateLeaderEpoch`: the same leader and ISR at leader epoch + 1 (retrying BADVERSION)."""
        ctx = self.context
        while True:
            state = self._zk.get_topic_partition_states([tp], watch=self._watch_like_kafka).get(tp)
            if state is None:
                raise IllegalReassignmentState(f"Cannot update leader epoch for partition {tp} as leaderAndIsr "
                                               "path is empty. This could mean we somehow tried to reassign a "
                                               "partition that doesn't exist")
            if state.controller_epoch > ctx.epoch:
                raise IllegalReassignmentState("Leader and isr path written by another controller. This probably "
                                               f"means the current controller with epoch {ctx.epoch} went through "
                                               "a soft failure and another controller was elected with epoch "
                                               f"{state.controller_epoch}. Aborting state change by this controller")
            lai = state.leader_and_isr
            result = self._zk.update_leader_and_isr({tp: lai.new_leader_and_isr(lai.leader, lai.isr)}, ctx.epoch,
                                                    ctx.epoch_zk_version)
            outcome = result.finished_partitions.get(tp)
            if outcome is None:
                continue   # BADVERSION: re-read and retry
            if isinstance(outcome, Exception):
                raise outcome
            info = LeaderIsrAndControllerEpoch(outcome, ctx.epoch)
            ctx.put_partition_leadership_info(tp, info)
            self._timeline.append("leader", self.broker_id, epoch=ctx.epoch, partition=str(tp),
                                  detail=f"leader {outcome.leader} epoch {outcome.leader_epoch} "
                                         f"isr {list(outcome.isr)} "
                                         "(reassignment: leader epoch bumped)")
            return info

    def _move_reassigned_partition_leader_if_required(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        ctx = self.context
        info = ctx.partition_leadership_info.get(tp)
        if info is None:   # `partitionLeadershipInfo(topicPartition)` throws (KafkaController.scala line 818)
            raise IllegalReassignmentState(f"partitionLeadershipInfo({tp}).get: the partition has no leader")
        leader = info.leader_and_isr.leader
        if leader not in assignment.replicas or not ctx.is_replica_online(leader, tp):
            self.partition_state_machine.handle_state_changes([tp], P.OnlinePartition, Strategy.REASSIGN)
        else:
            self._update_leader_epoch_and_send_request(tp, assignment)

    def _stop_removed_replicas_of_reassigned_partition(self, tp: TopicPartition, removed) -> None:
        replicas = [PartitionAndReplica(tp, r) for r in removed]
        for target in (R.OfflineReplica, R.ReplicaDeletionStarted, R.ReplicaDeletionSuccessful, R.NonExistentReplica):
            self.replica_state_machine.handle_state_changes(replicas, target)

    def _update_replica_assignment_for_partition(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        """`setTopicAssignmentRaw`, fenced: the topic's whole assignment from the context, with `tp`'s."""
        topic_assignment = self.context.partition_full_replica_assignment_for_topic(tp.topic)
        topic_assignment[tp] = assignment
        try:
            self._zk.set_topic_assignment(tp.topic, topic_assignment, self.context.epoch_zk_version)
        except NoNodeError:
            raise IllegalReassignmentState(f"Failed to update assignment for {tp} since the topic has no current "
                                           "assignment") from None

    def _remove_partition_from_reassigning_partitions(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        ctx = self.context
        if tp not in ctx.partitions_being_reassigned:
            raise IllegalReassignmentState("Cannot remove a reassigning partition because it is not present in memory")
        self._unregister_partition_reassignment_isr_change_handler(tp)
        self._maybe_remove_from_zk_reassignment(lambda p, replicas: p == tp and tuple(replicas) == assignment.replicas)
        ctx.partitions_being_reassigned.discard(tp)

    def _register_partition_reassignment_isr_change_handler(self, tp: TopicPartition) -> None:
        handler = PartitionReassignmentIsrChangeHandler(self.event_manager, tp)
        self.partition_reassignment_isr_change_handlers[tp] = handler
        self._zk.register_znode_change_handler(handler)

    def _unregister_partition_reassignment_isr_change_handler(self, tp: TopicPartition) -> None:
        self.partition_reassignment_isr_change_handlers.pop(tp, None)
        self._zk.unregister_znode_change_handler(TopicPartitionStateZNode.path(tp))

    def _maybe_remove_from_zk_reassignment(self, should_remove: Callable[[TopicPartition, list[int]], bool]) -> None:
        """Remove the matching entries of /admin/reassign_partitions; delete the znode when none is
        left, and re-put ZkPartitionReassignment so that its watch is set again."""
        zk = self._zk
        if self._watch_like_kafka:
            if not zk.reassign_partitions_in_progress():
                return
            reassigning = zk.get_partition_reassignment()
        else:   # the model reads /admin/reassign_partitions here without arming its watch
            data, _ = zk.get_data_and_stat_unwatched(ReassignPartitionsZNode.path)
            if data is None:
                return
            reassigning = ReassignPartitionsZNode.decode(data)
        remaining = {tp: replicas for tp, replicas in reassigning.items() if not should_remove(tp, replicas)}
        if not remaining:
            zk.delete_partition_reassignment(self.context.epoch_zk_version)
            self.event_manager.put(ev.ZkPartitionReassignment())   # "Ensure we detect future reassignments"
        else:
            zk.set_or_create_partition_reassignment(remaining, self.context.epoch_zk_version)


class IllegalReassignmentState(KafkaException):
    """Kafka's IllegalStateException / StateChangeFailedException from the reassignment steps."""
