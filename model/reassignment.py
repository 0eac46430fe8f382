"""Partition reassignment through `/admin/reassign_partitions`, in Kafka 2.6's phases (KIP-455).

kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala `onPartitionReassignment`.
RS = current replicas, ORS = original, TRS = target, AR = adding (TRS - ORS), RR = removing
(ORS - TRS); `/brokers/topics/<t>` persists RS, AR and RR so that a new controller can resume.

    U1-U2  ZK and memory: RS = TRS + ORS, AR, RR; watch the partition's state znode
    A1-A2  (TRS not yet in the ISR) bump the leader epoch, LeaderAndIsr (isNew = false) to RS;
           AR -> NewReplica
    B1-B8  (TRS in the ISR) AR -> Online; RS = TRS in memory; move the leader into TRS (or bump
           the epoch); RR -> Offline -> DeletionStarted -> DeletionSuccessful -> NonExistent; ZK
           RS = TRS; remove the partition from /admin/reassign_partitions; UpdateMetadata

Completion is noticed by the state znode's data watch (PartitionReassignmentIsrChange,
`processPartitionReassignmentIsrChange`, kafka@2.6.x:core/src/main/scala/kafka/controller/
KafkaController.scala lines 1641-1653, 1952-1956), or when the reassignment is run again (a
failover, a target broker's startup) with TRS in the ISR. An ISR-change notification completes
none in 2.6 (that came with AlterIsr in 2.7, KAFKA-10521).
"""

from __future__ import annotations

from kcm.model.cluster import NO_ZNODE, Event, EventKind, Watch, bits, partition_watch, put
from kcm.model.controller_protocol import ControllerBase
from kcm.model.election import LeaderAndIsr
from kcm.model.state_machines import Strategy
from kcm.model.states import PartitionState as P
from kcm.model.states import ReplicaState as R
from kcm.model.world import KafkaError


def reassign_to(replicas, adding, removing, target) -> tuple[tuple, tuple, tuple]:
    """`ReplicaAssignment.reassignTo(target)`: the full replica set is target first, then the origin."""
    origin = tuple(r for r in replicas if r not in adding)
    full = tuple(dict.fromkeys(tuple(target) + origin))
    return full, tuple(r for r in full if r not in origin), tuple(r for r in full if r not in target)


class ReassignmentMixin(ControllerBase):
    """Mixed into `kcm.model.controller.Controller`."""

    def target_replicas(self, p: int) -> tuple[int, ...]:
        return tuple(r for r in self.assignment[p] if r not in self.removing[p])

    def initialize_partition_reassignments(self) -> None:
        """`initializePartitionReassignments` at failover (kafka@2.6.x:core/src/main/scala/kafka/
        controller/KafkaController.scala, lines 774-781): the reassignments /admin/reassign_partitions
        asks for, then `maybeResumeReassignments` for every partition being reassigned (read from
        `/brokers/topics`) that the first part did not start successfully, including one it just
        refused because its topic is queued for deletion. An exception here is not caught: the
        failover fails and the controller moves (`elect`)."""
        resumed = self.process_zk_partition_reassignment()
        self.maybe_resume_reassignments(lambda p: not resumed >> p & 1)

    def process_zk_partition_reassignment(self) -> int:
        """`processZkPartitionReassignment` (re-arms the exists watch; reads the znode); returns the
        partitions whose reassignment started without error."""
        if not self.active:
            return 0
        w = self.w
        w.arm(self.me, Watch.REASSIGN)
        requested = [(p, t) for p, t in enumerate(self.zk.reassign) if t]
        if not requested:
            return 0
        failed = 0
        started = 0
        for p, target in requested:
            topic = w.topic_of(p)
            if self.is_topic_queued_for_deletion(topic) or not self.assignment[p]:
                failed |= 1 << p  # UNKNOWN_TOPIC_OR_PARTITION
                continue
            try:
                self.on_partition_reassignment(p, reassign_to(self.assignment[p], self.adding[p], self.removing[p],
                                                              target))
                started |= 1 << p
            except KafkaError:
                failed |= 1 << p  # UNKNOWN_SERVER_ERROR; ControllerMoved propagates
        if failed:
            self.maybe_remove_from_zk_reassignment(lambda p, replicas: failed >> p & 1)
        return started

    def on_partition_reassignment(self, p: int, reassignment: tuple) -> None:
        topic = self.w.topic_of(p)
        self.mark_topic_ineligible_for_deletion(1 << topic)
        self.update_current_reassignment(p, reassignment)
        replicas, adding, removing = reassignment
        if not self.is_reassignment_complete(p):
            self.update_leader_epoch_and_send_request(p)                                      # A1
            for r in adding:                                                                  # A2
                self.handle_replica_state_changes([(p, r)], R.NewReplica)
        else:
            self.handle_replica_state_changes([(p, r) for r in adding], R.OnlineReplica)      # B1
            target = self.target_replicas(p)
            self.assignment[p], self.adding[p], self.removing[p] = target, (), ()              # B2
            self.move_reassigned_partition_leader_if_required(p)                              # B3
            self.stop_removed_replicas(p, removing)                                           # B4-B5
            self.update_replica_assignment(p)                                                 # B6
            self.remove_partition_from_reassigning(p)                                         # B7
            self.send_update_metadata(self.live_brokers())                                    # B8
            self.resume_deletion_for_topics(1 << topic)

    def update_current_reassignment(self, p: int, reassignment: tuple) -> None:
        replicas, adding, removing = reassignment
        current = (self.assignment[p], self.adding[p], self.removing[p])
        if current != reassignment:
            self.assignment[p], self.adding[p], self.removing[p] = replicas, adding, removing
            self.update_replica_assignment(p)                                                 # U1 (U2 above)
            unneeded = [r for r in current[0] if r not in replicas]
            if unneeded:
                self.stop_removed_replicas(p, unneeded)
        # PartitionReassignmentIsrChangeHandler, armed by the next read (2.6 arms none on a missing znode: unobservable)
        self.w.arm(self.me, partition_watch(p))
        self.reassigning |= 1 << p

    def is_reassignment_complete(self, p: int) -> bool:
        if not (self.adding[p] or self.removing[p]):
            return True
        znode = self.zk.partitions[p]
        return znode != NO_ZNODE and set(self.target_replicas(p)) <= set(znode.isr)

    def maybe_complete_reassignment(self, p: int) -> None:
        if self.is_reassignment_complete(p):
            self.on_partition_reassignment(p, (self.assignment[p], self.adding[p], self.removing[p]))

    def update_leader_epoch_and_send_request(self, p: int) -> None:
        """Bump the leader epoch (no leader or ISR change) and tell every replica (`updateLeaderEpoch`)."""
        cached = self.leadership[p]
        written = None
        while written is None:   # re-read and write again on BADVERSION (after a lost reply)
            znode = self.zk.partitions[p]
            if znode == NO_ZNODE:
                raise KafkaError("Cannot update leader epoch for partition as leaderAndIsr path is empty")
            if znode.controller_epoch > self.epoch:
                raise KafkaError("Leader and isr path written by another controller")  # StateChangeFailedException
            written = self.write_leader_and_isr(p, LeaderAndIsr(znode.leader, znode.leader_epoch + 1, znode.isr), znode)
        if self.flags.leader_epoch_bump_not_cached:
            # V13 (KAFKA-9212, before 2.4.0): `finalLeaderIsrAndControllerEpoch = Some(...)` only, no
            # `controllerContext.partitionLeadershipInfo.put` (kafka@2.3.1:core/src/main/scala/kafka/
            # controller/KafkaController.scala updateLeaderEpoch): the cache keeps the old epoch
            self.leadership[p] = cached
        # to every replica of RS with isNew = false (kafka@2.6.x:core/src/main/scala/kafka/controller/
        # KafkaController.scala `updateLeaderEpochAndSendRequest`, lines 879-882)
        self.new_batch()
        self.add_leader_and_isr(self.assignment[p], p, written, is_new=False)
        self.send_requests_to_brokers()

    def move_reassigned_partition_leader_if_required(self, p: int) -> None:
        """B3. `partitionLeadershipInfo(topicPartition)` throws for a partition without leadership
        (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
        `moveReassignedPartitionLeaderIfRequired`, line 818): the reassignment fails after B1-B2."""
        if self.leadership[p] == NO_ZNODE:
            raise KafkaError("NoSuchElementException: partitionLeadershipInfo of a reassigned partition")
        leader = self.leadership[p].leader
        if leader not in self.assignment[p]:
            self.handle_partition_state_changes([p], P.OnlinePartition, Strategy.REASSIGN)
        elif self.is_replica_online(leader, p):
            self.update_leader_epoch_and_send_request(p)
        else:
            self.handle_partition_state_changes([p], P.OnlinePartition, Strategy.REASSIGN)

    def stop_removed_replicas(self, p: int, removed) -> None:
        replicas = [(p, r) for r in removed]
        self.handle_replica_state_changes(replicas, R.OfflineReplica)
        self.handle_replica_state_changes(replicas, R.ReplicaDeletionStarted)
        self.handle_replica_state_changes(replicas, R.ReplicaDeletionSuccessful)
        self.handle_replica_state_changes(replicas, R.NonExistentReplica)

    def update_replica_assignment(self, p: int) -> None:
        """`setTopicAssignmentRaw`, fenced: persist RS, AR, RR of partition `p`.

        Kafka writes the whole topic from the context, `partitionFullReplicaAssignmentForTopic(topic)`
        with `p`'s new entry (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
        `updateReplicaAssignmentForPartition`, lines 849-863): a partition added in ZooKeeper whose
        `PartitionModifications` this controller has not processed yet is written away. In configs
        that cannot add partitions the other partitions' entries are written as ZooKeeper has them,
        and the data change fires no modelled watch (`World.fire_topic`)."""
        w = self.w
        w.check_epoch(self.me, self.epoch)
        self.mark_zk_write()
        zk = w.zk
        if not w.cfg.adds_partitions:
            w.zk = zk._replace(assignment=put(zk.assignment, p, self.assignment[p]),
                               adding=put(zk.adding, p, self.adding[p]),
                               removing=put(zk.removing, p, self.removing[p]))
            return
        assignment, adding, removing = list(zk.assignment), list(zk.adding), list(zk.removing)
        t = w.topic_of(p)
        for q in w.partitions_of_topic(t):
            assignment[q], adding[q], removing[q] = self.assignment[q], self.adding[q], self.removing[q]
        w.zk = zk._replace(assignment=tuple(assignment), adding=tuple(adding), removing=tuple(removing))
        w.fire_topic(t)

    def remove_partition_from_reassigning(self, p: int) -> None:
        self.w.disarm(self.me, partition_watch(p))
        target = self.assignment[p]
        self.maybe_remove_from_zk_reassignment(lambda q, replicas: q == p and replicas == target)
        self.reassigning &= ~(1 << p)

    def maybe_remove_from_zk_reassignment(self, should_remove) -> None:
        w = self.w
        reassign = self.zk.reassign
        if not any(reassign):
            return
        updated = tuple(() if t and should_remove(p, t) else t for p, t in enumerate(reassign))
        w.check_epoch(self.me, self.epoch)
        self.mark_zk_write()
        w.zk = w.zk._replace(reassign=updated)
        w.fire(Watch.REASSIGN, None)  # PartitionReassignmentHandler only handles creation
        if not any(updated):
            # deletePartitionReassignment, then "Ensure we detect future reassignments"
            w.enqueue(self.me, Event(EventKind.ZkPartitionReassignment))

    def resume_reassignments_for(self, brokers: int) -> None:
        """`onBrokerStartup`'s `maybeResumeReassignments`: those whose target includes one of `brokers`."""
        self.maybe_resume_reassignments(lambda p: any(brokers >> r & 1 for r in self.target_replicas(p)))

    def maybe_resume_reassignments(self, should_resume) -> None:
        """`maybeResumeReassignments` (KafkaController.scala lines 381-387): `onPartitionReassignment`
        with the current assignment for every partition being reassigned that `should_resume`
        accepts, in partition order (Kafka iterates a hash set), skipping one that an earlier
        resumption in the loop took out of the set."""
        for p in bits(self.reassigning):
            if self.reassigning >> p & 1 and should_resume(p):
                self.on_partition_reassignment(p, (self.assignment[p], self.adding[p], self.removing[p]))
