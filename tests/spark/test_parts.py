"""The pieces the Spark explorer is built from, without Spark: the per-partition fingerprint set,
the keys and the partition function, the state codec and the model spec."""

from __future__ import annotations

import pickle
import random

import pytest
from kcm.model.cluster import NO_ZNODE, PartitionZnode
from kcm.spark_explore.codec import StateCodec
from kcm.spark_explore.fpset import FingerprintSet
from kcm.spark_explore.level import (
    EXPAND,
    LOCALITY_PARTITIONS,
    MERGE,
    LevelTask,
    codec_for,
    expand_partition,
    fingerprint_of_key,
    is_candidate,
    is_frontier,
    is_visited,
    keep_first,
    key_function,
    merge_partition,
    owner_of,
    uses_locality,
)
from kcm.spark_explore.spec import ModelSpec

from kcm.config import load_preset


def fingerprints(n: int, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(16) for _ in range(n)]


def test_fingerprint_set_merges_and_finds():
    old, new = fingerprints(500, 1), fingerprints(300, 2)
    first = FingerprintSet.of(old)
    merged = first.merged(new + old[:50] + new[:10])  # members and repeats are ignored
    assert len(first) == 500 and len(merged) == 800 and merged.nbytes == 800 * 16
    assert all(fp in merged for fp in old + new)
    assert not any(fp in first for fp in new)
    assert list(merged) == sorted(old + new)  # sorted by (high, low), i.e. as bytes
    assert list(pickle.loads(pickle.dumps(merged))) == list(merged)
    assert first.merged([]) is first


def test_fingerprint_set_with_equal_high_words():
    high = bytes(8)
    fps = [high + i.to_bytes(8, "big") for i in (7, 3, 9, 1)]
    s = FingerprintSet.of(fps[:2]).merged(fps[2:])
    assert list(s) == sorted(fps)
    assert all(fp in s for fp in fps)
    assert high + (5).to_bytes(8, "big") not in s


def test_records_go_to_their_owner():
    fp = (5).to_bytes(8, "big") + bytes(8)
    assert owner_of(fp) == 5 and owner_of(3) == 3
    frontier, candidate = (fp, ((0, 1), b"s")), (fp, ((0, 1), "Kind", b"s", ()))
    assert is_frontier(frontier) and not is_candidate(frontier)
    assert is_candidate(candidate) and not is_frontier(candidate)
    assert is_visited((3, FingerprintSet())) and not is_visited(frontier)
    assert keep_first(((0, 2), "a"), ((0, 1), "b")) == ((0, 1), "b")


def test_merge_keeps_the_smallest_path_of_each_new_fingerprint():
    old, a, b = fingerprints(3, 7)
    task = LevelTask(ModelSpec.of("tests.checker.toys:grid", 3), False, ("inv",), (), (), True, True, True, 4)
    reported: list = []
    records = [
        (a, ((0, 2, 1), "Up", b"a-late", (0,))),   # a candidate from one expand partition...
        (b, ((0, 1, 5), "Down", b"b", ())),
        (old, ((0, 0, 0), "Up", b"old", ())),     # already visited
        (0, FingerprintSet.of([old])),            # the visited record, not necessarily first
        (old, ((0, 0), b"frontier")),              # the frontier just expanded: skipped
        (a, ((0, 1, 9), "Down", b"a-early", ())),  # ...and a smaller path from another
    ]
    out = list(merge_partition(task, reported.extend, 0, iter(records)))
    assert out[:2] == [(b, ((0, 1, 5), b"b")), (a, ((0, 1, 9), b"a-early"))]  # in path order
    key, merged = out[2]
    assert key == 0 and sorted(merged) == sorted([old, a, b])
    [((level, stage, partition), summary)] = reported
    assert (level, stage, partition) == (4, MERGE, 0)
    assert (summary.received, summary.new, summary.visited) == (3, 2, 3)
    assert summary.new_states == {"Down": 2} and summary.always_events == {}


@pytest.mark.parametrize("toy", ["grid", "local_grid"])
def test_expand_drops_the_candidates_its_own_visited_record_holds(toy):
    # `local_grid` keys its states by column then fingerprint (24 bytes) and is owned by column;
    # `grid` has no locality, so its keys are its fingerprints.
    spec = ModelSpec.of(f"tests.checker.toys:{toy}", 3)
    model = spec.build()
    key_of, encode = key_function(model, False, 2), codec_for(spec).encode
    frontier = [model.init_states()[0]]
    for _ in range(3):  # level 3 of the grid: (3, 0), (2, 1), (1, 2), (0, 3); level 4 has 3 states
        frontier = list(dict.fromkeys(t for s in frontier for _, t in model.successors(s)))
    successors = {key_of(t) for s in frontier for _, t in model.successors(s)}
    every_state = {key_of(model.init_states()[0])} | {key_of(s) for s in frontier} | successors
    assert {len(k) for k in every_state} == {16 if toy == "grid" else 24}
    if toy == "local_grid":  # owned by column: (3, 1) by partition 1, (2, 2) by 0, (1, 3) by 1
        assert sorted(owner_of(k) % 2 for k in successors) == [0, 1, 1]

    def expand(partitions: int, index: int, visited: set[bytes]) -> tuple[list, object]:
        task = LevelTask(spec, False, (), (), (), True, True, True, 4, partitions)
        records = [(key_of(s), ((0, i), encode(s))) for i, s in enumerate(frontier)]
        records.append((index, FingerprintSet.of(map(fingerprint_of_key, visited))))
        reported: list = []
        out = list(expand_partition(task, reported.extend, index, iter(records)))
        [((level, stage, partition), summary)] = reported
        assert (level, stage, partition) == (4, EXPAND, index)
        return [key for key, _ in out], summary

    everything, plain = expand(0, 0, every_state)  # P unknown: nothing is dropped
    assert sorted(everything) == sorted(successors) and len(successors) == 3
    for index in (0, 1):
        owned = {key for key in every_state if owner_of(key) % 2 == index}
        kept, summary = expand(2, index, owned)
        # Only the candidates of the other partition leave; the counters are those of every edge.
        assert sorted(kept) == sorted(key for key in successors if owner_of(key) % 2 != index)
        assert (summary.generated, summary.evaluations, summary.outdegrees) == (
            plain.generated, plain.evaluations, plain.outdegrees)
        assert summary.candidates == len(kept)
        # A state the partition owns but has not visited is a candidate as before.
        kept, _ = expand(2, index, every_state - successors)
        assert sorted(kept) == sorted(successors)


def test_merge_knows_a_state_by_the_fingerprint_its_key_ends_with():
    task = LevelTask(ModelSpec.of("tests.checker.toys:local_grid", 3), False, (), (), (), True, True, True, 4)
    column = (7).to_bytes(8, "big")
    old, new = fingerprints(2, 5)
    records = [(column + old, ((0, 1), "Up", b"old", ())), (column + new, ((0, 2), "Up", b"new", ())),
               (0, FingerprintSet.of([old]))]
    out = list(merge_partition(task, lambda _: None, 0, iter(records)))
    assert out[0] == (column + new, ((0, 2), b"new"))
    assert sorted(out[1][1]) == sorted([old, new])   # the visited set holds fingerprints


def _generated(model, key_of, depth: int) -> list:
    """Every state generated within `depth` steps of breadth-first search, duplicates included."""
    out = list(model.init_states())
    level, seen = list(out), {key_of(s) for s in out}
    for _ in range(depth):
        following = []
        for s in level:
            for _, t in model.successors(s):
                out.append(t)
                key = key_of(t)
                if key not in seen:
                    seen.add(key)
                    following.append(t)
        level = following
    return out


def test_a_kafka_states_key_is_its_zookeeper_records_digest_then_its_fingerprint():
    model = ModelSpec.kafka(load_preset("tiny")).build()
    key_of = key_function(model, True, 2)
    states = _generated(model, key_of, 6)
    keys: dict[bytes, set[bytes]] = {}
    owners: dict = {}
    brokers: dict = {}
    for s in states:
        rep = model.representative(s)
        key = key_of(s)
        assert key == model.locality(rep) + model.fingerprint(rep) and len(key) == 24
        keys.setdefault(fingerprint_of_key(key), set()).add(key)
        owners.setdefault(rep.zk, set()).add(owner_of(key))
        brokers.setdefault(rep.zk, set()).add(rep.brokers)
    # One key per fingerprint: the locality adds no identity.
    assert all(len(k) == 1 for k in keys.values()) and len(keys) < len(states)
    # States with one ZooKeeper record have one owner, whatever their brokers and queues hold.
    assert all(len(o) == 1 for o in owners.values())
    assert any(len(b) > 1 for b in brokers.values())


def test_on_many_partitions_a_state_is_keyed_and_owned_by_its_fingerprint():
    # Above LOCALITY_PARTITIONS the busiest ZooKeeper records would load their owners unevenly.
    from tests.checker.toys import grid, local_grid

    for model in (ModelSpec.kafka(load_preset("tiny")).build(), local_grid(3)):
        assert uses_locality(model, 2) and uses_locality(model, LOCALITY_PARTITIONS)
        assert not uses_locality(model, LOCALITY_PARTITIONS + 1)
        few, many = key_function(model, True, LOCALITY_PARTITIONS), key_function(model, True, LOCALITY_PARTITIONS + 1)
        states = _generated(model, few, 4)
        assert len(states) > 10
        for s in states:
            assert many(s) == model.fingerprint(model.representative(s)) == fingerprint_of_key(few(s))
            assert len(few(s)) == 24
    assert not uses_locality(grid(3), 2)   # no locality: owned by fingerprint on any P


def test_the_epoch_quotients_locality_is_of_the_normal_form(monkeypatch):
    from kcm.model.checking.epoch_quotient import EpochQuotientModel, normalize_epochs
    from kcm.model.checking.kafka_model import KafkaModel

    model = EpochQuotientModel(load_preset("tiny"))
    key_of = key_function(model, False, 2)
    states = [s for s in _generated(model, key_of, 12) if normalize_epochs(s).zk != s.zk]
    assert states, "no state whose ZooKeeper record holds epochs out of normal form"
    assert all(key_of(s) == key_of(normalize_epochs(s)) for s in states)
    # Without the override, a state and its normal form (one fingerprint) would get two owners.
    monkeypatch.setattr(EpochQuotientModel, "locality", KafkaModel.locality)
    key_of = key_function(model, False, 2)
    assert any(key_of(s) != key_of(normalize_epochs(s)) for s in states)


def test_codec_keeps_the_identity_of_model_constants_only():
    spec = ModelSpec.kafka(load_preset("tiny"))
    model = spec.build()
    codec = StateCodec(model)
    state = model.init_states()[0]
    assert state.zk.partitions[0] is NO_ZNODE
    decoded = codec.decode(codec.encode(state))
    assert decoded == state and decoded.zk.partitions[0] is NO_ZNODE
    # Plain pickle loses it, which is why the codec exists.
    assert pickle.loads(pickle.dumps(state)).zk.partitions[0] is not NO_ZNODE
    copy = PartitionZnode(*NO_ZNODE)
    pair = codec.decode(codec.encode((NO_ZNODE, copy, copy)))
    assert pair[0] is NO_ZNODE and pair[1] == NO_ZNODE and pair[1] is not NO_ZNODE
    assert pair[1] is pair[2]  # sharing inside a state survives, as with pickle


def test_model_spec_builds_and_names_the_problem():
    spec = ModelSpec.of("tests.checker.toys:grid", 3, bugs=((1, 1),))
    assert hash(spec) == hash(ModelSpec.of("tests.checker.toys:grid", 3, bugs=((1, 1),)))
    assert spec.build().bugs == ((1, 1),)
    assert pickle.loads(pickle.dumps(ModelSpec.kafka(load_preset("tiny")))).build().cfg.brokers == 2
    with pytest.raises(ValueError, match="module:callable"):
        ModelSpec("tests.checker.toys.grid").build()
