"""Each historical bug (`kcm variants`, V1..V13) is caught by a scope of the `gate` grid: the named
scope, explored as the sweep explores it (`kcm.sweep.run.run_scope`, the gate's budget) with the
bug put back, reports the variant's property violated (not excused as a known Kafka 2.6
behaviour) with the pinned shortest trace. The scope pinned is the cheapest gate scope found to
catch the bug; `bench/gate_variants.py` measures how soon `kcm sweep --grid gate --fail-fast` does."""

from __future__ import annotations

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.variants import VARIANTS

from kcm.sweep import grid
from kcm.sweep.run import run_scope

#: variant -> (a gate scope that catches it, the length of its property's shortest trace there).
CAUGHT = {
    "V1": ("b2-rf1-p1-expiry+shrink-cold", 5),
    "V2": ("b2-rf2-p1-shrink+move-settled", 5),
    "V3": ("b2-rf1-p1-delete+move-settled", 8),
    "V4": ("b2-rf1-p1-crash+move-settled", 7),
    "V5": ("b2-rf1-p1-crash+shrink-cold", 5),
    "V6": ("b2-rf1-p1-crash+shrink-cold", 4),
    "V7": ("b3-rf3-p1-shrink+shutdown-settled", 5),
    "V8": ("b2-rf2-p1-shrink+shutdown-settled", 5),
    "V9": ("b2-rf1-p1-shrink+delete-cold", 8),
    "V10": ("b2-rf2-p1-crash+shrink-cold", 9),
    "V11": ("b2-rf2-p1-shrink+shutdown-settled", 5),
    "V12": ("b2-rf1-p1-crash+move-settled", 5),
    "V13": ("b2-rf1-p1-expiry+reassign-settled", 3),
}


#: V7's election (ISR order, no liveness filter) differs from 2.6's (assignment order) only with two
#: candidates besides the shutting-down leader, in an ISR order that differs from the assignment's:
#: three replicas, the gate's one three-broker scope. Its whole space is the gate's second largest,
#: so here the search stops at the variant's first violation (breadth first: the shortest).
FIRST_ONLY = {"V7"}


def test_every_historical_variant_is_pinned() -> None:
    assert set(CAUGHT) == {name for name in VARIANTS if name.startswith("V")}


@pytest.fixture(scope="module")
def gate() -> grid.Grid:
    return grid.load("gate")


@pytest.mark.parametrize("variant", sorted(CAUGHT, key=lambda v: int(v[1:])))
def test_a_gate_scope_catches_the_variant(gate: grid.Grid, variant: str) -> None:
    name, steps = CAUGHT[variant]
    scope = next(s for s in grid.with_variant(gate, variant).scopes if s.name == name)
    breaks = VARIANTS[variant].breaks
    if variant in FIRST_ONLY:
        result = explore(KafkaModel(scope.config()), properties=[breaks])
        assert [(v.name, v.trace_length) for v in result.violations] == [(breaks, steps)]
        return
    outcome = run_scope(scope, gate.budget)
    assert (outcome.verdict, outcome.reason) == ("violation", "")
    caught = {b.name: b.steps for b in outcome.violations}
    assert caught.get(breaks) == steps, (breaks, caught)
    assert breaks not in {b.name for b in outcome.known}
