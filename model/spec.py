"""The transition relation of the whole cluster: `init_states`, `enabled_actions`, `step`.

`init_states(config)`: every topic exists in ZooKeeper with Kafka's default spread of replicas
(partition p on brokers p, p+1, ... modulo the broker count) and no partition state znode yet;
`/controller_epoch` is 0; every broker has just started (registered, Startup queued). Their
controller modules race for `/controller`, and the first controller creates the partition states
(NewPartition -> OnlinePartition).

`enabled_actions(config, state)` lists the actions whose guards hold, in a fixed order (brokers,
then the network, then partition leaders, then admins), so that traces replay.
`step(config, state, action)` applies one action; it returns None when the step would overflow a
bounded event queue (the step is then not taken, like a TLC state constraint).

`kcm.model.checking.kafka_model.KafkaModel` wraps the three functions as a checkable model
(`kcm.checker.engine.contract.Model`).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable

from kcm.model import broker as broker_side
from kcm.model.actions import (
    AdminCreateTopic,
    AdminDeleteTopic,
    AdminMoveController,
    AdminPreferredElection,
    AdminReassign,
    AdminReassignPartitions,
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
    ZkConnectionLoss,
    ZkLoseReply,
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
from kcm.model.config import OVERLAP_KINDS, ModelConfig
from kcm.model.controller import Controller
from kcm.model.invariants import quiescent
from kcm.model.placement import placements
from kcm.model.variants import flags_for
from kcm.model.world import NoEffect, Overflow, World


def default_assignment(cfg: ModelConfig, p: int) -> tuple[int, ...]:
    """Replicas of flat partition `p`: spread round the brokers (AdminUtils' even spread, no rack, no offset)."""
    return tuple((p + i) % cfg.brokers for i in range(cfg.replication_factor))


def topic_placements(cfg: ModelConfig, t: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Every placement Kafka's creation can give topic `t` (model/placement.py), the spread of
    `default_assignment` first."""
    first = tuple(default_assignment(cfg, p) for p in range(t * cfg.partitions, (t + 1) * cfg.partitions))
    return placements(cfg.brokers, cfg.partitions, cfg.replication_factor, first)


def init_states(cfg: ModelConfig) -> tuple[Cluster, ...]:
    """The cluster as its brokers start: every broker has opened its ZooKeeper session and
    registered (each with broker epoch 1, its first incarnation) and has its controller Startup
    event queued; no controller yet, no partition state. (Which broker registers first does not
    matter: epochs are per broker, and nothing happens before a broker registers.)

    Then, for each of the config's `overlapping` runs, the settled cluster tagged with the run's
    number (`Cluster.scenario`), from which that run's perturbations start.

    The topics that exist from the start were created by Kafka, so they may sit on any placement
    its creation can choose (`topic_placements`). The states above come first, with every topic on
    the spread of `default_assignment` (so `init_states()[i]` is run i there, as the implementation
    starts); then the cold start once per other combination of placements. Up to symmetry these
    are few (one orbit when a single topic exists). The overlapping runs keep the one settled
    cluster of the default spread: settling it elsewhere would also move the controller relative
    to the replicas (a choice of coverage, left as it was; docs/model.md, "Symmetry")."""
    per_topic = [topic_placements(cfg, t) for t in range(cfg.existing_topics)]
    out: list[Cluster] = []
    for combo in itertools.product(*per_topic):
        assignment = tuple(p for placement in combo for p in placement)
        cold = _cold_state(cfg, assignment)
        w = World(cfg, flags_for(cfg.variant), cold)
        for b in range(cfg.brokers):
            broker_side.start(w, b)
        start = w.freeze()
        out.append(start)
        if cfg.overlapping and len(out) == 1:
            settled = settle(cfg, start)
            out.extend(settled._replace(scenario=i) for i in range(1, len(cfg.overlapping) + 1))
    return tuple(out)


#: The actions that heal: enabled without any budget, they take the cluster back to quiescence.
_HEALING = (ControllerProcessEvent, NetworkDeliver, LeaderExpandIsr, BrokerStart, ZkSessionExpire,
            BrokerNoticeExpiry, BrokerShutdown)


def heals(state: Cluster, action) -> bool:
    """Whether `action` is a healing step in `state`: a `_HEALING` kind, except that a session
    expiry of a live broker is a fault (it spends a budget); a dead broker's session expiring is
    healing. The set `settle` takes, and the one the liveness checker assumes weakly fair."""
    kind = type(action)
    return kind in _HEALING and not (kind is ZkSessionExpire and state.brokers[action.broker].up)


def settle(cfg: ModelConfig, state: Cluster) -> Cluster:
    """`state` after healing actions alone, always the first enabled one, until it is quiescent:
    the one deterministic "the cluster settled" state (from the cold start: broker 0 wins the
    controller election, every partition led by its preferred replica, every ISR full)."""
    return _settle(cfg, state)[1]


def settle_path(cfg: ModelConfig, state: Cluster) -> list:
    """The healing actions `settle` takes from `state` (what a checker replays to bring another
    copy of the cluster, such as the implementation, to the same settled state)."""
    return _settle(cfg, state)[0]


def _settle(cfg: ModelConfig, state: Cluster, limit: int = 10_000) -> tuple[list, Cluster]:
    path = []
    for _ in range(limit):
        if quiescent(state):
            return path, state
        action = next((a for a in enabled_actions(cfg, state) if heals(state, a)), None)
        if action is None:
            break
        nxt = step(cfg, state, action)
        if nxt is None:
            break
        path.append(action)
        state = nxt
    raise ValueError("the cluster does not settle by healing actions alone; overlapping runs need a settled start")


def _cold_state(cfg: ModelConfig, existing: tuple[tuple[int, ...], ...]) -> Cluster:
    """Nothing started; the existing topics' partitions (the first ones) on `existing`."""
    nb, np_ = cfg.brokers, cfg.topics * cfg.partitions
    zk = Zk(session=0, controller=NONE, controller_epoch=0, broker_epochs=(0,) * nb, incarnations=(0,) * nb,
            assignment=existing + ((),) * (np_ - len(existing)),
            adding=((),) * np_, removing=((),) * np_, partitions=(NO_ZNODE,) * np_, reassign=((),) * np_,
            preferred=0, delete_topics=0, isr_changes=0, watches=(0,) * nb)
    down = Broker(up=False, connected=False, epoch=0, active=False, ctx=empty_context(nb, np_), queue=(),
                  controller_epoch=0, metadata_epoch=0, metadata_controller=NONE, replicas=(broker_side.NO_REPLICA,) * np_,
                  shutdown=Shutdown.NONE, shutdown_tries=0)
    return Cluster(zk, (down,) * nb, ((),) * (nb * nb), (0,) * len(Budget), 0)


#: The config field that bounds each budget.
_BUDGET_FIELD = {
    Budget.BROKER_CRASHES: "max_broker_crashes", Budget.SESSION_EXPIRIES: "max_session_expiries",
    Budget.LEADER_ISR_SHRINKS: "max_leader_isr_shrinks", Budget.CONTROLLED_SHUTDOWNS: "max_controlled_shutdowns",
    Budget.PREFERRED_ELECTIONS: "max_preferred_elections", Budget.REASSIGNMENTS: "max_reassignments",
    Budget.TOPIC_DELETIONS: "max_topic_deletions", Budget.AUTO_REBALANCES: "max_auto_rebalances",
    Budget.CONTROLLER_MOVES: "max_controller_moves", Budget.TOPIC_CREATIONS: "max_topic_creations",
    Budget.LOST_ACKS: "max_lost_acks", Budget.CONNECTION_LOSSES: "max_connection_losses",
}
assert set(_BUDGET_FIELD) == set(Budget)
#: The budget each kind of an overlapping run spends (`OVERLAP_KINDS` names the field).
_OVERLAP_BUDGET = {kind: next(b for b, f in _BUDGET_FIELD.items() if f == field) for kind, field in OVERLAP_KINDS.items()}


@functools.lru_cache(maxsize=64)
def _budget(cfg: ModelConfig) -> tuple[int, ...]:
    """The config's limit per budget (cached: `enabled_actions` asks for it in every state)."""
    return tuple(getattr(cfg, _BUDGET_FIELD[b]) for b in Budget)


@functools.lru_cache(maxsize=256)
def _overlap_budget(cfg: ModelConfig, scenario: int, done: int) -> tuple[int, ...]:
    """The budget of overlapping run `scenario` (1-based) after `done` of its perturbations: the
    kinds already done, at one each, and the next kind in the run's order."""
    limits = [0] * len(Budget)
    for kind in cfg.overlapping[scenario - 1][:done + 1]:
        limits[_OVERLAP_BUDGET[kind]] = 1
    return tuple(limits)


def reassignment_targets(cfg: ModelConfig, current: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The targets an admin may ask for (`reassign_targets`), never the current assignment:
    "all" ordered lists of RF brokers; "replace-one": one replica replaced in place;
    "replace-one-or-reorder": those and every reordering of the current replicas."""
    if cfg.reassign_targets == "all":
        return [t for t in itertools.permutations(range(cfg.brokers), cfg.replication_factor) if t != current]
    spare = [b for b in range(cfg.brokers) if b not in current]
    targets = [current[:i] + (b,) + current[i + 1:] for i in range(len(current)) for b in spare]
    if cfg.reassign_targets == "replace-one-or-reorder":
        # The same replicas in another order (e.g. (0, 1) -> (1, 0)): nothing is added or removed,
        # so no OfflineReplica re-reads the znode; only the preferred leader changes.
        targets += [t for t in itertools.permutations(current) if t != current]
    return targets


_FAULTS = frozenset({Budget.BROKER_CRASHES, Budget.SESSION_EXPIRIES, Budget.LEADER_ISR_SHRINKS,
                     Budget.CONTROLLER_MOVES, Budget.LOST_ACKS, Budget.CONNECTION_LOSSES})
_ADMIN = frozenset(Budget) - _FAULTS


class _Tables:
    """What `enabled_actions` derives from the config alone or from a few small values, computed
    once per config: the budgets left per (spent, run, quiescence), the admin actions per
    ZooKeeper's admin state, and the action records themselves (immutable, so shared between
    states)."""

    __slots__ = ("left", "admin", "broker", "deliver")

    def __init__(self, cfg: ModelConfig) -> None:
        self.left: dict = {}
        self.admin: dict = {}
        #: per broker: BrokerStart, ZkSessionExpire, BrokerCrash, BrokerNoticeExpiry,
        #: ControllerProcessEvent, ZkLoseReply, ZkConnectionLoss, BrokerRequestControlledShutdown,
        #: BrokerShutdown, SchedulerAutoRebalance
        self.broker = tuple((BrokerStart(b), ZkSessionExpire(b), BrokerCrash(b), BrokerNoticeExpiry(b),
                             ControllerProcessEvent(b), ZkLoseReply(b), ZkConnectionLoss(b),
                             BrokerRequestControlledShutdown(b), BrokerShutdown(b), SchedulerAutoRebalance(b))
                            for b in range(cfg.brokers))
        nb = cfg.brokers
        #: per index of `Cluster.net`: the delivery of that queue's head
        self.deliver = tuple(NetworkDeliver(i // nb, i % nb) for i in range(nb * nb))


#: id(config) -> (config, its `_Tables`); by identity, since hashing a config costs more than a step's guards.
_TABLES: dict[int, tuple[ModelConfig, _Tables]] = {}


def _tables(cfg: ModelConfig) -> _Tables:
    entry = _TABLES.get(id(cfg))
    if entry is None or entry[0] is not cfg:
        if len(_TABLES) > 256:
            _TABLES.clear()
        entry = _TABLES[id(cfg)] = (cfg, _Tables(cfg))
    return entry[1]


def _left(cfg: ModelConfig, spent: tuple[int, ...], scenario: int, quiet: bool) -> tuple[bool, ...]:
    """Per `Budget`, whether one more may be spent, for the budgets `spent` in run `scenario`
    (`quiet`: the state is quiescent, which only an overlapping run asks)."""
    if scenario == 0:
        limits = _budget(cfg)
        faults_ok = cfg.max_faults < 0 or sum(spent[b] for b in _FAULTS) < cfg.max_faults
        admin_ok = cfg.max_admin_ops < 0 or sum(spent[b] for b in _ADMIN) < cfg.max_admin_ops
        if 0 <= cfg.max_perturbations <= sum(spent):
            faults_ok = admin_ok = False
    else:
        # An overlapping run: its kinds once each, in the order listed; the first from the
        # settled start, each next one before the cluster has settled again.
        limits = _overlap_budget(cfg, scenario, sum(spent))
        faults_ok = admin_ok = not any(spent) or not quiet
    return tuple(spent[b] < limits[b] and (faults_ok if b in _FAULTS else admin_ok) for b in Budget)


_BROKER_CRASHES, _SESSION_EXPIRIES, _LEADER_ISR_SHRINKS, _CONTROLLED_SHUTDOWNS = (
    Budget.BROKER_CRASHES.value, Budget.SESSION_EXPIRIES.value, Budget.LEADER_ISR_SHRINKS.value,
    Budget.CONTROLLED_SHUTDOWNS.value)
_PREFERRED_ELECTIONS, _REASSIGNMENTS, _TOPIC_DELETIONS, _AUTO_REBALANCES = (
    Budget.PREFERRED_ELECTIONS.value, Budget.REASSIGNMENTS.value, Budget.TOPIC_DELETIONS.value,
    Budget.AUTO_REBALANCES.value)
_CONTROLLER_MOVES, _TOPIC_CREATIONS, _LOST_ACKS, _CONNECTION_LOSSES = (
    Budget.CONTROLLER_MOVES.value, Budget.TOPIC_CREATIONS.value, Budget.LOST_ACKS.value,
    Budget.CONNECTION_LOSSES.value)


def enabled_actions(cfg: ModelConfig, state: Cluster) -> list:
    """Every action whose guard holds, in a fixed order. (`KafkaModel.successors` also drops the
    ones whose step would overflow a queue.)"""
    spent = state.spent
    zk = state.zk
    tables = _tables(cfg)
    scenario = state.scenario
    quiet = scenario != 0 and any(spent) and quiescent(state)
    key = (spent, scenario, quiet)
    left = tables.left.get(key)
    if left is None:
        left = tables.left[key] = _left(cfg, spent, scenario, quiet)

    nb = cfg.brokers
    np_ = cfg.topics * cfg.partitions
    out: list = []
    brokers = state.brokers
    for b, broker in enumerate(brokers):
        acts = tables.broker[b]
        session = zk.session >> b & 1
        if not broker.up:
            if not session:
                out.append(acts[0])  # BrokerStart
            else:
                out.append(acts[1])  # ZkSessionExpire: a dead broker's session always expires eventually
            continue
        if left[_BROKER_CRASHES]:
            out.append(acts[2])  # BrokerCrash
        if session and left[_SESSION_EXPIRIES]:
            out.append(acts[1])  # ZkSessionExpire
        if broker.connected and not session:
            out.append(acts[3])  # BrokerNoticeExpiry
        if broker.queue:
            out.append(acts[4])  # ControllerProcessEvent
            if session and broker.connected and left[_LOST_ACKS]:
                out.append(acts[5])  # ZkLoseReply
            if session and broker.connected and left[_CONNECTION_LOSSES]:
                out.append(acts[6])  # ZkConnectionLoss
        if broker.connected and session:
            sd = broker.shutdown
            if zk.controller != NONE and (
                    (sd is Shutdown.NONE and left[_CONTROLLED_SHUTDOWNS])
                    or (sd is Shutdown.RETRY and broker.shutdown_tries <= cfg.controlled_shutdown_max_retries)):
                out.append(acts[7])  # BrokerRequestControlledShutdown
            if sd is Shutdown.DONE or (sd is Shutdown.RETRY and broker.shutdown_tries > cfg.controlled_shutdown_max_retries):
                out.append(acts[8])  # BrokerShutdown
        if broker.active and left[_AUTO_REBALANCES]:
            out.append(acts[9])  # SchedulerAutoRebalance
    deliver = tables.deliver
    for i, queue in enumerate(state.net):  # src-major: index src * nb + dst
        if queue and brokers[i % nb].up:
            out.append(deliver[i])
    w = None
    kip841 = None
    for p in range(np_):
        for b in range(nb):
            replica = brokers[b].replicas[p]
            if replica.leader != b or replica.stopped:
                continue
            if w is None:
                w = World(cfg, flags_for(cfg.variant), state)
                kip841 = None if cfg.isr_admission == "2.6" else _admissible(state)
            if not broker_side.can_lead(w, b, p) or zk.partitions[p].version != replica.zk_version:
                continue
            if left[_LEADER_ISR_SHRINKS]:
                for f in replica.isr:
                    if f != b:
                        out.append(LeaderShrinkIsr(b, p, f))
            for f in replica.replicas:
                if (f not in replica.isr and broker_side.is_caught_up_follower(w, b, p, f)
                        and (kip841 is None or kip841 >> f & 1)):
                    out.append(LeaderExpandIsr(b, p, f))
    if (left[_PREFERRED_ELECTIONS] or left[_REASSIGNMENTS] or left[_TOPIC_DELETIONS] or left[_TOPIC_CREATIONS]
            or left[_CONTROLLER_MOVES]):
        # The admin actions depend on the budgets and on ZooKeeper's admin state only.
        key = (left, zk.assignment, not zk.preferred, not any(zk.reassign), zk.delete_topics, zk.controller != NONE)
        admin = tables.admin.get(key)
        if admin is None:
            if len(tables.admin) > 1 << 14:
                tables.admin.clear()
            admin = tables.admin[key] = _admin_actions(cfg, left, *key[1:])
        out.extend(admin)
    return out


def _admin_actions(cfg: ModelConfig, left: tuple[bool, ...], assignment: tuple, no_preferred: bool,
                   no_reassign: bool, delete_topics: int, has_controller: bool) -> tuple:
    """The enabled admin operations, in `enabled_actions`' order."""
    np_ = cfg.topics * cfg.partitions
    out: list = []
    topic_exists = [bool(assignment[t * cfg.partitions]) for t in range(cfg.topics)]
    if left[_PREFERRED_ELECTIONS] and no_preferred:
        out.extend(AdminPreferredElection(p) for p in range(np_) if topic_exists[p // cfg.partitions])
    if left[_REASSIGNMENTS] and no_reassign:
        existing = [p for p in range(np_) if topic_exists[p // cfg.partitions]]
        for p in existing:
            for target in reassignment_targets(cfg, assignment[p]):
                out.append(AdminReassign(p, target))
        # one znode naming several partitions (`reassign_partitions_at_once`)
        for k in range(2, min(cfg.reassign_partitions_at_once, len(existing)) + 1):
            for ps in itertools.combinations(existing, k):
                for targets in itertools.product(*(reassignment_targets(cfg, assignment[p]) for p in ps)):
                    out.append(AdminReassignPartitions(tuple(zip(ps, targets))))
    if left[_TOPIC_DELETIONS]:
        out.extend(AdminDeleteTopic(t) for t in range(cfg.topics)
                   if topic_exists[t] and not delete_topics >> t & 1)
    if left[_TOPIC_CREATIONS]:
        out.extend(AdminCreateTopic(t, replicas) for t in range(cfg.topics)
                   if not topic_exists[t] and not delete_topics >> t & 1 for replicas in topic_placements(cfg, t))
    if left[_CONTROLLER_MOVES] and has_controller:
        out.append(AdminMoveController())
    return tuple(out)


def _admissible(state: Cluster) -> int:
    """KIP-841 (`isr_admission = "kip-841"`): the brokers whose replicas the active controller
    admits to an ISR, live and not shutting down (0 when no controller is active: the
    AlterPartition request waits). Kafka 2.6 has no such check: its leader writes the ISR itself
    (kafka@2.6.x:core/src/main/scala/kafka/cluster/Partition.scala maybeExpandIsr)."""
    c = state.zk.controller
    if c == NONE or not state.brokers[c].active:
        return 0
    ctx = state.brokers[c].ctx
    return ctx.live & ~ctx.shutting_down


def step(cfg: ModelConfig, state: Cluster, action, world: World | None = None) -> Cluster | None:
    """The state after `action`, or None if it would overflow an event queue."""
    w = world if world is not None else World(cfg, flags_for(cfg.variant), state)
    try:
        _apply(w, action)
    except (Overflow, NoEffect):
        return None
    return _freeze(w, state)


def _freeze(w: World, state: Cluster) -> Cluster:
    """`w.freeze()`, keeping `state`'s own tuples of brokers, requests and budgets where the step
    left them alike: the fingerprint and renaming caches then find them by identity."""
    brokers, net, spent = tuple(w.brokers), tuple(w.net), tuple(w.spent)
    # Tuple equality compares items by identity first: cheap when they are the same records.
    if brokers == state.brokers:
        brokers = state.brokers
    if net == state.net:
        net = state.net
    if spent == state.spent:
        spent = state.spent
    return Cluster(w.zk, brokers, net, spent, w.ghost, w.scenario)


def _spend(w: World, b: Budget) -> None:
    w.spent[b] += 1


def _process_head_event(w: World, b: int) -> None:
    """Broker `b`'s controller event thread takes the head of its queue and processes it whole."""
    broker = w.brokers[b]
    event = broker.queue[0]
    w.brokers[b] = broker._replace(queue=broker.queue[1:])
    Controller(w, b).process(event)


def _apply(w: World, action) -> None:  # noqa: C901 - one arm per action, as a TLA+ Next
    kind = type(action)
    if kind is ControllerProcessEvent:
        _process_head_event(w, action.broker)
    elif kind is ZkLoseReply or kind is ZkConnectionLoss:
        _spend(w, Budget.LOST_ACKS if kind is ZkLoseReply else Budget.CONNECTION_LOSSES)
        b = action.broker
        w.lose_reply = b
        _process_head_event(w, b)
        if w.lose_reply == b:
            raise NoEffect(action)   # the event wrote no partition state: no reply to lose
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
    elif kind is AdminReassignPartitions:
        _spend(w, Budget.REASSIGNMENTS)
        named = dict(action.targets)
        w.zk = w.zk._replace(reassign=tuple(named.get(p, ()) for p in range(w.np)))
        w.fire(Watch.REASSIGN, Event(EventKind.ZkPartitionReassignment))
    elif kind is AdminDeleteTopic:
        _spend(w, Budget.TOPIC_DELETIONS)
        w.zk = w.zk._replace(delete_topics=w.zk.delete_topics | 1 << action.topic)
        w.fire(Watch.DELETE_TOPICS, Event(EventKind.TopicDeletion))
    elif kind is AdminCreateTopic:
        _spend(w, Budget.TOPIC_CREATIONS)
        zk = w.zk
        assignment = list(zk.assignment)
        for i, p in enumerate(w.partitions_of_topic(action.topic)):
            assignment[p] = action.replicas[i] if action.replicas else default_assignment(w.cfg, p)
        w.zk = zk._replace(assignment=tuple(assignment))
        w.fire(Watch.TOPICS, Event(EventKind.TopicChange))
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
