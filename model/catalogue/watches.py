"""ZooKeeper watches: a settled controller holds every watch it needs.

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
"""

from __future__ import annotations

import functools

from kcm.model.catalogue.declaration import Declaration, Judged, Kind, Part
from kcm.model.catalogue.settledness import AFRESH, Settledness
from kcm.model.cluster import CONTROLLER_WATCHES, NONE, Cluster, Watch, topic_watch

ACTIVE_CONTROLLER_WATCHES = CONTROLLER_WATCHES | Watch.CONTROLLER


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


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("ControllerWatchesArmed",
                "once settled, the active controller holds every watch of its handlers and every live "
                "broker watches /controller",
                Kind.LIVENESS, lambda cfg, judge: functools.partial(
                    controller_watches_armed, judge=judge, topics_of=cfg.partitions if cfg.adds_partitions else 0),
                where=Judged.SETTLED,
                reads=frozenset({Part.WATCHES, Part.ZOOKEEPER, Part.BROKER_LIVES, Part.CONTROLLER_MODULES})),
)
