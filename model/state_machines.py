"""The replica and partition state machines and the request batch, as the controller runs them.

kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala (ZkReplicaStateMachine),
PartitionStateMachine.scala (ZkPartitionStateMachine) and ControllerChannelManager.scala
(ControllerBrokerRequestBatch). Every `handle_*_state_changes` is Kafka's
`newBatch -> doHandleStateChanges -> sendRequestsToBrokers(epoch)`. A transition the table does
not allow is filtered out and skipped, as Kafka 1.1+ logs it (`logInvalidTransition`); the model
records the request as an observation (`Edge(valid=False)`), which coverage reports. Kafka 2.6
itself makes such requests in a few corners (docs/model.md, "Findings"), so they are reported, not
treated as violations.

Replica transitions and their side effects (from Kafka's doc comment, 2.6 code):

    NonExistent -> New            LeaderAndIsr(isNew) to the replica if the partition has a leader
                                  (fails if the replica is the leader); else only mark
    New -> Online                 add the replica to the assignment if missing; no request
    Online,Offline,Ineligible -> Online   LeaderAndIsr to the replica if the partition has a leader
    * -> Offline                  StopReplica(delete=false); with leadership info: ISR shrink
                                  (`remove_replica_from_isr`) and LeaderAndIsr to the other
                                  replicas unless the topic is being deleted; without: UpdateMetadata
    Offline -> DeletionStarted    StopReplica(delete=true)
    DeletionStarted -> Successful/Ineligible, Offline -> Ineligible   mark only
    Successful -> NonExistent     remove the replica from the assignment

Partition transitions:

    NonExistent -> New            mark only
    New -> Online                 first live replica leads, ISR = live replicas, epoch 0; create the
                                  state znode (fenced); LeaderAndIsr(isNew) to the ISR
    Online,Offline -> Online      re-read the znode; abort if a newer controller wrote it; elect
                                  with the given strategy; conditional, fenced write; LeaderAndIsr
    * -> Offline, Offline -> NonExistent   mark only

ZooKeeper failures are per partition, as in 2.6: a read or write that fails on an expired session
(a zombie controller) fails the partitions it was for (`logFailedStateChange`, they keep their
state), the rest of the handler goes on and the batch is sent; only ControllerMoved (the epoch
fence) abandons the event. A lost reply (`ZkLoseReply`, `ZkConnectionLoss`) to a partition-state
write is retried as `retryRequestsUntilConnected` does: a create then fails with NODEEXISTS, a
conditional set with BADVERSION, which the callers' loops retry (docs/model.md, "Lost ZooKeeper replies").
"""

from __future__ import annotations

from enum import IntEnum

from kcm.model.cluster import (
    NO_ZNODE,
    NONE,
    Edge,
    Election,
    Ghost,
    LeaderAndIsrPartition,
    PartitionZnode,
    Request,
    RequestKind,
    StopReplicaPartition,
    bits,
    mask_of,
)
from kcm.model.controller_protocol import ControllerBase, UpdateLeaderAndIsrResult
from kcm.model.election import (
    EPOCH_DURING_DELETE,
    LeaderAndIsr,
    controlled_shutdown_leader_election_isr_order,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassign,
    remove_replica_from_isr,
)
from kcm.model.states import PartitionState as P
from kcm.model.states import ReplicaState as R
from kcm.model.tables import PARTITION_TABLE, REPLICA_TABLE
from kcm.model.world import KafkaError, SessionExpired


class Strategy(IntEnum):
    """`PartitionLeaderElectionStrategy` (kafka@2.6.x:.../controller/PartitionStateMachine.scala)."""

    OFFLINE = 0
    OFFLINE_ALLOW_UNCLEAN = 1
    REASSIGN = 2
    PREFERRED = 3
    CONTROLLED_SHUTDOWN = 4


class RequestBatch:
    """`ControllerBrokerRequestBatch`: requests collected during one state change, sent together."""

    __slots__ = ("lair", "um", "stop")

    def __init__(self) -> None:
        self.lair: dict[int, dict[int, LeaderAndIsrPartition]] = {}
        self.um: set[int] = set()
        self.stop: dict[int, dict[int, StopReplicaPartition]] = {}

    def is_empty(self) -> bool:
        return not (self.lair or self.um or self.stop)

    def clear(self) -> None:
        self.lair.clear()
        self.um.clear()
        self.stop.clear()


class StateMachinesMixin(ControllerBase):
    """The two state machines and the batch; mixed into `kcm.model.controller.Controller`."""

    # ---- the request batch -----------------------------------------------------------------

    def new_batch(self) -> None:
        # Kafka throws IllegalStateException here when the previous batch was not sent; the model
        # discards a batch interrupted by ControllerMoved, so a batch is always empty here.
        assert self.batch.is_empty(), "newBatch on a non-empty batch"

    def add_leader_and_isr(self, brokers, p: int, znode: PartitionZnode, is_new: bool) -> None:
        """`addLeaderAndIsrRequestForBrokers`: also UpdateMetadata to every live-or-shutting-down broker."""
        replicas = self.assignment[p]
        for b in brokers:
            if b < 0:
                continue
            per = self.batch.lair.setdefault(b, {})
            already_new = p in per and per[p].is_new
            per[p] = LeaderAndIsrPartition(p, znode.leader, znode.leader_epoch, znode.isr, znode.version,
                                           replicas, is_new or already_new)
        self.add_update_metadata(bits(self.live))

    def add_update_metadata(self, brokers) -> None:
        self.batch.um.update(b for b in brokers if b >= 0)

    def add_stop_replica(self, brokers, p: int, delete: bool) -> None:
        """`addStopReplicaRequestForBrokers`: the leader epoch, or -2 if the topic is being deleted (KIP-570)."""
        if self.topics_to_delete >> self.w.topic_of(p) & 1:
            epoch = EPOCH_DURING_DELETE
        else:
            epoch = self.leadership[p].leader_epoch  # NONE (-1) without leadership info
        for b in brokers:
            if b < 0:
                continue
            per = self.batch.stop.setdefault(b, {})
            already_delete = p in per and per[p].delete
            per[p] = StopReplicaPartition(p, epoch, delete or already_delete)

    def send_requests_to_brokers(self) -> None:
        """`sendRequestsToBrokers(epoch)`: LeaderAndIsr, then UpdateMetadata, then StopReplica,
        only to live-or-shutting-down brokers, through the channel (dropped if it has no queue)."""
        batch = self.batch
        if batch.is_empty():
            return
        if not self.active:
            self.w.ghost |= Ghost.ACTED_WHILE_INACTIVE
        live = self.live
        for kind, per_broker in ((RequestKind.LeaderAndIsr, batch.lair), (RequestKind.UpdateMetadata, batch.um),
                                 (RequestKind.StopReplica, batch.stop)):
            for b in sorted(per_broker):
                if not live >> b & 1:
                    continue
                parts = tuple(per_broker[b][p] for p in sorted(per_broker[b])) if isinstance(per_broker, dict) else ()
                request = Request(kind, self.me, self.epoch, self.broker_epochs[b], parts)
                if self.channel >> b & 1:
                    self.w.send(self.me, b, request)
        batch.clear()

    def send_update_metadata(self, brokers) -> None:
        """`sendUpdateMetadataRequest(brokers, partitions)`."""
        self.new_batch()
        self.add_update_metadata(brokers)
        self.send_requests_to_brokers()

    # ---- helpers on the context ------------------------------------------------------------

    @property
    def zk(self):
        """ZooKeeper as this controller reads it (raises SessionExpired for a zombie)."""
        return self.w.zk_of(self.me)

    def is_replica_online(self, b: int, p: int, include_shutting_down: bool = False) -> bool:
        """`isReplicaOnline(brokerId, topicPartition)`: the broker is live (and not shutting down,
        unless included) and its replica of `p` is not on a log directory it answered
        KAFKA_STORAGE_ERROR for (kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerContext.scala
        lines 205-211)."""
        if b < 0 or not self.live >> b & 1 or self.offline_dirs[b] >> p & 1:
            return False
        return include_shutting_down or not self.shutting_down >> b & 1

    def on_offline_dirs(self, p: int) -> int:
        """The brokers whose replica of `p` is in `replicasOnOfflineDirs`."""
        return mask_of(b for b, dirs in enumerate(self.offline_dirs) if dirs >> p & 1)

    def online_mask(self, p: int) -> int:
        """The brokers whose replica of `p` is online (`isReplicaOnline`)."""
        return self.live & ~self.shutting_down & ~self.on_offline_dirs(p)

    def is_topic_queued_for_deletion(self, t: int) -> bool:
        return bool(self.topics_to_delete >> t & 1)

    def _invalid(self, table, frm, to, p: int, b: int = -1) -> bool:
        valid = table.is_valid_transition(frm, to)
        self.w.obs.append(Edge(table.name, frm, to, p, b, valid))
        return not valid

    # ---- the replica state machine ---------------------------------------------------------

    def handle_replica_state_changes(self, replicas, target: R) -> None:
        """`ReplicaStateMachine.handleStateChanges(replicas, target)`; replicas are (partition, broker)."""
        if not replicas:
            return
        self.new_batch()
        # `replicas.groupBy(_.replica)`, each group in turn, first met first (docs/model.md).
        by_broker: dict[int, list[int]] = {}
        for p, b in replicas:
            by_broker.setdefault(b, []).append(p)
        try:
            for b in by_broker:
                self._do_handle_replica_state_changes(b, by_broker[b], target)
        except (SessionExpired, KafkaError):
            # kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala
            # `handleStateChanges` (lines 114-119): any Throwable but ControllerMovedException is
            # logged and the handler goes on. (ZooKeeper errors are per-partition failures below,
            # so nothing reaches here in the model; the batch is dropped, see `new_batch`.)
            self.batch.clear()
            return
        self.send_requests_to_brokers()

    def _do_handle_replica_state_changes(self, b: int, partitions: list[int], target: R) -> None:  # noqa: C901 - one arm per target state
        rs = self.replica_states
        valid = [p for p in partitions if not self._invalid(REPLICA_TABLE, rs[p][b], target, p, b)]
        if target is R.NewReplica:
            for p in valid:
                leadership = self.leadership[p]
                if leadership != NO_ZNODE:
                    if leadership.leader == b:
                        continue  # StateChangeFailedException: the replica is the leader
                    self.add_leader_and_isr((b,), p, leadership, is_new=True)
                rs[p][b] = R.NewReplica
        elif target is R.OnlineReplica:
            for p in valid:
                if rs[p][b] is R.NewReplica:
                    if b not in self.assignment[p]:
                        self.assignment[p] = self.assignment[p] + (b,)
                elif self.leadership[p] != NO_ZNODE:
                    self.add_leader_and_isr((b,), p, self.leadership[p], is_new=False)
                rs[p][b] = R.OnlineReplica
        elif target is R.OfflineReplica:
            for p in valid:
                self.add_stop_replica((b,), p, delete=False)
            with_info = [p for p in valid if self.leadership[p] != NO_ZNODE]
            without_info = [p for p in valid if self.leadership[p] == NO_ZNODE]
            if self.flags.offline_replica_trusts_cached_isr:
                # V11 (KAFKA-1170, before 0.8.1): `if (currLeaderIsrAndControllerEpoch.leaderAndIsr.isr
                # .contains(replicaId)) removeReplicaFromIsr(...) else replicaState.put(..., OfflineReplica)`
                # (kafka@0.8.0:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala): a replica
                # the cache leaves out of the ISR goes offline without a look at ZooKeeper's ISR.
                for p in [p for p in with_info if b not in self.leadership[p].isr]:
                    rs[p][b] = R.OfflineReplica
                with_info = [p for p in with_info if b in self.leadership[p].isr]
            for p, znode in self.remove_replicas_from_isr(b, with_info).items():
                if not self.is_topic_queued_for_deletion(self.w.topic_of(p)):
                    recipients = tuple(r for r in self.assignment[p] if r != b)
                    self.add_leader_and_isr(recipients, p, znode, is_new=False)
                rs[p][b] = R.OfflineReplica
            if not self.flags.offline_replica_needs_leadership:  # V9 (KAFKA-6650) leaves these as they were
                for p in without_info:
                    self.add_update_metadata(bits(self.live))
                    rs[p][b] = R.OfflineReplica
        elif target is R.ReplicaDeletionStarted:
            for p in valid:
                rs[p][b] = R.ReplicaDeletionStarted
                self.add_stop_replica((b,), p, delete=True)
        elif target in (R.ReplicaDeletionIneligible, R.ReplicaDeletionSuccessful):
            for p in valid:
                rs[p][b] = target
        elif target is R.NonExistentReplica:
            for p in valid:
                self.assignment[p] = tuple(r for r in self.assignment[p] if r != b)
                self.adding[p] = tuple(r for r in self.adding[p] if r != b)
                self.removing[p] = tuple(r for r in self.removing[p] if r != b)
                rs[p][b] = R.NonExistentReplica

    def remove_replicas_from_isr(self, b: int, partitions: list[int]) -> dict[int, PartitionZnode]:
        """`removeReplicasFromIsr`: re-read each znode; shrink the ISR of those that contain `b`.

        Returns the partitions whose state is settled (shrunk, or `b` was not in the ISR), as Kafka
        does; a partition whose znode is missing or was written by a newer controller fails, and
        its replica keeps its state. As in Kafka, the shrunk ISRs are written first and only then
        are the partitions that needed no write cached
        (kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala
        `doRemoveReplicasFromIsr`: `updateLeaderAndIsr`, then `partitionLeadershipInfo.put` (line 367) for
        `leaderAndIsrsWithoutReplica ++ finishedPartitions`): when the write fails the epoch fence
        (ControllerMovedException, a deposed controller that has not resigned yet), no partition of
        the call is cached.

        ZooKeeper client errors are per-partition failures, not exceptions:
        `getTopicPartitionStatesFromZk` turns a failed read into a `Left` for every partition
        (RSM lines 387-392), and `updateLeaderAndIsr` turns any exception but
        ControllerMovedException into a `Left` for every partition it was to write
        (kafka@2.6.x:core/src/main/scala/kafka/zk/KafkaZkClient.scala `updateLeaderAndIsr`). A
        zombie (an expired session it has not noticed) therefore fails every partition here and
        the handler goes on."""
        done: dict[int, PartitionZnode] = {}
        remaining = list(partitions)
        while remaining:   # `removeReplicasFromIsr`: until no partition is left to retry
            finished, remaining = self._do_remove_replicas_from_isr(b, remaining)
            done.update(finished)
        return {p: done[p] for p in partitions if p in done}   # in the order of the call

    def _do_remove_replicas_from_isr(self, b: int, partitions: list[int]) -> UpdateLeaderAndIsrResult:
        """`doRemoveReplicasFromIsr`: (settled partitions, partitions to retry on BADVERSION)."""
        try:
            zk_partitions = self.zk.partitions
        except SessionExpired:
            return {}, []
        without_replica: list[int] = []
        to_write: dict[int, tuple[LeaderAndIsr, PartitionZnode]] = {}
        for p in partitions:
            znode = zk_partitions[p]
            if znode == NO_ZNODE or znode.controller_epoch > self.epoch:
                continue
            if b not in znode.isr:
                without_replica.append(p)
                continue
            old = LeaderAndIsr(znode.leader, znode.leader_epoch, znode.isr)
            to_write[p] = (remove_replica_from_isr(old, b, keep_sole_member=not self.flags.isr_shrink_empties), znode)
        written, retry = self.update_leader_and_isr({p: new for p, (new, _) in to_write.items()},
                                                    {p: znode for p, (_, znode) in to_write.items()})
        done: dict[int, PartitionZnode] = {}
        for p in partitions:
            if p in written:
                done[p] = written[p]
            elif p in without_replica:
                cached = zk_partitions[p]._replace(controller_epoch=self.epoch)
                self.leadership[p] = cached
                done[p] = cached
        return done, retry

    def update_leader_and_isr(self, new: dict[int, LeaderAndIsr], read: dict[int, PartitionZnode]
                              ) -> UpdateLeaderAndIsrResult:
        """`KafkaZkClient.updateLeaderAndIsr`: one fenced conditional setData per partition (in
        partition order), on the version read. Returns the partitions written (cached in the
        context, as the callers do) and those to retry (BADVERSION). ControllerMoved propagates; any
        other failure (an expired session) fails every partition of the call
        (kafka@2.6.x:core/src/main/scala/kafka/zk/KafkaZkClient.scala `updateLeaderAndIsr`, lines
        252-285: `case e: Exception => return UpdateLeaderAndIsrResult(... Left(e))`, `case
        Code.BADVERSION => updatesToRetry += partition`). Within one step the read is current, so
        BADVERSION comes only from a lost reply (`write_leader_and_isr`)."""
        if not new:
            return {}, []
        try:
            self.w.check_epoch(self.me, self.epoch)
        except SessionExpired:
            return {}, []
        written: dict[int, PartitionZnode] = {}
        retry: list[int] = []
        for p in sorted(new):
            znode = self.write_leader_and_isr(p, new[p], read[p])
            if znode is None:
                retry.append(p)
            else:
                written[p] = znode
        return written, retry

    def write_leader_and_isr(self, p: int, new: LeaderAndIsr, read: PartitionZnode) -> PartitionZnode | None:
        """One partition of `updateLeaderAndIsr`: the fenced setData, conditional on the version
        read. Returns the znode written and caches it, or None for BADVERSION: when ZooKeeper lost
        the reply (`ZkLoseReply`), the write is applied but `retryRequestsUntilConnected` sends it
        again, and the retry finds the controller's own write at version + 1 (the CheckOp still
        passes). Nothing is cached then: the caller re-reads and tries again, as Kafka's loops do
        (`electLeaderForPartitions`, `removeReplicasFromIsr`, `updateLeaderEpoch`)."""
        self.w.check_epoch(self.me, self.epoch)
        self.mark_zk_write()
        znode = PartitionZnode(new.leader, new.leader_epoch, tuple(new.isr), self.epoch, read.version + 1)
        self.w.set_partition_state(p, znode)
        if self.w.reply_lost(self.me):
            return None
        self.leadership[p] = znode
        return znode

    def mark_zk_write(self) -> None:
        if not self.active:
            self.w.ghost |= Ghost.ACTED_WHILE_INACTIVE

    # ---- the partition state machine -------------------------------------------------------

    def handle_partition_state_changes(self, partitions, target: P, strategy: Strategy | None = None) -> dict:
        """`PartitionStateMachine.handleStateChanges`; returns {partition: new znode} of successful elections."""
        if not partitions:
            return {}
        self.new_batch()
        try:
            result = self._do_handle_partition_state_changes(list(partitions), target, strategy)
        except (SessionExpired, KafkaError):
            # kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
            # `handleStateChanges` (lines 161-167): every partition fails, the handler goes on.
            self.batch.clear()
            return {}
        self.send_requests_to_brokers()
        return result

    def _do_handle_partition_state_changes(self, partitions: list[int], target: P, strategy) -> dict:
        ps = self.partition_states
        valid = [p for p in partitions if not self._invalid(PARTITION_TABLE, ps[p], target, p)]
        if target is P.NewPartition:
            for p in valid:
                ps[p] = P.NewPartition
            return {}
        if target is P.OnlinePartition:
            uninitialized = [p for p in valid if ps[p] is P.NewPartition]
            to_elect = [p for p in valid if ps[p] in (P.OfflinePartition, P.OnlinePartition)]
            for p in self.initialize_leader_and_isr(uninitialized):
                ps[p] = P.OnlinePartition
            if not to_elect:
                return {}
            results = self.elect_leader_for_partitions(to_elect, strategy)
            for p in results:
                ps[p] = P.OnlinePartition
            return results
        for p in valid:  # Offline, NonExistent: mark only
            ps[p] = target
        return {}

    def initialize_leader_and_isr(self, partitions: list[int]) -> list[int]:
        """`initializeLeaderAndIsrForPartitions`: New -> Online.

        `createTopicPartitionStatesRaw` creates the state znodes, each in a multi behind the epoch
        CheckOp. ControllerMoved propagates; any other exception (an expired session) fails every
        partition with a live replica (`logFailedStateChange`), which stays New
        (kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala
        `initializeLeaderAndIsrForPartitions`, lines 299-306: `case e: Exception => ... Seq.empty`)."""
        with_live = []
        for p in partitions:
            live = tuple(r for r in self.assignment[p] if self.is_replica_online(r, p))
            if live:
                with_live.append((p, live))
            # else "No replica is alive": the partition stays New
        if not with_live:
            return []
        try:
            self.w.check_epoch(self.me, self.epoch)  # the multis' CheckOp fails first
        except SessionExpired:
            return []
        done = []
        for p, live in with_live:
            if self.zk.partitions[p] != NO_ZNODE:
                self.w.reply_lost(self.me)   # a failed write can lose its reply too: its retry fails alike
                continue  # NODEEXISTS: logged as a failed state change
            self.mark_zk_write()
            znode = PartitionZnode(live[0], 0, live, self.epoch, 0)
            self.w.set_partition_state(p, znode)
            if self.w.reply_lost(self.me):
                # The create was applied; its retry answers NODEEXISTS, which Kafka 2.6 logs as a
                # failed state change: the partition stays New, uncached, and no LeaderAndIsr is
                # sent (PartitionStateMachine.scala `initializeLeaderAndIsrForPartitions`, lines
                # 307-318: `if (code == Code.OK) ... else logFailedStateChange(partition, NewPartition,
                # OnlinePartition, code)`).
                continue
            self.leadership[p] = znode
            self.add_leader_and_isr(znode.isr, p, znode, is_new=True)
            done.append(p)
        return done

    def elect_leader_for_partitions(self, partitions: list[int], strategy: Strategy) -> dict[int, PartitionZnode]:
        """`electLeaderForPartitions` / `doElectLeaderForPartitions`.

        The states are read in one batch (`getTopicPartitionStatesRaw`); a read that fails (an
        expired session) fails every partition (kafka@2.6.x:core/src/main/scala/kafka/controller/
        PartitionStateMachine.scala `doElectLeaderForPartitions`, lines 372-377), which keep their
        state; the write fails per partition in the same way (`updateLeaderAndIsr`). An `Election`
        is observed only for a partition whose write succeeded."""
        assert strategy is not None, "Election strategy is a required field when the target state is OnlinePartition"
        results: dict[int, PartitionZnode] = {}
        remaining = list(partitions)
        while remaining:   # until no partition is left to retry (BADVERSION after a lost reply)
            finished, remaining = self._do_elect_leader_for_partitions(remaining, strategy)
            results.update(finished)
        return results

    def _do_elect_leader_for_partitions(self, partitions: list[int], strategy: Strategy
                                        ) -> UpdateLeaderAndIsrResult:
        try:
            zk_partitions = self.zk.partitions
        except SessionExpired:
            return {}, []
        chosen: dict[int, tuple] = {}
        for p in partitions:
            online = self.online_mask(p)
            online_set = frozenset(bits(online))
            znode = zk_partitions[p]
            if znode == NO_ZNODE or znode.controller_epoch > self.epoch:
                continue  # NONODE, or "written by another controller ... soft failure": abort
            current = LeaderAndIsr(znode.leader, znode.leader_epoch, znode.isr)
            assignment = self.assignment[p]
            unclean = False
            if strategy in (Strategy.OFFLINE, Strategy.OFFLINE_ALLOW_UNCLEAN):
                # collectUncleanLeaderElectionState: the topic config is read only when needed, the
                # static default overridden by `/config/topics/<t>` (`zkClient.getLogConfigs`)
                unclean = (strategy is Strategy.OFFLINE_ALLOW_UNCLEAN or self.w.cfg.unclean_election
                           or bool(self.w.zk.unclean_topics >> self.w.topic_of(p) & 1))
                election = expected = leader_for_offline(assignment, current, online_set, unclean)
            elif strategy is Strategy.REASSIGN:
                target = tuple(r for r in assignment if r not in self.removing[p])
                election = expected = leader_for_reassign(target, current, online_set)
            elif strategy is Strategy.PREFERRED:
                election = expected = leader_for_preferred_replica(assignment, current, online_set)
            else:
                live_set = frozenset(bits(self.live & ~self.on_offline_dirs(p)))
                shutting_set = frozenset(bits(self.shutting_down))
                expected = leader_for_controlled_shutdown(assignment, current, live_set, shutting_set)
                election = expected
                if self.flags.shutdown_election_isr_order:  # V7 (KAFKA-3670)
                    election = leader_for_controlled_shutdown(assignment, current, live_set, shutting_set,
                                                              algorithm=controlled_shutdown_leader_election_isr_order)
                if self.flags.shutdown_recipients_exclude_shutting:  # V8 (KAFKA-7482)
                    election = election.__class__(election.leader_and_isr,
                                                  tuple(r for r in assignment if r in online_set), election.unclean)
            if election.leader_and_isr is None:
                continue  # StateChangeFailedException: the partition keeps its state
            chosen[p] = (election, expected, znode, unclean, online)
        written, retry = self.update_leader_and_isr({p: c[0].leader_and_isr for p, c in chosen.items()},
                                                    {p: c[2] for p, c in chosen.items()})
        results: dict[int, PartitionZnode] = {}
        for p, (election, expected, znode, unclean, online) in chosen.items():
            if p not in written:
                continue
            self.w.obs.append(Election(
                p, strategy, election.leader_and_isr.leader,
                expected.leader_and_isr.leader if expected.leader_and_isr is not None else NONE,
                znode.leader, tuple(election.recipients), self.live & ~self.on_offline_dirs(p), online, znode.isr,
                unclean))
            self.add_leader_and_isr(election.recipients, p, written[p], is_new=False)
            results[p] = written[p]
        return results, retry

    def trigger_online_partition_state_change(self, topic: int = NONE) -> dict:
        """`triggerOnlinePartitionStateChange`: New and Offline partitions of topics not being
        deleted; of `topic` alone when given (`triggerOnlinePartitionStateChange(topic)`)."""
        ps = self.partition_states
        w = self.w
        partitions = [p for p in (range(w.np) if topic == NONE else w.partitions_of_topic(topic))
                      if ps[p] in (P.NewPartition, P.OfflinePartition)
                      and not self.is_topic_queued_for_deletion(self.w.topic_of(p))]
        return self.handle_partition_state_changes(partitions, P.OnlinePartition, Strategy.OFFLINE)

    def replicas_on_brokers(self, brokers: int) -> list[tuple[int, int]]:
        """`replicasOnBrokers`: (partition, broker) for every assigned replica on `brokers`."""
        return [(p, b) for p in range(self.w.np) for b in self.assignment[p] if brokers >> b & 1]

    def partitions_with_offline_leader(self) -> list[int]:
        """`partitionsWithOfflineLeader`: not being deleted, leader not online."""
        out = []
        for p in range(self.w.np):
            z = self.leadership[p]
            if (z != NO_ZNODE and not self.is_topic_queued_for_deletion(self.w.topic_of(p))
                    and not self.is_replica_online(z.leader, p)):
                out.append(p)
        return out

