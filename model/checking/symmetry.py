"""Symmetry over broker ids: a canonical representative of each state's orbit.

Brokers are interchangeable: nothing in Kafka's controller compares broker ids numerically (the
election scans assignment order, the controller is whoever creates `/controller` first), so
renaming brokers maps runs to runs. The initial assignment distinguishes brokers, but the
transition relation is equivariant under renaming, which is what makes exploring canonical states
sound (TLC SYMMETRY, stateright `Representative`).

A permutation renames *values* everywhere ids occur (controller ids, leaders, ISRs, assignments,
recipients, event arguments) and re-indexes the per-broker positions (brokers, sessions, watches,
broker epochs, replica states, channel queues); it never reorders a list: an assignment keeps
its order, because its head is the preferred leader.

The representative is chosen the stateright way, by sorting, refined on ties: brokers are ordered
by a signature that does not mention ids (their positions in the assignments first, then their
broker epoch and local state); among brokers whose signatures tie, every ordering is tried and the
smallest resulting state wins, so the representative is exact (a true orbit minimum over the tied
permutations).

Cost. The representative is computed for every generated state, so the common case is kept
cheap: when the assignment alone gives every broker different roles (nearly always: only a
cluster with no topic left ties), the signatures need not be computed, since they already differ
in their first component; the renaming that sorts the roles is remembered per assignment
(`Symmetry._assignment_order`), and is often the identity. Otherwise `permute` renames the state
through memos per renaming, finding the records a state shares with its parent by identity
(`_Renaming`). The memos belong to a `Symmetry`, one per model.

Which renamings are allowed. The state is renamed, the config is not: a rule that takes broker ids
from the config breaks equivariance, and so does a value that orders brokers globally. Two did, and
made the reduction merge nothing:

- broker epochs were global czxids (broker 0 registered first, with 1), so a renamed state was
  never reachable: its brokers carried each other's czxids. Kafka only compares a broker's epoch
  with the same broker's epochs (model/cluster.py, `Zk`), so epochs are per-broker incarnations
  now, exact for every comparison made, and a renaming maps them along with their broker;
- creation placed replicas by id (`default_assignment`). It now chooses among every placement
  Kafka's `AdminUtils` can produce (model/placement.py), a set closed under renaming, and the
  topics that exist at the start may sit on any of them (`spec.init_states`).

So every renaming is a symmetry of the model (the group is all of S_n) and the sort-based
representative applies. A rule that fixed some brokers again would need the minimum over a
subgroup instead (the renamings that keep what it fixes), as this module had before.
"""

from __future__ import annotations

import itertools

from kcm.model.cluster import (
    NO_ZNODE,
    Broker,
    Cluster,
    Context,
    Event,
    EventKind,
    PartitionZnode,
    Replica,
    Request,
    RequestKind,
    Zk,
)

#: Per controller event kind, whether its argument `a` is a broker id, which a renaming renames
#: (model/cluster.py `Event`): every kind is classified, so that a new one cannot be left out
#: unnoticed (a broker id left unrenamed would make the reduction unsound).
_A_IS_BROKER = {
    EventKind.Startup: False,
    EventKind.Reelect: False,
    EventKind.ControllerChange: False,
    EventKind.Expire: False,
    EventKind.RegisterBrokerAndReelect: False,
    EventKind.BrokerChange: False,
    EventKind.IsrChangeNotification: False,
    EventKind.ControlledShutdown: True,  # a = the broker shutting down (b: its broker epoch)
    EventKind.ReplicaLeaderElection: False,  # a = a partition (an AdminClient's request)
    EventKind.AutoPreferredReplicaLeaderElection: False,
    EventKind.ZkPartitionReassignment: False,
    EventKind.PartitionReassignmentIsrChange: False,  # a = a partition
    EventKind.TopicDeletion: False,
    EventKind.TopicDeletionStopReplicaResponseReceived: True,  # a = the broker that answered
    EventKind.TopicChange: False,
    EventKind.PartitionModifications: False,  # a = a topic
    EventKind.TopicUncleanLeaderElectionEnable: False,  # a = a topic
    EventKind.LogDirEventNotification: False,
    EventKind.LeaderAndIsrResponseReceived: True,  # a = the broker that answered
}
if set(_A_IS_BROKER) != set(EventKind):
    raise AssertionError(f"classify {sorted(k.name for k in set(EventKind) - set(_A_IS_BROKER))} in _A_IS_BROKER")
#: The controller events whose `a` is a broker id.
_ID_EVENTS = frozenset(kind for kind, is_broker in _A_IS_BROKER.items() if is_broker)


def _mask(m: int, pi: tuple[int, ...]) -> int:
    out = 0
    b = 0
    while m:
        if m & 1:
            out |= 1 << pi[b]
        m >>= 1
        b += 1
    return out


class _Renaming:
    """One renaming `pi` with its inverse, and memos of the records it has renamed.

    Records are shared between states (a step replaces only what it changes), so the same replica,
    partition znode, request or broker comes back again and again: each is renamed once per
    renaming and then found again, first by identity (`by_id`: no hashing of a nested record,
    which Python does not cache), then by value. The renamed records returned are then the very
    same objects for equal inputs, which the model's fingerprint cache finds by identity. Memos
    are dropped once past `_LIMIT` entries (looked at every 1024 renamings)."""

    __slots__ = ("pi", "inv", "net_map", "calls", "ids", "znodes", "replicas", "requests", "ctxs", "brokers", "zks",
                 "queues", "by_id")
    _LIMIT = 1 << 16

    def __init__(self, pi: tuple[int, ...]) -> None:
        n = len(pi)
        inv = [0] * n
        for old, new in enumerate(pi):
            inv[new] = old
        self.pi, self.inv = pi, tuple(inv)
        #: (index of queue c -> d in `Cluster.net`, index of its renaming pi[c] -> pi[d])
        self.net_map = tuple((c * n + d, pi[c] * n + pi[d]) for c in range(n) for d in range(n))
        #: permutations done, to look at the memos' sizes now and then only
        self.calls = 0
        self.ids: dict = {}
        self.znodes: dict = {}
        self.replicas: dict = {}
        self.requests: dict = {}
        self.ctxs: dict = {}
        self.brokers: dict = {}
        self.zks: dict = {}
        self.queues: dict = {}
        #: id(record) -> (record, renamed record), for brokers, ZooKeeper and request queues; the
        #: record is kept so that its id is not reused while memoised.
        self.by_id: dict = {}

    def trim(self) -> None:
        for memo in (self.ids, self.znodes, self.replicas, self.requests, self.ctxs, self.brokers, self.zks,
                     self.queues, self.by_id):
            if len(memo) > self._LIMIT:
                memo.clear()


def _ids(t: tuple[int, ...], r: _Renaming) -> tuple[int, ...]:
    out = r.ids.get(t)
    if out is None:
        pi = r.pi
        out = r.ids[t] = tuple([pi[x] for x in t])
    return out


def _id(x: int, pi) -> int:
    return pi[x] if x >= 0 else x


def _reindex(t: tuple, inv) -> tuple:
    return tuple([t[i] for i in inv])


def _znode(z: PartitionZnode, r: _Renaming) -> PartitionZnode:
    if z == NO_ZNODE:
        return z
    out = r.znodes.get(z)
    if out is None:
        out = r.znodes[z] = PartitionZnode(_id(z.leader, r.pi), z.leader_epoch, _ids(z.isr, r), z.controller_epoch,
                                           z.version)
    return out


def _zk(zk: Zk, r: _Renaming) -> Zk:
    out = r.zks.get(zk)
    if out is not None:
        return out
    pi, inv = r.pi, r.inv
    out = r.zks[zk] = Zk(
        session=_mask(zk.session, pi),
        controller=_id(zk.controller, pi),
        controller_epoch=zk.controller_epoch,
        broker_epochs=_reindex(zk.broker_epochs, inv),
        incarnations=_reindex(zk.incarnations, inv),
        assignment=tuple([_ids(a, r) for a in zk.assignment]),
        adding=tuple([_ids(a, r) for a in zk.adding]),
        removing=tuple([_ids(a, r) for a in zk.removing]),
        partitions=tuple([_znode(z, r) for z in zk.partitions]),
        reassign=tuple([_ids(a, r) for a in zk.reassign]),
        preferred=zk.preferred,
        delete_topics=zk.delete_topics,
        isr_changes=zk.isr_changes,
        watches=_reindex(zk.watches, inv),
        unclean_topics=zk.unclean_topics,
        log_dir_events=_mask(zk.log_dir_events, pi),
    )
    return out


def _ctx(c: Context, r: _Renaming) -> Context:
    if not c.live and not c.epoch and not c.channel:
        return c  # a reset context mentions no broker
    out = r.ctxs.get(c)
    if out is not None:
        return out
    pi, inv = r.pi, r.inv
    out = r.ctxs[c] = Context(
        epoch=c.epoch, live=_mask(c.live, pi), broker_epochs=_reindex(c.broker_epochs, inv),
        shutting_down=_mask(c.shutting_down, pi),
        assignment=tuple([_ids(a, r) for a in c.assignment]), adding=tuple([_ids(a, r) for a in c.adding]),
        removing=tuple([_ids(a, r) for a in c.removing]), reassigning=c.reassigning,
        leadership=tuple([_znode(z, r) for z in c.leadership]), partition_states=c.partition_states,
        replica_states=tuple([_reindex(x, inv) for x in c.replica_states]),
        topics_to_delete=c.topics_to_delete, topics_ineligible=c.topics_ineligible,
        topics_deletion_started=c.topics_deletion_started, channel=_mask(c.channel, pi),
        offline_dirs=_reindex(c.offline_dirs, inv))
    return out


def _event(e: Event, pi) -> Event:
    return Event(e.kind, pi[e.a], e.b) if e.kind in _ID_EVENTS else e


def _replica(x: Replica, r: _Renaming) -> Replica:
    if x.leader_epoch < 0 and not x.replicas:
        return x
    out = r.replicas.get(x)
    if out is None:
        out = r.replicas[x] = Replica(_id(x.leader, r.pi), x.leader_epoch, _ids(x.isr, r), x.zk_version,
                                      _ids(x.replicas, r), x.stopped)
    return out


def _request(q: Request, r: _Renaming) -> Request:
    out = r.requests.get(q)
    if out is not None:
        return out
    pi = r.pi
    if q.kind is RequestKind.LeaderAndIsr:
        parts = tuple([x._replace(leader=_id(x.leader, pi), isr=_ids(x.isr, r), replicas=_ids(x.replicas, r))
                       for x in q.partitions])
    else:
        parts = q.partitions
    out = r.requests[q] = Request(q.kind, pi[q.controller_id], q.controller_epoch, q.broker_epoch, parts)
    return out


def _broker(b: Broker, r: _Renaming) -> Broker:
    out = r.brokers.get(b)
    if out is None:
        pi = r.pi
        out = r.brokers[b] = b._replace(ctx=_ctx(b.ctx, r), queue=tuple([_event(e, pi) for e in b.queue]),
                                        metadata_controller=_id(b.metadata_controller, pi),
                                        replicas=tuple([_replica(x, r) for x in b.replicas]))
    return out


def _queue(q: tuple, r: _Renaming) -> tuple:
    out = r.queues.get(q)
    if out is None:
        out = r.queues[q] = tuple([_request(x, r) for x in q])
    return out


def _permute(state: Cluster, r: _Renaming) -> Cluster:
    """`state` renamed by `r`."""
    r.calls += 1
    if not r.calls & 1023:
        r.trim()
    by_id = r.by_id
    # Records unchanged since the state's parent are the very same objects: found by identity.
    old_zk = state.zk
    entry = by_id.get(id(old_zk))
    if entry is not None and entry[0] is old_zk:
        zk = entry[1]
    else:
        zk = _zk(old_zk, r)
        by_id[id(old_zk)] = (old_zk, zk)
    old = state.brokers
    brokers = []
    for i in r.inv:
        x = old[i]
        entry = by_id.get(id(x))
        if entry is not None and entry[0] is x:
            brokers.append(entry[1])
        else:
            renamed = _broker(x, r)
            by_id[id(x)] = (x, renamed)
            brokers.append(renamed)
    old_net = state.net
    entry = by_id.get(id(old_net))
    if entry is not None and entry[0] is old_net:
        net = entry[1]
    else:
        out: list[tuple] = [()] * len(old_net)
        for i, j in r.net_map:
            q = old_net[i]
            if q:
                e = by_id.get(id(q))
                if e is not None and e[0] is q:
                    out[j] = e[1]
                else:
                    out[j] = renamed_q = _queue(q, r)
                    by_id[id(q)] = (q, renamed_q)
        net = tuple(out)
        by_id[id(old_net)] = (old_net, net)
    return Cluster(zk, tuple(brokers), net, state.spent, state.ghost, state.scenario)


def _signature(state: Cluster, b: int):
    """What broker `b` looks like without naming any broker: ties are refined by trying orders.

    It leads with `b`'s position in each partition's assignment (the roles the assignment gives),
    so that in most states the canonical order is the identity and no renaming is built."""
    br = state.brokers[b]
    zk = state.zk
    epoch = zk.broker_epochs[b]
    return (_roles(zk.assignment, b), epoch == 0, epoch, br.epoch, br.up, br.connected, br.active, br.ctx.epoch,
            zk.controller == b, len(br.queue), br.controller_epoch, br.metadata_epoch, br.shutdown, br.shutdown_tries,
            tuple(r.leader_epoch for r in br.replicas), bool(zk.session >> b & 1))


def _roles(assignment: tuple, b: int) -> tuple[int, ...]:
    """Broker `b`'s position in each partition's assignment (its length when absent)."""
    return tuple(a.index(b) if b in a else len(a) for a in assignment)


class Symmetry:
    """The broker renamings of one cluster size, with what they remember: each renaming's memos
    (`_Renaming`) and the renaming each assignment fixes (`_assignment_order`). One per model
    (`KafkaModel.symmetry`), so that what one exploration remembers goes with it."""

    __slots__ = ("n", "identity", "renamings", "orders", "orders_by_id")
    _LIMIT = 1 << 16

    def __init__(self, brokers: int) -> None:
        self.n = brokers
        self.identity = tuple(range(brokers))
        self.renamings: dict[tuple[int, ...], _Renaming] = {}
        #: (assignment, brokers) -> the renaming the assignment alone fixes (the
        #: representative's fast path), or None when it leaves two brokers the same roles.
        self.orders: dict[tuple, tuple[int, ...] | None] = {}
        #: id(assignment) -> (assignment, renaming or None): the same lookup without hashing.
        self.orders_by_id: dict[int, tuple] = {}

    def permute(self, state: Cluster, pi: tuple[int, ...]) -> Cluster:
        """`state` with every broker id `b` renamed `pi[b]`."""
        r = self.renamings.get(pi) if type(pi) is tuple else None
        if r is None:
            pi = tuple(pi)
            r = self.renamings.get(pi)
            if r is None:
                r = self.renamings[pi] = _Renaming(pi)
        return _permute(state, r)

    def _assignment_order(self, assignment: tuple) -> tuple[int, ...] | None:
        """The renaming that sorts the brokers by their roles in `assignment` (`pi[old] = new`),
        or None if two brokers have the same roles. States share a handful of assignments, so it
        is remembered per assignment, by identity first."""
        entry = self.orders_by_id.get(id(assignment))
        if entry is not None and entry[0] is assignment:
            return entry[1]
        n = self.n
        orders = self.orders
        if assignment in orders:
            pi = orders[assignment]
        else:
            roles = [_roles(assignment, b) for b in range(n)]
            if len(set(roles)) < n:
                pi = None
            else:
                order = sorted(range(n), key=roles.__getitem__)  # order[new] = old
                p = [0] * n
                for new, old in enumerate(order):
                    p[old] = new
                pi = tuple(p)
            if len(orders) > self._LIMIT:
                orders.clear()
            orders[assignment] = pi
        if len(self.orders_by_id) > self._LIMIT:
            self.orders_by_id.clear()
        self.orders_by_id[id(assignment)] = (assignment, pi)
        return pi

    def representative(self, state: Cluster) -> Cluster:
        """The canonical member of `state`'s orbit under every broker renaming."""
        n = self.n
        # Fast path: the assignment alone gives every broker a different role, hence a different
        # signature, so there is no tie to try: the canonical renaming is the one that sorts the
        # roles (the identity in most states; remembered per assignment, states share a handful).
        pi = self._assignment_order(state.zk.assignment)
        if pi is not None:
            return state if pi == self.identity else self.permute(state, pi)
        sigs = [(_signature(state, b), b) for b in range(n)]
        sigs.sort()
        # Group tied brokers; the canonical position of a group is fixed, its internal order is tried.
        groups: list[list[int]] = []
        last = object()
        for sig, b in sigs:
            if sig != last:
                groups.append([])
                last = sig
            groups[-1].append(b)
        best = None
        for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
            order = [b for group in orders for b in group]  # order[j] = old id placed at new id j
            p = [0] * n
            for new, old in enumerate(order):
                p[old] = new
            pi_t = tuple(p)
            candidate = state if pi_t == self.identity else self.permute(state, pi_t)
            if best is None or candidate < best:
                best = candidate
        assert best is not None
        return best


def permute(state: Cluster, pi: tuple[int, ...], symmetry: Symmetry | None = None) -> Cluster:
    """`state` with every broker id `b` renamed `pi[b]` (through `symmetry`'s memos when given)."""
    return (symmetry or Symmetry(len(state.brokers))).permute(state, pi)


def representative(state: Cluster, symmetry: Symmetry | None = None) -> Cluster:
    """The canonical member of `state`'s orbit under every broker renaming (through `symmetry`'s
    memos when given)."""
    return (symmetry or Symmetry(len(state.brokers))).representative(state)
