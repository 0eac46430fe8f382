"""The leader's own ISR and zkVersion agree with ZooKeeper (issue 13, the broker-side triage).

In Kafka 2.6 (ZooKeeper era) the partition leader changes the ISR itself: `Partition.expandIsr` /
`shrinkIsr` write the state znode conditionally on the zkVersion the leader caches
(`updateIsr` -> `ReplicationUtils.updateLeaderAndIsr`), and on success record the new ISR and
the new zkVersion (`isrState = ...`, `zkVersion = newVersion`,
kafka@2.6.x:core/src/main/scala/kafka/cluster/Partition.scala `updateIsr`); every write of the
controller bumps the leader epoch and reaches the leader as a LeaderAndIsr carrying the ISR and
zkVersion written (`makeLeader`). So once the cluster is quiescent, the broker that the state
znode names as leader, holding the partition at the znode's leader epoch, caches exactly the
znode's ISR and zkVersion. A leader whose zkVersion is stale fails every later ISR change with
BADVERSION (it can neither shrink out a dead follower nor take a caught-up one back) until the
controller happens to send it a new leader epoch.

The older properties compared ZooKeeper with the controller's cache (CacheMatchesZk) and the
brokers' leader and leader epoch with the znode (BrokersFollowTheLeader), never the leader's ISR
state. Topics queued for deletion are not judged: the controller does not tell their replicas
about its ISR removals (ReplicaStateMachine.scala, case OfflineReplica), and they are being
stopped.
"""

from __future__ import annotations

import functools

from kcm.checker.engine.contract import Always
from kcm.model.cluster import Cluster
from kcm.model.invariants import led_partitions, quiescent  # invariants imports this module only inside properties_for


def leader_isr_matches_zk(s: Cluster, ppt: int = 1) -> bool:
    """Quiescent: the znode's leader, at the znode's leader epoch, caches the znode's ISR and zkVersion."""
    if not quiescent(s):
        return True
    for p, z in led_partitions(s.zk, ppt):
        r = s.brokers[z.leader].replicas[p]
        if r.leader == z.leader and r.leader_epoch == z.leader_epoch and not r.stopped:
            if r.isr != z.isr or r.zk_version != z.version:
                return False
    return True


def properties(cfg) -> list:
    """This module's properties, registered at the end of `kcm.model.invariants.properties_for`."""
    return [Always("LeaderIsrMatchesZk", functools.partial(leader_isr_matches_zk, ppt=cfg.partitions),
                   "holds whenever no healing action is enabled", kind="quiescence")]
