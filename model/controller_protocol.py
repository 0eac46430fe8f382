"""What the controller's parts share during one step: the thawed context and their mutual calls.

Kafka builds its controller from parts that share one `ControllerContext`: `KafkaController`
constructs the `replicaStateMachine`, the `partitionStateMachine` and the `topicDeletionManager`
with the context, the ZooKeeper client and the request batch
(kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala). The model keeps each
part in a file of its own, Kafka's handlers written as they read (`state_machines.py`,
`topic_deletion.py`, `reassignment.py`), and joins them into one `kcm.model.controller.Controller`,
whose fields are the context thawed for the step.

`ControllerProtocol` says what a part may use of the others: the context's fields, the world, and
the calls one part makes into another (a deletion moves replicas through the replica state
machine, a reassignment marks its topic ineligible for deletion). Each part's class derives from
`ControllerBase`, which is the Protocol for the type checker and `object` at run time, so the
parts stay plain classes and nothing is looked up through the Protocol while exploring.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kcm.model.cluster import PartitionZnode, Zk
    from kcm.model.election import LeaderAndIsr
    from kcm.model.state_machines import RequestBatch, Strategy
    from kcm.model.states import PartitionState, ReplicaState
    from kcm.model.variants import Flags
    from kcm.model.world import World


class ControllerProtocol(Protocol):
    """Broker `me`'s controller module during one step, as its parts see it."""

    w: World
    me: int
    flags: Flags
    batch: RequestBatch
    active: bool
    # the `ControllerContext`, thawed (`kcm.model.cluster.Context` gives each field's meaning)
    epoch: int
    live: int
    broker_epochs: list[int]
    shutting_down: int
    assignment: list[tuple[int, ...]]
    adding: list[tuple[int, ...]]
    removing: list[tuple[int, ...]]
    reassigning: int
    leadership: list[PartitionZnode]
    partition_states: list[PartitionState]
    replica_states: list[list[ReplicaState]]
    topics_to_delete: int
    topics_ineligible: int
    topics_deletion_started: int
    channel: int
    offline_dirs: list[int]

    @property
    def zk(self) -> Zk: ...

    # the controller (controller.py)
    def live_brokers(self) -> tuple[int, ...]: ...
    def remove_topic(self, t: int) -> None: ...

    # the request batch and the state machines (state_machines.py)
    def new_batch(self) -> None: ...
    def add_leader_and_isr(self, brokers: Iterable[int], p: int, znode: PartitionZnode, is_new: bool) -> None: ...
    def send_requests_to_brokers(self) -> None: ...
    def send_update_metadata(self, brokers: Iterable[int]) -> None: ...
    def is_replica_online(self, b: int, p: int, include_shutting_down: bool = False) -> bool: ...
    def on_offline_dirs(self, p: int) -> int: ...
    def is_topic_queued_for_deletion(self, t: int) -> bool: ...
    def mark_zk_write(self) -> None: ...
    def write_leader_and_isr(self, p: int, new: LeaderAndIsr, read: PartitionZnode) -> PartitionZnode | None: ...
    def handle_replica_state_changes(self, replicas: Sequence[tuple[int, int]], target: ReplicaState) -> None: ...
    def handle_partition_state_changes(self, partitions: Sequence[int], target: PartitionState,
                                       strategy: Strategy | None = None) -> dict[int, PartitionZnode]: ...

    # topic deletion (topic_deletion.py)
    def mark_topic_ineligible_for_deletion(self, topics: int) -> None: ...
    def resume_deletion_for_topics(self, topics: int) -> None: ...


#: Kafka's `UpdateLeaderAndIsrResult` (kafka@2.6.x:core/src/main/scala/kafka/zk/KafkaZkClient.scala):
#: the partitions whose state znode was written, with the znode, and the partitions to retry.
UpdateLeaderAndIsrResult = tuple[dict[int, "PartitionZnode"], list[int]]

if TYPE_CHECKING:
    ControllerBase = ControllerProtocol
else:
    ControllerBase = object
