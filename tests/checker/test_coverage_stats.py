"""Coverage (per action, per table edge), statistics, the progress line and fingerprints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

from kcm.checker.engine.bfs import explore
from kcm.checker.engine.contract import fingerprint_of
from kcm.checker.engine.coverage import format_edge
from kcm.checker.engine.stats import (
    Outdegree,
    Progress,
    ProgressClock,
    ProgressPrinter,
    collision_probability,
    outlook,
)

from tests.checker.toys import (
    RM_EDGES,
    Commit,
    GridCounter,
    Lamp,
    Prepared,
    RmState,
    TwoPhaseCommit,
    TwoPhaseState,
    naive_reachable,
)

REPO = Path(__file__).resolve().parents[2]

# ---- coverage -----------------------------------------------------------------------------------


def test_action_evaluations_match_an_independent_count():
    model = TwoPhaseCommit(3)
    expected = Counter(type(a).__name__ for s in naive_reachable(model) for a in model.enabled_actions(s))
    coverage = explore(model).coverage
    assert {a.name: a.evaluations for a in coverage.actions} == dict(expected)
    # Every non-initial distinct state is new for exactly one action.
    assert sum(a.new_states for a in coverage.actions) == 288 - 1
    # TmCommit's only source is the state where every vote is in, and nothing else reaches its target.
    assert coverage.action("TmCommit").evaluations == coverage.action("TmCommit").new_states == 1
    assert coverage.never_enabled == ()


def test_untaken_table_edges_are_listed():
    coverage = explore(TwoPhaseCommit(3)).coverage
    assert coverage.edges_total == len(RM_EDGES) == 6
    assert coverage.untaken == ((RmState.working, RmState.committed), (RmState.committed, RmState.aborted))
    assert coverage.edges_taken == RM_EDGES[:4]
    assert coverage.outside_universe == ()
    lines = coverage.lines()
    assert "Table edges taken: 4 of 6" in lines
    assert "  untaken: working -> committed" in lines
    assert "  untaken: committed -> aborted" in lines


def test_edges_outside_the_universe_are_reported():
    class Shrunk(TwoPhaseCommit):
        def coverage_universe(self):
            return RM_EDGES[1:]

    coverage = explore(Shrunk(3)).coverage
    assert coverage.outside_universe == ((RmState.working, RmState.prepared),)
    assert "  outside the universe: working -> prepared" in coverage.lines()


def test_table_coverage_can_be_switched_off():
    coverage = explore(TwoPhaseCommit(3), table_coverage=False).coverage
    assert coverage.edges_taken == () and coverage.edges_total == 0


def test_never_enabled_and_unproductive_actions():
    coverage = explore(Lamp(), goals_required=False).coverage
    assert coverage.never_enabled == ("Paint",)
    # Toggle: 2 states expanded, one new state (the other edge goes back to the start).
    toggle = coverage.action("Toggle")
    assert (toggle.evaluations, toggle.new_states) == (2, 1)
    assert coverage.unproductive == ()
    assert "  Paint   never enabled" in coverage.lines()
    # Reset only leads back to the start.
    grid = explore(GridCounter(3)).coverage
    assert grid.unproductive == ("Reset",)


def test_format_edge():
    assert format_edge((RmState.working, RmState.aborted)) == "working -> aborted"
    assert format_edge("x") == "x"


# ---- statistics and progress ----------------------------------------------------------------------


def test_outdegree_percentile_is_nearest_rank():
    # 20 states: 18 with outdegree 1, 2 with outdegree 9 -> the 19th of 20 is 9.
    assert Outdegree.from_histogram({1: 18, 9: 2}) == Outdegree(1, (18 + 18) / 20, 9, 9)
    assert Outdegree.from_histogram({1: 19, 9: 1}).p95 == 1
    assert Outdegree.from_histogram({}) == Outdegree()


def test_collision_probability_is_tlc_formula_over_128_bits():
    assert collision_probability(10**7, 10**8) == 10**7 * (10**8 - 10**7) / 2**128
    assert collision_probability(5, 5) == 0.0


def test_progress_callbacks_per_level_and_tick():
    seen = []
    result = explore(GridCounter(3), progress=seen.append, progress_interval=0)
    # init; then per expanded level (7 of them) a tick at its first state and the level's end; final.
    assert [p.phase for p in seen] == ["init"] + ["tick", "level"] * 7 + ["final"]
    final = seen[-1]
    assert (final.level, final.generated, final.distinct, final.queue) == (7, 26, 16, 0)
    assert [p.level for p in seen if p.phase == "level"] == [2, 3, 4, 5, 6, 7, 7]
    assert result.stats.generated == 26


def test_progress_line_is_tlc_format():
    from datetime import datetime

    p = Progress("level", 3, 12345, 678, 9, 1.0, 740700.0, 40680.0)
    assert p.line(datetime(2024, 5, 1, 10, 0, 0)) == (
        "Progress(3) at 2024-05-01 10:00:00: 12,345 states generated (740,700 s/min), "
        "678 distinct states found (40,680 ds/min), 9 states left on queue.")


def test_progress_printer_rate_limits():
    now = [0.0]
    lines = []
    printer = ProgressPrinter(lines.append, interval=5.0, clock=lambda: now[0])
    snapshot = Progress("init", 1, 1, 1, 1, 0.0, 0.0, 0.0)
    for t, phase in [(0, "init"), (1, "level"), (4, "tick"), (6, "level"), (7, "level"), (8, "final")]:
        now[0] = t
        printer(replace(snapshot, phase=phase))
    # init (t=0), level at t=6 (5 s later), final always.
    assert len(lines) == 3
    assert all(re.match(r"Progress\(1\) at \S+ \S+: 1 states generated", line) for line in lines)


def test_no_rate_before_a_meaningful_span_then_the_latest_span_then_the_whole_run_on_average():
    from datetime import datetime

    now = [100.0]
    clock = ProgressClock(clock=lambda: now[0])
    stamp = datetime(2024, 5, 1, 10, 0, 0)

    def at(t, phase, generated, distinct, queue=0):
        now[0] = 100.0 + t
        return clock.snapshot(phase, 1, generated, distinct, queue)

    first = at(0.0, "init", 3, 3)
    assert (first.generated_per_min, first.distinct_per_min) == (None, None)
    assert first.line(stamp) == ("Progress(1) at 2024-05-01 10:00:00: 3 states generated, "
                                 "3 distinct states found, 0 states left on queue.")
    assert at(0.4, "level", 30, 20).generated_per_min is None      # 0.4 s: still no rate
    assert at(1.0, "level", 63, 43).generated_per_min == 60 * 60  # from t=0: 60 states in 1 s
    # From the latest snapshot at least a second old (t=1.0), not from the start.
    later = at(2.5, "tick", 213, 93)
    assert (later.generated_per_min, later.distinct_per_min) == (150 * 40, 50 * 40)
    final = at(4.0, "final", 243, 123)
    assert (final.generated_per_min, final.distinct_per_min) == (240 * 15, 120 * 15)
    assert final.line(stamp) == (
        "Progress(1) at 2024-05-01 10:00:00: 243 states generated (3,600 s/min on average), "
        "123 distinct states found (1,800 ds/min on average), 0 states left on queue.")


def test_the_final_line_of_a_real_run_has_its_average_not_zero(monkeypatch):
    from kcm.checker.engine import bfs

    now = [0.0]

    def tick():
        now[0] += 0.25   # every look at the clock takes a quarter of a second
        return now[0]

    monkeypatch.setattr(bfs, "ProgressClock", lambda: ProgressClock(clock=tick))
    seen = []
    explore(GridCounter(3), progress=seen.append, progress_interval=0)
    final = seen[-1]
    assert final.phase == "final" and final.generated_per_min is not None and final.generated_per_min > 0
    assert seen[0].generated_per_min is None


def test_outlook_says_growth_shrinkage_and_its_basis():
    assert outlook([5]) == ""
    assert outlook([1, 3, 9, 27]) == "Levels grew 3.00x per level from level 1 to level 4"
    assert outlook([2, 4]) == "Levels grew 2.00x per level from level 1 to level 2"
    assert outlook([1, 3, 9, 27], expanded=10) == (
        "37% of level 4 expanded; levels grew 3.00x per level from level 1 to level 4")
    # Shrinking by half: the geometric tail of 10,000 is 10,000 more states; 20,000 states still
    # to expand at 10 edges each (10^7 generated over 10^6 - 10^4 expanded) at 60,000 s/min.
    assert outlook([81_204, 80_000, 40_000, 20_000, 10_000], generated=10**7, distinct=1_010_000,
                   queue=10_000, generated_per_min=60_000) == (
        "Levels shrank 0.50x per level from level 2 to level 5 (peak 81,204 at level 1); "
        "if that holds, about 10,000 more states, about 3 min at the current rate")
    # The extrapolation is rounded to two significant figures; no rate, no time.
    assert outlook([1000, 100, 10, 1]).endswith("(peak 1,000 at level 1); if that holds, about 0 more states")
    assert outlook([100_000, 70_000]).endswith("if that holds, about 160,000 more states")


def test_progress_line_ends_with_the_outlook():
    from datetime import datetime

    p = Progress("level", 4, 40, 40, 27, 1.0, None, None, "Levels grew 3.00x per level from level 1 to level 4")
    assert p.line(datetime(2024, 5, 1, 10, 0, 0)) == (
        "Progress(4) at 2024-05-01 10:00:00: 40 states generated, 40 distinct states found, "
        "27 states left on queue. Levels grew 3.00x per level from level 1 to level 4.")


def test_disjoint_runs_say_how_many_are_done_and_each_running_runs_outlook():
    from kcm.checker.engine.runs import explore_runs, runs_of

    from tests.checker.toys import Lanes

    seen = []
    explore_runs(Lanes(), jobs=2, progress=seen.append, progress_interval=0.0)
    runs = len(runs_of(Lanes()))
    assert seen[0].outlook == f"0 of {runs} runs done" and seen[-1].outlook == ""
    done = [int(p.outlook.split(" of ")[0]) for p in seen[1:-1]]
    assert done == sorted(done) and all(p.outlook.endswith("runs done") or "; run " in p.outlook for p in seen[:-1])
    # A run's own outlook, once it has levels to compare, as "run N: levels grew ...".
    assert any(re.search(r"; run \d+: levels grew", p.outlook) for p in seen)


def test_summary_lines():
    result = explore(GridCounter(3))
    lines = result.summary_lines()
    assert lines[0] == "Model checking completed. No error has been found."
    assert "26 states generated, 16 distinct states found, 0 states left on queue." in lines
    assert "The depth of the complete state graph search is 7." in lines
    assert ("The average outdegree of the complete state graph is 1.56 (minimum is 1, the maximum 2 "
            "and the 95th percentile is 2).") in lines


# ---- fingerprints -----------------------------------------------------------------------------


def test_fingerprint_ignores_set_insertion_order_and_sharing():
    a = frozenset([Prepared(0), Prepared(1), Commit(), Prepared(2), Prepared(8)])
    b = frozenset()
    for m in [Prepared(8), Commit(), Prepared(2), Prepared(1), Prepared(0)]:
        b = b | {m}
    assert a == b
    s1 = TwoPhaseState((RmState.working,) * 3, TwoPhaseCommit().init_states()[0].tm_state, frozenset({0, 8, 16}), a)
    s2 = TwoPhaseState(tuple([RmState.working] * 3), s1.tm_state, frozenset({16, 8, 0}), b)
    assert fingerprint_of(s1) == fingerprint_of(s2)
    shared = ("x" * 3,) * 2
    copied = ("x" * 3, "".join(["x", "xx"]))
    assert fingerprint_of(shared) == fingerprint_of(copied)
    assert fingerprint_of({1: "a", 2: "b"}) == fingerprint_of({2: "b", 1: "a"})
    assert len(fingerprint_of(s1)) == 16


def test_fingerprint_distinguishes_types_and_values():
    values = [1, True, "1", (1,), frozenset({1}), RmState.working, "working", (RmState.working,),
              Prepared(1), Prepared(2), Commit(), None, (), frozenset(), {1: 2}]
    assert len({fingerprint_of(v) for v in values}) == len(values)


def test_fingerprint_is_the_same_in_another_process_with_another_hash_seed():
    code = ("from tests.checker.toys import *; from kcm.checker.engine.contract import fingerprint_of;"
            "print(fingerprint_of(frozenset({'a', 'b', 'c', 'd', RmState.aborted, RmState.working})).hex())")
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        outputs.add(out.stdout.strip())
    assert len(outputs) == 1
