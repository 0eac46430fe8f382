"""`KafkaZkClient`: Kafka's ZooKeeper operations, over any `ZooKeeper` protocol backend.

A port of the parts of kafka@2.6.x:core/src/main/scala/kafka/zk/KafkaZkClient.scala that the
controller and the partition leaders use, with Kafka's method names in snake_case. The znode
layout and JSON formats are in `kcm.impl.zk_data`. What the port keeps, because correctness
depends on it:

* **The controller-epoch fence.** Every write a controller makes takes its
  `expected_controller_epoch_zk_version` and is sent as `multi(CheckOp("/controller_epoch", v), op)`
  (`wrapRequestWithControllerEpochCheck`). A failed check raises `ControllerMovedException`; the
  op's own error (NONODE, NODEEXISTS, BADVERSION on the partition state, ...) is raised or reported
  as it would be without the fence. `ANY_VERSION` (-1) sends the op unfenced, as Kafka does for
  admin-side writes.
* **Election as one multi** (2.1+): create the ephemeral /controller and bump /controller_epoch at
  its version, atomically; on NODEEXISTS or BADVERSION, `checkControllerAndEpoch` decides whether
  the write was in fact ours (a retry after a lost acknowledgement) or another broker won.
* **Retry on connection loss** (`retryRequestsUntilConnected`): a request answered CONNECTIONLOSS is
  sent again, so a write whose acknowledgement was lost comes back as NODEEXISTS or BADVERSION for
  the client's own earlier success. Kafka's explicit checks (`checkedEphemeralCreate`,
  `checkControllerAndEpoch`, the leader's `optional_checker`) exist for that case.
* **Watches through handlers**: reads arm watches for paths with a registered handler, exactly as
  Kafka's `ZooKeeperClient` does (`kcm.impl.zk.handlers`).
* **Session renewal**: when the session's expiry is noticed and a `reconnect` factory was given,
  the state-change handlers run around the opening of a new session
  (`ZooKeeperClient.reinitialize`). Without a factory the owner does it with `reinitialize`.

Batched requests (Kafka pipelines them) are sent one after the other; per-item outcomes are
returned as Kafka returns them. Left out: ACLs, configs, log-dir events, delegation tokens,
features, cluster id, and the KAFKA-7165 re-create of a broker znode left by the previous session
(a workaround for ZOOKEEPER-2985, a server bug neither backend here has).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from kcm.impl.kafka_exception import KafkaException
from kcm.impl.zk.handlers import HandlerRegistry, StateChangeHandler, ZNodeChangeHandler, ZNodeChildChangeHandler
from kcm.impl.zk.protocol import (
    ANY_VERSION,
    BadVersionError,
    CheckOp,
    ConnectionLossError,
    CreateOp,
    DeleteOp,
    NodeExistsError,
    NoNodeError,
    Op,
    OpResult,
    SessionState,
    SetDataOp,
    Stat,
    ZooKeeper,
    ZooKeeperError,
    parent_of,
)
from kcm.impl.zk_data import (
    PERSISTENT_ZK_PATHS,
    UNCLEAN_LEADER_ELECTION_ENABLE,
    Broker,
    BrokerIdsZNode,
    BrokerIdZNode,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityChangeNotificationZNode,
    ConfigEntityZNode,
    ControllerEpochZNode,
    ControllerZNode,
    DeleteTopicsTopicZNode,
    DeleteTopicsZNode,
    IsrChangeNotificationSequenceZNode,
    LeaderIsrAndControllerEpoch,
    LogDirEventNotificationSequenceZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    ReplicaAssignment,
    SequenceZNode,
    TopicPartition,
    TopicPartitionStateZNode,
    TopicPartitionsZNode,
    TopicPartitionZNode,
    TopicsZNode,
    TopicZNode,
)
from kcm.model.election import LeaderAndIsr

T = TypeVar("T")

# kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala (object KafkaController)
INITIAL_CONTROLLER_EPOCH = 0
INITIAL_CONTROLLER_EPOCH_ZK_VERSION = 0
# kafka@2.6.x:core/src/main/scala/kafka/zk/ZkData.scala (object ZkVersion)
UNKNOWN_VERSION = -2


class ControllerMovedException(KafkaException):
    """Kafka's `ControllerMovedException`: this broker is not (or no longer) the controller."""


@dataclass(frozen=True, slots=True)
class UpdateLeaderAndIsrResult:
    """Kafka's `UpdateLeaderAndIsrResult`: per partition the written `LeaderAndIsr` (with its new
    zkVersion) or the error; partitions whose state znode moved on (BADVERSION) are to be retried."""

    finished_partitions: Mapping[TopicPartition, LeaderAndIsr | ZooKeeperError]
    partitions_to_retry: tuple[TopicPartition, ...]


def _now_ms() -> int:
    return int(time.time() * 1000)


class KafkaZkClient:
    """Kafka's ZooKeeper client for the controller and the brokers, over one `ZooKeeper` session."""

    def __init__(self, zookeeper: ZooKeeper, *, reconnect: Callable[[], ZooKeeper] | None = None,
                 clock_ms: Callable[[], int] = _now_ms):
        self._zk = zookeeper
        self._reconnect = reconnect
        self._clock_ms = clock_ms
        self._handlers = HandlerRegistry()
        self._reinit_lock = threading.Lock()
        zookeeper.add_session_listener(self._on_session_state)

    @property
    def zookeeper(self) -> ZooKeeper:
        """The current session."""
        return self._zk

    @property
    def session_id(self) -> int:
        return self._zk.session_id

    def close(self) -> None:
        self._zk.close()

    # ---- the controller: election and epoch -----------------------------------------------------

    def register_controller_and_increment_controller_epoch(self, controller_id: int) -> tuple[int, int]:
        """Become the controller: return (new epoch, /controller_epoch zkVersion), or raise
        ControllerMovedException if another broker is or became the controller."""
        timestamp = self._clock_ms()
        current = self.get_controller_epoch()
        cur_epoch, cur_version = current if current is not None else self._maybe_create_controller_epoch_znode()
        new_epoch = cur_epoch + 1

        def check_controller_and_epoch() -> tuple[int, int]:
            cur_controller = self.get_controller_id()
            if cur_controller is None:
                raise ControllerMovedException(
                    f"The ephemeral node at {ControllerZNode.path} went away while checking whether the "
                    "controller election succeeds. Aborting controller startup procedure")
            if cur_controller == controller_id:
                epoch_and_version = self.get_controller_epoch()
                if epoch_and_version is None:
                    raise RuntimeError(f"{ControllerEpochZNode.path} existed before but goes away while "
                                       "trying to read it")
                # The same epoch means the multi that succeeded was ours: later elections write larger ones.
                if epoch_and_version[0] == new_epoch:
                    return epoch_and_version
            raise ControllerMovedException("Controller moved to another broker. Aborting controller startup procedure")

        try:
            results = self._retry(lambda: self._zk.multi([
                CreateOp(ControllerZNode.path, ControllerZNode.encode(controller_id, timestamp), ephemeral=True),
                SetDataOp(ControllerEpochZNode.path, ControllerEpochZNode.encode(new_epoch), cur_version)]))
        except (NodeExistsError, BadVersionError):
            return check_controller_and_epoch()
        stat = results[1]
        assert isinstance(stat, Stat)
        return new_epoch, stat.version

    def _maybe_create_controller_epoch_znode(self) -> tuple[int, int]:
        try:
            self._retry(lambda: self._zk.create(
                ControllerEpochZNode.path, ControllerEpochZNode.encode(INITIAL_CONTROLLER_EPOCH)))
            return INITIAL_CONTROLLER_EPOCH, INITIAL_CONTROLLER_EPOCH_ZK_VERSION
        except NodeExistsError:
            current = self.get_controller_epoch()
            if current is None:
                raise RuntimeError(f"{ControllerEpochZNode.path} existed before but goes away while "
                                   "trying to read it") from None
            return current

    def get_controller_id(self) -> int | None:
        data = self._get_data_or_none(ControllerZNode.path)
        return None if data is None else ControllerZNode.decode(data[0])

    def get_controller_epoch(self) -> tuple[int, int] | None:
        """(epoch, zkVersion of /controller_epoch), or None if it does not exist yet."""
        data = self._get_data_or_none(ControllerEpochZNode.path)
        return None if data is None else (ControllerEpochZNode.decode(data[0]), data[1].version)

    def delete_controller(self, expected_controller_epoch_zk_version: int) -> None:
        """Resign by deleting /controller (`triggerControllerMove`), fenced; a missing znode is fine."""
        with contextlib.suppress(NoNodeError):
            self._fenced(DeleteOp(ControllerZNode.path), expected_controller_epoch_zk_version)

    # ---- brokers --------------------------------------------------------------------------------

    def register_broker(self, broker: Broker) -> int:
        """Create the ephemeral /brokers/ids/<id>; return its czxid, the broker epoch (KIP-380)."""
        return self._checked_ephemeral_create(BrokerIdZNode.path(broker.id),
                                              BrokerIdZNode.encode(broker, self._clock_ms())).czxid

    def _checked_ephemeral_create(self, path: str, data: bytes) -> Stat:
        """`CheckedEphemeral.create` (KAFKA-1387): create + set in one multi, for the Stat; NODEEXISTS
        is success if this session owns the znode (a retry after a lost acknowledgement)."""
        try:
            results = self._retry(lambda: self._zk.multi([CreateOp(path, ephemeral=True), SetDataOp(path, data, 0)]))
        except NodeExistsError:
            try:
                _, stat = self._retry(lambda: self._zk.get_data(path, self._handlers.data_watch(path)))
            except NoNodeError:
                return self._checked_ephemeral_create(path, data)   # went away while reading: try again
            if stat.ephemeral_owner != self._zk.session_id:
                raise NodeExistsError(f"{path} exists and is owned by session {stat.ephemeral_owner:#x}, "
                                      f"not {self._zk.session_id:#x}", path=path) from None
            return stat
        created = results[1]
        assert isinstance(created, Stat)
        return created

    def get_sorted_broker_list(self) -> list[int]:
        return sorted(int(child) for child in self.get_children(BrokerIdsZNode.path))

    def get_all_broker_and_epochs_in_cluster(self) -> dict[Broker, int]:
        """Every registered broker with its epoch (the czxid of its registration)."""
        result = {}
        for broker_id in self.get_sorted_broker_list():
            data = self._get_data_or_none(BrokerIdZNode.path(broker_id))
            if data is not None:
                result[BrokerIdZNode.decode(broker_id, data[0])] = data[1].czxid
        return result

    def get_broker(self, broker_id: int) -> Broker | None:
        data = self._get_data_or_none(BrokerIdZNode.path(broker_id))
        return None if data is None else BrokerIdZNode.decode(broker_id, data[0])

    # ---- topics and assignments -----------------------------------------------------------------

    def get_all_topics_in_cluster(self, register_watch: bool = False) -> set[str]:
        return set(self.get_children(TopicsZNode.path, register_watch=register_watch))

    def create_topic_assignment(self, topic: str, assignment: Mapping[TopicPartition, Sequence[int]]) -> None:
        """The admin side of topic creation (not a controller write: unfenced)."""
        self.create_recursive(TopicZNode.path(topic), TopicZNode.encode(
            {tp: ReplicaAssignment(tuple(replicas)) for tp, replicas in assignment.items()}))

    def set_topic_assignment(self, topic: str, assignment: Mapping[TopicPartition, ReplicaAssignment],
                             expected_controller_epoch_zk_version: int = ANY_VERSION) -> None:
        self._fenced(SetDataOp(TopicZNode.path(topic), TopicZNode.encode(assignment)),
                     expected_controller_epoch_zk_version)

    def get_full_replica_assignment_for_topics(self, topics: Iterable[str]) -> dict[TopicPartition, ReplicaAssignment]:
        result: dict[TopicPartition, ReplicaAssignment] = {}
        for topic in sorted(topics):
            data = self._get_data_or_none(TopicZNode.path(topic))
            if data is not None:
                result |= TopicZNode.decode(topic, data[0])
        return result

    def get_replica_assignment_for_topics(self, topics: Iterable[str]) -> dict[TopicPartition, list[int]]:
        return {tp: list(ra.replicas) for tp, ra in self.get_full_replica_assignment_for_topics(topics).items()}

    # ---- partition states -----------------------------------------------------------------------

    def create_topic_partition_states(self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
                                      expected_controller_epoch_zk_version: int
                                      ) -> dict[TopicPartition, ZooKeeperError | None]:
        """`createTopicPartitionStatesRaw`: create .../partitions, .../partitions/<p> (existing ones
        are fine) and the state znodes, each fenced. Returns per partition None (created) or the error
        of the state create (NodeExistsError if another controller got there first)."""
        for topic in sorted({tp.topic for tp in states}):
            self._create_if_missing(TopicPartitionsZNode.path(topic), expected_controller_epoch_zk_version)
        for tp in sorted(states):
            self._create_if_missing(TopicPartitionZNode.path(tp), expected_controller_epoch_zk_version)
        outcome: dict[TopicPartition, ZooKeeperError | None] = {}
        for tp, state in sorted(states.items()):
            try:
                self._fenced(CreateOp(TopicPartitionStateZNode.path(tp), TopicPartitionStateZNode.encode(state)),
                             expected_controller_epoch_zk_version)
                outcome[tp] = None
            except ZooKeeperError as error:
                outcome[tp] = error
        return outcome

    def update_leader_and_isr(self, leader_and_isrs: Mapping[TopicPartition, LeaderAndIsr], controller_epoch: int,
                              expected_controller_epoch_zk_version: int) -> UpdateLeaderAndIsrResult:
        """Write each partition state conditionally on its `zk_version`, each fenced."""
        finished: dict[TopicPartition, LeaderAndIsr | ZooKeeperError] = {}
        retry: list[TopicPartition] = []
        for tp, lai in sorted(leader_and_isrs.items()):
            data = TopicPartitionStateZNode.encode(LeaderIsrAndControllerEpoch(lai, controller_epoch))
            try:
                stat = self._fenced(SetDataOp(TopicPartitionStateZNode.path(tp), data, lai.zk_version),
                                    expected_controller_epoch_zk_version)
            except BadVersionError:
                retry.append(tp)
            except ZooKeeperError as error:
                finished[tp] = error
            else:
                assert isinstance(stat, Stat)
                finished[tp] = LeaderAndIsr(lai.leader, lai.leader_epoch, lai.isr, stat.version)
        return UpdateLeaderAndIsrResult(finished, tuple(retry))

    def get_topic_partition_states(self, partitions: Iterable[TopicPartition]
                                   ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        result = {}
        for tp in sorted(partitions):
            state = self.get_topic_partition_state(tp)
            if state is not None:
                result[tp] = state
        return result

    def get_topic_partition_state(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        data = self._get_data_or_none(TopicPartitionStateZNode.path(tp))
        return None if data is None else TopicPartitionStateZNode.decode(data[0], data[1].version)

    def conditional_update_path(self, path: str, data: bytes, expect_version: int,
                                optional_checker: Callable[[KafkaZkClient, str, bytes], tuple[bool, int]] | None = None
                                ) -> tuple[bool, int]:
        """A partition leader's ISR write (≤2.6): (True, new version) on success; on BADVERSION ask
        `optional_checker` whether the data is ours anyway (a retried write); else (False, UNKNOWN_VERSION)."""
        try:
            stat = self._retry(lambda: self._zk.set_data(path, data, expect_version))
        except BadVersionError:
            return optional_checker(self, path, data) if optional_checker else (False, UNKNOWN_VERSION)
        except NoNodeError:
            return False, UNKNOWN_VERSION
        return True, stat.version

    # ---- topic deletion -------------------------------------------------------------------------

    def create_delete_topic_path(self, topic: str) -> None:
        """The admin side of topic deletion (unfenced)."""
        self.create_recursive(DeleteTopicsTopicZNode.path(topic))

    def is_topic_marked_for_deletion(self, topic: str) -> bool:
        return self.path_exists(DeleteTopicsTopicZNode.path(topic))

    def get_topic_deletions(self) -> list[str]:
        return self.get_children(DeleteTopicsZNode.path)

    def delete_topic_deletions(self, topics: Iterable[str], expected_controller_epoch_zk_version: int) -> None:
        for topic in sorted(topics):
            with contextlib.suppress(NoNodeError):
                self._fenced(DeleteOp(DeleteTopicsTopicZNode.path(topic)), expected_controller_epoch_zk_version)

    def delete_topic_znode(self, topic: str, expected_controller_epoch_zk_version: int) -> None:
        self.delete_recursive(TopicZNode.path(topic), expected_controller_epoch_zk_version)

    def delete_topic_configs(self, topics: Iterable[str], expected_controller_epoch_zk_version: int) -> None:
        """`deleteTopicConfigs`: the topics' `/config/topics/<t>`, fenced (the end of a deletion)."""
        for topic in topics:
            with contextlib.suppress(NoNodeError):
                self._fenced(DeleteOp(ConfigEntityZNode.path("topics", topic)), expected_controller_epoch_zk_version)

    # ---- dynamic topic configs -------------------------------------------------------------------

    def change_topic_config(self, topic: str, config: Mapping[str, str]) -> None:
        """The admin side of `kafka-configs.sh --alter --entity-type topics` (`AdminZkClient.changeTopicConfig`,
        unfenced): `/config/topics/<t>` set, then a change notification created."""
        path = ConfigEntityZNode.path("topics", topic)
        data = ConfigEntityZNode.encode(config)
        try:
            self._retry(lambda: self._zk.set_data(path, data))
        except NoNodeError:
            self.create_recursive(path, data)
        self.make_sure_persistent_path_exists(ConfigEntityChangeNotificationZNode.path)
        self._retry(lambda: self._zk.create(ConfigEntityChangeNotificationSequenceZNode.path(),
                                            ConfigEntityChangeNotificationSequenceZNode.encode(f"topics/{topic}"),
                                            sequential=True))

    def get_topic_config(self, topic: str) -> dict[str, str]:
        """`/config/topics/<t>`'s overrides ({} when it has none)."""
        data = self._get_data_or_none(ConfigEntityZNode.path("topics", topic))
        return {} if data is None else ConfigEntityZNode.decode(data[0])

    def unclean_leader_election_enabled(self, topic: str, default: bool) -> bool:
        """`getLogConfigs(topics, config.originals)(topic).uncleanLeaderElectionEnable`: the topic's
        override, else the broker's default."""
        value = self.get_topic_config(topic).get(UNCLEAN_LEADER_ELECTION_ENABLE)
        return default if value is None else value.strip().lower() == "true"

    def get_config_change_notifications(self, register_watch: bool = True) -> list[str]:
        return self.get_children(ConfigEntityChangeNotificationZNode.path, register_watch)

    def get_config_change_entity(self, child: str) -> str | None:
        data = self._get_data_or_none(f"{ConfigEntityChangeNotificationZNode.path}/{child}")
        return None if data is None else ConfigEntityChangeNotificationSequenceZNode.decode(data[0])

    # ---- partition reassignment (the legacy znode) ----------------------------------------------

    def create_partition_reassignment(self, reassignment: Mapping[TopicPartition, Sequence[int]]) -> None:
        """The admin side (unfenced)."""
        self.create_recursive(ReassignPartitionsZNode.path, ReassignPartitionsZNode.encode(reassignment))

    def get_partition_reassignment(self) -> dict[TopicPartition, list[int]]:
        data = self._get_data_or_none(ReassignPartitionsZNode.path)
        return {} if data is None else ReassignPartitionsZNode.decode(data[0])

    def set_or_create_partition_reassignment(self, reassignment: Mapping[TopicPartition, Sequence[int]],
                                             expected_controller_epoch_zk_version: int) -> None:
        data = ReassignPartitionsZNode.encode(reassignment)
        try:
            self._fenced(SetDataOp(ReassignPartitionsZNode.path, data), expected_controller_epoch_zk_version)
        except NoNodeError:
            self._fenced(CreateOp(ReassignPartitionsZNode.path, data), expected_controller_epoch_zk_version)

    def delete_partition_reassignment(self, expected_controller_epoch_zk_version: int) -> None:
        self.delete_recursive(ReassignPartitionsZNode.path, expected_controller_epoch_zk_version)

    def reassign_partitions_in_progress(self) -> bool:
        return self.path_exists(ReassignPartitionsZNode.path)

    # ---- preferred replica election -------------------------------------------------------------

    def create_preferred_replica_election(self, partitions: Iterable[TopicPartition]) -> None:
        """The admin side (unfenced)."""
        self.create_recursive(PreferredReplicaElectionZNode.path, PreferredReplicaElectionZNode.encode(partitions))

    def get_preferred_replica_election(self) -> set[TopicPartition]:
        data = self._get_data_or_none(PreferredReplicaElectionZNode.path)
        return set() if data is None else PreferredReplicaElectionZNode.decode(data[0])

    def delete_preferred_replica_election(self, expected_controller_epoch_zk_version: int) -> None:
        with contextlib.suppress(NoNodeError):
            self._fenced(DeleteOp(PreferredReplicaElectionZNode.path), expected_controller_epoch_zk_version)

    # ---- ISR change notifications ---------------------------------------------------------------

    def propagate_isr_changes(self, partitions: Iterable[TopicPartition]) -> str:
        """A partition leader announces ISR changes: a persistent sequential znode; returns its path."""
        path = IsrChangeNotificationSequenceZNode.path()
        return self._retry(lambda: self._zk.create(
            path, IsrChangeNotificationSequenceZNode.encode(partitions), sequential=True))[0]

    def get_all_isr_change_notifications(self) -> list[str]:
        """The sequence numbers of the pending notifications."""
        return self._sequence_numbers(IsrChangeNotificationSequenceZNode)

    def get_partitions_from_isr_change_notifications(self, sequence_numbers: Iterable[str]) -> list[TopicPartition]:
        return [tp for data in self._notifications(IsrChangeNotificationSequenceZNode, sequence_numbers)
                for tp in IsrChangeNotificationSequenceZNode.decode(data)]

    def delete_isr_change_notifications(self, expected_controller_epoch_zk_version: int,
                                        sequence_numbers: Iterable[str] | None = None) -> None:
        """Delete the given notifications, or all of them (Kafka's two overloads), fenced."""
        self._delete_notifications(IsrChangeNotificationSequenceZNode, expected_controller_epoch_zk_version,
                                   sequence_numbers)

    # ---- log-dir event notifications ------------------------------------------------------------

    def propagate_log_dir_event(self, broker_id: int) -> str:
        """A broker that lost a log directory tells the controller: a persistent sequential znode
        naming it (`propagateLogDirEvent`); returns its path."""
        path = LogDirEventNotificationSequenceZNode.path()
        return self._retry(lambda: self._zk.create(
            path, LogDirEventNotificationSequenceZNode.encode(broker_id), sequential=True))[0]

    def get_all_log_dir_event_notifications(self) -> list[str]:
        """The sequence numbers of the pending notifications (the read arms the child watch)."""
        return self._sequence_numbers(LogDirEventNotificationSequenceZNode)

    def get_broker_ids_from_log_dir_events(self, sequence_numbers: Iterable[str]) -> list[int]:
        return [LogDirEventNotificationSequenceZNode.decode(data)
                for data in self._notifications(LogDirEventNotificationSequenceZNode, sequence_numbers)]

    def delete_log_dir_event_notifications(self, expected_controller_epoch_zk_version: int,
                                           sequence_numbers: Iterable[str] | None = None) -> None:
        """Delete the given notifications, or all of them (Kafka's two overloads), fenced."""
        self._delete_notifications(LogDirEventNotificationSequenceZNode, expected_controller_epoch_zk_version,
                                   sequence_numbers)

    # ---- notifications, whatever they announce ---------------------------------------------------

    def _sequence_numbers(self, znode: type[SequenceZNode]) -> list[str]:
        """The sequence numbers of `znode`'s pending notifications (the read arms the child watch)."""
        return [znode.sequence_number(child) for child in self.get_children(znode.parent)]

    def _notifications(self, znode: type[SequenceZNode], sequence_numbers: Iterable[str]) -> Iterator[bytes]:
        """The data of each notification still there (one deleted meanwhile is skipped, as Kafka's
        `getData` of a missing child is)."""
        for seq in sequence_numbers:
            data = self._get_data_or_none(znode.path(seq))
            if data is not None:
                yield data[0]

    def _delete_notifications(self, znode: type[SequenceZNode], expected_controller_epoch_zk_version: int,
                              sequence_numbers: Iterable[str] | None) -> None:
        """Delete the given notifications, or all of them, fenced by the controller epoch's zkVersion."""
        for seq in self._sequence_numbers(znode) if sequence_numbers is None else sequence_numbers:
            with contextlib.suppress(NoNodeError):
                self._fenced(DeleteOp(znode.path(seq)), expected_controller_epoch_zk_version)

    # ---- handlers and sessions ------------------------------------------------------------------

    def register_znode_change_handler_and_check_existence(self, handler: ZNodeChangeHandler) -> bool:
        """Register, then arm the watch with an exists (which watches a missing znode too)."""
        self._handlers.register_znode_change_handler(handler)
        return self.path_exists(handler.path)

    def register_znode_change_handler(self, handler: ZNodeChangeHandler) -> None:
        self._handlers.register_znode_change_handler(handler)

    def unregister_znode_change_handler(self, path: str) -> None:
        self._handlers.unregister_znode_change_handler(path)

    def register_znode_child_change_handler(self, handler: ZNodeChildChangeHandler) -> None:
        self._handlers.register_znode_child_change_handler(handler)

    def unregister_znode_child_change_handler(self, path: str) -> None:
        self._handlers.unregister_znode_child_change_handler(path)

    def register_state_change_handler(self, handler: StateChangeHandler) -> None:
        self._handlers.register_state_change_handler(handler)

    def unregister_state_change_handler(self, name: str) -> None:
        self._handlers.unregister_state_change_handler(name)

    def reinitialize(self, new_session: ZooKeeper) -> None:
        """`ZooKeeperClient.reinitialize`: handlers' before hooks, swap in `new_session`, after hooks.
        Watches are not carried over: handlers stay registered and the next reads re-arm them."""
        with self._reinit_lock:
            for handler in self._handlers.state_change_handlers():
                handler.before_initializing_session()
            old, self._zk = self._zk, new_session
            new_session.add_session_listener(self._on_session_state)
            old.close()
            for handler in self._handlers.state_change_handlers():
                handler.after_initializing_session()

    def _on_session_state(self, state: SessionState) -> None:
        if state is SessionState.EXPIRED and self._reconnect is not None:
            self.reinitialize(self._reconnect())

    # ---- generic paths --------------------------------------------------------------------------

    def create_top_level_paths(self) -> None:
        for path in PERSISTENT_ZK_PATHS:
            self.make_sure_persistent_path_exists(path)

    def make_sure_persistent_path_exists(self, path: str) -> None:
        self.create_recursive(path, throw_if_path_exists=False)

    def create_recursive(self, path: str, data: bytes = b"", throw_if_path_exists: bool = True) -> None:
        """Create `path` and any missing parents (persistent, parents empty); unfenced."""
        try:
            self._retry(lambda: self._zk.create(path, data))
        except NodeExistsError:
            if throw_if_path_exists:
                raise
        except NoNodeError:
            self.make_sure_persistent_path_exists(parent_of(path))
            try:
                self._retry(lambda: self._zk.create(path, data))
            except NodeExistsError:
                if throw_if_path_exists:
                    raise

    def delete_recursive(self, path: str, expected_controller_epoch_zk_version: int = ANY_VERSION) -> bool:
        """Delete `path` and everything under it, each delete fenced; False if it did not exist."""
        try:
            children = self._retry(lambda: self._zk.get_children(path, self._handlers.child_watch(path)))
        except NoNodeError:
            return False
        for child in children:
            self.delete_recursive(f"{path}/{child}", expected_controller_epoch_zk_version)
        with contextlib.suppress(NoNodeError):
            self._fenced(DeleteOp(path), expected_controller_epoch_zk_version)
        return True

    def path_exists(self, path: str) -> bool:
        return self._retry(lambda: self._zk.exists(path, self._handlers.data_watch(path))) is not None

    def get_children(self, path: str, register_watch: bool = True) -> list[str]:
        """Children of `path` ([] if it does not exist); watched if a child handler is registered."""
        try:
            return self._retry(lambda: self._zk.get_children(path, self._handlers.child_watch(path, register_watch)))
        except NoNodeError:
            return []

    def get_data_and_stat(self, path: str) -> tuple[bytes | None, Stat | None]:
        data = self._get_data_or_none(path)
        return (None, None) if data is None else data

    # ---- internals ------------------------------------------------------------------------------

    def _get_data_or_none(self, path: str) -> tuple[bytes, Stat] | None:
        try:
            return self._retry(lambda: self._zk.get_data(path, self._handlers.data_watch(path)))
        except NoNodeError:
            return None

    def _create_if_missing(self, path: str, expected_controller_epoch_zk_version: int) -> None:
        with contextlib.suppress(NodeExistsError):
            self._fenced(CreateOp(path), expected_controller_epoch_zk_version)

    def _fenced(self, op: Op, expected_controller_epoch_zk_version: int) -> OpResult:
        """`wrapRequestWithControllerEpochCheck` + `unwrapResponseWithControllerEpochCheck`: send
        `multi(check /controller_epoch @ v, op)` and report the op's outcome as if sent alone."""
        if expected_controller_epoch_zk_version == ANY_VERSION:
            return self._retry(lambda: self._send(op))
        if expected_controller_epoch_zk_version < 0:
            raise ValueError(f"Expected controller epoch zkVersion {expected_controller_epoch_zk_version} "
                             f"should be non-negative or equal to {ANY_VERSION}")
        check = CheckOp(ControllerEpochZNode.path, expected_controller_epoch_zk_version)
        try:
            return self._retry(lambda: self._zk.multi([check, op]))[1]
        except ZooKeeperError as error:
            if error.op_index == 0:
                if isinstance(error, BadVersionError):
                    raise ControllerMovedException(f"Controller epoch zkVersion check fails. Expected zkVersion = "
                                                   f"{expected_controller_epoch_zk_version}") from None
                # Not the op's error (a caller may tolerate NONODE on its own path): a plain failure.
                raise ZooKeeperError(f"controller epoch check on {check.path} failed: {error}",
                                     path=check.path) from error
            error.op_index = None
            raise

    def _send(self, op: Op) -> OpResult:
        """The op as a plain request, as Kafka sends unfenced writes."""
        if isinstance(op, CreateOp):
            return self._zk.create(op.path, op.data, ephemeral=op.ephemeral, sequential=op.sequential)[0]
        if isinstance(op, SetDataOp):
            return self._zk.set_data(op.path, op.data, op.version)
        if isinstance(op, DeleteOp):
            self._zk.delete(op.path, op.version)
            return None
        raise TypeError(f"no plain request for {op!r}")

    def _retry(self, request: Callable[[], T]) -> T:
        """`retryRequestsUntilConnected`: send again on CONNECTIONLOSS (the outcome was unknown),
        once the connection is back (`zooKeeperClient.waitUntilConnected()`,
        kafka@2.6.x:core/src/main/scala/kafka/zk/KafkaZkClient.scala lines 1693-1721). An expired
        session ends the loop (SESSIONEXPIRED is not retried); a backend that cannot reconnect
        within its connection timeout raises ZooKeeperUnavailable (Kafka would wait for ever)."""
        while True:
            try:
                return request()
            except ConnectionLossError:
                wait = getattr(self._zk, "wait_until_connected", None)
                if wait is not None:
                    wait()
