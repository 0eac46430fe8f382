"""`Partition`: one broker's replica of one partition, as leader or follower, and the leader's ISR writes.

kafka@2.6.x:core/src/main/scala/kafka/cluster/Partition.scala, without the log. A replica learns its
role from LeaderAndIsr (`make_leader` / `make_follower`, which record the leader epoch, the ISR
(a leader's), the state znode's zkVersion, the replica list, and the epoch of the controller that
made the decision). StopReplica(delete=false) stops it: it neither leads nor fetches.

Before AlterIsr (2.7, KIP-497) the *leader* changes the ISR itself: `shrink_isr` /
`expand_isr` write the state znode with a conditional setData on the cached zkVersion
(`KafkaZkClient.conditional_update_path`), keeping the leader epoch and the deciding controller's
epoch. On success the new ISR and zkVersion are cached and the change is recorded for an
ISR-change notification. On BADVERSION the leader reads the znode back: the same data means an
earlier attempt of its own succeeded (`ReplicationUtils.checkLeaderAndIsrZkData`); anything else
means the controller moved on, and the leader keeps its old ISR ("Cached zkVersion ... skip
updating ISR") until a LeaderAndIsr with a higher leader epoch arrives.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcm.impl.logs import get_logger
from kcm.impl.requests import LeaderAndIsrPartitionState
from kcm.impl.zk_data import LeaderIsrAndControllerEpoch, TopicPartition, TopicPartitionStateZNode
from kcm.model.election import LeaderAndIsr

log = get_logger(__name__)


@dataclass(slots=True)
class Partition:
    topic_partition: TopicPartition
    local_broker_id: int
    leader: int = -1
    leader_epoch: int = -1
    isr: tuple[int, ...] = ()
    zk_version: int = -1
    replicas: tuple[int, ...] = ()
    #: The epoch of the controller that made the current leadership decision (written back with ISR changes).
    controller_epoch: int = -1
    stopped: bool = False

    @property
    def is_leader(self) -> bool:
        return self.leader == self.local_broker_id and not self.stopped

    def make_leader(self, state: LeaderAndIsrPartitionState) -> None:
        self.controller_epoch = state.controller_epoch
        self.leader = self.local_broker_id
        self.leader_epoch = state.leader_epoch
        self.isr = tuple(state.isr)
        self.zk_version = state.zk_version
        self.replicas = tuple(state.replicas)
        self.stopped = False

    def make_follower(self, state: LeaderAndIsrPartitionState) -> None:
        self.controller_epoch = state.controller_epoch
        self.leader = state.leader
        self.leader_epoch = state.leader_epoch
        self.isr = ()
        self.zk_version = state.zk_version
        self.replicas = tuple(state.replicas)
        self.stopped = False

    def stop(self) -> None:
        """StopReplica(delete=false): no longer leads or fetches (the leader epoch is kept)."""
        self.leader = -1
        self.isr = ()
        self.stopped = True

    # ---- the leader's ISR changes --------------------------------------------------------------

    def update_isr(self, zk_client, new_isr: tuple[int, ...], controller_epoch: int | None = None) -> bool:
        """Write `new_isr` conditionally on the cached zkVersion; True if it is now the ISR.

        `controller_epoch` overrides the epoch written back (None: the recorded one, as Kafka)."""
        epoch = self.controller_epoch if controller_epoch is None else controller_epoch
        new = LeaderIsrAndControllerEpoch(LeaderAndIsr(self.local_broker_id, self.leader_epoch, new_isr), epoch)
        path = TopicPartitionStateZNode.path(self.topic_partition)
        data = TopicPartitionStateZNode.encode(new)
        updated, version = zk_client.conditional_update_path(path, data, self.zk_version, _check_leader_and_isr_zk_data)
        if not updated:
            log.info("Cached zkVersion %d not equal to that in zookeeper, skip updating ISR of %s",
                     self.zk_version, self.topic_partition)
            return False
        self.isr = tuple(new_isr)
        self.zk_version = version
        return True


def _check_leader_and_isr_zk_data(zk_client, path: str, expected: bytes) -> tuple[bool, int]:
    """`ReplicationUtils.checkLeaderAndIsrZkData`: after BADVERSION, is the znode what we wrote?"""
    data, stat = zk_client.get_data_and_stat(path)
    if data is None:
        return False, -2
    written = TopicPartitionStateZNode.decode(expected, 0)
    current = TopicPartitionStateZNode.decode(data, 0)
    return (written == current, stat.version) if written == current else (False, -2)
