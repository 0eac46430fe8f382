"""The controller's two state machines: their states, with Kafka's names and byte codes.

Kafka declares each state as a `case object` with a `state: Byte` code and a set of valid previous
states (`validPreviousStates`). The codes below are Kafka's own, so a state printed by kcm and a
state logged by a Kafka controller carry the same number. The valid-previous-state sets are in
`tables.py`: the states say what exists, the tables say how one gets there.

Replica states (kafka@2.6.x:core/src/main/scala/kafka/controller/ReplicaStateMachine.scala):

- NewReplica: created during topic creation or partition reassignment; may only become a follower.
- OnlineReplica: started and assigned; may become leader or follower.
- OfflineReplica: its broker died (or it is being moved away or deleted).
- ReplicaDeletionStarted: StopReplica(delete=true) was sent.
- ReplicaDeletionSuccessful: the broker answered the StopReplica(delete=true) without error.
- ReplicaDeletionIneligible: deletion failed or cannot proceed (its broker is down).
- NonExistentReplica: deleted; also the implicit state of every replica the context does not know.

Partition states (kafka@2.6.x:core/src/main/scala/kafka/controller/PartitionStateMachine.scala):

- NewPartition: the assignment exists, no leader or ISR yet.
- OnlinePartition: a leader is elected.
- OfflinePartition: the leader died.
- NonExistentPartition: never created, or deleted.

The 0.8.0 four-state replica machine (NonExistent=4) is out of scope: no table version uses it.
"""

from __future__ import annotations

from enum import IntEnum


class ReplicaState(IntEnum):
    """A replica's state in the controller's ReplicaStateMachine; the value is Kafka's byte code."""

    NewReplica = 1
    OnlineReplica = 2
    OfflineReplica = 3
    ReplicaDeletionStarted = 4
    ReplicaDeletionSuccessful = 5
    ReplicaDeletionIneligible = 6
    NonExistentReplica = 7

    def __repr__(self) -> str:  # round-trips in Hypothesis' printed programs and in traces
        return f"ReplicaState.{self.name}"

    @property
    def short(self) -> str:
        """The name without the `Replica` affix, for diagrams and traces (`DeletionStarted`)."""
        return self.name.replace("Replica", "") or self.name


class PartitionState(IntEnum):
    """A partition's state in the controller's PartitionStateMachine; the value is Kafka's byte code."""

    NewPartition = 0
    OnlinePartition = 1
    OfflinePartition = 2
    NonExistentPartition = 3

    def __repr__(self) -> str:
        return f"PartitionState.{self.name}"

    @property
    def short(self) -> str:
        """The name without the `Partition` affix, for diagrams and traces (`Online`)."""
        return self.name.replace("Partition", "")
