"""One seeded controller mistake per property: the bug each property is shown to catch through the
explorer (tests/model/catches/test_catches.py).

A property's tests on hand-made states show that its predicate rejects what it should; only an
exploration of a faulty model shows that what the checker registers can fail at all (a predicate
reading the wrong field passes the first kind of test and never fires). Each entry is a plausible
mistake written as a textual replacement in one model source file: `old` occurs exactly once in
`model/<file>`, and the mutant is `new` in its place. `config` is the smallest config found that
reaches the mistake: a preset name or a file of `bench/mutation/`, on which the clean model keeps
the property (a goal: reaches it).

- `INVARIANTS`: state and step properties; the explorer reports the property violated, with the
  pinned shortest trace `length`. Properties that Kafka 2.6 is known to break under some config
  (model/catalogue/findings.py) count as caught when the mistake makes them fail on a config where the
  clean model does not: the explorer files those under the known violations.
- `GOALS`: `Sometimes` goals, which fail when the mistake makes them unreachable.
- `UNCAUGHT`: properties no mistake was found for, each with the reason.

After each entry, one line names a plausible mistake that would still slip past the property.
Many mistakes were found by `kcm mutate` (bench/mutation/full-run.json lists what killed each
mutant); the text here is the change as a person would write it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Bug:
    """`old` replaced by `new` in `model/<file>`, caught on `config`."""

    file: str
    old: str
    new: str
    config: str
    #: The shortest trace to the violation; None for a goal made unreachable.
    length: int | None = None


INVARIANTS: dict[str, Bug] = {
    # ---- controller and epochs --------------------------------------------------------------
    "SingleActiveControllerPerEpoch": Bug(
        "controller.py", "epoch = w.zk.controller_epoch + 1", "epoch = max(w.zk.controller_epoch, 1)", "zkfaults", 2),
    # slips past: two active controllers with distinct epochs (caught by OnlyActiveControllerActs)
    "UniqueEpochSender": Bug(
        "controller.py", "self.epoch = epoch\n        self.active = True", "self.active = True",
        "m-delete-reassign.toml", 5),
    # slips past: a controller that sends with a newer epoch than its own (each epoch still one sender)
    "OnlyActiveControllerActs": Bug(
        "controller.py", "self.epoch = epoch\n        self.active = True", "self.epoch = epoch",
        "m-delete-reassign.toml", 0),
    # slips past: an active controller acting on a stale context (ContextDerivedFromZk's business)
    "ZkWritesFenced": Bug(
        "world.py", "        if epoch_zk_version != self.zk.controller_epoch:\n            raise ControllerMoved(b)\n",
        "", "v10", 9),
    # v10 is the smallest config where a deposed controller writes before it hears of the move (a
    # broker failure is pending when the controller moves); its variant changes the failover only.
    # slips past: an unfenced write of data the property does not compare (an admin znode it omits)
    "StaleControllerRejected": Bug(
        "broker.py", "if stale_broker_epoch or stale_controller:", "if stale_broker_epoch:", "m-move.toml", 5),
    # slips past: a broker that rejects a current controller's request (caught only by liveness)
    "NoStaleContextWhenInactive": Bug(
        "controller.py", "        if was_active and not self.active:\n            self.on_controller_resignation()\n",
        "", "m-move.toml", 3),
    # slips past: a resignation that clears the context but keeps the watches armed
    "NoControllerWatchesWhenInactive": Bug(
        "controller.py", "w.disarm(self.me, CONTROLLER_WATCHES | (w.zk.watches[self.me] & _ALL_PARTITION_WATCHES))",
        "w.disarm(self.me, Watch.PREFERRED | Watch.REASSIGN | Watch.ISR_CHANGE\n"
        "                  | (w.zk.watches[self.me] & _ALL_PARTITION_WATCHES))", "m-move.toml", 3),
    # (the resignation unregisters the node handlers and forgets the child handlers of /brokers/ids,
    # /brokers/topics and /admin/delete_topics, which 2.6 unregisters after the state machines' shutdown)
    # slips past: a handler left registered whose one-shot watch had already fired (the model keeps
    # no handler apart from its armed watch)
    "NoQueuedRequestsWhenInactive": Bug(
        "controller.py", "        for d in range(w.nb):\n            w.drop_channel(self.me, d)\n", "",
        "m-move.toml", 3),
    # (the resignation forgets `controllerChannelManager.shutdown()`: the deposed controller's
    # UpdateMetadata and LeaderAndIsr stay queued)
    # slips past: a request already on the wire when the send thread stops (not represented)
    "ContextDerivedFromZk": Bug(
        "controller.py", "self.live = mask_of(b for b in range(w.nb) if zk.broker_epochs[b])",
        "self.live = mask_of(range(w.nb))", "m-delete-reassign.toml", 3),
    # slips past: a context refreshed from ZooKeeper during an event but not at failover
    "ControllerWatchesArmed": Bug(
        "controller.py", "was_active = self.active\n        self.w.arm(self.me, Watch.CONTROLLER)",
        "was_active = self.active", "m-delete-reassign.toml", 0),
    # slips past: a watch armed on the right path by the wrong broker's session
    "BrokerIncarnationTracked": Bug(
        "controller.py", "self.broker_epochs = list(zk.broker_epochs)", "pass", "m-delete-reassign.toml", 0),
    # slips past: broker epochs cached but compared with `<=` where `<` is meant
    "EventuallyOneActiveController": Bug(
        "controller.py", "self.w.arm(self.me, Watch.CONTROLLER)\n        self.elect()",
        "self.w.arm(self.me, Watch.CONTROLLER)", "m-delete-reassign.toml", 0),
    # slips past: a controller elected late, after an unbounded number of retries
    "ActiveControllerOnceSettled": Bug(
        "broker.py", "w.delete_ephemerals(b)", "pass", "m-delete-reassign.toml", 4),
    # slips past: a settled cluster whose controller is active but answers no event
    # ---- leadership and ISR -----------------------------------------------------------------
    "LeaderInIsrOrNone": Bug(
        "election.py",
        "new_leader = ops.ite(ops.eq(leader_and_isr.leader, replica), NO_LEADER, leader_and_isr.leader)",
        "new_leader = leader_and_isr.leader", "m-recreate.toml", 2),
    # slips past: a leader in the ISR that is not among the assigned replicas
    "IsrNonEmpty": Bug(
        "election.py", "adjusted_isr = ops.ite(ops.size_is_one(isr), isr, without) if keep_sole_member else without",
        "adjusted_isr = without", "m-delete-reassign.toml", 2),
    # slips past: an ISR that keeps a dead member beside a live one (DeadReplicaOnlyAsSoleIsrMember's)
    "OfflineReplicaLeavesIsr": Bug(
        "election.py", "adjusted_isr = ops.ite(ops.size_is_one(isr), isr, without) if keep_sole_member else without",
        "adjusted_isr = isr", "m-delete-crash.toml", 3),
    # slips past: the replica left in the ISR while its state is not OfflineReplica
    "DeadReplicaOnlyAsSoleIsrMember": Bug(
        "controller.py", "self.on_broker_failure(dead)", "pass", "m-delete-crash.toml", 3),
    # slips past: a dead replica left in the ISR of a topic queued for deletion (not judged)
    "ZkLeaderEpochMonotonic": Bug(
        "broker.py", "replicas[part.partition] = Replica(dst, part.leader_epoch, part.isr,",
        "replicas[part.partition] = Replica(dst, current.leader_epoch, part.isr,", "tiny", 4),
    # slips past: a leader epoch that stays put when it should grow (ControllerBumpsLeaderEpoch's)
    "ControllerBumpsLeaderEpoch": Bug(
        "election.py", "return LeaderAndIsr(leader, self.leader_epoch + 1, isr, self.zk_version)",
        "return LeaderAndIsr(leader, self.leader_epoch, isr, self.zk_version)", "m-delete-reassign.toml", 2),
    # slips past: an epoch bumped by two together with a zkVersion bumped by two
    "BrokerLeaderEpochMonotonic": Bug(
        "broker.py", "current._replace(leader=NONE, isr=(), stopped=True)",
        "current._replace(leader=NONE, leader_epoch=NONE, isr=(), stopped=True)", "m-reassign.toml", 13),
    # slips past: a broker that ignores a newer LeaderAndIsr (its epoch stays, never goes back)
    "CacheMatchesZkAfterWrite": Bug(
        "state_machines.py", "return None\n        self.leadership[p] = znode", "return None",
        "m-delete-reassign.toml", 2),
    # slips past: a write the controller makes outside `write_leader_and_isr` and does not cache
    "CacheMatchesZk": Bug(
        "controller.py", "self.leadership[p] = NO_ZNODE", "pass", "m-delete-reassign.toml", 9),
    # slips past: a cache that differs from ZooKeeper only while some healing action is enabled
    "LeaderIsrMatchesZk": Bug(
        "broker.py", "replicas[part.partition] = Replica(dst, part.leader_epoch, part.isr,",
        "replicas[part.partition] = Replica(dst, part.leader_epoch, part.replicas,", "m-recreate.toml", 14),
    # slips past: a follower's stale view of the ISR (only the leader's is compared)
    "AtMostOneBelievedLeaderAfterQuiescence": Bug(
        "broker.py", "if part.leader == dst:  # makeLeader", "if True:  # makeLeader", "m-recreate.toml", 0),
    # slips past: two believed leaders while requests are still in flight
    "BrokersFollowTheLeader": Bug(
        "controller.py", "self.channel = self.live", "pass", "m-delete-reassign.toml", 0),
    # slips past: brokers following the right leader at a stale leader epoch
    "NoDeadLeaderAdvertised": Bug(
        "controller.py", "current = mask_of(b for b in range(w.nb) if zk_epochs[b])",
        "current = self.live | mask_of(b for b in range(w.nb) if zk_epochs[b])", "m-delete-reassign.toml", 7),
    # slips past: a dead leader advertised for a topic queued for deletion (not judged)
    "OfflinePartitionWithLiveIsrGetsLeader": Bug(
        "state_machines.py",
        "return [(p, b) for p in range(self.w.np) for b in self.assignment[p] if brokers >> b & 1]",
        "return [(p, b) for p in range(self.w.np) for b in self.assignment[p]]", "m-delete-reassign.toml", 11),
    # slips past: a leader elected from the ISR but not the first live one (ElectionRuleConformance's)
    "OfflinePartitionEventuallyOnline": Bug(
        "controller.py",
        "R.OnlineReplica)\n        self.trigger_online_partition_state_change()",
        "R.OnlineReplica)", "m-delete-reassign.toml", 12),
    # slips past: a partition brought online only by a later, unrelated event
    "ReplicaStatesMatchLiveness": Bug(
        "controller.py", "self.live = mask_of(b for b in range(w.nb) if zk.broker_epochs[b])", "pass",
        "m-delete-reassign.toml", 0),
    # slips past: replica states that match liveness but not the assignment
    "FailedBrokerReplicasOffline": Bug(
        "controller.py", "self.on_replicas_become_offline(self.replicas_on_brokers(dead))", "pass",
        "m-delete-reassign.toml", 6),
    # slips past: replicas moved offline one event late
    "CreatedPartitionsHaveState": Bug(
        "controller.py", "self.assignment = list(zk.assignment)", "pass", "m-delete-reassign.toml", 0),
    # slips past: a state znode created with a dead leader (NewPartitionFromLiveReplicas's)
    # ---- partitions added to a topic ----------------------------------------------------------
    "PartitionCountNeverDecreases": Bug(
        "controller.py", "if self.is_topic_queued_for_deletion(t):\n            if to_add:",
        "if not self.is_topic_queued_for_deletion(t):\n            if to_add:", "m-addparts.toml", 2),
    # slips past: an addition written away by a step that also deletes the topic (its znode is gone)
    "AddedPartitionsCreated": Bug(
        "controller.py", "            self.on_new_partition_creation(to_add)\n", "            pass\n",
        "m-addparts.toml", 2),
    # slips past: an added partition created for a topic queued for deletion (such topics are not judged)
    "NewPartitionFromLiveReplicas": Bug(
        "state_machines.py", "if b < 0 or not self.live >> b & 1 or self.offline_dirs[b] >> p & 1:",
        "if b < 0 or self.offline_dirs[b] >> p & 1:", "m-delete-reassign.toml", 3),
    # slips past: a new partition whose ISR lists live replicas in another order than the assignment
    # ---- elections ----------------------------------------------------------------------------
    "LeaderIsLive": Bug(
        "election.py",
        "ops.find(assignment, lambda b: ops.and_(ops.contains(live, b), ops.contains(isr, b))),",
        "ops.find(assignment, lambda b: ops.contains(isr, b)),", "tiny", 6),
    # slips past: a live leader that the controller's view lists as shutting down
    "CleanElectionFromIsr": Bug(
        "election.py",
        "ops.find(assignment, lambda b: ops.and_(ops.contains(live, b), ops.contains(isr, b))),",
        "ops.find(assignment, lambda b: ops.contains(live, b)),", "tiny", 7),
    # slips past: an unclean election when unclean election is enabled but an ISR member is live
    "ElectionRuleConformance": Bug(
        "state_machines.py", "online = self.online_mask(p)", "online = self.live", "m-shutdown.toml", 5),
    # slips past: an election for a partition that needed none (OfflineElectionForOfflineLeader's)
    "OfflineElectionForOfflineLeader": Bug(
        "state_machines.py", "to_elect = [p for p in valid if ps[p] in (P.OfflinePartition, P.OnlinePartition)]",
        "to_elect = valid", "m-delete-reassign.toml", 1),
    # slips past: an offline election for a partition whose leader is dead but still cached online
    "DeposedLeaderNotified": Bug(
        "reassignment.py", "self.stop_removed_replicas(p, removing)", "pass", "m-reassign.toml", 11),
    # slips past: a notice sent to the deposed leader but never delivered (the broker is up)
    "PreferredElectionMovesLeader": Bug(
        "controller.py",
        "(self.leadership[p].leader != self.assignment[p][0]\n                    and ", "(", "m-move.toml", 2),
    # slips past: a preferred election that moves the leader to a replica other than the preferred one
    # ---- requests -----------------------------------------------------------------------------
    "NoStaleBrokerEpochApplied": Bug(
        "broker.py", "if stale_broker_epoch or stale_controller:", "if stale_controller:", "m-delete-reassign.toml", 5),
    # slips past: a stale request dropped by the broker but answered as applied
    "MetadataBeforeLeaderAndIsr": Bug(
        "controller.py",
        "LeaderAndIsr\n        self.send_update_metadata(self.live_brokers())", "LeaderAndIsr\n        pass",
        "m-delete-reassign.toml", 2),
    # slips past: UpdateMetadata sent first but to fewer brokers than the LeaderAndIsr
    "ReplicaTransitionsValid": Bug(
        "state_machines.py", "return not valid", "return False", "m-overlap.toml", 8),
    # the state machines log an invalid transition, then carry it out
    # slips past: a valid transition to the wrong state (the table allows it)
    # ---- controlled shutdown ----------------------------------------------------------------
    "ControlledShutdownElectsAnother": Bug(
        "controller.py", "self.shutting_down |= 1 << b", "pass", "m-shutdown.toml", 5),
    # slips past: the new leader chosen among the live replicas outside the ISR
    "ControlledShutdownMovesLeadership": Bug(
        "controller.py", "self.handle_partition_state_changes(led, P.OnlinePartition, Strategy.CONTROLLED_SHUTDOWN)",
        "pass", "m-shutdown.toml", 5),
    # slips past: leadership moved by another strategy than the controlled-shutdown one
    "ControlledShutdownLeavesBrokerClean": Bug(
        "controller.py", "self.handle_replica_state_changes([(p, b) for p in followed], R.OfflineReplica)", "pass",
        "m-shutdown.toml", 5),
    # slips past: followed replicas stopped but left in the ISR of a partition led by a dead broker
    "ControlledShutdownRetriedOnlyWithPartitionsLeft": Bug(
        "controller.py", "and self.leadership[p].leader == b and len(self.assignment[p]) > 1",
        "and len(self.assignment[p]) > 1", "m-shutdown.toml", 5),
    # slips past: a shutdown answered as done while the broker still leads a single-replica partition
    "ControlledShutdownEventuallyCompletes": Bug(
        "controller.py", "self.shutting_down &= ~dead", "pass", "m-shutdown.toml", 22),
    # slips past: a shutdown that completes only after a retry budget the model does not bound
    "NoShuttingDownJoinsIsr": Bug(
        "controller.py", "self.shutting_down &= ~dead", "self.shutting_down |= dead", "m-delete-crash.toml", 8),
    # m-delete-crash has no controlled shutdown: on every config with one, 2.6 breaks it (Findings 8)
    # slips past: a broker rejoining the ISR before the controller has recorded its shutdown request
    # the controller takes every reassignment request for an unknown partition: it deletes the
    # request and nothing moves
    "AdminRequestCarriedOutOrRefused": Bug(
        "reassignment.py", "if self.is_topic_queued_for_deletion(topic) or not self.assignment[p]:",
        "if self.is_topic_queued_for_deletion(topic) or self.assignment[p]:", "m-reassign.toml", 5),
    # slips past: a request carried out to another target than the operator's while a deletion of
    # its topic is queued (the refusal reason excuses any outcome), or a preferred election refused
    # for a replica the controller wrongly holds offline (its own view is taken as the reason)
    "AutoRebalanceElectsPreferred": Bug(
        "controller.py", "self.handle_partition_state_changes(partitions, P.OnlinePartition, strategy)", "pass",
        "m-shutdown.toml", 18),
    # slips past: a rebalance that elects the preferred replica of another partition
    # ---- reassignment -------------------------------------------------------------------------
    "ReassignmentSetsDisjoint": Bug(
        "reassignment.py", "tuple(r for r in full if r not in origin), tuple(r", "tuple(r for r in full), tuple(r",
        "m-reassign.toml", 2),
    # slips past: disjoint sets that name the wrong replicas
    "ReassignmentCompletionRemovesRequest": Bug(
        "reassignment.py", "self.remove_partition_from_reassigning(p)", "pass", "m-reassign.toml", 11),
    # slips past: a request removed before the reassignment has completed
    "ReassignmentDeletesRemovedReplicas": Bug(
        "reassignment.py", "self.handle_replica_state_changes(replicas, R.ReplicaDeletionStarted)", "pass",
        "m-reassign.toml", 11),
    # slips past: removed replicas deleted but left in the assignment
    "RemovedReplicasForgotten": Bug(
        "state_machines.py", "rs[p][b] = R.NonExistentReplica", "pass", "m-delete-reassign.toml", 9),
    # slips past: a removed replica forgotten by the controller but not stopped on its broker
    "ReassignmentEventuallyCompletes": Bug(
        "controller.py", "self.initialize_partition_reassignments()", "pass", "m-reassign.toml", 9),
    # slips past: a reassignment that completes to a target other than the one asked for
    # ---- deletion -----------------------------------------------------------------------------
    "NoElectionForDeletingTopic": Bug(
        "state_machines.py",
        "\n                      and not self.is_topic_queued_for_deletion(self.w.topic_of(p))]", "]",
        "m-delete-crash.toml", 4),
    # slips past: an election for a deleting topic by a path other than `handle_partition_state_changes`
    "DeletedTopicLeavesNoReplica": Bug(
        "topic_deletion.py", "if all(self.replica_states[p][b] is R.ReplicaDeletionSuccessful",
        "if not all(self.replica_states[p][b] is R.ReplicaDeletionSuccessful", "m-delete-reassign.toml", 2),
    # slips past: a deletion completed while a replica on a dead broker is still on disk
    "DeletionQueuesEmptyWhenQuiescent": Bug(
        "topic_deletion.py", "self.topics_deletion_started &= ~(1 << t)", "pass", "m-delete-reassign.toml", 9),
    # slips past: queues emptied while the topic's znodes remain (AdminZnodesConsumed's)
    "DeletionRequestDroppedWithTopic": Bug(
        "controller.py", "if any(self.assignment[p] for p in w.partitions_of_topic(t)))",
        "if not any(self.assignment[p] for p in w.partitions_of_topic(t)))", "m-delete-reassign.toml", 2),
    # slips past: a request for an unknown topic left in place (AdminZnodesConsumed's business)
    "TopicDeletionEventuallyCompletes": Bug(
        "topic_deletion.py", "self.complete_delete_topic(t)", "pass", "m-delete-reassign.toml", 8),
    # slips past: a deletion completed for the wrong topic
    # ---- admin znodes -------------------------------------------------------------------------
    "AdminZnodesConsumed": Bug(
        "controller.py", "self.initialize_partition_reassignments()", "pass", "m-reassign.toml", 9),
    # slips past: an admin znode deleted before its work is done
    "PreferredElectionZnodeConsumed": Bug(
        "controller.py",
        "self.on_replica_election(self.fetch_pending_preferred_replica_elections(), Strategy.PREFERRED,\n"
        "                                 zk_triggered=True)",
        "pass", "m-move.toml", 10),
    # slips past: the znode deleted without the election it asked for
    # ---- leader elections on demand, unclean election switched on ------------------------------
    "UncleanElectionOnlyWhereAllowed": Bug(
        "controller.py", "strategy = Strategy.PREFERRED\n", "strategy = Strategy.OFFLINE_ALLOW_UNCLEAN\n",
        "m-elect.toml", 9),
    # slips past: an unclean election of the partition asked for under a preferred request when an
    # ISR member is live (CleanElectionFromIsr's business)
    "ElectLeadersAnswered": Bug(
        "controller.py", "if not self.assignment[p]:  # `controllerContext.allPartitions.contains(tp)`",
        "if self.assignment[p]:  # `controllerContext.allPartitions.contains(tp)`", "m-elect.toml", 2),
    # slips past: an error whose reason holds but is not the first 2.6 checks (an unknown topic
    # answered as being deleted while it is both)
    "UncleanPartitionWithLiveReplicaGetsLeader": Bug(
        "state_machines.py", "or bool(self.w.zk.unclean_topics >> self.w.topic_of(p) & 1))", "or False)",
        "m-elect.toml", 13),
    # slips past: a switch heard by the controller only at its next failover (a settled cluster
    # with a failover in between still elects)
    # ---- log-directory failure -----------------------------------------------------------------
    "OfflineDirReplicaNotLeader": Bug(
        "controller.py", "        if new:\n            self.on_replicas_become_offline([(p, b) for p in bits(new)])\n",
        "", "logdir", 5),
    # slips past: the replica taken offline, but an election that still counts it as online
    # (a later election's choice is ElectionRuleConformance's and CleanElectionFromIsr's business)
    "OfflineDirsKnownOnceQuiescent": Bug(
        "controller.py", "brokers = self.zk.log_dir_events", "brokers = 0", "logdir", 3),
    # slips past: a notification read but the replicas asked about only at the next failover
}

GOALS: dict[str, Bug] = {
    "ReplicaOfflineOnLiveBroker": Bug(
        "broker.py", "storage_errors = mask_of(part.partition for part in request.partitions) & broker.offline_dirs",
        "storage_errors = 0", "logdir"),
    # slips past: a storage error answered for the wrong partition (OfflineDirsKnownOnceQuiescent's business)
    "ControllerFailsOver": Bug(
        "broker.py", "w.delete_ephemerals(b)", "pass", "m-delete-reassign.toml"),
    # slips past: a failover that happens but leaves the new controller without a context
    "PartitionOfflineAndBack": Bug(
        "controller.py",
        "R.OnlineReplica)\n        self.trigger_online_partition_state_change()",
        "R.OnlineReplica)", "m-delete-reassign.toml"),
    # slips past: a partition brought back online with a leader outside its ISR
    "TopicDeleted": Bug(
        "topic_deletion.py", "self.complete_delete_topic(t)", "pass", "m-delete.toml"),
    # slips past: a deletion that completes only on some runs
    "ReassignmentCompletes": Bug(
        "reassignment.py", "set(self.target_replicas(p)) <= set(znode.isr)",
        "set(self.target_replicas(p)) == set(znode.isr)", "m-reassign.toml"),
    # slips past: a reassignment that completes before its new replicas are in sync
    "ControlledShutdownMovesLeadership": Bug(
        "controller.py", "if broker_epoch < self.broker_epochs[b]:", "if broker_epoch <= self.broker_epochs[b]:",
        "m-shutdown.toml"),
    # slips past: a shutdown that moves leadership of some partitions only
    "PreferredLeaderElected": Bug(
        "controller.py", "and a[0] in online and a[0] in z.isr):", "and a[0] in online and z.isr[0] == a[0]):",
        "m-shutdown.toml"),
    # slips past: a preferred election that happens but late
    "UncleanElectionOnDemand": Bug(
        "controller.py", "strategy = Strategy.OFFLINE_ALLOW_UNCLEAN\n", "strategy = Strategy.OFFLINE\n",
        "m-elect.toml"),
    # slips past: an unclean election on demand of another partition than the one asked for
    "UncleanElectionSwitchedOn": Bug(
        "controller.py", "self.trigger_online_partition_state_change(topic=event.a)", "pass", "m-elect.toml"),
    # slips past: a switch that elects only at the next broker change
}

UNCAUGHT: dict[str, str] = {}

# ---- another cause than Kafka 2.6's own ----------------------------------------------------------
#
# A property a Kafka 2.6 Finding breaks (model/catalogue/findings.py) must still fail on any other
# violation: the checkers excuse only the violations that look like the Finding's. For each such
# property, a mistake that breaks it another way, on a config under which its Finding applies
# (tests/model/catalogue/test_excused_by_cause.py names the config changes that make it apply).

#: The retry of a partition-state create whose reply was lost answers NODEEXISTS; taken as success,
#: the partition goes Online although the controller caches no leadership and sends no
#: LeaderAndIsr: after the very fault of Findings 7, but not the partition Findings 7 leaves New.
_LOST_REPLY_TAKEN_AS_CREATED = ("state_machines.py", "continue\n            self.leadership[p] = znode",
                                "done.append(p)\n                continue\n            self.leadership[p] = znode")
#: Reelect resigns and does not elect: a deletion of /controller that every broker heard leaves no
#: controller, unlike Findings 10's deletion that nobody heard.
_REELECT_WITHOUT_ELECTION = ("controller.py",
                             "def process_reelect(self, _: Event) -> None:\n        self.maybe_resign()\n"
                             "        self.elect()",
                             "def process_reelect(self, _: Event) -> None:\n        self.maybe_resign()")

NOT_THE_FINDING: dict[str, Bug] = {
    # the notification read but no broker asked: the failed replica is a follower in the ISR, not a
    # replica a reassignment is adding (Findings 18, which applies once a reassignment may add one)
    "OfflineDirsKnownOnceQuiescent": INVARIANTS["OfflineDirsKnownOnceQuiescent"],
    # the old assignment written back for a topic that is not being deleted (Findings 15 restores
    # only a topic queued for deletion, Findings 16 is another event's write)
    "PartitionCountNeverDecreases": replace(INVARIANTS["PartitionCountNeverDecreases"], config="addparts"),
    # an addition never creates its partitions: they have no state znode, which no lost create
    # reply leaves (Findings 7 strands a partition whose znode exists)
    "AddedPartitionsCreated": INVARIANTS["AddedPartitionsCreated"],
    "CacheMatchesZk": Bug(*_LOST_REPLY_TAKEN_AS_CREATED, "tiny", 6),
    "OfflineReplicaLeavesIsr": Bug(*_LOST_REPLY_TAKEN_AS_CREATED, "tiny", 6),
    "NoDeadLeaderAdvertised": Bug(*_LOST_REPLY_TAKEN_AS_CREATED, "tiny", 7),
    "DeadReplicaOnlyAsSoleIsrMember": Bug(*_LOST_REPLY_TAKEN_AS_CREATED, "tiny", 7),
    "BrokersFollowTheLeader": Bug(*_LOST_REPLY_TAKEN_AS_CREATED, "tiny", 6),
    # the controller keeps a failed broker as shutting down: it rejoins the ISR after its restart
    # without having asked for a controlled shutdown (Findings 8's own violation comes first, in 11)
    "NoShuttingDownJoinsIsr": replace(INVARIANTS["NoShuttingDownJoinsIsr"], config="tiny", length=13),
    # the reassignment request is never resumed: /admin/reassign_partitions stays
    "AdminZnodesConsumed": INVARIANTS["AdminZnodesConsumed"],
    # a failover skips the pending elections: the znode stays, every partition it names has leadership
    "PreferredElectionZnodeConsumed": INVARIANTS["PreferredElectionZnodeConsumed"],
    "ActiveControllerOnceSettled": Bug(*_REELECT_WITHOUT_ELECTION, "m-move.toml", 6),
    "EventuallyOneActiveController": Bug(*_REELECT_WITHOUT_ELECTION, "m-move.toml", 6),
    # Findings 11 (a reassignment of a partition without a state znode) applies on m-reassign.toml
    # once a run may have both the crash and the reassignment; each mistake below breaks its
    # property before the Finding's own violations (17 steps and more) and for another cause.
    # a failover never resumes the reassignment request: it stays in /admin/reassign_partitions
    "ReassignmentEventuallyCompletes": replace(INVARIANTS["ReassignmentEventuallyCompletes"], length=9),
    # the failover's context starts with no live broker: its replicas are not held OnlineReplica
    "ReplicaStatesMatchLiveness": replace(INVARIANTS["ReplicaStatesMatchLiveness"], config="m-reassign.toml",
                                          length=4),
    # the completed reassignment does not stop the removed old leader, which was OnlineReplica
    "DeposedLeaderNotified": replace(INVARIANTS["DeposedLeaderNotified"], length=11),
    # `replicasOnBrokers` answers every replica: a broker's failure takes the live ones offline
    # too, and the partition is left leaderless with its ISR inside the assignment (with a session
    # expiry added, Findings 13 applies as well: no reassignment completed with its target held dead)
    "OfflinePartitionWithLiveIsrGetsLeader": replace(INVARIANTS["OfflinePartitionWithLiveIsrGetsLeader"],
                                                     config="m-reassign.toml", length=11),
    # a broker's startup elects nothing: the partition stays OfflinePartition
    "OfflinePartitionEventuallyOnline": replace(INVARIANTS["OfflinePartitionEventuallyOnline"],
                                                config="m-reassign.toml", length=12),
    # Findings 4 (a removed replica's lost StopReplica) applies on m-reassign.toml once a run may
    # have both the crash and the reassignment; the mistake never stops the removed replicas, so the
    # old leader, outside the assignment, believes it leads with no StopReplica ever sent to it
    "AtMostOneBelievedLeaderAfterQuiescence": Bug(
        "reassignment.py", "self.stop_removed_replicas(p, removing)", "pass", "m-reassign.toml", 23),
    # Findings 12 (a stale StopReplica answer completes a retried deletion) applies once a run may
    # also move /controller; the mistake completes a deletion before any replica answered
    "DeletedTopicLeavesNoReplica": INVARIANTS["DeletedTopicLeavesNoReplica"],
    # Findings 11 again: the mistake deletes every reassignment request unanswered, state znode or not
    "AdminRequestCarriedOutOrRefused": INVARIANTS["AdminRequestCarriedOutOrRefused"],
    # Findings 14 (the rebalance skips everything while a reassignment runs) applies once a run may
    # also reassign; the mistake elects nothing with no reassignment in progress
    "AutoRebalanceElectsPreferred": replace(INVARIANTS["AutoRebalanceElectsPreferred"], length=7),
    # Findings 17 (a request never answered) applies once a run may lose a create's reply or move
    # the controller; the mistake answers an existing partition as unknown
    "ElectLeadersAnswered": replace(INVARIANTS["ElectLeadersAnswered"], config="elect"),
}
