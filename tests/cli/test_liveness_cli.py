"""`kcm explore --liveness`: exit codes, the report's `liveness` object, and the lasso files."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from kcm.checker.engine.itf import read_itf
from kcm.checker.engine.replay import replay_itf

from kcm.cli import main

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report-schema.json").read_text())


def test_tiny_passes_with_liveness(tmp_path, capsys) -> None:
    report_file = tmp_path / "report.json"
    assert main(["explore", "--preset", "tiny", "--liveness", "--out", str(tmp_path), "--json", str(report_file)]) == 0
    out = capsys.readouterr().out
    assert "symmetry off (liveness" in out
    assert "liveness 'EventuallyQuiescent': holds" in out
    report = json.loads(report_file.read_text())
    jsonschema.validate(report, SCHEMA)
    live = report["liveness"]
    assert live["checked"] and live["properties"] == {"EventuallyQuiescent": "holds", "EventuallySettled": "holds",
                                                      "QuiescenceAlwaysReachable": "holds"}
    # explored modulo controller epochs (kcm.model.checking.epoch_quotient): 316 of the plain graph's
    # 10,294 states (test_liveness_presets) differ from another only in their controller epochs;
    # the lifted epoch bound is never reached (nothing pruned)
    assert live["quotient"] == "controller epochs" and live["pruned_states"] == 0
    assert (live["graph"]["states"], live["graph"]["edges"]) == (9_978, 29_909)
    assert live["graph"]["bytes"] == 6 * 29_909 + 17 * 9_978 + 8


def test_a_livelock_exits_1_with_its_lasso_files(tmp_path, capsys) -> None:
    report_file = tmp_path / "report.json"
    assert main(["explore", "--preset", "l1", "--liveness", "--out", str(tmp_path), "--json", str(report_file)]) == 1
    out = capsys.readouterr().out
    assert "lasso: 9 steps, then a cycle of 1 back to state 9" in out
    report = json.loads(report_file.read_text())
    jsonschema.validate(report, SCHEMA)
    v = next(x for x in report["violations"] if x["invariant"] == "EventuallyQuiescent")
    assert (v["kind"], v["trace_length"], v["loop"]) == ("liveness", 10, 9)
    trace = read_itf(v["trace_file"])
    assert trace.loop == 9 and trace.meta["loop"] == 9 and trace.states[9] == trace.states[-1]
    text = (tmp_path / "EventuallyQuiescent.txt").read_text()
    assert text.startswith("Livelock ('EventuallyQuiescent' violated)")
    assert "Step 10: ControllerProcessEvent(broker=0): ReplicaLeaderElection   <-- back to state 9" in text
    dot = (tmp_path / "EventuallyQuiescent.dot").read_text()
    assert "back to state 9: step 10 repeats forever" in dot
    _, states = replay_itf(v["trace_file"])  # raises unless the replayed lasso is a fair livelock
    assert states[9] == states[-1]
    replay = (tmp_path / "replay_EventuallyQuiescent.py").read_text()
    assert "KIND = 'liveness'" in replay


def test_liveness_on_spark_is_refused_in_one_line(capsys) -> None:
    assert main(["explore", "--preset", "tiny", "--liveness", "--engine", "spark"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["kcm: error: --liveness runs on the sequential explorer only; drop --engine spark"]


def test_liveness_cut_by_max_depth_is_incomplete_and_not_checked(tmp_path, capsys) -> None:
    report_file = tmp_path / "report.json"
    assert main(["explore", "--preset", "tiny", "--liveness", "--max-depth", "3", "--out", str(tmp_path),
                 "--json", str(report_file)]) == 3
    live = json.loads(report_file.read_text())["liveness"]
    assert not live["checked"] and live["properties"]["EventuallyQuiescent"] == "not checked"


def test_the_gate_with_liveness_fails_on_a_livelock(tmp_path, capsys) -> None:
    assert main(["check", "--preset", "l1", "--engine", "local", "--liveness", "--proof-brokers", "1",
                 "--out", str(tmp_path)]) == 1
    report = json.loads((tmp_path / "report.json").read_text())
    jsonschema.validate(report, SCHEMA)
    assert report["verdict"] == "violation" and report["liveness"]["properties"]["EventuallyQuiescent"] == "violated"


def test_synthetic_variants_are_refused_where_the_implementation_is_needed(capsys) -> None:
    assert main(["fuzz", "--preset", "l1"]) == 2
    assert "variant L1 is synthetic" in capsys.readouterr().err
