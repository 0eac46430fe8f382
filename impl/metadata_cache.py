"""`MetadataCache`: a broker's view of the cluster, fed by UpdateMetadata.

kafka@2.6.x:core/src/main/scala/kafka/server/MetadataCache.scala. `update_metadata` overwrites the
partitions the request names (a partition whose leader is -2, LeaderDuringDelete, is removed: its
topic is being deleted) and replaces the live broker list and the controller id. `epoch` is the
controller epoch of the last UpdateMetadata applied: the one field the model keeps
(`Broker.metadata_epoch`), since the model abstracts the cache's contents.
"""

from __future__ import annotations

from kcm.impl.requests import UpdateMetadataPartitionState, UpdateMetadataRequest
from kcm.impl.zk_data import TopicPartition
from kcm.model.election import LEADER_DURING_DELETE


class MetadataCache:
    def __init__(self) -> None:
        self.partitions: dict[TopicPartition, UpdateMetadataPartitionState] = {}
        self.alive_brokers: tuple[int, ...] = ()
        self.controller_id: int = -1
        self.epoch: int = 0

    def update_metadata(self, request: UpdateMetadataRequest) -> None:
        self.controller_id = request.controller_id
        self.alive_brokers = tuple(request.live_brokers)
        for state in request.partition_states:
            if state.leader == LEADER_DURING_DELETE:
                self.partitions.pop(state.topic_partition, None)
            else:
                self.partitions[state.topic_partition] = state
        self.epoch = request.controller_epoch
