"""The `log_dir_failure` perturbation kind in a grid (kcm/sweep/grid.py): named `logdir` in scope
names, its budget set from the cold start and listed in the overlapping run from the settled
cluster; in the nightly grid (paired with every kind), not in the gate or `deep`."""

from __future__ import annotations

from kcm.sweep import grid

GRID = """
version = 1
description = "a log-directory failure beside a crash"
[base]
brokers = 2
topics = 1
partitions = 1
replication_factor = 2
[budget]
max_states = 100000
seconds = 120
[[axes]]
kinds = ["log_dir_failure", "broker_crash"]
combine = [2]
start = ["cold", "settled"]
"""


def test_a_grid_with_the_log_dir_failure_kind(tmp_path):
    path = tmp_path / "logdir-grid.toml"
    path.write_text(GRID)
    g = grid.load(None, path)
    assert [s.name for s in g.scopes] == ["b2-rf2-p1-logdir+crash-cold", "b2-rf2-p1-logdir+crash-settled"]
    cold, settled = (s.config() for s in g.scopes)
    assert (cold.max_log_dir_failures, cold.max_broker_crashes, cold.max_perturbations) == (1, 1, 2)
    assert [list(run) for run in settled.overlapping] == [["log_dir_failure", "broker_crash"]]
    with_logdir = {name: sum("logdir" in s.name for s in grid.load(name).scopes) for name in grid.grid_names()}
    assert with_logdir == {"deep": 0, "gate": 0, "nightly": 52}
