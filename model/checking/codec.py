"""A `Cluster` as a few bytes objects and back, exactly: the Kafka model's state codec
(`KafkaModel.encode_state`).

Distributed checkers ship states between processes (the Spark explorer twice per state per level),
so the encoding is on the hot path. A generic pickle rebuilds every NamedTuple through Python
code, and must also be taught to keep the identity of the model's sentinels (`NO_ZNODE`,
`NO_REPLICA`), so here each record is written by hand as nested plain tuples of ints, bools and
None, and dumped with `marshal` (C, no memo, no class lookups):

- a record (`Zk`, `Broker`, `Context`, `PartitionZnode`, `Replica`, `Event`, `Request`, ...) is
  the tuple of its fields in declaration order; IntEnum fields are written as their int value and
  rebuilt as the enum member (`Shutdown(1)` is `Shutdown.AWAITING`, the one member object);
- the sentinels are written as `None` and decoded to the sentinel object itself, so
  `z is NO_ZNODE` is true after decoding exactly when it was true before; a record equal to a
  sentinel that was not the sentinel stays an equal copy;
- bools stay bools (marshal keeps the type), bitmasks and ids stay ints;
- a request's partitions are told apart by their arity (7 fields: `LeaderAndIsrPartition`, 3:
  `StopReplicaPartition`), so the encoding does not depend on which kinds carry which.

The ZooKeeper record, each broker (with its controller context marshalled apart inside it) and each
non-empty network queue are marshalled apart, and the state is the tuple of those bytes objects
with the plain fields after `net` (`spent`, `ghost`, ...): `(zk, (broker, ...), (queue or (), ...),
rest)`. They are not marshalled together, so that a pickle of many states (a batch of Spark
records: siblings travel together) writes a bytes object shared by several of them once: 2.3 times
fewer bytes per candidate on `deep`, and no copy into one buffer. A successor shares every record
its step did not replace with its parent, and a broker it replaced often keeps its parent's
context, so decoding remembers, by identity, the bytes of every record of the state it decodes (the
parent, in a distributed expansion), and encoding a successor looks its records up there first:
most cost one dictionary lookup and come out as the parent's very bytes objects. Decoding also
remembers, by bytes, the record it built from them. Encoding does not remember what it encodes: a
successor is encoded once, and keeping its records alive only filled the cache with records never
asked for again, which were then freed in bulk when it was cleared (docs/benchmarks.md, "The state
codec, and PySpark's collections between tasks"). Both caches are bounded (cleared when full).
Records are immutable, so sharing them across states is invisible to the model, except that the
model's own fingerprint cache (keyed by record) then hits by identity.

`decode(encode(s)) == s` with the same types everywhere and the same sentinel identities
(tests/spark/test_codec.py checks every state of the `tiny` preset). Encodings are not canonical
(identity comes from `KafkaModel.fingerprint`). A change to a record's fields must be made here
too: the module refuses to import until it is.

Pure and stdlib-only, like the rest of `kcm.model`.
"""

from __future__ import annotations

import marshal
from typing import Any

from kcm.model.cluster import (
    NO_REPLICA,
    NO_ZNODE,
    Broker,
    Cluster,
    Context,
    Event,
    EventKind,
    LeaderAndIsrPartition,
    PartitionZnode,
    Replica,
    Request,
    RequestKind,
    Shutdown,
    StopReplicaPartition,
    Zk,
)
from kcm.model.states import PartitionState, ReplicaState

#: marshal format 4 (the default; 2 would drop interning references, no gain for ints and tuples).
_VERSION = 4

_new = tuple.__new__

#: The fields this codec writes, per record, in order. The records after `Cluster.net` (`spent`,
#: `ghost`, ...) are plain ints and tuples of ints and are written as they are, whatever they are;
#: any other change to a record must be made here too, and is refused at import until it is.
_KNOWN_FIELDS: dict[Any, tuple[str, ...]] = {
    Cluster: ("zk", "brokers", "net"),
    Zk: ("session", "controller", "controller_epoch", "broker_epochs", "incarnations", "assignment", "adding",
         "removing", "partitions", "reassign", "preferred", "delete_topics", "isr_changes", "watches",
         "unclean_topics", "log_dir_events"),
    Broker: ("up", "connected", "epoch", "active", "ctx", "queue", "controller_epoch", "metadata_epoch",
             "metadata_controller", "replicas", "shutdown", "shutdown_tries", "offline_dirs"),
    Context: ("epoch", "live", "broker_epochs", "shutting_down", "assignment", "adding", "removing", "reassigning",
              "leadership", "partition_states", "replica_states", "topics_to_delete", "topics_ineligible",
              "topics_deletion_started", "channel", "offline_dirs"),
    Event: ("kind", "a", "b"),
    Request: ("kind", "controller_id", "controller_epoch", "broker_epoch", "partitions"),
    PartitionZnode: ("leader", "leader_epoch", "isr", "controller_epoch", "version"),
    Replica: ("leader", "leader_epoch", "isr", "zk_version", "replicas", "stopped"),
    LeaderAndIsrPartition: ("partition", "leader", "leader_epoch", "isr", "zk_version", "replicas", "is_new"),
    StopReplicaPartition: ("partition", "leader_epoch", "delete"),
}
for _record, _fields in _KNOWN_FIELDS.items():
    _actual = _record._fields[:len(_fields)] if _record is Cluster else _record._fields
    if _actual != _fields:
        raise ImportError(f"kcm.model.checking.codec does not know the fields of {_record.__name__} "
                          f"{_record._fields}; update it (it knows {_fields})")

# Enum members by value, as tuples: `_SHUTDOWN[1]` is `Shutdown.AWAITING` (faster than `Shutdown(1)`).


def _members(enum) -> tuple:
    top = max(m.value for m in enum)
    table = [None] * (top + 1)
    for m in enum:
        table[m.value] = m
    return tuple(table)


_SHUTDOWN = _members(Shutdown)
_EVENT_KIND = _members(EventKind)
_REQUEST_KIND = _members(RequestKind)
_PARTITION_STATE = _members(PartitionState)
_REPLICA_STATE = _members(ReplicaState)


# ---- encoding: records to plain tuples ------------------------------------------------------------


def _znode(z: PartitionZnode):
    return None if z is NO_ZNODE else tuple(z)  # every field is an int or a tuple of ints


def _replica(r: Replica):
    return None if r is NO_REPLICA else tuple(r)


def _part(p) -> tuple:
    return tuple(p)  # LeaderAndIsrPartition / StopReplicaPartition: ints, bools, tuples of ints


def _request(r: Request) -> tuple:
    return (int(r.kind), r.controller_id, r.controller_epoch, r.broker_epoch, tuple(map(_part, r.partitions)))


def _context(c: Context) -> tuple:
    return (c.epoch, c.live, c.broker_epochs, c.shutting_down, c.assignment, c.adding, c.removing,
            c.reassigning, tuple(map(_znode, c.leadership)), tuple(map(int, c.partition_states)),
            tuple(tuple(map(int, r)) for r in c.replica_states),
            c.topics_to_delete, c.topics_ineligible, c.topics_deletion_started, c.channel, c.offline_dirs)


def _event(e: Event) -> tuple:
    return (int(e.kind), e.a, e.b)


def _broker_with(b: Broker, ctx) -> tuple:
    """A broker's fields as plain values, its context given as `ctx`."""
    return (b.up, b.connected, b.epoch, b.active, ctx, tuple(map(_event, b.queue)),
            b.controller_epoch, b.metadata_epoch, b.metadata_controller, tuple(map(_replica, b.replicas)),
            int(b.shutdown), b.shutdown_tries, b.offline_dirs)


def _broker(b: Broker) -> tuple:
    return _broker_with(b, _context(b.ctx))


def _broker_parts(b: Broker) -> tuple:
    """What `encode` marshals for a broker: `_broker`, with the context as the bytes of its own
    marshal, remembered by identity. Most steps replace a broker's queue, replicas or flags and
    keep its context (the very record), so its conversion, a third of the broker's, is skipped."""
    return _broker_with(b, _part_bytes(b.ctx, _context))


def _zk(z: Zk) -> tuple:
    return (z.session, z.controller, z.controller_epoch, z.broker_epochs, z.incarnations, z.assignment,
            z.adding, z.removing, tuple(map(_znode, z.partitions)), z.reassign, z.preferred,
            z.delete_topics, z.isr_changes, z.watches, z.unclean_topics, z.log_dir_events)


def _queue(q: tuple) -> tuple:
    return tuple(map(_request, q))


def _net(net: tuple) -> tuple:
    return tuple(map(_queue, net))


def to_plain(s: Cluster) -> tuple:
    """The state as nested tuples of ints, bools and None (marshal's input)."""
    return (_zk(s.zk), tuple(map(_broker, s.brokers)), _net(s.net), s[3:])


class _Parts(dict):
    """id(record) -> (record, its bytes): the records of the states decoded lately. Holding the
    record keeps its id from being reused; the cache is cleared when it grows past `limit`."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit


_ENCODED = _Parts(1 << 16)


def _part_bytes(record, plain) -> bytes:
    entry = _ENCODED.get(id(record))
    if entry is not None and entry[0] is record:
        return entry[1]
    return marshal.dumps(plain(record), _VERSION)


def encode(s: Cluster) -> tuple:
    """The state as bytes objects in a tuple (`decode` gives it back): the ZooKeeper record, each
    broker and each network queue marshalled apart (or their bytes found by identity among the
    records `decode` remembered: a successor shares all but the records its step replaced)."""
    return (_part_bytes(s.zk, _zk), tuple([_part_bytes(b, _broker_parts) for b in s.brokers]),
            tuple([_part_bytes(q, _queue) if q else () for q in s.net]), s[3:])


# ---- decoding: plain tuples to records -----------------------------------------------------------


def _znode_of(t) -> PartitionZnode:
    return NO_ZNODE if t is None else _new(PartitionZnode, t)


def _replica_of(t) -> Replica:
    return NO_REPLICA if t is None else _new(Replica, t)


def _part_of(t):
    return _new(LeaderAndIsrPartition if len(t) == 7 else StopReplicaPartition, t)


def _request_of(t) -> Request:
    return _new(Request, (_REQUEST_KIND[t[0]], t[1], t[2], t[3], tuple(map(_part_of, t[4]))))


def _context_of(t) -> Context:
    ps, rs = _PARTITION_STATE, _REPLICA_STATE
    return _new(Context, (t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], tuple(map(_znode_of, t[8])),
                          tuple([ps[x] for x in t[9]]), tuple([tuple([rs[x] for x in r]) for r in t[10]]),
                          t[11], t[12], t[13], t[14], t[15]))


def _event_of(t) -> Event:
    return _new(Event, (_EVENT_KIND[t[0]], t[1], t[2]))


def _broker_from(t, ctx: Context) -> Broker:
    """The broker of the plain fields `t`, with the context `ctx` already decoded."""
    return _new(Broker, (t[0], t[1], t[2], t[3], ctx, tuple(map(_event_of, t[5])),
                         t[6], t[7], t[8], tuple(map(_replica_of, t[9])), _SHUTDOWN[t[10]], t[11], t[12]))


def _broker_of(t) -> Broker:
    return _broker_from(t, _context_of(t[4]))


def _broker_of_parts(t) -> tuple[Broker, bytes]:
    """The broker `_broker_parts` wrote (its context decoded once per distinct bytes), and the
    bytes of its context, for `decode` to remember."""
    return _broker_from(t, _CONTEXTS[t[4]]), t[4]


def _zk_of(t) -> Zk:
    return _new(Zk, (t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], tuple(map(_znode_of, t[8])), t[9],
                     t[10], t[11], t[12], t[13], t[14], t[15]))


def _queue_of(t) -> tuple:
    return tuple(map(_request_of, t))


def _net_of(t) -> tuple:
    return tuple(map(_queue_of, t))


def from_plain(t: tuple) -> Cluster:
    """The state `to_plain` wrote, with enum members, records and sentinels restored."""
    zk, brokers, net, rest = t
    return _new(Cluster, (_zk_of(zk), tuple(map(_broker_of, brokers)), _net_of(net), *rest))


class _Records(dict):
    """bytes -> the record decoded from them, for one kind of record; cleared past `limit`."""

    __slots__ = ("build", "limit")

    def __init__(self, build, limit: int) -> None:
        super().__init__()
        self.build, self.limit = build, limit

    def __missing__(self, data: bytes):
        if len(self) >= self.limit:
            self.clear()
        record = self[data] = self.build(marshal.loads(data))
        return record


_ZKS = _Records(_zk_of, 1 << 14)
_CONTEXTS = _Records(_context_of, 1 << 16)
_BROKERS = _Records(_broker_of_parts, 1 << 16)
_QUEUES = _Records(_queue_of, 1 << 14)


def decode(data: tuple) -> Cluster:
    """The state `encode` wrote. Records whose bytes were decoded lately in this process come
    back as the same objects."""
    zk, brokers, net, rest = data
    if len(_ENCODED) >= _ENCODED.limit:  # (one state's records past the limit do no harm)
        _ENCODED.clear()
    # Every record is remembered by identity, so that encoding a successor that shares it costs
    # a lookup (a record decoded before may have been forgotten since: remember it again).
    z = _ZKS[zk]
    _ENCODED[id(z)] = (z, zk)
    bs = []
    for d in brokers:
        b, ctx = _BROKERS[d]
        _ENCODED[id(b)] = (b, d)
        _ENCODED[id(b.ctx)] = (b.ctx, ctx)
        bs.append(b)
    qs = []
    for d in net:
        if d:
            q = _QUEUES[d]
            _ENCODED[id(q)] = (q, d)
            qs.append(q)
        else:
            qs.append(())
    return _new(Cluster, (z, tuple(bs), tuple(qs), *rest))


def clear_caches() -> None:
    """Forget the records `decode` remembered (for tests and benchmarks)."""
    for cache in (_ENCODED, _ZKS, _CONTEXTS, _BROKERS, _QUEUES):
        cache.clear()
