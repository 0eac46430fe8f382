"""`KafkaController`: a broker's controller module, its election, failover, resignation and event handlers.

kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala. Every broker runs one; at most
one of them is *active* (`active_controller_id == broker_id`) at a time, the one named in the
ephemeral /controller. The module owns the `ControllerEventManager` (one queue, one thread), the
`ControllerContext`, the two state machines, the `TopicDeletionManager`, the
`ControllerChannelManager` and the request batches. Everything it does happens in `process(event)`,
one event at a time:

    Startup                   register the /controller handler (arming its watch); elect()
    Reelect                   maybe_resign(); elect()
    ControllerChange          maybe_resign()
    Expire                    resign (the ZooKeeper client then opens a new session and puts
                              RegisterBrokerAndReelect)
    RegisterBrokerAndReelect  register /brokers/ids/<id> (a new broker epoch); Reelect
    BrokerChange              new, dead and bounced brokers (by broker epoch): on_broker_startup /
                              on_broker_failure
    IsrChangeNotification     refresh the cache from ZooKeeper, UpdateMetadata, delete the notifications
    LogDirEventNotification   ask the brokers named about their replicas (LeaderAndIsr), delete the
                              notifications
    LeaderAndIsrResponseReceived   storage errors into replicas_on_offline_dirs; the new ones offline
    ControlledShutdown        move leadership off the broker, stop its follower replicas, answer with
                              the partitions it still leads
    ReplicaLeaderElection     preferred election for /admin/preferred_replica_election
    AutoPreferredReplicaLeaderElection   the scheduled rebalance
    ZkPartitionReassignment, PartitionReassignmentIsrChange   `controller_reassignment`
    TopicDeletion, TopicDeletionStopReplicaResponseReceived   `TopicDeletionManager`
    TopicChange               new topics: on_new_partition_creation
    PartitionModifications    partitions added to a topic: on_new_partition_creation, or for a topic
                              queued for deletion the old assignment written back

Every handler but the election ones starts with the `isActive` guard, as Kafka's do (variant V4
removes BrokerChange's). A controller write that fails the /controller_epoch check raises
`ControllerMovedException`; `process` then abandons the event and calls `maybe_resign`. Any other
exception (a ZooKeeper session that expired under a zombie, a failed `.get` that Kafka would throw)
abandons the event too. In both cases the requests batched so far are dropped (Kafka's
`handleIllegalState` clears the batch; the model does the same on every abandoned event).

Election (`elect`): if /controller exists, note who it names; otherwise win it with the one multi of
`register_controller_and_increment_controller_epoch` (create the ephemeral /controller and bump
/controller_epoch at its version) and run `on_controller_failover` in Kafka's order.
Resignation unregisters the controller's handlers (later notifications for them are ignored), shuts
the channel manager down (queued requests are dropped) and resets the context.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kcm.impl import controller_events as ev
from kcm.impl.channel_manager import ControllerChannelManager
from kcm.impl.controller_context import ControllerContext, PartitionAndReplica
from kcm.impl.controller_event_manager import ControllerEventManager
from kcm.impl.controller_reassignment import ReassignmentMixin
from kcm.impl.controller_zk_client import ControllerZkClient
from kcm.impl.controller_zk_handlers import (
    BrokerChangeHandler,
    ControllerChangeHandler,
    ControllerEpochChangeHandler,
    IsrChangeNotificationHandler,
    LogDirEventNotificationHandler,
    PartitionModificationsHandler,
    PartitionReassignmentHandler,
    PartitionReassignmentIsrChangeHandler,
    PreferredReplicaElectionHandler,
    TopicChangeHandler,
    TopicDeletionHandler,
)
from kcm.impl.kafka_config import KafkaConfig
from kcm.impl.kafka_exception import KafkaException
from kcm.impl.kafka_scheduler import KafkaScheduler, ManualKafkaScheduler
from kcm.impl.kafka_zk_client import ControllerMovedException
from kcm.impl.logs import get_logger
from kcm.impl.network import Network
from kcm.impl.partition_state_machine import PartitionLeaderElectionStrategy as Strategy
from kcm.impl.partition_state_machine import PartitionStateMachine
from kcm.impl.replica_state_machine import ReplicaStateMachine
from kcm.impl.request_batch import ControllerBrokerRequestBatch
from kcm.impl.requests import ElectionType, Errors, LeaderAndIsrResponse, StopReplicaRequest, StopReplicaResponse
from kcm.impl.timeline import Timeline
from kcm.impl.topic_deletion_manager import TopicDeletionManager
from kcm.impl.zk.handlers import StateChangeHandler
from kcm.impl.zk.protocol import SessionExpiredError
from kcm.impl.zk_data import Broker, ReplicaAssignment, TopicPartition, TopicPartitionsZNode
from kcm.model.states import PartitionState as P
from kcm.model.states import ReplicaState as R

log = get_logger(__name__)


class StaleBrokerEpochException(KafkaException):
    pass


class BrokerNotAvailableException(KafkaException):
    pass


class NoSuchElementException(KafkaException):
    """Scala's `None.get` / `Map.apply` on a missing key: Kafka code that assumes the data is there."""


class KafkaController(ReassignmentMixin):
    def __init__(self, broker_id: int, config: KafkaConfig, zk_client: ControllerZkClient, network: Network,
                 timeline: Timeline, *, broker_info: Broker, broker_epoch: int, threaded: bool,
                 on_registered: Callable[[int], None] = lambda czxid: None) -> None:
        self.broker_id = broker_id
        self.config = config
        self.flags = config.flags
        self.alignment = config.alignment
        self._zk = zk_client
        self._timeline = timeline
        self._threaded = threaded
        self._broker_info = broker_info
        self.broker_epoch = broker_epoch
        self._on_registered = on_registered
        self.active_controller_id = -1
        #: Set when this module sent requests or wrote a controller znode while not active (V4).
        self.acted_while_inactive = False
        #: Set while `_trigger_controller_move` deletes /controller after resigning.
        self._moving = False

        self.context = ControllerContext()
        self.channel_manager = ControllerChannelManager(broker_id, network, timeline, threaded=threaded,
                                                        backoff_ms=config.request_send_backoff_ms)
        self.event_manager = ControllerEventManager(broker_id, self)
        self.kafka_scheduler = (KafkaScheduler if threaded else ManualKafkaScheduler)(f"controller-{broker_id}")
        self._batches = [self._new_batch() for _ in range(3)]
        self.broker_request_batch = self._batches[0]
        # Kafka arms a watch on every read of a path with a registered handler; the model arms the
        # reassignment watches only at its own points (ModelAlignment.watches_armed_only_where_model_arms).
        self._watch_like_kafka = not self.alignment.watches_armed_only_where_model_arms
        self.replica_state_machine = ReplicaStateMachine(
            broker_id, self.context, zk_client, self._batches[1], timeline, self.flags,
            state_reads_watch=self._watch_like_kafka)
        self.partition_state_machine = PartitionStateMachine(
            broker_id, self.context, zk_client, self._batches[2], timeline, self.flags,
            unclean_leader_election_enable=config.unclean_leader_election_enable,
            state_reads_watch=self._watch_like_kafka)
        self.topic_deletion_manager = TopicDeletionManager(self.context, self.replica_state_machine,
                                                           self.partition_state_machine, self,
                                                           delete_topic_enable=config.delete_topic_enable)
        self.controller_change_handler = ControllerChangeHandler(self.event_manager)
        self.broker_change_handler = BrokerChangeHandler(self.event_manager)
        self.topic_change_handler = TopicChangeHandler(self.event_manager)
        self.topic_deletion_handler = TopicDeletionHandler(self.event_manager)
        self.isr_change_notification_handler = IsrChangeNotificationHandler(self.event_manager)
        self.log_dir_event_notification_handler = LogDirEventNotificationHandler(self.event_manager)
        self.preferred_replica_election_handler = PreferredReplicaElectionHandler(self.event_manager)
        self.partition_reassignment_handler = PartitionReassignmentHandler(self.event_manager)
        self.partition_reassignment_isr_change_handlers: dict[TopicPartition,
                                                              PartitionReassignmentIsrChangeHandler] = {}
        self.partition_modifications_handlers: dict[str, PartitionModificationsHandler] = {}
        zk_client.on_controller_write = self._note_action

    def _new_batch(self) -> ControllerBrokerRequestBatch:
        return ControllerBrokerRequestBatch(self.broker_id, self.context, self.channel_manager,
                                            self._stop_replica_callback, self._note_action,
                                            leader_and_isr_callback=self._leader_and_isr_callback)

    @property
    def is_active(self) -> bool:
        return self.active_controller_id == self.broker_id

    @property
    def epoch(self) -> int:
        return self.context.epoch

    def invalid_transitions(self) -> dict[tuple[str, str, str], int]:
        """Invalid transitions requested so far, by (machine, from, to)."""
        out = {("replica",) + k: n for k, n in self.replica_state_machine.invalid_transitions.items()}
        out.update({("partition",) + k: n for k, n in self.partition_state_machine.invalid_transitions.items()})
        return out

    def _note_action(self) -> None:
        if not self.is_active and not self.acted_while_inactive and not self._moving:
            self.acted_while_inactive = True
            self._timeline.append("acted while inactive", self.broker_id, epoch=self.context.epoch)

    # ---- lifecycle ---------------------------------------------------------------------------

    def startup(self) -> None:
        """`startup`: the session handler (threaded mode), Startup, and the event thread."""
        if self._threaded:
            self._zk.register_state_change_handler(_ControllerStateChangeHandler(self))
        if self.flags.controller_epoch_listener:   # V2: every broker listens to /controller_epoch
            self._zk.register_znode_change_handler_and_check_existence(
                ControllerEpochChangeHandler(self._adopt_controller_epoch))
        self.event_manager.put(ev.Startup())
        if self._threaded:
            self.event_manager.start()

    def shutdown(self) -> None:
        """A clean stop: the event thread ends after its current event, the scheduler and the channel
        manager stop (queued requests are dropped). The session is the server's to close."""
        self.event_manager.close()
        self.kafka_scheduler.shutdown()
        self.channel_manager.shutdown()

    def kill(self) -> None:
        """The process died: threads stop, queued events and requests are lost, nothing is written.

        A broker whose ControlledShutdownRequest was queued here sees its connection drop (Kafka's
        `NetworkClientUtils.sendAndReceive` throws an IOException in `KafkaServer.controlledShutdown`)
        and retries; the in-process network has no connections to drop, so the answer is failed here."""
        lost = self.event_manager.kill()
        for event in lost:
            if isinstance(event, ev.ControlledShutdown):
                event.callback(ConnectionError(f"connection to broker {self.broker_id} was closed"))
        self.kafka_scheduler.shutdown()
        self.channel_manager.shutdown()

    def before_initializing_session(self):
        """The first half of `beforeInitializingSession`: `clearAndPut(Expire)` (the threaded handler
        then waits for the event thread to start it)."""
        return self.event_manager.clear_and_put(ev.Expire())

    def after_initializing_session(self) -> None:
        self.event_manager.put(ev.RegisterBrokerAndReelect())

    def _adopt_controller_epoch(self) -> None:
        """V2 (KAFKA-1096): an active controller overwrites its epoch with /controller_epoch's."""
        current = self._zk.get_controller_epoch()
        self._zk.path_exists(ControllerEpochChangeHandler.path)   # re-arm the listener
        if current is not None and self.is_active and current[0] != self.context.epoch:
            self.context.epoch, self.context.epoch_zk_version = current

    # ---- processing --------------------------------------------------------------------------

    def process(self, event: ev.ControllerEvent) -> None:
        """`process`: run the event's handler; a moved controller resigns, any failure abandons the event."""
        try:
            try:
                self._handlers[type(event)](self, event)
            except ControllerMovedException:
                log.info("Controller %d: controller moved to another broker when processing %s",
                         self.broker_id, event)
                self._clear_batches()
                self._maybe_resign()
        except KafkaException as error:   # Kafka's `case e: Throwable => error(...)`, for Kafka's own errors
            log.info("Controller %d: error processing event %s: %r", self.broker_id, event, error)
            self._clear_batches()

    def preempt(self, event: ev.ControllerEvent) -> None:
        if isinstance(event, ev.ControlledShutdown):
            event.callback(ControllerMovedException("Controller moved to another broker"))
        elif isinstance(event, ev.ReplicaLeaderElection) and event.partitions is not None and event.callback:
            # `preemptReplicaLeaderElection` (KafkaController.scala lines 1715-1724)
            event.callback({tp: Errors.NOT_CONTROLLER for tp in event.partitions})

    def _clear_batches(self) -> None:
        for batch in self._batches:
            batch.clear()

    # ---- election, failover, resignation -----------------------------------------------------

    def _elect(self) -> None:
        controller = self._zk.get_controller_id()
        self.active_controller_id = -1 if controller is None else controller
        if self.active_controller_id != -1:
            return
        try:
            epoch, epoch_zk_version = self._zk.register_controller_and_increment_controller_epoch(self.broker_id)
            self.context.epoch = epoch
            self.context.epoch_zk_version = epoch_zk_version
            self.active_controller_id = self.broker_id
            self._timeline.append("election", self.broker_id, epoch=epoch,
                                  detail=f"broker {self.broker_id} is the controller, epoch {epoch}")
            self._on_controller_failover()
        except ControllerMovedException:
            self._maybe_resign()
        # Kafka's `case t: Throwable => triggerControllerMove()`; a Python bug propagates
        except KafkaException as error:
            log.info("Error while electing or becoming controller on broker %d, triggering controller "
                     "movement: %r", self.broker_id, error)
            self._trigger_controller_move()

    def _trigger_controller_move(self) -> None:
        controller = self._zk.get_controller_id()
        self.active_controller_id = -1 if controller is None else controller
        if not self.is_active:
            return
        try:
            expected = self.context.epoch_zk_version
            self.active_controller_id = -1
            self._on_controller_resignation()
            # Kafka's own step after resigning (kafka@2.6.x:.../KafkaController.scala
            # `triggerControllerMove`, lines 1308-1323), not a write by an inactive controller
            self._moving = True
            try:
                self._zk.delete_controller(expected)
            finally:
                self._moving = False
        except ControllerMovedException:
            log.warning("Controller has already moved when trying to trigger controller movement")

    def _maybe_resign(self) -> None:
        was_active = self.is_active
        self._zk.register_znode_change_handler_and_check_existence(self.controller_change_handler)
        controller = self._zk.get_controller_id()
        self.active_controller_id = -1 if controller is None else controller
        if was_active and not self.is_active:
            self._on_controller_resignation()

    def _on_controller_failover(self) -> None:
        """`onControllerFailover`, in Kafka's order."""
        zk, ctx = self._zk, self.context
        # 1. register the handlers; the node handlers check existence, which arms their watches
        for handler in (self.broker_change_handler, self.topic_change_handler, self.topic_deletion_handler,
                        self.log_dir_event_notification_handler, self.isr_change_notification_handler):
            zk.register_znode_child_change_handler(handler)
        for node_handler in (self.preferred_replica_election_handler, self.partition_reassignment_handler):
            zk.register_znode_change_handler_and_check_existence(node_handler)
        # 2. delete pending log-dir event and ISR-change notifications, unread (reading the children
        # arms the child watches)
        zk.delete_log_dir_event_notifications(ctx.epoch_zk_version)
        zk.delete_isr_change_notifications(ctx.epoch_zk_version)
        # 3. initializeControllerContext
        self._initialize_controller_context()
        # 4. topic deletions in progress
        to_delete, ineligible = self._fetch_topic_deletions_in_progress()
        self.topic_deletion_manager.init(to_delete, ineligible)
        # 5. UpdateMetadata to every live broker before any LeaderAndIsr
        self.send_update_metadata_request(ctx.live_or_shutting_down_broker_ids, [])
        # 6. the state machines
        self.replica_state_machine.startup()
        self.partition_state_machine.startup()
        # 7. reassignments, deletions, pending preferred elections
        self._initialize_partition_reassignments()
        self.topic_deletion_manager.try_topic_deletion()
        pending = self._fetch_pending_preferred_replica_elections()
        self._on_replica_election(pending, _ZK_TRIGGERED)
        # 8. the scheduler
        self.kafka_scheduler.startup()
        if self.config.auto_leader_rebalance_enable:
            self._schedule_auto_leader_rebalance_task(5.0)

    def _initialize_controller_context(self) -> None:
        zk, ctx = self._zk, self.context
        ctx.set_live_brokers(zk.get_all_broker_and_epochs_in_cluster())
        ctx.set_all_topics(zk.get_all_topics_in_cluster(register_watch=True))
        self._register_partition_modifications_handlers(ctx.all_topics)
        for tp, assignment in zk.get_full_replica_assignment_for_topics(ctx.all_topics).items():
            ctx.update_partition_full_replica_assignment(tp, assignment)
            if assignment.adding_replicas or assignment.removing_replicas:
                ctx.partitions_being_reassigned.add(tp)
        ctx.partition_leadership_info.clear()
        ctx.shutting_down_broker_ids.clear()
        self._update_leader_and_isr_cache(ctx.all_partitions())
        self.channel_manager.startup(ctx.live_or_shutting_down_broker_ids)

    def _update_leader_and_isr_cache(self, partitions: list[TopicPartition]) -> None:
        for tp, info in self._zk.get_topic_partition_states(partitions, watch=self._watch_like_kafka).items():
            self.context.put_partition_leadership_info(tp, info)

    def _fetch_topic_deletions_in_progress(self) -> tuple[set[str], set[str]]:
        ctx = self.context
        to_delete = set(self._zk.get_topic_deletions())
        with_offline_replicas = {t for t in ctx.all_topics
                                 if any(not ctx.is_replica_online(r.replica, r.topic_partition)
                                        for r in ctx.replicas_for_topic(t))}
        reassigning = {tp.topic for tp in ctx.partitions_being_reassigned}
        return to_delete, with_offline_replicas | reassigning

    def _fetch_pending_preferred_replica_elections(self) -> list[TopicPartition]:
        ctx = self.context
        pending = []
        for tp in sorted(self._zk.get_preferred_replica_election()):
            replicas = ctx.partition_replica_assignment(tp)
            if not replicas:
                continue   # the topic was deleted
            info = ctx.partition_leadership_info.get(tp)
            if info is None:   # kafka@2.6.x:.../KafkaController.scala lines 756-757
                raise NoSuchElementException(f"partitionLeadershipInfo({tp}).get")
            if info.leader_and_isr.leader == replicas[0] or ctx.is_topic_queued_up_for_deletion(tp.topic):
                continue
            pending.append(tp)
        return pending

    def _on_controller_resignation(self) -> None:
        zk = self._zk
        zk.unregister_znode_child_change_handler(self.isr_change_notification_handler.path)
        zk.unregister_znode_child_change_handler(self.log_dir_event_notification_handler.path)
        zk.unregister_znode_change_handler(self.partition_reassignment_handler.path)
        zk.unregister_znode_change_handler(self.preferred_replica_election_handler.path)
        self.kafka_scheduler.shutdown()
        for tp in sorted(self.context.partitions_being_reassigned):
            self._unregister_partition_reassignment_isr_change_handler(tp)
        self.partition_state_machine.shutdown()
        zk.unregister_znode_child_change_handler(self.topic_change_handler.path)
        self.unregister_partition_modifications_handlers(sorted(self.partition_modifications_handlers))
        zk.unregister_znode_child_change_handler(self.topic_deletion_handler.path)
        self.replica_state_machine.shutdown()
        zk.unregister_znode_child_change_handler(self.broker_change_handler.path)
        self.channel_manager.shutdown()
        epoch = self.context.epoch
        self.context.reset_context()
        if epoch:   # it had been the controller (Expire resigns a broker that never was)
            self._timeline.append("resignation", self.broker_id, epoch=epoch,
                                  detail=f"broker {self.broker_id} resigned (was controller at epoch {epoch})")

    # ---- handlers: election ------------------------------------------------------------------

    def _process_startup(self, _: ev.Startup) -> None:
        self._zk.register_znode_change_handler_and_check_existence(self.controller_change_handler)
        self._elect()

    def _process_reelect(self, _: ev.ControllerEvent) -> None:
        self._maybe_resign()
        self._elect()

    def _process_controller_change(self, _: ev.ControllerChange) -> None:
        self._maybe_resign()

    def _process_expire(self, _: ev.Expire) -> None:
        self.active_controller_id = -1
        self._on_controller_resignation()

    def _process_register_broker_and_reelect(self, event: ev.RegisterBrokerAndReelect) -> None:
        self.broker_epoch = self._zk.register_broker(self._broker_info)
        self._on_registered(self.broker_epoch)
        self._process_reelect(event)

    # ---- handlers: brokers -------------------------------------------------------------------

    def _process_broker_change(self, _: ev.BrokerChange) -> None:
        if not self.is_active:
            if not self.flags.no_is_active_guard:
                return
            # V4 (KAFKA-4447): without the guard the handler acts, and its read re-arms its own watch
            # (0.10's ZkClient listeners outlived resignation).
            self._zk.register_znode_child_change_handler(self.broker_change_handler)
        ctx = self.context
        current = {b.id: (b, e) for b, e in self._zk.get_all_broker_and_epochs_in_cluster().items()}
        known = ctx.live_or_shutting_down_broker_ids
        new = sorted(set(current) - known)
        dead = sorted(known - set(current))
        if self.flags.broker_change_by_id_only:   # V5 (KAFKA-7235): a fast bounce goes unnoticed
            bounced = []
        else:
            epochs = ctx.live_broker_id_and_epochs
            bounced = sorted(b for b in set(current) & known if current[b][1] > epochs[b])
        if new or dead or bounced:
            self._timeline.append("broker change", self.broker_id, epoch=ctx.epoch,
                                  detail=f"new {new}, dead {dead}, bounced {bounced}")
        for b in new:
            self.channel_manager.add_broker(b)
        for b in bounced:
            self.channel_manager.remove_broker(b)
            self.channel_manager.add_broker(b)
        for b in dead:
            self.channel_manager.remove_broker(b)
        if new:
            ctx.add_live_brokers(dict(current[b] for b in new))
            self._on_broker_startup(new)
        if bounced:
            ctx.remove_live_brokers(bounced)
            self._on_broker_failure(bounced)
            ctx.add_live_brokers(dict(current[b] for b in bounced))
            self._on_broker_startup(bounced)
        if dead:
            ctx.remove_live_brokers(dead)
            self._on_broker_failure(dead)

    def _on_broker_startup(self, new_brokers: list[int]) -> None:
        ctx = self.context
        for b in new_brokers:
            ctx.replicas_on_offline_dirs.pop(b, None)
        self.send_update_metadata_request(sorted(ctx.live_or_shutting_down_broker_ids - set(new_brokers)), [])
        self.send_update_metadata_request(new_brokers, ctx.partitions_with_leaders())
        replicas = ctx.replicas_on_brokers(new_brokers)
        self.replica_state_machine.handle_state_changes(replicas, R.OnlineReplica)
        self.partition_state_machine.trigger_online_partition_state_change()
        new_set = set(new_brokers)
        self._maybe_resume_reassignments(lambda tp, assignment: bool(new_set & set(self._target_of(assignment))))
        deleting = {r.topic for r in replicas if self.topic_deletion_manager.is_topic_queued_up_for_deletion(r.topic)}
        if deleting:
            self.topic_deletion_manager.resume_deletion_for_topics(deleting)

    def _on_broker_failure(self, dead_brokers: list[int]) -> None:
        ctx = self.context
        for b in dead_brokers:
            ctx.replicas_on_offline_dirs.pop(b, None)
        ctx.shutting_down_broker_ids -= set(dead_brokers)
        self._on_replicas_become_offline(ctx.replicas_on_brokers(dead_brokers))

    def _on_replicas_become_offline(self, replicas: list[PartitionAndReplica]) -> None:
        deletion = self.topic_deletion_manager
        for_deletion = [r for r in replicas if deletion.is_topic_queued_up_for_deletion(r.topic)]
        not_for_deletion = [r for r in replicas if not deletion.is_topic_queued_up_for_deletion(r.topic)]
        with_offline_leader = self.context.partitions_with_offline_leader()
        self.partition_state_machine.handle_state_changes(with_offline_leader, P.OfflinePartition)
        self.partition_state_machine.trigger_online_partition_state_change()
        self.replica_state_machine.handle_state_changes(not_for_deletion, R.OfflineReplica)
        if for_deletion:
            deletion.fail_replica_deletion(for_deletion)
        # "If replica failure did not require leader re-election, inform brokers of the offline brokers"
        # (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala, lines 463-465)
        if not with_offline_leader:
            self.send_update_metadata_request(self.context.live_or_shutting_down_broker_ids, [])

    # ---- handlers: ISR changes ---------------------------------------------------------------

    def _process_isr_change_notification(self, _: ev.IsrChangeNotification) -> None:
        if not self.is_active:
            return
        zk = self._zk
        sequence_numbers = zk.get_all_isr_change_notifications()
        try:
            partitions = sorted(set(zk.get_partitions_from_isr_change_notifications(sequence_numbers)))
            if partitions:
                self._update_leader_and_isr_cache(partitions)
                self.send_update_metadata_request(self.context.live_or_shutting_down_broker_ids, partitions)
        finally:
            zk.delete_isr_change_notifications(self.context.epoch_zk_version, sequence_numbers)

    # ---- handlers: log-directory failure -------------------------------------------------------

    def _process_log_dir_event_notification(self, _: ev.LogDirEventNotification) -> None:
        """`processLogDirEventNotification` (KafkaController.scala lines 1451-1461): ask the brokers
        named about every replica they host (`onBrokerLogDirFailure`: OnlineReplica, a
        LeaderAndIsr each), then delete the notifications read."""
        if not self.is_active:
            return
        zk = self._zk
        sequence_numbers = zk.get_all_log_dir_event_notifications()
        try:
            broker_ids = zk.get_broker_ids_from_log_dir_events(sequence_numbers)
            replicas = self.context.replicas_on_brokers(sorted(set(broker_ids)))
            self.replica_state_machine.handle_state_changes(replicas, R.OnlineReplica)
        finally:
            zk.delete_log_dir_event_notifications(self.context.epoch_zk_version, sequence_numbers)

    def _process_leader_and_isr_response_received(self, event: ev.LeaderAndIsrResponseReceived) -> None:
        """`processLeaderAndIsrResponseReceived` (KafkaController.scala lines 1187-1216): the
        partitions answered KAFKA_STORAGE_ERROR join `replicasOnOfflineDirs`, those answered
        without error leave it, and the new ones go offline (`onReplicasBecomeOffline`)."""
        if not self.is_active:
            return
        if event.error is not Errors.NONE:
            return
        offline = {tp for tp, error in event.partition_errors if error is Errors.KAFKA_STORAGE_ERROR}
        online = {tp for tp, error in event.partition_errors if error is Errors.NONE}
        dirs = self.context.replicas_on_offline_dirs
        previous = set(dirs.get(event.broker_id, ()))
        current = (previous - online) | offline
        dirs[event.broker_id] = current
        new = current - previous
        if new:
            self._on_replicas_become_offline([PartitionAndReplica(tp, event.broker_id) for tp in sorted(new)])

    def _leader_and_isr_callback(self, broker_id: int):
        """The response callback of a LeaderAndIsr for `broker_id` (runs on the send thread):
        `LeaderAndIsrResponseReceived` on the controller's queue. Only an answer that carries a
        storage error is queued, as in the model (model/broker.py: an answer without one changes
        nothing, since a broker gets a failed directory back only by restarting, which
        `onBrokerStartup` learns first)."""
        def on_response(response: LeaderAndIsrResponse) -> None:
            if any(error is Errors.KAFKA_STORAGE_ERROR for _, error in response.partition_errors):
                self.event_manager.put(ev.LeaderAndIsrResponseReceived(broker_id, response.error,
                                                                       tuple(response.partition_errors)))
        return on_response

    # ---- handlers: controlled shutdown ---------------------------------------------------------

    def controlled_shutdown(self, broker_id: int, broker_epoch: int, callback) -> None:
        """A ControlledShutdownRequest arrived: queue it (the answer goes to `callback`)."""
        self.event_manager.put(ev.ControlledShutdown(broker_id, broker_epoch, callback))

    def _process_controlled_shutdown(self, event: ev.ControlledShutdown) -> None:
        try:
            remaining = self._do_controlled_shutdown(event.id, event.broker_epoch)
        except KafkaException as error:   # Kafka: Try { doControlledShutdown(...) }, answered either way
            # Even a ControllerMovedException goes to the callback only: no resignation here (the
            # controller notices the move through its /controller watch). The requests batched
            # before the failure are dropped, as everywhere else in this implementation.
            self._clear_batches()
            event.callback(error)
            return
        event.callback(remaining)

    def _do_controlled_shutdown(self, broker_id: int, broker_epoch: int) -> frozenset[TopicPartition]:
        ctx = self.context
        if not self.is_active:
            raise ControllerMovedException("Controller moved to another broker. Aborting controlled shutdown")
        epochs = ctx.live_broker_id_and_epochs
        if broker_id not in epochs:
            raise NoSuchElementException(f"key not found: {broker_id}")
        if broker_epoch < epochs[broker_id]:
            raise StaleBrokerEpochException(f"Received controlled shutdown request from an old broker "
                                            f"epoch {broker_epoch} for broker {broker_id}")
        if broker_id not in ctx.live_or_shutting_down_broker_ids:
            raise BrokerNotAvailableException(f"Broker id {broker_id} does not exist.")
        ctx.shutting_down_broker_ids.add(broker_id)
        self._timeline.append("shutdown", broker_id, epoch=ctx.epoch, peer=self.broker_id,
                              detail=f"controller {self.broker_id} moves leadership off broker {broker_id}")
        act_on = [tp for tp in ctx.partitions_on_broker(broker_id)
                  if len(ctx.partition_replica_assignment(tp)) > 1 and tp in ctx.partition_leadership_info
                  and not self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic)]
        led = [tp for tp in act_on if ctx.partition_leadership_info[tp].leader_and_isr.leader == broker_id]
        followed = [tp for tp in act_on if ctx.partition_leadership_info[tp].leader_and_isr.leader != broker_id]
        self.partition_state_machine.handle_state_changes(led, P.OnlinePartition, Strategy.CONTROLLED_SHUTDOWN)
        batch = self.broker_request_batch
        batch.new_batch()
        for tp in followed:
            batch.add_stop_replica_request_for_brokers([broker_id], tp, delete_partition=False)
        batch.send_requests_to_brokers(ctx.epoch)
        self.replica_state_machine.handle_state_changes([PartitionAndReplica(tp, broker_id) for tp in followed],
                                                        R.OfflineReplica)
        return ctx.partition_leaders_on_broker(broker_id)

    # ---- handlers: preferred elections ---------------------------------------------------------

    def elect_leaders(self, partitions: Iterable[TopicPartition], election_type: ElectionType, callback) -> None:
        """`electLeaders`: an ElectLeaders request from the AdminClient, queued; `callback` gets
        the answer per partition (KafkaController.scala lines 1697-1703)."""
        self.event_manager.put(ev.ReplicaLeaderElection(frozenset(partitions), election_type, callback))

    def _process_replica_leader_election(self, event: ev.ReplicaLeaderElection) -> None:
        if event.partitions is not None:
            self._process_admin_replica_leader_election(event)
            return
        if not self.is_active:
            return
        zk, ctx = self._zk, self.context
        if not zk.register_znode_change_handler_and_check_existence(self.preferred_replica_election_handler):
            return
        known = [tp for tp in sorted(zk.get_preferred_replica_election()) if tp in set(ctx.all_partitions())]
        live = [tp for tp in known if not self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic)]
        electable = []
        for tp in live:
            info = ctx.partition_leadership_info.get(tp)
            if info is None:
                raise NoSuchElementException(f"partitionLeadershipInfo({tp}).get")
            if info.leader_and_isr.leader != ctx.partition_replica_assignment(tp)[0]:
                electable.append(tp)
        self._on_replica_election(electable, _ZK_TRIGGERED)

    def _process_admin_replica_leader_election(self, event: ev.ReplicaLeaderElection) -> None:
        """`processReplicaLeaderElection(Some(partitions), electionType, AdminClientTriggered, callback)`
        (KafkaController.scala lines 1726-1799): no znode or watch; unknown partitions and those of
        topics queued for deletion answered so; a preferred election where the leader is not the
        first assigned replica, an unclean one where it is -1 or not live; `onReplicaElection`
        with `OfflinePartitionLeaderElectionStrategy(allowUnclean = true)` for the unclean one.
        `partitionLeadershipInfo(partition)` throws for a partition without leadership, and the
        callback is never called (`process` logs the error)."""
        assert event.partitions is not None and event.callback is not None
        if not self.is_active:
            event.callback({tp: Errors.NOT_CONTROLLER for tp in event.partitions})
            return
        ctx = self.context
        known_partitions = set(ctx.all_partitions())
        answers: dict[TopicPartition, int | Errors] = {}
        electable: list[TopicPartition] = []
        preferred = event.election_type is ElectionType.PREFERRED
        for tp in sorted(event.partitions):
            if tp not in known_partitions:
                answers[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
            elif self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic):
                answers[tp] = Errors.INVALID_TOPIC_EXCEPTION
        for tp in sorted(event.partitions):
            if tp in answers:
                continue
            info = ctx.partition_leadership_info.get(tp)
            if info is None:
                raise NoSuchElementException(f"partitionLeadershipInfo({tp})")
            leader = info.leader_and_isr.leader
            if preferred:
                needed = leader != ctx.partition_replica_assignment(tp)[0]
            else:
                needed = leader == -1 or leader not in ctx.live_broker_ids
            if needed:
                electable.append(tp)
            else:
                answers[tp] = Errors.ELECTION_NOT_NEEDED
        strategy = Strategy.PREFERRED if preferred else Strategy.OFFLINE_ALLOW_UNCLEAN
        results = self.partition_state_machine.handle_state_changes(electable, P.OnlinePartition, strategy)
        failed = Errors.PREFERRED_LEADER_NOT_AVAILABLE if preferred else Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE
        for tp in electable:
            if tp in results:
                answers[tp] = results[tp].leader
            else:
                answers[tp] = failed if self._session_live() else Errors.UNKNOWN_SERVER_ERROR
        event.callback(answers)

    def _session_live(self) -> bool:
        """Whether the controller's ZooKeeper session still answers (a failed election on an
        expired one is SESSIONEXPIRED, answered `ApiError.fromThrowable`: UNKNOWN_SERVER_ERROR)."""
        try:
            self._zk.get_controller_id_unwatched()
        except SessionExpiredError:
            return False
        return True

    def enable_topic_unclean_leader_election(self, topic: str) -> None:
        """`enableTopicUncleanLeaderElection` (KafkaController.scala lines 197-201), called by the
        broker's config-change handler: queued only while this controller module is active."""
        if self.is_active:
            self.event_manager.put(ev.TopicUncleanLeaderElectionEnable(topic))

    def _process_topic_unclean_leader_election_enable(self, event: ev.TopicUncleanLeaderElectionEnable) -> None:
        """`processTopicUncleanLeaderElectionEnable` (lines 1103-1107)."""
        if not self.is_active:
            return
        self.partition_state_machine.trigger_online_partition_state_change(event.topic)

    def _on_replica_election(self, partitions: list[TopicPartition], trigger: str) -> dict:
        """`onReplicaElection(partitions, PREFERRED, trigger)`; a ZooKeeper-triggered one then deletes
        the admin znode and re-puts ReplicaLeaderElection so that its watch is set again (KAFKA-6146)."""
        try:
            return self.partition_state_machine.handle_state_changes(partitions, P.OnlinePartition, Strategy.PREFERRED)
        finally:
            if trigger == _ZK_TRIGGERED:
                self._zk.delete_preferred_replica_election(self.context.epoch_zk_version)
                self.event_manager.put(ev.ReplicaLeaderElection())

    def _schedule_auto_leader_rebalance_task(self, delay_s: float) -> None:
        self.kafka_scheduler.schedule("auto-leader-rebalance-task",
                                      lambda: self.event_manager.put(ev.AutoPreferredReplicaLeaderElection()), delay_s)

    def _process_auto_preferred_replica_leader_election(self, _: ev.AutoPreferredReplicaLeaderElection) -> None:
        if not self.is_active:
            return
        try:
            self._check_and_trigger_auto_leader_rebalance()
        finally:
            self._schedule_auto_leader_rebalance_task(self.config.leader_imbalance_check_interval_s)

    def _check_and_trigger_auto_leader_rebalance(self) -> None:
        """`checkAndTriggerAutoLeaderRebalance`: per preferred broker, elect the preferred leader of
        its partitions when more than `leader.imbalance.per.broker.percentage` of them are elsewhere."""
        ctx = self.context
        by_preferred: dict[int, list[TopicPartition]] = {}
        for tp in ctx.all_partitions():
            replicas = ctx.partition_replica_assignment(tp)
            if replicas and not self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic):
                by_preferred.setdefault(replicas[0], []).append(tp)
        at_once = []   # ModelAlignment.auto_rebalance_elects_all_at_once
        for preferred, partitions in sorted(by_preferred.items()):
            off = [tp for tp in partitions if tp in ctx.partition_leadership_info
                   and ctx.partition_leadership_info[tp].leader_and_isr.leader != preferred]
            if len(off) / len(partitions) > self.config.leader_imbalance_per_broker_percentage / 100:
                candidates = [tp for tp in off if not ctx.partitions_being_reassigned
                              and not self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic)
                              and tp.topic in ctx.all_topics and self._can_preferred_replica_be_leader(tp)]
                if self.alignment.auto_rebalance_elects_all_at_once:
                    at_once += candidates
                else:   # one election, one batch of requests, per preferred broker
                    self._on_replica_election(candidates, _AUTO_TRIGGERED)
        if at_once:
            self._on_replica_election(sorted(at_once), _AUTO_TRIGGERED)

    def _can_preferred_replica_be_leader(self, tp: TopicPartition) -> bool:
        ctx = self.context
        assignment = ctx.partition_replica_assignment(tp)
        isr = ctx.partition_leadership_info[tp].leader_and_isr.isr
        return bool(assignment) and ctx.is_replica_online(assignment[0], tp) and assignment[0] in isr

    # ---- handlers: topics --------------------------------------------------------------------

    def _process_topic_change(self, _: ev.TopicChange) -> None:
        if not self.is_active:
            return
        ctx = self.context
        topics = self._zk.get_all_topics_in_cluster(register_watch=True)
        new_topics = topics - ctx.all_topics
        deleted_topics = ctx.all_topics - topics
        ctx.set_all_topics(topics)
        self._register_partition_modifications_handlers(new_topics)
        added = self._zk.get_full_replica_assignment_for_topics(new_topics)
        for topic in sorted(deleted_topics):
            ctx.remove_topic(topic)
        for tp, assignment in sorted(added.items()):
            ctx.update_partition_full_replica_assignment(tp, assignment)
        if added:
            self._on_new_partition_creation(sorted(added))

    def _register_partition_modifications_handlers(self, topics: Iterable[str]) -> None:
        """`registerPartitionModificationsHandlers`: the next read of each `/brokers/topics/<t>` arms
        its data watch (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 897-903)."""
        if self.alignment.no_partition_modifications_handlers:
            return
        for topic in sorted(topics):
            handler = PartitionModificationsHandler(self.event_manager, topic)
            self.partition_modifications_handlers[topic] = handler
            self._zk.register_znode_change_handler(handler)

    def unregister_partition_modifications_handlers(self, topics: Iterable[str]) -> None:
        """`unregisterPartitionModificationsHandlers` (lines 905-909); the deletion manager's
        `mutePartitionModifications` for a deleted topic."""
        for topic in topics:
            handler = self.partition_modifications_handlers.pop(topic, None)
            if handler is not None:
                self._zk.unregister_znode_change_handler(handler.path)

    def _process_partition_modifications(self, event: ev.PartitionModifications) -> None:
        """`processPartitionModifications` (lines 1463-1505)."""
        if not self.is_active:
            return
        ctx, topic = self.context, event.topic
        assignment = self._zk.get_full_replica_assignment_for_topics([topic])
        to_add = {tp: a for tp, a in assignment.items() if not ctx.partition_replica_assignment(tp)}
        if self.topic_deletion_manager.is_topic_queued_up_for_deletion(topic):
            if to_add:
                log.info("Skipping adding partitions %s for topic %s since it is currently being deleted",
                         ",".join(str(tp.partition) for tp in sorted(to_add)), topic)
                self._restore_partition_replica_assignment(topic, assignment)
            else:
                log.info("Ignoring partition change during topic deletion as no new partitions are added")
        elif to_add:
            for tp, a in sorted(to_add.items()):
                ctx.update_partition_full_replica_assignment(tp, a)
            self._on_new_partition_creation(sorted(to_add))

    def _restore_partition_replica_assignment(self, topic: str,
                                              assignment: dict[TopicPartition, ReplicaAssignment]) -> None:
        """`restorePartitionReplicaAssignment` (lines 1464-1480): the partitions with a child under
        `/brokers/topics/<t>/partitions` keep the context's full assignment, the rest leave the znode."""
        existing = set(self._zk.get_children(TopicPartitionsZNode.path(topic), register_watch=False))
        restored = {tp: self.context.partition_full_replica_assignment(tp)
                    for tp in assignment if str(tp.partition) in existing}
        self._zk.set_topic_assignment(topic, restored, self.context.epoch_zk_version)

    def _on_new_partition_creation(self, partitions: list[TopicPartition]) -> None:
        replicas = self.context.replicas_for_partition(partitions)
        self.partition_state_machine.handle_state_changes(partitions, P.NewPartition)
        self.replica_state_machine.handle_state_changes(replicas, R.NewReplica)
        self.partition_state_machine.handle_state_changes(partitions, P.OnlinePartition, Strategy.OFFLINE)
        self.replica_state_machine.handle_state_changes(replicas, R.OnlineReplica)

    def _process_topic_deletion(self, _: ev.TopicDeletion) -> None:
        if not self.is_active:
            return
        ctx = self.context
        to_delete = set(self._zk.get_topic_deletions())
        non_existent = to_delete - ctx.all_topics
        if non_existent:
            self._zk.delete_topic_deletions(sorted(non_existent), ctx.epoch_zk_version)
        to_delete -= non_existent
        if self.config.delete_topic_enable:
            if to_delete:
                reassigning = {tp.topic for tp in ctx.partitions_being_reassigned}
                for topic in sorted(to_delete & reassigning):
                    self.topic_deletion_manager.mark_topic_ineligible_for_deletion(
                        {topic}, "topic reassignment in progress")
                self.topic_deletion_manager.enqueue_topics_for_deletion(to_delete)
        else:
            self._zk.delete_topic_deletions(sorted(to_delete), ctx.epoch_zk_version)

    def _process_topic_deletion_stop_replica_response_received(
            self, event: ev.TopicDeletionStopReplicaResponseReceived) -> None:
        if not self.is_active:
            return
        errors = dict(event.partition_errors)
        if event.request_error is not Errors.NONE:
            in_error = set(errors)
        else:
            in_error = {tp for tp, error in errors.items() if error is not Errors.NONE}
        replicas_in_error = [PartitionAndReplica(tp, event.replica_id) for tp in sorted(in_error)]
        self.topic_deletion_manager.fail_replica_deletion(replicas_in_error)
        if len(in_error) != len(errors):
            deleted = [PartitionAndReplica(tp, event.replica_id) for tp in sorted(set(errors) - in_error)]
            self.topic_deletion_manager.complete_replica_deletion(deleted)

    def _stop_replica_callback(self, broker_id: int, request: StopReplicaRequest):
        """The response callback of a StopReplica for `broker_id` (runs on the send thread)."""
        deleting = {s.topic_partition for s in request.partition_states if s.delete_partition}
        if not deleting:
            return None

        def on_response(response: StopReplicaResponse) -> None:
            # Only partitions of topics whose deletion has started go back (`isTopicDeletionInProgress`,
            # read when the response arrives), with the broker's per-partition errors.
            # A fenced request (stale broker or controller epoch) has a top-level error and no
            # per-partition errors, so it puts no event.
            ctx = self.context
            errors = tuple((tp, e) for tp, e in response.partition_errors
                           if tp.topic in ctx.topics_with_deletion_started and tp in deleting)
            if errors:
                self.event_manager.put(ev.TopicDeletionStopReplicaResponseReceived(broker_id, response.error, errors))

        return on_response

    # ---- the DeletionClient (Kafka's ControllerDeletionClient) ---------------------------------

    def delete_topic(self, topic: str, epoch_zk_version: int) -> None:
        zk = self._zk
        zk.delete_topic_znode(topic, epoch_zk_version)
        zk.delete_topic_configs([topic], epoch_zk_version)
        zk.delete_topic_deletions([topic], epoch_zk_version)

    def delete_topic_deletions(self, topics: list[str], epoch_zk_version: int) -> None:
        self._zk.delete_topic_deletions(topics, epoch_zk_version)

    def mute_partition_modifications(self, topic: str) -> None:
        self.unregister_partition_modifications_handlers([topic])

    def send_metadata_update(self, partitions: list[TopicPartition]) -> None:
        self.send_update_metadata_request(self.context.live_or_shutting_down_broker_ids, partitions)

    # ---- requests ------------------------------------------------------------------------------

    def send_update_metadata_request(self, brokers: Iterable[int], partitions: Iterable[TopicPartition]) -> None:
        batch = self.broker_request_batch
        batch.new_batch()
        batch.add_update_metadata_request_for_brokers(sorted(brokers), partitions)
        batch.send_requests_to_brokers(self.context.epoch)

    _handlers: dict = {}


_ZK_TRIGGERED = "ZkTriggered"
_AUTO_TRIGGERED = "AutoTriggered"


class _ControllerStateChangeHandler(StateChangeHandler):
    """Threaded mode: the session re-initialisation hooks of `KafkaController.startup`."""

    name = "controller-state-change-handler"

    def __init__(self, controller: KafkaController) -> None:
        self._controller = controller

    def before_initializing_session(self) -> None:
        queued = self._controller.before_initializing_session()
        # Block the new session until the Expire event is being handled: every event queued before
        # the expiry notice has then been dropped or run. (A process that dies meanwhile never will.)
        while not queued.await_processing(0.1):
            if self._controller.event_manager.is_dead:
                return

    def after_initializing_session(self) -> None:
        self._controller.after_initializing_session()


KafkaController._handlers = {
    ev.Startup: KafkaController._process_startup,
    ev.Reelect: KafkaController._process_reelect,
    ev.ControllerChange: KafkaController._process_controller_change,
    ev.Expire: KafkaController._process_expire,
    ev.RegisterBrokerAndReelect: KafkaController._process_register_broker_and_reelect,
    ev.BrokerChange: KafkaController._process_broker_change,
    ev.IsrChangeNotification: KafkaController._process_isr_change_notification,
    ev.LogDirEventNotification: KafkaController._process_log_dir_event_notification,
    ev.LeaderAndIsrResponseReceived: KafkaController._process_leader_and_isr_response_received,
    ev.ControlledShutdown: KafkaController._process_controlled_shutdown,
    ev.ReplicaLeaderElection: KafkaController._process_replica_leader_election,
    ev.AutoPreferredReplicaLeaderElection: KafkaController._process_auto_preferred_replica_leader_election,
    ev.ZkPartitionReassignment: ReassignmentMixin._process_zk_partition_reassignment_event,
    ev.PartitionReassignmentIsrChange: ReassignmentMixin._process_partition_reassignment_isr_change,
    ev.PartitionModifications: KafkaController._process_partition_modifications,
    ev.TopicDeletion: KafkaController._process_topic_deletion,
    ev.TopicDeletionStopReplicaResponseReceived: KafkaController._process_topic_deletion_stop_replica_response_received,
    ev.TopicChange: KafkaController._process_topic_change,
    ev.TopicUncleanLeaderElectionEnable: KafkaController._process_topic_unclean_leader_election_enable,
}
