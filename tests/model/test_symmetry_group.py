"""Which broker renamings are symmetries. Topic creation chooses among every placement Kafka's
`AdminUtils` can produce (model/placement.py), a set closed under renaming, and broker epochs are
per-broker incarnations, so every renaming is a symmetry; the subgroup machinery stays for
configs that would need it and is tested as a pure function."""

from __future__ import annotations

import itertools
import random

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model import actions as A
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.checking.symmetry import permute, representative
from kcm.model.config import ModelConfig
from kcm.model.placement import assign_replicas, placements
from kcm.model.spec import default_assignment, enabled_actions, init_states, step, topic_placements

from kcm import config
from tests.model.walks import reachable, rename_action

# One topic (RF 1) that can be deleted and created again, on three brokers.
RECREATE = ModelConfig(brokers=3, topics=1, partitions=1, replication_factor=1, max_broker_crashes=0,
                       max_session_expiries=0, max_topic_deletions=1, max_topic_creations=1)


def test_presets_get_every_renaming() -> None:
    for name in ("tiny", "default", "v4"):
        assert KafkaModel(config.load_preset(name)).has_symmetry, name
    assert not KafkaModel(config.load_preset("default"), symmetry=False).has_symmetry


def test_kafka_placements_follow_admin_utils() -> None:
    # The example in AdminUtils' comment: 5 brokers, start index 0, shift 0 (p0 -> 0, 1, 2).
    assert assign_replicas((0, 1, 2, 3, 4), 5, 3, 0, 0)[:2] == ((0, 1, 2), (1, 2, 3))
    # After a round of n partitions the follower shift grows by one (p5 -> 0, 2, 3).
    assert assign_replicas((0, 1, 2, 3, 4), 6, 3, 0, 0)[5] == (0, 2, 3)
    # One partition, RF 2 on three brokers: every ordered pair of distinct brokers.
    assert set(placements(3, 1, 2)) == {((a, b),) for a, b in itertools.permutations(range(3), 2)}
    # Two partitions, RF 2 on three brokers: the "chain" (a,b),(b,c) and its other shift (a,c),(b,a).
    assert len(placements(3, 2, 2)) == 12
    # Four brokers, RF 3, two partitions: three follower shifts, 24 renamings each.
    assert len(placements(4, 2, 3)) == 72


@pytest.mark.parametrize("shape", [(2, 1, 2), (3, 1, 2), (3, 2, 2), (3, 2, 3), (4, 2, 3), (4, 1, 2)])
def test_placements_are_closed_under_renaming(shape) -> None:
    brokers = shape[0]
    found = set(placements(*shape))
    for pi in itertools.permutations(range(brokers)):
        assert {tuple(tuple(pi[b] for b in r) for r in p) for p in found} == found


def test_the_default_spread_comes_first() -> None:
    cfg = config.load_preset("default")
    assert topic_placements(cfg, 1)[0] == (default_assignment(cfg, 1),) == ((1, 2),)
    inits = init_states(cfg)
    # run 0 and the three overlapping runs on the default spread, then the 5 other placements' cold starts
    assert len(inits) == 4 + 5
    assert [s.scenario for s in inits] == [0, 1, 2, 3] + [0] * 5
    assert all(s.zk.assignment[0] == (0, 1) for s in inits[:4])
    assert {s.zk.assignment[0] for s in inits} == set(itertools.permutations(range(3), 2))


def test_creation_commutes_with_renaming_now() -> None:
    """What used to break symmetry: after topic 0 is deleted no assignment is left, and a creation
    wrote (0,) whatever the renaming. Now the creations enabled in a renamed state are the
    renamed creations, and each lands on the renamed state."""
    for s in reachable(RECREATE, 20_000):
        if not any(s.zk.assignment) and any(type(a) is A.AdminCreateTopic for a in enabled_actions(RECREATE, s)) \
                and s.brokers[0] != s.brokers[1]:
            break
    else:
        raise AssertionError("no state with the topic deleted and a creation enabled")
    pi = (1, 0, 2)
    creations = [a for a in enabled_actions(RECREATE, s) if type(a) is A.AdminCreateTopic]
    assert {a.replicas for a in creations} == {((0,),), ((1,),), ((2,),)}
    for a in creations:
        assert step(RECREATE, permute(s, pi), rename_action(a, pi)) == permute(step(RECREATE, s, a), pi)


def test_the_transition_relation_is_equivariant_under_every_renaming() -> None:
    rng = random.Random(11)
    for s in rng.sample(reachable(RECREATE, 4000), 300):
        pi = tuple(rng.sample(range(3), 3))
        ps = permute(s, pi)
        assert {rename_action(a, pi) for a in enabled_actions(RECREATE, s)} == set(enabled_actions(RECREATE, ps))
        for a in enabled_actions(RECREATE, s):
            t = step(RECREATE, s, a)
            assert step(RECREATE, ps, rename_action(a, pi)) == (None if t is None else permute(t, pi))


def test_the_representative_is_canonical_over_every_renaming() -> None:
    for s in random.Random(5).sample(reachable(RECREATE, 3000), 100):
        for pi in ((0, 2, 1), (1, 2, 0)):
            assert representative(permute(s, pi)) == representative(s)


def test_reduction_with_creation_keeps_the_verdict_and_the_coverage() -> None:
    # No crash, so ControllerFailsOver cannot be met: goals are not asked for here.
    on = explore(KafkaModel(RECREATE, symmetry=True), symmetry=True, goals_required=False)
    off = explore(KafkaModel(RECREATE, symmetry=False), symmetry=False, goals_required=False)
    assert on.verdict == off.verdict == "pass"
    # Three placements of the topic at the start and three for its re-creation, all one orbit
    # each: 5.6x (it was 1.00x, 3,674 both ways, while creation pinned the topic on broker 0).
    assert (on.stats.distinct, off.stats.distinct) == (2_308, 12_966)
    assert (on.stats.depth, off.stats.depth) == (20, 20)
    assert on.coverage.edges_taken == off.coverage.edges_taken
