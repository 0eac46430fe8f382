"""Partial-order reduction (`kcm.checker.engine.por`) on toy models where the reduction is known exactly.

- `Counters(n, k)`: n independent counters 0..k, `Inc(i)` touches counter i only. The full graph
  has (k+1)^n states; with no property reading the counters the ample sets are single counters,
  so the reduced graph is one path of n*k steps (n*k + 1 states).
- `Counters(..., wrap=True)`: the counters count modulo k, so the reduced graph has cycles and the
  cycle proviso (C3) is what makes the explorer look past counter 0 (without it the violation on
  counter 1 is never reached).
- `Counters(..., shared=True)`: every `Inc` also writes one shared total, so all are dependent and
  nothing is reduced.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.contract import Always, AlwaysStep, Footprint, Independence, Model, PropertyReads
from kcm.checker.engine.errors import UsageError
from kcm.checker.engine.por import Reducer, dependent

from tests.checker.toys import GridCounter


@dataclass(frozen=True)
class Inc:
    i: int


class Counters(Model):
    def __init__(self, n: int, k: int, *, wrap: bool = False, shared: bool = False, props=()) -> None:
        self.n, self.k, self.wrap, self.shared = n, k, wrap, shared
        self.name = f"counters-{n}x{k}"
        self._props = tuple(props)

    def init_states(self):
        return [(0,) * (self.n + 1)]  # the counters, then the shared total

    def enabled_actions(self, s):
        return [Inc(i) for i in range(self.n) if self.wrap or s[i] < self.k]

    def step(self, s, a):
        c = list(s)
        c[a.i] = (c[a.i] + 1) % self.k if self.wrap else c[a.i] + 1
        if self.shared:
            c[-1] = (c[-1] + 1) % 2
        return tuple(c)

    def is_terminal(self, s):
        return all(x == self.k for x in s[:self.n])

    def properties(self):
        return self._props

    def por_info(self):
        extra = {("total",)} if self.shared else set()
        groups = {("inc", i): Footprint(frozenset({("c", i)} | extra), frozenset({("c", i)} | extra))
                  for i in range(self.n)}
        reads = {"C0Small": PropertyReads(frozenset({("c", 0)})),
                 "C1NotTop": PropertyReads(frozenset({("c", 1)})),
                 "StepOfC2": PropertyReads(frozenset(), frozenset({"inc"}))}
        return Independence(groups, lambda s, a: ("inc", a.i), reads.get)


def run(model, **kw):
    return explore(model, stop_on_violation=False, **kw)


def test_independent_counters_reduce_to_one_path():
    full, reduced = run(Counters(3, 2)), run(Counters(3, 2), por=True)
    assert (full.stats.distinct, full.stats.generated) == (27, 55)
    assert (reduced.stats.distinct, reduced.stats.generated) == (7, 7)  # the initial state counts as generated
    assert full.verdict == reduced.verdict == "pass"
    assert reduced.extra["por"]["reduced"] == 4  # (0,0),(1,0),(2,0),(2,1) of counters 0,1; then one enabled
    assert reduced.extra["por"]["skipped_edges"] == 6
    assert "por" not in full.extra
    big = run(Counters(4, 3), por=True)
    assert (run(Counters(4, 3)).stats.distinct, big.stats.distinct) == (256, 13)


def test_visible_counter_keeps_its_interleavings_and_the_violation():
    """Counter 0 is read by the invariant: its increments are visible, so they are never deferred
    in a proper ample set; the violation is found, with a longer trace than the shortest."""
    bad = Always("C0Small", lambda s: s[0] < 2)
    full, reduced = run(Counters(3, 2, props=[bad])), run(Counters(3, 2, props=[bad]), por=True)
    assert [v.name for v in full.violations] == [v.name for v in reduced.violations] == ["C0Small"]
    assert full.violations[0].trace_length == 2
    assert reduced.violations[0].trace_length == 6
    assert (full.stats.distinct, reduced.stats.distinct) == (27, 7)
    assert any("longer than the shortest" in line for line in reduced.summary_lines())


def test_a_property_without_declared_reads_makes_everything_visible():
    unknown = Always("Unknown", lambda s: True)
    assert run(Counters(3, 2, props=[unknown]), por=True).stats.distinct == 27


def test_transition_property_makes_its_kind_visible():
    step_prop = AlwaysStep("StepOfC2", lambda s, a, t: not (a.i == 2 and t[2] == 2))
    full = run(Counters(3, 2, props=[step_prop]))
    reduced = run(Counters(3, 2, props=[step_prop]), por=True)
    assert [v.name for v in full.violations] == [v.name for v in reduced.violations] == ["StepOfC2"]
    assert reduced.stats.distinct == 27  # every Inc is of the judged kind: nothing is reduced


def test_cycle_proviso_finds_what_ignoring_would_miss():
    """Modulo counters: the ample set {Inc(0)} alone would cycle on counter 0 for ever; the proviso
    expands fully where an ample successor is already visited, and counter 1 is reached."""
    top = Always("C1NotTop", lambda s: s[1] != 2)
    full = run(Counters(2, 3, wrap=True, props=[top]))
    reduced = run(Counters(2, 3, wrap=True, props=[top]), por=True)
    assert [v.name for v in full.violations] == [v.name for v in reduced.violations] == ["C1NotTop"]
    assert reduced.extra["por"]["proviso"] >= 1
    assert (full.stats.distinct, reduced.stats.distinct) == (9, 9)


def test_dependent_actions_are_not_reduced():
    assert run(Counters(3, 2, shared=True), por=True).stats.distinct == run(Counters(3, 2, shared=True)).stats.distinct


def test_traces_replay_through_the_full_successor_index():
    bad = Always("C0Small", lambda s: s[0] < 2)
    trace = run(Counters(3, 2, props=[bad]), por=True).violations[0].trace
    assert [a.i for a, _ in trace[1:]] == [1, 1, 2, 2, 0, 0]
    assert trace[-1][1][:3] == (2, 2, 2)


def test_dependence_of_footprints():
    f = Footprint(frozenset({"x"}), frozenset({"x"}))
    g = Footprint(frozenset({"x", "y"}), frozenset({"y"}))
    h = Footprint(frozenset({"z"}), frozenset())
    assert dependent(f, g) and dependent(g, f)
    assert not dependent(f, h) and not dependent(h, h)


def test_usage_errors():
    with pytest.raises(UsageError, match="declares no independence"):
        explore(GridCounter(2), por=True)
    with pytest.raises(UsageError, match="liveness"):
        explore(Counters(2, 1), por=True, keep_graph=True, symmetry=False)
    with pytest.raises(ValueError):
        Reducer(GridCounter(2), [])
