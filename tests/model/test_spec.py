"""The Kafka model as a transition system: pinned state counts, goals, symmetry, determinism."""

from __future__ import annotations

import random
from collections import deque

import pytest

from kcm import config
from kcm.checker.bfs import explore
from kcm.model import actions as A
from kcm.model.cluster import NO_ZNODE, Cluster
from kcm.model.config import ModelConfig
from kcm.model.spec import KafkaModel, enabled_actions, init_states, step
from kcm.model.symmetry import permute, representative

TINY = config.load_preset("tiny")


@pytest.fixture(scope="module")
def tiny_results():
    return {sym: explore(KafkaModel(TINY, symmetry=sym), symmetry=sym) for sym in (True, False)}


def test_tiny_state_space_is_pinned(tiny_results) -> None:
    for sym, r in tiny_results.items():
        assert r.verdict == "pass", (sym, r.summary_lines())
        assert (r.stats.distinct, r.stats.generated, r.stats.depth) == (10_294, 30_669, 30)


def test_tiny_meets_every_goal_with_pinned_witness_lengths(tiny_results) -> None:
    goals = tiny_results[True].goals
    assert {name: g.trace_length for name, g in goals.items()} == {
        "ControllerFailsOver": 4, "PartitionOfflineAndBack": 12}


def test_symmetry_never_enlarges_and_keeps_the_verdict(tiny_results) -> None:
    on, off = tiny_results[True], tiny_results[False]
    assert on.stats.distinct <= off.stats.distinct
    assert on.verdict == off.verdict


def _reachable(cfg: ModelConfig, limit: int) -> list[Cluster]:
    seen = set()
    queue = deque(init_states(cfg))
    out = []
    while queue and len(out) < limit:
        s = queue.popleft()
        if s in seen:
            continue
        seen.add(s)
        out.append(s)
        for a in enabled_actions(cfg, s):
            t = step(cfg, s, a)
            if t is not None and t not in seen:
                queue.append(t)
    return out


def _permute_action(a, pi):
    fields = {}
    for name in a.__dataclass_fields__:
        value = getattr(a, name)
        if name in ("broker", "src", "dst", "follower"):
            value = pi[value]
        elif name == "target":
            value = tuple(pi[b] for b in value)
        fields[name] = value
    return type(a)(**fields)


@pytest.mark.parametrize("preset", ["tiny", "v7", "v4"])
def test_the_transition_relation_is_equivariant_under_broker_renaming(preset) -> None:
    """step(pi(s), pi(a)) == pi(step(s, a)) on sampled reachable states: what makes symmetry sound."""
    cfg = config.load_preset(preset)
    rng = random.Random(7)
    states = _reachable(cfg, 3000)
    for s in rng.sample(states, 300):
        pi = tuple(rng.sample(range(cfg.brokers), cfg.brokers))
        ps = permute(s, pi)
        assert {_permute_action(a, pi) for a in enabled_actions(cfg, s)} == set(enabled_actions(cfg, ps))
        for a in enabled_actions(cfg, s):
            t = step(cfg, s, a)
            assert step(cfg, ps, _permute_action(a, pi)) == (None if t is None else permute(t, pi))


def test_representative_is_canonical_over_the_orbit() -> None:
    cfg = config.load_preset("v4")
    rng = random.Random(3)
    for s in rng.sample(_reachable(cfg, 2000), 100):
        rep = representative(s)
        for _ in range(3):
            pi = tuple(rng.sample(range(cfg.brokers), cfg.brokers))
            assert representative(permute(s, pi)) == rep


def test_fingerprints_are_equal_for_equal_states_built_apart() -> None:
    model = KafkaModel(TINY)
    a = init_states(TINY)[0]
    b = init_states(TINY)[0]
    assert a is not b and model.fingerprint(a) == model.fingerprint(b)
    t = step(TINY, a, A.ControllerProcessEvent(0))
    assert model.fingerprint(t) != model.fingerprint(a)
    assert len(model.fingerprint(t)) == 16


def test_the_first_controller_creates_the_partition_states() -> None:
    s0 = init_states(TINY)[0]
    assert s0.zk.controller == -1 and all(z is NO_ZNODE for z in s0.zk.partitions)
    s1 = step(TINY, s0, A.ControllerProcessEvent(1))
    assert s1.zk.controller == 1 and s1.zk.controller_epoch == 1
    z = s1.zk.partitions[0]
    assert (z.leader, z.leader_epoch, z.isr, z.controller_epoch, z.version) == (0, 0, (0, 1), 1, 0)
    assert s1.brokers[1].active and s1.brokers[1].ctx.epoch == 1
