"""`ControllerZkClient`: the controller's `KafkaZkClient`, with the three things the controller adds.

kafka@2.6.x's controller talks to ZooKeeper through `KafkaZkClient` directly; this subclass only
adds what this implementation needs around it, without changing any operation's semantics:

* **Noticing controller writes.** Every controller write goes through `_fenced` (the
  /controller_epoch CheckOp wrapper). A successful one calls `on_controller_write`, which the
  controller uses to record a write made while it was not active (variant V4; `Ghost` in the model).
* **Variant V3** (`Flags.no_zk_epoch_fence`, KAFKA-6082 undone): controller writes are sent without
  the CheckOp, as before Kafka 2.1.
* **Reads that do not watch.** Kafka's `ZooKeeperClient` arms a watch on every read of a path with a
  registered handler. `get_topic_partition_states(..., watch=False)` reads without arming, for the
  `ModelAlignment.partition_state_watch_armed_as_model` switch; `get_controller_id_unwatched` is
  the lookup of `ModelAlignment.controlled_shutdown_lookup_unwatched`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from kcm.impl.kafka_zk_client import KafkaZkClient
from kcm.impl.zk.protocol import ANY_VERSION, NoNodeError, Op, OpResult
from kcm.impl.zk_data import ControllerZNode, LeaderIsrAndControllerEpoch, TopicPartition, TopicPartitionStateZNode


class ControllerZkClient(KafkaZkClient):
    def __init__(self, *args, unfenced: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._unfenced = unfenced
        self.on_controller_write: Callable[[], None] = lambda: None

    def _fenced(self, op: Op, expected_controller_epoch_zk_version: int) -> OpResult:
        controller_write = expected_controller_epoch_zk_version != ANY_VERSION
        if controller_write and self._unfenced:
            expected_controller_epoch_zk_version = ANY_VERSION
        result = super()._fenced(op, expected_controller_epoch_zk_version)
        if controller_write:
            self.on_controller_write()
        return result

    def get_topic_partition_states(self, partitions: Iterable[TopicPartition], watch: bool = True
                                   ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        if watch:
            return super().get_topic_partition_states(partitions)
        result = {}
        for tp in sorted(partitions):
            try:
                data, stat = self._retry(partial(self._zk.get_data, TopicPartitionStateZNode.path(tp)))
            except NoNodeError:
                continue
            state = TopicPartitionStateZNode.decode(data, stat.version)
            if state is not None:
                result[tp] = state
        return result

    def watch_topic_partition_state(self, tp: TopicPartition) -> None:
        """Arm the data watch on `tp`'s state znode (for its registered handler), existing or not."""
        self.path_exists(TopicPartitionStateZNode.path(tp))

    def registered_handler_paths(self) -> tuple[frozenset[str], frozenset[str]]:
        """(paths with a change handler, paths with a child handler): where a notification would
        reach a handler now (for the abstraction of armed watches)."""
        registry = self._handlers
        with registry._lock:
            return frozenset(registry._change), frozenset(registry._child)

    def get_data_and_stat_unwatched(self, path: str):
        """(data, Stat) of `path`, or (None, None), without arming a watch."""
        try:
            return self._retry(lambda: self._zk.get_data(path))
        except NoNodeError:
            return None, None

    def get_controller_id_unwatched(self) -> int | None:
        try:
            data, _ = self._retry(lambda: self._zk.get_data(ControllerZNode.path))
        except NoNodeError:
            return None
        return ControllerZNode.decode(data)
