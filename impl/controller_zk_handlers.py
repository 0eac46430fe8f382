"""The controller's ZooKeeper handlers: each turns a watch notification into a controller event.

kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala (the handler classes at its
end). A handler runs on whatever thread delivers the notification (ZooKeeper's event thread, or the
writer's thread with the embedded server's immediate delivery) and does nothing but `put` an event:
handlers re-read ZooKeeper when the event is processed, never at notification time. Which reactions
exist matters, because a notification without a reaction still spends the one-shot watch:

| handler                               | path                                | reacts to             | event                             |
|---------------------------------------|-------------------------------------|-----------------------|-----------------------------------|
| ControllerChangeHandler               | /controller                         | creation, data change | ControllerChange                  |
|                                       |                                     | deletion              | Reelect                           |
| BrokerChangeHandler                   | /brokers/ids (children)             | child change          | BrokerChange                      |
| TopicChangeHandler                    | /brokers/topics (children)          | child change          | TopicChange                       |
| TopicDeletionHandler                  | /admin/delete_topics (children)     | child change          | TopicDeletion                     |
| IsrChangeNotificationHandler          | /isr_change_notification (children) | child change          | IsrChangeNotification             |
| LogDirEventNotificationHandler        | /log_dir_event_notification (ch.)   | child change          | LogDirEventNotification           |
| PreferredReplicaElectionHandler       | /admin/preferred_replica_election   | creation              | ReplicaLeaderElection             |
| PartitionReassignmentHandler          | /admin/reassign_partitions          | creation              | ZkPartitionReassignment           |
| PartitionReassignmentIsrChangeHandler | .../partitions/<p>/state            | data change           | PartitionReassignmentIsrChange(p) |
| PartitionModificationsHandler         | /brokers/topics/<t>                 | data change           | PartitionModifications(t)         |

`ControllerEpochChangeHandler` is not Kafka 2.6's: it is variant V2's `ControllerEpochListener`
(0.8.0-0.8.1, KAFKA-1096), which made every controller adopt /controller_epoch when it changed.
"""  # noqa: E501 - the table is wider than a line

from __future__ import annotations

from collections.abc import Callable

from kcm.impl import controller_events as ev
from kcm.impl.controller_event_manager import ControllerEventManager
from kcm.impl.zk.handlers import ZNodeChangeHandler, ZNodeChildChangeHandler
from kcm.impl.zk_data import (
    BrokerIdsZNode,
    ControllerEpochZNode,
    ControllerZNode,
    DeleteTopicsZNode,
    IsrChangeNotificationZNode,
    LogDirEventNotificationZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicPartition,
    TopicPartitionStateZNode,
    TopicsZNode,
    TopicZNode,
)


class ControllerChangeHandler(ZNodeChangeHandler):
    path = ControllerZNode.path

    def __init__(self, event_manager: ControllerEventManager) -> None:
        self._events = event_manager

    def handle_creation(self) -> None:
        self._events.put(ev.ControllerChange())

    def handle_deletion(self) -> None:
        self._events.put(ev.Reelect())

    def handle_data_change(self) -> None:
        self._events.put(ev.ControllerChange())


class _ChildHandler(ZNodeChildChangeHandler):
    event: type[ev.ControllerEvent]

    def __init__(self, event_manager: ControllerEventManager) -> None:
        self._events = event_manager

    def handle_child_change(self) -> None:
        self._events.put(self.event())


class BrokerChangeHandler(_ChildHandler):
    path = BrokerIdsZNode.path
    event = ev.BrokerChange


class TopicChangeHandler(_ChildHandler):
    path = TopicsZNode.path
    event = ev.TopicChange


class TopicDeletionHandler(_ChildHandler):
    path = DeleteTopicsZNode.path
    event = ev.TopicDeletion


class IsrChangeNotificationHandler(_ChildHandler):
    path = IsrChangeNotificationZNode.path
    event = ev.IsrChangeNotification


class LogDirEventNotificationHandler(_ChildHandler):
    path = LogDirEventNotificationZNode.path
    event = ev.LogDirEventNotification


class PreferredReplicaElectionHandler(ZNodeChangeHandler):
    path = PreferredReplicaElectionZNode.path

    def __init__(self, event_manager: ControllerEventManager) -> None:
        self._events = event_manager

    def handle_creation(self) -> None:
        self._events.put(ev.ReplicaLeaderElection())


class PartitionReassignmentHandler(ZNodeChangeHandler):
    path = ReassignPartitionsZNode.path

    def __init__(self, event_manager: ControllerEventManager) -> None:
        self._events = event_manager

    # Only creation: the controller re-puts ZkPartitionReassignment itself when it deletes the znode.
    def handle_creation(self) -> None:
        self._events.put(ev.ZkPartitionReassignment())


class PartitionReassignmentIsrChangeHandler(ZNodeChangeHandler):
    """Data changes only: the state znode's creation or deletion spends the watch without an event."""

    def __init__(self, event_manager: ControllerEventManager, partition: TopicPartition) -> None:
        self._events = event_manager
        self.partition = partition
        self.path = TopicPartitionStateZNode.path(partition)

    def handle_data_change(self) -> None:
        self._events.put(ev.PartitionReassignmentIsrChange(self.partition))


class PartitionModificationsHandler(ZNodeChangeHandler):
    """Data changes only (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
    lines 1931-1935): the topic znode's deletion spends the watch without an event."""

    def __init__(self, event_manager: ControllerEventManager, topic: str) -> None:
        self._events = event_manager
        self.topic = topic
        self.path = TopicZNode.path(topic)

    def handle_data_change(self) -> None:
        self._events.put(ev.PartitionModifications(self.topic))


class ControllerEpochChangeHandler(ZNodeChangeHandler):
    """Variant V2 only: on a change of /controller_epoch, `on_change` re-reads it (re-arming the
    watch) and overwrites the controller's epoch, as 0.8's ControllerEpochListener did."""

    path = ControllerEpochZNode.path

    def __init__(self, on_change: Callable[[], None]) -> None:
        self._on_change = on_change

    def handle_data_change(self) -> None:
        self._on_change()

    def handle_creation(self) -> None:
        self._on_change()
