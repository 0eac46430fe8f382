"""Grid files and their expansion into named scopes (kcm/sweep/grid.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kcm.checker.engine.contract import Sometimes
from kcm.checker.engine.errors import UsageError
from kcm.model.checking.kafka_model import KafkaModel

from kcm.sweep import grid

HERE = Path(__file__).parent
TINY = HERE / "tiny-grid.toml"


def test_the_tiny_grid_expands_to_four_scopes_and_drops_replication_above_brokers():
    g = grid.load(None, TINY)
    assert (g.name, g.version, g.budget) == ("tiny-grid", 1, grid.Budget(50000, 120.0))
    assert [s.name for s in g.scopes] == ["b2-rf2-p1-crash-cold", "b2-rf2-p1-crash-settled",
                                          "b2-rf2-p1-shrink-cold", "b2-rf2-p1-shrink-settled"]
    assert g.dropped == {"field `replication_factor` = 3 is out of range; allowed 1..2 "
                         "(no more replicas than brokers)": 4}
    cold, settled = (s.config() for s in g.scopes[:2])
    assert (cold.max_broker_crashes, cold.max_perturbations, cold.overlapping) == (1, 1, ())
    assert (settled.max_broker_crashes, settled.max_leader_isr_shrinks) == (0, 0)
    assert [list(run) for run in settled.overlapping] == [["broker_crash"]]


def test_the_shipped_grids_and_their_scope_counts():
    assert grid.grid_names() == ("deep", "gate", "nightly")
    gate = grid.load("gate")
    # 66 pairs x RF 1, 2 x cold, settled; and three replicas, a shrink with a shutdown, settled
    assert (gate.version, len(gate.scopes), gate.dropped) == (2, 265, {})
    names = {s.name for s in gate.scopes}
    assert {"b2-rf1-p1-crash+reassign-cold", "b2-rf2-p1-lostack+connloss-settled"} <= names
    three = gate.scopes[-1]
    assert three.name == "b3-rf3-p1-shrink+shutdown-settled"
    assert [list(run) for run in three.config().overlapping] == [["leader_isr_shrink", "controlled_shutdown"]]
    creation = next(s for s in gate.scopes if s.name == "b2-rf2-p1-delete+create-cold").config()
    assert (creation.topics, creation.initial_topics, creation.max_topic_creations) == (2, 1, 1)
    nightly = grid.load("nightly")
    assert (nightly.version, len(nightly.scopes)) == (2, 1816)
    # Partition additions and log-directory failures, each with every kind: 25 pairs, RF 1 and 2,
    # both starts.
    assert sum(1 for s in nightly.scopes if s.name.startswith("b2-")
               and {"addparts", "logdir"} & set(s.name.split("-")[3].split("+"))) == 100
    addition = next(s for s in nightly.scopes if s.name == "b2-rf2-p2-crash+addparts-cold").config()
    assert (addition.partitions, addition.created_partitions, addition.max_partition_additions) == (2, 1, 1)


def test_deep_is_the_union_of_its_pair_runs():
    from kcm import config

    deep = grid.load("deep")
    assert len(deep.scopes) == 55   # 11 kinds, one scope per pair
    preset = config.load_preset("deep")
    for scope in deep.scopes:
        cfg = scope.config()
        assert (cfg.brokers, cfg.partitions, cfg.replication_factor, cfg.max_perturbations) == (3, 2, 2, 2)
        assert cfg.controller_epoch_bound == preset.controller_epoch_bound
        assert not cfg.overlapping
    # Each pair's model checks deep's properties, in deep's order, but for those a config registers
    # only where their operation can happen (an admin request's); together the pairs check them all.
    def names(cfg) -> list[str]:
        return [p.name for p in KafkaModel(cfg).properties() if not isinstance(p, Sometimes)]
    deeps = names(preset)
    pairs = [names(scope.config()) for scope in deep.scopes]
    assert all(pair == [n for n in deeps if n in pair] for pair in pairs)
    assert set().union(*pairs) == set(deeps)
    assert [n for n in deeps if not all(n in pair for pair in pairs)] == ["AdminRequestCarriedOutOrRefused"]


@pytest.mark.parametrize("text, message", [
    ("version = 1\nbogus = 1\n[[axes]]\nkinds = ['broker_crash']\n", "unknown key `bogus`"),
    ("description = 'x'\n[[axes]]\nkinds = ['broker_crash']\n", "`version` must be a whole number"),
    ("version = 1\n", "needs at least one [[axes]] block"),
    ("version = 1\n[[axes]]\nkinds = ['meteor']\n", "unknown perturbation kind 'meteor'"),
    ("version = 1\n[[axes]]\nbrokerz = [2]\n", "unknown axis `brokerz`"),
    ("version = 1\n[budget]\nseconds = -1\n[[axes]]\nbrokers = [2]\n", "budget `seconds` must be a positive"),
    ("version = 1\n[base]\nbrokers = 9\n[[axes]]\nbrokers = [2]\n", "field `brokers` = 9 is out of range"),
    ("version = 1\n[base]\nbrokers = 2\n[[axes]]\nreplication_factor = [3]\n", "every combination"),
    ("version = 1\n[[axes]]\nkinds = ['broker_crash']\ncombine = [3]\n", "`combine` lists set sizes"),
    ("version = 1\n[[axes]]\nstart = ['warm']\n", "unknown start 'warm'"),
])
def test_a_bad_grid_is_one_usage_error(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(message)):
        grid.load(None, path)
