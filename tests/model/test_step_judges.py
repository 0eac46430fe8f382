"""`AlwaysStep.judges` is honest: a transition invariant declared to judge only some action kinds
holds on every reachable edge of any other kind (so the explorer may skip it there), and the
explorer that skips it finds exactly what the one that calls it everywhere finds.

The presets differ in their action mix: crashes and ISR shrinks (tiny), ZooKeeper faults (lost
replies, connection losses, controlled shutdown: zkfaults), a zombie controller (v1), preferred
elections and controller moves (v3), controlled shutdown on three brokers (v7), topic deletion
(v9), controlled shutdown over an ISR shrink (v11) and a reassignment (v13). The variants break
invariants, which must not matter here.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.contract import AlwaysStep
from kcm.model.checking.kafka_model import KafkaModel

from kcm import config

#: preset -> depth bound (None: the whole space).
PRESETS = {"tiny": None, "zkfaults": None, "v1": None, "v3": None, "v7": 8, "v9": None, "v11": 14, "v13": 12}


class _JudgesChecked(KafkaModel):
    """The model with one extra transition invariant per declared `judges`, judged on every edge:
    on a step of a kind outside `judges`, the invariant holds."""

    def properties(self):
        props = list(super().properties())
        for p in list(props):
            if isinstance(p, AlwaysStep) and p.judges is not None:
                props.append(AlwaysStep(f"judges:{p.name}",
                                        lambda s, a, t, p=p: type(a) in p.judges or p.holds(s, a, t)))
        return props


class _Undeclared(KafkaModel):
    """The model with every `judges` dropped: the explorer calls each step property on every edge."""

    def properties(self):
        return [replace(p, judges=None) if isinstance(p, AlwaysStep) else p for p in super().properties()]


def test_the_kafka_model_declares_judges() -> None:
    """Most transition invariants judge controller events; the test below would pass vacuously otherwise."""
    steps = [p for p in KafkaModel(config.load_preset("tiny")).properties() if isinstance(p, AlwaysStep)]
    declared = [p.name for p in steps if p.judges is not None]
    assert len(declared) >= len(steps) - 2, [p.name for p in steps if p.judges is None]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_an_invariant_holds_on_every_edge_of_a_kind_it_does_not_judge(preset) -> None:
    model = _JudgesChecked(config.load_preset(preset), symmetry=True)
    names = [p.name for p in model.properties() if p.name.startswith("judges:")]
    assert names
    r = explore(model, symmetry=True, properties=names, max_depth=PRESETS[preset], stop_on_violation=False)
    assert not r.violations, [(v.name, v.trace_length) for v in r.violations]
    assert r.verdict in ("pass", "incomplete")


def _outcome(r):
    return (r.verdict, r.stats.distinct, r.stats.generated, r.stats.frontier_sizes,
            [(v.name, v.kind, v.trace) for v in r.violations],
            {name: (g.met, g.trace) for name, g in r.goals.items()}, r.coverage)


@pytest.mark.parametrize("preset", ["tiny", "v1", "v9", "v11"])
@pytest.mark.parametrize("stop", [True, False])
def test_the_explorer_finds_the_same_with_and_without_judges(preset, stop) -> None:
    cfg = config.load_preset(preset)
    depth = PRESETS[preset]
    ours = explore(KafkaModel(cfg, symmetry=True), symmetry=True, max_depth=depth, stop_on_violation=stop)
    every_edge = explore(_Undeclared(cfg, symmetry=True), symmetry=True, max_depth=depth, stop_on_violation=stop)
    assert _outcome(ours) == _outcome(every_edge)
