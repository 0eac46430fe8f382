"""`kcm mutate`: mutants of the model's own source, their outcomes, and the two engines.

Mutants are pinned by their operator and the code they change (never by a line number): other
work edits the model files, and the generator must follow whatever the sources are.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import kcm.model.controller
import pytest
from kcm.checker import mutation as M
from kcm.checker.mutation import report as mutation_report
from kcm.checker.mutation import runner
from kcm.model.config import ModelConfig

from kcm import config
from kcm.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mutants():
    return M.generate()


def pick(mutants, operator: str, *snippets: str) -> M.Mutant:
    """The one mutant of `operator` whose description names every snippet."""
    found = [m for m in mutants if m.operator == operator and all(s in m.description for s in snippets)]
    assert len(found) >= 1, f"no {operator} mutant with {snippets}"
    return found[0]


@pytest.fixture(scope="module")
def tiny():
    cfgs = [config.load("tiny")]
    return cfgs, M.baselines(cfgs, M.Budget())


# ---- generation -----------------------------------------------------------------------------


def test_every_operator_and_file_yields_mutants_with_ids_and_diffs(mutants):
    assert {m.operator for m in mutants} == set(M.OPERATORS)
    assert {m.file for m in mutants} == set(M.MUTABLE_FILES)
    assert len({m.id for m in mutants}) == len(mutants)
    sources = M.read_sources()
    for m in mutants:
        stem, line, op, ordinal = m.id.split(":")
        assert (stem + ".py", int(line), op, int(ordinal)) == (m.file, m.line, m.operator, m.ordinal)
        assert m.source != sources[m.file]
        assert m.diff.startswith(f"--- a/model/{m.file}\n+++ b/model/{m.file}\n")
        assert m.reach[0] <= m.line <= m.reach[1]
    for m in mutants[::25]:
        ast.parse(m.source)  # every mutant is valid Python


def test_instrumentation_and_variant_switches_are_not_mutated(mutants):
    for m in mutants:
        changed = [x for x in m.diff.splitlines() if x[:1] in "+-" and not x.startswith(("+++", "---"))]
        assert not any("self.flags." in x or "w.obs" in x or ".ghost" in x for x in changed if x.startswith("-")
                       and m.operator in ("negate-guard", "drop-guard")), m.id


def test_generation_is_deterministic_and_sampling_follows_the_seed(mutants):
    again = M.generate()
    assert [m.id for m in again] == [m.id for m in mutants]
    assert [m.diff for m in again[:50]] == [m.diff for m in mutants[:50]]
    a, b, c = M.sample(mutants, 10, 7), M.sample(mutants, 10, 7), M.sample(mutants, 10, 8)
    assert [m.id for m in a] == [m.id for m in b] != [m.id for m in c]
    assert len(a) == 10 and set(m.id for m in a) <= {m.id for m in mutants}


def test_delete_effect_diff_removes_exactly_the_statement(mutants):
    m = pick(mutants, "delete-effect", "w.check_epoch(self.me, self.epoch)", "delete_isr_change_notifications")
    removed = [x for x in m.diff.splitlines() if x.startswith("-") and not x.startswith("---")]
    added = [x for x in m.diff.splitlines() if x.startswith("+") and not x.startswith("+++")]
    assert [x.strip() for x in removed] == ["-        w.check_epoch(self.me, self.epoch)".strip()] and not added


def test_generator_follows_the_source_it_is_given():
    src = M.read_sources()
    edited = dict(src)
    edited["world.py"] = src["world.py"].replace(
        "    def drop_channel", "    def extra(self):\n        self.zk = self.zk\n\n    def drop_channel")
    ids = {m.id for m in M.generate(edited, files=["world.py"])}
    base = {m.id for m in M.generate(src, files=["world.py"])}
    assert ids != base  # the new lines move and add mutants


# ---- loading ----------------------------------------------------------------------------------


def test_mutants_load_side_by_side_without_touching_the_installed_model(mutants):
    a = pick(mutants, "delete-effect", "w.check_epoch(self.me, self.epoch)", "delete_isr_change_notifications")
    b = pick(mutants, "negate-guard", "not self.active")
    before = Path(kcm.model.controller.__file__).read_text(encoding="utf-8")
    la, lb = M.load(a.source, a.file), M.load(b.source, b.file)
    try:
        assert la.package != lb.package
        ctrl_a = sys.modules[f"{la.package}.controller"]
        ctrl_b = sys.modules[f"{lb.package}.controller"]
        assert ctrl_a is not ctrl_b is not kcm.model.controller
        # Unchanged record modules are the installed ones (the checkers test Always/Sometimes by class).
        assert sys.modules[f"{la.package}.cluster"] is sys.modules["kcm.model.cluster"]
        assert kcm.model.controller.__name__ == "kcm.model.controller"
        assert Path(kcm.model.controller.__file__).read_text(encoding="utf-8") == before
    finally:
        M.unload(la)
        M.unload(lb)
    assert not any(n.startswith(la.package) for n in sys.modules)


# ---- outcomes -----------------------------------------------------------------------------------


def test_deleting_the_epoch_fence_is_killed_by_zk_writes_fenced(mutants):
    # A controller move while an ISR-change notification is pending: the deposed controller
    # deletes the notifications before it processes its Reelect, unfenced.
    cfg = ModelConfig.from_mapping(dict(brokers=2, replication_factor=2, max_broker_crashes=0,
                                        max_session_expiries=0, max_leader_isr_shrinks=1, max_controller_moves=1))
    cfgs = [("move", cfg)]
    budget = M.Budget(max_states=12_000)
    bases = M.baselines(cfgs, budget)
    m = pick(mutants, "delete-effect", "w.check_epoch(self.me, self.epoch)", "delete_isr_change_notifications")
    o = M.run_mutant(m, cfgs, bases, budget)
    assert (o.status, o.property, o.trace_length, o.config) == (M.KILLED, "ZkWritesFenced", 12, "move")
    # its successors differ from the clean ones somewhere: it was searched, not decided by comparison
    assert (o.searched, o.compared) == (1, 0)
    assert not M.same_as_clean(M.load(m.source, m.file), cfgs[0][1], bases[0], m)


def test_swapping_independent_context_updates_is_an_equivalent_suspect(mutants, tiny):
    cfgs, bases = tiny
    m = pick(mutants, "swap-effects", "self.adding = list(zk.adding)", "self.removing = list(zk.removing)")
    o = M.run_mutant(m, cfgs, bases, M.Budget())
    assert (o.status, o.note, o.distinct) == (M.EQUIVALENT, None, bases[0].distinct)
    # decided without a search: its successors and observations equal the clean ones on every
    # clean state where the swapped lines run
    assert (o.searched, o.compared) == (0, 1)


def test_without_the_comparison_the_search_gives_the_same_equivalent_outcome(mutants, tiny):
    # The comparison is exact: the same mutant searched (the baseline without its clean graph)
    # gives the same row, state count and fingerprint set included.
    import dataclasses

    cfgs, bases = tiny
    m = pick(mutants, "swap-effects", "self.adding = list(zk.adding)", "self.removing = list(zk.removing)")
    searched = M.run_mutant(m, cfgs, [dataclasses.replace(bases[0], graph=None)], M.Budget())
    assert (searched.searched, searched.compared) == (1, 0)
    assert searched.row() == M.run_mutant(m, cfgs, bases, M.Budget()).row()


def test_the_clean_model_equals_its_own_graph_on_every_state(tiny):
    # The clean graph's states and digests, replayed through a fresh copy of the clean model
    # (decoded states, a separate package): every state's successors and observations agree.
    import dataclasses

    cfgs, bases = tiny
    g = bases[0].graph
    assert len(g.states) >= bases[0].distinct == 10_294 and len(g.successors) == len(g.states)
    assert not g.other_lines  # the properties and quiescence run none of the mutable lines
    everything = dataclasses.replace(g, by_line={("controller.py", 1): (1 << len(g.states)) - 1},
                                     init_lines=frozenset({("controller.py", 1)}))
    probe = M.Mutant("controller:1:x:0", "controller.py", 1, "x", 0, "", "", "", (1, 1))
    clean = M.load(None, None)
    try:
        assert M.same_as_clean(clean, cfgs[0][1], dataclasses.replace(bases[0], graph=everything), probe)
    finally:
        M.unload(clean)


def test_a_mutant_unreached_on_one_config_is_skipped_there_only(mutants, tiny):
    cfgs, bases = tiny
    reassign = [("m-reassign", config.load(None, REPO / "bench/mutation/m-reassign.toml")[1])]
    rbases = M.baselines(reassign, M.Budget())
    m = pick(mutants, "delete-effect", "self.update_replica_assignment(p)")  # tiny has no reassignment
    assert not bases[0].reaches(m) and rbases[0].reaches(m)
    o = M.run_mutant(m, cfgs + reassign, bases + rbases, M.Budget())
    assert o.searched + o.compared == 1  # m-reassign only
    assert (o.status, o.config) == (M.KILLED, "m-reassign")


def test_a_mutant_that_raises_is_reported_as_crashed(mutants, tiny):
    cfgs, bases = tiny
    m = pick(mutants, "drop-guard", "run the block guarded by `target is P.OnlinePartition` always")
    o = M.run_mutant(m, cfgs, bases, M.Budget())
    assert o.status == M.CRASHED and o.error.startswith("AssertionError: Election strategy is a required field")
    assert M.score([o]) == 1.0  # a crash counts as a kill


def test_a_mutant_whose_lines_never_run_is_equivalent_without_exploring(mutants, tiny):
    cfgs, bases = tiny
    m = pick(mutants, "delete-effect", "self.update_replica_assignment(p)")  # tiny has no reassignment
    o = M.run_mutant(m, cfgs, bases, M.Budget())
    assert (o.status, o.note, o.distinct) == (M.EQUIVALENT, "unreached", 0)


def test_the_state_budget_times_a_surviving_mutant_out(mutants, tiny):
    cfgs, _ = tiny
    budget = M.Budget(max_states=500)
    bases = M.baselines(cfgs, budget)
    assert bases[0].digest is None and bases[0].covered is None
    m = pick(mutants, "swap-effects", "self.adding = list(zk.adding)", "self.removing = list(zk.removing)")
    assert M.run_mutant(m, cfgs, bases, budget).status == M.TIMED_OUT


def test_a_config_the_clean_model_fails_is_refused():
    from kcm.checker.engine.errors import UsageError

    with pytest.raises(UsageError, match="the clean model violates"):
        M.baselines([config.load("v6")], M.Budget())


def test_score_and_tables():
    o = [M.Outcome("a:1:x:0", "a.py", 1, "x", M.KILLED), M.Outcome("a:2:x:0", "a.py", 2, "x", M.SURVIVED),
         M.Outcome("b:1:y:0", "b.py", 1, "y", M.EQUIVALENT), M.Outcome("b:2:y:0", "b.py", 2, "y", M.CRASHED)]
    assert M.score(o) == 2 / 3
    t = M.tally(o, "file")
    assert t["a.py"]["total"] == 2 and t["b.py"][M.EQUIVALENT] == 1 and t["b.py"][M.CRASHED] == 1
    assert M.score([M.Outcome("b:1:y:0", "b.py", 1, "y", M.EQUIVALENT)]) is None


# ---- the command --------------------------------------------------------------------------------


def test_command_writes_a_report_that_matches_its_schema(tmp_path, mutants, capsys):
    import jsonschema  # a declared dependency: its absence is an error, not a skip
    report = tmp_path / "m.json"
    junit = tmp_path / "m.xml"
    m = pick(mutants, "negate-guard", "stale_broker_epoch or stale_controller")
    code = main(["mutate", "--preset", "tiny", "--files", "broker.py", "--operators", "negate-guard",
                 "--json", str(report), "--junit", str(junit), "--out", str(tmp_path / "out"), "--sample", "3",
                 "--seed", "1"])
    assert code == 0
    doc = json.loads(report.read_text())
    schema = json.loads((REPO / "docs" / "mutation-schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert doc["total"] == 3 and doc["complete"] and sum(doc["counts"].values()) == 3
    assert all(e["operator"] == "negate-guard" and e["file"] == "broker.py" for e in doc["mutants"])
    assert "<testsuite name=\"mutants\" tests=\"3\"" in junit.read_text()
    assert "Mutation score" in capsys.readouterr().out
    assert m.file == "broker.py"


def test_min_score_is_a_gate(tmp_path, mutants):
    # The crash mutant alone: score 1.0, which passes 0.9; a lone unreached mutant has no score,
    # which fails any gate (nothing was graded).
    crash = ["--files", "state_machines.py", "--operators", "drop-guard"]
    pool = M.generate(None, ["state_machines.py"], ["drop-guard"])
    crash_id = pick(mutants, "drop-guard", "run the block guarded by `target is P.OnlinePartition` always").id
    seed = next(s for s in range(5000) if [m.id for m in M.sample(pool, 1, s)] == [crash_id])
    assert main(["mutate", "--preset", "tiny", *crash, "--sample", "1", "--seed", str(seed), "--min-score", "0.9"]) == 0
    unreached = pick(mutants, "delete-effect", "self.update_replica_assignment(p)")
    pool = M.generate(None, ["reassignment.py"], ["delete-effect"])
    seed = next(s for s in range(5000) if [m.id for m in M.sample(pool, 1, s)] == [unreached.id])
    assert main(["mutate", "--preset", "tiny", "--files", "reassignment.py", "--operators", "delete-effect",
                 "--sample", "1", "--seed", str(seed), "--min-score", "0.1"]) == 1


@pytest.mark.parametrize("args, message", [
    (["--files", "spec.py"], "not a mutable model file"),
    (["--operators", "swap"], "unknown operator 'swap'"),
    (["--preset", "nope"], "unknown preset 'nope'"),
    (["--preset", "v6"], "the clean model violates"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, capsys):
    assert main(["mutate", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_text_report_lists_survivors_with_diff_and_hint(mutants):
    m = pick(mutants, "delete-effect", "self.add_stop_replica((b,), p, delete=False)")
    o = M.Outcome(m.id, m.file, m.line, m.operator, M.SURVIVED)
    doc = mutation_report.build([m], [o], configs=["tiny"], bases=[], engine="local", seed=0, sample=None,
                                budget=M.Budget(), generated=1, duration_s=0.0, complete=True)
    lines = mutation_report.text(doc)
    assert any(x.startswith(f"SURVIVED {m.id}") for x in lines)
    assert any("hint: requests" in x for x in lines)
    assert any(x.strip().startswith("-") and "add_stop_replica" in x for x in lines)


def test_the_time_budget_times_a_mutant_out_instead_of_raising(mutants, tiny):
    cfgs, bases = tiny
    m = pick(mutants, "swap-effects", "self.adding = list(zk.adding)", "self.removing = list(zk.removing)")
    assert M.run_mutant(m, cfgs, bases, M.Budget(timeout_s=0.0)).status == M.TIMED_OUT


def test_random_walks_kill_but_never_call_a_mutant_equivalent(mutants):
    cfgs = [config.load("tiny")]
    budget = M.Budget(walks=30, depth=40, seed=0)
    bases = M.baselines(cfgs, budget)
    assert bases[0].digest is None and bases[0].covered is None  # walks judge no equivalence
    fence = pick(mutants, "negate-guard", "stale_broker_epoch or stale_controller")
    killed = M.run_mutant(fence, cfgs, bases, budget)
    # the negated fence rejects every current request: a walk reaches quiescence with brokers that
    # never followed their leader (BrokersFollowTheLeader) before a stale request lands
    assert (killed.status, killed.property) == (M.KILLED, "BrokersFollowTheLeader")
    assert M.run_mutant(fence, cfgs, bases, budget).row() == killed.row()  # seeded: the same walks
    swap = pick(mutants, "swap-effects", "self.adding = list(zk.adding)", "self.removing = list(zk.removing)")
    assert M.run_mutant(swap, cfgs, bases, budget).status == M.SURVIVED


def test_a_step_that_never_returns_is_timed_out_by_the_alarm(mutants, tiny):
    # Negating "the reply was lost" makes every ZooKeeper write look lost: the controller's retry
    # loop never ends inside one event, where the cooperative deadline (between states) cannot
    # stop it; the alarm does, one grace period after the timeout.
    cfgs, bases = tiny
    m = pick(mutants, "negate-guard", "negate `self.w.reply_lost(self.me)`")
    assert m.file == "state_machines.py"
    # No cooperative deadline here: only the alarm can stop it.
    with pytest.raises(runner._Overrun), runner._Alarm(2.0):
        runner._run_mutant(m, cfgs, bases, M.Budget())
    # through run_mutant: timed out (by the alarm, or by the deadline if the loop comes late)
    assert M.run_mutant(m, cfgs, bases, M.Budget(timeout_s=0.5)).status == M.TIMED_OUT


def test_a_mutant_that_no_longer_reaches_a_known_2_6_violation_is_killed(mutants):
    """A mutant whose complete search does not reach a known violation its baseline reached (as the
    clean m-shutdown reaches Findings 8, NoShuttingDownJoinsIsr) has lost a 2.6 behaviour. Shown
    with a surviving mutant and a baseline that claims one more known violation than it found."""
    import dataclasses
    cfgs = [("m-reassign", config.load(None, REPO / "bench/mutation/m-reassign.toml")[1])]
    bases = M.baselines(cfgs, M.Budget())
    assert bases[0].known == frozenset()
    m = next(x for x in mutants if x.id == "controller:161:delete-effect:0")   # survives every property
    assert M.run_mutant(m, cfgs, bases, M.Budget()).status == M.SURVIVED
    claimed = [dataclasses.replace(bases[0], known=frozenset({"NoShuttingDownJoinsIsr"}))]
    o = M.run_mutant(m, cfgs, claimed, M.Budget())
    assert (o.status, o.property, o.config, o.trace_length) == (
        M.KILLED, "KnownViolationReproduced(NoShuttingDownJoinsIsr)", "m-reassign", None)


def test_liveness_kills_a_mutant_that_re_puts_an_event_forever(mutants):
    """TopicDeletion deletes the requests of unknown topics even when there are none: the write
    fires the controller's own `/admin/delete_topics` watch, re-armed at the start of the handler,
    so the event re-queues itself forever. No state of that loop is settled, so no safety,
    settled or quiescence property judges one: the mutant survives the safety search and only
    the liveness pass kills it (a lasso), and only where its states differ from the clean ones."""
    cfgs = [("m-delete-reassign", config.load_config_file(REPO / "bench/mutation/m-delete-reassign.toml"))]
    m = pick(mutants, "drop-guard", "requested & ~existing")
    safety = M.Budget()
    assert M.run_mutant(m, cfgs, M.baselines(cfgs, safety), safety).status == M.SURVIVED
    budget = M.Budget(liveness=True)
    bases = M.baselines(cfgs, budget)
    assert bases[0].live == frozenset()  # the clean model settles on every fair run here
    o = M.run_mutant(m, cfgs, bases, budget)
    assert (o.status, o.property, o.config) == (M.KILLED, "EventuallyQuiescent", "m-delete-reassign")
    # an equivalent mutant is not judged by liveness (its states are the clean ones)
    tiny = [config.load("tiny")]
    swap = pick(mutants, "swap-effects", "self.adding = list(zk.adding)", "self.removing = list(zk.removing)")
    assert M.run_mutant(swap, tiny, M.baselines(tiny, budget), budget).status == M.EQUIVALENT


def test_a_liveness_graph_cut_by_the_budget_decides_nothing():
    """A partial graph proves nothing: the pass answers None, and the safety verdict stands."""
    from kcm.model.checking.epoch_quotient import EpochQuotientModel
    cfg = config.load_config_file(REPO / "bench/mutation/m-delete-reassign.toml")
    assert M.liveness_verdict(EpochQuotientModel(cfg), M.Budget(max_states=100)) is None
    assert M.liveness_verdict(EpochQuotientModel(cfg), M.Budget()).verdict == "pass"


def test_a_livelock_the_clean_model_has_too_is_no_kill(mutants):
    """The clean model's own liveness violations on a config (`Baseline.live`) are not kills."""
    import dataclasses
    cfgs = [("m-delete-reassign", config.load_config_file(REPO / "bench/mutation/m-delete-reassign.toml"))]
    budget = M.Budget(liveness=True)
    bases = [dataclasses.replace(b, live=frozenset({"EventuallyQuiescent", "EventuallySettled",
                                                    "QuiescenceAlwaysReachable"})) for b in M.baselines(cfgs, budget)]
    m = pick(mutants, "drop-guard", "requested & ~existing")
    assert M.run_mutant(m, cfgs, bases, budget).status == M.SURVIVED


def test_liveness_refuses_random_walks(capsys):
    assert main(["mutate", "--walks", "3", "--liveness", "--mutant", "x"]) == 2
    assert "--liveness" in capsys.readouterr().err
