"""The controller-epoch quotient (`kcm.model.checking.epoch_quotient`) and Kafka 2.6's controller-move loops
found with it as lassos (docs/model.md, Findings 6)."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.liveness import EVENTUALLY_QUIESCENT, EVENTUALLY_SETTLED, QUIESCENCE_REACHABLE, check_liveness
from kcm.model import actions as A
from kcm.model.checking.epoch_quotient import EpochQuotientModel, controller_epochs, normalize_epochs, rename_epochs
from kcm.model.checking.kafka_model import KafkaModel, config_fields
from kcm.model.cluster import NO_ZNODE
from kcm.model.config import ModelConfig

ROOT = Path(__file__).resolve().parents[2]


def _config(name: str, **extra) -> ModelConfig:
    values = tomllib.loads((ROOT / "docs" / "findings" / f"{name}.toml").read_text())
    values.pop("description")
    return ModelConfig.from_mapping({**values, **extra})


def _walk_states(cfg: ModelConfig, n: int, seed: int) -> list:
    """States of random walks (the concrete model, epochs growing)."""
    model = KafkaModel(cfg, symmetry=False)
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        s = model.init_states()[0]
        for _ in range(40):
            succ = model.successors(s)
            if not succ:
                break
            s = rng.choice(succ)[1]
            out.append(s)
    return out


def _spread(v: int) -> int:
    """An order-preserving renaming with gaps (0 and -1 kept)."""
    return 3 * v + 4 if v > 0 else v


def test_normal_form_ranks_the_positive_epochs_and_keeps_0_and_minus_1() -> None:
    from kcm import config

    states = _walk_states(config.load_preset("tiny"), 2000, 1)
    s = next(x for x in states if len({v for v in controller_epochs(x) if v > 0}) >= 2)
    assert normalize_epochs(s) is s  # a walk's epochs are 1..k already: the same object
    gapped = rename_epochs(s, _spread)
    assert gapped != s and sorted(controller_epochs(gapped)) == sorted(map(_spread, controller_epochs(s)))
    assert normalize_epochs(gapped) == s
    assert {v for v in controller_epochs(gapped) if v <= 0} == {v for v in controller_epochs(s) if v <= 0}
    # anything but the epochs is untouched
    assert gapped.zk.assignment == s.zk.assignment and [b.queue for b in gapped.brokers] == [b.queue for b in s.brokers]
    with pytest.raises(ValueError, match="above /controller_epoch"):
        normalize_epochs(gapped._replace(zk=gapped.zk._replace(controller_epoch=1)))


@pytest.mark.parametrize("name", ["controller-move-preferred", "tiny", "v1", "v2"])
def test_an_order_preserving_renaming_of_epochs_commutes_with_every_step(name) -> None:
    """The bisimulation the quotient rests on: a state and its renaming enable the same actions in
    the same order, their successors are each other's renamings (up to the normal form), and they
    agree on quiescence, settling and every safety property."""
    from kcm.checker.engine.contract import Always
    from kcm.model.catalogue.settledness import settled

    from kcm import config

    cfg = (_config(name) if name.startswith("controller") else config.load_preset(name))
    cfg = ModelConfig.from_mapping({**config_fields(cfg), "max_controller_epoch": 32})
    model = KafkaModel(cfg, symmetry=False)
    always = [p for p in model.properties() if isinstance(p, Always)]
    checked = 0
    for s in _walk_states(cfg, 400, 7):
        r = rename_epochs(s, _spread)
        a, b = model.successors(s), model.successors(r)
        assert [x for x, _ in a] == [x for x, _ in b]
        assert [normalize_epochs(t) for _, t in a] == [normalize_epochs(t) for _, t in b]
        assert (model.is_quiescent(s), settled(s)) == (model.is_quiescent(r), settled(r))
        assert [p.holds(s) for p in always] == [p.holds(r) for p in always]
        checked += r != s
    assert checked > 100


def test_the_preferred_election_loop_is_a_known_lasso() -> None:
    """Findings 6: broker 0 (the partition's only replica) crashes and its session expires, an
    operator asks for a preferred election, and broker 1's failover throws in
    fetchPendingPreferredReplicaElections and moves the controller, forever."""
    model = EpochQuotientModel(_config("controller-move-preferred"))
    result = explore(model, keep_graph=True, symmetry=False, stop_on_violation=False)
    live = check_liveness(model, result.extra["graph"])
    assert live.nodes == 5_002 and live.quotient == "controller epochs"
    assert live.verdict == "pass", live.summary_lines()
    assert live.checked == (EVENTUALLY_QUIESCENT, EVENTUALLY_SETTLED, QUIESCENCE_REACHABLE)
    # Under fair restarts the loop ends (broker 0 comes back): a cycle, but not a fair one.
    assert (live.cyclic_components, live.fair_components, live.unsettleable_states) == (1, 0, 0)
    [k] = [k for k in live.known if k.known == "PendingPreferredElectionWithoutLeadership"]
    assert (k.finding, k.breaks, k.prefix_length, k.cycle_length) == ("Findings 6", EVENTUALLY_SETTLED, 4, 2)
    actions = [a for a, _ in k.trace[1:]]
    assert actions == [A.BrokerCrash(0), A.ZkSessionExpire(0), A.AdminPreferredElection(0),
                       A.ControllerProcessEvent(1), A.ControllerProcessEvent(1), A.ControllerProcessEvent(1)]
    entry, last = k.trace[k.loop][1], k.trace[-1][1]
    assert last != entry and normalize_epochs(last) == normalize_epochs(entry)
    assert last.zk.controller_epoch == entry.zk.controller_epoch + 1
    assert entry.zk.partitions[0] == NO_ZNODE and entry.zk.preferred == 1
    # Without the known loop it is a violation of EventuallySettled, and of nothing else.
    class Unlisted(EpochQuotientModel):
        def known_loops(self):
            return ()

    bare = check_liveness(Unlisted(_config("controller-move-preferred")), result.extra["graph"])
    assert [v.name for v in bare.violations] == [EVENTUALLY_SETTLED]
    assert (bare.violations[0].loop, bare.violations[0].trace_length) == (4, 6)


def test_without_the_quotient_the_loop_is_a_chain_cut_by_the_bound_and_undecided() -> None:
    """Issue 14's false "cannot settle": on the plain model the loop climbs to the epoch bound, where
    the next election is pruned. Told so (`pruned`), the checker calls those states undecided and
    reports nothing; blind to it, it would report QuiescenceAlwaysReachable."""
    cfg = _config("controller-move-preferred")
    told = EpochQuotientModel(cfg, quotient=False)
    result = explore(told, keep_graph=True, symmetry=False, stop_on_violation=False)
    graph = result.extra["graph"]
    live = check_liveness(told, graph)
    assert live.verdict == "pass", live.summary_lines()
    assert live.pruned_states > 0 and live.undecided_states > 0 and live.unsettleable_states == 0
    assert not live.known  # no cycle: each turn is one epoch higher
    assert any("cut by a bound" in line for line in live.summary_lines())
    graph.pruned[:] = bytes(len(graph.pruned))  # the same graph, no pruning told
    blind = check_liveness(KafkaModel(cfg, symmetry=False), graph)
    assert QUIESCENCE_REACHABLE in {v.name for v in blind.violations}


#: The reassignment loop's prefix on docs/findings/controller-move-reassignment.toml: partition 0's
#: only replica (broker 0) and its reassignment target (broker 1) crash and their sessions expire
#: before broker 2's first failover, with the reassignment to (1,) requested.
REASSIGNMENT_PREFIX = [A.BrokerCrash(0), A.ZkSessionExpire(0), A.BrokerCrash(1), A.ZkSessionExpire(1),
                       A.AdminReassign(partition=0, target=(1,))]


def reassignment_loop():
    """The reassignment loop as a lasso from the real initial state: the config's whole graph is
    millions of states (three brokers, two crashes), so the liveness check runs on the graph
    explored from the prefix's last state, and the prefix is put in front of the lasso it finds.
    Returns (model, prefix trace, liveness result from there)."""
    cfg = _config("controller-move-reassignment")
    model = EpochQuotientModel(cfg)
    state = model.init_states()[0]
    prefix = [(None, state)]
    for action in REASSIGNMENT_PREFIX:
        state = model.step(state, action)
        prefix.append((action, state))

    class FromPrefix(EpochQuotientModel):
        def init_states(self):
            return (state,)

    start = FromPrefix(cfg)
    result = explore(start, keep_graph=True, symmetry=False, stop_on_violation=False)
    return model, prefix, check_liveness(start, result.extra["graph"])


@pytest.mark.slow
def test_the_reassignment_loop_is_a_known_lasso() -> None:
    # (about 77,000 states: some 30 s alone, two minutes on a loaded machine; the committed trace
    # docs/findings/controller-move-reassignment.itf.json is this lasso)
    """Findings 6: broker 2's every failover resumes the reassignment of partition 0, which has no
    state znode and no live replica, and A1's updateLeaderEpoch throws."""
    model, prefix, live = reassignment_loop()
    assert live.verdict == "pass", live.summary_lines()
    assert [k.known for k in live.known] == ["ResumedReassignmentWithoutStateZnode"]
    [k] = live.known
    assert live.nodes == 76_898  # explored from the prefix's last state, modulo controller epochs
    # the first failover moves the controller already (U1 written, then maybeResumeReassignments
    # throws); it and its ControllerChange, then the ZkPartitionReassignment event queued meanwhile
    # (a no-op: the controller is inactive), then the loop: Reelect, ControllerChange
    assert (k.breaks, k.prefix_length, k.cycle_length) == (EVENTUALLY_SETTLED, 3, 2)
    assert [a for a, _ in k.trace[1:]] == [A.ControllerProcessEvent(2)] * 5
    entry = k.trace[k.loop][1]
    assert entry.zk.partitions[0] == NO_ZNODE and entry.zk.assignment[0] == (1, 0) and entry.zk.adding[0] == (1,)
    assert k.trace[-1][1].zk.controller_epoch == entry.zk.controller_epoch + 1
    # from the real initial state, through the same quotient model: a replayable lasso
    from kcm.checker.engine.liveness import reproduces_liveness

    full = prefix + list(k.trace[1:])
    states, actions = [s for _, s in full], [a for a, _ in full[1:]]
    assert model.fingerprint(states[-1]) == model.fingerprint(states[len(prefix) - 1 + k.loop])
    assert reproduces_liveness(model, states, actions, prop=EVENTUALLY_SETTLED)
    assert not reproduces_liveness(model, states, actions, prop=EVENTUALLY_QUIESCENT)  # a restart is fair there


#: States modulo controller epochs (the plain graph's counts are in test_liveness_presets for tiny).
QUOTIENT_NODES = {"tiny": 9_978, "v1": 9_666, "v5": 2_957, "v6": 1_094, "v8": 3_293, "v9": 702, "zkfaults": 12_908}


@pytest.mark.parametrize("preset", sorted(QUOTIENT_NODES))
def test_the_presets_settle_modulo_controller_epochs(preset) -> None:
    """As `kcm explore --liveness` runs them: all three liveness properties hold on the clean model
    and on the historical variants (their bugs are safety bugs), nothing is pruned."""
    from kcm import config

    model = EpochQuotientModel(config.load_preset(preset))
    result = explore(model, keep_graph=True, symmetry=False, stop_on_violation=False)
    live = check_liveness(model, result.extra["graph"])
    assert live.verdict == "pass", live.summary_lines()
    assert live.checked == (EVENTUALLY_QUIESCENT, EVENTUALLY_SETTLED, QUIESCENCE_REACHABLE)
    assert (live.nodes, live.fair_components, live.unsettleable_states, live.pruned_states) == (
        QUOTIENT_NODES[preset], 0, 0, 0)


def test_the_synthetic_loop_breaks_all_three_modulo_controller_epochs() -> None:
    from kcm import config

    model = EpochQuotientModel(config.load_preset("l1"))
    result = explore(model, keep_graph=True, symmetry=False, stop_on_violation=False)
    live = check_liveness(model, result.extra["graph"])
    assert [v.name for v in live.violations] == [EVENTUALLY_QUIESCENT, EVENTUALLY_SETTLED, QUIESCENCE_REACHABLE]
    assert (live.nodes, live.fair_components, live.unsettleable_states) == (10_809, 41, 10_809)
    v = live.violations[0]
    assert (v.loop, v.trace_length) == (9, 10)


@pytest.mark.parametrize("name, loop, length", [("controller-move-preferred", 4, 6),
                                                ("controller-move-reassignment", 8, 10)])
def test_the_committed_lassos_replay(name, loop, length) -> None:
    """docs/findings' lassos replay from the initial state through the quotient model and are fair
    cycles of EventuallySettled (`replay_itf` raises otherwise)."""
    from kcm.checker.engine.itf import read_itf
    from kcm.checker.engine.replay import replay_itf

    path = ROOT / "docs" / "findings" / f"{name}.itf.json"
    trace = read_itf(path)
    assert (trace.loop, len(trace.states) - 1) == (loop, length)
    assert trace.meta["model_factory"] == "kcm.model.checking.epoch_quotient:quotient_model_for"
    _, states = replay_itf(path)
    assert states[-1] != states[loop] and normalize_epochs(states[-1]) == normalize_epochs(states[loop])
