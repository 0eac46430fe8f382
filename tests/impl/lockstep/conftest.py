"""Lock-step comparison of the stepped implementation with the model.

`lockstep(cfg)` returns a `LockStep`: the model's initial state and a `StepCluster` built the same
way, compared after every action (`abstract(impl) == kcm.model.spec.step(cfg, state, action)`); a
difference fails the test with the action sequence and the differing fields.

The model runs as it is, unpatched. The implementation follows the model where the two still
differ through `ModelAlignment.model()` (see `kcm.impl.model_alignment`; the differences
themselves are pinned in `test_model_disagreements.py`).
"""

from __future__ import annotations

import random

import pytest
from kcm.impl.abstraction import abstract, describe_difference
from kcm.impl.model_alignment import ModelAlignment
from kcm.impl.step_cluster import StepCluster
from kcm.model import actions as a
from kcm.model.spec import enabled_actions, init_states, step

# ---- the lock-step driver ------------------------------------------------------------------------


class LockStep:
    """The model state and the stepped implementation, compared after every action."""

    HEALING = (a.ControllerProcessEvent, a.NetworkDeliver, a.BrokerNoticeExpiry, a.LeaderExpandIsr)

    def __init__(self, cfg, alignment: ModelAlignment | None = None) -> None:
        self.cfg = cfg
        self.state = init_states(cfg)[0]
        self.impl = StepCluster.initial(cfg, alignment=alignment)
        self.trace: list = []
        self.check()

    def check(self, expected=None) -> None:
        expected = self.state if expected is None else expected
        actual = abstract(self.impl)
        if actual != expected:
            lines = "\n".join(f"  {x}" for x in self.trace)
            diff = "\n".join(f"  {d}" for d in describe_difference(expected, actual))
            pytest.fail(f"the implementation differs from the model after:\n{lines}\n{diff}", pytrace=False)

    def apply(self, action) -> None:
        assert action in enabled_actions(self.cfg, self.state), f"{action} is not enabled in the model"
        nxt = step(self.cfg, self.state, action)
        assert nxt is not None, f"{action} overflows an event queue"
        self.impl.apply(action)
        self.trace.append(action)
        self.check(nxt)
        self.state = nxt

    def drain(self, limit: int = 1000) -> int:
        """Apply the first enabled healing action (in the model's order) until there is none."""
        for n in range(limit):
            options = [x for x in enabled_actions(self.cfg, self.state)
                       if isinstance(x, self.HEALING) and step(self.cfg, self.state, x) is not None]
            if not options:
                return n
            self.apply(options[0])
        raise AssertionError(f"no quiescence within {limit} healing actions")

    def walk(self, rng: random.Random, steps: int) -> int:
        """Up to `steps` random enabled actions; returns how many were taken."""
        for n in range(steps):
            options = [x for x in enabled_actions(self.cfg, self.state) if step(self.cfg, self.state, x) is not None]
            if not options:
                return n
            self.apply(rng.choice(options))
        return steps


@pytest.fixture
def lockstep():
    """`lockstep(cfg, alignment=None)` -> a `LockStep`; the implementations are closed afterwards."""
    made = []

    def make(cfg, alignment=None) -> LockStep:
        run = LockStep(cfg, alignment)
        made.append(run)
        return run

    yield make
    for run in made:
        run.impl.close()
