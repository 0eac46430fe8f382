"""A model's disjoint runs explored in several processes (`kcm.checker.engine.runs`) give the single
explorer's result: the same counts, level by level, the same goals and witnesses, the same
coverage, and the very counterexample the single explorer reports."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import time

import pytest
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.runs import explore_runs, runs_of
from kcm.model.checking.kafka_model import KafkaModel

from kcm.config import load_preset
from tests.checker.toys import LanePoint, Lanes, grid


def signature(r) -> dict:
    """Everything the two must agree on; action kinds as a mapping (the merge lists them in the
    model's declared order, the single explorer as first generated)."""
    s, c = r.stats, r.coverage
    return {
        "verdict": r.verdict, "reason": r.reason, "checked": r.checked, "symmetry": r.symmetry,
        "violations": [(v.name, v.kind, v.trace) for v in r.violations],
        "known": [(v.name, v.trace) for v in r.known_violations], "known_reasons": r.known_reasons,
        "goals": {name: (g.met, g.trace) for name, g in r.goals.items()},
        "counts": (s.generated, s.distinct, s.queue, s.depth, s.frontier_sizes, s.outdegree),
        "actions": {a.name: (a.evaluations, a.new_states) for a in c.actions},
        "never_enabled": set(c.never_enabled), "edges": (c.edges_taken, c.edges_total, c.untaken, c.outside_universe),
        "edge_counts": dict(c.edge_counts),
    }


def test_initial_states_are_grouped_by_run() -> None:
    assert runs_of(Lanes()) == [(0,), (1,), (2,)]
    assert runs_of(grid()) == [(0,)]   # one run unless the model says otherwise
    # default: the cold start on each of the topic's six placements, then its three overlapping runs.
    assert runs_of(KafkaModel(load_preset("default"))) == [(0, 4, 5, 6, 7, 8), (1,), (2,), (3,)]


def test_runs_in_processes_give_the_single_explorers_result() -> None:
    toy = Lanes(goals=((1, 3, 3), (2, 1, 0), (0, 0, 0)))
    single, farm = explore(toy), explore_runs(toy, jobs=2)
    assert single.verdict == "pass" and single.stats.distinct == 9 + 16 + 25
    assert signature(farm) == signature(single)
    assert farm.extra["processes"] == 2
    assert [(r["run"], r["distinct"]) for r in farm.extra["runs"]] == [(0, 9), (1, 16), (2, 25)]


def test_progress_sums_the_runs() -> None:
    """One progress line for all runs: it starts at nothing and ends at the merged counts."""
    seen = []
    farm = explore_runs(Lanes(), jobs=2, progress=seen.append, progress_interval=0.0)
    assert seen[0].phase == "init" and (seen[0].distinct, seen[0].generated) == (0, 0)
    assert seen[-1].phase == "final"
    assert (seen[-1].distinct, seen[-1].generated, seen[-1].level) == (50, farm.stats.generated, 9)
    assert all(a.distinct <= b.distinct for a, b in zip(seen, seen[1:]))


def test_one_process_is_the_single_explorer_itself() -> None:
    toy = Lanes()
    assert "runs" not in explore_runs(toy, jobs=1).extra
    assert "runs" not in explore_runs(grid(), jobs=2).extra   # one run: nothing to spread
    assert explore_runs(toy, jobs=1).coverage == explore(toy).coverage


def test_the_counterexample_is_the_single_explorers() -> None:
    # Bugs two steps from lanes 1 and 2's start and three from lane 0's: the lower of the two
    # shortest runs wins the tie, as in the single explorer's level order.
    toy = Lanes(bugs=((0, 2, 1), (2, 1, 1), (1, 2, 0)))
    single, farm = explore(toy), explore_runs(toy, jobs=3)
    assert [(v.name, v.trace_length) for v in single.violations] == [("not_1_2_0", 2)]
    assert signature(farm)["violations"] == signature(single)["violations"]
    assert farm.verdict == "violation" and not farm.complete


class LateStart(Lanes):
    """Lanes whose lane 0 has a second initial state, (0, 0, 1), listed after lane 1's."""

    def init_states(self):
        return (LanePoint(0, 0, 0), LanePoint(1, 0, 0), LanePoint(0, 0, 1))


def test_a_tie_goes_to_the_initial_state_listed_first_not_to_the_lower_run() -> None:
    # One step from lane 1's start, (1, 1, 0); one step from lane 0's second start, (0, 1, 1).
    # The single explorer's first level lists lane 1's start before lane 0's second one, so it
    # reports lane 1's bug, though lane 0 is the lower run.
    toy = LateStart(bugs=((0, 1, 1), (1, 1, 0)))
    single, farm = explore(toy), explore_runs(toy, jobs=2)
    assert [(v.name, v.trace_length) for v in single.violations] == [("not_1_1_0", 1)]
    assert signature(farm)["violations"] == signature(single)["violations"]
    goals = LateStart(goals=((0, 1, 1), (1, 1, 0)))
    assert signature(explore_runs(goals, jobs=2)) == signature(explore(goals))


def test_a_deadlock_as_long_comes_after_a_violation_found_on_an_edge() -> None:
    # Lane 0's corner (2, 2) is a deadlock after 4 steps, found expanding level 4; lane 1's bug
    # (3, 1), also 4 steps away, is found expanding level 3, so the single explorer reports it.
    toy = Lanes(sizes=(2, 3), stuck=(0,), bugs=((1, 3, 1),))
    single, farm = explore(toy), explore_runs(toy, jobs=2)
    assert [(v.name, v.trace_length) for v in single.violations] == [("not_1_3_1", 4)]
    assert signature(farm)["violations"] == signature(single)["violations"]
    # Without the bug, the deadlock is the counterexample.
    alone = Lanes(sizes=(2, 3), stuck=(0,))
    sequential = [(v.name, v.trace) for v in explore(alone).violations]
    assert [(v.name, v.trace) for v in explore_runs(alone, jobs=2).violations] == sequential
    assert [name for name, _ in sequential] == ["deadlock"]


def test_going_on_after_violations_keeps_the_first_of_each_property() -> None:
    toy = Lanes(sizes=(2, 3, 4), stuck=(2,), bugs=((0, 2, 1), (2, 1, 1), (1, 2, 0), (2, 3, 3)))
    single = explore(toy, stop_on_violation=False)
    farm = explore_runs(toy, jobs=2, stop_on_violation=False)
    assert len(single.violations) == 5   # four bugs and lane 2's deadlock
    assert {(v.name, v.trace) for v in farm.violations} == {(v.name, v.trace) for v in single.violations}
    assert signature(farm)["counts"] == signature(single)["counts"]


def test_goals_are_judged_on_all_runs_together() -> None:
    # (1, 3, 3) is met in run 1 only, which does not make it unmet in runs 0 and 2; (0, 5, 5) is
    # off lane 0's grid, so no run meets it and the complete union reports it.
    toy = Lanes(goals=((1, 3, 3), (0, 5, 5)))
    single, farm = explore(toy), explore_runs(toy, jobs=2)
    assert [(v.name, v.kind) for v in single.violations] == [("reach_0_5_5", "sometimes")]
    assert signature(farm) == signature(single)


def test_a_depth_bound_stops_the_search_below_it() -> None:
    """What a run is told when another found a violation: levels up to the bound are expanded
    (a deadlock there would tie), nothing deeper."""
    toy = Lanes(sizes=(6,))
    bounded = explore(toy, depth_bound=lambda: 3)
    assert bounded.reason == "bounded" and bounded.verdict == "incomplete"
    assert bounded.stats.frontier_sizes == (1, 2, 3, 4, 5)   # levels 0..3 expanded, level 4 found
    assert explore(toy, depth_bound=lambda: None).stats.depth == 13


def test_a_violation_in_one_run_is_reported_when_another_is_long() -> None:
    # Run 0 breaks at once; run 1 (a 121 x 121 grid) is cut below it if the bound reaches it in
    # time, else completes: the verdict and the counterexample are the same either way.
    toy = Lanes(sizes=(1, 120), bugs=((0, 1, 0),))
    farm = explore_runs(toy, jobs=2)
    assert [(v.name, v.trace_length) for v in farm.violations] == [("not_0_1_0", 1)]
    assert farm.verdict == "violation"


class Interrupting(Lanes):
    """Lanes whose lane 1 interrupts the parent (as Ctrl-C would) when it reaches (2, 2), then
    goes on slowly (a millisecond a step), so that the parent's stop reaches it mid-run."""

    def step(self, s, a):
        nxt = super().step(s, a)
        if s.lane == 1 and os.getpid() != self.parent:
            if nxt == LanePoint(1, 2, 2) and not self.sent:   # reached twice: (1, 2) and (2, 1) lead there
                self.sent = True
                os.kill(os.getppid(), signal.SIGINT)
            if (nxt.x, nxt.y) >= (2, 0):
                time.sleep(0.001)
        return nxt


def test_an_interruption_keeps_what_every_run_found() -> None:
    toy = Interrupting(sizes=(2, 200))
    toy.parent, toy.sent = os.getpid(), False
    started = time.monotonic()
    farm = explore_runs(toy, jobs=2)
    assert time.monotonic() - started < 30, "the worker was not stopped"
    assert farm.verdict == "incomplete" and farm.reason == "interrupted"
    runs = {r["run"]: r for r in farm.extra["runs"]}
    # Lane 0 (9 states) may or may not have been explored by then; lane 1 got past (2, 2).
    assert 6 <= runs[1]["distinct"] < 201 * 201 and runs[1]["verdict"] == "incomplete"
    assert farm.stats.distinct == sum(r["distinct"] for r in runs.values())
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler   # the parent's handler is back


class Stuck(Lanes):
    """Lanes whose lane 1, at (2, 2), interrupts the parent twice and then hangs in a step (it
    never gets to ask whether to stop)."""

    def step(self, s, a):
        nxt = super().step(s, a)
        if nxt == LanePoint(1, 2, 2) and os.getpid() != self.parent:
            os.kill(os.getppid(), signal.SIGINT)
            time.sleep(1)
            os.kill(os.getppid(), signal.SIGINT)
            time.sleep(60)
        return nxt


def test_a_second_interruption_kills_the_workers() -> None:
    toy = Stuck(sizes=(2, 8))
    toy.parent = os.getpid()
    started = time.monotonic()
    farm = explore_runs(toy, jobs=2)
    assert time.monotonic() - started < 30, "the stuck worker was not killed"
    assert farm.verdict == "incomplete" and farm.reason == "interrupted"
    assert 1 not in {r["run"] for r in farm.extra.get("runs", [])}   # killed with its run


# ---- the Kafka model ------------------------------------------------------------------------------


def test_kafka_runs_in_processes_give_the_single_explorers_result() -> None:
    cfg = load_preset("zkfaults")
    single, farm = explore(KafkaModel(cfg)), explore_runs(KafkaModel(cfg), jobs=2)
    assert len(farm.extra["runs"]) == 1 + len(cfg.overlapping)
    assert signature(farm) == signature(single)


def test_kafka_runs_never_meet() -> None:
    """`run_of` is `Cluster.scenario`, which no step writes: every successor of every state of
    `zkfaults` (five runs) is in its parent's run, and so is its representative."""
    model = KafkaModel(load_preset("zkfaults"))
    frontier = list(model.init_states())
    seen = {model.fingerprint(model.representative(s)) for s in frontier}
    assert len({model.run_of(s) for s in frontier}) == 5
    while frontier:
        s = frontier.pop()
        for _, t in model.successors(s):
            assert model.run_of(t) == model.run_of(s) == model.run_of(model.representative(t))
            f = model.fingerprint(model.representative(t))
            if f not in seen:
                seen.add(f)
                frontier.append(t)
    assert len(seen) == explore(model).stats.distinct


@pytest.mark.parametrize("variant", ["V1", "V2", "V8", "V10", "V12"])
def test_kafka_variants_give_the_single_explorers_counterexample(variant) -> None:
    """On `zkfaults` V1 and V10 break in the cold start first, V2 and V12 in overlapping run 2 and
    V8 in run 3; whichever run breaks, the counterexample is the single explorer's (the other runs
    are cut below it, so their counts vary with timing)."""
    cfg = dataclasses.replace(load_preset("zkfaults"), variant=variant)
    single, farm = explore(KafkaModel(cfg)), explore_runs(KafkaModel(cfg), jobs=2)
    assert single.verdict == farm.verdict == "violation"
    assert signature(farm)["violations"] == signature(single)["violations"]
    assert single.violations[0].trace[0][1].scenario == RUN_BROKEN_FIRST[variant]


RUN_BROKEN_FIRST = {"V1": 0, "V2": 2, "V8": 3, "V10": 0, "V12": 2}


def _explore_lanes_in(out) -> None:
    out.put(explore_runs(Lanes(), jobs=2).extra.get("runs"))


def test_a_daemonic_process_explores_in_one_process() -> None:
    """A pool's worker may not start processes: there the runs are explored one after the other."""
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    proc = ctx.Process(target=_explore_lanes_in, args=(out,), daemon=True)
    proc.start()
    assert out.get(timeout=60) is None   # the single explorer's result, which lists no runs
    proc.join()
