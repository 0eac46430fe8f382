"""What several property modules read of a state or of a step, named once.

The partitions a liveness property judges (`judged_partitions`, `led_partitions`: topics queued for
deletion are left out, as Kafka 2.6 leaves them), the requests a step sent (`sent_in_step`), the
controller event a step handled at a controller that stays in office (`handled`), and whether a
controller's ZooKeeper writes fail (`writes_fail`), which excuses it from the properties about what
it writes.
"""

from __future__ import annotations

from collections.abc import Iterator

from kcm.model.actions import ControllerProcessEvent
from kcm.model.cluster import NO_ZNODE, NONE, Cluster, Context, Event, EventKind, PartitionZnode, Zk
from kcm.model.states import ReplicaState


def writes_fail(s: Cluster, b: int) -> bool:
    """Broker `b`'s ZooKeeper session has expired (and its controller may not have noticed yet):
    every ZooKeeper access it makes fails with SESSIONEXPIRED, and the state machines log each
    failed partition and go on (kafka@2.6.x:core/src/main/scala/kafka/controller/
    PartitionStateMachine.scala doHandleStateChanges, ReplicaStateMachine.scala
    doRemoveReplicasFromIsr), so an event it handles writes nothing; the Expire event that follows
    resigns. A property about what a controller event writes does not judge such an event."""
    return not s.zk.session >> b & 1


def registered(s: Cluster) -> set[int]:
    """The brokers registered in `/brokers/ids`."""
    return {b for b, e in enumerate(s.zk.broker_epochs) if e}


def online_replicas(s: Cluster, p: int) -> set[int]:
    """The registered brokers whose replica of `p` is not on a failed log directory: the replicas
    of `p` that can lead or join its ISR."""
    return {b for b, e in enumerate(s.zk.broker_epochs) if e and not s.brokers[b].offline_dirs >> p & 1}


def waiting_for_failed_dirs(s: Cluster, ppt: int) -> int:
    """The topics queued for deletion (`/admin/delete_topics`) with a replica on a failed log
    directory: Kafka 2.6 holds their deletion until that broker restarts, as it does for a dead
    broker (the replica is not online, so the topic is ineligible, and its StopReplica is
    answered KAFKA_STORAGE_ERROR; kafka@2.6.x:core/src/main/scala/kafka/controller/
    TopicDeletionManager.scala `onPartitionDeletion`, lines 289-300; deletion resumes in
    `onBrokerStartup`). The quiescent properties about deletion leave them out, as they leave a
    dead broker's topics to its restart."""
    mask = 0
    for p, assigned in enumerate(s.zk.assignment):
        t = p // ppt
        if s.zk.delete_topics >> t & 1 and any(s.brokers[b].offline_dirs >> p & 1 for b in assigned):
            mask |= 1 << t
    return mask


def online_to(ctx: Context, p: int) -> int:
    """The brokers whose replica of `p` controller context `ctx` holds online (`isReplicaOnline`):
    live, not shutting down, not in `replicasOnOfflineDirs`."""
    offline = 0
    for b, dirs in enumerate(ctx.offline_dirs):
        if dirs >> p & 1:
            offline |= 1 << b
    return ctx.live & ~ctx.shutting_down & ~offline


def active_controllers(s: Cluster) -> list[int]:
    """The brokers whose controller module is active."""
    return [b for b, br in enumerate(s.brokers) if br.active]


def judged_partitions(s: Cluster, ppt: int) -> Iterator[tuple[int, PartitionZnode]]:
    """(p, znode) for each partition with a state znode whose topic is not queued for deletion.

    Topics queued for deletion are left out: Kafka 2.6 neither elects for them
    (`triggerOnlinePartitionStateChange` filters `isTopicQueuedUpForDeletion`) nor shrinks their
    ISR when a replica dies (`onReplicasBecomeOffline` sends their replicas to
    `failReplicaDeletion`, ReplicaDeletionIneligible, not to OfflineReplica): their dead leader
    stays in ZooKeeper until the broker comes back and the deletion completes
    (kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala onReplicasBecomeOffline)."""
    deleting = s.zk.delete_topics
    for p, z in enumerate(s.zk.partitions):
        if z != NO_ZNODE and not deleting >> (p // ppt) & 1:
            yield p, z


def led_partitions(zk: Zk, ppt: int) -> Iterator[tuple[int, PartitionZnode]]:
    """(partition, state znode) of every partition ZooKeeper names a leader for, of a topic not
    queued for deletion (its replicas are stopped on purpose): what the leader-side quiescence
    properties judge."""
    for p, z in enumerate(zk.partitions):
        if z != NO_ZNODE and z.leader != NONE and not zk.delete_topics >> (p // ppt) & 1:
            yield p, z


def sent_in_step(s: Cluster, t: Cluster, i: int) -> tuple:
    """The requests appended to channel `i` between `s` and `t` (the whole channel when the step
    also delivered from it)."""
    before, after = s.net[i], t.net[i]
    return after[len(before):] if after[:len(before)] == before else after


def handled(s: Cluster, a, t: Cluster, kind: EventKind) -> Event | None:
    """The event of `kind` that step `a` handles at a controller active before and after it at one
    epoch, with a live ZooKeeper session, or None: an event whose writes were not fenced."""
    if type(a) is not ControllerProcessEvent:
        return None
    queue = s.brokers[a.broker].queue
    if not queue or queue[0].kind is not kind:
        return None
    before, after = s.brokers[a.broker], t.brokers[a.broker]
    if not (before.active and after.active and before.ctx.epoch == after.ctx.epoch == t.zk.controller_epoch):
        return None
    if writes_fail(s, a.broker):
        return None
    return queue[0]


def agreed(s: Cluster, ctx: Context, p: int) -> PartitionZnode | None:
    """Partition `p`'s znode if the controller's cache agrees with ZooKeeper on leader and ISR."""
    z, c = s.zk.partitions[p], ctx.leadership[p]
    if z == NO_ZNODE or c == NO_ZNODE or z.leader != c.leader or z.isr != c.isr:
        return None
    return z


def uncreated_partitions(s: Cluster, ppt: int) -> set[int]:
    """The assigned partitions of topics not queued for deletion (`/admin/delete_topics`) that are
    not created as an operator expects: without a state znode, or led by a broker outside their
    assignment, or with an assigned replica that does not hold the znode's leader epoch. A replica
    on a failed log directory takes no LeaderAndIsr, and a partition whose ISR is only such
    replicas has no leader (`isReplicaOnline`)."""
    zk = s.zk
    out = set()
    for p, replicas in enumerate(zk.assignment):
        if not replicas or zk.delete_topics >> (p // ppt) & 1:
            continue
        z = zk.partitions[p]
        if z == NO_ZNODE:
            out.add(p)
            continue
        failed = [b for b in replicas if s.brokers[b].offline_dirs >> p & 1]
        if ((z.leader not in replicas and not (z.leader == NONE and set(z.isr) <= set(failed)))
                or any(s.brokers[b].replicas[p].leader_epoch != z.leader_epoch for b in replicas if b not in failed)):
            out.add(p)
    return out


def misheld_replicas(s: Cluster, ppt: int) -> Iterator[tuple[int, int, int, ReplicaState]]:
    """(controller, partition, replica, state) for each assigned replica of a topic not queued for
    deletion that an active controller holds neither as OnlineReplica nor, on a failed log
    directory it knows of (`replicasOnOfflineDirs`), as OfflineReplica: what
    ReplicaStatesMatchLiveness finds wrong once quiescent."""
    for c in active_controllers(s):
        ctx = s.brokers[c].ctx
        for p, assigned in enumerate(ctx.assignment):
            if ctx.topics_to_delete >> (p // ppt) & 1:
                continue
            for r in assigned:
                expected = ReplicaState.OfflineReplica if ctx.offline_dirs[r] >> p & 1 else ReplicaState.OnlineReplica
                if ctx.replica_states[p][r] is not expected:
                    yield c, p, r, ctx.replica_states[p][r]
