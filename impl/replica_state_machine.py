"""`ReplicaStateMachine`: the seven replica states, their transitions and the requests each one sends.

kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala (`ZkReplicaStateMachine`).
Whether a transition is allowed comes from `kcm.model.tables.REPLICA_TABLE` (Kafka's
`validPreviousStates`), never from a copy. A request for an invalid transition is logged and skipped,
as Kafka 1.1+ does (`logInvalidTransition`); it is also counted in `invalid_transitions` (by
`(from, to)` state names) and recorded in the timeline, so a test can assert that none happened, or
which did. The choice, log-and-skip rather than raise, is Kafka's and is made once, here.

`handle_state_changes(replicas, target)` is `newBatch -> doHandleStateChanges (per broker, in
broker order) -> sendRequestsToBrokers(epoch)`. What each transition does:

    NonExistent -> New            LeaderAndIsr(isNew) to the replica if the partition has a leader
                                  (fails if the replica is that leader); else only mark it
    New -> Online                 add the replica to the assignment if it is missing; no request
    Online/Offline/Ineligible -> Online   LeaderAndIsr to the replica if the partition has a leader
    * -> Offline                  StopReplica(delete=false); with leadership info: remove it from the
                                  ISR in ZooKeeper (`remove_replica_from_isr`, leader epoch + 1) and
                                  LeaderAndIsr to the other replicas unless the topic is being
                                  deleted; without: UpdateMetadata
    Offline -> DeletionStarted    StopReplica(delete=true), whose response is a controller event
    -> DeletionSuccessful/Ineligible   mark only
    DeletionSuccessful -> NonExistent  remove the replica from the assignment and its state

Variants: V6 (`isr_shrink_empties`) lets the ISR shrink remove a sole member; V9
(`offline_replica_needs_leadership`) leaves replicas of partitions without leadership info where
they were.
"""

from __future__ import annotations

from collections import Counter

from kcm.impl.controller_context import ControllerContext, PartitionAndReplica, remove_replica
from kcm.impl.controller_zk_client import ControllerZkClient
from kcm.impl.kafka_zk_client import ControllerMovedException
from kcm.impl.logs import get_logger
from kcm.impl.request_batch import ControllerBrokerRequestBatch
from kcm.impl.timeline import Timeline
from kcm.impl.zk_data import LeaderIsrAndControllerEpoch, TopicPartition
from kcm.model.election import remove_replica_from_isr
from kcm.model.states import ReplicaState as R
from kcm.model.tables import REPLICA_TABLE
from kcm.model.variants import Flags

log = get_logger(__name__)


class ReplicaStateMachine:
    def __init__(self, controller_id: int, context: ControllerContext, zk_client: ControllerZkClient,
                 batch: ControllerBrokerRequestBatch, timeline: Timeline, flags: Flags, *,
                 state_reads_watch: bool = True) -> None:
        self.controller_id = controller_id
        self._context = context
        self._zk = zk_client
        self._batch = batch
        self._timeline = timeline
        self._flags = flags
        self._state_reads_watch = state_reads_watch
        #: Invalid transitions requested (and skipped), by (from, to) state name.
        self.invalid_transitions: Counter[tuple[str, str]] = Counter()
        #: Valid transitions taken, by (from, to) state name.
        self.transitions: Counter[tuple[str, str]] = Counter()

    # ---- startup -----------------------------------------------------------------------------

    def startup(self) -> None:
        """`startup`: online replicas -> OnlineReplica, the others -> ReplicaDeletionIneligible, then
        -> OfflineReplica (2.4+)."""
        ctx = self._context
        online, offline = [], []
        for tp in ctx.all_partitions():
            for replica_id in ctx.partition_replica_assignment(tp):
                replica = PartitionAndReplica(tp, replica_id)
                if ctx.is_replica_online(replica_id, tp):
                    ctx.put_replica_state(replica, R.OnlineReplica)
                    online.append(replica)
                else:
                    ctx.put_replica_state(replica, R.ReplicaDeletionIneligible)
                    offline.append(replica)
        self.handle_state_changes(online, R.OnlineReplica)
        self.handle_state_changes(offline, R.OfflineReplica)

    def shutdown(self) -> None:
        """Nothing to stop: the states live in the context, which resignation resets."""

    # ---- state changes -----------------------------------------------------------------------

    def handle_state_changes(self, replicas: list[PartitionAndReplica], target: R) -> None:
        if not replicas:
            return
        self._batch.new_batch()
        by_broker: dict[int, list[PartitionAndReplica]] = {}
        for replica in replicas:
            by_broker.setdefault(replica.replica, []).append(replica)
        try:
            # `replicas.groupBy(_.replica)`: each group in turn, first met first, as the model
            # (Kafka's hash-map order is some fixed order of the ids: docs/model.md, "Abstractions and omissions").
            for replica_id in by_broker:
                self._do_handle_state_changes(replica_id, by_broker[replica_id], target)
        except ControllerMovedException:
            log.error("Controller moved to another broker when moving some replicas to %s state", target.name)
            raise
        except Exception as error:   # Kafka's `case e: Throwable`
            # kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala
            # `handleStateChanges` (lines 114-119): logged, the caller goes on. ZooKeeper errors are
            # per-partition failures below, so only a bug lands here; the batch is dropped.
            log.error("Error while moving some replicas to %s state: %r", target.name, error)
            self._batch.clear()
            return
        self._batch.send_requests_to_brokers(self._context.epoch)

    def _check_valid(self, replicas: list[PartitionAndReplica], target: R) -> list[PartitionAndReplica]:
        valid = []
        for replica in replicas:
            current = self._context.replica_state(replica)
            if REPLICA_TABLE.is_valid_transition(current, target):
                valid.append(replica)
            else:
                self.invalid_transitions[(current.name, target.name)] += 1
                log.error("Controller %d epoch %d initiated state change of replica %s from %s to %s failed: "
                          "valid previous states are %s", self.controller_id, self._context.epoch, replica,
                          current.name, target.name, sorted(s.name for s in REPLICA_TABLE.valid_previous(target)))
                self._timeline.append("invalid transition", self.controller_id, epoch=self._context.epoch,
                                      partition=str(replica.topic_partition),
                                      detail=f"replica {replica.replica} {current.name} -> {target.name}")
        return valid

    def _transition(self, replica: PartitionAndReplica, target: R) -> None:
        current = self._context.replica_state(replica)
        self.transitions[(current.name, target.name)] += 1
        if current is not target:
            self._timeline.append("transition", self.controller_id, epoch=self._context.epoch,
                                  partition=str(replica.topic_partition),
                                  detail=f"replica {replica.replica} {current.name} -> {target.name}")
        if target is R.NonExistentReplica:
            self._context.remove_replica_state(replica)
        else:
            self._context.put_replica_state(replica, target)

    def _do_handle_state_changes(self, replica_id: int, replicas: list[PartitionAndReplica], target: R) -> None:  # noqa: C901 - one arm per target state
        ctx = self._context
        batch = self._batch
        valid = self._check_valid(replicas, target)
        if target is R.NewReplica:
            for replica in valid:
                tp = replica.topic_partition
                info = ctx.partition_leadership_info.get(tp)
                if info is not None:
                    if info.leader_and_isr.leader == replica_id:
                        log.error("Replica %d for partition %s cannot be moved to NewReplica state as it is being "
                                  "requested to become leader", replica_id, tp)
                        continue
                    batch.add_leader_and_isr_request_for_brokers(
                        [replica_id], tp, info, ctx.partition_full_replica_assignment(tp), is_new=True)
                self._transition(replica, R.NewReplica)
        elif target is R.OnlineReplica:
            for replica in valid:
                tp = replica.topic_partition
                if ctx.replica_state(replica) is R.NewReplica:
                    assignment = ctx.partition_full_replica_assignment(tp)
                    if replica_id not in assignment.replicas:
                        log.error("Adding replica (%d) that is not part of the assignment %s", replica_id, assignment)
                        ctx.update_partition_full_replica_assignment(
                            tp, assignment.__class__(assignment.replicas + (replica_id,), assignment.adding_replicas,
                                                     assignment.removing_replicas))
                else:
                    info = ctx.partition_leadership_info.get(tp)
                    if info is not None:
                        batch.add_leader_and_isr_request_for_brokers(
                            [replica_id], tp, info, ctx.partition_full_replica_assignment(tp), is_new=False)
                self._transition(replica, R.OnlineReplica)
        elif target is R.OfflineReplica:
            for replica in valid:
                batch.add_stop_replica_request_for_brokers([replica_id], replica.topic_partition,
                                                           delete_partition=False)
            with_info = [r for r in valid if r.topic_partition in ctx.partition_leadership_info]
            without_info = [r for r in valid if r.topic_partition not in ctx.partition_leadership_info]
            updated = self._remove_replicas_from_isr(replica_id, [r.topic_partition for r in with_info])
            for tp, info in updated.items():
                if not ctx.is_topic_queued_up_for_deletion(tp.topic):
                    recipients = [r for r in ctx.partition_replica_assignment(tp) if r != replica_id]
                    batch.add_leader_and_isr_request_for_brokers(
                        recipients, tp, info, ctx.partition_full_replica_assignment(tp), is_new=False)
                self._transition(PartitionAndReplica(tp, replica_id), R.OfflineReplica)
            if not self._flags.offline_replica_needs_leadership:   # V9 (KAFKA-6650) skips these
                for replica in without_info:
                    batch.add_update_metadata_request_for_brokers(ctx.live_or_shutting_down_broker_ids,
                                                                  [replica.topic_partition])
                    self._transition(replica, R.OfflineReplica)
        elif target is R.ReplicaDeletionStarted:
            for replica in valid:
                self._transition(replica, R.ReplicaDeletionStarted)
                batch.add_stop_replica_request_for_brokers([replica_id], replica.topic_partition, delete_partition=True)
        elif target in (R.ReplicaDeletionIneligible, R.ReplicaDeletionSuccessful):
            for replica in valid:
                self._transition(replica, target)
        elif target is R.NonExistentReplica:
            for replica in valid:
                tp = replica.topic_partition
                ctx.update_partition_full_replica_assignment(
                    tp, remove_replica(ctx.partition_full_replica_assignment(tp), replica_id))
                self._transition(replica, R.NonExistentReplica)

    # ---- the controller's ISR shrink ---------------------------------------------------------

    def _remove_replicas_from_isr(self, replica_id: int, partitions: list[TopicPartition]
                                  ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """`removeReplicasFromIsr`: re-read each state znode and write it without the replica,
        retrying partitions whose znode moved on (BADVERSION) until none is left. Returns the
        partitions whose state is settled; those whose znode is missing or was written by a newer
        controller fail (logged) and keep their replica state."""
        results: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        remaining = partitions
        while remaining:
            finished, remaining = self._do_remove_replicas_from_isr(replica_id, remaining)
            results.update(finished)
        return results

    def _do_remove_replicas_from_isr(self, replica_id: int, partitions: list[TopicPartition]):
        ctx = self._context
        try:
            states = self._zk.get_topic_partition_states(partitions, watch=self._state_reads_watch)
        except Exception as error:   # Kafka's `case e: Exception`
            # kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala
            # `getTopicPartitionStatesFromZk` (lines 387-392): every partition fails
            # (`logFailedStateChange`), none is cached or retried, their replicas keep their state.
            for tp in partitions:
                log.error("Controller %d epoch %d failed to change state of replica %d for partition %s to "
                          "OfflineReplica: %r", self.controller_id, ctx.epoch, replica_id, tp, error)
                self._timeline.append("failed transition", self.controller_id, epoch=ctx.epoch, partition=str(tp),
                                      detail=f"replica {replica_id} -> OfflineReplica: {error!r}")
            return {}, []
        finished: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        without_replica: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        to_write = {}
        for tp in partitions:
            state = states.get(tp)
            if state is None:
                if not ctx.is_topic_queued_up_for_deletion(tp.topic):
                    log.error("Failed to change state of replica %d for partition %s since the leader and isr "
                              "path in zookeeper is empty", replica_id, tp)
                continue
            if state.controller_epoch > ctx.epoch:
                log.error("Leader and isr path written by another controller (epoch %d > %d); aborting the state "
                          "change of replica %d for %s", state.controller_epoch, ctx.epoch, replica_id, tp)
                continue
            lai = state.leader_and_isr
            if replica_id not in lai.isr:
                without_replica[tp] = LeaderIsrAndControllerEpoch(lai, ctx.epoch)
                continue
            to_write[tp] = remove_replica_from_isr(lai, replica_id, keep_sole_member=not self._flags.isr_shrink_empties)
        # The write comes first: when it fails the epoch fence (ControllerMovedException), no
        # partition of this call is cached, not even those that needed no write (Kafka caches
        # `leaderAndIsrsWithoutReplica ++ finishedPartitions` after `updateLeaderAndIsr`).
        result = self._zk.update_leader_and_isr(to_write, ctx.epoch, ctx.epoch_zk_version) if to_write else None
        for tp, info in without_replica.items():
            ctx.put_partition_leadership_info(tp, info)
            finished[tp] = info
        if result is None:
            return finished, []
        for tp, outcome in sorted(result.finished_partitions.items()):
            if isinstance(outcome, Exception):
                log.error("Failed to remove replica %d from the ISR of %s: %s", replica_id, tp, outcome)
                continue
            info = LeaderIsrAndControllerEpoch(outcome, ctx.epoch)
            ctx.put_partition_leadership_info(tp, info)
            finished[tp] = info
            self._timeline.append("leader", self.controller_id, epoch=ctx.epoch, partition=str(tp),
                                  detail=f"leader {outcome.leader} epoch {outcome.leader_epoch} "
                                         f"isr {list(outcome.isr)} "
                                         f"(replica {replica_id} removed from the ISR)")
        return finished, list(result.partitions_to_retry)
