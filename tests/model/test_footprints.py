"""The Kafka model's footprints (model/checking/footprints.py) checked on every reachable state, and partial-
order reduction on the presets: the same verdict and violated property with it on and off.

The footprints are what makes the reduction sound, and they are written by hand from the code, so
they are checked dynamically on every reachable state of `tiny`, `zkfaults` and `elect` (symmetry off, so
that every concrete state is visited):

- writes: every component a step changes is among its group's declared writes;
- C1 in its local form: for every two enabled actions of groups declared independent, each stays
  enabled after the other and both orders reach the same state;
- the enabling sets: a step that enables a group writes one of the components named for it.

Reduction measured (docs/benchmarks.md): none with every property checked (the quiescence and
settled properties read nearly the whole state, so every action is visible), and 0-2% with
deadlock alone or one ZooKeeper invariant: a delivery's stubborn closure holds its sender's
controller thread whenever that thread has an event queued (it may drop or extend the channel),
and a leader's ISR change whenever a delivery may make its follower catch up. The counts are
pinned on and off.
"""

from __future__ import annotations

import functools

import pytest
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.por import Reducer, dependent
from kcm.model.checking.footprints import components, enablers, group_of, groups
from kcm.model.checking.kafka_model import KafkaModel

from kcm.config import load_preset


@functools.lru_cache(maxsize=2)
def _graph(preset: str) -> list:
    """Every reachable state of `preset` (symmetry off) with its successors, computed once."""
    return _reachable(KafkaModel(load_preset(preset), symmetry=False))


def _reachable(model: KafkaModel) -> list:
    seen = set(model.init_states())
    todo = list(seen)
    out = []
    while todo:
        s = todo.pop()
        succ = model.successors(s)
        out.append((s, succ))
        for _, t in succ:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return out


@pytest.mark.parametrize("preset, states", [("tiny", 20_588), ("zkfaults", 21_555), ("elect", 16_198),
                                            ("logdir", 17_495)])
def test_footprints_cover_every_write_and_independent_actions_commute(preset, states):
    cfg = load_preset(preset)
    model = KafkaModel(cfg, symmetry=False)
    fps = groups(cfg)
    graph = _graph(preset)
    assert len(graph) == states
    pairs = 0
    for s, succ in graph:
        before = components(s)
        nexts = {}
        for a, t in succ:
            g = group_of(s, a)
            assert g in fps, a
            after = components(t)
            changed = {k for k, v in before.items() if after[k] != v}
            assert changed <= fps[g].writes, (a, changed - fps[g].writes)
            nexts[a] = t
        actions = list(nexts)
        for i, a in enumerate(actions):
            for b in actions[i + 1:]:
                if dependent(fps[group_of(s, a)], fps[group_of(s, b)]):
                    continue
                pairs += 1
                ta, tb = nexts[a], nexts[b]
                after_a = dict(model.successors(ta))
                after_b = dict(model.successors(tb))
                assert b in after_a and a in after_b, (a, b)
                assert after_a[b] == after_b[a], (a, b)
    assert pairs > 0  # the check is not vacuous


@pytest.mark.parametrize("preset", ["tiny", "zkfaults", "elect", "logdir"])
def test_enabling_sets_are_necessary(preset):
    """Every step that enables a group with no enabled action writes a component of each of the
    group's enabling sets (the one-step form: with each set read off a false conjunct of the
    guards, a path that writes none of it keeps the conjunct false)."""
    cfg = load_preset(preset)
    universe = list(groups(cfg))
    nes = enablers(cfg)
    graph = _graph(preset)
    enabled = {s: {group_of(s, a) for a, _ in succ} for s, succ in graph}
    checked = 0
    for s, succ in graph:
        before = components(s)
        for g in universe:
            if g in enabled[s]:
                continue
            options = nes(s, g)
            if options is None:
                continue
            options = options if isinstance(options, tuple) else (options,)
            for a, t in succ:
                if g not in enabled[t]:
                    continue
                after = components(t)
                changed = {k for k, v in before.items() if after[k] != v}
                if group_of(s, a)[0].startswith("cpe"):
                    changed.add(("send", group_of(s, a)[1]))
                for alt in options:
                    checked += 1
                    assert changed & alt, (g, a, alt)
    assert checked > 0


@pytest.mark.parametrize("preset", ["tiny", "zkfaults", "elect", "logdir"] + [f"v{i}" for i in range(1, 14)])
def test_por_keeps_verdict_and_violated_property(preset):
    """Every variant is still caught with POR on, by the same property, and every small preset
    still passes. (`default`, `deep`, `four`, `large` and `l1` are too big for a test and are
    measured in bench/ instead; the mutation configs are bench/mutation/*.toml.)"""
    cfg = load_preset(preset)
    off = explore(KafkaModel(cfg))
    on = explore(KafkaModel(cfg), por=True)
    assert on.verdict == off.verdict
    assert [v.name for v in on.violations] == [v.name for v in off.violations]
    assert on.extra["por"]["states"] > 0


# Generated counts are one below those of docs/benchmarks.md's "Partial-order reduction": with
# symmetry on, both presets start from one initial state per orbit (model/checking/reduced_runs.py),
# one fewer than they listed.
@pytest.mark.parametrize("preset, properties, full, reduced", [
    ("tiny", None, (10_294, 30_669), (10_294, 30_669)),
    ("tiny", ["deadlock"], (10_294, 30_669), (10_128, 29_668)),
    ("tiny", ["IsrNonEmpty"], (10_294, 30_669), (10_294, 30_474)),
    ("zkfaults", ["deadlock"], (13_016, 40_574), (12_986, 40_376)),
    ("zkfaults", ["IsrNonEmpty"], (13_016, 40_574), (12_986, 40_376)),
])
def test_pinned_counts_on_and_off(preset, properties, full, reduced):
    """(distinct, generated) with POR off and on. With every property checked nothing is reduced;
    with deadlock alone or a ZooKeeper invariant a little is."""
    cfg = load_preset(preset)
    off = explore(KafkaModel(cfg), properties=properties)
    on = explore(KafkaModel(cfg), properties=properties, por=True)
    assert (off.stats.distinct, off.stats.generated) == full
    assert (on.stats.distinct, on.stats.generated) == reduced
    assert on.verdict == off.verdict == "pass"


@pytest.mark.parametrize("preset", [f"v{i}" for i in range(1, 14)])
def test_por_catches_each_variant_checking_its_property_alone(preset):
    """Checking only the property a variant breaks leaves more actions invisible; it is still caught."""
    cfg = load_preset(preset)
    name = explore(KafkaModel(cfg)).violations[0].name
    on = explore(KafkaModel(cfg), properties=[name], por=True)
    assert on.verdict == "violation" and [v.name for v in on.violations] == [name]


def test_with_every_property_every_action_is_visible():
    """The quiescence and settled properties read nearly the whole state, so with all properties
    checked no group is invisible and no proper ample set can exist."""
    cfg = load_preset("tiny")
    model = KafkaModel(cfg)
    reducer = Reducer(model, model.properties())
    assert reducer.visible == frozenset(groups(cfg))
    only = Reducer(model, [p for p in model.properties() if p.name == "IsrNonEmpty"])
    assert {g[0] for g in set(groups(cfg)) - only.visible} == {"deliver", "deliver-plain", "deliver-meta"}


def test_por_without_symmetry_reduces_the_concrete_graph_alike():
    """With symmetry off the reduction works on concrete states: `tiny`, deadlock alone."""
    cfg = load_preset("tiny")
    off = explore(KafkaModel(cfg, symmetry=False), properties=["deadlock"])
    on = explore(KafkaModel(cfg, symmetry=False), properties=["deadlock"], por=True)
    assert (off.stats.distinct, off.stats.generated) == (20_588, 61_338)
    assert (on.stats.distinct, on.stats.generated) == (20_256, 59_336)
    assert on.verdict == off.verdict == "pass"
