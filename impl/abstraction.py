"""`abstract(cluster)`: the model state (`kcm.model.cluster.Cluster`) a running implementation is in.

The abstraction function of the refinement: it reads the embedded ZooKeeper's tree, sessions and
armed watches, and every broker process's controller, replica manager and channel queues, and
builds the one `Cluster` value the model would be in. Comparing `abstract(impl)` with the model's
`step` after every action is how the implementation is checked against the model. What it maps:

* ZooKeeper. `/controller`, `/controller_epoch` (0 while it does not exist), the broker
  registrations (each broker's czxids renumbered 1, 2, 3... in the order of that broker's
  registrations, its incarnations, as the model numbers them; `incarnations` counts them per
  broker), `/brokers/topics/<t>` (replicas, adding, removing), the
  partition state znodes with their zkVersions, `/admin/reassign_partitions`,
  `/admin/preferred_replica_election`, `/admin/delete_topics/*`, the partitions named by
  pending `/isr_change_notification/*` znodes, and the topics whose `/config/topics/<t>` switches
  unclean leader election on. Sessions: a broker's bit is set while the session of
  its latest process is live on the server.
* Watches. A broker has a watch bit when the server has that watch armed for the broker's session
  *and* the broker's ZooKeeper client has a handler registered for the path (a notification without
  a handler is ignored, which is what the model's disarming at resignation stands for). Crashed
  processes hear nothing: no bits.
* Brokers. A process that is not running has the model's fresh fields and keeps its last broker
  epoch. A running one: `connected` (it believes its session alive), its broker epoch, `active`,
  the `ControllerContext` (plus the channel manager's brokers), its queued events, the replica
  manager's highest controller epoch, the metadata cache's epoch and controller id, one `Replica`
  per partition and its controlled-shutdown state.
* The network: for each running controller and broker, the requests still queued in its channel
  manager (UpdateMetadata contents are abstracted away, as in the model).
* `spent` comes from the `StepCluster`; the ghost bit from the timeline ("acted while inactive").

Only the embedded ZooKeeper can be read this way (`snapshot`, `armed_watches`, `live_sessions`).
"""

from __future__ import annotations

import json

from kcm.impl import controller_events as ev
from kcm.impl.controller_context import ControllerContext, PartitionAndReplica
from kcm.impl.kafka_server import ControlledShutdownState, KafkaServer
from kcm.impl.layout import Layout
from kcm.impl.requests import ControlRequest, Errors, LeaderAndIsrRequest, StopReplicaRequest
from kcm.impl.zk.memory import WatchKind
from kcm.impl.zk_data import (
    UNCLEAN_LEADER_ELECTION_ENABLE,
    BrokerIdsZNode,
    ConfigEntityZNode,
    ControllerEpochZNode,
    ControllerZNode,
    DeleteTopicsZNode,
    IsrChangeNotificationSequenceZNode,
    IsrChangeNotificationZNode,
    LogDirEventNotificationSequenceZNode,
    LogDirEventNotificationZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicPartitionStateZNode,
    TopicsZNode,
    TopicZNode,
)
from kcm.model.cluster import (
    FAILED_SHIFT,
    NO_REPLICA,
    NO_ZNODE,
    NONE,
    Broker,
    Cluster,
    Context,
    Event,
    EventKind,
    Ghost,
    LeaderAndIsrPartition,
    PartitionZnode,
    Replica,
    Request,
    RequestKind,
    Shutdown,
    StopReplicaPartition,
    Watch,
    Zk,
    empty_context,
    mask_of,
    partition_watch,
    topic_watch,
)
from kcm.model.states import ReplicaState

_SHUTDOWN = {ControlledShutdownState.NONE: Shutdown.NONE, ControlledShutdownState.AWAITING: Shutdown.AWAITING,
             ControlledShutdownState.RETRY: Shutdown.RETRY, ControlledShutdownState.DONE: Shutdown.DONE}

#: Watches of fixed paths: (path, kind) -> bit.
_WATCHES = {
    (ControllerZNode.path, WatchKind.DATA): Watch.CONTROLLER,
    (BrokerIdsZNode.path, WatchKind.CHILD): Watch.BROKER_IDS,
    (DeleteTopicsZNode.path, WatchKind.CHILD): Watch.DELETE_TOPICS,
    (IsrChangeNotificationZNode.path, WatchKind.CHILD): Watch.ISR_CHANGE,
    (PreferredReplicaElectionZNode.path, WatchKind.DATA): Watch.PREFERRED,
    (ReassignPartitionsZNode.path, WatchKind.DATA): Watch.REASSIGN,
    (TopicsZNode.path, WatchKind.CHILD): Watch.TOPICS,
    (LogDirEventNotificationZNode.path, WatchKind.CHILD): Watch.LOG_DIR_EVENT,
}


class _Numbering:
    """czxid -> the model's broker epoch: the registering broker's incarnation (its k-th
    registration is k); 0 stays 0 (unknown). czxids are unique, so each names one registration."""

    def __init__(self, registrations: list[tuple[int, int]]) -> None:
        self._of: dict[int, int] = {}
        self.incarnations: dict[int, int] = {}
        for broker, czxid in registrations:
            self.incarnations[broker] = self.incarnations.get(broker, 0) + 1
            self._of[czxid] = self.incarnations[broker]

    def __call__(self, czxid: int) -> int:
        return self._of[czxid] if czxid > 0 else 0


def abstract(cluster) -> Cluster:
    """The model state of `cluster` (a `kcm.impl.step_cluster.StepCluster`)."""
    layout: Layout = cluster.layout
    number = _Numbering(cluster.registrations)
    snapshot = cluster.zookeeper.snapshot()
    zk = _abstract_zk(cluster, layout, snapshot, number)
    brokers = tuple(_abstract_broker(cluster, b, layout, number) for b in range(layout.brokers))
    nb = layout.brokers
    net: list[tuple[Request, ...]] = []
    for src in range(nb):
        server = cluster.servers.get(src)
        for dst in range(nb):
            if server is None or not server.alive:
                net.append(())
            else:
                queued = server.controller.channel_manager.queued_requests(dst)
                net.append(tuple(_abstract_request(r, layout, number) for r in queued))
    ghost = Ghost.ACTED_WHILE_INACTIVE if cluster.timeline.count("acted while inactive") else 0
    return Cluster(zk, brokers, tuple(net), tuple(cluster.spent), int(ghost))


# ---- ZooKeeper ---------------------------------------------------------------------------------


def _data(snapshot, path: str):
    entry = snapshot.get(path)
    return None if entry is None else entry[0]


def _children(snapshot, path: str) -> list[str]:
    prefix = path.rstrip("/") + "/"
    return sorted(p[len(prefix):] for p in snapshot if p.startswith(prefix) and "/" not in p[len(prefix):])


def _abstract_zk(cluster, layout: Layout, snapshot, number: _Numbering) -> Zk:
    nb, np_ = layout.brokers, layout.partition_count
    live_sessions = cluster.zookeeper.live_sessions()
    session = mask_of(b for b in range(nb) if b in cluster.servers and cluster.servers[b].session_id in live_sessions)
    controller_data = _data(snapshot, ControllerZNode.path)
    controller_id = None if controller_data is None else ControllerZNode.decode(controller_data)
    controller = NONE if controller_id is None else controller_id
    epoch_data = _data(snapshot, ControllerEpochZNode.path)
    controller_epoch = 0 if epoch_data is None else ControllerEpochZNode.decode(epoch_data)
    broker_epochs = tuple(number(snapshot[BrokerIdsZNode.path + f"/{b}"][1].czxid)
                          if BrokerIdsZNode.path + f"/{b}" in snapshot else 0 for b in range(nb))
    empty: tuple[int, ...] = ()
    assignment, adding, removing, partitions = [empty] * np_, [empty] * np_, [empty] * np_, [NO_ZNODE] * np_
    for topic in layout.topics:
        data = _data(snapshot, TopicZNode.path(topic))
        if data is not None:
            for tp, ra in TopicZNode.decode(topic, data).items():
                p = layout.flat(tp)
                if p is not None:
                    assignment[p], adding[p], removing[p] = ra.replicas, ra.adding_replicas, ra.removing_replicas
    for p in range(np_):
        entry = snapshot.get(TopicPartitionStateZNode.path(layout.tp(p)))
        if entry is not None:
            state = TopicPartitionStateZNode.decode(entry[0], entry[1].version)
            assert state is not None, "a partition state znode holds a state"
            lai = state.leader_and_isr
            partitions[p] = PartitionZnode(lai.leader, lai.leader_epoch, tuple(lai.isr), state.controller_epoch,
                                           entry[1].version)
    reassign = [empty] * np_
    data = _data(snapshot, ReassignPartitionsZNode.path)
    if data is not None:
        for tp, target in ReassignPartitionsZNode.decode(data).items():
            p = layout.flat(tp)
            if p is not None:
                reassign[p] = tuple(target)
    data = _data(snapshot, PreferredReplicaElectionZNode.path)
    preferred = 0 if data is None else mask_of(p for p in map(layout.flat, PreferredReplicaElectionZNode.decode(data))
                                               if p is not None)
    delete_topics = mask_of(t for t in map(layout.topic_index, _children(snapshot, DeleteTopicsZNode.path))
                            if t is not None)
    isr_changes = 0
    for child in _children(snapshot, IsrChangeNotificationZNode.path):
        data = _data(snapshot, f"{IsrChangeNotificationZNode.path}/{child}")
        for tp in IsrChangeNotificationSequenceZNode.decode(data):
            p = layout.flat(tp)
            if p is not None:
                isr_changes |= 1 << p
    watches = tuple(_abstract_watches(cluster, b, layout, live_sessions) for b in range(nb))
    log_dir_events = mask_of(LogDirEventNotificationSequenceZNode.decode(data)
                             for child in _children(snapshot, LogDirEventNotificationZNode.path)
                             if (data := _data(snapshot, f"{LogDirEventNotificationZNode.path}/{child}")) is not None)
    unclean_topics = 0
    for child in _children(snapshot, ConfigEntityZNode.path("topics", "").rstrip("/")):
        t = layout.topic_index(child)
        data = _data(snapshot, ConfigEntityZNode.path("topics", child))
        if t is not None and data is not None and \
                ConfigEntityZNode.decode(data).get(UNCLEAN_LEADER_ELECTION_ENABLE, "").lower() == "true":
            unclean_topics |= 1 << t
    return Zk(session, controller, controller_epoch, broker_epochs,
              tuple(number.incarnations.get(b, 0) for b in range(nb)),
              tuple(assignment), tuple(adding), tuple(removing), tuple(partitions), tuple(reassign), preferred,
              delete_topics, isr_changes, watches, unclean_topics, log_dir_events)


def _abstract_watches(cluster, b: int, layout: Layout, live_sessions) -> int:
    server: KafkaServer | None = cluster.servers.get(b)
    if server is None or not server.alive or server.session_id not in live_sessions:
        return 0
    change_paths, child_paths = server.zk_client.registered_handler_paths()
    state_paths = {TopicPartitionStateZNode.path(layout.tp(p)): p for p in range(layout.partition_count)}
    topic_paths = {TopicZNode.path(topic): t for t, topic in enumerate(layout.topics)}
    bits = 0
    for sid, path, kind in cluster.zookeeper.armed_watches():
        if sid != server.session_id:
            continue
        if path not in (change_paths if kind is WatchKind.DATA else child_paths):
            continue
        bit = _WATCHES.get((path, kind))
        if bit is not None:
            bits |= bit
        elif kind is WatchKind.DATA and path in state_paths:
            bits |= partition_watch(state_paths[path])
        elif kind is WatchKind.DATA and path in topic_paths:
            bits |= topic_watch(topic_paths[path])
    return bits


# ---- brokers -----------------------------------------------------------------------------------


def _abstract_broker(cluster, b: int, layout: Layout, number: _Numbering) -> Broker:
    nb, np_ = layout.brokers, layout.partition_count
    server: KafkaServer | None = cluster.servers.get(b)
    if server is None or not server.alive:
        last_epoch = 0 if server is None else number(server.controller.broker_epoch)
        return Broker(up=False, connected=False, epoch=last_epoch, active=False, ctx=empty_context(nb, np_), queue=(),
                      controller_epoch=0, metadata_epoch=0, metadata_controller=NONE, replicas=(NO_REPLICA,) * np_,
                      shutdown=Shutdown.NONE, shutdown_tries=0)
    controller = server.controller
    manager = server.replica_manager
    replicas = []
    for p in range(np_):
        partition = manager.all_partitions.get(layout.tp(p))
        if partition is None:
            replicas.append(NO_REPLICA)
        else:
            replicas.append(Replica(partition.leader, partition.leader_epoch, tuple(partition.isr),
                                    partition.zk_version, tuple(partition.replicas), partition.stopped))
    queue = tuple(_abstract_event(e, layout, number) for e in controller.event_manager.queued_events())
    ctx = _abstract_context(controller.context, controller.channel_manager.brokers(), layout, number)
    return Broker(up=True, connected=server.zk_session_believed_alive, epoch=number(controller.broker_epoch),
                  active=controller.is_active, ctx=ctx, queue=queue, controller_epoch=manager.controller_epoch,
                  metadata_epoch=manager.metadata_cache.epoch, metadata_controller=manager.metadata_cache.controller_id,
                  replicas=tuple(replicas),
                  shutdown=_SHUTDOWN[server.shutdown_state],
                  shutdown_tries=0 if server.shutdown_state is ControlledShutdownState.NONE else server.shutdown_tries,
                  offline_dirs=_partitions_mask(layout, manager.offline_partitions))


def _abstract_context(ctx: ControllerContext, channel: frozenset[int], layout: Layout, number: _Numbering) -> Context:
    nb, np_ = layout.brokers, layout.partition_count
    epochs = ctx.live_broker_id_and_epochs
    assignment, adding, removing, leadership, pstates, rstates = [], [], [], [], [], []
    for p in range(np_):
        tp = layout.tp(p)
        ra = ctx.partition_full_replica_assignment(tp)
        assignment.append(ra.replicas)
        adding.append(ra.adding_replicas)
        removing.append(ra.removing_replicas)
        info = ctx.partition_leadership_info.get(tp)
        if info is None:
            leadership.append(NO_ZNODE)
        else:
            lai = info.leader_and_isr
            leadership.append(PartitionZnode(lai.leader, lai.leader_epoch, tuple(lai.isr), info.controller_epoch,
                                             lai.zk_version))
        pstates.append(ctx.partition_state(tp))
        rstates.append(tuple(ctx.replica_states.get(PartitionAndReplica(tp, b), ReplicaState.NonExistentReplica)
                             for b in range(nb)))
    topics = layout.topics
    return Context(
        epoch=ctx.epoch, live=mask_of(ctx.live_or_shutting_down_broker_ids),
        broker_epochs=tuple(number(epochs[b]) if b in epochs else 0 for b in range(nb)),
        shutting_down=mask_of(ctx.shutting_down_broker_ids),
        assignment=tuple(assignment), adding=tuple(adding), removing=tuple(removing),
        reassigning=mask_of(p for p in map(layout.flat, ctx.partitions_being_reassigned) if p is not None),
        leadership=tuple(leadership), partition_states=tuple(pstates), replica_states=tuple(rstates),
        topics_to_delete=mask_of(topics.index(t) for t in ctx.topics_to_be_deleted if t in topics),
        topics_ineligible=mask_of(topics.index(t) for t in ctx.topics_ineligible_for_deletion if t in topics),
        topics_deletion_started=mask_of(topics.index(t) for t in ctx.topics_with_deletion_started if t in topics),
        channel=mask_of(channel),
        offline_dirs=tuple(_partitions_mask(layout, ctx.replicas_on_offline_dirs.get(b, ())) for b in range(nb)))


def _partitions_mask(layout: Layout, tps) -> int:
    """The model's partition bitmask of the topic-partitions `tps` (those outside the layout left out)."""
    return mask_of(p for p in map(layout.flat, tps) if p is not None)


def _abstract_event(event: ev.ControllerEvent, layout: Layout, number: _Numbering) -> Event:
    kind = EventKind[event.name]
    if isinstance(event, ev.ControlledShutdown):
        return Event(kind, event.id, number(event.broker_epoch))
    if isinstance(event, ev.PartitionReassignmentIsrChange):
        return Event(kind, layout.number(event.partition))
    if isinstance(event, ev.PartitionModifications):
        return Event(kind, layout.topics.index(event.topic))
    if isinstance(event, ev.TopicDeletionStopReplicaResponseReceived):
        failed = mask_of(layout.number(tp) for tp, error in event.partition_errors
                         if error is not Errors.NONE or event.request_error is not Errors.NONE)
        deleted = mask_of(layout.number(tp) for tp, _ in event.partition_errors) & ~failed
        return Event(kind, event.replica_id, deleted | failed << FAILED_SHIFT)
    if isinstance(event, ev.LeaderAndIsrResponseReceived):
        return Event(kind, event.broker_id, mask_of(layout.number(tp) for tp, error in event.partition_errors
                                                    if error is Errors.KAFKA_STORAGE_ERROR))
    if isinstance(event, ev.ReplicaLeaderElection) and event.partitions is not None:
        (tp,) = event.partitions   # the model's request names one partition
        return Event(kind, layout.number(tp), event.election_type.value)
    if isinstance(event, ev.TopicUncleanLeaderElectionEnable):
        t = layout.topic_index(event.topic)
        return Event(kind, NONE if t is None else t)
    return Event(kind)


def _abstract_request(request: ControlRequest, layout: Layout, number: _Numbering) -> Request:
    if isinstance(request, LeaderAndIsrRequest):
        kind = RequestKind.LeaderAndIsr
        parts: tuple[LeaderAndIsrPartition, ...] | tuple[StopReplicaPartition, ...] = tuple(sorted(
            LeaderAndIsrPartition(layout.number(s.topic_partition), s.leader, s.leader_epoch, tuple(s.isr),
                                  s.zk_version, tuple(s.replicas), s.is_new)
            for s in request.partition_states))
    elif isinstance(request, StopReplicaRequest):
        kind = RequestKind.StopReplica
        parts = tuple(sorted(StopReplicaPartition(layout.number(s.topic_partition), s.leader_epoch,
                                                  s.delete_partition) for s in request.partition_states))
    else:
        kind, parts = RequestKind.UpdateMetadata, ()
    return Request(kind, request.controller_id, request.controller_epoch, number(request.broker_epoch), parts)


def describe_difference(expected: Cluster, actual: Cluster) -> list[str]:
    """The fields where two model states differ, one line each (for assertion messages)."""
    from kcm.model.checking.kafka_model import state_fields

    left, right = state_fields(expected), state_fields(actual)
    out = []
    for key in left:
        if left[key] != right[key]:
            if isinstance(left[key], dict):
                for sub in left[key]:
                    if left[key][sub] != right[key].get(sub):
                        out.append(f"{key}.{sub}: model {_short(left[key][sub])} != impl {_short(right[key].get(sub))}")
                for sub in right[key]:
                    if sub not in left[key]:
                        out.append(f"{key}.{sub}: model - != impl {_short(right[key][sub])}")
            else:
                out.append(f"{key}: model {_short(left[key])} != impl {_short(right[key])}")
    if not out and expected != actual:
        out.append(_raw_difference(expected, actual))
    return out


def _short(value) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) < 400 else text[:400] + "..."


def _raw_difference(expected, actual, path: str = "state") -> str:
    """The first differing leaf of two nested tuples (for fields `state_fields` does not show)."""
    if isinstance(expected, tuple) and isinstance(actual, tuple) and len(expected) == len(actual):
        fields = getattr(expected, "_fields", None)
        for i, (x, y) in enumerate(zip(expected, actual)):
            if x != y:
                return _raw_difference(x, y, f"{path}.{fields[i] if fields else i}")
    return f"{path}: model {expected!r} != impl {actual!r}"

