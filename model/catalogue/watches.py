"""ZooKeeper watches: a settled controller holds every watch it needs, and a broker that is not the
active controller holds none but `/controller`'s.

ZooKeeper watches are one-shot: a notification spends the watch, and Kafka gets it back only by
reading the path again with its handler registered (`ZooKeeperClient` sets a watch on every read
of a path that has a registered handler). Every controller handler therefore re-reads its path:
`processBrokerChange` (`getAllBrokerAndEpochsInCluster`), `processTopicChange` (`getAllTopicsInCluster`),
`processTopicDeletion` (`getTopicDeletions`), `processIsrChangeNotification`
(`getAllIsrChangeNotifications`), `processZkPartitionReassignment` and
`processReplicaLeaderElection` (`registerZNodeChangeHandlerAndCheckExistence`; after deleting
`/admin/preferred_replica_election` or `/admin/reassign_partitions` the controller re-puts the
event so that the exists-watch is set again, KAFKA-6146), and `onControllerFailover` registers
them all (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
onControllerFailover, processReplicaLeaderElection, onReplicaElection, processZkPartitionReassignment,
maybeRemoveFromZkReassignment, processBrokerChange, processTopicChange, processTopicDeletion,
processIsrChangeNotification). Every broker watches `/controller` (`KafkaController.startup`:
`registerZNodeChangeHandlerAndCheckExistence(controllerChangeHandler)`; `maybeResign` and `elect`
read it again).

Where partitions can be added, the controller also holds a data watch on each `/brokers/topics/<t>`
it knows (`PartitionModificationsHandler`: registered at failover and by `processTopicChange`,
re-armed by `processPartitionModifications`' read; docs/model.md, "Adding partitions").

So once the cluster has settled under an active controller, that controller holds every one of
its watches and every live broker watches `/controller`: otherwise the next admin operation or
broker change of that kind goes unnoticed. Judged in the state where a watch is lost, it needs no
second operation of the kind to see the loss. Only the model and the embedded ZooKeeper know the
armed watches; a client of a real ZooKeeper cannot list them (impl/threaded_cluster.py
`ZooKeeperView`), so `kcm simulate --zk HOST:PORT` cannot judge the properties that read them
(`Part.WATCHES`).

A controller module that is not active holds no controller handler beyond `/controller`'s. A
broker registers the controller handlers only in `onControllerFailover` (and re-registers the
reassignment and preferred-election ones in `processZkPartitionReassignment` and
`processReplicaLeaderElection`, both behind `isActive`), and `onControllerResignation`
unregisters every one of them: the ISR-change, log-dir, reassignment, preferred-election, broker,
topic, topic-deletion, partition-modification and broker-modification handlers, and the
`PartitionReassignmentIsrChangeHandler` of every partition being reassigned
(kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala onControllerResignation,
unregisterPartitionReassignmentIsrChangeHandlers, removePartitionFromReassigningPartitions). A
handler left registered would turn the next change of its path into an event that the handler's
`if (!isActive) return` drops, and a broker elected again would find it in place.

What a watch bit means here: ZooKeeper holds a one-shot *server watch* per session and path,
and `ZooKeeperClient` a *handler* per path; a read sets a server watch only where a handler is
registered, and a notification with no handler is dropped
(kafka@2.6.x:core/src/main/scala/kafka/zookeeper/ZooKeeperClient.scala `shouldWatch`,
`ZooKeeperClientWatcher.process`, `unregisterZNodeChangeHandler`). Kafka 2.6 never removes a
server watch (no `removeWatches`): a resigned controller's server watches stay armed until the
next change of their path, which finds no handler. A bit of `Zk.watches` is a server watch whose
notification reaches a handler, so unregistering the handler clears the bit, and a server watch
left without a handler is not represented (it can make no event). Not represented either: the
log-dir and broker-modification handlers (the model has no log directories and no broker
metadata updates), the partition-modification handlers of a config that adds no partitions
(docs/model.md, "Adding partitions"), and a failover that fails
after `/controller` has moved on: `triggerControllerMove` then finds itself inactive and returns
without `onControllerResignation`, and as `maybeResign` resigns only a broker that was active,
the broker keeps every handler the failover registered (KafkaController.scala elect,
triggerControllerMove). A model event is atomic, so `/controller` cannot move in the middle of
a failover and that branch of model/controller.py `trigger_controller_move` is never taken.
"""

from __future__ import annotations

import functools

from kcm.model.catalogue.declaration import Declaration, Judged, Kind, Part, as_is
from kcm.model.catalogue.settledness import AFRESH, Settledness
from kcm.model.cluster import CONTROLLER_WATCHES, NONE, Cluster, Watch, topic_watch

ACTIVE_CONTROLLER_WATCHES = CONTROLLER_WATCHES | Watch.CONTROLLER
#: Every bit but `/controller`'s: the controller handlers, the partition-state and per-topic ones included.
_BEYOND_CONTROLLER = ~Watch.CONTROLLER


def controller_watches_armed(s: Cluster, judge: Settledness = AFRESH, topics_of: int = 0) -> bool:
    """Settled, and `/controller` names an up broker whose controller module is active: that
    broker has every controller watch armed, and every up broker with a live session has its
    `/controller` watch armed. With `topics_of` (the partitions per topic, where partitions can be
    added; 0 elsewhere) the controller also watches each topic its context has an assignment for."""
    if not judge.settled(s):
        return True
    c = s.zk.controller
    if c == NONE or not s.brokers[c].up or not s.brokers[c].active:
        return True
    watches = s.zk.watches
    if watches[c] & ACTIVE_CONTROLLER_WATCHES != ACTIVE_CONTROLLER_WATCHES:
        return False
    if topics_of:
        known = s.brokers[c].ctx.assignment
        for first in range(0, len(known), topics_of):
            if any(known[first:first + topics_of]) and not watches[c] & topic_watch(first // topics_of):
                return False
    return all(watches[b] & Watch.CONTROLLER for b, broker in enumerate(s.brokers)
               if broker.up and s.zk.session >> b & 1)


def no_controller_watches_when_inactive(s: Cluster) -> bool:
    """Every broker whose controller module is not active (resigned, or never elected) has no
    watch armed but `/controller`'s."""
    watches = s.zk.watches
    return all(broker.active or not watches[b] & _BEYOND_CONTROLLER for b, broker in enumerate(s.brokers))


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("ControllerWatchesArmed",
                "once settled, the active controller holds every watch of its handlers and every live "
                "broker watches /controller",
                Kind.LIVENESS, lambda cfg, judge: functools.partial(
                    controller_watches_armed, judge=judge, topics_of=cfg.partitions if cfg.adds_partitions else 0),
                where=Judged.SETTLED,
                reads=frozenset({Part.WATCHES, Part.ZOOKEEPER, Part.BROKER_LIVES, Part.CONTROLLER_MODULES})),
    Declaration("NoControllerWatchesWhenInactive",
                "a controller module that is not active holds no controller handler beyond /controller's",
                Kind.STATE, as_is(no_controller_watches_when_inactive),
                reads=frozenset({Part.WATCHES, Part.CONTROLLER_MODULES})),
)
