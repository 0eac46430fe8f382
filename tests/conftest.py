"""Explorations shared by the whole test session, each run once however many modules read it.

The `default` preset (the CI gate) explored whole takes most of a minute on a quiet machine and
several on a loaded one: `default_whole` runs it once, for the pinned counts, goals and coverage
(tests/model/test_default_preset.py). The Spark explorer is compared with the sequential one on
`default` cut at `DEFAULT_DEPTH` (`default_to_depth`): every level's distinct count, the generated
count, the verdict, goals and coverage equal, which is a stronger check than the pinned totals of
a second whole run, in a fraction of its time. Whole-preset runs on Spark belong to `make run` and
`bench/`.
"""

from __future__ import annotations

import pytest

from kcm import config
from kcm.checker.bfs import CheckOptions, explore
from kcm.model.spec import KafkaModel

#: Deep enough for a controller failover, a controlled shutdown and a reassignment (goals met at
#: 3, 5 and 7 steps) and the first overlapping runs; about 41,000 states.
DEFAULT_DEPTH = 9


@pytest.fixture(scope="session")
def default_whole():
    """The sequential explorer's complete run of `default`."""
    return explore(KafkaModel(config.load_preset("default")))


@pytest.fixture(scope="session")
def default_to_depth():
    """The sequential explorer on `default`, cut at `DEFAULT_DEPTH` (verdict incomplete)."""
    return explore(KafkaModel(config.load_preset("default")), CheckOptions(max_depth=DEFAULT_DEPTH))
