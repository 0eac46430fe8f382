"""The pieces the Spark explorer is built from, without Spark: the per-partition fingerprint set,
the partition function, the state codec and the model spec."""

from __future__ import annotations

import pickle
import random

import pytest

from kcm.config import load_preset
from kcm.model.cluster import NO_ZNODE, PartitionZnode
from kcm.spark_explore.codec import StateCodec
from kcm.spark_explore.fpset import FingerprintSet
from kcm.spark_explore.level import (
    EXPAND, MERGE, LevelTask, codec_for, expand_partition, fingerprint_function, is_candidate,
    is_frontier, is_visited, keep_first, merge_partition, owner_of,
)
from kcm.spark_explore.spec import ModelSpec


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


def test_expand_drops_the_candidates_its_own_visited_record_holds():
    spec = ModelSpec.of("tests.checker.toys:grid", 3)
    model = spec.build()
    fp_of, encode = fingerprint_function(model, False), codec_for(spec).encode
    frontier = [model.init_states()[0]]
    for _ in range(3):  # level 3 of the grid: (3, 0), (2, 1), (1, 2), (0, 3); level 4 has 3 states
        frontier = list(dict.fromkeys(t for s in frontier for _, t in model.successors(s)))
    successors = {fp_of(t) for s in frontier for _, t in model.successors(s)}
    every_state = {fp_of(model.init_states()[0])} | {fp_of(s) for s in frontier} | successors

    def expand(partitions: int, index: int, visited: set[bytes]) -> tuple[list, object]:
        task = LevelTask(spec, False, (), (), (), True, True, True, 4, partitions)
        records = [(fp_of(s), ((0, i), encode(s))) for i, s in enumerate(frontier)]
        records.append((index, FingerprintSet.of(visited)))
        reported: list = []
        out = list(expand_partition(task, reported.extend, index, iter(records)))
        [((level, stage, partition), summary)] = reported
        assert (level, stage, partition) == (4, EXPAND, index)
        return [fp for fp, _ in out], summary

    everything, plain = expand(0, 0, every_state)  # P unknown: nothing is dropped
    assert sorted(everything) == sorted(successors) and len(successors) == 3
    for index in (0, 1):
        owned = {fp for fp in every_state if owner_of(fp) % 2 == index}
        kept, summary = expand(2, index, owned)
        # Only the candidates of the other partition leave; the counters are those of every edge.
        assert sorted(kept) == sorted(fp for fp in successors if owner_of(fp) % 2 != index)
        assert (summary.generated, summary.evaluations, summary.outdegrees) == (
            plain.generated, plain.evaluations, plain.outdegrees)
        assert summary.candidates == len(kept)
        # A fingerprint the partition owns but has not visited is a candidate as before.
        kept, _ = expand(2, index, every_state - successors)
        assert sorted(kept) == sorted(successors)


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
