"""`ReplicaManager`: a broker applying the controller's requests, and its leaders' ISR maintenance.

kafka@2.6.x:core/src/main/scala/kafka/server/ReplicaManager.scala. The fencing
is exactly the model's (model/broker.py `deliver`); `KafkaApis` has already rejected a request
stamped with an older broker epoch (KIP-380) before it gets here.

* **Controller epoch.** A request from a controller epoch lower than the highest one this broker
  has accepted is rejected whole (STALE_CONTROLLER_EPOCH); otherwise its epoch becomes the highest.
  Variant V1 drops the check.
* **LeaderAndIsr**, per partition: applied only if the request's leader epoch is higher than the
  replica's and this broker is among the request's replicas; the replica becomes leader or a
  follower of the request's leader. Otherwise the partition is answered with an error and untouched.
* **StopReplica**, per partition (KIP-570): applied if the request's leader epoch is -2 (deletion),
  -1 (unknown) or higher than the replica's, or the broker has no replica; else FENCED_LEADER_EPOCH.
  Applying stops the replica, or deletes it.
* **UpdateMetadata** goes to the `MetadataCache`.
* **A failed log directory** (`handle_log_dir_failure`, JBOD with one directory per replica): the
  replica stops and its partition is `HostedPartition.Offline`; every later LeaderAndIsr and
  StopReplica answers it KAFKA_STORAGE_ERROR, and the broker writes a log-dir event notification
  for the controller (kafka@2.6.x:core/src/main/scala/kafka/server/ReplicaManager.scala
  `handleLogDirFailure`, lines 1689-1723, `becomeLeaderOrFollower` lines 1259-1266, `stopReplicas`
  lines 399-405). The directory comes back only with a new process.

Leaders change the ISR themselves (`shrink_isr`, `expand_isr`: `Partition.update_isr`) and record
each change; `maybe_propagate_isr_changes` turns the recorded changes into one
/isr_change_notification/isr_change_<seq> znode (`propagate_isr_changes`). Kafka propagates at most
every 2.5 s, once changes have been quiet for 5 s or 60 s have passed; stepped mode propagates at
once (`force=True`), as the model does. In threaded mode followers fetch (`handle_fetch` is the
leader's side of a fetch, recording that the follower is caught up at the leader's epoch) and the
leader periodically expands the ISR with caught-up followers and shrinks out the ones that stopped
fetching for `replica.lag.time.max.ms` (`maybe_shrink_and_expand_isr`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection

from kcm.impl.kafka_config import KafkaConfig
from kcm.impl.logs import get_logger
from kcm.impl.metadata_cache import MetadataCache
from kcm.impl.partition import Partition
from kcm.impl.requests import (
    Errors,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)
from kcm.impl.timeline import Timeline
from kcm.impl.zk_data import TopicPartition, TopicPartitionStateZNode
from kcm.model.election import EPOCH_DURING_DELETE, NO_EPOCH

log = get_logger(__name__)


class ReplicaManager:
    def __init__(self, broker_id: int, config: KafkaConfig, zk_client, timeline: Timeline,
                 metadata_cache: MetadataCache, clock_ms=lambda: int(time.monotonic() * 1000)) -> None:
        self.local_broker_id = broker_id
        self._config = config
        self._flags = config.flags
        self._zk = zk_client
        self._timeline = timeline
        self.metadata_cache = metadata_cache
        self._clock_ms = clock_ms
        #: `replicaStateChangeLock`: requests and ISR changes of this broker, one at a time.
        self.lock = threading.RLock()
        self.controller_epoch = 0
        self.all_partitions: dict[TopicPartition, Partition] = {}
        #: The partitions whose replica is on a failed log directory (`HostedPartition.Offline`).
        self.offline_partitions: set[TopicPartition] = set()
        self._isr_change_set: set[TopicPartition] = set()
        self._last_isr_change_ms = 0
        self._last_isr_propagation_ms = 0
        #: Leader side of fetching (threaded mode): (partition, follower) -> (leader epoch, last fetch ms).
        self._follower_fetches: dict[tuple[TopicPartition, int], tuple[int, int]] = {}

    def partition(self, tp: TopicPartition) -> Partition | None:
        with self.lock:
            return self.all_partitions.get(tp)

    # ---- controller requests -------------------------------------------------------------------

    def _stale_controller(self, controller_epoch: int) -> bool:
        return controller_epoch < self.controller_epoch and not self._flags.no_broker_controller_epoch_check

    def become_leader_or_follower(self, request: LeaderAndIsrRequest) -> LeaderAndIsrResponse:
        with self.lock:
            if self._stale_controller(request.controller_epoch):
                return self._fenced(request, Errors.STALE_CONTROLLER_EPOCH, LeaderAndIsrResponse)
            self.controller_epoch = request.controller_epoch
            errors = []
            for state in request.partition_states:
                tp = state.topic_partition
                if tp in self.offline_partitions:
                    errors.append((tp, Errors.KAFKA_STORAGE_ERROR))
                    continue
                partition = self.all_partitions.get(tp)
                current = partition.leader_epoch if partition is not None else NO_EPOCH
                if state.leader_epoch > current and self.local_broker_id in state.replicas:
                    if partition is None:
                        partition = self.all_partitions[tp] = Partition(tp, self.local_broker_id)
                    if state.leader == self.local_broker_id:
                        partition.make_leader(state)
                        # The ISR members count as caught up when leadership starts (Kafka's
                        # lastCaughtUpTimeMs); only fetching keeps them so.
                        now = self._clock_ms()
                        for follower in partition.isr:
                            self._follower_fetches[(tp, follower)] = (state.leader_epoch, now)
                    else:
                        partition.make_follower(state)
                    errors.append((tp, Errors.NONE))
                else:
                    errors.append((tp, Errors.STALE_CONTROLLER_EPOCH))
            self._timeline.append("delivered", request.controller_id, epoch=request.controller_epoch,
                                  peer=self.local_broker_id, detail=_summary(request, errors))
            return LeaderAndIsrResponse(Errors.NONE, tuple(errors))

    def maybe_update_metadata_cache(self, request: UpdateMetadataRequest) -> UpdateMetadataResponse:
        with self.lock:
            if self._stale_controller(request.controller_epoch):
                return self._fenced(request, Errors.STALE_CONTROLLER_EPOCH, UpdateMetadataResponse)
            self.controller_epoch = request.controller_epoch
            self.metadata_cache.update_metadata(request)
            self._timeline.append("delivered", request.controller_id, epoch=request.controller_epoch,
                                  peer=self.local_broker_id, detail=f"UpdateMetadata(c{request.controller_epoch})")
            return UpdateMetadataResponse(Errors.NONE)

    def stop_replicas(self, request: StopReplicaRequest) -> StopReplicaResponse:
        with self.lock:
            if self._stale_controller(request.controller_epoch):
                return self._fenced(request, Errors.STALE_CONTROLLER_EPOCH, StopReplicaResponse)
            self.controller_epoch = request.controller_epoch
            errors = []
            for state in request.partition_states:
                tp = state.topic_partition
                if tp in self.offline_partitions:
                    errors.append((tp, Errors.KAFKA_STORAGE_ERROR))
                    continue
                partition = self.all_partitions.get(tp)
                if (partition is None or state.leader_epoch in (EPOCH_DURING_DELETE, NO_EPOCH)
                        or state.leader_epoch > partition.leader_epoch):
                    if state.delete_partition:
                        self.all_partitions.pop(tp, None)
                    elif partition is not None:
                        partition.stop()
                    errors.append((tp, Errors.NONE))
                else:
                    errors.append((tp, Errors.FENCED_LEADER_EPOCH))
            self._timeline.append("delivered", request.controller_id, epoch=request.controller_epoch,
                                  peer=self.local_broker_id, detail=_summary(request, errors))
            return StopReplicaResponse(Errors.NONE, tuple(errors))

    def handle_log_dir_failure(self, tp: TopicPartition) -> None:
        """The log directory of this broker's replica of `tp` failed: the fetcher stops, the
        partition goes offline (`markPartitionOffline`), and `propagateLogDirEvent` tells the controller."""
        with self.lock:
            partition = self.all_partitions[tp]
            partition.stop()
            self.offline_partitions.add(tp)
            self._timeline.append("broker", self.local_broker_id, partition=str(tp),
                                  detail="log directory failed: the replica is offline")
        self._zk.propagate_log_dir_event(self.local_broker_id)

    def _fenced(self, request, error: Errors, response_type):
        self._timeline.append("fenced", request.controller_id, epoch=request.controller_epoch,
                              peer=self.local_broker_id,
                              detail=f"{request.api_key.value} from controller epoch {request.controller_epoch} "
                                     f"< {self.controller_epoch}: {error.name}")
        return response_type(error)

    # ---- the leaders' ISR changes --------------------------------------------------------------

    def shrink_isr(self, tp: TopicPartition, follower: int, controller_epoch: int | None = None) -> bool:
        with self.lock:
            partition = self._leader_partition(tp)
            new_isr = tuple(r for r in partition.isr if r != follower)
            return self._update_isr(partition, new_isr, controller_epoch, f"shrink: {follower} out")

    def expand_isr(self, tp: TopicPartition, follower: int, controller_epoch: int | None = None) -> bool:
        with self.lock:
            partition = self._leader_partition(tp)
            if follower in partition.isr:
                return False
            return self._update_isr(partition, partition.isr + (follower,), controller_epoch, f"expand: {follower} in")

    def _leader_partition(self, tp: TopicPartition) -> Partition:
        partition = self.all_partitions.get(tp)
        if partition is None or not partition.is_leader:
            raise ValueError(f"broker {self.local_broker_id} does not lead {tp}")
        return partition

    def _update_isr(self, partition: Partition, new_isr: tuple[int, ...], controller_epoch: int | None,
                    why: str) -> bool:
        if not partition.update_isr(self._zk, new_isr, controller_epoch):
            return False
        self._timeline.append("isr", self.local_broker_id, epoch=partition.leader_epoch,
                              partition=str(partition.topic_partition), detail=f"isr {list(new_isr)} ({why})")
        self._isr_change_set.add(partition.topic_partition)
        self._last_isr_change_ms = self._clock_ms()
        return True

    def znode_controller_epoch(self, tp: TopicPartition) -> int:
        """The controller epoch stored in `tp`'s state znode (read without a watch)."""
        data, stat = self._zk.get_data_and_stat_unwatched(TopicPartitionStateZNode.path(tp))
        state = None if data is None else TopicPartitionStateZNode.decode(data, stat.version)
        return -1 if state is None else state.controller_epoch

    def maybe_propagate_isr_changes(self, force: bool = False) -> None:
        """`maybePropagateIsrChanges`: one notification znode for the changes recorded so far."""
        with self.lock:
            now = self._clock_ms()
            due = (now - self._last_isr_change_ms > self._config.isr_change_propagation_blackout_ms
                   or now - self._last_isr_propagation_ms > self._config.isr_change_propagation_interval_ms)
            if not self._isr_change_set or not (force or due):
                return
            changed = sorted(self._isr_change_set)
            self._isr_change_set.clear()
            self._last_isr_propagation_ms = now
        self._zk.propagate_isr_changes(changed)

    # ---- fetching (threaded mode) -----------------------------------------------------------------

    def handle_fetch(self, tp: TopicPartition, follower: int, leader_epoch: int) -> bool:
        """The leader's side of a follower's fetch at `leader_epoch` (KIP-320 fences other epochs)."""
        with self.lock:
            partition = self.all_partitions.get(tp)
            if partition is None or not partition.is_leader or partition.leader_epoch != leader_epoch:
                return False
            self._follower_fetches[(tp, follower)] = (leader_epoch, self._clock_ms())
            return True

    def maybe_shrink_and_expand_isr(self) -> None:
        """Expand the ISR with followers fetching at the leader's epoch; shrink out laggards."""
        with self.lock:
            now = self._clock_ms()
            for tp, partition in sorted(self.all_partitions.items()):
                for follower in self._followers(partition):
                    change = self._isr_change_due(tp, partition, follower, now)
                    if change == "expand":
                        self._update_isr(partition, partition.isr + (follower,), None, f"expand: {follower} caught up")
                    elif change == "shrink":
                        new_isr = tuple(r for r in partition.isr if r != follower)
                        self._update_isr(partition, new_isr, None, f"shrink: {follower} lagging")

    def isr_change_due(self, fetching: Collection[int]) -> bool:
        """Whether `maybe_shrink_and_expand_isr` will change an ISR, now or once a lag runs out: a
        caught-up follower outside the ISR, or inside a multi-member ISR one that stopped fetching
        or is not among the brokers `fetching` (a dead broker's lag runs out). A cluster is not
        settled while one is due: a fetch the leader takes just after its follower stopped puts the
        dead replica back into the ISR after the controller's onBrokerFailure, and only the
        leader's shrink, `replica.lag.time.max.ms` later, takes it out
        (kafka@2.6.x:core/src/main/scala/kafka/cluster/Partition.scala maybeExpandIsr /
        maybeShrinkIsr)."""
        with self.lock:
            now = self._clock_ms()
            for tp, partition in self.all_partitions.items():
                for follower in self._followers(partition):
                    if self._isr_change_due(tp, partition, follower, now) is not None:
                        return True
                    if follower not in fetching and follower in partition.isr and len(partition.isr) > 1:
                        return True
            return False

    def _followers(self, partition: Partition) -> list[int]:
        if not partition.is_leader:
            return []
        return [r for r in partition.replicas if r != self.local_broker_id]

    def _isr_change_due(self, tp: TopicPartition, partition: Partition, follower: int, now: int) -> str | None:
        epoch, last = self._follower_fetches.get((tp, follower), (NO_EPOCH, 0))
        caught_up = epoch == partition.leader_epoch and now - last <= self._config.replica_lag_time_max_ms
        if caught_up and follower not in partition.isr:
            return "expand"
        if not caught_up and follower in partition.isr and len(partition.isr) > 1:
            return "shrink"
        return None


def _summary(request, errors) -> str:
    applied = [str(tp) for tp, e in errors if e is Errors.NONE]
    ignored = [f"{tp}:{e.name}" for tp, e in errors if e is not Errors.NONE]
    head = f"{request.api_key.value}(c{request.controller_epoch}) applied {applied}"
    return head + (f" ignored {ignored}" if ignored else "")
