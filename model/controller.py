"""The controller module of one broker processing one event: KafkaController's handlers.

kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala. A `Controller` thaws the
broker's `Context` into mutable fields, runs the handler of the event at the head of the queue as
Kafka writes it, and freezes the context back. Handlers start with the `isActive` guard where
Kafka's do. A controller write that fails the epoch fence raises `ControllerMoved`; as in
`KafkaController.process`, the rest of the event is abandoned and the controller calls
`maybeResign`. Abstraction: the requests batched before the exception are discarded (Kafka
leaves them in the batch, where the next `newBatch` would find them).

Events (`EventKind`) and their handlers:

    Startup                   arm the /controller watch; elect()
    Reelect                   maybeResign(); elect()
    ControllerChange          maybeResign()
    Expire                    resign; the ZooKeeper client then opens a new session and puts
                              RegisterBrokerAndReelect
    RegisterBrokerAndReelect  register /brokers/ids/<id> (new broker epoch); Reelect
    BrokerChange              new, dead and bounced brokers (by broker epoch); onBrokerStartup /
                              onBrokerFailure
    IsrChangeNotification     refresh the cache from ZK, UpdateMetadata, delete the notifications
                              (2.6 completes no reassignment here)
    LogDirEventNotification   a broker lost a log directory: OnlineReplica for every replica of
                              the brokers named (a LeaderAndIsr asking each), delete the notifications
    LeaderAndIsrResponseReceived   partitions answered KAFKA_STORAGE_ERROR join
                              `replicasOnOfflineDirs`; the new ones: onReplicasBecomeOffline
    ControlledShutdown        move leadership off the broker, StopReplica and ISR shrink for the
                              partitions it follows; answer with the partitions it still leads
    ReplicaLeaderElection     preferred election for /admin/preferred_replica_election; or, from
                              the AdminClient (ElectLeaders), a preferred or unclean election of
                              one partition, answered per partition
    TopicUncleanLeaderElectionEnable   unclean election switched on for a topic at run time:
                              triggerOnlinePartitionStateChange(topic)
    AutoPreferredReplicaLeaderElection   the scheduled rebalance
    ZkPartitionReassignment, PartitionReassignmentIsrChange   reassignment (reassignment.py)
    TopicDeletion, TopicDeletionStopReplicaResponseReceived   deletion (topic_deletion.py): a
                              StopReplica answered KAFKA_STORAGE_ERROR fails the replica's deletion
    TopicChange               forget deleted topics (removeTopic); a (re-)created topic:
                              onNewPartitionCreation
    PartitionModifications    partitions added to a topic: onNewPartitionCreation, or, for a
                              topic queued for deletion, the old assignment written back
"""

from __future__ import annotations

from kcm.model.cluster import (
    CONTROLLER_WATCHES,
    FAILED_SHIFT,
    NO_ZNODE,
    NONE,
    PARTITION_STATE_SHIFT,
    TOPIC_SHIFT,
    ApiError,
    Context,
    ElectionType,
    ElectLeadersAnswer,
    Event,
    EventKind,
    Shutdown,
    Watch,
    bits,
    empty_context,
    mask_of,
    partition_watch,
    topic_watch,
)
from kcm.model.reassignment import ReassignmentMixin
from kcm.model.state_machines import RequestBatch, StateMachinesMixin, Strategy
from kcm.model.states import PartitionState as P
from kcm.model.states import ReplicaState as R
from kcm.model.topic_deletion import TopicDeletionMixin
from kcm.model.world import ControllerMoved, KafkaError, Overflow, SessionExpired, World

_ALL_PARTITION_WATCHES = ~((1 << PARTITION_STATE_SHIFT) - 1)


class BeyondEpochBound(Overflow):
    """An election would take the controller epoch past `ModelConfig.controller_epoch_bound`; like
    an event queue overflow, the step is not taken (a TLC state constraint, see model/config.py)."""


class Controller(StateMachinesMixin, TopicDeletionMixin, ReassignmentMixin):
    """Broker `me`'s controller module during one step."""

    def __init__(self, w: World, me: int) -> None:
        self.w = w
        self.me = me
        self.flags = w.flags
        self.batch = RequestBatch()
        self._ctx = w.brokers[me].ctx
        self._thaw(self._ctx)
        self.active = w.brokers[me].active

    def _thaw(self, ctx: Context) -> None:
        self.epoch = ctx.epoch
        self.live = ctx.live
        self.broker_epochs = list(ctx.broker_epochs)
        self.shutting_down = ctx.shutting_down
        self.assignment = list(ctx.assignment)
        self.adding = list(ctx.adding)
        self.removing = list(ctx.removing)
        self.reassigning = ctx.reassigning
        self.leadership = list(ctx.leadership)
        self.partition_states = list(ctx.partition_states)
        self.replica_states = [list(r) for r in ctx.replica_states]
        self.topics_to_delete = ctx.topics_to_delete
        self.topics_ineligible = ctx.topics_ineligible
        self.topics_deletion_started = ctx.topics_deletion_started
        self.channel = ctx.channel
        self.offline_dirs = list(ctx.offline_dirs)

    def freeze(self) -> None:
        ctx = Context(self.epoch, self.live, tuple(self.broker_epochs), self.shutting_down,
                      tuple(self.assignment), tuple(self.adding), tuple(self.removing), self.reassigning,
                      tuple(self.leadership), tuple(self.partition_states),
                      tuple(tuple(r) for r in self.replica_states),
                      self.topics_to_delete, self.topics_ineligible, self.topics_deletion_started, self.channel,
                      tuple(self.offline_dirs))
        broker = self.w.brokers[self.me]
        if ctx == self._ctx:
            # Most events change no context (an inactive module's handlers return at once): keep
            # the very record, so that the broker record and its cached fingerprint are kept too.
            if self.active == broker.active and broker.ctx is self._ctx:
                return
            ctx = self._ctx
        self.w.brokers[self.me] = broker._replace(active=self.active, ctx=ctx)

    def live_brokers(self) -> tuple[int, ...]:
        """`liveOrShuttingDownBrokerIds`."""
        return bits(self.live)

    # ---- processing one event --------------------------------------------------------------

    def process(self, event: Event) -> None:
        """`KafkaController.process`: run the handler; ControllerMoved -> maybeResign."""
        try:
            try:
                _HANDLERS[event.kind](self, event)
            except ControllerMoved:
                self.batch.clear()
                self.maybe_resign()
        except (KafkaError, SessionExpired):
            self.batch.clear()
        self.freeze()

    # ---- election, failover, resignation ---------------------------------------------------

    def elect(self) -> None:
        """`elect()`: if /controller exists, note who it is; else win it with one multi-op."""
        w = self.w
        controller = self.zk.controller
        if controller != NONE:
            self.active = controller == self.me
            return
        # registerControllerAndIncrementControllerEpoch: multi(create ephemeral /controller,
        # setData /controller_epoch = epoch+1 @ version) (kafka@2.6.x:.../zk/KafkaZkClient.scala)
        epoch = w.zk.controller_epoch + 1
        if epoch > w.cfg.controller_epoch_bound:
            raise BeyondEpochBound(self.me)
        w.zk = w.zk._replace(controller=self.me, controller_epoch=epoch)
        w.fire_controller_change(deleted=False)
        if self.flags.controller_epoch_listener:  # V2 (KAFKA-1096): every controller adopts the new epoch
            for b, broker in enumerate(w.brokers):
                if b != self.me and broker.active:
                    w.brokers[b] = broker._replace(ctx=broker.ctx._replace(epoch=epoch))
        self.epoch = epoch
        self.active = True
        try:
            self.on_controller_failover()
        except KafkaError:
            # `case t: Throwable => triggerControllerMove()` (kafka@2.6.x:core/src/main/scala/kafka/
            # controller/KafkaController.scala `elect`, lines 1365-1368). ControllerMoved goes on to
            # `process`, which calls maybeResign as `elect`'s own catch does.
            self.batch.clear()
            self.trigger_controller_move()

    def trigger_controller_move(self) -> None:
        """`triggerControllerMove` (KafkaController.scala lines 1308-1323): if /controller still names
        this broker, resign, then delete /controller (fenced by the epoch's zkVersion read before
        resigning); a failed check means the controller has moved already. The delete is Kafka's own
        step after resigning, not a write by an inactive controller: it is not marked as one.

        The delete puts Reelect at every broker whose /controller watch is armed. In the model
        that is this broker alone: the election's create in the same step spent every other
        broker's watch, and no broker can re-arm it in the middle of this event, so this broker
        fails over next. In Kafka 2.6 the other brokers that processed their ControllerChange
        while the failover ran are re-armed and get Reelect too (docs/model.md, "Abstractions and
        omissions": events are atomic)."""
        w = self.w
        # `zkClient.getControllerId` reads /controller, whose handler is registered: the read arms
        # the watch again (the election's own create spent it), so the delete below puts Reelect at
        # this broker too
        w.arm(self.me, Watch.CONTROLLER)
        self.active = self.zk.controller == self.me
        if not self.active:
            return
        expected = self.epoch  # `controllerContext.epochZkVersion` (the model's zkVersion is the epoch)
        self.active = False
        self.on_controller_resignation()
        try:
            w.check_epoch(self.me, expected)
        except ControllerMoved:
            return
        w.zk = w.zk._replace(controller=NONE)
        w.fire_controller_change(deleted=True)

    def maybe_resign(self) -> None:
        was_active = self.active
        self.w.arm(self.me, Watch.CONTROLLER)
        self.active = self.w.zk.controller == self.me
        if was_active and not self.active:
            self.on_controller_resignation()

    def on_controller_resignation(self) -> None:
        """Unregister the handlers, shut down the channel manager (dropping queued requests), reset the context."""
        w = self.w
        w.disarm(self.me, CONTROLLER_WATCHES | (w.zk.watches[self.me] & _ALL_PARTITION_WATCHES))
        for d in range(w.nb):
            w.drop_channel(self.me, d)
        if self.flags.resignation_keeps_context:
            self._reset_context_keeping_stale()
        else:
            self._thaw(empty_context(w.nb, w.np))

    def _reset_context_keeping_stale(self) -> None:
        """V12 (KAFKA-5310, before 0.11.0.0): `onControllerResignation` shut the state machines down
        (their states cleared), reset the deletion manager, shut the channel manager down and set
        `epoch = 0`, and left the rest of the context as it was: live brokers, assignments,
        leadership, shutting-down brokers, partitions being reassigned
        (kafka@0.10.2.2:core/src/main/scala/kafka/controller/KafkaController.scala
        onControllerResignation; the fix added `resetControllerContext()`)."""
        kept = (self.live, self.broker_epochs, self.shutting_down, self.assignment, self.adding, self.removing,
                self.reassigning, self.leadership)
        self._thaw(empty_context(self.w.nb, self.w.np))
        (self.live, self.broker_epochs, self.shutting_down, self.assignment, self.adding, self.removing,
         self.reassigning, self.leadership) = kept

    def on_controller_failover(self) -> None:
        """`onControllerFailover`, step by step in Kafka's order."""
        w = self.w
        # 1. register the handlers; the node handlers check existence, which arms their watches
        w.arm(self.me, Watch.PREFERRED | Watch.REASSIGN)
        # 2. delete pending log-dir event and ISR-change notifications, unread (getChildren arms
        # the child watches; the LeaderAndIsr requests of the failover ask the brokers instead)
        w.arm(self.me, Watch.LOG_DIR_EVENT)
        self.delete_log_dir_event_notifications()
        w.arm(self.me, Watch.ISR_CHANGE)
        self.delete_isr_change_notifications()
        # 3. initializeControllerContext (reading the children arms the broker and topic watches)
        w.arm(self.me, Watch.BROKER_IDS | Watch.TOPICS)
        zk = self.zk
        if w.cfg.adds_partitions:
            # `registerPartitionModificationsHandlers(allTopics)`, then `getFullReplicaAssignmentForTopics`
            # reads each `/brokers/topics/<t>`, which arms its data watch (lines 729-731)
            w.arm(self.me, mask_of(TOPIC_SHIFT + t for t in range(w.cfg.topics) if zk.assignment[t * w.ppt]))
        self.live = mask_of(b for b in range(w.nb) if zk.broker_epochs[b])
        self.broker_epochs = list(zk.broker_epochs)
        self.assignment = list(zk.assignment)
        self.adding = list(zk.adding)
        self.removing = list(zk.removing)
        stale_reassigning = self.reassigning   # 0 unless V12 kept the earlier term's
        self.reassigning = mask_of(p for p in range(w.np) if zk.adding[p] or zk.removing[p])
        if self.flags.resignation_keeps_context:
            # `partitionsBeingReassigned.add(topicPartition)` adds to the set, which with V12 still
            # holds the earlier term's partitions (kafka@2.6.x:core/src/main/scala/kafka/controller/
            # KafkaController.scala initializeControllerContext; kafka@0.10.2.2: `partitionsBeingReassigned
            # ++= partitionsToReassign` in initializePartitionReassignment, the KAFKA-5310 report)
            self.reassigning |= stale_reassigning
        self.shutting_down = 0
        self.leadership = [zk.partitions[p] if zk.assignment[p] else NO_ZNODE for p in range(w.np)]
        self.channel = self.live
        # 4. topic deletions in progress (getChildren arms the watch)
        w.arm(self.me, Watch.DELETE_TOPICS)
        existing = mask_of(t for t in range(w.cfg.topics) if zk.assignment[t * w.ppt])
        offline_topics = mask_of(w.topic_of(p) for p in range(w.np)
                                 for r in self.assignment[p] if not self.is_replica_online(r, p))
        reassigning_topics = mask_of(w.topic_of(p) for p in bits(self.reassigning))
        self.init_topic_deletion(zk.delete_topics & existing, offline_topics | reassigning_topics)
        # 5. UpdateMetadata to every live broker before any LeaderAndIsr
        self.send_update_metadata(self.live_brokers())
        # 6. the state machines
        self.replica_state_machine_startup()
        self.partition_state_machine_startup()
        # 7. reassignments, deletions, pending preferred elections
        self.initialize_partition_reassignments()
        self.try_topic_deletion()
        self.on_replica_election(self.fetch_pending_preferred_replica_elections(), Strategy.PREFERRED,
                                 zk_triggered=True)

    def fetch_pending_preferred_replica_elections(self) -> list[int]:
        """`fetchPendingPreferredReplicaElections` (kafka@2.6.x:core/src/main/scala/kafka/controller/
        KafkaController.scala, lines 750-768): a partition of an existing topic is done when its
        leader is the preferred replica, read with `partitionLeadershipInfo(partition)`, which throws
        for a partition without leadership (no state znode: none of its replicas was ever live, or
        its topic was queued for deletion before it got a leader), before the topic-deletion filter.
        The failover then fails and the controller moves (`elect`)."""
        w = self.w
        pending = []
        for p in bits(self.zk.preferred):
            if not self.assignment[p]:
                continue  # the topic was deleted
            if self.leadership[p] == NO_ZNODE:
                raise KafkaError("NoSuchElementException: partitionLeadershipInfo(partition) of a pending "
                                 "preferred election")
            if (self.leadership[p].leader != self.assignment[p][0]
                    and not self.is_topic_queued_for_deletion(w.topic_of(p))):
                pending.append(p)
        return pending

    def replica_state_machine_startup(self) -> None:
        """`ReplicaStateMachine.startup`: Online if the broker is online, else DeletionIneligible;
        then online replicas -> OnlineReplica and the others -> OfflineReplica (2.4+)."""
        online, offline = [], []
        for p in range(self.w.np):
            for b in self.assignment[p]:
                if self.is_replica_online(b, p):
                    self.replica_states[p][b] = R.OnlineReplica
                    online.append((p, b))
                else:
                    self.replica_states[p][b] = R.ReplicaDeletionIneligible
                    offline.append((p, b))
        self.handle_replica_state_changes(online, R.OnlineReplica)
        if self.flags.failover_leaves_offline_replicas:  # V10 (KAFKA-3143, before 2.3): offline replicas left alone
            return
        self.handle_replica_state_changes(offline, R.OfflineReplica)

    def partition_state_machine_startup(self) -> None:
        """`PartitionStateMachine.startup`: New without leadership info, Online if the leader is
        online, else Offline; then New and Offline partitions -> OnlinePartition."""
        for p in range(self.w.np):
            if not self.assignment[p]:
                continue
            z = self.leadership[p]
            if z == NO_ZNODE:
                self.partition_states[p] = P.NewPartition
            elif self.is_replica_online(z.leader, p):
                self.partition_states[p] = P.OnlinePartition
            else:
                self.partition_states[p] = P.OfflinePartition
        self.trigger_online_partition_state_change()

    # ---- handlers --------------------------------------------------------------------------

    def process_startup(self, _: Event) -> None:
        self.w.arm(self.me, Watch.CONTROLLER)
        self.elect()

    def process_reelect(self, _: Event) -> None:
        self.maybe_resign()
        self.elect()

    def process_controller_change(self, _: Event) -> None:
        self.maybe_resign()

    def process_expire(self, _: Event) -> None:
        self.active = False
        self.on_controller_resignation()
        # The ZooKeeper client creates the new session once Expire is being processed
        # (`beforeInitializingSession` waits for it), then puts RegisterBrokerAndReelect.
        w = self.w
        w.zk = w.zk._replace(session=w.zk.session | 1 << self.me)
        w.brokers[self.me] = w.brokers[self.me]._replace(connected=True)
        w.enqueue(self.me, Event(EventKind.RegisterBrokerAndReelect))

    def process_register_broker_and_reelect(self, _: Event) -> None:
        w = self.w
        epoch = w.register_broker(self.me)
        w.brokers[self.me] = w.brokers[self.me]._replace(epoch=epoch)
        self.process_reelect(_)

    def process_broker_change(self, _: Event) -> None:
        """`processBrokerChange`: diff the registered brokers against the cache, by id and epoch."""
        if not self.active and not self.flags.no_is_active_guard:  # V4 removes the guard
            return
        w = self.w
        w.arm(self.me, Watch.BROKER_IDS)
        zk_epochs = self.zk.broker_epochs
        current = mask_of(b for b in range(w.nb) if zk_epochs[b])
        new = current & ~self.live
        dead = self.live & ~current
        if self.flags.broker_change_by_id_only:  # V5 (KAFKA-7235): a fast bounce goes unnoticed
            bounced = 0
        else:
            bounced = mask_of(b for b in bits(current & self.live) if zk_epochs[b] > self.broker_epochs[b])
        for b in bits(bounced | dead):
            w.drop_channel(self.me, b)  # controllerChannelManager.removeBroker
        self.channel = (self.channel & ~dead) | new | bounced
        if new:
            self._add_live_brokers(new)
            self.on_broker_startup(new)
        if bounced:
            self.live &= ~bounced
            self.on_broker_failure(bounced)
            self._add_live_brokers(bounced)
            self.on_broker_startup(bounced)
        if dead:
            self.live &= ~dead
            for b in bits(dead):
                self.broker_epochs[b] = 0
            self.on_broker_failure(dead)

    def _add_live_brokers(self, brokers: int) -> None:
        self.live |= brokers
        for b in bits(brokers):
            self.broker_epochs[b] = self.zk.broker_epochs[b]

    def on_broker_startup(self, new: int) -> None:
        """`onBrokerStartup`: the brokers' offline directories forgotten (a restart brings them
        back), UpdateMetadata, the new replicas online, reassignments and deletions resumed."""
        self.forget_offline_dirs(new)
        self.send_update_metadata(bits(self.live & ~new))
        self.send_update_metadata(bits(new))
        replicas = self.replicas_on_brokers(new)
        self.handle_replica_state_changes(replicas, R.OnlineReplica)
        self.trigger_online_partition_state_change()
        self.resume_reassignments_for(new)
        deleting = mask_of(self.w.topic_of(p) for p, _ in replicas if self.is_topic_queued_for_deletion(self.w.topic_of(p)))  # noqa: E501 - wrapped, it would renumber the mutants below
        if deleting:
            self.resume_deletion_for_topics(deleting)

    def on_broker_failure(self, dead: int) -> None:
        """`onBrokerFailure`: forget the brokers' offline directories and shutdown; their replicas
        become offline."""
        self.forget_offline_dirs(dead)
        self.shutting_down &= ~dead
        self.on_replicas_become_offline(self.replicas_on_brokers(dead))

    def on_replicas_become_offline(self, replicas) -> None:
        """`onReplicasBecomeOffline`: elect leaders where they went offline, then the replicas offline."""
        w = self.w
        for_deletion = [(p, b) for p, b in replicas if self.is_topic_queued_for_deletion(w.topic_of(p))]
        others = [(p, b) for p, b in replicas if not self.is_topic_queued_for_deletion(w.topic_of(p))]
        without_leader = self.partitions_with_offline_leader()
        self.handle_partition_state_changes(without_leader, P.OfflinePartition)
        self.trigger_online_partition_state_change()
        self.handle_replica_state_changes(others, R.OfflineReplica)
        if for_deletion:
            self.fail_replica_deletion(for_deletion)
        # "If replica failure did not require leader re-election, inform brokers of the offline
        # brokers" (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
        # `onReplicasBecomeOffline`, lines 463-465: `if (partitionsWithoutLeader.isEmpty)`)
        if not without_leader:
            self.send_update_metadata(self.live_brokers())

    def process_isr_change_notification(self, _: Event) -> None:
        """`processIsrChangeNotification`."""
        if not self.active:
            return
        w = self.w
        w.arm(self.me, Watch.ISR_CHANGE)
        partitions = [p for p in bits(self.zk.isr_changes) if self.assignment[p]]
        try:
            if partitions:
                for p in partitions:  # updateLeaderAndIsrCache
                    self.leadership[p] = w.zk.partitions[p]
                self.new_batch()
                self.add_update_metadata(self.live_brokers())
                self.send_requests_to_brokers()
                # (2.6 completes no reassignment here: the reassigning partition's state znode
                # watch does, PartitionReassignmentIsrChange. Completing from here came with
                # AlterIsr in 2.7, KAFKA-10521; kafka@2.6.x:core/src/main/scala/kafka/controller/
                # KafkaController.scala `processIsrChangeNotification`, lines 1676-1695.)
        finally:
            self.delete_isr_change_notifications()

    def delete_isr_change_notifications(self) -> None:
        """`deleteIsrChangeNotifications(epochZkVersion)`: fenced; deleting children fires the child watch."""
        w = self.w
        if not self.zk.isr_changes:
            return
        w.check_epoch(self.me, self.epoch)
        self.mark_zk_write()
        w.zk = w.zk._replace(isr_changes=0)
        w.fire(Watch.ISR_CHANGE, Event(EventKind.IsrChangeNotification))

    def forget_offline_dirs(self, brokers: int) -> None:
        """`brokers.foreach(controllerContext.replicasOnOfflineDirs.remove)` (kafka@2.6.x:core/src/main/
        scala/kafka/controller/KafkaController.scala lines 348 and 411)."""
        for b in bits(brokers):
            self.offline_dirs[b] = 0

    def process_log_dir_event_notification(self, _: Event) -> None:
        """`processLogDirEventNotification` (kafka@2.6.x:core/src/main/scala/kafka/controller/
        KafkaController.scala lines 1451-1461): read the notifications (arming the child watch),
        `onBrokerLogDirFailure` for the brokers they name, and delete them in a `finally`.
        `onBrokerLogDirFailure` (lines 325-330) asks each of those brokers about every replica it
        hosts: `handleStateChanges(replicasOnBrokers, OnlineReplica)` sends them LeaderAndIsr, which
        a replica on a failed directory answers with KAFKA_STORAGE_ERROR."""
        if not self.active:
            return
        w = self.w
        w.arm(self.me, Watch.LOG_DIR_EVENT)
        brokers = self.zk.log_dir_events
        try:
            self.handle_replica_state_changes(self.replicas_on_brokers(brokers), R.OnlineReplica)
        finally:
            self.delete_log_dir_event_notifications()

    def delete_log_dir_event_notifications(self) -> None:
        """`deleteLogDirEventNotifications(epochZkVersion)`: fenced; deleting children fires the child watch."""
        w = self.w
        if not self.zk.log_dir_events:
            return
        w.check_epoch(self.me, self.epoch)
        self.mark_zk_write()
        w.zk = w.zk._replace(log_dir_events=0)
        w.fire(Watch.LOG_DIR_EVENT, Event(EventKind.LogDirEventNotification))

    def process_leader_and_isr_response(self, event: Event) -> None:
        """`processLeaderAndIsrResponseReceived` (kafka@2.6.x:core/src/main/scala/kafka/controller/
        KafkaController.scala lines 1187-1216): the partitions `b` answered with KAFKA_STORAGE_ERROR
        join `replicasOnOfflineDirs(b)`, and those new there go through `onReplicasBecomeOffline`:
        leaders elected where `b` led, `b`'s replicas OfflineReplica (out of the ISR)."""
        if not self.active:
            return
        b, storage_errors = event.a, event.b
        previous = self.offline_dirs[b]
        self.offline_dirs[b] = previous | storage_errors
        new = storage_errors & ~previous
        if new:
            self.on_replicas_become_offline([(p, b) for p in bits(new)])

    def process_controlled_shutdown(self, event: Event) -> None:
        """`processControlledShutdown`; the answer goes straight back to the requesting broker."""
        b, broker_epoch = event.a, event.b
        try:  # `Try { doControlledShutdown(id, brokerEpoch) }`: every failure goes to the callback
            remaining = self.do_controlled_shutdown(b, broker_epoch)
        except (ControllerMoved, SessionExpired, KafkaError):
            self.batch.clear()
            remaining = None
        self.answer_controlled_shutdown(b, broker_epoch, remaining)

    def do_controlled_shutdown(self, b: int, broker_epoch: int) -> int | None:
        """`doControlledShutdown`: None when the request is refused, else the partitions `b` still leads."""
        if not self.active:
            return None  # ControllerMovedException
        if broker_epoch < self.broker_epochs[b]:
            return None  # StaleBrokerEpochException
        if not self.live >> b & 1:
            return None  # BrokerNotAvailableException
        self.shutting_down |= 1 << b
        w = self.w
        act_on = [p for p in range(w.np) if b in self.assignment[p] and len(self.assignment[p]) > 1
                  and self.leadership[p] != NO_ZNODE and not self.is_topic_queued_for_deletion(w.topic_of(p))]
        led = [p for p in act_on if self.leadership[p].leader == b]
        followed = [p for p in act_on if self.leadership[p].leader != b]
        self.handle_partition_state_changes(led, P.OnlinePartition, Strategy.CONTROLLED_SHUTDOWN)
        self.new_batch()
        for p in followed:
            self.add_stop_replica((b,), p, delete=False)
        self.send_requests_to_brokers()
        self.handle_replica_state_changes([(p, b) for p in followed], R.OfflineReplica)
        # `partitionLeadersOnBroker`: led by `b`, more than one replica, topic not being deleted
        return mask_of(p for p in range(w.np) if self.leadership[p] != NO_ZNODE
                       and self.leadership[p].leader == b and len(self.assignment[p]) > 1
                       and not self.is_topic_queued_for_deletion(w.topic_of(p)))

    def answer_controlled_shutdown(self, b: int, broker_epoch: int, remaining: int | None) -> None:
        """The controller's callback answers on the requester's own connection whatever the
        outcome (an error answer for a refusal: `controlledShutdownCallback`,
        kafka@2.6.x:core/src/main/scala/kafka/server/KafkaApis.scala lines 335-344), and the
        process that sent it waits there (`KafkaServer.controlledShutdown`'s `sendAndReceive`,
        kafka@2.6.x:core/src/main/scala/kafka/server/KafkaServer.scala lines 581-630) and retries
        on an error. A session expiry does not restart that process: it re-registers with a higher
        broker epoch (`processRegisterBrokerAndReelect`) and still reads the answer to the request
        it sent with the old one. Only a process that stopped loses it (its connection died)."""
        w = self.w
        broker = w.brokers[b]
        # A request sent with a later epoch than the broker's is from no process still running.
        # Limit: the state does not tell the process a request came from, so with two or more
        # controlled shutdowns per run an answer to a stopped process's request could reach its
        # restarted successor, if that one is awaiting its own; with at most one per run an
        # awaiting broker is the requester.
        if not broker.up or broker_epoch > broker.epoch or broker.shutdown is not Shutdown.AWAITING:
            return  # the requester is gone: nobody reads the answer
        w.brokers[b] = broker._replace(shutdown=Shutdown.DONE if remaining == 0 else Shutdown.RETRY)

    def process_replica_leader_election(self, event: Event) -> None:
        """`processReplicaLeaderElection(None, PREFERRED, ZkTriggered)`; an AdminClient's request
        (`event.a` its partition) goes to `process_admin_replica_leader_election`."""
        if event.a != NONE:
            self.process_admin_replica_leader_election(event.a, ElectionType(event.b))
            return
        if not self.active:
            return
        w = self.w
        w.arm(self.me, Watch.PREFERRED)
        if not self.zk.preferred:
            if w.flags.replica_election_always_reput:
                # L1 (synthetic): the re-put that re-registers the exists-watch (KAFKA-6146, done in
                # `onReplicaElection`'s finally only after an election) done here too, with no
                # znode: the event re-puts itself forever (kcm explore --liveness finds the loop).
                w.enqueue(self.me, Event(EventKind.ReplicaLeaderElection))
            return
        partitions = [p for p in bits(self.zk.preferred) if self.assignment[p]
                      and not self.is_topic_queued_for_deletion(w.topic_of(p))]
        for p in partitions:
            if self.leadership[p] == NO_ZNODE:
                # `controllerContext.partitionLeadershipInfo(partition)`, the `apply` of a mutable.Map,
                # throws NoSuchElementException before `onReplicaElection` (kafka@2.6.x:core/src/main/
                # scala/kafka/controller/KafkaController.scala `processReplicaLeaderElection`, line 1763)
                raise KafkaError("partitionLeadershipInfo(partition) on a partition without a leader")
        electable = [p for p in partitions if self.leadership[p].leader != self.assignment[p][0]]
        self.on_replica_election(electable, Strategy.PREFERRED, zk_triggered=True)

    def process_admin_replica_leader_election(self, p: int, election_type: ElectionType) -> None:
        """`processReplicaLeaderElection(Some(Set(p)), electionType, AdminClientTriggered, callback)`
        (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala lines 1726-1799),
        for a request naming one partition: NOT_CONTROLLER when not active; no znode or watch is
        touched; an unknown partition and one of a topic queued for deletion are answered so; a
        preferred election is needed when the cached leader is not the first assigned replica, an
        unclean one when it is -1 or not in `liveBrokerIds` (live and not shutting down); the
        election runs through `onReplicaElection`, whose unclean strategy is
        `OfflinePartitionLeaderElectionStrategy(allowUnclean = true)` (lines 684-700); a partition
        it fails to elect is answered PREFERRED_LEADER_NOT_AVAILABLE or
        ELIGIBLE_LEADERS_NOT_AVAILABLE. The callback's answer is observed (`ElectLeadersAnswer`).

        Two ways leave the request unanswered, as in 2.6: `partitionLeadershipInfo(partition)`
        (a mutable.Map's `apply`, lines 1763 and 1767) throws NoSuchElementException for a
        partition the controller caches no leadership for, and a controller write fenced by a
        newer epoch throws ControllerMovedException out of `handleStateChanges`; `process` then
        logs the error or resigns (lines 1877-1882), and the callback is never called."""
        w = self.w
        if not self.active:
            self._answer(p, election_type, ApiError.NOT_CONTROLLER)
            return
        if not self.assignment[p]:  # `controllerContext.allPartitions.contains(tp)`
            self._answer(p, election_type, ApiError.UNKNOWN_TOPIC_OR_PARTITION)
            return
        if self.is_topic_queued_for_deletion(w.topic_of(p)):
            self._answer(p, election_type, ApiError.INVALID_TOPIC_EXCEPTION)
            return
        if self.leadership[p] == NO_ZNODE:
            raise KafkaError("NoSuchElementException: partitionLeadershipInfo(partition) of an ElectLeaders request")
        leader = self.leadership[p].leader
        if election_type is ElectionType.PREFERRED:
            electable = leader != self.assignment[p][0]
            strategy = Strategy.PREFERRED
        else:
            electable = leader == NONE or not (self.live & ~self.shutting_down) >> leader & 1
            strategy = Strategy.OFFLINE_ALLOW_UNCLEAN
        if not electable:
            self._answer(p, election_type, ApiError.ELECTION_NOT_NEEDED)
            return
        # `onReplicaElection` with AdminClientTriggered: `handleStateChanges` and nothing else (no
        # znode to delete, and a failed election is answered, not thrown)
        results = self.handle_partition_state_changes([p], P.OnlinePartition, strategy)
        if p in results:
            self._answer(p, election_type, ApiError.NONE, results[p].leader)
        elif not w.zk.session >> self.me & 1:
            # the state reads and writes failed with SESSIONEXPIRED, not StateChangeFailedException
            self._answer(p, election_type, ApiError.UNKNOWN_SERVER_ERROR)
        elif election_type is ElectionType.PREFERRED:
            self._answer(p, election_type, ApiError.PREFERRED_LEADER_NOT_AVAILABLE)
        else:
            self._answer(p, election_type, ApiError.ELIGIBLE_LEADERS_NOT_AVAILABLE)

    def _answer(self, p: int, election_type: ElectionType, error: ApiError, leader: int = NONE) -> None:
        """The ElectLeaders callback: the answer goes back to the client (`KafkaApis`' response)."""
        self.w.obs.append(ElectLeadersAnswer(p, election_type, error, leader))

    def process_topic_unclean_leader_election_enable(self, event: Event) -> None:
        """`processTopicUncleanLeaderElectionEnable` (kafka@2.6.x:core/src/main/scala/kafka/controller/
        KafkaController.scala lines 1103-1107): the topic's New and Offline partitions go to
        OnlinePartition with `OfflinePartitionLeaderElectionStrategy(false)`, which reads the topic's
        config, now allowing an unclean election (PartitionStateMachine.scala
        `triggerOnlinePartitionStateChange(topic)`, lines 61-64; `collectUncleanLeaderElectionState`)."""
        if not self.active:
            return
        self.trigger_online_partition_state_change(topic=event.a)

    def on_replica_election(self, partitions, strategy: Strategy, zk_triggered: bool) -> None:
        """`onReplicaElection`; a ZooKeeper-triggered one then deletes the admin znode and re-puts
        ReplicaLeaderElection so that the exists-watch is set again (KAFKA-6146)."""
        try:
            self.handle_partition_state_changes(partitions, P.OnlinePartition, strategy)
        finally:
            if zk_triggered:
                w = self.w
                if self.zk.preferred:
                    w.check_epoch(self.me, self.epoch)
                    self.mark_zk_write()
                    w.zk = w.zk._replace(preferred=0)
                    w.fire(Watch.PREFERRED, None)
                w.enqueue(self.me, Event(EventKind.ReplicaLeaderElection))

    def process_auto_preferred_replica_leader_election(self, _: Event) -> None:
        """`checkAndTriggerAutoLeaderRebalance` (imbalance above 10%: any partition off its preferred leader)."""
        if not self.active:
            return
        w = self.w
        candidates = []
        for p in range(w.np):
            a = self.assignment[p]
            z = self.leadership[p]
            if (not a or z == NO_ZNODE or z.leader == a[0]
                    or self.is_topic_queued_for_deletion(w.topic_of(p))):
                continue
            online = frozenset(bits(self.online_mask(p)))
            if (self.is_replica_online(a[0], p) and not self.reassigning and a[0] in online and a[0] in z.isr):
                candidates.append(p)
        self.on_replica_election(candidates, Strategy.PREFERRED, zk_triggered=False)

    def process_zk_partition_reassignment_event(self, _: Event) -> None:
        self.process_zk_partition_reassignment()

    def process_partition_reassignment_isr_change(self, event: Event) -> None:
        if not self.active:
            return
        p = event.a
        if self.reassigning >> p & 1:
            self.w.arm(self.me, partition_watch(p))
            self.maybe_complete_reassignment(p)

    def process_topic_deletion(self, _: Event) -> None:
        """`processTopicDeletion`."""
        if not self.active:
            return
        w = self.w
        w.arm(self.me, Watch.DELETE_TOPICS)
        requested = self.zk.delete_topics
        existing = mask_of(t for t in range(w.cfg.topics) if any(self.assignment[p] for p in w.partitions_of_topic(t)))
        if requested & ~existing:
            self.delete_topic_deletion_znodes(requested & ~existing)
        topics = requested & existing
        if topics:
            reassigning = mask_of(w.topic_of(p) for p in bits(self.reassigning))
            self.mark_topic_ineligible_for_deletion(topics & reassigning)
            self.enqueue_topics_for_deletion(topics)

    def process_topic_deletion_stop_replica_response(self, event: Event) -> None:
        """`processTopicDeletionStopReplicaResponseReceived`: the replicas answered with an error (a
        storage error) fail their deletion, then the others complete it; a fenced request raises no
        event at all (model/broker.py `deliver`)."""
        if not self.active:
            return
        b, partitions = event.a, event.b
        failed = [(p, b) for p in bits(partitions >> FAILED_SHIFT)]
        deleted = [(p, b) for p in bits(partitions & ((1 << FAILED_SHIFT) - 1))]
        if failed:
            self.fail_replica_deletion(failed)
        if deleted:
            self.complete_replica_deletion(deleted)


    def process_topic_change(self, _: Event) -> None:
        """`processTopicChange`: topics gone from /brokers/topics are forgotten (`removeTopic`); new
        topics get their assignment loaded and `onNewPartitionCreation`
        (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala `processTopicChange`:
        `deletedTopics = controllerContext.allTopics -- topics`,
        `deletedTopics.foreach(controllerContext.removeTopic)`). A topic is in the context when one
        of its partitions has an assignment there. Only a controller that did not delete a topic
        itself sees it go here: one deposed by another that completed the deletion, before it resigns."""
        if not self.active:
            return
        w = self.w
        w.arm(self.me, Watch.TOPICS)
        zk = self.zk
        # `newTopics = topics -- controllerContext.allTopics`: a partition added to a known topic is
        # not new here (its PartitionModifications creates it)
        new_topics = [t for t in range(w.cfg.topics)
                      if zk.assignment[t * w.ppt] and not any(self.assignment[p] for p in w.partitions_of_topic(t))]
        new = [p for t in new_topics for p in w.partitions_of_topic(t) if zk.assignment[p]]
        deleted = [t for t in range(w.cfg.topics)
                   if any(self.assignment[p] for p in w.partitions_of_topic(t))
                   and not any(zk.assignment[p] for p in w.partitions_of_topic(t))]
        if w.cfg.adds_partitions and new_topics:
            # `registerPartitionModificationsHandlers(newTopics)`; `getFullReplicaAssignmentForTopics(newTopics)`
            # arms their data watches (lines 1439-1440)
            w.arm(self.me, mask_of(TOPIC_SHIFT + t for t in new_topics))
        for t in deleted:
            self.remove_topic(t)
        for p in new:
            self.assignment[p] = zk.assignment[p]
            self.adding[p], self.removing[p] = zk.adding[p], zk.removing[p]
        if new:
            self.on_new_partition_creation(new)

    def process_partition_modifications(self, event: Event) -> None:
        """`processPartitionModifications(topic)` (kafka@2.6.x:core/src/main/scala/kafka/controller/
        KafkaController.scala lines 1463-1505): the partitions of `/brokers/topics/<t>` the context
        has no assignment for are new. A topic queued for deletion gets its old assignment back
        (`restorePartitionReplicaAssignment`) and no partition is created; otherwise the new
        partitions are cached and created (`onNewPartitionCreation`)."""
        if not self.active:                                         # if (!isActive) return
            return
        w = self.w
        t = event.a
        zk = self.zk
        ps = w.partitions_of_topic(t)
        if zk.assignment[t * w.ppt]:
            # `getFullReplicaAssignmentForTopics(Set(topic))` reads the znode: the registered
            # handler's watch is armed again (a read of a missing znode arms nothing)
            w.arm(self.me, topic_watch(t))
        # `partitionsToBeAdded = ... controllerContext.partitionReplicaAssignment(tp).isEmpty`
        to_add = [p for p in ps if zk.assignment[p] and not self.assignment[p]]
        if self.is_topic_queued_for_deletion(t):
            if to_add:
                # "Skipping adding partitions ... since it is currently being deleted"
                self.restore_partition_replica_assignment(t)
            # else "Ignoring partition change during topic deletion as no new partitions are added"
        elif to_add:
            for p in to_add:                        # updatePartitionFullReplicaAssignment
                self.assignment[p] = zk.assignment[p]
                self.adding[p], self.removing[p] = zk.adding[p], zk.removing[p]
            self.on_new_partition_creation(to_add)

    def restore_partition_replica_assignment(self, t: int) -> None:
        """`restorePartitionReplicaAssignment` (lines 1464-1480): the partitions of the znode that
        have a child under `/brokers/topics/<t>/partitions` (created by a partition-state write:
        the model's state znode) keep the context's full assignment; every other one, the added
        partitions among them, leaves the znode. A fenced `setTopicAssignment`; the data change
        fires this controller's own watch again (then "Ignoring partition change")."""
        w = self.w
        zk = self.zk
        existing = [p for p in w.partitions_of_topic(t) if zk.assignment[p] and zk.partitions[p] != NO_ZNODE]
        w.check_epoch(self.me, self.epoch)
        self.mark_zk_write()
        assignment, adding, removing = list(zk.assignment), list(zk.adding), list(zk.removing)
        for p in w.partitions_of_topic(t):
            keep = p in existing
            assignment[p] = self.assignment[p] if keep else ()
            adding[p] = self.adding[p] if keep else ()
            removing[p] = self.removing[p] if keep else ()
        w.zk = zk._replace(assignment=tuple(assignment), adding=tuple(adding), removing=tuple(removing))
        w.fire_topic(t)

    def remove_topic(self, t: int) -> None:
        """`ControllerContext.removeTopic` as Kafka 2.6 has it (kafka@2.6.x:core/src/main/scala/kafka/
        controller/ControllerContext.scala `removeTopic`, lines 283-290): the topic leaves `allTopics`
        and `partitionAssignments`, and its partitions leave `partitionLeadershipInfo`. Nothing else:
        `topicsToBeDeleted` and `topicsWithDeletionStarted` are cleared by `completeDeleteTopic`
        itself (KAFKA-10040 moved them here in 2.7), and `topicsIneligibleForDeletion`,
        `partitionsBeingReassigned` and the partition and replica states keep their entries. So a
        deposed controller that forgets a topic through TopicChange keeps it queued for deletion;
        its next `resumeDeletions` completes it vacuously (no replica left) and the fenced
        `deleteTopic` raises ControllerMoved."""
        for p in self.w.partitions_of_topic(t):
            self.assignment[p] = self.adding[p] = self.removing[p] = ()
            self.leadership[p] = NO_ZNODE

    def on_new_partition_creation(self, partitions: list[int]) -> None:
        """New partitions: NewPartition, NewReplica, then OnlinePartition and OnlineReplica."""
        replicas = [(p, b) for p in partitions for b in self.assignment[p]]
        self.handle_partition_state_changes(partitions, P.NewPartition)
        self.handle_replica_state_changes(replicas, R.NewReplica)
        self.handle_partition_state_changes(partitions, P.OnlinePartition, Strategy.OFFLINE)
        self.handle_replica_state_changes(replicas, R.OnlineReplica)


_HANDLERS = {
    EventKind.Startup: Controller.process_startup,
    EventKind.Reelect: Controller.process_reelect,
    EventKind.ControllerChange: Controller.process_controller_change,
    EventKind.Expire: Controller.process_expire,
    EventKind.RegisterBrokerAndReelect: Controller.process_register_broker_and_reelect,
    EventKind.BrokerChange: Controller.process_broker_change,
    EventKind.IsrChangeNotification: Controller.process_isr_change_notification,
    EventKind.ControlledShutdown: Controller.process_controlled_shutdown,
    EventKind.ReplicaLeaderElection: Controller.process_replica_leader_election,
    EventKind.AutoPreferredReplicaLeaderElection: Controller.process_auto_preferred_replica_leader_election,
    EventKind.ZkPartitionReassignment: Controller.process_zk_partition_reassignment_event,
    EventKind.PartitionReassignmentIsrChange: Controller.process_partition_reassignment_isr_change,
    EventKind.TopicDeletion: Controller.process_topic_deletion,
    EventKind.TopicDeletionStopReplicaResponseReceived: Controller.process_topic_deletion_stop_replica_response,
    EventKind.TopicChange: Controller.process_topic_change,
    EventKind.PartitionModifications: Controller.process_partition_modifications,
    EventKind.TopicUncleanLeaderElectionEnable: Controller.process_topic_unclean_leader_election_enable,
    EventKind.LogDirEventNotification: Controller.process_log_dir_event_notification,
    EventKind.LeaderAndIsrResponseReceived: Controller.process_leader_and_isr_response,
}
assert set(_HANDLERS) == set(EventKind), "every event kind has a handler"
