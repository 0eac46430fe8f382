"""ZooKeeper watches a settled Kafka 2.6 controller must hold (issue 13, triage of controller.py).

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

So once the cluster has settled under an active controller, that controller holds every one of
its watches and every live broker watches `/controller`: otherwise the next admin operation or
broker change of that kind goes unnoticed. The older properties judged only what the suite's one
operation of each kind did; a watch lost after it was never needed in the same run, and the
mutants that lose one survived (docs/checking.md "Triage of the full run": one-shot watches).
This property sees the lost watch in the state where it is lost, without a second operation.
"""

from __future__ import annotations

from kcm.model.cluster import CONTROLLER_WATCHES, NONE, Cluster, Watch
from kcm.model.invariants import settled

#: Every watch of the active controller: its handlers' paths and /controller.
ACTIVE_CONTROLLER_WATCHES = CONTROLLER_WATCHES | Watch.CONTROLLER

#: The properties that read the armed watches (`Zk.watches`). Only the model and the embedded
#: ZooKeeper know them; a client of a real ZooKeeper cannot list watches (impl/threaded_cluster.py
#: `ZooKeeperView`), so `kcm simulate --zk HOST:PORT` cannot judge these.
READS_WATCHES = frozenset({"ControllerWatchesArmed"})


def controller_watches_armed(s: Cluster) -> bool:
    """Settled, and `/controller` names an up broker whose controller module is active: that
    broker has every controller watch armed, and every up broker with a live session has its
    `/controller` watch armed."""
    if not settled(s):
        return True
    c = s.zk.controller
    if c == NONE or not s.brokers[c].up or not s.brokers[c].active:
        return True
    watches = s.zk.watches
    if watches[c] & ACTIVE_CONTROLLER_WATCHES != ACTIVE_CONTROLLER_WATCHES:
        return False
    return all(watches[b] & Watch.CONTROLLER for b, broker in enumerate(s.brokers)
               if broker.up and s.zk.session >> b & 1)


def properties(cfg) -> list:
    """This module's properties, registered at the end of `invariants.properties_for`."""
    from kcm.checker.engine.contract import Always
    return [
        Always("ControllerWatchesArmed", controller_watches_armed,
               "once settled, the active controller holds every watch of its handlers and every live "
               "broker watches /controller", kind="settled"),
    ]
