"""`PartitionStateMachine`: the four partition states, leader initialisation and leader elections.

kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala (`ZkPartitionStateMachine`)
and Election.scala. Valid transitions come from `kcm.model.tables.PARTITION_TABLE`; an invalid one is
logged, counted and skipped (see `replica_state_machine`). Leaders are chosen only by
`kcm.model.election` (`leader_for_offline`, `leader_for_reassign`, `leader_for_preferred_replica`,
`leader_for_controlled_shutdown`): this module gathers their inputs from the context and ZooKeeper and
writes their result.

    NonExistent -> New            mark only (the assignment is already in the context)
    New -> Online                 `initialize_leader_and_isr_for_partitions`: the first live replica
                                  leads, ISR = the live replicas, leader epoch 0; create the state
                                  znode (fenced); LeaderAndIsr(isNew) to the ISR. No live replica:
                                  the partition stays New
    Online/Offline -> Online      `elect_leader_for_partitions`: re-read the state znodes; abort a
                                  partition whose znode a newer controller wrote; run the strategy;
                                  conditional, fenced writes (retrying BADVERSION); LeaderAndIsr to
                                  the strategy's recipients. No leader: the partition keeps its state
    -> Offline, Offline -> NonExistent   mark only

Variants: V7 (`shutdown_election_isr_order`) elects for a controlled shutdown with the pre-KAFKA-3670
ISR-order algorithm; V8 (`shutdown_recipients_exclude_shutting`) leaves the shutting-down brokers out
of its LeaderAndIsr.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from enum import Enum

from kcm.impl.controller_context import ControllerContext, target_replicas
from kcm.impl.controller_zk_client import ControllerZkClient
from kcm.impl.kafka_zk_client import ControllerMovedException
from kcm.impl.logs import get_logger
from kcm.impl.request_batch import ControllerBrokerRequestBatch
from kcm.impl.timeline import Timeline
from kcm.impl.zk_data import LeaderIsrAndControllerEpoch, TopicPartition
from kcm.model.election import (
    ElectionResult,
    LeaderAndIsr,
    controlled_shutdown_leader_election_isr_order,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassign,
)
from kcm.model.states import PartitionState as P
from kcm.model.tables import PARTITION_TABLE
from kcm.model.variants import Flags

log = get_logger(__name__)


class PartitionLeaderElectionStrategy(Enum):
    """Kafka's `PartitionLeaderElectionStrategy` case classes (OFFLINE is `allowUnclean = false`)."""

    OFFLINE = "offline"
    OFFLINE_ALLOW_UNCLEAN = "offline (unclean allowed)"
    REASSIGN = "reassign"
    PREFERRED = "preferred"
    CONTROLLED_SHUTDOWN = "controlled shutdown"


class PartitionStateMachine:
    def __init__(self, controller_id: int, context: ControllerContext, zk_client: ControllerZkClient,
                 batch: ControllerBrokerRequestBatch, timeline: Timeline, flags: Flags, *,
                 unclean_leader_election_enable: bool = False, state_reads_watch: bool = True) -> None:
        self.controller_id = controller_id
        self._context = context
        self._zk = zk_client
        self._batch = batch
        self._timeline = timeline
        self._flags = flags
        self._unclean_enabled = unclean_leader_election_enable
        self._state_reads_watch = state_reads_watch
        self.invalid_transitions: Counter[tuple[str, str]] = Counter()
        self.transitions: Counter[tuple[str, str]] = Counter()

    # ---- startup -----------------------------------------------------------------------------

    def startup(self) -> None:
        """`initializePartitionState`, then `triggerOnlinePartitionStateChange`."""
        ctx = self._context
        for tp in ctx.all_partitions():
            info = ctx.partition_leadership_info.get(tp)
            if info is None:
                ctx.put_partition_state(tp, P.NewPartition)
            elif ctx.is_replica_online(info.leader_and_isr.leader, tp):
                ctx.put_partition_state(tp, P.OnlinePartition)
            else:
                ctx.put_partition_state(tp, P.OfflinePartition)
        self.trigger_online_partition_state_change()

    def shutdown(self) -> None:
        """Nothing to stop: the states live in the context."""

    def trigger_online_partition_state_change(self, topic: str | None = None) -> dict[TopicPartition, LeaderAndIsr]:
        """New and Offline partitions of topics not queued for deletion -> Online (offline election,
        unclean only where the topic's config allows it); of `topic` alone when given."""
        ctx = self._context
        partitions = [tp for tp in ctx.partitions_in_states((P.OfflinePartition, P.NewPartition))
                      if not ctx.is_topic_queued_up_for_deletion(tp.topic) and topic in (None, tp.topic)]
        return self.handle_state_changes(partitions, P.OnlinePartition, PartitionLeaderElectionStrategy.OFFLINE)

    # ---- state changes -----------------------------------------------------------------------

    def handle_state_changes(self, partitions: list[TopicPartition], target: P,
                             strategy: PartitionLeaderElectionStrategy | None = None
                             ) -> dict[TopicPartition, LeaderAndIsr]:
        """Returns the successful elections (partition -> new leadership)."""
        if not partitions:
            return {}
        self._batch.new_batch()
        try:
            result = self._do_handle_state_changes(partitions, target, strategy)
        except ControllerMovedException:
            log.error("Controller moved to another broker when moving some partitions to %s state", target.name)
            raise
        except Exception as error:   # Kafka's `case e: Throwable`
            # kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
            # `handleStateChanges` (lines 161-167): every partition fails and the caller goes on.
            # ZooKeeper errors are per-partition failures below, so only a bug lands here; the
            # batch is dropped (Kafka leaves it for the next `newBatch` to trip on).
            log.error("Error while moving some partitions to %s state: %r", target.name, error)
            self._batch.clear()
            return {}
        self._batch.send_requests_to_brokers(self._context.epoch)
        return result

    def _check_valid(self, partitions: list[TopicPartition], target: P) -> list[TopicPartition]:
        valid = []
        for tp in partitions:
            current = self._context.partition_state(tp)
            if PARTITION_TABLE.is_valid_transition(current, target):
                valid.append(tp)
            else:
                self.invalid_transitions[(current.name, target.name)] += 1
                log.error("Controller %d epoch %d initiated state change for partition %s from %s to %s failed: "
                          "valid previous states are %s", self.controller_id, self._context.epoch, tp, current.name,
                          target.name, sorted(s.name for s in PARTITION_TABLE.valid_previous(target)))
                self._timeline.append("invalid transition", self.controller_id, epoch=self._context.epoch,
                                      partition=str(tp), detail=f"partition {current.name} -> {target.name}")
        return valid

    def _transition(self, tp: TopicPartition, target: P) -> None:
        current = self._context.partition_state(tp)
        self.transitions[(current.name, target.name)] += 1
        if current is not target:
            self._timeline.append("transition", self.controller_id, epoch=self._context.epoch, partition=str(tp),
                                  detail=f"partition {current.name} -> {target.name}")
        self._context.put_partition_state(tp, target)

    def _do_handle_state_changes(self, partitions: list[TopicPartition], target: P,
                                 strategy: PartitionLeaderElectionStrategy | None
                                 ) -> dict[TopicPartition, LeaderAndIsr]:
        ctx = self._context
        valid = self._check_valid(partitions, target)
        if target is P.OnlinePartition:
            uninitialized = [tp for tp in valid if ctx.partition_state(tp) is P.NewPartition]
            to_elect = [tp for tp in valid if ctx.partition_state(tp) in (P.OfflinePartition, P.OnlinePartition)]
            for tp in self._initialize_leader_and_isr_for_partitions(uninitialized):
                self._transition(tp, P.OnlinePartition)
            if not to_elect:
                return {}
            if strategy is None:
                raise ValueError("Election strategy is a required field when the target state is OnlinePartition")
            results = self._elect_leader_for_partitions(to_elect, strategy)
            for tp in results:
                self._transition(tp, P.OnlinePartition)
            return results
        for tp in valid:   # New, Offline, NonExistent: mark only
            self._transition(tp, target)
        return {}

    # ---- New -> Online -----------------------------------------------------------------------

    def _initialize_leader_and_isr_for_partitions(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        ctx = self._context
        states: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        for tp in partitions:
            live = tuple(r for r in ctx.partition_replica_assignment(tp) if ctx.is_replica_online(r, tp))
            if not live:
                log.error("Controller %d epoch %d failed to change state for partition %s from New to Online: "
                          "No replica is alive", self.controller_id, ctx.epoch, tp)
                continue
            states[tp] = LeaderIsrAndControllerEpoch(LeaderAndIsr(live[0], 0, live, 0), ctx.epoch)
        if not states:
            return []
        try:
            outcome = self._zk.create_topic_partition_states(states, ctx.epoch_zk_version)
        except ControllerMovedException:
            log.error("Controller moved to another broker when trying to create the topic partition state znode")
            raise
        except Exception as error:   # Kafka's `case e: Exception`
            # kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
            # `initializeLeaderAndIsrForPartitions` (lines 250-258): a ZooKeeper client error fails
            # every partition (`logFailedStateChange`); they stay New and the batch is still sent.
            for tp in sorted(states):
                self._log_failed_state_change(tp, P.NewPartition, error)
            return []
        done = []
        for tp, failure in sorted(outcome.items()):
            if failure is not None:
                log.error("Failed to create the state znode of %s: %s", tp, failure)
                continue
            info = states[tp]
            ctx.put_partition_leadership_info(tp, info)
            self._batch.add_leader_and_isr_request_for_brokers(
                info.leader_and_isr.isr, tp, info, ctx.partition_full_replica_assignment(tp), is_new=True)
            self._timeline.append("leader", self.controller_id, epoch=ctx.epoch, partition=str(tp),
                                  detail=f"leader {info.leader_and_isr.leader} epoch 0 "
                                         f"isr {list(info.leader_and_isr.isr)} (new partition)")
            done.append(tp)
        return done

    # ---- elections ---------------------------------------------------------------------------

    def _elect_leader_for_partitions(self, partitions: list[TopicPartition],
                                     strategy: PartitionLeaderElectionStrategy) -> dict[TopicPartition, LeaderAndIsr]:
        finished: dict[TopicPartition, LeaderAndIsr] = {}
        remaining = partitions
        while remaining:
            done, remaining = self._do_elect_leader_for_partitions(remaining, strategy)
            finished.update(done)
        return finished

    def _do_elect_leader_for_partitions(self, partitions: list[TopicPartition],
                                        strategy: PartitionLeaderElectionStrategy):
        ctx = self._context
        try:
            states = self._zk.get_topic_partition_states(partitions, watch=self._state_reads_watch)
        except Exception as error:   # Kafka's `case e: Exception`
            # kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
            # `doElectLeaderForPartitions` (lines 372-377): a failed `getTopicPartitionStatesRaw`
            # fails every partition, none retried; they keep their state.
            for tp in partitions:
                self._log_failed_state_change(tp, P.OnlinePartition, error)
            return {}, []
        elected: dict[TopicPartition, tuple[ElectionResult, LeaderAndIsr]] = {}
        new: dict[TopicPartition, LeaderAndIsr] = {}
        for tp in partitions:
            state = states.get(tp)
            if state is None:
                log.error("Controller %d epoch %d failed to elect a leader for %s: its state znode does not exist",
                          self.controller_id, ctx.epoch, tp)
                continue
            if state.controller_epoch > ctx.epoch:
                log.error("Aborted leader election for partition %s since the LeaderAndIsrPath was already written "
                          "by another controller. This probably means that the current controller %d went through "
                          "a soft failure and another controller was elected with epoch %d.", tp,
                          self.controller_id, state.controller_epoch)
                continue
            current = state.leader_and_isr
            election = self._elect(tp, current, strategy)
            if election.leader_and_isr is None:
                log.error("Failed to elect leader for partition %s under strategy %s", tp, strategy.value)
                continue
            elected[tp] = (election, current)
            new[tp] = election.leader_and_isr
        if not elected:
            return {}, []
        result = self._zk.update_leader_and_isr(new, ctx.epoch, ctx.epoch_zk_version)
        done: dict[TopicPartition, LeaderAndIsr] = {}
        for tp, outcome in sorted(result.finished_partitions.items()):
            if isinstance(outcome, Exception):
                log.error("Failed to write the new leader of %s: %s", tp, outcome)
                continue
            election, old = elected[tp]
            info = LeaderIsrAndControllerEpoch(outcome, ctx.epoch)
            ctx.put_partition_leadership_info(tp, info)
            self._batch.add_leader_and_isr_request_for_brokers(
                election.recipients, tp, info, ctx.partition_full_replica_assignment(tp), is_new=False)
            done[tp] = outcome
            unclean = " unclean" if election.unclean else ""
            self._timeline.append("leader", self.controller_id, epoch=ctx.epoch, partition=str(tp),
                                  detail=f"leader {outcome.leader} epoch {outcome.leader_epoch} "
                                         f"isr {list(outcome.isr)} "
                                         f"({strategy.value}{unclean} election; was {old.leader})")
        return done, list(result.partitions_to_retry)

    def _log_failed_state_change(self, tp: TopicPartition, target: P, error: Exception) -> None:
        """`logFailedStateChange`: the partition keeps its state."""
        ctx = self._context
        log.error("Controller %d epoch %d failed to change state for partition %s from %s to %s: %r",
                  self.controller_id, ctx.epoch, tp, ctx.partition_state(tp).name, target.name, error)
        self._timeline.append("failed transition", self.controller_id, epoch=ctx.epoch, partition=str(tp),
                              detail=f"partition {ctx.partition_state(tp).name} -> {target.name}: {error!r}")

    def _elect(self, tp: TopicPartition, current: LeaderAndIsr, strategy: PartitionLeaderElectionStrategy
               ) -> ElectionResult:
        """Kafka's `Election.leaderFor*` with the context's inputs: the replicas `isReplicaOnline`
        counts, a replica on an offline log directory left out (Election.scala lines 30-135)."""
        ctx = self._context
        assignment = ctx.partition_replica_assignment(tp)
        offline = frozenset(ctx.replicas_on_offline_dirs_of(tp))
        online = ctx.live_broker_ids - offline
        if strategy in (PartitionLeaderElectionStrategy.OFFLINE, PartitionLeaderElectionStrategy.OFFLINE_ALLOW_UNCLEAN):
            # collectUncleanLeaderElectionState: unless the admin forced it, the topic's config is
            # read (`getLogConfigs`, the broker's default under the topic's overrides) for a
            # partition without a live ISR member
            unclean = strategy is PartitionLeaderElectionStrategy.OFFLINE_ALLOW_UNCLEAN or (
                not any(r in online for r in current.isr)
                and self._zk.unclean_leader_election_enabled(tp.topic, self._unclean_enabled))
            return leader_for_offline(assignment, current, online, unclean)
        if strategy is PartitionLeaderElectionStrategy.REASSIGN:
            return leader_for_reassign(target_replicas(ctx.partition_full_replica_assignment(tp)), current, online)
        if strategy is PartitionLeaderElectionStrategy.PREFERRED:
            return leader_for_preferred_replica(assignment, current, online)
        live, shutting = ctx.live_or_shutting_down_broker_ids - offline, frozenset(ctx.shutting_down_broker_ids)
        if self._flags.shutdown_election_isr_order:   # V7 (KAFKA-3670)
            election = leader_for_controlled_shutdown(assignment, current, live, shutting,
                                                      algorithm=controlled_shutdown_leader_election_isr_order)
        else:
            election = leader_for_controlled_shutdown(assignment, current, live, shutting)
        if self._flags.shutdown_recipients_exclude_shutting:   # V8 (KAFKA-7482)
            election = replace(election, recipients=tuple(r for r in assignment if r in online))
        return election
