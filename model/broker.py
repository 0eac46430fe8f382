"""The broker side: a broker's lifecycle, its replica manager applying controller requests, and a
partition leader's own ISR changes.

Requests (kafka@2.6.x:core/src/main/scala/kafka/server/ReplicaManager.scala and KafkaApis.scala):

- Every request first passes the broker-epoch check (KIP-380): a request stamped with an older
  broker epoch than this incarnation's is rejected (STALE_BROKER_EPOCH). Variant V5 drops it.
- Then the controller-epoch check: a request from an older controller epoch than the highest one
  seen is rejected (STALE_CONTROLLER_EPOCH); otherwise its epoch becomes the highest seen.
  Variant V1 drops the check (and adopts whatever epoch it is given).
- LeaderAndIsr, per partition: applied only if the request's leader epoch is higher than the
  replica's and the broker is in the request's replica list. The replica becomes leader (with the
  request's ISR and zkVersion) or a follower of the request's leader.
- A fenced request changes nothing, and a fenced StopReplica raises no deletion event (its
  answer carries only a top-level error).
- StopReplica, per partition: stops (and with delete=true, deletes) the replica if the request's
  leader epoch is -2 (deletion), -1, or higher than the replica's; an equal or lower one is fenced
  (FENCED_LEADER_EPOCH, KIP-570). The answer to a StopReplica carrying deletions goes back to the
  sender's event queue as TopicDeletionStopReplicaResponseReceived.
- UpdateMetadata: recorded as the epoch of the last metadata applied (the cache is abstracted).
- A partition whose log directory failed (`HostedPartition.Offline`) takes no LeaderAndIsr and no
  StopReplica: each answers it with KAFKA_STORAGE_ERROR (kafka@2.6.x:core/src/main/scala/kafka/
  server/ReplicaManager.scala `becomeLeaderOrFollower`, lines 1259-1266, and `stopReplicas`,
  lines 399-405). The LeaderAndIsr answer goes back to the sender's event queue as
  LeaderAndIsrResponseReceived (`sendLeaderAndIsrRequest`'s callback, kafka@2.6.x:core/src/main/
  scala/kafka/controller/ControllerChannelManager.scala) when it carries a storage error; an
  answer without one is not queued, as its handler would change nothing: it only takes
  partitions answered without error out of `replicasOnOfflineDirs`, and a broker gets its
  directories back only by restarting, which the controller learns from BrokerChange
  (`onBrokerStartup` forgets the broker's entry) before a request stamped with the new broker
  epoch can reach it. A fenced request is answered with a top-level error, which the handler
  ignores (`processLeaderAndIsrResponseReceived`, lines 1187-1194).

A partition leader changes the ISR itself (≤2.6, `Partition.shrinkIsr`): a conditional setData of the
state znode on its cached zkVersion; on success it records the new ISR and zkVersion and creates
an ISR-change notification; on BADVERSION it keeps its old ISR (the step changes nothing, so the
model does not take it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kcm.model.cluster import (
    FAILED_SHIFT,
    NO_REPLICA,
    NONE,
    ApiError,
    ElectionType,
    ElectLeadersAnswer,
    Event,
    EventKind,
    LeaderAndIsrPartition,
    PartitionZnode,
    Replica,
    RequestKind,
    Shutdown,
    StopReplicaPartition,
    Watch,
    empty_context,
    mask_of,
    put,
)
from kcm.model.election import EPOCH_DURING_DELETE, NO_EPOCH
from kcm.model.world import World


def fresh_broker_fields(w: World) -> dict:
    """The in-memory state a broker process starts with (and loses when it dies)."""
    return dict(active=False, ctx=empty_context(w.nb, w.np), queue=(), controller_epoch=0, metadata_epoch=0,
                metadata_controller=NONE, replicas=(NO_REPLICA,) * w.np, shutdown=Shutdown.NONE, shutdown_tries=0,
                offline_dirs=0)


def start(w: World, b: int) -> None:
    """`KafkaServer.startup`: a new session, `registerBroker` (new broker epoch), controller Startup."""
    w.zk = w.zk._replace(session=w.zk.session | 1 << b)
    w.brokers[b] = w.brokers[b]._replace(up=True, connected=True, **fresh_broker_fields(w))
    epoch = w.register_broker(b)
    w.brokers[b] = w.brokers[b]._replace(epoch=epoch, queue=(Event(EventKind.Startup),))


def stop(w: World, b: int) -> None:
    """The process stops (a crash, or the end of a controlled shutdown): all memory is lost, and so
    are the requests queued in its channel manager. The session is the caller's business.
    A broker waiting for this controller's answer to its ControlledShutdownRequest sees the
    connection drop and retries."""
    _fail_pending_controlled_shutdowns(w, b)
    w.brokers[b] = w.brokers[b]._replace(up=False, connected=False, **fresh_broker_fields(w))
    w.zk = w.zk._replace(watches=put(w.zk.watches, b, 0))
    for d in range(w.nb):
        w.drop_channel(b, d)


def expire_session(w: World, b: int) -> None:
    """ZooKeeper expires session `b`: its watches go, its ephemeral znodes are deleted."""
    w.zk = w.zk._replace(session=w.zk.session & ~(1 << b), watches=put(w.zk.watches, b, 0))
    w.delete_ephemerals(b)


def _fail_pending_controlled_shutdowns(w: World, b: int) -> None:
    """Every ControlledShutdown queued at `b` is answered with a failure: the requester retries."""
    for event in w.brokers[b].queue:
        if event.kind is EventKind.ControlledShutdown:
            requester = w.brokers[event.a]
            if requester.up and event.b <= requester.epoch and requester.shutdown is Shutdown.AWAITING:
                w.brokers[event.a] = requester._replace(shutdown=Shutdown.RETRY)


def notice_expiry(w: World, b: int) -> None:
    """`beforeInitializingSession`: `clearAndPut(Expire)`. Preempted ControlledShutdown events
    answer their callback with ControllerMovedException
    (kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerEventManager.scala `clearAndPut`,
    lines 106-110; KafkaController.scala `preemptControlledShutdown`, lines 1109-1111, and
    `preempt`, lines 1888-1896: in Kafka since KAFKA-8294, 2.3.0); preempted ElectLeaders
    requests answer NOT_CONTROLLER (`preemptReplicaLeaderElection`, lines 1715-1724)."""
    _fail_pending_controlled_shutdowns(w, b)
    for event in w.brokers[b].queue:
        if event.kind is EventKind.ReplicaLeaderElection and event.a != NONE:
            w.obs.append(ElectLeadersAnswer(event.a, ElectionType(event.b), ApiError.NOT_CONTROLLER, NONE))
    broker = w.brokers[b]
    w.brokers[b] = broker._replace(connected=False, queue=(Event(EventKind.Expire),))


def deliver(w: World, src: int, dst: int) -> None:
    """The head of `src`'s queue for `dst` arrives at `dst`, which applies it."""
    i = src * w.nb + dst
    request = w.net[i][0]
    w.net[i] = w.net[i][1:]
    broker = w.brokers[dst]
    deletions = 0
    if request.kind is RequestKind.StopReplica:
        for part in request.partitions:
            if part.delete:
                deletions |= 1 << part.partition
    stale_broker_epoch = request.broker_epoch < broker.epoch and not w.flags.broker_change_by_id_only
    stale_controller = (request.controller_epoch < broker.controller_epoch
                        and not w.flags.no_broker_controller_epoch_check)
    if stale_broker_epoch or stale_controller:
        # A fenced request is answered with a top-level error and no per-partition errors
        # (kafka@2.6.x:core/src/main/scala/kafka/server/KafkaApis.scala `handleStopReplicaRequest`,
        # ReplicaManager.scala `stopReplicas`), and the controller's callback raises
        # TopicDeletionStopReplicaResponseReceived only for per-partition errors of deleting topics
        # (kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerChannelManager.scala
        # `sendStopReplicaRequests`): no deletion event. A bounced broker's replicas are failed and
        # retried by BrokerChange instead.
        return
    broker = broker._replace(controller_epoch=request.controller_epoch)
    if request.kind is RequestKind.UpdateMetadata:
        w.brokers[dst] = broker._replace(metadata_epoch=request.controller_epoch,
                                         metadata_controller=request.controller_id)
        return
    replicas = list(broker.replicas)
    # The partitions on a failed log directory take nothing: each is answered KAFKA_STORAGE_ERROR.
    storage_errors = mask_of(part.partition for part in request.partitions) & broker.offline_dirs
    apply: Callable[[list[Replica], int, Any], None] = (
        _become_leader_or_follower if request.kind is RequestKind.LeaderAndIsr else _stop_replica)
    for part in request.partitions:
        if not storage_errors >> part.partition & 1:
            apply(replicas, dst, part)
    w.brokers[dst] = broker._replace(replicas=tuple(replicas))
    if request.kind is RequestKind.LeaderAndIsr:
        if storage_errors:
            w.enqueue(src, Event(EventKind.LeaderAndIsrResponseReceived, dst, storage_errors))
        return
    deletions &= _deletion_in_progress(w, src)
    if deletions:  # after the broker's own update: the sender may be this very broker
        failed = deletions & storage_errors
        _answer_stop_replica(w, src, dst, deletions & ~failed | failed << FAILED_SHIFT)


def _become_leader_or_follower(replicas: list[Replica], dst: int, part: LeaderAndIsrPartition) -> None:
    """One partition of a LeaderAndIsr: applied if its leader epoch is newer and `dst` is a replica."""
    current = replicas[part.partition]
    if part.leader_epoch > current.leader_epoch and dst in part.replicas:
        if part.leader == dst:  # makeLeader
            replicas[part.partition] = Replica(dst, part.leader_epoch, part.isr, part.zk_version,
                                               part.replicas, False)
        else:  # makeFollower
            replicas[part.partition] = Replica(part.leader, part.leader_epoch, (), part.zk_version,
                                               part.replicas, False)


def _stop_replica(replicas: list[Replica], dst: int, part: StopReplicaPartition) -> None:
    """One partition of a StopReplica: applied unless its leader epoch is fenced (KIP-570)."""
    current = replicas[part.partition]
    if (part.leader_epoch in (EPOCH_DURING_DELETE, NO_EPOCH) or part.leader_epoch > current.leader_epoch
            or current == NO_REPLICA):
        if part.delete:
            replicas[part.partition] = NO_REPLICA
        elif current != NO_REPLICA:
            replicas[part.partition] = current._replace(leader=NONE, isr=(), stopped=True)


def fail_log_dir(w: World, b: int, p: int) -> None:
    """`ReplicaManager.handleLogDirFailure` for the directory of `b`'s replica of `p`: the replica
    neither leads nor fetches any more (`removeFetcherForPartitions`, `markPartitionOffline`), and
    `propagateLogDirEvent` creates a sequential child of `/log_dir_event_notification`, which
    fires the controller's child watch."""
    broker = w.brokers[b]
    stopped = broker.replicas[p]._replace(leader=NONE, isr=(), stopped=True)
    w.brokers[b] = broker._replace(replicas=put(broker.replicas, p, stopped), offline_dirs=broker.offline_dirs | 1 << p)
    w.zk = w.zk._replace(log_dir_events=w.zk.log_dir_events | 1 << b)
    w.fire(Watch.LOG_DIR_EVENT, Event(EventKind.LogDirEventNotification))


def _deletion_in_progress(w: World, src: int) -> int:
    """Partitions of the topics whose deletion the sending controller has started
    (`isTopicDeletionInProgress`): only those go back as TopicDeletionStopReplicaResponseReceived."""
    started = w.brokers[src].ctx.topics_deletion_started
    mask = 0
    for p in range(w.np):
        if started >> w.topic_of(p) & 1:
            mask |= 1 << p
    return mask


def _answer_stop_replica(w: World, src: int, dst: int, partitions: int) -> None:
    """The response callback of a StopReplica with deletions: an event for the sending controller."""
    w.enqueue(src, Event(EventKind.TopicDeletionStopReplicaResponseReceived, dst, partitions))


def leader_writes_isr(w: World, b: int, p: int, new_isr: tuple[int, ...]) -> bool:
    """`Partition.updateIsr`: conditional write on the cached zkVersion; on success, the ISR change
    is recorded and a notification created (propagated at once: Kafka batches it for up to 5 s).
    Returns False on BADVERSION (nothing changes)."""
    broker = w.brokers[b]
    replica = broker.replicas[p]
    znode = w.zk.partitions[p]
    if znode.version != replica.zk_version:
        return False
    written = PartitionZnode(b, replica.leader_epoch, new_isr, znode.controller_epoch, znode.version + 1)
    w.set_partition_state(p, written)
    broker = w.brokers[b]  # the write may have queued an event at this broker's own controller
    replicas = put(broker.replicas, p, replica._replace(isr=new_isr, zk_version=written.version))
    w.brokers[b] = broker._replace(replicas=replicas)
    if not w.zk.isr_changes >> p & 1:
        w.zk = w.zk._replace(isr_changes=w.zk.isr_changes | 1 << p)
        w.fire(Watch.ISR_CHANGE, Event(EventKind.IsrChangeNotification))
    return True


def can_lead(w: World, b: int, p: int) -> bool:
    """Broker `b` is up with a live session and acts as the leader of `p`."""
    broker = w.brokers[b]
    replica = broker.replicas[p]
    return (broker.up and broker.connected and bool(w.zk.session >> b & 1)
            and replica.leader == b and not replica.stopped)


def is_caught_up_follower(w: World, b: int, p: int, f: int) -> bool:
    """Follower `f` fetches from leader `b` at `b`'s leader epoch (KIP-320 fences other epochs)."""
    follower = w.brokers[f]
    if not follower.up:
        return False
    mine = w.brokers[b].replicas[p]
    theirs = follower.replicas[p]
    return (theirs.leader == b and theirs.leader_epoch == mine.leader_epoch and not theirs.stopped)
