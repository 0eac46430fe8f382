"""Where the model abstracts Kafka 2.6 differently, and the switches that make the implementation do
what the model does, so that the two can be compared step by step.

The implementation is Kafka 2.6 by default (every field False). Comparing it with the model after
every action (`kcm.impl.abstraction`) found the places below where the model's transition relation
does something Kafka does not. Each is a switch named after what the *model* does, documented with
Kafka's behaviour and the model's. The lock-step tests turn them all on (`ModelAlignment.model()`);
`tests/impl/lockstep/test_model_disagreements.py` keeps, for each, the shortest action sequence found
on which Kafka's behaviour differs from the model and the fields it differs in. When the model adopts
Kafka's behaviour, that test fails and the switch can go.

Two kinds:

* Bookkeeping: which no-op events get queued, which watches stay armed, which UpdateMetadata is
  sent (`um_after_offline_replicas_as_model`, `topic_znode_delete_is_silent`,
  `watches_armed_only_where_model_arms`, `stop_replica_callback_as_model`,
  `partition_state_watch_fires_on_create_and_delete`, `leader_isr_write_keeps_znode_controller_epoch`).
* Behaviour: the model is more forgiving than Kafka. `failover_resumes_only_zk_reassignments`,
  `failover_skips_leaderless_preferred_elections` and `initialization_skips_existing_state_znodes`
  hide paths on which Kafka 2.6's controller throws during failover and resigns at once (and so would
  every successor: a controller-move loop while the condition lasts);
  `reassignment_tolerates_leaderless_partition` completes a reassignment Kafka fails;
  `isr_change_completes_reassignment` completes reassignments earlier than Kafka 2.6;
  `controlled_shutdown_failure_propagates` resigns where Kafka answers the broker and carries on;
  `controlled_shutdown_remaining_includes_single_replica` keeps a broker with a single-replica
  partition from ever finishing its controlled shutdown.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class ModelAlignment:
    #: `onReplicasBecomeOffline` sends UpdateMetadata to every live broker when no partition had an
    #: offline leader (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala,
    #: `if (partitionsWithOfflineLeader.isEmpty) sendUpdateMetadataRequest(...)`). The model sends it
    #: when no replica outside a deletion went offline and no leader was elected
    #: (model/controller.py `on_replicas_become_offline`).
    um_after_offline_replicas_as_model: bool = False
    #: Kafka 2.6's `processIsrChangeNotification` refreshes the cache and sends UpdateMetadata; it
    #: completes no reassignment (that is PartitionReassignmentIsrChange's job; AlterIsr in 2.7 added
    #: it). The model also completes reassignments there.
    isr_change_completes_reassignment: bool = False
    #: Deleting `/brokers/topics/<t>` at the end of a topic deletion fires the controller's child
    #: watch on /brokers/topics (TopicChangeHandler), which queues a (no-op) TopicChange. The model
    #: fires no watch on /brokers/topics there.
    topic_znode_delete_is_silent: bool = False
    #: Kafka's ZooKeeperClient arms a watch on *every* read of a path that has a registered handler
    #: (`shouldWatch`): each re-read of a reassigning partition's state znode (elections, ISR shrinks,
    #: `updateLeaderEpoch`) re-arms PartitionReassignmentIsrChangeHandler's watch,
    #: `maybeRemoveFromZkReassignment` re-arms PartitionReassignmentHandler's, and a broker's
    #: controlled shutdown (`zkClient.getControllerId`) re-arms its own /controller watch. The model
    #: arms these only at registration and in the handlers.
    watches_armed_only_where_model_arms: bool = False
    #: A partition leader writes back, with its ISR change, the controller epoch of the LeaderAndIsr
    #: that made it leader (`Partition.controllerEpoch`). The model writes the znode's current
    #: `controller_epoch` (model/broker.py `leader_writes_isr`).
    leader_isr_write_keeps_znode_controller_epoch: bool = False
    #: Kafka's StopReplica response callback puts TopicDeletionStopReplicaResponseReceived only for
    #: partitions of topics whose deletion has started, with the broker's per-partition errors (none
    #: when the whole request was fenced), and `completeReplicaDeletion` ignores replicas of topics
    #: not queued for deletion. The model answers every StopReplica that deletes partitions (a
    #: reassignment's too), a fenced one as failing all of them.
    stop_replica_callback_as_model: bool = False
    #: Kafka answers a ControlledShutdown from `Try { doControlledShutdown(...) }`: a
    #: ControllerMovedException inside it is answered to the broker and does not make the
    #: controller resign. The model re-raises it (the controller resigns at once).
    controlled_shutdown_failure_propagates: bool = False
    #: Kafka's `partitionLeadersOnBroker` (the answer to a controlled shutdown) leaves out
    #: single-replica partitions; the model counts them, so such a broker never finishes.
    controlled_shutdown_remaining_includes_single_replica: bool = False
    #: At failover Kafka resumes every reassignment in progress (`initializePartitionReassignments`:
    #: those /admin/reassign_partitions names, then `maybeResumeReassignments` for the others, e.g.
    #: one whose first attempt failed after U1). The model only processes /admin/reassign_partitions.
    failover_resumes_only_zk_reassignments: bool = False
    #: At failover Kafka reads the pending preferred elections with
    #: `partitionLeadershipInfo(partition).get`, which throws for a partition without a state znode
    #: (a new partition none of whose replicas was ever live, or one of a topic queued for deletion
    #: before it got a leader): the failover fails and the new controller resigns
    #: (`triggerControllerMove`), and so does every successor while the znode names it. The model
    #: skips such partitions.
    failover_skips_leaderless_preferred_elections: bool = False
    #: PartitionReassignmentIsrChangeHandler reacts to data changes only (`handleDataChange`): the
    #: creation of the state znode (a partition initialised while its reassignment waits) or its
    #: deletion spends the watch without an event. The model queues PartitionReassignmentIsrChange
    #: for every write of the state znode.
    partition_state_watch_fires_on_create_and_delete: bool = False
    #: Completing a reassignment (B3, `moveReassignedPartitionLeaderIfRequired`) Kafka reads
    #: `partitionLeadershipInfo(tp).get`, which throws for a partition without a state znode, so the
    #: reassignment fails (UNKNOWN_SERVER_ERROR). The model reads leader -1 and completes it, leaderless
    #: (e.g. a reassignment to a permutation of the replicas of a partition none of whose replicas was live).
    reassignment_tolerates_leaderless_partition: bool = False
    #: Initialising a new partition (New -> Online) Kafka creates its state znode (and the
    #: .../partitions parents) with fenced creates, so a controller whose epoch moved fails the CheckOp
    #: (ControllerMovedException, it resigns) even when the znode already exists. The model first
    #: checks whether the znode exists and, if it does, skips the partition without any fenced write.
    initialization_skips_existing_state_znodes: bool = False

    @classmethod
    def model(cls) -> ModelAlignment:
        """Every switch on: behave as the model does."""
        return cls(**{f.name: True for f in fields(cls)})

    def only(self, name: str, value: bool) -> ModelAlignment:
        """This alignment with one switch set to `value`."""
        return ModelAlignment(**{f.name: (value if f.name == name else getattr(self, f.name)) for f in fields(self)})
