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
from kcm.checker.engine.stats import Outdegree, Progress, ProgressPrinter, collision_probability

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
