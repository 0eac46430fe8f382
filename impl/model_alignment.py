"""Where the model still differs from Kafka 2.6, and the switches that make the implementation do
what the model does, so that the two can be compared step by step.

The implementation is Kafka 2.6 by default (every field False). Comparing it with the model after
every action (`kcm.impl.abstraction`) found the places below where the model's transition relation
does something Kafka does not. Each is a switch named after what the *model* does, documented with
Kafka's behaviour and the model's. The lock-step tests turn them all on (`ModelAlignment.model()`);
`tests/impl/lockstep/test_model_disagreements.py` keeps, for each, the shortest action sequence found
on which Kafka's behaviour differs from the model and the fields it differs in. When the model adopts
Kafka's behaviour, that test fails and the switch can go. Eight of the thirteen switches the first
comparison needed went that way when the model was corrected (the last,
`stop_replica_callback_as_model`, first narrowed to `fenced_stop_replica_fails_deletions`: the
model now raises no deletion event for a fenced StopReplica, as Kafka), and so did two found later
(`isr_removal_caches_before_fenced_write`, `topic_change_keeps_deleted_topics`), and four after
a line-by-line comparison of the model with the 2.6 branch (`um_after_offline_replicas_as_model`,
Kafka's UpdateMetadata after replicas go offline, and the three below); the sequences that showed
them are kept as regression tests of the agreement.

One switch is a documented abstraction that holds only under some configs:
`no_partition_modifications_handlers` (docs/model.md, "Adding partitions": the model keeps the
per-topic watches where partitions can be added), which `StepCluster` sets from the config. None of
the others is one of the model's documented abstractions (docs/model.md, "Abstractions and
omissions": those need no switch, the implementation shares them, see docs/implementation.md).
They are fidelity gaps of the model, reported to its owners:

* Bookkeeping: which requests are sent, which watches stay armed, which controller epoch a
  leader's ISR write carries (`watches_armed_only_where_model_arms`, `leader_isr_write_keeps_znode_controller_epoch`,
  `auto_rebalance_elects_all_at_once`).
* Behaviour: none left. The three that hid Kafka 2.6's controller-move loops
  (`failover_resumes_only_zk_reassignments`, `failover_skips_leaderless_preferred_elections`,
  `reassignment_tolerates_leaderless_partition`) went when the model took `maybeResumeReassignments`
  at failover, the throwing `partitionLeadershipInfo` reads and `triggerControllerMove`, with a bound
  on controller epochs (`ModelConfig.max_controller_epoch`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class ModelAlignment:
    #: Kafka's ZooKeeperClient arms a watch on *every* read of a path that has a registered handler
    #: (`shouldWatch`): each re-read of a reassigning partition's state znode (elections, ISR shrinks,
    #: `updateLeaderEpoch`) re-arms PartitionReassignmentIsrChangeHandler's watch,
    #: `maybeRemoveFromZkReassignment` re-arms PartitionReassignmentHandler's, and a broker's
    #: controlled shutdown (`zkClient.getControllerId`) re-arms its own /controller watch. The model
    #: arms these only at registration and in the handlers.
    watches_armed_only_where_model_arms: bool = False
    #: A partition leader writes back, with its ISR change, the controller epoch of the partition
    #: state in the LeaderAndIsr that made it leader (`Partition.controllerEpoch`), which a new
    #: controller may have cached with its own epoch without writing it. The model writes the
    #: znode's current `controller_epoch` (model/broker.py `leader_writes_isr`).
    leader_isr_write_keeps_znode_controller_epoch: bool = False
    #: `checkAndTriggerAutoLeaderRebalance` runs one preferred election per preferred broker
    #: (`preferredReplicasForTopicsByBrokers.forKeyValue { ... onReplicaElection(...) }`), each with
    #: its own batch of requests: a broker that is told about partitions of two preferred leaders
    #: gets two LeaderAndIsr requests (and two UpdateMetadata). The model elects every candidate in
    #: one election, one LeaderAndIsr (model/controller.py
    #: `process_auto_preferred_replica_leader_election`).
    auto_rebalance_elects_all_at_once: bool = False
    #: The model keeps the controller's data watches on `/brokers/topics/<t>`
    #: (`PartitionModificationsHandler`) only in configs that can add partitions (docs/model.md,
    #: "Adding partitions"): elsewhere their only effect is a `PartitionModifications` that finds no
    #: new partition (after a reassignment's write of the topic) and re-arms the watch. With this
    #: switch the controller registers none; `StepCluster` sets it from the config.
    no_partition_modifications_handlers: bool = False

    @classmethod
    def model(cls) -> ModelAlignment:
        """Every switch on: behave as the model does."""
        return cls(**{f.name: True for f in fields(cls)})

    def only(self, name: str, value: bool) -> ModelAlignment:
        """This alignment with one switch set to `value`."""
        return ModelAlignment(**{f.name: (value if f.name == name else getattr(self, f.name)) for f in fields(self)})
