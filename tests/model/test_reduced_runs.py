"""Symmetry run by run (model/checking/reduced_runs.py): which runs are reduced, that every orbit is still
explored, and what each choice costs in states."""

from __future__ import annotations

import dataclasses

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.checking.reduced_runs import fixed_by_a_renaming, may_untie
from kcm.model.checking.symmetry import representative
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle

from kcm import config

# Three brokers, RF 2: a topic deleted and created again (its placements are then one orbit).
RECREATE = ModelConfig(brokers=3, topics=1, partitions=1, replication_factor=2, max_broker_crashes=0,
                       max_session_expiries=0, max_topic_deletions=1, max_topic_creations=1)
# Small configs with each kind of plan: no run reduced (tiny, zkfaults, m-reassign2), every run
# (recreate, m-delete), some (m-overlap). The mutation configs are in bench/mutation/.
SMALL = ["tiny", "zkfaults", "recreate", "bench/mutation/m-overlap.toml", "bench/mutation/m-delete.toml",
         "bench/mutation/m-reassign2.toml"]


def load(source: str) -> ModelConfig:
    if source == "recreate":
        return RECREATE
    return config.load(None, source)[1] if source.endswith(".toml") else config.load_preset(source)


@pytest.mark.parametrize(("preset", "reduced", "initial"), [
    # The cold start may delete the topic, and so may the crash-then-deletion run; a reassignment
    # on three brokers at RF 2 leaves one broker out, never two: runs 2 and 3 start from one state.
    ("default", {0, 1}, 9),
    # Two brokers on one RF-2 topic, nothing deleted: each run from one state per orbit.
    ("tiny", set(), 1),
    ("zkfaults", set(), 5),
    # RF 1 on three brokers: the two brokers without the replica are alike from the start.
    ("v4", {0}, 3),
])
def test_which_runs_are_reduced(preset, reduced, initial) -> None:
    model = KafkaModel(config.load_preset(preset))
    assert model.reduced_runs == reduced
    assert len(model.init_states()) == initial
    # The states kept are the first listed of their orbits, so run i is still init_states()[i].
    assert list(model.init_states()) == [s for s in init_states(model.cfg) if s in model.init_states()]


def test_a_state_fixed_by_a_renaming() -> None:
    # v4's cold start: one replica on broker 0, brokers 1 and 2 alike.
    assert fixed_by_a_renaming(init_states(config.load_preset("v4"))[0])
    # default's settled cluster: broker 0 controls, the topic is on (0, 1), broker 2 is out.
    cfg = config.load_preset("default")
    assert not fixed_by_a_renaming(settle(cfg, init_states(cfg)[0]))


def test_what_may_untie_two_brokers() -> None:
    cfg = config.load_preset("default")
    assert [may_untie(cfg, run) for run in range(4)] == [True, True, False, False]
    # Four brokers at RF 2: a reassignment can leave two of them with no replica.
    assert may_untie(dataclasses.replace(cfg, brokers=4), 2)
    # No admin operation in the cold start: nothing deletes or moves a topic.
    assert not may_untie(dataclasses.replace(cfg, max_admin_ops=0), 0)


def orbits(model: KafkaModel) -> frozenset:
    """The orbits (full representatives) of the states `model` explores, keyed as the explorer keys them."""
    frontier = list(model.init_states())
    seen = {model.fingerprint(model.representative(s)) for s in frontier}
    found = {representative(s) for s in frontier}
    while frontier:
        nxt = []
        for s in frontier:
            for _, t in model.successors(s):
                f = model.fingerprint(model.representative(t))
                if f not in seen:
                    seen.add(f)
                    found.add(representative(t))
                    nxt.append(t)
        frontier = nxt
    return frozenset(found)


@pytest.mark.parametrize("source", SMALL)
def test_every_orbit_is_explored(source) -> None:
    """Soundness of the plan: the orbits of the states it explores are those of every reachable
    state (symmetry off, every initial state)."""
    cfg = load(source)
    planned = KafkaModel(cfg)
    assert orbits(planned) == orbits(KafkaModel(cfg, symmetry=False))


def test_reduced_and_unreduced_runs_side_by_side() -> None:
    # m-overlap has runs of both kinds, so the union above covers a mixed plan.
    model = KafkaModel(load("bench/mutation/m-overlap.toml"))
    runs = {s.scenario for s in model.init_states()}
    assert model.reduced_runs and runs - model.reduced_runs


def test_reduction_is_kept_where_a_deletion_unties_the_brokers() -> None:
    """Pinned: 7,013 states reduced against 10,418 from one initial state per orbit. (Where no run
    is reduced the counts are those reduction gave, one initial state fewer generated: tiny and
    zkfaults, pinned in test_spec.py and test_zk_faults.py.)"""
    recreate = KafkaModel(RECREATE)
    assert recreate.reduced_runs == {0}
    reduced = explore(recreate).stats
    one_per_orbit = explore(KafkaModel(RECREATE, symmetry=False, initial_orbits=True)).stats
    assert (reduced.distinct, one_per_orbit.distinct) == (7_013, 10_418)


def test_the_header_says_which_runs_are_reduced() -> None:
    from kcm.exploration import symmetry_text
    assert symmetry_text(config.load_preset("default"), True) == \
        "symmetry on (runs 0, 1 reduced; runs 2, 3 from one initial state per orbit)"
    assert symmetry_text(config.load_preset("tiny"), True) == \
        "symmetry on (one initial state per orbit, no run reduced)"
    assert symmetry_text(config.load_preset("v4"), True) == "symmetry on"
    assert symmetry_text(config.load_preset("v4"), False) == "symmetry off"


def test_a_model_that_starts_elsewhere_is_planned_too() -> None:
    """`KafkaModel.starts` is what bench/reach.py --from-settled overrides: the plan is made of
    its states (a subclass that set the initial states alone left no plan, and the first
    representative failed)."""
    class FromSettled(KafkaModel):
        def starts(self):
            return (settle(self.cfg, init_states(self.cfg)[0]),)

    model = FromSettled(RECREATE)
    assert model.reduced_runs == {0}
    assert model.init_states() == FromSettled(RECREATE).starts()
    assert explore(model, max_depth=3).stats.distinct > 1
