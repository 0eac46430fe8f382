"""What a config can reach, said before the run (`kcm.model.checking.reach`): pinned for `tiny`
and for a two-broker RF 2 config with a crash and a reassignment, and sound on every preset the
tests can explore: no edge it calls unreachable is taken, no goal it calls unreachable is met."""

from __future__ import annotations

import json

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.checking.reach import (
    edge_text,
    initial_states,
    perturbations_per_run,
    reach_lines,
    unreachable_edges,
    unreachable_goals,
)
from kcm.model.config import ModelConfig

from kcm import config
from kcm.cli import main
from tests.cli.test_rough_edges import kcm, one_error_line

NO_NEW = "no topic creation in the budget; no reassignment in the budget"
NO_REMOVAL = "no topic deletion in the budget; no reassignment in the budget"
NO_DELETION = "no topic deletion in the budget"
REORDER = "a reassignment on RF 2 of 2 brokers can only reorder replicas"

#: The config of the report: two brokers, RF 2, one crash and one reassignment (not explored here:
#: it is as large as the CI gate).
CRASH_AND_REASSIGN = ModelConfig(brokers=2, replication_factor=2, max_broker_crashes=1, max_session_expiries=0,
                                 max_reassignments=1)


def test_tiny_reaches_at_most_11_edges_and_says_why_not_the_others() -> None:
    cfg = config.load_preset("tiny")
    assert [(u.what, u.reason) for u in unreachable_edges(cfg)] == [
        ("replica NonExistentReplica -> NewReplica", NO_NEW),
        ("replica NewReplica -> OnlineReplica", NO_NEW),
        ("replica NewReplica -> OfflineReplica", NO_NEW),
        ("replica OfflineReplica -> ReplicaDeletionStarted", NO_REMOVAL),
        ("replica ReplicaDeletionStarted -> ReplicaDeletionSuccessful", NO_REMOVAL),
        ("replica OfflineReplica -> ReplicaDeletionIneligible", NO_DELETION),
        ("replica ReplicaDeletionStarted -> ReplicaDeletionIneligible", NO_DELETION),
        ("replica ReplicaDeletionSuccessful -> NonExistentReplica", NO_REMOVAL),
        ("partition NonExistentPartition -> NewPartition", "no topic creation in the budget"),
        ("partition OnlinePartition -> OnlinePartition",
         "no controlled shutdown, preferred election or auto rebalance in the budget, and no reassignment "
         "in the budget"),
        ("partition OfflinePartition -> NonExistentPartition", NO_DELETION),
    ]
    # Every goal tiny lists is within reach; the others are not checked, each for its reason.
    assert [(u.what, u.reason) for u in unreachable_goals(cfg)] == [
        ("UncleanElection", "not checked: unclean leader election is off"),
        ("TopicDeleted", "not checked: no topic deletion in the budget"),
        ("ReassignmentCompletes", "not checked: no reassignment in the budget"),
        ("ControlledShutdownMovesLeadership", "not checked: no controlled shutdown in the budget"),
        ("PreferredLeaderElected", "not checked: the preferred replica leads until something moves leadership "
                                   "away: a preferred election or auto rebalance and a second perturbation"),
        ("UncleanElectionOnDemand", "not checked: no ElectLeaders request in the budget"),
        ("UncleanElectionSwitchedOn", "not checked: unclean election is not switched on at run time in the budget"),
        ("ReplicaOfflineOnLiveBroker", "not checked: no log-directory failure in the budget"),
    ]
    assert (initial_states(cfg), perturbations_per_run(cfg)) == (2, (2,))


def test_a_reassignment_on_rf_2_of_2_brokers_only_reorders_and_reach_says_so() -> None:
    assert [(u.what, u.reason) for u in unreachable_edges(CRASH_AND_REASSIGN)] == [
        ("replica NonExistentReplica -> NewReplica", f"no topic creation in the budget; {REORDER}"),
        ("replica NewReplica -> OnlineReplica", f"no topic creation in the budget; {REORDER}"),
        ("replica NewReplica -> OfflineReplica", f"no topic creation in the budget; {REORDER}"),
        ("replica OfflineReplica -> ReplicaDeletionStarted", f"{NO_DELETION}; {REORDER}"),
        ("replica ReplicaDeletionStarted -> ReplicaDeletionSuccessful", f"{NO_DELETION}; {REORDER}"),
        ("replica OfflineReplica -> ReplicaDeletionIneligible", NO_DELETION),
        ("replica ReplicaDeletionStarted -> ReplicaDeletionIneligible", NO_DELETION),
        ("replica ReplicaDeletionSuccessful -> NonExistentReplica", f"{NO_DELETION}; {REORDER}"),
        ("partition NonExistentPartition -> NewPartition", "no topic creation in the budget"),
        ("partition OfflinePartition -> NonExistentPartition", NO_DELETION),
    ]
    assert reach_lines(CRASH_AND_REASSIGN)[:2] == [
        "size: 2 initial states before symmetry, 1 run, at most 2 fault(s) or admin operation(s) per run",
        "reaches at most 12 of 22 table edges; out of reach:"]
    # The crash can meet the reassignment in one run: a dead leader, so OnlinePartition ->
    # OnlinePartition is not ruled out. With one perturbation per run it is.
    one_at_a_time = ModelConfig(**{**_fields(CRASH_AND_REASSIGN), "max_perturbations": 1})
    assert ("partition OnlinePartition -> OnlinePartition" in {u.what for u in unreachable_edges(one_at_a_time)})


def test_a_goal_no_run_can_meet_is_said_before_the_run() -> None:
    # Reassignments are listed, but "replace-one" has no target when every broker holds a replica.
    cfg = ModelConfig(brokers=2, replication_factor=2, max_broker_crashes=0, max_session_expiries=0,
                      max_reassignments=1, reassign_targets="replace-one")
    assert [(u.what, u.reason) for u in unreachable_goals(cfg) if not u.reason.startswith("not checked")] == [
        ("ControllerFailsOver", "no fault or admin operation can happen"),
        ("ReassignmentCompletes", 'no reassignment target exists (RF 2 of 2 brokers, reassign_targets "replace-one")'),
    ]
    assert 'goal ReassignmentCompletes out of reach: no reassignment target exists' in "\n".join(reach_lines(cfg))


def test_overlapping_runs_count_as_runs_of_their_own() -> None:
    cfg = config.load_preset("zkfaults")
    assert (initial_states(cfg), perturbations_per_run(cfg)) == (6, (1, 2, 2, 2, 2))
    # The controlled shutdown of an overlapping run makes a leader election other than the offline one possible.
    assert "partition OnlinePartition -> OnlinePartition" not in {u.what for u in unreachable_edges(cfg)}
    assert reach_lines(config.load_preset("default"))[1] == "may reach all 22 table edges"


def _fields(cfg: ModelConfig) -> dict:
    return {name: getattr(cfg, name) for name in cfg.__slots__}


#: Presets explored whole (every violation recorded, the search goes on) and those explored up
#: to their first violation: their whole graph takes from half a minute (v2, v10, which take no
#: more edges whole) to minutes (v4, v7). Either way, what was taken is reachable.
WHOLE = ["tiny", "zkfaults", "v1", "v3", "v5", "v6", "v8", "v9", "v11", "v12", "v13"]
TO_FIRST_VIOLATION = ["v2", "v4", "v7", "v10"]


@pytest.mark.slow
@pytest.mark.parametrize("preset", WHOLE + TO_FIRST_VIOLATION)
def test_nothing_said_unreachable_is_reached(preset) -> None:
    cfg = config.load_preset(preset)
    result = explore(KafkaModel(cfg), stop_on_violation=preset in TO_FIRST_VIOLATION)
    taken = {edge_text(e) for e in result.coverage.edges_taken}
    said = {u.what for u in unreachable_edges(cfg)}
    assert not taken & said
    assert len(taken) + len(said) <= 22
    met = {name for name, goal in result.goals.items() if goal.met}
    assert not met & {u.what for u in unreachable_goals(cfg)}


def test_kcm_list_reach_prints_the_lines_and_json(capsys, tmp_path) -> None:
    assert main(["list", "reach", "--preset", "tiny"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == ["tiny:", *(f"  {line}" for line in reach_lines(config.load_preset("tiny")))]
    path = tmp_path / "c.toml"
    path.write_text("brokers = 2\nreplication_factor = 2\nmax_broker_crashes = 1\nmax_session_expiries = 0\n"
                    "max_reassignments = 1\n")
    assert main(["list", "reach", "--config", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["table_edges"] == 22 and data["initial_states"] == 2
    assert [e["edge"] for e in data["unreachable_edges"]] == [u.what for u in unreachable_edges(CRASH_AND_REASSIGN)]


def test_kcm_list_reach_of_a_bad_config_is_one_error_line(tmp_path) -> None:
    proc = kcm("list", "reach", "--preset", "huge")
    assert proc.returncode == 2 and one_error_line(proc).startswith("kcm: error: unknown preset 'huge'")
    path = tmp_path / "c.toml"
    path.write_text("brokers = 9\n")
    proc = kcm("list", "reach", "--config", str(path))
    assert proc.returncode == 2 and "brokers" in one_error_line(proc)
