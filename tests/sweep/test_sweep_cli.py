"""`kcm sweep` through the real command line: a tiny grid end to end, resume, an interruption,
a violation's traces, and bad grids (kcm/commands/sweep.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from kcm.cli import main

HERE = Path(__file__).parent
TINY = HERE / "tiny-grid.toml"
REPO = HERE.parents[1]
SCHEMA = json.loads((REPO / "docs" / "sweep-schema.json").read_text())

#: The tiny grid's scopes: (distinct states, depth, verdict), fixed by the model.
TINY_SCOPES = {"b2-rf2-p1-crash-cold": (2641, 23, "pass"), "b2-rf2-p1-crash-settled": (610, 22, "pass"),
               "b2-rf2-p1-shrink-cold": (449, 15, "pass"), "b2-rf2-p1-shrink-settled": (216, 11, "pass")}


def _run(*args: str) -> int:
    return main(["sweep", *args])


def test_the_tiny_grid_end_to_end(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert _run("--grid-file", str(TINY), "--out", str(out), "--jobs", "2") == 0
    doc = json.loads((out / "sweep.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert (doc["verdict"], doc["scopes_total"], doc["scopes_finished"]) == ("pass", 4, 4)
    assert {s["scope"]: (s["distinct"], s["depth"], s["verdict"]) for s in doc["scopes"]} == TINY_SCOPES
    assert doc["goals"] == [{"goal": "ControllerFailsOver", "status": "met", "met_in": 2,
                             "first_met_in": "b2-rf2-p1-crash-cold"}]
    assert all(p["status"] == "held" for p in doc["properties"])
    # each scope's own CPU time, measured in the process that ran it, and their sum
    assert all(s["cpu_seconds"] > 0 for s in doc["scopes"])
    assert doc["cpu_s"] == round(sum(s["cpu_seconds"] for s in doc["scopes"]), 2)
    junit = (out / "junit.xml").read_text()
    assert 'failures="0"' in junit and 'name="goal ControllerFailsOver"' in junit
    err = capsys.readouterr().err
    assert err.count("start ") == 4 and "b2-rf2-p1-crash-cold: pass · 2,641 states, depth 23" in err


def test_resume_skips_finished_scopes(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert _run("--grid-file", str(TINY), "--out", str(out), "--jobs", "1") == 0
    (out / "scopes" / "b2-rf2-p1-shrink-cold.json").unlink()
    capsys.readouterr()
    assert _run("--grid-file", str(TINY), "--out", str(out), "--jobs", "1", "--resume") == 0
    captured = capsys.readouterr()
    assert [line for line in captured.err.splitlines() if line.startswith("start ")] == ["start b2-rf2-p1-shrink-cold"]
    assert "3 already finished" in captured.out
    doc = json.loads((out / "sweep.json").read_text())
    assert {s["scope"]: (s["distinct"], s["depth"], s["verdict"]) for s in doc["scopes"]} == TINY_SCOPES
    # Without --resume every scope runs again.
    assert _run("--grid-file", str(TINY), "--out", str(out), "--jobs", "1") == 0
    assert capsys.readouterr().err.count("start ") == 4


def test_a_violation_keeps_its_shortest_trace(tmp_path):
    grid_file = tmp_path / "v6.toml"
    grid_file.write_text("version = 1\n[base]\nvariant = 'V6'\nbrokers = 2\nreplication_factor = 1\n"
                         "[[axes]]\nkinds = ['broker_crash']\nstart = ['cold', 'settled']\n", encoding="utf-8")
    out = tmp_path / "sweep"
    assert _run("--grid-file", str(grid_file), "--out", str(out)) == 1
    doc = json.loads((out / "sweep.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    row = next(p for p in doc["properties"] if p["property"] == "IsrNonEmpty")
    assert row["status"] == "violated"
    assert [(e["scope"], e["steps"]) for e in row["broken_in"]] == [("b2-rf1-p1-crash-settled", 3),
                                                                     ("b2-rf1-p1-crash-cold", 4)]
    for e in row["broken_in"]:
        assert Path(e["trace"]).exists() and json.loads(Path(e["trace"]).read_text())["#meta"]
    assert 'name="IsrNonEmpty"><failure' in (out / "junit.xml").read_text()


@pytest.mark.parametrize("args, message", [
    (["--grid", "huge"], "unknown grid 'huge'; choose one of deep, gate, nightly"),
    (["--grid", "gate", "--grid-file", "x.toml"], "give either --grid or --grid-file, not both"),
    (["--grid-file", "/nonexistent/grid.toml"], "grid file '/nonexistent/grid.toml' does not exist"),
    (["--grid", "gate", "--scope", "b9-rf9"], "--scope: grid 'gate' has no scope 'b9-rf9'"),
    (["--grid", "gate", "--jobs", "2", "--engine", "spark"], "--jobs is for the sequential explorer"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, message):
    assert _run(*args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kcm: error: {message}") and err.count("\n") == 1


def test_a_malformed_grid_file_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("version = 1\n[[axes]\n", encoding="utf-8")
    assert _run("--grid-file", str(bad)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kcm: error: grid file '{bad}': not valid TOML") and err.count("\n") == 1


def test_an_interruption_keeps_what_finished_and_exits_3(tmp_path):
    """A small scope, then one of some 200,000 states: SIGTERM once the first has finished."""
    grid_file = tmp_path / "two.toml"
    grid_file.write_text("version = 1\n[base]\nbrokers = 2\n"
                         "[[axes]]\nkinds = ['leader_isr_shrink']\n"
                         "[[axes]]\nkinds = ['session_expiry', 'controller_move']\ncombine = [2]\n", encoding="utf-8")
    out = tmp_path / "sweep"
    proc = subprocess.Popen([sys.executable, "-m", "kcm.cli", "sweep", "--grid-file", str(grid_file), "--out", str(out),
                             "--jobs", "1"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("[1/2]"):
            break
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 3, stderr
    assert "INCOMPLETE" in stdout and "interrupted" in stdout, stderr
    assert sorted(p.name for p in (out / "scopes").iterdir()) == ["b2-rf2-p1-shrink-cold.json"]
    doc = json.loads((out / "sweep.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert (doc["verdict"], doc["reason"], doc["not_run"]) == ("incomplete", "interrupted",
                                                                ["b2-rf2-p1-expiry+move-cold"])


def test_list_prints_the_scopes_and_runs_nothing(tmp_path, capsys):
    assert _run("--grid", "gate", "--list", "--out", str(tmp_path / "none")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 265
    assert lines[:2] == ["b2-rf1-p1-crash+expiry-cold", "b2-rf1-p1-crash+expiry-settled"]
    assert not (tmp_path / "none").exists()


def test_a_variant_is_put_back_in_every_scope(tmp_path):
    """V5 (KAFKA-7235-like: a stale broker epoch applied) is caught by the tiny grid's crash scopes."""
    out = tmp_path / "v5"
    assert _run("--grid-file", str(TINY), "--variant", "V5", "--out", str(out), "--jobs", "1") == 1
    doc = json.loads((out / "sweep.json").read_text())
    broken = {p["property"]: sorted(e["scope"] for e in p["broken_in"]) for p in doc["properties"] if p["broken_in"]}
    assert broken["NoStaleBrokerEpochApplied"] == ["b2-rf2-p1-crash-cold"]
    assert broken["BrokerIncarnationTracked"] == ["b2-rf2-p1-crash-cold", "b2-rf2-p1-crash-settled"]
    records = [json.loads(f.read_text()) for f in sorted((out / "scopes").glob("*.json"))]
    assert len(records) == 4 and all(r["config"]["variant"] == "V5" for r in records)


def test_kcm_check_sweeps_a_grid_as_its_last_stage(tmp_path, capsys):
    """`kcm check --grid`: the gate's verdict joins the preset's; a variant is swept too."""
    out = tmp_path / "check"
    assert main(["check", "--preset", "tiny", "--no-explore", "--grid", str(TINY), "--engine", "local",
                 "--out", str(out), "--proof-brokers", "1"]) == 0
    assert json.loads((out / "sweep-tiny-grid" / "sweep.json").read_text())["verdict"] == "pass"
    assert "sweep tiny-grid: pass, 4 of 4 scopes finished" in capsys.readouterr().out
    bad = tmp_path / "check-v5"
    assert main(["check", "--preset", "tiny", "--no-explore", "--variant", "V5", "--grid", str(TINY),
                 "--engine", "local", "--out", str(bad), "--proof-brokers", "1"]) == 1
    assert json.loads((bad / "sweep-tiny-grid" / "sweep.json").read_text())["verdict"] == "violation"
    # --liveness reaches the grid stage: every scope is judged by liveness too
    live = tmp_path / "check-live"
    assert main(["check", "--preset", "tiny", "--no-explore", "--liveness", "--grid", str(TINY), "--engine", "local",
                 "--out", str(live), "--proof-brokers", "1"]) == 0
    doc = json.loads((live / "sweep-tiny-grid" / "sweep.json").read_text())
    assert doc["liveness"] is True and {s["liveness"]["verdict"] for s in doc["scopes"]} == {"held"}


def test_kcm_check_refuses_an_unknown_grid_before_any_work(tmp_path, capsys):
    assert main(["check", "--preset", "tiny", "--grid", "huge", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == "kcm: error: unknown grid 'huge'; choose one of deep, gate, nightly\n"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("explore", [[], ["--no-explore"]])
def test_kcm_check_with_a_grid_checks_the_engine_options_once_before_any_work(tmp_path, capsys, monkeypatch,
                                                                              explore):
    """The exploration and the sweep run on the same engine: its options are checked once, with or
    without the exploration, and a bad one stops the run before any stage."""
    from kcm import exploration
    from kcm.commands import check

    calls = []
    real = exploration.check_engine_options
    monkeypatch.setattr(check, "check_engine_options", lambda *a, **k: (calls.append(a), real(*a, **k))[1])
    out = tmp_path / "o"
    assert main(["check", "--preset", "tiny", *explore, "--grid", str(TINY), "--engine", "local",
                 "--master", "local[2]", "--out", str(out)]) == 2
    assert capsys.readouterr().err == "kcm: error: --master needs --engine spark\n"
    assert calls == [("local", "local[2]")]
    assert not (out / "report.json").exists() and not (out / "sweep-tiny-grid").exists()
