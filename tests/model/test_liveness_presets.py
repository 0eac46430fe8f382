"""`kcm explore --liveness` on the Kafka presets: the clean model settles under weak fairness of
its healing actions (no fair cycle, every state can settle), the historical variants too (their
bugs are safety bugs), and the synthetic L1 loop is caught with a pinned lasso."""

from __future__ import annotations

import pytest
from kcm.checker.engine.liveness import EVENTUALLY_QUIESCENT, QUIESCENCE_REACHABLE
from kcm.model import actions as A
from kcm.model.catalogue.settledness import quiescent
from kcm.model.spec import heals


def test_tiny_settles_under_weak_fairness(liveness_of) -> None:
    model, result, live = liveness_of("tiny")
    assert result.verdict == "pass"
    assert live.verdict == "pass", live.summary_lines()
    assert (live.nodes, live.edges) == (10_294, 30_668)  # tiny without symmetry, as test_spec pins
    assert (live.cyclic_components, live.fair_components, live.unsettleable_states) == (0, 0, 0)
    assert live.healing_edges == 28_762


#: Variant presets whose whole graph explores in seconds (v2, v3, v4 and v7 take from half a minute
#: to many minutes without stopping at their violation; v2 and v3 run below, marked slow).
QUICK_VARIANTS = ["v1", "v5", "v6", "v8", "v9"]


@pytest.mark.parametrize("preset", QUICK_VARIANTS)
def test_the_historical_variants_break_safety_not_liveness(liveness_of, preset) -> None:
    _, result, live = liveness_of(preset)
    assert result.verdict == "violation"  # their own safety bug, found with -continue
    assert live.verdict == "pass", live.summary_lines()
    assert live.fair_components == 0 and live.unsettleable_states == 0


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["v2", "v3"])
def test_the_larger_variants_break_safety_not_liveness(liveness_of, preset) -> None:
    _, _, live = liveness_of(preset)
    assert live.verdict == "pass", live.summary_lines()


def test_the_synthetic_loop_is_caught_with_a_pinned_lasso(liveness_of) -> None:
    """L1: ReplicaLeaderElection re-puts itself with no znode. The controller settles everything
    else, then processes that event forever: a self-loop of ControllerProcessEvent on broker 0."""
    model, result, live = liveness_of("l1")
    assert result.verdict == "pass"  # no safety property and no goal sees it
    v = next(x for x in live.violations if x.name == EVENTUALLY_QUIESCENT)
    assert (v.loop, v.trace_length) == (9, 10)
    entry, last = v.trace[v.loop][1], v.trace[-1][1]
    assert entry == last and not quiescent(entry)
    cycle = [a for a, _ in v.trace[v.loop + 1:]]
    assert cycle == [A.ControllerProcessEvent(0)]
    assert all(heals(s, a) for (_, s), (a, _) in zip(v.trace, v.trace[1:]))
    # The only healing action enabled on the cycle is the one it takes: nothing fair leaves it.
    assert [a for a in model.enabled_actions(entry) if heals(entry, a)] == cycle
    assert (live.cyclic_components, live.fair_components) == (2567, 45)
    # The loop starts with the first controller: no state settles.
    assert live.unsettleable_states == live.nodes == 11_277
    assert QUIESCENCE_REACHABLE in {x.name for x in live.violations}
    # Lassos kept are capped; every fair component is still judged.
    from kcm.checker.engine.liveness import check_liveness
    capped = check_liveness(model, result.extra["graph"], max_lassos=1)
    assert len(capped.livelocks) == 1 and capped.violations[0].loop == 9


def test_the_healing_actions_are_the_ones_settle_takes() -> None:
    from kcm.model.spec import init_states, settle_path, step

    from kcm import config

    cfg = config.load_preset("tiny")
    start = init_states(cfg)[0]
    state = start
    for action in settle_path(cfg, start):
        assert heals(state, action)
        after = step(cfg, state, action)
        assert after is not None, action
        state = after
    assert quiescent(state)


def test_a_known_loop_keeps_the_gate_green_and_is_still_listed(liveness_of) -> None:
    """How a Kafka 2.6 loop is listed (model/known_loops.py): here L1's loop, recognised by its
    cycle, as if it were a 2.6 behaviour; both properties then pass and the lasso is kept."""
    from kcm.checker.engine.liveness import check_liveness
    from kcm.model.checking.kafka_model import KafkaModel
    from kcm.model.known_loops import KnownLoop

    model, result, _ = liveness_of("l1")
    respin = KnownLoop("ReplicaLeaderElectionRespins", "F-test", EVENTUALLY_QUIESCENT,
                       lambda cycle: all(type(a) is A.ControllerProcessEvent for a, _ in cycle[1:]))

    class Known(KafkaModel):
        def known_loops(self):
            return (respin,)

    live = check_liveness(Known(model.cfg, symmetry=False), result.extra["graph"])
    assert live.verdict == "pass", live.summary_lines()
    assert {k.known for k in live.known} == {"ReplicaLeaderElectionRespins"}
    assert min((k.prefix_length, k.cycle_length) for k in live.known) == (9, 1)


@pytest.mark.slow
def test_the_default_preset_settles_under_weak_fairness(liveness_of) -> None:
    """The CI gate's preset (982,400 states, ~4.2 million edges: the array backend, not networkx)."""
    from tests.model.test_default_preset import DEFAULT_COUNTS, DEFAULT_GENERATED

    model, result, live = liveness_of("default")
    assert result.verdict == "pass"
    # Every generated edge is kept; the initial states (the cold start and one per overlapping
    # run: four) count as generated, not as edges.
    assert len(model.init_states()) == 4
    assert (live.nodes, live.edges) == (DEFAULT_COUNTS[0], DEFAULT_GENERATED - 4)
    assert live.backend == "arrays"
    assert live.verdict == "pass", live.summary_lines()
    assert live.fair_components == 0 and live.unsettleable_states == 0


@pytest.mark.parametrize("scope", ["b2-rf1-p1-crash+shutdown-cold", "b2-rf1-p1-crash+shutdown-settled",
                                   "b2-rf2-p1-shutdown+move-settled"])
def test_a_refused_controlled_shutdown_retries_as_a_healing_step(scope) -> None:
    """A controlled shutdown the controller refused (its controller dead, moved or expired, or the
    broker still leading) is retried by the broker's own loop: the retry spends no budget and
    heals, so every state can still settle. Counted as an operation instead, a refused request
    left the broker in RETRY with nothing fair to take it out, and QuiescenceAlwaysReachable
    failed on these gate scopes of the clean model."""
    from kcm.checker.engine.bfs import explore
    from kcm.checker.engine.liveness import check_liveness
    from kcm.model.checking.kafka_model import KafkaModel
    from kcm.model.cluster import Shutdown
    from kcm.model.spec import init_states

    from kcm.sweep.grid import load

    cfg = next(s for s in load("gate").scopes if s.name == scope).config()
    model = KafkaModel(cfg, symmetry=False, initial_orbits=True)
    result = explore(model, keep_graph=True, symmetry=False, stop_on_violation=False)
    live = check_liveness(model, result.extra["graph"])
    assert live.verdict == "pass", live.summary_lines()
    assert live.fair_components == 0 and live.unsettleable_states == 0
    # The first request spends the budget (an operation); its retry spends nothing and heals.
    start = init_states(cfg)[0]
    brokers = list(start.brokers)
    brokers[1] = brokers[1]._replace(shutdown=Shutdown.RETRY, shutdown_tries=1)
    refused = start._replace(brokers=tuple(brokers))
    request = A.BrokerRequestControlledShutdown(1)
    assert not heals(start, request) and heals(refused, request)
