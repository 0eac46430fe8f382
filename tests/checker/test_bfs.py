"""The sequential explorer on toy models: counts, BFS order, shortest traces, deadlocks, bounds,
filters, -continue, goals, interruption and determinism. Every expected number is computed
independently of the explorer (by hand, by a naive fixpoint, or cited from TLC/stateright)."""

from __future__ import annotations

import math

import pytest
from kcm.checker.engine.bfs import CheckOptions, explore
from kcm.checker.engine.errors import UsageError
from kcm.checker.engine.replay import replay_trace
from kcm.checker.engine.result import DEADLOCK, Violation

from tests.checker.toys import (
    Climbers,
    DGraph,
    EpochModel,
    GridCounter,
    Lamp,
    Philosophers,
    TwoPhaseCommit,
    naive_reachable,
    orbit_count,
    permute_two_phase,
)

# ---- state counts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("rms, expected", [(3, 288), (5, 8_832)])
def test_two_phase_commit_state_count(rms, expected):
    # 288 / 8,832: TLC on TwoPhase.tla and stateright's examples/2pc.rs; and the naive fixpoint.
    model = TwoPhaseCommit(rms)
    result = explore(model)
    assert len(naive_reachable(model)) == expected
    assert result.stats.distinct == expected
    assert result.verdict == "pass"


def test_generated_counts_every_edge_and_the_initial_state():
    model = TwoPhaseCommit(3)
    edges = sum(len(model.enabled_actions(s)) for s in naive_reachable(model))
    assert explore(model).stats.generated == edges + 1


@pytest.mark.parametrize("rms", [3, 4])
def test_two_phase_symmetry_matches_brute_force_orbit_count(rms):
    states = naive_reachable(TwoPhaseCommit(rms))
    orbits = orbit_count(states, permute_two_phase, rms)
    result = explore(TwoPhaseCommit(rms, symmetric=True))
    assert result.symmetry is True
    assert result.stats.distinct == orbits
    assert explore(TwoPhaseCommit(rms, symmetric=True), symmetry=False).stats.distinct == len(states)


def test_climbers_symmetry_divides_by_exactly_six():
    height = 6
    plain = explore(Climbers(height, symmetric=False), properties=[DEADLOCK])
    reduced = explore(Climbers(height, symmetric=True), properties=[DEADLOCK])
    placements = height * (height - 1) * (height - 2)
    assert plain.stats.distinct == placements == 120
    assert reduced.stats.distinct == math.comb(height, 3) == 20 == placements // 6
    states = naive_reachable(Climbers(height, symmetric=False))

    def rename(s, perm):
        out = [None] * 3
        for old, new in enumerate(perm):
            out[new] = s[old]
        return tuple(out)

    assert orbit_count(states, rename, 3) == 20


def test_philosophers_reach_every_consistent_state():
    # A state is consistent when no fork is held twice: philosopher f holds fork f when not
    # thinking, philosopher f-1 holds it when eating. Every consistent state is reachable.
    import itertools

    consistent = [s for s in itertools.product(range(3), repeat=3)
                  if all(not (s[f] >= 1 and s[f - 1] == 2) for f in range(3))]
    result = explore(Philosophers(3), check_deadlock=False)
    assert result.stats.distinct == len(consistent) == 14
    assert result.verdict == "pass"


# ---- BFS order and shortest traces -------------------------------------------------------------------


def test_grid_levels_and_stats():
    n = 3
    result = explore(GridCounter(n))
    # Level d holds the points with x + y = d.
    assert result.stats.frontier_sizes == tuple(min(d, 2 * n - d) + 1 for d in range(2 * n + 1))
    assert result.stats.depth == 2 * n + 1
    # Edges: IncX from x < n, IncY from y < n, Reset from the corner.
    edges = 2 * n * (n + 1) + 1
    assert result.stats.generated == edges + 1 == 26
    assert result.stats.distinct == (n + 1) ** 2 == 16
    assert result.stats.queue == 0
    o = result.stats.outdegree
    assert (o.minimum, o.maximum, o.p95) == (1, 2, 2)
    assert o.mean == pytest.approx(25 / 16)
    assert result.stats.collision_probability == pytest.approx(16 * 10 / 2**128)


def test_shortest_trace_follows_bfs_discovery_order():
    # Level d is in decreasing x (IncX is tried first), so (2, 1) is first found from (2, 0).
    result = explore(GridCounter(3, bugs=((2, 1),)))
    (violation,) = result.violations
    assert violation.name == "not_2_1" and violation.kind == "safety"
    assert [type(a).__name__ for a, _ in violation.trace[1:]] == ["IncX", "IncX", "IncY"]
    assert [(s.x, s.y) for _, s in violation.trace] == [(0, 0), (1, 0), (2, 0), (2, 1)]
    assert violation.trace[0][0] is None


@pytest.mark.parametrize("bug", [(0, 0), (3, 0), (1, 2), (3, 3)])
def test_trace_length_is_the_distance(bug):
    (violation,) = explore(GridCounter(3, bugs=(bug,))).violations
    assert violation.trace_length == sum(bug)


def test_symmetric_traces_are_real_executions():
    # The climber that starts on rung 2 needs 3 steps to reach the top of a 6-rung ladder.
    model = Climbers(6, symmetric=True)
    (violation,) = explore(model).violations
    assert violation.trace_length == 3
    states = replay_trace(model, violation.trace)
    assert 5 in states[-1]
    witness = explore(TwoPhaseCommit(3, symmetric=True)).goals["commit agreement"]
    replay_trace(TwoPhaseCommit(3, symmetric=True), witness.trace)


# ---- properties --------------------------------------------------------------------------------------


def test_deadlock_is_found_at_its_depth():
    (violation,) = explore(Philosophers(3)).violations
    assert (violation.name, violation.kind, violation.trace_length) == (DEADLOCK, DEADLOCK, 3)
    assert violation.trace[-1][1] == (1, 1, 1)


def test_terminal_states_are_not_deadlocks():
    assert explore(GridCounter(3, reset=False, terminal=True)).verdict == "pass"
    (violation,) = explore(GridCounter(3, reset=False)).violations
    assert violation.kind == DEADLOCK and violation.trace_length == 6
    assert explore(GridCounter(3, reset=False), check_deadlock=False).verdict == "pass"


class CutCorner(GridCounter):
    """GridCounter whose corner has a step a bound of the model cut (`Model.pruned`), as a state
    constraint would: the corner is where the search was stopped, not where the system stops."""

    def pruned(self, s):
        return s.x == s.y == self.n


def test_a_state_whose_steps_a_bound_cut_is_counted_apart_not_as_a_deadlock():
    result = explore(CutCorner(3, reset=False))
    assert (result.verdict, result.violations, result.stats.cut) == ("pass", (), 1)
    assert DEADLOCK in result.checked
    assert result.summary_lines()[-5] == (
        "1 state had no successor only because a bound of the model cut a healing step (not a deadlock).")
    assert explore(GridCounter(3, reset=False)).stats.cut == 0   # its corner is a deadlock
    assert explore(CutCorner(3, reset=True)).stats.cut == 0      # pruned is asked of dead ends only


def test_a_shorter_deadlock_later_in_the_level_wins():
    # Expanding init 0 finds the bad state 2 (1 step); init 1, later in level 0, is a deadlock (0 steps).
    graph = DGraph(inits=[0, 1], edges={0: [2], 2: [2]}, bad=[2])
    (violation,) = explore(graph).violations
    assert violation.kind == DEADLOCK and violation.trace_length == 0
    (violation,) = explore(graph, check_deadlock=False).violations
    assert violation.name == "good" and violation.trace_length == 1


def test_step_invariant_is_checked_on_edges_to_visited_states():
    model = EpochModel()
    result = explore(model, stop_on_violation=False)
    (violation,) = result.violations
    assert violation.kind == "transition"
    assert [model.format_action(a) for a, _ in violation.trace[1:]] == [
        "ControllerBump(controller=0)", "ControllerBump(controller=0)", "BrokerStaleWrite(broker=1)"]
    # The stale write lands on (1, 1), found at level 1: the edge leads to a visited state.
    assert violation.trace[-1][1].epoch == 1
    assert result.stats.distinct == 7
    assert result.stats.generated == 1 + 2 + 2 * 2 + 2 * 3


def test_continue_records_one_violation_per_property():
    model = GridCounter(3, bugs=((2, 0), (1, 2)), reset=False)
    stop = explore(model)
    assert [v.name for v in stop.violations] == ["not_2_0"]
    cont = explore(model, stop_on_violation=False)
    assert [(v.name, v.trace_length) for v in cont.violations] == [("not_2_0", 2), ("not_1_2", 3), (DEADLOCK, 6)]
    assert cont.stats.distinct == 16 and cont.verdict == "violation"


def test_property_filter():
    model = GridCounter(3, bugs=((2, 0), (1, 2)), reset=False)
    result = explore(model, properties=["not_1_2"])
    assert result.checked == ("not_1_2",)
    assert [v.name for v in result.violations] == ["not_1_2"]
    only_deadlock = explore(model, properties=[DEADLOCK])
    assert [v.kind for v in only_deadlock.violations] == [DEADLOCK]
    with pytest.raises(UsageError, match="unknown property 'nope'; the model has: not_2_0, not_1_2, deadlock"):
        explore(model, properties=["nope"])


def test_goals_and_their_shortest_witnesses():
    result = explore(TwoPhaseCommit(3))
    commit, abort = result.goals["commit agreement"], result.goals["abort agreement"]
    # Commit: 3 prepares, 3 votes received, the commit, 3 commit messages received. Abort: 3 RMs
    # choose to abort.
    assert (commit.met, commit.trace_length) == (True, 10)
    assert (abort.met, abort.trace_length) == (True, 3)


def test_vacuous_goal_makes_a_complete_run_fail():
    result = explore(Lamp())
    assert result.verdict == "violation"
    assert result.violations == (Violation("purple", "sometimes", None),)
    assert result.goals["on"].met and result.goals["on"].trace_length == 1
    assert not result.goals["purple"].met
    assert explore(Lamp(), goals_required=False).verdict == "pass"


def test_goal_met_by_an_initial_state_has_a_zero_step_witness():
    class Dark(Lamp):
        def properties(self):
            from kcm.checker.engine.contract import Sometimes
            return (Sometimes("off", lambda s, a, t: t is False and a is None and s is False),)

    assert explore(Dark()).goals["off"].trace_length == 0


def test_initial_state_violation():
    (violation,) = explore(GridCounter(3, bugs=((0, 0),))).violations
    assert violation.trace_length == 0 and violation.trace == ((None, GridCounter().init_states()[0]),)


# ---- bounds, interruption, determinism ------------------------------------------------------------


def test_max_depth_makes_the_run_incomplete():
    result = explore(GridCounter(3), max_depth=2)
    assert (result.verdict, result.reason) == ("incomplete", "max_depth")
    assert result.stats.frontier_sizes == (1, 2, 3)
    assert result.stats.distinct == 6 and result.stats.queue == 3
    assert result.stats.generated == 1 + 2 + 4
    assert explore(GridCounter(3), max_depth=7).verdict == "pass"
    # A violation inside the bound is still a violation.
    assert explore(GridCounter(3, bugs=((1, 0),)), max_depth=2).verdict == "violation"


def test_keyboard_interrupt_returns_what_was_computed():
    class Interrupted(GridCounter):
        calls = 0

        def successors(self, state):
            Interrupted.calls += 1
            if Interrupted.calls == 5:  # expanding (1, 1), the second state of level 2
                raise KeyboardInterrupt
            return super().successors(state)

    result = explore(Interrupted(3))
    assert (result.verdict, result.reason) == ("incomplete", "interrupted")
    # Found: level 0..2 (6 states) plus (3, 0) and (2, 1) from (2, 0).
    assert result.stats.distinct == 8
    assert result.stats.generated == 1 + 2 + 4 + 2
    # Not expanded: (1, 1) and (0, 2) of level 2, and (3, 0), (2, 1) of level 3.
    assert result.stats.queue == 4


def test_nondeterministic_model_is_reported():
    class Flaky(DGraph):
        calls = 0

        def enabled_actions(self, s):
            Flaky.calls += 1
            actions = super().enabled_actions(s)
            return actions if Flaky.calls % 2 else actions[::-1]

    with pytest.raises(RuntimeError, match="not deterministic"):
        explore(Flaky(inits=[0], edges={0: [1, 2]}, bad=[2]))


def test_options_object_and_overrides_combine():
    opts = CheckOptions(check_deadlock=False)
    assert explore(GridCounter(3, reset=False), opts).verdict == "pass"
    assert explore(GridCounter(3, reset=False), opts, check_deadlock=True).verdict == "violation"
