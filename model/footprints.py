"""The actions' footprints, for partial-order reduction (`kcm.checker.por`): which named parts of
the `Cluster` each group of actions may read and write, in any state.

Components: `("zk",)` (all of ZooKeeper), per broker `b` its life `("life", b)` (`up`,
`connected`, `epoch`), its controller module `("ctl", b)` (`active`, `ctx`, `shutdown`,
`shutdown_tries`), its event queue `("q", b)` and its replica manager `("rm", b)`
(`controller_epoch`, `metadata_*`, `replicas`); per channel `("net", c, d)`; `("spent",)` and
`("ghost",)`. (`scenario` is never written.)

Groups, derived from the code of each action (model/spec.py `_apply`, `enabled_actions`;
model/broker.py; model/world.py; the controller modules), each an over-approximation:

- `("cpe", b)`: `ControllerProcessEvent`, `ZkLoseReply`, `ZkConnectionLoss` of `b`. A controller
  event may write all of ZooKeeper (firing any watch, so enqueueing at any broker), its own module
  and life (`RegisterBrokerAndReelect` re-registers; a reconnection sets `connected`), any
  broker's module (the answer to a controlled shutdown sets the requester's `shutdown`; V2 sets
  other controllers' epoch), its own channels, the budgets (a lost reply) and the ghost bit. It
  reads those and every broker's life (a watch reaches a live, connected broker only). It never
  reads a replica manager (no `.replicas` in the controller modules).
- `("deliver", c, d)`: `NetworkDeliver(c, d)` pops channel c->d, applies the request to `d`'s
  replica manager after reading `d`'s epoch, and may answer a StopReplica with deletions by
  enqueueing at `c` after reading `c`'s context (model/broker.py `deliver`).
  `("deliver-plain", c, d)`: the same action when the request at the head of the channel carries
  no deletion: it neither reads `c`'s context nor enqueues anything. The group of a delivery thus
  depends on the state; this is sound because the two groups are two action classes whose guards
  read the head of c->d, and every action that changes the head (the sender's groups, the plain
  delivery itself) writes c->d, so it enables or disables them as the closure expects.
- `("leader", b, p)`: `LeaderShrinkIsr` / `LeaderExpandIsr` of leader `b` on partition `p`: a
  conditional write of the partition state (firing watches), `b`'s replica, the budgets; its guard
  reads the followers' replicas and lives, and with KIP-841 the controller's context.
- `("broker", b)`: `BrokerStart`, `BrokerCrash`, `ZkSessionExpire`, `BrokerNoticeExpiry`,
  `BrokerRequestControlledShutdown`, `BrokerShutdown`, `SchedulerAutoRebalance` of `b`: its life,
  module, queue, replicas and channels, ZooKeeper, any queue (watches, the shutdown request at the
  controller) and any module (a crash fails the pending shutdowns of requesters).
- `("admin",)`: every admin action: ZooKeeper, the budgets, any queue.

Budgeted actions read the budgets; in an overlapping run (`Cluster.scenario` > 0) their guards ask
whether the cluster is quiescent, so they read everything.

The tests check the writes on every reachable state of small presets (`components` below) and
the commutation of every pair of enabled actions of independent groups.
"""

from __future__ import annotations

from kcm.model.properties import Footprint, Independence, PropertyReads
from kcm.model.actions import (
    AdminCreateTopic, AdminDeleteTopic, AdminMoveController, AdminPreferredElection, AdminReassign,
    AdminReassignPartitions, BrokerCrash, BrokerNoticeExpiry, BrokerRequestControlledShutdown,
    BrokerShutdown, BrokerStart, ControllerProcessEvent, LeaderExpandIsr, LeaderShrinkIsr,
    NetworkDeliver, SchedulerAutoRebalance, ZkConnectionLoss, ZkLoseReply, ZkSessionExpire,
)
from kcm.model.cluster import Cluster, RequestKind
from kcm.model.config import ModelConfig

ZK, SPENT, GHOST = ("zk",), ("spent",), ("ghost",)
_CPE = (ControllerProcessEvent, ZkLoseReply, ZkConnectionLoss)
_BROKER = (BrokerStart, BrokerCrash, ZkSessionExpire, BrokerNoticeExpiry, BrokerRequestControlledShutdown,
           BrokerShutdown, SchedulerAutoRebalance)
_ADMIN = (AdminCreateTopic, AdminDeleteTopic, AdminMoveController, AdminPreferredElection, AdminReassign,
          AdminReassignPartitions)


def group_of(state: Cluster, action) -> tuple:
    """The group of an action in `state` (see the module docstring)."""
    kind = type(action)
    if kind is NetworkDeliver:
        head = state.net[action.src * len(state.brokers) + action.dst][0]
        if head.kind is RequestKind.StopReplica and any(part.delete for part in head.partitions):
            return ("deliver", action.src, action.dst)
        return ("deliver-plain", action.src, action.dst)
    if kind in _CPE:
        return ("cpe", action.broker)
    if kind is LeaderShrinkIsr or kind is LeaderExpandIsr:
        return ("leader", action.broker, action.partition)
    if kind in _BROKER:
        return ("broker", action.broker)
    if kind in _ADMIN:
        return ("admin",)
    raise TypeError(f"not an action: {action!r}")


def groups(cfg: ModelConfig) -> dict[tuple, Footprint]:
    """Every group of `cfg`'s model with its footprint."""
    nb, np_ = cfg.brokers, cfg.topics * cfg.partitions
    life = {("life", b) for b in range(nb)}
    ctl = {("ctl", b) for b in range(nb)}
    queues = {("q", b) for b in range(nb)}
    rms = {("rm", b) for b in range(nb)}
    nets = {("net", c, d) for c in range(nb) for d in range(nb)}
    everything = frozenset({ZK, SPENT, GHOST} | life | ctl | queues | rms | nets)
    # In an overlapping run a budgeted action's guard reads `quiescent(state)`: everything.
    budget_reads = everything if cfg.overlapping else frozenset({SPENT})
    out: dict[tuple, Footprint] = {}
    for b in range(nb):
        mine = {("net", b, d) for d in range(nb)}
        w = frozenset({ZK, ("life", b), SPENT, GHOST} | ctl | queues | mine)
        out[("cpe", b)] = Footprint(w | life | budget_reads, w)
        w = frozenset({ZK, ("life", b), ("rm", b), SPENT} | ctl | queues | mine)
        out[("broker", b)] = Footprint(w | life | budget_reads, w)
        for c in range(nb):
            w = frozenset({("net", c, b), ("rm", b), ("q", c)})
            out[("deliver", c, b)] = Footprint(w | {("life", b), ("ctl", c)}, w)
            w = frozenset({("net", c, b), ("rm", b)})
            out[("deliver-plain", c, b)] = Footprint(w | {("life", b)}, w)
        for p in range(np_):
            w = frozenset({ZK, ("rm", b), SPENT} | queues)
            out[("leader", b, p)] = Footprint(w | rms | life | ctl | budget_reads, w)
    w = frozenset({ZK, SPENT} | queues)
    out[("admin",)] = Footprint(w | life | budget_reads, w)
    return out


def components(state: Cluster) -> dict[tuple, object]:
    """The state as its named components (what the footprints name), for the tests."""
    out: dict[tuple, object] = {ZK: state.zk, SPENT: state.spent, GHOST: state.ghost}
    n = len(state.brokers)
    for b, br in enumerate(state.brokers):
        out[("life", b)] = (br.up, br.connected, br.epoch)
        out[("ctl", b)] = (br.active, br.ctx, br.shutdown, br.shutdown_tries)
        out[("q", b)] = br.queue
        out[("rm", b)] = (br.controller_epoch, br.metadata_epoch, br.metadata_controller, br.replicas)
    for c in range(n):
        for d in range(n):
            out[("net", c, d)] = state.net[c * n + d]
    return out


_DELIVER = frozenset({"deliver", "deliver-plain"})


def property_reads(cfg: ModelConfig):
    """What each property reads (`PropertyReads`); None for the ones not listed here (the
    quiescence and settled properties read nearly everything, the goals and the newer transition
    invariants are left conservative)."""
    nb = cfg.brokers
    ctl = frozenset(("ctl", b) for b in range(nb))
    rms = frozenset(("rm", b) for b in range(nb))
    life = frozenset(("life", b) for b in range(nb))
    nets = frozenset(("net", c, d) for c in range(nb) for d in range(nb))
    table = {
        "SingleActiveControllerPerEpoch": PropertyReads(ctl),
        "UniqueEpochSender": PropertyReads(rms | nets),
        "LeaderInIsrOrNone": PropertyReads(frozenset({ZK})),
        "IsrNonEmpty": PropertyReads(frozenset({ZK})),
        "OnlyActiveControllerActs": PropertyReads(frozenset({GHOST})),
        "NoStaleContextWhenInactive": PropertyReads(ctl),
        "ReassignmentSetsDisjoint": PropertyReads(frozenset({ZK})),
        "ZkWritesFenced": PropertyReads(ctl | {ZK}, frozenset({"cpe"})),
        "StaleControllerRejected": PropertyReads(rms, _DELIVER),
        "ZkLeaderEpochMonotonic": PropertyReads(frozenset({ZK})),
        "ControllerBumpsLeaderEpoch": PropertyReads(frozenset({ZK}), frozenset({"cpe"})),
        "BrokerLeaderEpochMonotonic": PropertyReads(rms, _DELIVER),
        "NoStaleBrokerEpochApplied": PropertyReads(rms | life | nets, _DELIVER),
        "MetadataBeforeLeaderAndIsr": PropertyReads(rms | nets, _DELIVER),
        "NoShuttingDownJoinsIsr": PropertyReads(ctl | {ZK}, frozenset({"leader"})),
        "CacheMatchesZkAfterWrite": PropertyReads(ctl | {ZK}, frozenset({"cpe"})),
    }
    return table.get


def independence(cfg: ModelConfig) -> Independence:
    return Independence(groups(cfg), group_of, property_reads(cfg))
