"""Log-directory failure (JBOD): a replica offline on a live broker.

With several log directories (`log.dirs`), a broker that loses one keeps running: it stops the
replicas on it (`HostedPartition.Offline`), answers every later LeaderAndIsr and StopReplica for
them with KAFKA_STORAGE_ERROR, and writes a log-dir event notification; the controller asks the
broker about all its replicas (`onBrokerLogDirFailure`), records the partitions answered with the
storage error in `replicasOnOfflineDirs` and takes those replicas offline
(`onReplicasBecomeOffline`) until the broker restarts
(kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala
`processLogDirEventNotification`, lines 1451-1461, and `processLeaderAndIsrResponseReceived`,
lines 1187-1216; kafka@2.6.x:core/src/main/scala/kafka/server/ReplicaManager.scala
`handleLogDirFailure`). It is the one way in 2.6 for a replica to be offline while its broker is
live: `isReplicaOnline` is false for it, so no election chooses it and `OfflineReplica` takes it
out of the ISR (ControllerContext.scala lines 205-211).

What an operator expects of it: a replica the controller knows to be on a failed directory is
never the partition's leader and is in its ISR only as its sole member (KAFKA-708 keeps the last
member); and once quiescent the controller knows exactly the replicas whose directory failed.
The properties that judge dead replicas once settled (leadership.py) count a replica on a failed
directory as not live. They are listed only for the configs that may fail a log directory.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from kcm.model.catalogue import findings
from kcm.model.catalogue.declaration import Declaration, Judged, Kind, Part, per_topic_with_judge
from kcm.model.catalogue.settledness import AFRESH, Judge, Settledness
from kcm.model.cluster import NO_ZNODE, NONE, Cluster, bits
from kcm.model.config import ModelConfig


def offline_dir_replica_out_of_leadership(s: Cluster, ppt: int = 1) -> bool:
    """For the active controller at the current controller epoch: every replica in its
    `replicasOnOfflineDirs`, of a topic it has not queued for deletion, is not the leader of its
    partition's state znode and is in its ISR only as the sole member. The event that records the
    storage error takes the replica offline in the same step: the election moves leadership to a
    live ISR member or leaves none, and `OfflineReplica` removes the replica from the ISR and
    clears it as leader (ReplicaStateMachine.scala `doRemoveReplicasFromIsr`). Topics queued for
    deletion are left out: `onReplicasBecomeOffline` fails their replicas' deletion instead."""
    c = s.zk.controller
    if c == NONE:
        return True
    broker = s.brokers[c]
    ctx = broker.ctx
    if not broker.active or ctx.epoch != s.zk.controller_epoch:
        return True
    for b, dirs in enumerate(ctx.offline_dirs):
        for p in bits(dirs):
            if ctx.topics_to_delete >> (p // ppt) & 1:
                continue
            z = s.zk.partitions[p]
            if z != NO_ZNODE and (z.leader == b or (b in z.isr and len(z.isr) > 1)):
                return False
    return True


def offline_dirs_known_once_quiescent(s: Cluster, ppt: int = 1, judge: Settledness = AFRESH) -> bool:
    """Quiescent: the active controller's `replicasOnOfflineDirs` holds exactly the assigned
    replicas whose log directory failed, of the topics not queued for deletion. The broker's
    notification makes the controller ask it (`onBrokerLogDirFailure`); a controller that fails
    over deletes the notifications unread and learns the same from the answers to the
    LeaderAndIsr of its startup. A topic queued for deletion is left out: its replicas are in
    the deletion's states, from which OnlineReplica is no transition, so nothing asks them."""
    if not judge.quiescent(s):
        return True
    for broker in s.brokers:
        if not broker.active:
            continue
        ctx = broker.ctx
        for p, assigned in enumerate(ctx.assignment):
            if s.zk.delete_topics >> (p // ppt) & 1:
                continue
            for b in assigned:
                if (ctx.offline_dirs[b] ^ s.brokers[b].offline_dirs) >> p & 1:
                    return False
    return True


def fails_log_dirs(cfg: ModelConfig) -> bool:
    """Some run of `cfg` may fail a log directory."""
    return cfg.max_log_dir_failures > 0 or any("log_dir_failure" in run for run in cfg.overlapping)


def _per_topic_state(fn: Callable[..., bool]) -> Callable[[ModelConfig, Judge], Callable[[Cluster], bool]]:
    return lambda cfg, judge: functools.partial(fn, ppt=cfg.partitions)


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("OfflineDirReplicaNotLeader",
                "a replica the controller knows to be on a failed log directory is never leader and is in an ISR "
                "only as its sole member",
                Kind.STATE, _per_topic_state(offline_dir_replica_out_of_leadership),
                reads=frozenset({Part.ZOOKEEPER, Part.CONTROLLER_MODULES}), listed=fails_log_dirs),
    Declaration("OfflineDirsKnownOnceQuiescent",
                "once quiescent, the active controller holds exactly the replicas whose log directory failed "
                "as on offline directories",
                Kind.LIVENESS, per_topic_with_judge(offline_dirs_known_once_quiescent), where=Judged.QUIESCENT,
                listed=fails_log_dirs,
                findings=((findings.LOG_DIR_OF_ADDING_REPLICA, findings.log_dir_failures_and_reassignments),)),
)
