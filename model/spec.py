"""The transition relation of the whole cluster: `init_states`, `enabled_actions`, `step`.

`init_states(config)`: every topic exists in ZooKeeper with Kafka's default spread of replicas
(partition p on brokers p, p+1, ... modulo the broker count) and no partition state znode yet;
`/controller_epoch` is 0; every broker has just started (registered, Startup queued). Their
controller modules race for `/controller`, and the first controller creates the partition states
(NewPartition -> OnlinePartition).

`enabled_actions(config, state)` lists the actions whose guards hold, in a fixed order (brokers,
then the network, then partition leaders, then log-directory failures, then admins), so that
traces replay.
`step(config, state, action)` applies one action; it returns None when the step would overflow a
bounded event queue (the step is then not taken, like a TLC state constraint).

Each action kind (model/actions.py `KINDS`) has its guard and its effect here, in tables keyed
by its class and checked against the kinds at import: a broker's own actions are guarded on the
few values of a `BrokerView`, the admin operations on ZooKeeper's admin state (`_AdminView`), the
ISR changes of partition leaders and the deliveries in `enabled_actions` itself; `_EFFECTS` has
one effect per kind, as a TLA+ Next has one disjunct per action, and `_apply` spends the kind's
budget. What the guards derive from the config alone or from a few small values is remembered in
a `Tables`, one per config, which the model owns (`KafkaModel.tables`) and the plain functions
build when not given one.

`kcm.model.checking.kafka_model.KafkaModel` wraps the three functions as a checkable model
(`kcm.checker.engine.contract.Model`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from kcm.model import broker as broker_side
from kcm.model.actions import (
    ADMIN_BUDGETS,
    ADMIN_GROUP_BUDGETS,
    BUDGET_FIELDS,
    BY_BUDGET,
    FAULT_BUDGETS,
    KIND_OF,
    KINDS,
    AdminAddPartitions,
    AdminCreateTopic,
    AdminDeleteTopic,
    AdminElectLeaders,
    AdminEnableUncleanElection,
    AdminMoveController,
    AdminPreferredElection,
    AdminReassign,
    AdminReassignPartitions,
    BrokerCrash,
    BrokerFailLogDir,
    BrokerNoticeExpiry,
    BrokerRequestControlledShutdown,
    BrokerShutdown,
    BrokerStart,
    ControllerProcessEvent,
    LeaderExpandIsr,
    LeaderShrinkIsr,
    NetworkDeliver,
    Role,
    SchedulerAutoRebalance,
    ZkConnectionLoss,
    ZkLoseReply,
    ZkSessionExpire,
    budget_of,
    kinds_of,
)
from kcm.model.catalogue.settledness import quiescent
from kcm.model.cluster import (
    NO_ZNODE,
    NONE,
    Broker,
    Budget,
    Cluster,
    ElectionType,
    Event,
    EventKind,
    Shutdown,
    Watch,
    Zk,
    empty_context,
    mask_of,
)
from kcm.model.config import ModelConfig
from kcm.model.controller import Controller
from kcm.model.placement import placements
from kcm.model.variants import flags_for
from kcm.model.world import NoEffect, Overflow, World


def default_assignment(cfg: ModelConfig, p: int) -> tuple[int, ...]:
    """Replicas of flat partition `p`: spread round the brokers (AdminUtils' even spread, no rack, no offset)."""
    return tuple((p + i) % cfg.brokers for i in range(cfg.replication_factor))


def topic_placements(cfg: ModelConfig, t: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Every placement Kafka's creation can give topic `t` (model/placement.py), the spread of
    `default_assignment` first. A topic is created with `created_count` of its partitions: the
    others have no replicas (`()`) until partitions are added."""
    created = cfg.created_count
    first = tuple(default_assignment(cfg, p) for p in range(t * cfg.partitions, t * cfg.partitions + created))
    found = placements(cfg.brokers, created, cfg.replication_factor, first)
    if created == cfg.partitions:
        return found
    return tuple(placement + ((),) * (cfg.partitions - created) for placement in found)


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


#: The kinds that heal (model/actions.py `Role`): enabled without any budget, they take the
#: cluster back to quiescence.
_HEALING = frozenset(k.cls for k in KINDS if k.role is Role.HEALING)


def heals(state: Cluster, action) -> bool:
    """Whether `action` is a healing step in `state`: a healing kind, or a step of a bounded kind
    that spends nothing here (`_SPENDS_WHEN`): a session expiry of a dead broker, and the retry
    of a refused controlled shutdown, which the broker's own loop makes
    (kafka@2.6.x:core/src/main/scala/kafka/server/KafkaServer.scala controlledShutdown). The set
    `settle` takes, and the one the liveness checker assumes weakly fair."""
    kind = type(action)
    if kind in _HEALING:
        return True
    spends = _SPENDS_WHEN.get(kind)
    return spends is not None and not spends(state, action)


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
    path: list = []
    tables = Tables(cfg)
    for _ in range(limit):
        if quiescent(state):
            return path, state
        action = next((a for a in enabled_actions(cfg, state, tables) if heals(state, a)), None)
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
                  controller_epoch=0, metadata_epoch=0, metadata_controller=NONE,
                  replicas=(broker_side.NO_REPLICA,) * np_, shutdown=Shutdown.NONE, shutdown_tries=0)
    return Cluster(zk, (down,) * nb, ((),) * (nb * nb), (0,) * len(Budget), 0)


#: The budget each kind of an overlapping run spends (`ModelConfig.overlapping`).
_OVERLAP_BUDGET = {kind.overlap: b for b, kind in BY_BUDGET.items()}


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


class BrokerView(NamedTuple):
    """What the guards of a broker's own actions read of the state (besides the budgets left):
    the few values that decide which of them are enabled, so that `Tables` remembers the answer."""

    up: bool
    session: bool
    connected: bool
    queued: bool
    shutdown: Shutdown
    #: `shutdown_tries <= controlled_shutdown_max_retries`: a refused controlled shutdown may retry.
    retries_left: bool
    #: A broker is named in `/controller`.
    controller: bool
    active: bool


#: The guards of a broker's own actions, in `enabled_actions`' order, each on the broker's
#: `BrokerView` and the budgets left (`Left.left`, per `Budget`). A dead broker has exactly one:
#: a restart, or the expiry of the session it left behind (a session always expires eventually).
_BROKER_GUARDS: tuple[tuple[type, Callable[[BrokerView, tuple[bool, ...]], bool]], ...] = (
    (BrokerStart, lambda v, left: not v.up and not v.session),
    (BrokerCrash, lambda v, left: v.up and left[Budget.BROKER_CRASHES]),
    (ZkSessionExpire, lambda v, left: v.session and (not v.up or left[Budget.SESSION_EXPIRIES])),
    (BrokerNoticeExpiry, lambda v, left: v.up and v.connected and not v.session),
    (ControllerProcessEvent, lambda v, left: v.up and v.queued),
    (ZkLoseReply, lambda v, left: v.up and v.queued and v.session and v.connected and left[Budget.LOST_ACKS]),
    (ZkConnectionLoss,
     lambda v, left: v.up and v.queued and v.session and v.connected and left[Budget.CONNECTION_LOSSES]),
    (BrokerRequestControlledShutdown,
     lambda v, left: v.up and v.connected and v.session and v.controller and (
         (v.shutdown is Shutdown.NONE and left[Budget.CONTROLLED_SHUTDOWNS])
         or (v.shutdown is Shutdown.RETRY and v.retries_left))),
    (BrokerShutdown,
     lambda v, left: v.up and v.connected and v.session and (
         v.shutdown is Shutdown.DONE or (v.shutdown is Shutdown.RETRY and not v.retries_left))),
    (SchedulerAutoRebalance, lambda v, left: v.up and v.active and left[Budget.AUTO_REBALANCES]),
)

#: The kinds `_leader_actions` lists (the guards need the world: who leads, who has caught up).
_LEADER_KINDS = (LeaderShrinkIsr, LeaderExpandIsr)
#: The kinds `_log_dir_failures` lists.
_LOG_DIR_KINDS = (BrokerFailLogDir,)


class Left:
    """The budgets left in one situation (budgets spent, run, quiescence), with what
    `enabled_actions` derives from them: whether any admin operation may be spent, whether an ISR
    shrink may, and the enabled actions of each broker per `BrokerView`."""

    __slots__ = ("left", "admin", "shrink", "brokers")

    def __init__(self, left: tuple[bool, ...]) -> None:
        #: per `Budget`, whether one more may be spent
        self.left = left
        self.admin = any(left[b] for b in ADMIN_GROUP_BUDGETS)
        self.shrink = left[Budget.LEADER_ISR_SHRINKS]
        #: (broker, *BrokerView) -> the broker's enabled actions
        self.brokers: dict[tuple, tuple] = {}


#: The config field of each `Budget`, in its order; whether each is a fault's.
_BUDGET_FIELD_NAMES = tuple(BUDGET_FIELDS[b] for b in Budget)
_IS_FAULT = tuple(b in FAULT_BUDGETS for b in Budget)


class Tables:
    """What `enabled_actions` derives from the config alone or from a few small values, computed
    once per config and owned by whoever explores it (`KafkaModel`): the limit of each budget, the
    budgets left per (spent, run, quiescence), each broker's enabled actions per `BrokerView`, the
    admin actions per ZooKeeper's admin state, and the action records themselves (immutable, so
    shared between states)."""

    __slots__ = ("cfg", "limits", "lefts", "overlap_limits", "admin", "broker", "deliver")

    def __init__(self, cfg: ModelConfig) -> None:
        self.cfg = cfg
        #: the config's limit per `Budget`
        self.limits = tuple([getattr(cfg, name) for name in _BUDGET_FIELD_NAMES])
        self.lefts: dict[tuple, Left] = {}
        self.overlap_limits: dict[tuple[int, int], tuple[int, ...]] = {}
        self.admin: dict[tuple, tuple] = {}
        #: per broker, its own action of each kind (made when first enabled)
        self.broker: tuple[dict[type, Any], ...] = tuple({} for _ in range(cfg.brokers))
        #: per index of `Cluster.net`: the delivery of that queue's head (made when first enabled)
        self.deliver: list[NetworkDeliver | None] = [None] * (cfg.brokers * cfg.brokers)

    def left_of(self, spent: tuple[int, ...], scenario: int, quiet: bool) -> Left:
        """The budgets left with `spent` in run `scenario` (`quiet`: the state is quiescent,
        which only an overlapping run asks)."""
        key = (spent, scenario, quiet)
        entry = self.lefts.get(key)
        if entry is None:
            entry = self.lefts[key] = Left(self._left(spent, scenario, quiet))
        return entry

    def _left(self, spent: tuple[int, ...], scenario: int, quiet: bool) -> tuple[bool, ...]:
        cfg = self.cfg
        if scenario == 0:
            limits = self.limits
            faults_ok = cfg.max_faults < 0 or sum(spent[b] for b in FAULT_BUDGETS) < cfg.max_faults
            admin_ok = cfg.max_admin_ops < 0 or sum(spent[b] for b in ADMIN_BUDGETS) < cfg.max_admin_ops
            if 0 <= cfg.max_perturbations <= sum(spent):
                faults_ok = admin_ok = False
        else:
            # An overlapping run: its kinds once each, in the order listed; the first from the
            # settled start, each next one before the cluster has settled again.
            limits = self._overlap_limits(scenario, sum(spent))
            faults_ok = admin_ok = not any(spent) or not quiet
        return tuple([n < limit and (faults_ok if fault else admin_ok)
                      for n, limit, fault in zip(spent, limits, _IS_FAULT, strict=True)])

    def _overlap_limits(self, scenario: int, done: int) -> tuple[int, ...]:
        """The budget of overlapping run `scenario` (1-based) after `done` of its perturbations:
        the kinds already done, at one each, and the next kind in the run's order."""
        out = self.overlap_limits.get((scenario, done))
        if out is None:
            limits = [0] * len(Budget)
            for kind in self.cfg.overlapping[scenario - 1][:done + 1]:
                limits[_OVERLAP_BUDGET[kind]] = 1
            out = self.overlap_limits[(scenario, done)] = tuple(limits)
        return out

    def broker_actions(self, left: Left, key: tuple) -> tuple:
        """Broker `key[0]`'s enabled actions, `key[1:]` its `BrokerView` (remembered in `left`)."""
        b, view = key[0], BrokerView(*key[1:])
        mine = self.broker[b]
        out = left.brokers[key] = tuple(mine.get(kind) or mine.setdefault(kind, kind(b))
                                        for kind, guard in _BROKER_GUARDS if guard(view, left.left))
        return out


def enabled_actions(cfg: ModelConfig, state: Cluster, tables: Tables | None = None) -> list:
    """Every action whose guard holds, in a fixed order: each broker's own actions, the
    deliveries, the partition leaders' ISR changes, the log-directory failures, the admin
    operations. (`KafkaModel.successors` also drops the ones whose step would overflow a queue.)
    `tables`: the config's `Tables`, made here when not given."""
    if tables is None:
        tables = Tables(cfg)
    spent = state.spent
    zk = state.zk
    scenario = state.scenario
    quiet = scenario != 0 and any(spent) and quiescent(state)
    left = tables.left_of(spent, scenario, quiet)

    out: list = []
    brokers = state.brokers
    memo = left.brokers
    session = zk.session
    has_controller = zk.controller != NONE
    retries = cfg.controlled_shutdown_max_retries
    for b, broker in enumerate(brokers):
        key = (b, broker.up, session >> b & 1 == 1, broker.connected, broker.queue != (), broker.shutdown,
               broker.shutdown_tries <= retries, has_controller, broker.active)
        acts = memo.get(key)
        if acts is None:
            acts = tables.broker_actions(left, key)
        out += acts
    nb = cfg.brokers
    deliver = tables.deliver
    for i, queue in enumerate(state.net):  # src-major: index src * nb + dst
        if queue and brokers[i % nb].up:
            action = deliver[i]
            if action is None:
                action = deliver[i] = NetworkDeliver(i // nb, i % nb)
            out.append(action)
    _leader_actions(cfg, state, left.shrink, out)
    if left.left[Budget.LOG_DIR_FAILURES]:
        _log_dir_failures(state, out)
    if left.admin:
        # The admin actions depend on the budgets and on ZooKeeper's admin state only.
        admin_key: tuple = (left.left, zk.assignment, not zk.preferred, not any(zk.reassign), zk.delete_topics,
                            has_controller)
        if left.left[Budget.UNCLEAN_ELECTION_ENABLES] or left.left[Budget.PARTITION_ADDITIONS]:
            # `_AdminView`'s optional fields, in order; each is read only while its budget is left.
            admin_key += (zk.unclean_topics if left.left[Budget.UNCLEAN_ELECTION_ENABLES] else 0,)
            if left.left[Budget.PARTITION_ADDITIONS]:
                admin_key += (mask_of(p for p, a in enumerate(zk.adding) if a or zk.removing[p]),
                              mask_of(b for b, e in enumerate(zk.broker_epochs) if e))
        admin = tables.admin.get(admin_key)
        if admin is None:
            if len(tables.admin) > 1 << 14:
                tables.admin.clear()
            admin = tables.admin[admin_key] = _admin_actions(cfg, _AdminView(*admin_key))
        out.extend(admin)
    return out


def _leader_actions(cfg: ModelConfig, state: Cluster, shrink: bool, out: list) -> None:
    """Append the partition leaders' ISR changes (`_LEADER_KINDS`): a leader acting at the
    partition's current zkVersion may shrink its ISR by any other member (`shrink`: a budget is
    left), and expand it by a caught-up follower (with KIP-841, one the controller admits)."""
    zk = state.zk
    brokers = state.brokers
    nb = cfg.brokers
    w = None
    kip841 = None
    for p in range(cfg.topics * cfg.partitions):
        for b in range(nb):
            replica = brokers[b].replicas[p]
            if replica.leader != b or replica.stopped:
                continue
            if w is None:
                w = World(cfg, flags_for(cfg.variant), state)
                kip841 = None if cfg.isr_admission == "2.6" else _admissible(state)
            if not broker_side.can_lead(w, b, p) or zk.partitions[p].version != replica.zk_version:
                continue
            if shrink:
                for f in replica.isr:
                    if f != b:
                        out.append(LeaderShrinkIsr(b, p, f))
            for f in replica.replicas:
                if (f not in replica.isr and broker_side.is_caught_up_follower(w, b, p, f)
                        and (kip841 is None or kip841 >> f & 1)):
                    out.append(LeaderExpandIsr(b, p, f))


def _log_dir_failures(state: Cluster, out: list) -> None:
    """Append the log-directory failures (`BrokerFailLogDir`): a running broker with a live,
    connected session (it writes the notification znode) loses the directory of a replica it hosts
    whose directory has not failed yet."""
    session = state.zk.session
    for b, broker in enumerate(state.brokers):
        if not (broker.up and broker.connected and session >> b & 1):
            continue
        for p, replica in enumerate(broker.replicas):
            if replica != broker_side.NO_REPLICA and not broker.offline_dirs >> p & 1:
                out.append(BrokerFailLogDir(b, p))


class _AdminView(NamedTuple):
    """What the admin operations' guards read: the budgets left and ZooKeeper's admin state."""

    left: tuple[bool, ...]
    assignment: tuple
    no_preferred: bool
    no_reassign: bool
    delete_topics: int
    has_controller: bool
    #: `unclean_topics`, read only when an unclean election switch may be spent.
    unclean_topics: int = 0
    #: The partitions being reassigned (`adding` or `removing` in `/brokers/topics`) and the
    #: registered brokers (`/brokers/ids`), read only when a partition addition may be spent.
    reassigning: int = 0
    registered: int = 0


def _preferred_elections(cfg: ModelConfig, v: _AdminView) -> Iterable:
    """No election pending: any partition of an existing topic."""
    if v.no_preferred:
        yield from (AdminPreferredElection(p) for p in _existing(cfg, v))


def _reassignments(cfg: ModelConfig, v: _AdminView) -> Iterable:
    """No reassignment pending: any partition of an existing topic, to any target."""
    if v.no_reassign:
        for p in _existing(cfg, v):
            for target in reassignment_targets(cfg, v.assignment[p]):
                yield AdminReassign(p, target)


def _multi_reassignments(cfg: ModelConfig, v: _AdminView) -> Iterable:
    """No reassignment pending: one znode naming 2 .. `reassign_partitions_at_once` partitions."""
    if v.no_reassign:
        existing = _existing(cfg, v)
        for k in range(2, min(cfg.reassign_partitions_at_once, len(existing)) + 1):
            for ps in itertools.combinations(existing, k):
                for targets in itertools.product(*(reassignment_targets(cfg, v.assignment[p]) for p in ps)):
                    yield AdminReassignPartitions(tuple(zip(ps, targets, strict=True)))


def _topic_deletions(cfg: ModelConfig, v: _AdminView) -> Iterable:
    """Any existing topic not already queued for deletion."""
    return (AdminDeleteTopic(t) for t in range(cfg.topics)
            if _topic_exists(cfg, v, t) and not v.delete_topics >> t & 1)


def _topic_creations(cfg: ModelConfig, v: _AdminView) -> Iterable:
    """Any topic that does not exist (and is not being deleted), on any placement."""
    return (AdminCreateTopic(t, replicas) for t in range(cfg.topics)
            if not _topic_exists(cfg, v, t) and not v.delete_topics >> t & 1
            for replicas in topic_placements(cfg, t))


def _partition_additions(cfg: ModelConfig, v: _AdminView) -> Iterable:
    """An existing topic with room for more partitions and none of them being reassigned
    (`ReassignmentInProgressException`): one or more new partitions, each on `replication_factor`
    distinct registered brokers (the brokers `createPartitions` knows, `getBrokerMetadatas`; the
    operator may give any such assignment, `validateReplicaAssignment`). kafka@2.6.x:core/src/main/
    scala/kafka/server/AdminManager.scala `createPartitions`, lines 265-304."""
    brokers = [b for b in range(cfg.brokers) if v.registered >> b & 1]
    lists = list(itertools.permutations(brokers, cfg.replication_factor))
    for t in range(cfg.topics):
        ps = range(t * cfg.partitions, (t + 1) * cfg.partitions)
        if not _topic_exists(cfg, v, t) or any(v.reassigning >> p & 1 for p in ps):
            continue
        room = sum(1 for p in ps if not v.assignment[p])
        for k in range(1, room + 1):
            for replicas in itertools.product(lists, repeat=k):
                yield AdminAddPartitions(t, replicas)


def _controller_moves(cfg: ModelConfig, v: _AdminView) -> Iterable:
    """A broker is named in `/controller`."""
    if v.has_controller:
        yield AdminMoveController()


def _elect_leaders(cfg: ModelConfig, v: _AdminView) -> Iterable:
    """A broker is named in `/controller` (the AdminClient waits for metadata naming a controller):
    a preferred or an unclean election of any partition of an existing topic."""
    if v.has_controller:
        for p in _existing(cfg, v):
            yield AdminElectLeaders(p, False)
            yield AdminElectLeaders(p, True)


def _unclean_election_enables(cfg: ModelConfig, v: _AdminView) -> Iterable:
    """Any existing topic whose config does not already switch unclean election on."""
    return (AdminEnableUncleanElection(t) for t in range(cfg.topics)
            if _topic_exists(cfg, v, t) and not v.unclean_topics >> t & 1)


def _topic_exists(cfg: ModelConfig, v: _AdminView, t: int) -> bool:
    return bool(v.assignment[t * cfg.partitions])


def _existing(cfg: ModelConfig, v: _AdminView) -> list[int]:
    """The partitions of the topics that exist."""
    return [p for p in range(cfg.topics * cfg.partitions) if _topic_exists(cfg, v, p // cfg.partitions)]


#: The admin operations' guards, in `enabled_actions`' order: each lists its enabled actions when
#: its budget is left.
_ADMIN_GUARDS: tuple[tuple[type, Callable[[ModelConfig, _AdminView], Iterable]], ...] = (
    (AdminPreferredElection, _preferred_elections),
    (AdminReassign, _reassignments),
    (AdminReassignPartitions, _multi_reassignments),
    (AdminDeleteTopic, _topic_deletions),
    (AdminCreateTopic, _topic_creations),
    (AdminAddPartitions, _partition_additions),
    (AdminMoveController, _controller_moves),
    (AdminElectLeaders, _elect_leaders),
    (AdminEnableUncleanElection, _unclean_election_enables),
)


def _admin_actions(cfg: ModelConfig, v: _AdminView) -> tuple:
    """The enabled admin operations, in `enabled_actions`' order."""
    return tuple(a for kind, guard in _ADMIN_GUARDS if v.left[budget_of(kind)] for a in guard(cfg, v))


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


def _process_head_event(w: World, b: int) -> None:
    """Broker `b`'s controller event thread takes the head of its queue and processes it whole."""
    broker = w.brokers[b]
    event = broker.queue[0]
    w.brokers[b] = broker._replace(queue=broker.queue[1:])
    Controller(w, b).process(event)


def _lose_reply(w: World, action: ZkLoseReply | ZkConnectionLoss) -> None:
    """The head event processed, the reply to its first partition-state write lost."""
    b = action.broker
    w.lose_reply = b
    _process_head_event(w, b)
    if w.lose_reply == b:
        raise NoEffect(action)   # the event wrote no partition state: no reply to lose


def _shrink_isr(w: World, a: LeaderShrinkIsr) -> None:
    isr = w.brokers[a.broker].replicas[a.partition].isr
    broker_side.leader_writes_isr(w, a.broker, a.partition, tuple(r for r in isr if r != a.follower))


def _expand_isr(w: World, a: LeaderExpandIsr) -> None:
    isr = w.brokers[a.broker].replicas[a.partition].isr
    broker_side.leader_writes_isr(w, a.broker, a.partition, isr + (a.follower,))


def _request_controlled_shutdown(w: World, a: BrokerRequestControlledShutdown) -> None:
    b = a.broker
    broker = w.brokers[b]
    w.brokers[b] = broker._replace(shutdown=Shutdown.AWAITING, shutdown_tries=broker.shutdown_tries + 1)
    # The request reaches the broker named in /controller and becomes an event there.
    controller = w.zk.controller
    if w.brokers[controller].up:
        w.enqueue(controller, Event(EventKind.ControlledShutdown, b, broker.epoch))
    else:
        w.brokers[b] = w.brokers[b]._replace(shutdown=Shutdown.RETRY)


def _shutdown(w: World, a: BrokerShutdown) -> None:
    broker_side.stop(w, a.broker)
    # A clean shutdown closes the session: the ephemeral znodes go at once.
    w.zk = w.zk._replace(session=w.zk.session & ~(1 << a.broker))
    w.delete_ephemerals(a.broker)


def _preferred_election(w: World, a: AdminPreferredElection) -> None:
    w.zk = w.zk._replace(preferred=1 << a.partition)
    w.fire(Watch.PREFERRED, Event(EventKind.ReplicaLeaderElection))


def _reassign(w: World, a: AdminReassign) -> None:
    w.zk = w.zk._replace(reassign=tuple(a.target if p == a.partition else () for p in range(w.np)))
    w.fire(Watch.REASSIGN, Event(EventKind.ZkPartitionReassignment))


def _reassign_partitions(w: World, a: AdminReassignPartitions) -> None:
    named = dict(a.targets)
    w.zk = w.zk._replace(reassign=tuple(named.get(p, ()) for p in range(w.np)))
    w.fire(Watch.REASSIGN, Event(EventKind.ZkPartitionReassignment))


def _delete_topic(w: World, a: AdminDeleteTopic) -> None:
    w.zk = w.zk._replace(delete_topics=w.zk.delete_topics | 1 << a.topic)
    w.fire(Watch.DELETE_TOPICS, Event(EventKind.TopicDeletion))


def _create_topic(w: World, a: AdminCreateTopic) -> None:
    zk = w.zk
    assignment = list(zk.assignment)
    for i, p in enumerate(w.partitions_of_topic(a.topic)):
        assignment[p] = a.replicas[i] if a.replicas else (
            default_assignment(w.cfg, p) if i < w.cfg.created_count else ())
    w.zk = zk._replace(assignment=tuple(assignment))
    w.fire(Watch.TOPICS, Event(EventKind.TopicChange))


def _add_partitions(w: World, a: AdminAddPartitions) -> None:
    """`AdminZkClient.addPartitions`: `/brokers/topics/<t>` rewritten with the new partitions after
    the last assigned one (`writeTopicPartitionAssignment(..., isUpdate = true)`); the data change
    fires the controller's `PartitionModificationsHandler`."""
    zk = w.zk
    assignment = list(zk.assignment)
    new = [p for p in w.partitions_of_topic(a.topic) if not assignment[p]][:len(a.replicas)]
    for p, replicas in zip(new, a.replicas, strict=True):
        assignment[p] = replicas
    w.zk = zk._replace(assignment=tuple(assignment))
    w.fire_topic(a.topic)


def _move_controller(w: World, a: AdminMoveController) -> None:
    w.zk = w.zk._replace(controller=NONE)
    w.fire_controller_change(deleted=True)


def _elect_leaders_request(w: World, a: AdminElectLeaders) -> None:
    """The ElectLeaders request reaches the broker named in `/controller`, whose
    `controller.electLeaders` queues the event; a broker that is down never receives it."""
    controller = w.zk.controller
    if controller != NONE and w.brokers[controller].up:
        election_type = ElectionType.UNCLEAN if a.unclean else ElectionType.PREFERRED
        w.enqueue(controller, Event(EventKind.ReplicaLeaderElection, a.partition, int(election_type)))


def _enable_unclean_election(w: World, a: AdminEnableUncleanElection) -> None:
    """`/config/topics/<t>` rewritten; every running broker with a session hears the change
    notification, and one whose controller module is active queues the event
    (`enableTopicUncleanLeaderElection`: `if (isActive)`)."""
    w.zk = w.zk._replace(unclean_topics=w.zk.unclean_topics | 1 << a.topic)
    for b, broker in enumerate(w.brokers):
        if broker.up and broker.active and w.zk.session >> b & 1:
            w.enqueue(b, Event(EventKind.TopicUncleanLeaderElectionEnable, a.topic))


#: The effect of each kind, as a TLA+ Next has one disjunct per action; its budget is spent by
#: `_apply` (model/actions.py `KINDS`).
_EFFECTS: dict[type, Callable[[World, Any], None]] = {
    ControllerProcessEvent: lambda w, a: _process_head_event(w, a.broker),
    ZkLoseReply: _lose_reply,
    ZkConnectionLoss: _lose_reply,
    NetworkDeliver: lambda w, a: broker_side.deliver(w, a.src, a.dst),
    BrokerStart: lambda w, a: broker_side.start(w, a.broker),
    BrokerCrash: lambda w, a: broker_side.stop(w, a.broker),
    ZkSessionExpire: lambda w, a: broker_side.expire_session(w, a.broker),
    BrokerNoticeExpiry: lambda w, a: broker_side.notice_expiry(w, a.broker),
    LeaderShrinkIsr: _shrink_isr,
    LeaderExpandIsr: _expand_isr,
    BrokerFailLogDir: lambda w, a: broker_side.fail_log_dir(w, a.broker, a.partition),
    BrokerRequestControlledShutdown: _request_controlled_shutdown,
    BrokerShutdown: _shutdown,
    AdminPreferredElection: _preferred_election,
    AdminReassign: _reassign,
    AdminReassignPartitions: _reassign_partitions,
    AdminDeleteTopic: _delete_topic,
    AdminCreateTopic: _create_topic,
    AdminAddPartitions: _add_partitions,
    AdminMoveController: _move_controller,
    AdminElectLeaders: _elect_leaders_request,
    AdminEnableUncleanElection: _enable_unclean_election,
    SchedulerAutoRebalance: lambda w, a: w.enqueue(a.broker, Event(EventKind.AutoPreferredReplicaLeaderElection)),
}
#: The kinds that spend their budget in some states only: a dead broker's session expiring heals,
#: and a refused controlled shutdown retries for free.
_SPENDS_WHEN: dict[type, Callable[[World | Cluster, Any], bool]] = {
    ZkSessionExpire: lambda w, a: w.brokers[a.broker].up,
    BrokerRequestControlledShutdown: lambda w, a: w.brokers[a.broker].shutdown is Shutdown.NONE,
}
#: Per kind: (the budget it spends or None, when it spends it or None for always, its effect).
_STEPS = {kind: (None if KIND_OF[kind].role is Role.HEALING else int(budget_of(kind)), _SPENDS_WHEN.get(kind), effect)
          for kind, effect in _EFFECTS.items()}


def _apply(w: World, action) -> None:
    entry = _STEPS.get(type(action))
    if entry is None:
        raise TypeError(f"not an action: {action!r}")
    budget, when, effect = entry
    if budget is not None and (when is None or when(w, action)):
        w.spent[budget] += 1
    effect(w, action)


def _check_kinds() -> None:
    """Every kind of model/actions.py has its guard (in the family `enabled_actions` lists it
    from) and its effect here; raises AssertionError naming what is missing."""
    families: dict[str, list[type]] = {"broker": [k for k, _ in _BROKER_GUARDS], "cpe": [k for k, _ in _BROKER_GUARDS],
                "deliver": [NetworkDeliver], "leader": list(_LEADER_KINDS), "logdir": list(_LOG_DIR_KINDS),
                "admin": [k for k, _ in _ADMIN_GUARDS]}
    for group, listed in families.items():
        declared = {k.cls for k in kinds_of(group=group)}
        if not declared <= set(listed):
            raise AssertionError(f"no guard for {sorted(c.__name__ for c in declared - set(listed))}")
    for what, table in (("guards", {k for listed in families.values() for k in listed}), ("effects", set(_EFFECTS))):
        if table != set(KIND_OF):
            raise AssertionError(f"the {what} of model/spec.py and the kinds of model/actions.py differ: "
                                 f"{sorted(c.__name__ for c in table ^ set(KIND_OF))}")
    for kind, _ in _BROKER_GUARDS:
        if KIND_OF[kind].group not in ("broker", "cpe"):
            raise AssertionError(f"{kind.__name__} is guarded as a broker's own action, but its group is not")


_check_kinds()
