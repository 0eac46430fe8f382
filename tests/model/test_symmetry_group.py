"""Which broker renamings are symmetries: topic creation places replicas by id, so while a creation
is possible only the renamings that fix every assignment it can write are allowed."""

from __future__ import annotations

import random

from kcm import config
from kcm.checker.bfs import explore
from kcm.model import actions as A
from kcm.model.config import ModelConfig
from kcm.model.spec import KafkaModel, creatable_assignments, enabled_actions, step
from kcm.model.symmetry import permute, representative_in, symmetry_group
from tests.model.walks import reachable, rename_action

# One topic on broker 0 (RF 1) that can be deleted and created again, on three brokers.
RECREATE = ModelConfig(brokers=3, topics=1, partitions=1, replication_factor=1, max_broker_crashes=0,
                       max_session_expiries=0, max_topic_deletions=1, max_topic_creations=1)


def test_the_group_fixes_what_a_creation_can_write() -> None:
    assert creatable_assignments(RECREATE) == [(0,)]
    assert symmetry_group(3, [(0,)]) == ((0, 1, 2), (0, 2, 1))
    assert len(symmetry_group(3, [])) == 6
    assert symmetry_group(3, [(0, 1), (1, 2)]) == ((0, 1, 2),)


def test_presets_get_the_group_their_creations_allow() -> None:
    groups = {name: KafkaModel(config.load_preset(name)).symmetry_group for name in ("tiny", "default", "v4")}
    assert len(groups["tiny"]) == 2          # no creation: both renamings of two brokers
    assert len(groups["v4"]) == 6            # no creation: all of S3
    assert groups["default"] == ((0, 1, 2),)  # topic 1 is created on (1, 2): nothing but the identity
    assert KafkaModel(config.load_preset("default")).has_symmetry is False


def test_a_renaming_that_moves_a_creatable_assignment_is_not_a_symmetry() -> None:
    """Why the group is restricted: after topic 0 is deleted no assignment is left, and renaming
    brokers 0 and 1 commutes with every action but the creation, which writes (0,) either way."""
    for s in reachable(RECREATE, 20_000):
        if not any(s.zk.assignment) and A.AdminCreateTopic(0) in enabled_actions(RECREATE, s) \
                and s.brokers[0] != s.brokers[1]:
            break
    else:
        raise AssertionError("no state with the topic deleted and a creation enabled")
    pi = (1, 0, 2)
    created = step(RECREATE, s, A.AdminCreateTopic(0))
    created_from_renamed = step(RECREATE, permute(s, pi), A.AdminCreateTopic(0))
    assert created_from_renamed != permute(created, pi)


def test_the_transition_relation_is_equivariant_under_the_group() -> None:
    model = KafkaModel(RECREATE)
    assert model.symmetry_group == ((0, 1, 2), (0, 2, 1))
    rng = random.Random(11)
    pi = (0, 2, 1)
    for s in rng.sample(reachable(RECREATE, 4000), 300):
        ps = permute(s, pi)
        assert {rename_action(a, pi) for a in enabled_actions(RECREATE, s)} == set(enabled_actions(RECREATE, ps))
        for a in enabled_actions(RECREATE, s):
            t = step(RECREATE, s, a)
            assert step(RECREATE, ps, rename_action(a, pi)) == (None if t is None else permute(t, pi))


def test_the_representative_over_a_subgroup_is_canonical() -> None:
    group = symmetry_group(3, [(0,)])
    for s in random.Random(5).sample(reachable(RECREATE, 3000), 100):
        assert representative_in(permute(s, (0, 2, 1)), group) == representative_in(s, group)


def test_reduction_by_the_subgroup_keeps_the_verdict_and_never_enlarges() -> None:
    # No crash, so ControllerFailsOver cannot be met: goals are not asked for here.
    on = explore(KafkaModel(RECREATE, symmetry=True), symmetry=True, goals_required=False)
    off = explore(KafkaModel(RECREATE, symmetry=False), symmetry=False, goals_required=False)
    assert on.verdict == off.verdict == "pass"
    # Brokers 1 and 2 registered with different czxids, which a renaming does not touch, so no two
    # reachable states are renamings of each other here: the reduction finds nothing to merge.
    assert on.stats.distinct == off.stats.distinct == 3674
    assert on.coverage.edges_taken == off.coverage.edges_taken
