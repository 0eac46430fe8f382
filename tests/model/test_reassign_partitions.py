"""The legacy `/admin/reassign_partitions` znode naming several partitions at once.

The admin tool writes one znode for the whole plan (`AdminReassignPartitions`); the controller
starts every partition it names and, as each completes, rewrites the znode without it
(`maybeRemoveFromZkReassignment`), deleting it with the last
(kafka@2.6.x:core/src/main/scala/kafka/controller/KafkaController.scala, lines 935-958 and
1538-1560). A new controller resumes what the znode still names.
"""

from __future__ import annotations

import random

import pytest
from kcm.impl.abstraction import abstract
from kcm.impl.model_alignment import ModelAlignment
from kcm.impl.step_cluster import StepCluster
from kcm.model import actions as A
from kcm.model.catalogue.settledness import quiescent
from kcm.model.config import ConfigError, ModelConfig
from kcm.model.spec import enabled_actions, init_states, settle, settle_path, step

CFG = ModelConfig.from_mapping(dict(brokers=3, topics=1, partitions=2, replication_factor=2, max_broker_crashes=0,
                                    max_session_expiries=0, max_reassignments=1, reassign_targets="replace-one",
                                    reassign_partitions_at_once=2, max_controller_moves=1))
#: Partition 0 from (0, 1) to (2, 1) (the leader moves), partition 1 from (1, 2) to (1, 0) (it stays).
PLAN = A.AdminReassignPartitions(((0, (2, 1)), (1, (1, 0))))


def _heal(state, until=lambda s: False):
    """The settled run's healing actions, first enabled first, until `until` holds or quiescence."""
    path = []
    for action in settle_path(CFG, state):
        if until(state):
            break
        state = step(CFG, state, action)
        path.append(action)
    return state, path


def _start():
    cold = init_states(CFG)[0]
    settled = settle(CFG, cold)
    assert PLAN in enabled_actions(CFG, settled)
    return settle_path(CFG, cold), step(CFG, settled, PLAN)


def test_the_admin_may_name_several_partitions_only_when_the_config_allows_it() -> None:
    settled = settle(CFG, init_states(CFG)[0])
    several = [a for a in enabled_actions(CFG, settled) if isinstance(a, A.AdminReassignPartitions)]
    assert len(several) == 2 * 2   # two replace-one targets for each of the two partitions
    single = ModelConfig.from_mapping({f: getattr(CFG, f) for f in CFG.__dataclass_fields__
                                       if f not in ("description", "overlapping", "reassign_partitions_at_once")})
    assert not any(isinstance(a, A.AdminReassignPartitions)
                   for a in enabled_actions(single, settle(single, init_states(single)[0])))


def test_the_controller_rewrites_the_znode_as_each_partition_completes() -> None:
    _, state = _start()
    assert state.zk.reassign == ((2, 1), (1, 0))
    seen = [state.zk.reassign]
    for action in settle_path(CFG, state):
        state = step(CFG, state, action)
        if state.zk.reassign != seen[-1]:
            seen.append(state.zk.reassign)
    # partition 0 completes first and leaves the znode; the znode goes with partition 1
    assert seen == [((2, 1), (1, 0)), ((), (1, 0)), ((), ())]
    assert quiescent(state) and state.zk.assignment == ((2, 1), (1, 0))
    assert (state.zk.adding, state.zk.removing) == (((), ()), ((), ()))


def test_a_new_controller_resumes_what_the_znode_still_names() -> None:
    _, state = _start()
    state, _ = _heal(state, until=lambda s: s.zk.reassign == ((), (1, 0)))
    assert state.zk.reassign == ((), (1, 0)) and state.zk.assignment[0] == (2, 1)
    state = step(CFG, state, A.AdminMoveController())
    state = settle(CFG, state)
    assert quiescent(state) and state.zk.reassign == ((), ())
    assert state.zk.assignment == ((2, 1), (1, 0))


def test_the_implementation_agrees_and_kafka_settles_the_same_in_every_order() -> None:
    prefix, state = _start()
    _, path = _heal(state, until=lambda s: s.zk.reassign == ((), (1, 0)))
    actions = prefix + [PLAN] + path + [A.AdminMoveController()]
    # the implementation as the model, after every action, and on to quiescence
    impl = StepCluster.initial(CFG, alignment=ModelAlignment.model())
    model = init_states(CFG)[0]
    try:
        for action in actions + settle_path(CFG, _replay(actions)):
            model = step(CFG, model, action)
            impl.apply(action)
            assert abstract(impl) == model, action
    finally:
        impl.close()
    # Kafka 2.6's settings, healed in several orders
    for seed in (None, 1, 2, 3, 4):
        kafka = StepCluster.initial(CFG, alignment=ModelAlignment())
        try:
            for action in actions:
                kafka.apply(action)
            kafka.scheduler.run_until_quiet(None if seed is None else random.Random(seed))
            end = abstract(kafka)
        finally:
            kafka.close()
        assert quiescent(end) and end.zk.reassign == ((), ()) and end.zk.assignment == ((2, 1), (1, 0))


def _replay(actions):
    state = init_states(CFG)[0]
    for action in actions:
        state = step(CFG, state, action)
    return state


def test_more_partitions_than_the_config_has_is_refused() -> None:
    with pytest.raises(ConfigError, match="reassign_partitions_at_once"):
        ModelConfig.from_mapping(dict(topics=1, partitions=2, reassign_partitions_at_once=3))
