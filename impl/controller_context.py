"""`ControllerContext`: the controller's in-memory cache of the cluster, rebuilt from ZooKeeper at failover.

kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerContext.scala. Everything the active
controller believes lives here: its epoch and the /controller_epoch zkVersion that fences its
writes, the live (and shutting-down) brokers with their broker epochs, every topic's replica
assignment (with the KIP-455 adding/removing replicas), the cached partition states
(`partition_leadership_info`), the replica and partition state machines' states, the partitions
being reassigned and the topic-deletion bookkeeping. It is read and written only on the event
thread. `reset_context()` is what resignation does (epoch back to 0, everything forgotten).

Replica and partition states are kept here (as in Kafka 2.4+), not in the state machines; a
replica or partition without an entry is in NonExistent state.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kcm.impl.zk_data import Broker, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from kcm.model.states import PartitionState, ReplicaState


@dataclass(frozen=True, slots=True, order=True)
class PartitionAndReplica:
    """Kafka's `PartitionAndReplica`: one replica of one partition."""

    topic_partition: TopicPartition
    replica: int

    @property
    def topic(self) -> str:
        return self.topic_partition.topic

    def __str__(self) -> str:
        return f"[{self.topic_partition},{self.replica}]"


def target_replicas(assignment: ReplicaAssignment) -> tuple[int, ...]:
    """`ReplicaAssignment.targetReplicas`: the replicas without those being removed."""
    return tuple(r for r in assignment.replicas if r not in assignment.removing_replicas)


def origin_replicas(assignment: ReplicaAssignment) -> tuple[int, ...]:
    """`ReplicaAssignment.originReplicas`: the replicas without those being added."""
    return tuple(r for r in assignment.replicas if r not in assignment.adding_replicas)


def is_being_reassigned(assignment: ReplicaAssignment) -> bool:
    return bool(assignment.adding_replicas or assignment.removing_replicas)


def reassign_to(assignment: ReplicaAssignment, target: Iterable[int]) -> ReplicaAssignment:
    """`ReplicaAssignment.reassignTo`: full set = target first, then the origin replicas not in it."""
    target = tuple(target)
    origin = origin_replicas(assignment)
    full = tuple(dict.fromkeys(target + origin))
    return ReplicaAssignment(full, tuple(r for r in full if r not in origin), tuple(r for r in full if r not in target))


def remove_replica(assignment: ReplicaAssignment, replica: int) -> ReplicaAssignment:
    """`ReplicaAssignment.removeReplica`."""
    return ReplicaAssignment(tuple(r for r in assignment.replicas if r != replica),
                             tuple(r for r in assignment.adding_replicas if r != replica),
                             tuple(r for r in assignment.removing_replicas if r != replica))


EMPTY_ASSIGNMENT = ReplicaAssignment(())


class ControllerContext:
    """The active controller's cache (see the module docstring)."""

    def __init__(self) -> None:
        self.reset_context()

    def reset_context(self) -> None:
        """`resetContext`: what a resigning controller keeps (nothing)."""
        self.epoch = 0
        self.epoch_zk_version = 0
        self._live_brokers: dict[int, Broker] = {}
        self._live_broker_epochs: dict[int, int] = {}
        self.shutting_down_broker_ids: set[int] = set()
        self.all_topics: set[str] = set()
        self.partition_assignments: dict[str, dict[int, ReplicaAssignment]] = {}
        self.partition_leadership_info: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        self.partitions_being_reassigned: set[TopicPartition] = set()
        self.partition_states: dict[TopicPartition, PartitionState] = {}
        self.replica_states: dict[PartitionAndReplica, ReplicaState] = {}
        self.topics_to_be_deleted: set[str] = set()
        self.topics_with_deletion_started: set[str] = set()
        self.topics_ineligible_for_deletion: set[str] = set()
        #: `replicasOnOfflineDirs`: per broker, the partitions it answered a LeaderAndIsr for with
        #: KAFKA_STORAGE_ERROR (kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerContext.scala line 89)
        self.replicas_on_offline_dirs: dict[int, set[TopicPartition]] = {}

    # ---- brokers -----------------------------------------------------------------------------

    def set_live_brokers(self, broker_and_epochs: dict[Broker, int]) -> None:
        self._live_brokers = {b.id: b for b in broker_and_epochs}
        self._live_broker_epochs = {b.id: e for b, e in broker_and_epochs.items()}

    def add_live_brokers(self, broker_and_epochs: dict[Broker, int]) -> None:
        for broker, epoch in broker_and_epochs.items():
            self._live_brokers[broker.id] = broker
            self._live_broker_epochs[broker.id] = epoch

    def remove_live_brokers(self, broker_ids: Iterable[int]) -> None:
        for b in broker_ids:
            self._live_brokers.pop(b, None)
            self._live_broker_epochs.pop(b, None)

    @property
    def live_or_shutting_down_broker_ids(self) -> frozenset[int]:
        return frozenset(self._live_brokers)

    @property
    def live_broker_ids(self) -> frozenset[int]:
        return frozenset(self._live_brokers) - self.shutting_down_broker_ids

    @property
    def live_broker_id_and_epochs(self) -> dict[int, int]:
        return dict(self._live_broker_epochs)

    def live_broker_epoch(self, broker_id: int) -> int:
        return self._live_broker_epochs[broker_id]

    def is_replica_online(self, broker_id: int, tp: TopicPartition | None = None,
                          include_shutting_down_brokers: bool = False) -> bool:
        """`isReplicaOnline`: the broker is live (and not shutting down, unless included) and its
        replica of `tp` is not on an offline log directory (ControllerContext.scala lines 205-211)."""
        if include_shutting_down_brokers:
            broker_online = broker_id in self._live_brokers
        else:
            broker_online = broker_id in self._live_brokers and broker_id not in self.shutting_down_broker_ids
        return broker_online and tp not in self.replicas_on_offline_dirs.get(broker_id, ())

    def replicas_on_offline_dirs_of(self, tp: TopicPartition) -> set[int]:
        """The brokers whose replica of `tp` is in `replicasOnOfflineDirs`."""
        return {b for b, partitions in self.replicas_on_offline_dirs.items() if tp in partitions}

    # ---- topics and assignments --------------------------------------------------------------

    def set_all_topics(self, topics: Iterable[str]) -> None:
        self.all_topics = set(topics)

    def all_partitions(self) -> list[TopicPartition]:
        return sorted(TopicPartition(t, p) for t, parts in self.partition_assignments.items() for p in parts)

    def partitions_for_topic(self, topic: str) -> list[TopicPartition]:
        return sorted(TopicPartition(topic, p) for p in self.partition_assignments.get(topic, {}))

    def partition_full_replica_assignment(self, tp: TopicPartition) -> ReplicaAssignment:
        return self.partition_assignments.get(tp.topic, {}).get(tp.partition, EMPTY_ASSIGNMENT)

    def partition_replica_assignment(self, tp: TopicPartition) -> tuple[int, ...]:
        return self.partition_full_replica_assignment(tp).replicas

    def partition_full_replica_assignment_for_topic(self, topic: str) -> dict[TopicPartition, ReplicaAssignment]:
        return {TopicPartition(topic, p): a for p, a in sorted(self.partition_assignments.get(topic, {}).items())}

    def update_partition_full_replica_assignment(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        self.partition_assignments.setdefault(tp.topic, {})[tp.partition] = assignment

    def partitions_on_broker(self, broker_id: int) -> list[TopicPartition]:
        return [tp for tp in self.all_partitions() if broker_id in self.partition_replica_assignment(tp)]

    def replicas_on_brokers(self, broker_ids: Iterable[int]) -> list[PartitionAndReplica]:
        ids = set(broker_ids)
        return [PartitionAndReplica(tp, r) for tp in self.all_partitions()
                for r in self.partition_replica_assignment(tp) if r in ids]

    def replicas_for_topic(self, topic: str) -> list[PartitionAndReplica]:
        return [PartitionAndReplica(tp, r) for tp in self.partitions_for_topic(topic)
                for r in self.partition_replica_assignment(tp)]

    def replicas_for_partition(self, partitions: Iterable[TopicPartition]) -> list[PartitionAndReplica]:
        return [PartitionAndReplica(tp, r) for tp in sorted(partitions) for r in self.partition_replica_assignment(tp)]

    def remove_topic(self, topic: str) -> None:
        """`removeTopic` as Kafka 2.6 has it (kafka@2.6.x:core/src/main/scala/kafka/controller/
        ControllerContext.scala, lines 283-290): forget the topic's assignment and leadership.
        The deletion bookkeeping (to be deleted, deletion started: `completeDeleteTopic` clears
        those; KAFKA-10040 moved them here in 2.7), the ineligibility, the reassignments and the
        partition and replica states are kept."""
        for tp in self.partitions_for_topic(topic):
            self.partition_leadership_info.pop(tp, None)
        self.partition_assignments.pop(topic, None)
        self.all_topics.discard(topic)

    # ---- leadership ----------------------------------------------------------------------------

    def put_partition_leadership_info(self, tp: TopicPartition, info: LeaderIsrAndControllerEpoch) -> None:
        """`partitionLeadershipInfo.put(tp, info)` in 2.6 (a public map there; the method of this name
        came with KAFKA-10040 in 2.7, which 2.6 does not have)."""
        self.partition_leadership_info[tp] = info

    def partitions_with_leaders(self) -> list[TopicPartition]:
        return sorted(self.partition_leadership_info)

    def partitions_with_offline_leader(self) -> list[TopicPartition]:
        """Partitions not being deleted whose leader is not online."""
        return sorted(tp for tp, info in self.partition_leadership_info.items()
                      if not self.is_replica_online(info.leader_and_isr.leader, tp)
                      and not self.is_topic_queued_up_for_deletion(tp.topic))

    def partition_leaders_on_broker(self, broker_id: int) -> frozenset[TopicPartition]:
        """The partitions `broker_id` leads, except single-replica ones and those being deleted."""
        return frozenset(tp for tp, info in self.partition_leadership_info.items()
                         if not self.is_topic_queued_up_for_deletion(tp.topic)
                         and info.leader_and_isr.leader == broker_id
                         and len(self.partition_replica_assignment(tp)) > 1)

    # ---- states --------------------------------------------------------------------------------

    def partition_state(self, tp: TopicPartition) -> PartitionState:
        return self.partition_states.get(tp, PartitionState.NonExistentPartition)

    def put_partition_state(self, tp: TopicPartition, state: PartitionState) -> None:
        if state is PartitionState.NonExistentPartition:
            self.partition_states.pop(tp, None)
        else:
            self.partition_states[tp] = state

    def replica_state(self, replica: PartitionAndReplica) -> ReplicaState:
        return self.replica_states.get(replica, ReplicaState.NonExistentReplica)

    def put_replica_state(self, replica: PartitionAndReplica, state: ReplicaState) -> None:
        self.replica_states[replica] = state

    def remove_replica_state(self, replica: PartitionAndReplica) -> None:
        self.replica_states.pop(replica, None)

    def replicas_in_state(self, topic: str, state: ReplicaState) -> list[PartitionAndReplica]:
        return [r for r in self.replicas_for_topic(topic) if self.replica_state(r) is state]

    def are_all_replicas_in_state(self, topic: str, state: ReplicaState) -> bool:
        # a `forall`: true for a topic with no replica (kafka@2.6.x:core/src/main/scala/kafka/
        # controller/ControllerContext.scala `areAllReplicasInState`, lines 320-322)
        return all(self.replica_state(r) is state for r in self.replicas_for_topic(topic))

    def is_any_replica_in_state(self, topic: str, state: ReplicaState) -> bool:
        return any(self.replica_state(r) is state for r in self.replicas_for_topic(topic))

    def partitions_in_states(self, states: Iterable[PartitionState]) -> list[TopicPartition]:
        wanted = set(states)
        return sorted(tp for tp in self.all_partitions() if self.partition_state(tp) in wanted)

    # ---- deletion ------------------------------------------------------------------------------

    def queue_topic_deletion(self, topics: Iterable[str]) -> None:
        self.topics_to_be_deleted.update(topics)

    def begin_topic_deletion(self, topics: Iterable[str]) -> None:
        self.topics_with_deletion_started.update(topics)

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return topic in self.topics_to_be_deleted
