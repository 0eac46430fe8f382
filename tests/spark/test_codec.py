"""The Kafka model's state codec (`kcm.model.checking.codec`, `KafkaModel.encode_state`): every reachable
state of the `tiny` preset comes back equal, with the same type at every node and the same
sentinel identities; and the Spark explorer picks it (the generic pickle codec for other models)."""

from __future__ import annotations

import marshal
from enum import Enum

import pytest
from kcm.model.checking import codec
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import NO_REPLICA, NO_ZNODE, PartitionZnode, Replica
from kcm.spark_explore.codec import ModelCodec, StateCodec, has_own_codec, state_codec
from kcm.spark_explore.spec import ModelSpec

from kcm.config import load_preset

SENTINELS = (NO_ZNODE, NO_REPLICA)


def plain_values(value) -> bool:
    """Nothing but tuples, ints, bools and None (what marshal takes)."""
    if type(value) is tuple:
        return all(map(plain_values, value))
    return type(value) in (int, bool, type(None))


def same(a, b, where: str = "state") -> None:
    """`a` and `b` are equal with the same type at every node, enum members and sentinels being
    the very same objects."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} vs {type(b).__name__}"
    for sentinel in SENTINELS:
        assert (a is sentinel) == (b is sentinel), f"{where}: sentinel identity differs"
    if isinstance(a, Enum):
        assert a is b, where
    elif isinstance(a, tuple):
        assert len(a) == len(b), where
        names = getattr(type(a), "_fields", None) or range(len(a))
        for name, x, y in zip(names, a, b):
            same(x, y, f"{where}.{name}")
    else:
        assert a == b, where


def reachable(model) -> list:
    """Every reachable state (symmetry off: no state is stood for by another)."""
    seen = {}
    frontier = list(model.init_states())
    for s in frontier:
        seen[model.fingerprint(s)] = s
    while frontier:
        nxt = []
        for s in frontier:
            for _, t in model.successors(s):
                f = model.fingerprint(t)
                if f not in seen:
                    seen[f] = t
                    nxt.append(t)
        frontier = nxt
    return list(seen.values())


@pytest.fixture(scope="module")
def tiny_states():
    model = KafkaModel(load_preset("tiny"), symmetry=False)
    states = reachable(model)
    assert len(states) > 1000
    return model, states


@pytest.mark.slow
def test_every_tiny_state_round_trips_exactly(tiny_states):
    model, states = tiny_states
    assert any(z is NO_ZNODE for s in states for z in s.zk.partitions)
    assert any(r is NO_REPLICA for s in states for b in s.brokers for r in b.replicas)
    assert any(r is not NO_REPLICA for s in states for b in s.brokers for r in b.replicas)
    for warm in (False, True):  # cold caches, then the records decoded in the first pass
        if not warm:
            codec.clear_caches()
        for s in states:
            data = model.encode_state(s)
            zk, brokers, net, rest = data  # each record's marshal, for pickle to share
            assert type(zk) is bytes and all(type(b) is bytes for b in brokers)
            assert all(type(q) is bytes or q == () for q in net) and plain_values(rest)
            same(model.decode_state(data), s)
    # The plain form is what marshal takes: nothing but tuples, ints, bools and None.
    for s in states[:200]:
        plain = codec.to_plain(s)
        assert plain_values(plain) and marshal.loads(marshal.dumps(plain)) == plain
        same(codec.from_plain(plain), s)


@pytest.mark.parametrize("limit", [1 << 16, 3], ids=["cache", "cleared-every-state"])
def test_successors_of_a_decoded_state_encode_exactly(tiny_states, limit, monkeypatch):
    """What the Spark explorer's expansion does: decode a frontier state, then encode each
    successor. A record it shares with the parent is found among those `decode` remembered and
    comes out as the parent's very bytes object (so a pickled batch writes it once). Each
    encoding decodes, from cold caches, to the successor, also when the caches are so small that
    they are cleared while a state is decoded. (The bytes may differ from a cold encoding's:
    marshal flags objects referenced more than once.)"""
    model, states = tiny_states
    sample = states[::7]
    for cache in (codec._ENCODED, codec._ZKS, codec._CONTEXTS, codec._BROKERS, codec._QUEUES):
        monkeypatch.setattr(cache, "limit", limit)
    codec.clear_caches()
    warm, shared = {}, 0
    for i, s in enumerate(sample):
        data = codec.encode(s)
        parent = codec.decode(data)
        for n, (_, u) in enumerate(model.successors(parent)):
            warm[i, n] = encoded = codec.encode(u)
            for b, p, eb in zip(u.brokers, parent.brokers, encoded[1]):
                if b is p:  # a record shared with the parent: its very bytes
                    # (two brokers of one state may be one record: either's bytes object)
                    assert any(eb is e for x, e in zip(parent.brokers, data[1]) if x is b)
                    shared += 1
            # At most one decoded state's records past the limit: its ZooKeeper record, each
            # broker and its context, each non-empty queue.
            assert len(codec._ENCODED) <= limit + 1 + 2 * len(parent.brokers) + len(parent.net)
    assert shared > 1000
    for i, s in enumerate(sample):
        for n, (_, t) in enumerate(model.successors(s)):
            codec.clear_caches()
            same(codec.decode(warm.pop((i, n))), t)
    assert not warm


def test_copies_of_sentinels_stay_copies():
    model = KafkaModel(load_preset("tiny"))
    state = model.init_states()[0]
    copy = PartitionZnode(*NO_ZNODE)
    replica = Replica(*NO_REPLICA)
    broker = state.brokers[0]
    edited = state._replace(
        zk=state.zk._replace(partitions=(copy,) + state.zk.partitions[1:]),
        brokers=(broker._replace(replicas=(replica,) + broker.replicas[1:]),) + state.brokers[1:])
    back = model.decode_state(model.encode_state(edited))
    same(back, edited)
    assert back.zk.partitions[0] == NO_ZNODE and back.zk.partitions[0] is not NO_ZNODE
    assert back.brokers[0].replicas[0] is not NO_REPLICA and back.brokers[1].replicas[0] is NO_REPLICA


def test_the_spark_explorer_uses_the_models_codec_else_pickle():
    kafka = ModelSpec.kafka(load_preset("tiny")).build()
    assert has_own_codec(kafka) and isinstance(state_codec(kafka), ModelCodec)
    toy = ModelSpec.of("tests.checker.toys:grid", 3).build()
    assert not has_own_codec(toy) and isinstance(state_codec(toy), StateCodec)
    state = toy.init_states()[0]
    assert state_codec(toy).decode(state_codec(toy).encode(state)) == state


def test_states_of_every_scenario_round_trip():
    # The default preset starts overlapping runs from settled clusters (`Cluster.scenario` >= 1).
    model = KafkaModel(load_preset("default"))
    states = list(model.init_states())
    assert {s.scenario for s in states} != {0}
    for s in list(states):
        states.extend(t for _, t in model.successors(s))
    for s in states:
        same(model.decode_state(model.encode_state(s)), s)
