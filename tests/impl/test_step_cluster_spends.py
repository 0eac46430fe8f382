"""A bounded action spends its budget in the implementation exactly when it does in the model.

The model's `spec._SPENDS_WHEN` lists the kinds whose budget is spent only sometimes (a session
expiry of a dead broker heals; a refused controlled shutdown retries for free); the
implementation's `step_cluster.SPENDS_WHEN` reads the same rule on its servers. The lock-step walks
compare the `spent` counters after every action (impl/abstraction.py), but only where a walk
happens to draw such a step: here the kinds are the same, and each rule gives the model's answer
on the states that decide it."""

from __future__ import annotations

from kcm.impl.abstraction import abstract
from kcm.impl.step_cluster import SPENDS_WHEN, StepCluster
from kcm.model import spec
from kcm.model.actions import BrokerCrash, BrokerRequestControlledShutdown, ZkSessionExpire
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle_path, step

CFG = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1,
                                "max_session_expiries": 2, "max_controlled_shutdowns": 1})


def test_the_same_kinds_spend_only_sometimes() -> None:
    assert set(SPENDS_WHEN) == set(spec._SPENDS_WHEN) == {ZkSessionExpire, BrokerRequestControlledShutdown}


def test_each_rule_answers_as_the_model_does() -> None:
    state = init_states(CFG)[0]
    impl = StepCluster.initial(CFG)
    try:
        for action in settle_path(CFG, state):
            state = step(CFG, state, action)
            impl.apply(action)
        answers = []
        for action in (ZkSessionExpire(1), BrokerRequestControlledShutdown(0), BrokerCrash(1), ZkSessionExpire(1)):
            rule = spec._SPENDS_WHEN.get(type(action))
            if rule is not None:
                mine = SPENDS_WHEN[type(action)](impl, action)
                assert mine == rule(state, action), action
                answers.append(mine)
            state = step(CFG, state, action)
            impl.apply(action)
            assert abstract(impl).spent == state.spent, action
        # a live broker's expiry spends, a first controlled shutdown spends, a dead broker's does not
        assert answers == [True, True, False]
    finally:
        impl.close()
