"""The actions' footprints, for partial-order reduction (`kcm.checker.engine.por`): which named parts of
the `Cluster` each group of actions may read and write, in any state.

Components: `("zk",)` (all of ZooKeeper), per broker `b` its life `("life", b)` (`up`,
`connected`, `epoch`), its controller module `("ctl", b)` (`active`, `ctx`, `shutdown`,
`shutdown_tries`), its event queue `("q", b)`, its replica manager's replicas and failed log
directories `("rm", b)` and its
epochs of the last controller and metadata seen `("meta", b)` (`controller_epoch`,
`metadata_epoch`, `metadata_controller`); per channel `("net", c, d)`; `("spent",)` and
`("ghost",)`. (`scenario` is never written.) Three more names serve the enabling sets only and
are listed in the writes of the groups that change them: `("zk", "session")` and
`("zk", "controller")` (parts of `("zk",)`), and `("send", c)`, controller `c` appending to its
channels (nothing reads it; a delivery not yet queued needs it).

Groups, derived from the code of each action (model/spec.py, its guards and `_EFFECTS`;
model/broker.py; model/world.py; the controller modules), each an over-approximation. The family
of each kind (`cpe`, `broker`, `deliver`, `leader`, `logdir`, `admin`) is declared with the kind
(model/actions.py `KINDS`):

- `("cpe", b)`: `ControllerProcessEvent`, `ZkLoseReply`, `ZkConnectionLoss` of `b`, and
  `("cpe-life", b)` the same when the event at the head is `Expire` or `RegisterBrokerAndReelect`,
  the only ones that touch `b`'s life and its ZooKeeper session (`RegisterBrokerAndReelect`
  re-registers, `Expire` reconnects and opens a new session). A controller
  event may write all of ZooKeeper (firing any watch, so enqueueing at any broker), its own module, any
  broker's module (the answer to a controlled shutdown sets the requester's `shutdown`; V2 sets
  other controllers' epoch), its own channels, the budgets (a lost reply) and the ghost bit. It
  reads those and every broker's life (a watch reaches a live, connected broker only). It never
  reads a replica manager (no `.replicas` in the controller modules).
- `("deliver", c, d)`: `NetworkDeliver(c, d)` pops channel c->d, applies the request to `d`'s
  replica manager after reading `d`'s epoch, and may answer a StopReplica with deletions by
  enqueueing at `c` after reading `c`'s context (model/broker.py `deliver`).
  `("deliver-plain", c, d)`: the same action when the request at the head of the channel carries
  no deletion: it neither reads `c`'s context nor enqueues anything (a LeaderAndIsr to a broker
  with a failed log directory is a `deliver`: a storage error answers it with an event at `c`).
  `("deliver-meta", c, d)`: an UpdateMetadata at the head, which touches `d`'s epochs only, never
  its replicas. The group of a delivery (and of a controller event) thus depends on the state;
  this is sound because the variants are action classes whose guards read the head of the
  channel (queue) and the receiver's failed log directories, and every action that changes the
  head writes that channel (queue), and every one that fails a directory the receiver's replica
  manager, so it enables or disables them as the closure expects.
- `("leader", b, p)`: `LeaderShrinkIsr` / `LeaderExpandIsr` of leader `b` on partition `p`: a
  conditional write of the partition state (firing watches), `b`'s replica, the budgets; its guard
  reads the followers' replicas and lives, and with KIP-841 the controller's context.
- `("broker", b)`: `BrokerStart`, `BrokerCrash`, `ZkSessionExpire`, `BrokerNoticeExpiry`,
  `BrokerRequestControlledShutdown`, `BrokerShutdown`, `SchedulerAutoRebalance` of `b`: its life,
  module, queue, replicas and channels, ZooKeeper, any queue (watches, the shutdown request at the
  controller) and any module (a crash fails the pending shutdowns of requesters).
- `("logdir", b)`: `BrokerFailLogDir` of `b`: its replicas and failed directories, ZooKeeper
  (the notification znode, firing the controller's watch, so any queue), the budgets; its guard
  reads `b`'s life and session and its replicas.
- `("admin",)`: every admin action: ZooKeeper, the budgets, any queue; switching unclean election
  on also reads which controller modules are active.

Budgeted actions read the budgets; in an overlapping run (`Cluster.scenario` > 0) their guards ask
whether the cluster is quiescent, so they read everything.

Enabling sets (`enablers`): for a group with no enabled action, components one of which must
change first, read off a false conjunct of each of its actions' guards; budgets are only ever
spent, so an action whose budget is gone never comes back and needs nothing.

The tests check, on every reachable state of `tiny`, `zkfaults`, `elect` and `logdir`, the writes (`components`
below), the commutation of every two enabled actions of independent groups, and that every step
enabling a group writes one of its enabling components (tests/model/test_footprints.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from kcm.checker.engine.contract import Footprint, Independence, PropertyReads
from kcm.model.actions import (
    ADMIN_GROUP_BUDGETS,
    KINDS,
    BrokerCrash,
    BrokerNoticeExpiry,
    BrokerRequestControlledShutdown,
    BrokerShutdown,
    BrokerStart,
    SchedulerAutoRebalance,
    ZkSessionExpire,
    kinds_of,
)
from kcm.model.catalogue import LISTED
from kcm.model.catalogue.declaration import Judged, Part
from kcm.model.cluster import Broker, Budget, Cluster, EventKind, RequestKind, Shutdown
from kcm.model.config import ModelConfig
from kcm.model.spec import Tables, enabled_actions

ZK, SPENT, GHOST = ("zk",), ("spent",), ("ghost",)
#: Each kind's group family (model/actions.py `KINDS`).
_FAMILY = {k.cls: k.group for k in KINDS}


#: The controller events whose processing touches the broker's own life and ZooKeeper session
#: (model/controller.py `process_expire`, `process_register_broker_and_reelect`).
_LIFE_EVENTS = frozenset({EventKind.Expire, EventKind.RegisterBrokerAndReelect})
SESSION, CONTROLLER = ("zk", "session"), ("zk", "controller")


def _variant(head, offline_dirs: int) -> str:
    """The delivery group of the request at the head of a channel to a broker whose failed log
    directories are `offline_dirs`."""
    if head.kind is RequestKind.LeaderAndIsr and offline_dirs:
        return "deliver"  # a storage error may answer it: an event at the sender
    if head.kind is RequestKind.UpdateMetadata:
        return "deliver-meta"
    if head.kind is RequestKind.StopReplica and any(part.delete for part in head.partitions):
        return "deliver"
    return "deliver-plain"


def group_of(state: Cluster, action) -> tuple:
    """The group of an action in `state` (see the module docstring)."""
    family = _FAMILY.get(type(action))
    if family == "deliver":
        head = state.net[action.src * len(state.brokers) + action.dst][0]
        return (_variant(head, state.brokers[action.dst].offline_dirs), action.src, action.dst)
    if family == "cpe":
        head = state.brokers[action.broker].queue[0].kind
        return ("cpe-life" if head in _LIFE_EVENTS else "cpe", action.broker)
    if family == "leader":
        return ("leader", action.broker, action.partition)
    if family == "broker":
        return ("broker", action.broker)
    if family == "logdir":
        return ("logdir", action.broker)
    if family == "admin":
        return ("admin",)
    raise TypeError(f"not an action: {action!r}")


def groups(cfg: ModelConfig) -> dict[Hashable, Footprint]:
    """Every group of `cfg`'s model with its footprint."""
    nb, np_ = cfg.brokers, cfg.topics * cfg.partitions
    life = {("life", b) for b in range(nb)}
    ctl = {("ctl", b) for b in range(nb)}
    queues = {("q", b) for b in range(nb)}
    rms = {("rm", b) for b in range(nb)}
    metas = {("meta", b) for b in range(nb)}
    nets = {("net", c, d) for c in range(nb) for d in range(nb)}
    everything = frozenset({ZK, SESSION, CONTROLLER, SPENT, GHOST} | life | ctl | queues | rms | metas | nets)
    # In an overlapping run a budgeted action's guard reads `quiescent(state)`: everything.
    budget_reads = everything if cfg.overlapping else frozenset({SPENT})
    out: dict[Hashable, Footprint] = {}
    for b in range(nb):
        mine = {("net", b, d) for d in range(nb)}
        # ("send", b): a pseudo-component only the sender's controller writes (appending to its
        # channels); nothing reads it but the enabling sets of deliveries not yet queued.
        w = frozenset({ZK, CONTROLLER, SPENT, GHOST, ("send", b)} | ctl | queues | mine)
        out[("cpe", b)] = Footprint(w | life | budget_reads, w)
        w |= {("life", b), SESSION}
        out[("cpe-life", b)] = Footprint(w | life | budget_reads, w)
        w = frozenset({ZK, SESSION, CONTROLLER, ("life", b), ("rm", b), ("meta", b), SPENT} | ctl | queues | mine)
        out[("broker", b)] = Footprint(w | life | budget_reads, w)
        for c in range(nb):
            w = frozenset({("net", c, b), ("rm", b), ("meta", b), ("q", c)})
            out[("deliver", c, b)] = Footprint(w | {("life", b), ("ctl", c)}, w)
            w = frozenset({("net", c, b), ("rm", b), ("meta", b)})
            out[("deliver-plain", c, b)] = Footprint(w | {("life", b)}, w)
            w = frozenset({("net", c, b), ("meta", b)})
            out[("deliver-meta", c, b)] = Footprint(w | {("life", b)}, w)
        for p in range(np_):
            w = frozenset({ZK, ("rm", b), SPENT} | queues)
            out[("leader", b, p)] = Footprint(w | rms | life | ctl | budget_reads, w)
        w = frozenset({ZK, ("rm", b), SPENT} | queues)
        out[("logdir", b)] = Footprint(w | {("life", b), SESSION} | budget_reads, w)
    w = frozenset({ZK, CONTROLLER, SPENT} | queues)
    # Switching unclean election on queues the event at the brokers whose module is active.
    switches = cfg.max_unclean_election_enables > 0 or any("unclean_election_enable" in run for run in cfg.overlapping)
    out[("admin",)] = Footprint(w | life | (ctl if switches else set()) | budget_reads, w)
    return out


def components(state: Cluster) -> dict[tuple, object]:
    """The state as its named components (what the footprints name), for the tests."""
    out: dict[tuple, object] = {ZK: state.zk, SPENT: state.spent, GHOST: state.ghost,
                                SESSION: state.zk.session, CONTROLLER: state.zk.controller}
    n = len(state.brokers)
    for b, br in enumerate(state.brokers):
        out[("life", b)] = (br.up, br.connected, br.epoch)
        out[("ctl", b)] = (br.active, br.ctx, br.shutdown, br.shutdown_tries)
        out[("q", b)] = br.queue
        out[("meta", b)] = (br.controller_epoch, br.metadata_epoch, br.metadata_controller)
        out[("rm", b)] = (br.replicas, br.offline_dirs)
    for c in range(n):
        for d in range(n):
            out[("net", c, d)] = state.net[c * n + d]
    return out


_DELIVER = frozenset({"deliver", "deliver-plain", "deliver-meta"})
_EVENT = frozenset({"cpe", "cpe-life"})
#: The group kinds (`group_of(...)[0]`) of the families whose group depends on the state.
_GROUP_KINDS = {"cpe": _EVENT, "deliver": _DELIVER}


def _parts(cfg: ModelConfig) -> dict[Part, frozenset]:
    """Each part of the state a property may declare it reads (`Part`), as `cfg`'s components."""
    nb = cfg.brokers
    return {
        Part.ZOOKEEPER: frozenset({ZK}),
        Part.WATCHES: frozenset({ZK}),
        Part.CONTROLLER_MODULES: frozenset(("ctl", b) for b in range(nb)),
        Part.REPLICA_MANAGERS: frozenset(("rm", b) for b in range(nb)),
        Part.BROKER_LIVES: frozenset(("life", b) for b in range(nb)),
        Part.ACCEPTED_EPOCHS: frozenset(("meta", b) for b in range(nb)),
        Part.CHANNELS: frozenset(("net", c, d) for c in range(nb) for d in range(nb)),
        Part.GHOST: frozenset({GHOST}),
    }


def property_reads(cfg: ModelConfig) -> Callable[[str], PropertyReads | None]:
    """What each property reads (`PropertyReads`), expanded for `cfg` from its declaration in the
    catalogue (`Declaration.reads`, and the groups of the action kinds it `judges`). None for a
    property that declares no reads, and for the liveness properties, whose test of where they
    are judged (settled, quiescent) reads nearly everything."""
    parts = _parts(cfg)
    table: dict[str, PropertyReads] = {}
    for d in LISTED:
        if d.reads is None or d.judged in (Judged.SETTLED, Judged.QUIESCENT):
            continue
        kinds = frozenset() if d.judges is None else frozenset().union(
            *(_GROUP_KINDS.get(_FAMILY[kind], {_FAMILY[kind]}) for kind in d.judges))
        table[d.name] = PropertyReads(frozenset().union(*(parts[p] for p in d.reads)), kinds)
    return table.get


def enablers(cfg: ModelConfig, tables: Tables | None = None):
    """Necessary enabling sets (`Independence.enablers`): for a group none of whose actions is
    enabled in a state, components one of which must change before one can be. Read off the
    guards of `enabled_actions` (model/spec.py). When some action of the group passes its guard
    and is only left out because its step would overflow a queue or change nothing, None (the
    group's reads). In an overlapping run the budgeted actions' guards read the whole state.
    `tables`: the config's `kcm.model.spec.Tables` (the model's own; made here when not given)."""
    tables = tables if tables is not None else Tables(cfg)
    last: list = [None, frozenset()]

    def guard_enabled(state: Cluster) -> frozenset:
        if last[0] is not state:
            last[0], last[1] = state, frozenset(group_of(state, a) for a in enabled_actions(cfg, state, tables))
        return last[1]

    kip841 = cfg.isr_admission != "2.6"
    ctl = frozenset(("ctl", b) for b in range(cfg.brokers))

    def nes(state: Cluster, g: tuple) -> frozenset | tuple | None:
        if g in guard_enabled(state):
            return None
        kind = g[0]
        if kind.startswith("cpe"):  # a live broker with an event of this variant at the head
            b = g[1]
            return frozenset({("life", b)} if not state.brokers[b].up else {("q", b)})
        if kind.startswith("deliver"):  # a request of this kind at the head of c->d, d up
            c, d = g[1], g[2]
            if not state.brokers[d].up:
                return frozenset({("life", d)})
            # a failed directory at d turns a queued LeaderAndIsr into a `deliver`
            changes_variant = {("rm", d)} if kind == "deliver" else set()
            if any(_variant(r, state.brokers[d].offline_dirs) == kind for r in state.net[c * cfg.brokers + d]):
                return frozenset({("net", c, d)} | changes_variant)
            return frozenset({("send", c)} | changes_variant)  # none queued: the sender must send one
        if state.scenario:
            return None
        # A run from the cold start: budgets are only ever spent, so an action whose budget is
        # gone is never enabled again.
        left = tables.left_of(state.spent, 0, False).left
        if kind == "broker":
            return _broker_nes(state, g[1], left)
        if kind == "admin":  # an admin budget left, and ZooKeeper as the operation needs it
            return frozenset({ZK} if any(left[x] for x in ADMIN_GROUP_BUDGETS) else ())
        if kind == "logdir":  # a budget left, the broker up with its session, a replica to fail
            b = g[1]
            return frozenset({("life", b), SESSION, ("rm", b)} if left[Budget.LOG_DIR_FAILURES] else ())
        return _leader_nes(cfg, state, g[1], g[2], left[Budget.LEADER_ISR_SHRINKS], kip841, ctl)

    return nes


def _shutdown_nes(broker: Broker, b: int, left: tuple[bool, ...], *extra: tuple) -> set:
    """The controlled-shutdown state moves only by these two actions and the controller's answer:
    with no request made and no budget left, neither is ever enabled."""
    if broker.shutdown is Shutdown.NONE and not left[Budget.CONTROLLED_SHUTDOWNS]:
        return set()
    return {("life", b), SESSION, ("ctl", b), *extra}


#: Per kind of a broker's own group, one false conjunct of its guard in a state where the broker
#: is up and the kind is not enabled: the components one of which must change first (none when
#: its budget is gone). A dead broker always has a restart or an expiry enabled, so its group is
#: never asked; a restart needs the broker down, which only a crash or a shutdown of the same
#: group does, so it adds nothing.
_BROKER_NES: dict[type, Callable[[Broker, int, tuple[bool, ...]], set]] = {
    BrokerStart: lambda broker, b, left: set(),
    BrokerCrash: lambda broker, b, left: set(),   # needs only its budget
    ZkSessionExpire: lambda broker, b, left: {SESSION} if left[Budget.SESSION_EXPIRIES] else set(),
    BrokerNoticeExpiry: lambda broker, b, left: {("life", b) if not broker.connected else SESSION},
    BrokerRequestControlledShutdown: lambda broker, b, left: _shutdown_nes(broker, b, left, CONTROLLER),
    BrokerShutdown: lambda broker, b, left: _shutdown_nes(broker, b, left),
    SchedulerAutoRebalance: lambda broker, b, left: {("ctl", b)} if left[Budget.AUTO_REBALANCES] else set(),
}
if set(_BROKER_NES) != {k.cls for k in kinds_of(group="broker")}:
    raise AssertionError("every kind of the broker group needs its enabling conjunct in _BROKER_NES")


def _broker_nes(state: Cluster, b: int, left: tuple[bool, ...]) -> frozenset | None:
    """A live broker's own actions, none enabled: for each, one false conjunct of its guard."""
    broker = state.brokers[b]
    if not broker.up:
        return None
    return frozenset().union(*(nes(broker, b, left) for nes in _BROKER_NES.values()))


def _leader_nes(cfg: ModelConfig, state: Cluster, b: int, p: int, shrink_left: bool, kip841: bool,
                ctl: frozenset) -> frozenset | tuple:
    """Leader `b`'s ISR changes of `p`, none enabled. All need `b` to lead `p` in its replica
    manager and act as leader at the current zkVersion; then per follower `f` an expansion needs
    `f` to follow `b` (its own replica record first), and a shrink a budget and `f` in the ISR.
    When `b` does not lead, either its record must change, or (no shrink budget left) the record
    of each follower that does not follow `b` nor could expand the ISR."""
    broker = state.brokers[b]
    r = broker.replicas[p]
    if r.leader != b or r.stopped:
        own = frozenset({("rm", b)})
        if shrink_left:
            return own
        others = set()
        for f in range(cfg.brokers):  # any broker may be a replica once b's record changes
            theirs = state.brokers[f].replicas[p]
            if theirs.leader == b and not theirs.stopped:
                return own
            others.add(("rm", f))
        return own, frozenset(others)
    if not (broker.up and broker.connected):
        return frozenset({("life", b)})
    if not state.zk.session >> b & 1 or state.zk.partitions[p].version != r.zk_version:
        return frozenset({ZK, ("rm", b)})
    comps: set[tuple] = {("rm", b)}  # the ISR in b's record (a spent shrink budget never comes back)
    for f in r.replicas:
        if f in r.isr:
            continue
        theirs = state.brokers[f].replicas[p]
        if theirs.leader != b or theirs.stopped:
            comps.add(("rm", f))  # f does not follow b: its record must change
        elif not state.brokers[f].up:
            comps.add(("life", f))
        else:
            comps |= {("rm", f), ("rm", b)}  # leader epochs differ
            if kip841:
                comps |= ctl | {ZK}
    return frozenset(comps)


def independence(cfg: ModelConfig, tables: Tables | None = None) -> Independence:
    return Independence(groups(cfg), group_of, property_reads(cfg), enablers(cfg, tables))
