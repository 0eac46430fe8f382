"""Fixtures shared across test folders: liveness explorations of the Kafka presets, each run once
per session (the liveness tests, the CLI tests and the reachable-graph diagram read the same ones)."""

from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=None)
def liveness_run(preset: str):
    """`(model, exploration result with its kept graph, liveness result)` for a preset, as
    `kcm explore --liveness` runs it (symmetry off, not stopping at a safety violation)."""
    from kcm import config
    from kcm.checker.bfs import explore
    from kcm.checker.liveness import check_liveness
    from kcm.model.spec import KafkaModel

    model = KafkaModel(config.load_preset(preset), symmetry=False)
    result = explore(model, keep_graph=True, symmetry=False, stop_on_violation=False)
    return model, result, check_liveness(model, result.extra["graph"])


@pytest.fixture(scope="session")
def liveness_of():
    """`liveness_of(preset)`: the cached `liveness_run`."""
    return liveness_run
