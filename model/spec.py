"""The transition relation of the whole cluster: `init_states`, `enabled_actions`, `step`.

`init_states(config)`: every topic exists in ZooKeeper with Kafka's default spread of replicas
(partition p on brokers p, p+1, ... modulo the broker count) and no partition state znode yet;
`/controller_epoch` is 0; no broker runs. The first brokers to start race for `/controller`, and
the first controller creates the partition states (NewPartition -> OnlinePartition).

`enabled_actions(config, state)` lists the actions whose guards hold, in a fixed order (brokers,
then the network, then partition leaders, then admins), so that traces replay.
`step(config, state, action)` applies one action; it returns None when the step would overflow a
bounded event queue (the step is then not taken, like a TLC state constraint).

`KafkaModel` wraps the three functions as a `kcm.model.properties.Model` for the checkers, with
the invariants of `invariants.py` and the symmetry of `symmetry.py`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from kcm.model import broker as broker_side
from kcm.model.actions import (
    AdminDeleteTopic,
    AdminMoveController,
    AdminPreferredElection,
    AdminReassign,
    BrokerCrash,
    BrokerNoticeExpiry,
    BrokerRequestControlledShutdown,
    BrokerShutdown,
    BrokerStart,
    ControllerProcessEvent,
    LeaderExpandIsr,
    LeaderShrinkIsr,
    NetworkDeliver,
    SchedulerAutoRebalance,
    ZkSessionExpire,
)
from kcm.model.cluster import (
    NO_ZNODE,
    NONE,
    Broker,
    Budget,
    Cluster,
    Event,
    EventKind,
    Shutdown,
    Watch,
    Zk,
    empty_context,
)
from kcm.model.config import ModelConfig
from kcm.model.controller import Controller
from kcm.model.variants import flags_for
from kcm.model.world import Overflow, World


def default_assignment(cfg: ModelConfig, p: int) -> tuple[int, ...]:
    """Replicas of flat partition `p`: spread round the brokers (AdminUtils' even spread, no rack, no offset)."""
    return tuple((p + i) % cfg.brokers for i in range(cfg.replication_factor))


def init_states(cfg: ModelConfig) -> tuple[Cluster, ...]:
    nb, np_ = cfg.brokers, cfg.topics * cfg.partitions
    zk = Zk(session=0, controller=NONE, controller_epoch=0, broker_epochs=(0,) * nb, next_zxid=1,
            assignment=tuple(default_assignment(cfg, p) for p in range(np_)),
            adding=((),) * np_, removing=((),) * np_, partitions=(NO_ZNODE,) * np_, reassign=((),) * np_,
            preferred=0, delete_topics=0, isr_changes=0, watches=(0,) * nb)
    down = Broker(up=False, connected=False, epoch=0, active=False, ctx=empty_context(nb, np_), queue=(),
                  controller_epoch=0, metadata_epoch=0, replicas=(broker_side.NO_REPLICA,) * np_,
                  shutdown=Shutdown.NONE, shutdown_tries=0)
    return (Cluster(zk, (down,) * nb, ((),) * (nb * nb), (0,) * len(Budget), 0),)


def _budget(cfg: ModelConfig) -> tuple[int, ...]:
    limits = [0] * len(Budget)
    limits[Budget.BROKER_CRASHES] = cfg.max_broker_crashes
    limits[Budget.SESSION_EXPIRIES] = cfg.max_session_expiries
    limits[Budget.LEADER_ISR_SHRINKS] = cfg.max_leader_isr_shrinks
    limits[Budget.CONTROLLED_SHUTDOWNS] = cfg.max_controlled_shutdowns
    limits[Budget.PREFERRED_ELECTIONS] = cfg.max_preferred_elections
    limits[Budget.REASSIGNMENTS] = cfg.max_reassignments
    limits[Budget.TOPIC_DELETIONS] = cfg.max_topic_deletions
    limits[Budget.AUTO_REBALANCES] = cfg.max_auto_rebalances
    limits[Budget.CONTROLLER_MOVES] = cfg.max_controller_moves
    return tuple(limits)


def enabled_actions(cfg: ModelConfig, state: Cluster) -> list:
    """Every action whose guard holds, in a fixed order. (`KafkaModel.successors` also drops the
    ones whose step would overflow a queue.)"""
    limits = _budget(cfg)
    spent = state.spent
    zk = state.zk

    def left(b: Budget) -> bool:
        return spent[b] < limits[b]

    nb = cfg.brokers
    np_ = cfg.topics * cfg.partitions
    out: list = []
    for b, broker in enumerate(state.brokers):
        session = bool(zk.session >> b & 1)
        if not broker.up:
            if not session:
                out.append(BrokerStart(b))
            else:
                out.append(ZkSessionExpire(b))  # a dead broker's session always expires eventually
            continue
        if left(Budget.BROKER_CRASHES):
            out.append(BrokerCrash(b))
        if session and left(Budget.SESSION_EXPIRIES):
            out.append(ZkSessionExpire(b))
        if broker.connected and not session:
            out.append(BrokerNoticeExpiry(b))
        if broker.queue:
            out.append(ControllerProcessEvent(b))
        if broker.connected and session:
            sd = broker.shutdown
            if zk.controller != NONE and (
                    (sd is Shutdown.NONE and left(Budget.CONTROLLED_SHUTDOWNS))
                    or (sd is Shutdown.RETRY and broker.shutdown_tries <= cfg.controlled_shutdown_max_retries)):
                out.append(BrokerRequestControlledShutdown(b))
            if sd is Shutdown.DONE or (sd is Shutdown.RETRY and broker.shutdown_tries > cfg.controlled_shutdown_max_retries):
                out.append(BrokerShutdown(b))
        if broker.active and left(Budget.AUTO_REBALANCES):
            out.append(SchedulerAutoRebalance(b))
    for src in range(nb):
        for dst in range(nb):
            if state.net[src * nb + dst] and state.brokers[dst].up:
                out.append(NetworkDeliver(src, dst))
    w = None
    for p in range(np_):
        for b in range(nb):
            replica = state.brokers[b].replicas[p]
            if replica.leader != b or replica.stopped:
                continue
            if w is None:
                w = World(cfg, flags_for(cfg.variant), state)
            if not broker_side.can_lead(w, b, p) or zk.partitions[p].version != replica.zk_version:
                continue
            if left(Budget.LEADER_ISR_SHRINKS):
                for f in replica.isr:
                    if f != b:
                        out.append(LeaderShrinkIsr(b, p, f))
            for f in replica.replicas:
                if f not in replica.isr and broker_side.is_caught_up_follower(w, b, p, f):
                    out.append(LeaderExpandIsr(b, p, f))
    topic_exists = [bool(zk.assignment[t * cfg.partitions]) for t in range(cfg.topics)]
    if left(Budget.PREFERRED_ELECTIONS) and not zk.preferred:
        out.extend(AdminPreferredElection(p) for p in range(np_) if topic_exists[p // cfg.partitions])
    if left(Budget.REASSIGNMENTS) and not any(zk.reassign):
        for p in range(np_):
            if topic_exists[p // cfg.partitions]:
                for target in itertools.permutations(range(nb), cfg.replication_factor):
                    if target != zk.assignment[p]:
                        out.append(AdminReassign(p, target))
    if left(Budget.TOPIC_DELETIONS):
        out.extend(AdminDeleteTopic(t) for t in range(cfg.topics)
                   if topic_exists[t] and not zk.delete_topics >> t & 1)
    if left(Budget.CONTROLLER_MOVES) and zk.controller != NONE:
        out.append(AdminMoveController())
    return out


def step(cfg: ModelConfig, state: Cluster, action, world: World | None = None) -> Cluster | None:
    """The state after `action`, or None if it would overflow an event queue."""
    w = world if world is not None else World(cfg, flags_for(cfg.variant), state)
    try:
        _apply(w, action)
    except Overflow:
        return None
    return w.freeze()


def _spend(w: World, b: Budget) -> None:
    w.spent[b] += 1


def _apply(w: World, action) -> None:  # noqa: C901 - one arm per action, as a TLA+ Next
    kind = type(action)
    if kind is ControllerProcessEvent:
        b = action.broker
        broker = w.brokers[b]
        event = broker.queue[0]
        w.brokers[b] = broker._replace(queue=broker.queue[1:])
        Controller(w, b).process(event)
    elif kind is NetworkDeliver:
        broker_side.deliver(w, action.src, action.dst)
    elif kind is BrokerStart:
        broker_side.start(w, action.broker)
    elif kind is BrokerCrash:
        _spend(w, Budget.BROKER_CRASHES)
        broker_side.stop(w, action.broker)
    elif kind is ZkSessionExpire:
        if w.brokers[action.broker].up:
            _spend(w, Budget.SESSION_EXPIRIES)
        broker_side.expire_session(w, action.broker)
    elif kind is BrokerNoticeExpiry:
        broker_side.notice_expiry(w, action.broker)
    elif kind is LeaderShrinkIsr:
        _spend(w, Budget.LEADER_ISR_SHRINKS)
        isr = w.brokers[action.broker].replicas[action.partition].isr
        broker_side.leader_writes_isr(w, action.broker, action.partition,
                                      tuple(r for r in isr if r != action.follower))
    elif kind is LeaderExpandIsr:
        isr = w.brokers[action.broker].replicas[action.partition].isr
        broker_side.leader_writes_isr(w, action.broker, action.partition, isr + (action.follower,))
    elif kind is BrokerRequestControlledShutdown:
        b = action.broker
        broker = w.brokers[b]
        if broker.shutdown is Shutdown.NONE:
            _spend(w, Budget.CONTROLLED_SHUTDOWNS)
        w.brokers[b] = broker._replace(shutdown=Shutdown.AWAITING, shutdown_tries=broker.shutdown_tries + 1)
        # The request reaches the broker named in /controller and becomes an event there.
        controller = w.zk.controller
        if w.brokers[controller].up:
            w.enqueue(controller, Event(EventKind.ControlledShutdown, b, broker.epoch))
        else:
            w.brokers[b] = w.brokers[b]._replace(shutdown=Shutdown.RETRY)
    elif kind is BrokerShutdown:
        b = action.broker
        broker_side.stop(w, b)
        # A clean shutdown closes the session: the ephemeral znodes go at once.
        w.zk = w.zk._replace(session=w.zk.session & ~(1 << b))
        w.delete_ephemerals(b)
    elif kind is AdminPreferredElection:
        _spend(w, Budget.PREFERRED_ELECTIONS)
        w.zk = w.zk._replace(preferred=1 << action.partition)
        w.fire(Watch.PREFERRED, Event(EventKind.ReplicaLeaderElection))
    elif kind is AdminReassign:
        _spend(w, Budget.REASSIGNMENTS)
        reassign = tuple(action.target if p == action.partition else () for p in range(w.np))
        w.zk = w.zk._replace(reassign=reassign)
        w.fire(Watch.REASSIGN, Event(EventKind.ZkPartitionReassignment))
    elif kind is AdminDeleteTopic:
        _spend(w, Budget.TOPIC_DELETIONS)
        w.zk = w.zk._replace(delete_topics=w.zk.delete_topics | 1 << action.topic)
        w.fire(Watch.DELETE_TOPICS, Event(EventKind.TopicDeletion))
    elif kind is AdminMoveController:
        _spend(w, Budget.CONTROLLER_MOVES)
        w.zk = w.zk._replace(controller=NONE)
        w.fire_controller_change(deleted=True)
    elif kind is SchedulerAutoRebalance:
        _spend(w, Budget.AUTO_REBALANCES)
        w.enqueue(action.broker, Event(EventKind.AutoPreferredReplicaLeaderElection))
    else:
        raise TypeError(f"not an action: {action!r}")


def successors(cfg: ModelConfig, state: Cluster) -> Iterable[tuple[object, Cluster]]:
    """(action, next state) for every enabled action whose step is taken."""
    flags = flags_for(cfg.variant)
    for action in enabled_actions(cfg, state):
        nxt = step(cfg, state, action, World(cfg, flags, state))
        if nxt is not None:
            yield action, nxt

