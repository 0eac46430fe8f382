"""`kcm sweep --liveness` through the real command line: each scope judged by graph liveness as
`kcm explore --liveness` judges a config (kcm/sweep/run.py), its lassos and known loops in the
report, resume keyed on liveness, a liveness search cut by the budget, and the Spark engine."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from kcm.checker.engine.itf import read_itf
from kcm.checker.engine.replay import replay_itf

from kcm.cli import main

HERE = Path(__file__).parent
TINY = HERE / "tiny-grid.toml"
REPO = HERE.parents[1]
SCHEMA = json.loads((REPO / "docs" / "sweep-schema.json").read_text())
LIVENESS = ["EventuallyQuiescent", "EventuallySettled", "QuiescenceAlwaysReachable"]

#: The tiny grid's scopes with liveness: (distinct states of the safety search, depth, liveness
#: verdict, states of the graph modulo controller epochs, symmetry off), fixed by the model.
TINY_LIVENESS = {"b2-rf2-p1-crash-cold": (2641, 23, "held", 2573),
                 "b2-rf2-p1-crash-settled": (610, 22, "held", 610),
                 "b2-rf2-p1-shrink-cold": (449, 15, "held", 449),
                 "b2-rf2-p1-shrink-settled": (216, 11, "held", 216)}


def _sweep(*args: str) -> int:
    return main(["sweep", *args])


def _doc(out: Path) -> dict:
    doc = json.loads((out / "sweep.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    return doc


def _started(err: str) -> list[str]:
    return [line.removeprefix("start ") for line in err.splitlines() if line.startswith("start ")]


def test_the_tiny_grid_passes_with_liveness(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert _sweep("--grid-file", str(TINY), "--out", str(out), "--jobs", "2", "--liveness") == 0
    doc = _doc(out)
    assert (doc["verdict"], doc["liveness"], doc["scopes_finished"]) == ("pass", True, 4)
    assert {s["scope"]: (s["distinct"], s["depth"], s["liveness"]["verdict"], s["liveness"]["states"])
            for s in doc["scopes"]} == TINY_LIVENESS
    rows = {p["property"]: p["status"] for p in doc["properties"]}
    assert [name for name in rows if name in LIVENESS] == LIVENESS   # after the safety properties
    assert list(rows)[-3:] == LIVENESS and all(status == "held" for status in rows.values())
    record = json.loads((out / "scopes" / "b2-rf2-p1-crash-cold.json").read_text())
    assert record["liveness"] is True
    assert record["liveness_check"]["properties"] == dict.fromkeys(LIVENESS, "holds")
    assert record["liveness_check"]["quotient"] == "controller epochs"
    captured = capsys.readouterr()
    assert "liveness (modulo controller epochs, symmetry off)" in captured.out
    assert "liveness: held in 4 scope(s), violated in 0, not judged in 0" in captured.out
    assert ("b2-rf2-p1-crash-cold: pass · 2,641 states, depth 23" in captured.err
            and "liveness held on 2,573 states modulo controller epochs" in captured.err)


def test_a_livelock_only_liveness_sees_fails_the_sweep_with_its_scopes(tmp_path, capsys):
    """L1 (synthetic: the preferred-election handler re-puts itself forever) breaks no safety
    property; with --liveness the cold scopes break the three liveness properties, each with a
    lasso written and replayable as `kcm explore --liveness` writes it."""
    plain = tmp_path / "plain"
    assert _sweep("--grid-file", str(TINY), "--variant", "L1", "--scope", "b2-rf2-p1-crash-cold",
                  "--out", str(plain), "--jobs", "1") == 0
    assert [(s["scope"], s["violations"]) for s in _doc(plain)["scopes"]] == [("b2-rf2-p1-crash-cold", [])]
    out = tmp_path / "sweep"
    assert _sweep("--grid-file", str(TINY), "--variant", "L1", "--out", str(out), "--jobs", "2", "--liveness") == 1
    doc = _doc(out)
    broken = {p["property"]: [(e["scope"], e["steps"], e.get("loop")) for e in p["broken_in"]]
              for p in doc["properties"] if p["broken_in"]}
    assert broken == {
        "EventuallyQuiescent": [("b2-rf2-p1-crash-cold", 10, 9), ("b2-rf2-p1-shrink-cold", 10, 9)],
        "EventuallySettled": [("b2-rf2-p1-crash-cold", 8, 7), ("b2-rf2-p1-shrink-cold", 10, 9)],
        "QuiescenceAlwaysReachable": [("b2-rf2-p1-crash-cold", 0, None), ("b2-rf2-p1-shrink-cold", 0, None)]}
    # a settled start needs a cluster that settles, which L1's never does
    assert [f["scope"] for f in doc["failed"]] == ["b2-rf2-p1-crash-settled", "b2-rf2-p1-shrink-settled"]
    assert {s["scope"]: s["liveness"]["verdict"] for s in doc["scopes"]} == {
        "b2-rf2-p1-crash-cold": "violated", "b2-rf2-p1-shrink-cold": "violated"}
    lasso = next(p for p in doc["properties"] if p["property"] == "EventuallyQuiescent")["broken_in"][0]
    trace = read_itf(lasso["trace"])
    assert trace.loop == 9 and trace.states[9] == trace.states[-1]
    _, states = replay_itf(lasso["trace"])   # raises unless the replayed lasso is a fair livelock
    assert states[9] == states[-1]
    assert (Path(lasso["trace"]).parent / "replay_EventuallyQuiescent.py").exists()
    assert 'name="EventuallyQuiescent"><failure message="broken in 2 scope(s)' in (out / "junit.xml").read_text()
    summary = capsys.readouterr().out
    assert ("EventuallyQuiescent: violated in 2 scope(s); shortest lasso: 9 steps to a cycle of 1 in "
            "b2-rf2-p1-crash-cold") in summary


def test_a_known_loop_is_listed_with_its_finding_not_failed(tmp_path, capsys):
    """Kafka 2.6's preferred-election loop (a crash, then a preferred election of a partition left
    without leadership: every failover throws and moves the controller) is a known loop; the second
    scope meets the grid's preferred-election goal."""
    grid_file = tmp_path / "known.toml"
    grid_file.write_text("version = 1\n[base]\nbrokers = 2\nreassign_targets = 'replace-one-or-reorder'\n"
                         "[[axes]]\nreplication_factor = [1]\nkinds = ['broker_crash', 'preferred_election']\n"
                         "combine = [2]\nstart = ['cold']\n"
                         "[[axes]]\nreplication_factor = [2]\nkinds = ['reassignment', 'auto_rebalance']\n"
                         "combine = [2]\nstart = ['cold']\n", encoding="utf-8")
    out = tmp_path / "sweep"
    assert _sweep("--grid-file", str(grid_file), "--out", str(out), "--jobs", "2", "--liveness") == 0
    doc = _doc(out)
    row = next(p for p in doc["properties"] if p["property"] == "EventuallySettled")
    assert (row["status"], row["broken_in"]) == ("known", [])
    (entry,) = row["known_in"]
    assert (entry["scope"], entry["known_loop"], entry["finding"], entry["steps"], entry["loop"]) == (
        "b2-rf1-p1-crash+preferred-cold", "PendingPreferredElectionWithoutLeadership", "Findings 6", 6, 4)
    assert Path(entry["trace"]).name == "known_PendingPreferredElectionWithoutLeadership.itf.json"
    assert read_itf(entry["trace"]).loop == 4
    scope = next(s for s in doc["scopes"] if s["scope"] == "b2-rf1-p1-crash+preferred-cold")
    assert scope["liveness"] == {"verdict": "held", "reason": "", "states": 5002,
                                 "known_loops": ["PendingPreferredElectionWithoutLeadership"]}
    assert ("EventuallySettled: known Kafka 2.6 loop PendingPreferredElectionWithoutLeadership (Findings 6) in "
            "1 scope(s); shortest lasso: 4 steps to a cycle of 2") in capsys.readouterr().out
    assert ("b2-rf1-p1-crash+preferred-cold (PendingPreferredElectionWithoutLeadership, Findings 6)"
            in (out / "junit.xml").read_text())


def test_resume_keeps_only_records_made_with_the_same_liveness(tmp_path, capsys):
    out = tmp_path / "sweep"
    scopes = ["--scope", "b2-rf2-p1-crash-settled", "--scope", "b2-rf2-p1-shrink-settled"]
    base = ["--grid-file", str(TINY), "--out", str(out), "--jobs", "1", *scopes]
    assert _sweep(*base) == 0
    capsys.readouterr()
    # records made without liveness are not reused by a run with it...
    assert _sweep(*base, "--liveness", "--resume") == 0
    assert _started(capsys.readouterr().err) == ["b2-rf2-p1-crash-settled", "b2-rf2-p1-shrink-settled"]
    assert all(json.loads(f.read_text())["liveness"] for f in (out / "scopes").iterdir())
    # ...records made with it are
    assert _sweep(*base, "--liveness", "--resume") == 0
    captured = capsys.readouterr()
    assert _started(captured.err) == [] and "2 already finished" in captured.out
    assert [s["liveness"]["verdict"] for s in _doc(out)["scopes"]] == ["held", "held"]
    # and a run without liveness does not take them for its own
    assert _sweep(*base, "--resume") == 0
    assert _started(capsys.readouterr().err) == ["b2-rf2-p1-crash-settled", "b2-rf2-p1-shrink-settled"]
    assert "liveness" not in _doc(out)["scopes"][0]
    # a record written before liveness could be asked stands for a run without it
    record = out / "scopes" / "b2-rf2-p1-crash-settled.json"
    old = json.loads(record.read_text())
    del old["liveness"]
    record.write_text(json.dumps(old), encoding="utf-8")
    assert _sweep(*base, "--resume") == 0
    assert _started(capsys.readouterr().err) == []


def test_a_liveness_search_cut_by_the_budget_is_not_judged_and_incomplete(tmp_path, capsys):
    """Three brokers, one crash from the settled cluster: 949 states with symmetry, 1,797 modulo
    controller epochs without it; a budget of 1,200 states lets the safety search finish and cuts
    the liveness one."""
    grid_file = tmp_path / "cut.toml"
    grid_file.write_text("version = 1\n[base]\nbrokers = 3\nreplication_factor = 1\n[budget]\nmax_states = 1200\n"
                         "[[axes]]\nkinds = ['broker_crash']\nstart = ['settled']\n", encoding="utf-8")
    out = tmp_path / "sweep"
    assert _sweep("--grid-file", str(grid_file), "--out", str(out), "--liveness") == 3
    doc = _doc(out)
    assert (doc["verdict"], doc["reason"]) == ("incomplete", "budget")
    assert doc["cut_by_budget"] == [{"scope": "b3-rf1-p1-crash-settled", "distinct": 949,
                                     "seconds": doc["scopes"][0]["seconds"], "search": "liveness"}]
    (scope,) = doc["scopes"]
    assert (scope["verdict"], scope["reason"], scope["liveness"]["verdict"]) == ("incomplete", "budget", "not judged")
    assert scope["liveness"]["reason"].startswith("the liveness search was cut by the scope's budget after ")
    assert not any(p["property"] in LIVENESS for p in doc["properties"])
    assert "cut by the budget: b3-rf1-p1-crash-settled (liveness search)" in capsys.readouterr().out
    # without liveness the same scope finishes within the budget
    assert _sweep("--grid-file", str(grid_file), "--out", str(tmp_path / "plain")) == 0


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    from kcm.spark_explore.session import spark_session

    # As tests/sweep/test_sweep_spark.py's session.
    session = spark_session("local[2]", app_name="kcm-tests", python_path=(REPO,))
    yield session
    session.stop()


def test_a_scope_judged_by_liveness_on_spark_comes_back_whole(spark):
    """The outcome of a Spark task, liveness result and lassos included, crosses to the driver."""
    from kcm.sweep import farm, grid

    g = grid.with_variant(grid.load(None, TINY), "L1")
    scopes = [s for s in g.scopes if s.name == "b2-rf2-p1-shrink-cold"]
    found = []

    def on_done(scope, outcome, error):
        assert outcome is not None, error
        found.append(outcome)

    assert farm.run_spark(spark, scopes, g.budget, lambda s: None, on_done, liveness=True)
    (outcome,) = found
    assert (outcome.verdict, outcome.distinct, outcome.liveness.nodes) == ("violation", 449, 449)
    assert [(b.name, b.steps, b.loop) for b in outcome.violations] == [
        ("EventuallyQuiescent", 10, 9), ("EventuallySettled", 10, 9), ("QuiescenceAlwaysReachable", 0, None)]
    assert outcome.violations[0].trace[9][1] == outcome.violations[0].trace[-1][1]
